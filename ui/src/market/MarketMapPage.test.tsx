import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";

const mocks = vi.hoisted(() => ({
  marketMap: vi.fn(),
  marketMapSeries: vi.fn(),
  industryMembers: vi.fn(),
  industriesImport: vi.fn(),
  conceptStrength: vi.fn(),
}));
vi.mock("../bindings", () => ({ commands: mocks }));

import { LanguageContext } from "../i18n";
import MarketMapPage from "./MarketMapPage";
import { MoodSection, RegimeLimits } from "./Mood";
import { mapWith, members, row, series } from "./fixtures";

const ok = <T,>(data: T) => ({ status: "ok", data });

beforeEach(() => {
  for (const m of Object.values(mocks)) m.mockReset();
  mocks.marketMapSeries.mockResolvedValue(ok(series));
});
afterEach(cleanup);

const page = (open = vi.fn(), lang: "zh" | "en" = "zh") =>
  render(
    <LanguageContext.Provider value={lang}>
      <MarketMapPage onOpenStock={open} />
    </LanguageContext.Provider>,
  );

describe("the market map page", () => {
  it("draws a cell per industry sized by amount, lists an industry's members on a click, and opens a member's page", async () => {
    mocks.marketMap.mockResolvedValue(ok(mapWith([row("金融", 3e9, 0.65), row("制造", 1e9, -2), row("消费", 0, 1)])));
    mocks.industryMembers.mockResolvedValue(ok(members));
    const open = vi.fn();
    const { container } = page(open);
    await waitFor(() => expect(container.querySelectorAll(".map-cell")).toHaveLength(2));
    // a zero-amount industry has no area; the larger one gets three times the area
    const cell = (name: string) => container.querySelector(`.map-cell[data-industry='${name}']`) as HTMLElement;
    const area = (el: HTMLElement) => parseFloat(el.style.width) * parseFloat(el.style.height);
    expect(area(cell("金融")) / area(cell("制造"))).toBeCloseTo(3, 6);
    expect(cell("金融").style.background).toBe("rgb(116, 106, 126)");
    expect(cell("金融").textContent).toBe("金融+0.65%");

    fireEvent.click(cell("金融"));
    await waitFor(() => expect(screen.getByText("金融 成分股（2020-06-16）")).toBeTruthy());
    expect(mocks.industryMembers).toHaveBeenCalledWith("金融", "2020-06-16");
    const rows = [...container.querySelectorAll("#map-members .map-member")].map((r) => [r.getAttribute("data-code"), r.getAttribute("data-limit-up"), [...r.querySelectorAll("td")].map((td) => td.textContent)]);
    expect(rows).toEqual([
      ["601318", "true", ["601318", "中国平安", "+1.30%", "+4.20%", "涨停"]],
      ["000001", "false", ["000001", "平安银行", "+0.50%", "-1.00%", ""]],
    ]);
    fireEvent.click(container.querySelector(".map-member-open[data-code='000001']") as HTMLElement);
    expect(open).toHaveBeenCalledWith("000001");

    // the rotation: a trail per industry with points, the quadrants labelled
    const trails = container.querySelectorAll("#map-rotation .map-trail");
    expect([...trails].map((t) => [t.getAttribute("data-industry"), t.getAttribute("data-points")])).toEqual([["金融", "2"]]);
    expect([...container.querySelectorAll("#map-rotation .quadrant-label")].map((q) => q.textContent)).toEqual(["领涨", "改善", "落后", "转弱"]);
    // the limit figures per day, newest first
    expect([...container.querySelectorAll("#map-limit-series .map-limit-day")].map((r) => r.getAttribute("data-date"))).toEqual(["2020-06-16", "2020-06-15"]);
  });

  it("without industries says how to get them and imports a file, then draws the map", async () => {
    mocks.marketMap.mockResolvedValueOnce(ok(mapWith(null))).mockResolvedValue(ok(mapWith([row("金融", 1, 0)])));
    mocks.industriesImport
      .mockResolvedValueOnce(ok({ path: "/x/bad.csv", status: "rejected", bad_lines: 1, errors: [{ file: "/x/bad.csv", line: 3, problem: "bad_code", code: "12", why: "format", reason: "unknown stock code format", message: "code \"12\": unknown stock code format" }] }))
      .mockResolvedValueOnce(ok({ path: "/x/ind.csv", status: "imported", source: "csv", stocks: 8, industries: 3, concepts: 0, concept_rows: 0, not_stocks: 0, without_industry: 0, files: ["/x/ind.csv"], loaded_on: 20261207, write: "added" }));
    const { container } = page();
    await waitFor(() => expect(container.querySelector("#map-no-industries-text")).toBeTruthy());
    expect(container.querySelector("#map-no-industries-text")!.textContent).toContain("wyckoff data industries import PATH");
    expect(container.querySelector("#map-treemap")).toBeNull();

    fireEvent.click(container.querySelector("#map-import") as HTMLElement);
    expect(container.querySelector("#map-import-note")!.textContent).toBe("请填写 CSV 文件或通达信目录的路径");
    expect(mocks.industriesImport).not.toHaveBeenCalled();

    fireEvent.change(container.querySelector("#map-import-path") as HTMLElement, { target: { value: " /x/bad.csv " } });
    fireEvent.click(container.querySelector("#map-import") as HTMLElement);
    await waitFor(() => expect(container.querySelector("#map-import-note")!.getAttribute("data-ok")).toBe("false"));
    expect(mocks.industriesImport).toHaveBeenCalledWith("/x/bad.csv");
    expect([...container.querySelectorAll(".map-import-bad")].map((l) => l.textContent)).toEqual(["/x/bad.csv 第 3 行：代码 “12” 无法识别（应为 600519、600519.SH 或 sh600519 这样的 A 股代码）"]);

    fireEvent.change(container.querySelector("#map-import-path") as HTMLElement, { target: { value: "/x/ind.csv" } });
    fireEvent.click(container.querySelector("#map-import") as HTMLElement);
    await waitFor(() => expect(container.querySelector("#map-treemap .map-cell[data-industry='金融']")).toBeTruthy());
    expect(mocks.marketMap).toHaveBeenCalledTimes(2);
  });

  it("switches to 概念: the concept table of the map's day in the industries' place, and back", async () => {
    mocks.marketMap.mockResolvedValue(ok(mapWith([row("金融", 3e9, 0.65)])));
    mocks.conceptStrength.mockResolvedValue(
      ok({
        load: { id: 2, kind: "concept", loaded_on: 20261207, source: "tdx", path: "/tdx/block_gn.dat", stocks: 7, industries: 0, concepts: 2, recorded_at: "2026-12-07T08:00:00Z" },
        load_later: true,
        table: { date: 20200616, market_stocks: 8, market_return_5d_pct: 1, rows: [{ concept: "大金融", members: 3, counted: 3, return_5d_pct: 2, relative_5d_pct: 1, up_today: 1 }] },
      }),
    );
    const { container } = page();
    await waitFor(() => expect(container.querySelector("#map-treemap")).toBeTruthy());
    expect(mocks.conceptStrength).not.toHaveBeenCalled();
    expect(container.querySelector("#map-view-industries")!.getAttribute("aria-pressed")).toBe("true");

    fireEvent.click(container.querySelector("#map-view-concepts") as HTMLElement);
    await waitFor(() => expect(container.querySelector(".concept-row[data-concept='大金融']")).toBeTruthy());
    expect(mocks.conceptStrength).toHaveBeenCalledWith("2020-06-16");
    expect(container.querySelector("#map-treemap")).toBeNull();
    expect(container.querySelector("[data-note='later-load']")!.textContent).toBe("概念板块取自 2026-12-07 导入的数据（没有更早的），代替 2020-06-16 当时的成分");
    // the limit figures are the day's, not the industries': they stay
    expect(container.querySelector("#map-limit-series")).toBeTruthy();

    fireEvent.click(container.querySelector("#map-view-industries") as HTMLElement);
    expect(container.querySelector("#map-treemap")).toBeTruthy();
    expect(container.querySelector("#map-concepts")).toBeNull();
  });

  it("shows the desk's error when the cache has no bars", async () => {
    mocks.marketMap.mockResolvedValue({ status: "error", error: { kind: "unavailable", message: "本地没有个股日线", code: null } });
    const { container } = page();
    await waitFor(() => expect(container.querySelector("#map-error")!.textContent).toBe("本地没有个股日线"));
  });
});

describe("the overview's mood line", () => {
  it("says the day's figures and opens a ladder stock's page; the 水温 line cites the counts", () => {
    const open = vi.fn();
    const map = mapWith(null);
    const { container } = render(
      <LanguageContext.Provider value="zh">
        <MoodSection map={map} error={null} onOpenStock={open} />
        <RegimeLimits map={map} />
      </LanguageContext.Provider>,
    );
    expect(container.querySelector("#ov-mood")!.textContent).toBe("截至 2020-06-16 · 涨停 3 · 跌停 1 · 炸板 2 · 最高板 2 · 涨停溢价 +1.23% · 封板率 60.0%");
    expect([...container.querySelectorAll(".ov-ladder-row")].map((r) => [r.getAttribute("data-boards"), r.textContent])).toEqual([
      ["2", "2 板000001 平安银行"],
      ["1", "1 板000338 潍柴动力 一字、601318 中国平安"],
    ]);
    fireEvent.click(container.querySelector(".ov-ladder-stock[data-code='601318']") as HTMLElement);
    expect(open).toHaveBeenCalledWith("601318");
    expect(container.querySelector("#ov-regime-limits")!.textContent).toBe(" — 当日涨停 3、跌停 1、炸板 2（2020-06-16）");
  });

  it("says there was no limit-up", () => {
    const map = mapWith(null);
    map.limits = { ...map.limits, ladder: [], limit_up: 0, highest_board: 0 };
    const { container } = render(<MoodSection map={map} error={null} onOpenStock={vi.fn()} />);
    expect(container.querySelector("#ov-ladder-empty")!.textContent).toBe("当日没有涨停股");
  });
});
