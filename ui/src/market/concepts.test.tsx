import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, render, waitFor } from "@testing-library/react";
import type { ConceptStrength, LoadInfo, StockMembership } from "../bindings";

const mocks = vi.hoisted(() => ({ conceptStrength: vi.fn(), stockBlocks: vi.fn() }));
vi.mock("../bindings", () => ({ commands: mocks }));

import { LanguageContext } from "../i18n";
import ConceptTable from "./ConceptTable";
import StockBlocksLine from "../pages/StockBlocksLine";
import { blocksLines, conceptNotes, conceptText, signedPct } from "./concepts";

const ok = <T,>(data: T) => ({ status: "ok", data });
const zh = conceptText("zh");
const en = conceptText("en");

const load = (kind: LoadInfo["kind"], over: Partial<LoadInfo> = {}): LoadInfo => ({
  id: 1,
  kind,
  loaded_on: 20261207,
  source: "tdx",
  path: "/tdx/T0002/hq_cache/block_gn.dat",
  stocks: 7,
  industries: 0,
  concepts: 3,
  recorded_at: "2026-12-07T08:00:00Z",
  ...over,
});

const strengthPage = (over: Partial<ConceptStrength> = {}): ConceptStrength => ({
  load: load("concept"),
  load_later: true,
  table: {
    date: 20200616,
    market_stocks: 8,
    market_return_5d_pct: 1.5,
    rows: [
      { concept: "大金融", members: 3, counted: 3, return_5d_pct: 4.25, relative_5d_pct: 2.75, up_today: 2 },
      { concept: "制造", members: 4, counted: 3, return_5d_pct: -0.5, relative_5d_pct: -2, up_today: 0 },
    ],
  },
  ...over,
});

const stockBlocks = (over: Partial<StockMembership> = {}): StockMembership => ({
  code: "000001",
  day: null,
  industry: "银行",
  industry_load: load("industry", { source: "csv", loaded_on: 20261201 }),
  industry_later: false,
  concepts: ["大金融", "制造"],
  styles: [],
  block_loads: [load("concept")],
  blocks_later: false,
  ...over,
});

beforeEach(() => {
  for (const m of Object.values(mocks)) m.mockReset();
});
afterEach(cleanup);

describe("the concept view model", () => {
  it("says where the blocks came from, that today's stand in for a past day, and the market's own figure", () => {
    expect(conceptNotes(strengthPage(), zh)).toEqual([
      { id: "load", text: "概念板块：2026-12-07 导入（通达信）" },
      { id: "later-load", text: "概念板块取自 2026-12-07 导入的数据（没有更早的），代替 2020-06-16 当时的成分" },
      { id: "market", text: "大盘（8 只股票等权）5 日涨幅 +1.50%" },
    ]);
    // a load on or before the day: no stand-in note
    expect(conceptNotes(strengthPage({ load_later: false }), en).map((n) => n.id)).toEqual(["load", "market"]);
  });

  it("says why there is no table: no blocks, no bars, no counted member", () => {
    expect(conceptNotes({ load: null, load_later: false, table: null }, zh)).toEqual([{ id: "no-concepts", text: expect.stringContaining("wyckoff data industries import PATH") }]);
    expect(conceptNotes(strengthPage({ table: null }), en).map((n) => n.id)).toEqual(["load", "no-table"]);
    const empty = strengthPage({ load_later: false, table: { date: 20200616, market_stocks: 0, market_return_5d_pct: null, rows: [] } });
    expect(conceptNotes(empty, en).map((n) => n.text)).toEqual(["Concept blocks: loaded 2026-12-07 (TDX)", "No stock has a 5-day return on the day", "No concept block has a member with a 5-day return on the day."]);
  });

  it("words a stock's industry with its load and its concepts, or why it has none", () => {
    expect(blocksLines(stockBlocks(), zh)).toEqual({ industry: "行业：银行（2026-12-01 导入，CSV 文件）", concepts: "大金融、制造", conceptsNote: "" });
    expect(blocksLines(stockBlocks({ industry_later: true, blocks_later: true }), en)).toEqual({
      industry: "Industry: 银行 (loaded 2026-12-01, CSV file), from a load after the day",
      concepts: "大金融、制造",
      conceptsNote: " (blocks from a later load)",
    });
    expect(blocksLines(stockBlocks({ concepts: [] }), zh).conceptsNote).toBe("概念：无（该股不在已导入的概念板块中）");
    const bare = blocksLines(stockBlocks({ industry: null, industry_load: null, concepts: [], block_loads: [] }), zh);
    expect(bare).toEqual({ industry: "行业：无数据", concepts: null, conceptsNote: "概念：还没有概念板块数据" });
  });

  it("signs percents and says a missing one", () => {
    expect([signedPct(2.754), signedPct(-2), signedPct(0), signedPct(null)]).toEqual(["+2.75%", "-2.00%", "0.00%", "—"]);
  });
});

describe("the concept table", () => {
  it("lists each concept for the map's day, strongest first, and says today's blocks stand in", async () => {
    mocks.conceptStrength.mockResolvedValue(ok(strengthPage()));
    const { container } = render(<ConceptTable asOf="2020-06-16" />);
    await waitFor(() => expect(container.querySelectorAll("#concept-table .concept-row")).toHaveLength(2));
    expect(mocks.conceptStrength).toHaveBeenCalledWith("2020-06-16");
    const rows = [...container.querySelectorAll(".concept-row")].map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent));
    expect(rows).toEqual([
      ["大金融", "3", "3", "+4.25%", "+2.75%", "2/3"],
      ["制造", "4", "3", "-0.50%", "-2.00%", "0/3"],
    ]);
    expect(container.querySelector("#map-concepts")!.getAttribute("data-load-later")).toBe("true");
    expect(container.querySelector("[data-note='later-load']")!.textContent).toContain("代替 2020-06-16");
  });

  it("shows the desk's error", async () => {
    mocks.conceptStrength.mockResolvedValue({ status: "error", error: { kind: "invalid_input", message: "the date must be a real date", code: null } });
    const { container } = render(<ConceptTable asOf="2020-13-45" />);
    await waitFor(() => expect(container.querySelector("#concepts-error")!.textContent).toBe("the date must be a real date"));
  });
});

describe("a stock's blocks under its header", () => {
  it("lists its industry with the load and its concepts, in English too", async () => {
    mocks.stockBlocks.mockResolvedValue(ok(stockBlocks({ blocks_later: true })));
    const { container } = render(
      <LanguageContext.Provider value="en">
        <StockBlocksLine code="000001" />
      </LanguageContext.Provider>,
    );
    await waitFor(() => expect(container.querySelector("#stock-concepts")).toBeTruthy());
    expect(mocks.stockBlocks).toHaveBeenCalledWith("000001", null);
    expect(container.querySelector("#stock-industry")!.textContent).toBe("Industry: 银行 (loaded 2026-12-01, CSV file)");
    expect(container.querySelector("#stock-concepts")!.textContent).toBe("Concepts: 大金融、制造 (blocks from a later load)");
  });

  it("says when no blocks are on record", async () => {
    mocks.stockBlocks.mockResolvedValue(ok(stockBlocks({ concepts: [], block_loads: [] })));
    const { container } = render(<StockBlocksLine code="000001" />);
    await waitFor(() => expect(container.querySelector("#stock-concepts-none")!.textContent).toBe("概念：还没有概念板块数据"));
  });
});
