import { beforeEach, describe, expect, it } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import type { Value } from "../bindings";
import { LanguageContext } from "../i18n";
import ToolCardView from "./ToolCardView";
import { asPortfolio, formatCost, formatMoney } from "./portfolio";
import type { ToolCard } from "./reducer";

beforeEach(() => cleanup());

// As crates/tools/src/portfolio.rs writes it for mode "diagnose": one holding diagnosed,
// one without quotes.
const diagnosed: Value = {
  portfolio_id: "default",
  free_cash: 12000.5,
  position_count: 2,
  successful_count: 1,
  failed_count: 1,
  total_market_value: 142345.6,
  total_assets: 154346.1,
  data_status: "partial",
  source: "local cache (per holding: see diagnostics[].source)",
  as_of: "2026-11-28",
  benchmark_used: true,
  market_value_note: "1 只持仓行情缺失，总市值与仓位占比仅覆盖成功诊断的部分",
  diagnostics: [
    {
      data_status: "ok",
      source: "eastmoney",
      as_of: "2026-11-28",
      expected_last_date: "2026-11-28",
      notes: [],
      code: "600519",
      name: "贵州茅台",
      shares: 100,
      cost: 1500.125,
      buy_dt: "2026-03-02",
      stop_loss: null,
      health: "🟡警戒",
      health_reasons: ["跌破 MA50"],
      pnl_pct: -5.1029,
      latest_close: 1423.456,
      day_change_pct: -1.2,
      ma_pattern: "MA50<MA200(偏弱)",
      l2_channel: "潜伏通道",
      l4_triggers: [],
      stop_loss_price: 1395,
      targets: { conservative: null, aggressive: null, candidates: [] },
      diagnosis_brief: { status: "caution_watch", label: "警戒观察", headline: "警戒观察: 600519 贵州茅台", strengths: [], risks: [], direct_buy_allowed: false, next_step: "只观察" },
      market_value: 142345.6,
      pnl_amount: -7666.9,
      weight_pct: 100,
    },
    {
      data_status: "unavailable",
      source: "none",
      as_of: null,
      expected_last_date: "2026-11-28",
      notes: [],
      code: "000001",
      name: "平安银行",
      shares: 1500,
      cost: 11.2,
      buy_dt: "2026-05-10",
      stop_loss: null,
      error: "无行情数据",
    },
  ],
};

const viewResult: Value = {
  portfolio_id: "default",
  free_cash: 5000,
  position_count: 1,
  positions: [{ code: "300750", name: "宁德时代", shares: 200, cost_price: 180.5, buy_dt: "2026-01-05", stop_loss: null }],
  data_status: "ok",
  source: "local",
  as_of: null,
};

const card = (result: Value, name = "portfolio"): ToolCard => ({
  kind: "tool",
  id: "p1",
  name,
  displayName: "持仓",
  args: { mode: "diagnose" },
  status: "ok",
  elapsedMs: 35,
  result,
  error: null,
  approval: null,
});

const cells = (code: string) => Array.from(document.querySelectorAll(`tr.portfolio-row[data-code="${code}"] td`)).map((td) => td.textContent);
const headers = () => Array.from(document.querySelectorAll(".portfolio-table th")).map((th) => th.textContent);
const fact = (label: string) => screen.getByText(label).nextSibling?.textContent;

describe("portfolio tool result", () => {
  it("shows the diagnosis as a table, — where the tool gave nothing", () => {
    const { container } = render(<ToolCardView card={card(diagnosed)} />);
    expect(headers()).toEqual(["代码", "名称", "股数", "成本", "最新价", "盈亏", "仓位", "诊断"]);
    expect(cells("600519")).toEqual(["600519", "贵州茅台", "100", "1500.125", "1423.46", "-5.10%", "100.00%", "🟡警戒 · 警戒观察"]);
    expect(document.querySelector('tr[data-code="600519"] td.down')?.textContent).toBe("-5.10%");
    // No quotes: no price, no P/L, no weight — and the reason.
    expect(cells("000001")).toEqual(["000001", "平安银行", "1,500", "11.20", "—", "—", "—", "无行情数据"]);
    expect(fact("可用资金")).toBe("12,000.50");
    expect(fact("总市值")).toBe("142,345.60");
    expect(fact("总资产")).toBe("154,346.10");
    expect(fact("数据")).toBe("部分缺失 · 2026-11-28");
    expect(container.textContent).toContain("1 只持仓行情缺失");
    // Not raw JSON, and no diagnosis card for the whole result.
    expect(container.querySelector("pre")).toBeNull();
    expect(container.textContent).not.toContain("diagnostics");
    expect(container.querySelector(".diagnosis")).toBeNull();
    // The raw result is still there on demand.
    fireEvent.click(container.querySelector(".tool-head") as HTMLElement);
    expect(container.querySelectorAll("pre.json")).toHaveLength(2);
  });

  it("shows the positions of view mode", () => {
    render(<ToolCardView card={card(viewResult)} />);
    expect(headers()).toEqual(["代码", "名称", "股数", "成本", "建仓日", "止损"]);
    expect(cells("300750")).toEqual(["300750", "宁德时代", "200", "180.50", "2026-01-05", "—"]);
    expect(fact("可用资金")).toBe("5,000.00");
    // View mode has no prices: nothing about market value or P/L is shown.
    expect(screen.queryByText("盈亏")).toBeNull();
    expect(screen.queryByText("总市值")).toBeNull();
  });

  it("an empty portfolio shows the tool's message and no table", () => {
    render(<ToolCardView card={card({ ...(viewResult as object), positions: [], position_count: 0, free_cash: 0, message: "未找到持仓记录，可通过 update_portfolio 添加" })} />);
    expect(document.querySelector(".portfolio-table")).toBeNull();
    expect(screen.getByText("未找到持仓记录，可通过 update_portfolio 添加")).toBeTruthy();
  });

  it("uses English labels in the English UI", () => {
    render(
      <LanguageContext.Provider value="en">
        <ToolCardView card={card(diagnosed)} />
      </LanguageContext.Provider>,
    );
    expect(headers()).toEqual(["Code", "Name", "Shares", "Cost", "Last", "P/L", "Weight", "Diagnosis"]);
    expect(cells("600519")[7]).toBe("🟡 Caution · Caution, watch only");
    expect(cells("000001")[7]).toBe("No market data");
    expect(fact("Free cash")).toBe("12,000.50");
  });

  it("fields that are missing or not numbers stay —", () => {
    const p = asPortfolio({ diagnostics: [{ code: "600000", shares: "n/a", cost: null, latest_close: Number.NaN, pnl_pct: "12.5" }, "junk"] });
    expect(p?.rows).toHaveLength(1);
    expect(p?.rows[0]).toMatchObject({ code: "600000", name: null, shares: null, cost: null, latestClose: null, pnlPct: 12.5, health: null, verdict: null });
    expect(p).toMatchObject({ mode: "diagnose", freeCash: null, totalAssets: null, notes: [] });
    render(<ToolCardView card={card({ diagnostics: [{ code: "600000" }] })} />);
    expect(cells("600000")).toEqual(["600000", "—", "—", "—", "—", "—", "—", "—"]);
    expect(fact("可用资金")).toBe("—");
  });

  it("only the portfolio tool's result is read as a portfolio", () => {
    expect(asPortfolio({ rows: [] })).toBeNull();
    expect(asPortfolio("text")).toBeNull();
    render(<ToolCardView card={card(viewResult, "some_tool")} />);
    expect(document.querySelector(".portfolio")).toBeNull();
  });

  it("formats money and costs without inventing digits", () => {
    expect(formatMoney(1234567.891)).toBe("1,234,567.89");
    expect(formatMoney(null)).toBe("—");
    expect(formatCost(10.5)).toBe("10.50");
    expect(formatCost(10.555)).toBe("10.555");
    expect(formatCost(null)).toBe("—");
  });
});
