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
