import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render } from "@testing-library/react";
import type { ApprovalRequest } from "../bindings";
import ApprovalDialog from "../chat/ApprovalDialog";
import { LanguageContext } from "../i18n";

afterEach(cleanup);

const buy: ApprovalRequest = {
  id: "call_buy",
  tool: "record_fill",
  display_name: "记录成交",
  args: { side: "buy", code: "000001", shares: 300, price: 13 },
  available_decisions: ["allow_once", "deny"],
  preview: {
    type: "buy_sizing",
    code: "000001",
    name: "平安银行",
    proposed_shares: 300,
    entry_e6: 13_000_000,
    sizing: {
      shares: 1200,
      stop_e6: 12_150_000,
      stop_from: "2×ATR14",
      risk_fen: 104_321,
      risk_pct: 0.95,
      risk_budget_fen: 110_000,
      equity_fen: 11_000_000,
      proposed_risk_fen: 26_010,
      proposed_risk_pct: 0.24,
      bound: ["现金 1000.00 元：最多 1200 股"],
      why_none: null,
    },
    unavailable: null,
    breaches: [
      { type: "positions", count: 2, limit: 1 },
      { type: "heat", heat_pct: 6.5, limit_pct: 6 },
    ],
    notes: ["没有止损的持仓按全部市值计入总风险：000338"],
  },
};

const text = (id: string) => document.getElementById(id)?.textContent ?? null;

describe("a buy's approval shows the rules' size and the limits it breaks", () => {
  it("puts the proposal beside the rules' answer, with the stop and each breach", () => {
    render(<ApprovalDialog request={buy} onDecide={() => {}} />);
    expect(text("sizing-proposed-shares")).toBe("300");
    expect(text("sizing-rule-shares")).toBe("1200");
    expect(text("sizing-rule-risk")).toBe("1,043.21 (0.95%)");
    expect(text("sizing-proposed-risk")).toBe("260.10 (0.24%)");
    expect(text("sizing-stop")).toBe("12.15");
    expect(text("approval-sizing")).toContain("2×ATR14");
    expect(text("approval-sizing")).toContain("现金 1000.00 元：最多 1200 股");
    const items = [...document.querySelectorAll("#sizing-breaches li")].map((li) => [li.getAttribute("data-limit"), li.textContent]);
    expect(items).toEqual([
      ["positions", "持仓 2 只 > 1 只"],
      ["heat", "总风险 6.50% > 6.00%"],
    ]);
    expect(text("approval-sizing")).toContain("000338");
  });

  it("says why a buy could not be sized, and that nothing is broken, in English", () => {
    const preview = { ...buy.preview!, sizing: null, unavailable: "600519 没有本地K线", breaches: [] } as ApprovalRequest["preview"];
    render(
      <LanguageContext.Provider value="en">
        <ApprovalDialog request={{ ...buy, preview }} onDecide={() => {}} />
      </LanguageContext.Provider>,
    );
    expect(text("sizing-unavailable")).toBe("Cannot size by risk: 600519 没有本地K线");
    expect(text("sizing-breaches-none")).toBe("Breaks no account limit");
    expect(document.getElementById("sizing-rule-shares")).toBeNull();
  });
});

describe("a proposal past the rules it is sized by is flagged by name", () => {
  const over = {
    ...buy.preview!,
    proposed_shares: 3000,
    breaches: [
      { type: "trade_risk", risk_pct: 2.39, limit_pct: 1 },
      { type: "position_size", cost_pct: 35.5, limit_pct: 20 },
      { type: "cash", cost_fen: 3_900_975, cash_fen: 1_000_000 },
      { type: "positions", count: 2, limit: 1 },
    ],
  } as ApprovalRequest["preview"];
  const items = () => [...document.querySelectorAll("#sizing-breaches li")].map((li) => [li.getAttribute("data-limit"), li.textContent]);

  it("names the risk per trade, the largest position and the cash, in Chinese", () => {
    render(<ApprovalDialog request={{ ...buy, preview: over }} onDecide={() => {}} />);
    expect(items()).toEqual([
      ["trade_risk", "这笔止损处亏损 2.39% > 每笔风险 1.00%"],
      ["position_size", "买入后单只仓位 35.50% > 上限 20.00%"],
      ["cash", "买入金额 39,009.75（含费用）> 现金 10,000.00"],
      ["positions", "持仓 2 只 > 1 只"],
    ]);
  });

  it("and in English", () => {
    render(
      <LanguageContext.Provider value="en">
        <ApprovalDialog request={{ ...buy, preview: over }} onDecide={() => {}} />
      </LanguageContext.Provider>,
    );
    expect(items().slice(0, 3)).toEqual([
      ["trade_risk", "this buy's loss at the stop 2.39% > risk per trade 1.00%"],
      ["position_size", "the position after the buy 35.50% > largest position 20.00%"],
      ["cash", "the buy costs 39,009.75 (fees included) > cash 10,000.00"],
    ]);
  });
});

const batch: ApprovalRequest = {
  id: "call_batch",
  tool: "update_portfolio",
  display_name: "调仓操作",
  args: { action: "add", items: [{ code: "000001", shares: 100, cost_price: 13 }, { code: "300027", shares: 200, cost_price: 4 }] },
  available_decisions: ["allow_once", "deny"],
  preview: {
    type: "batch_sizing",
    lines: [
      {
        line: 1,
        action: "add",
        code: "000001",
        name: "平安银行",
        held_shares: 0,
        shares: 100,
        buy: { ...(buy.preview as Extract<ApprovalRequest["preview"], { type: "buy_sizing" }>), proposed_shares: 100, breaches: [] },
      },
      {
        line: 2,
        action: "add",
        code: "300027",
        name: "华谊兄弟",
        held_shares: 0,
        shares: 200,
        buy: {
          code: "300027",
          name: "华谊兄弟",
          proposed_shares: 200,
          entry_e6: 4_000_000,
          sizing: null,
          unavailable: "300027 没有本地K线",
          breaches: [{ type: "positions", count: 4, limit: 3 }],
          notes: [],
        },
      },
    ],
    heat_before_pct: 2.06,
    heat_after_pct: 3.4,
    max_heat_pct: 6,
    positions_before: 2,
    positions_after: 4,
    max_positions: 3,
    breaches: [{ type: "positions", count: 4, limit: 3 }],
    notes: ["没有行业的持仓不计入行业占比：000338"],
    unavailable: null,
  },
};

describe("a batch's approval previews every line and the batch's total", () => {
  it("lists each line's size and breaches, then heat and positions before and after", () => {
    render(<ApprovalDialog request={batch} onDecide={() => {}} />);
    const rows = [...document.querySelectorAll("#approval-batch tbody tr")];
    expect(rows.map((r) => [r.getAttribute("data-code"), r.getAttribute("data-breaches")])).toEqual([
      ["000001", ""],
      ["300027", "positions"],
    ]);
    expect(rows[0].querySelector(".batch-shares")?.textContent).toBe("0 → 100");
    expect(rows[0].querySelector(".batch-rule-shares")?.textContent).toBe("1200");
    // the line's own proposed risk, at the rules' stop
    expect(rows[0].querySelector(".batch-risk")?.textContent).toBe("12.15 · 260.10 (0.24%)");
    expect(rows[1].querySelector(".batch-rule-shares")?.textContent).toBe("无");
    expect(rows[1].querySelector(".batch-line-breaches")?.textContent).toBe("持仓 4 只 > 3 只");
    expect(text("batch-heat")).toBe("总风险 2.06% → 3.40%");
    expect(text("batch-positions")).toBe("持仓 2 → 4 只");
    expect(text("batch-total")).toContain("上限 6%");
    expect([...document.querySelectorAll("#batch-breaches li")].map((li) => li.getAttribute("data-limit"))).toEqual(["positions"]);
    expect(text("approval-batch")).toContain("没有行业的持仓不计入行业占比");
  });

  it("says a batch breaks nothing, in English", () => {
    const preview = { ...batch.preview!, breaches: [] } as ApprovalRequest["preview"];
    render(
      <LanguageContext.Provider value="en">
        <ApprovalDialog request={{ ...batch, preview }} onDecide={() => {}} />
      </LanguageContext.Provider>,
    );
    expect(text("batch-breaches-none")).toBe("Breaks no account limit");
    expect(text("batch-positions")).toBe("positions 2 → 4");
  });
});
