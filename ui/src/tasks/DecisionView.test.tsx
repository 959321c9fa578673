import { describe, expect, it, vi, beforeEach } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { TaskInfo } from "../bindings";

const mocks = vi.hoisted(() => ({ taskResult: vi.fn(), renderMarkdown: vi.fn() }));
vi.mock("../bindings", () => ({
  commands: { taskResult: mocks.taskResult, renderMarkdown: mocks.renderMarkdown },
}));

import ResultView from "./ResultView";
import { LanguageContext } from "../i18n";
import { actionLabel, decisionProblemText, decisionProblems, holdingDecisions } from "./tasks";

const task: TaskInfo = {
  task_id: "bg_7_generate_strategy_decision",
  tool_name: "generate_strategy_decision",
  display_name: "攻防决策",
  status: "completed",
  progress: { stage: "完成", detail: "", fraction: 1 },
  started_at: "2026-12-04T08:00:00Z",
};

const result = {
  ok: true,
  decision_text: "## 持仓去留\n| 000001 | 平安银行 | 减仓 |",
  holding_decisions: [
    { code: "000001", name: "平安银行", action: "trim", reason: "放量破位" },
    { code: "000002", name: "万科A", action: "keep", reason: "趋势完好" },
  ],
  decision_problems: [
    { type: "not_a_holding", code: "600519" },
    { type: "unknown_action", code: "300750", action: "hold-ish" },
  ],
  executed: false,
};

describe("the strategy decision's structured view", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
  });

  it("shows each holding's checked action above the Markdown, and what was rejected", async () => {
    mocks.taskResult.mockResolvedValue({ status: "ok", data: result });
    mocks.renderMarkdown.mockResolvedValue("<h2>持仓去留</h2>");
    const onOpenStock = vi.fn();
    const { container } = render(<ResultView task={task} onClose={() => {}} onAsk={() => {}} onOpenStock={onOpenStock} />);
    await waitFor(() => expect(container.querySelector("#decision-table")).not.toBeNull());
    const rows = [...container.querySelectorAll("#decision-table tbody tr")];
    expect(rows.map((r) => [r.getAttribute("data-code"), r.getAttribute("data-action")])).toEqual([
      ["000001", "trim"],
      ["000002", "keep"],
    ]);
    expect(rows[0].textContent).toContain("减仓");
    expect(rows[0].textContent).toContain("放量破位");
    const problems = [...container.querySelectorAll("#decision-problems li")].map((li) => li.textContent);
    expect(problems).toEqual(["600519 不是你的持仓，已忽略", "300750 的决策“hold-ish”不是 持有/减仓/清仓/加仓，已忽略"]);
    await waitFor(() => expect(container.querySelector(".markdown.report")?.innerHTML).toBe("<h2>持仓去留</h2>"));
    expect(mocks.renderMarkdown).toHaveBeenCalledWith(result.decision_text);
    fireEvent.click(screen.getByRole("button", { name: "000001" }));
    expect(onOpenStock).toHaveBeenCalledWith("000001");
  });

  it("speaks English when the app does", async () => {
    mocks.taskResult.mockResolvedValue({ status: "ok", data: result });
    mocks.renderMarkdown.mockResolvedValue("<p>x</p>");
    const { container } = render(
      <LanguageContext.Provider value="en">
        <ResultView task={task} onClose={() => {}} onAsk={() => {}} onOpenStock={() => {}} />
      </LanguageContext.Provider>,
    );
    await waitFor(() => expect(container.querySelector("#decision-table")).not.toBeNull());
    expect(container.querySelector('tr[data-code="000001"] .action')?.textContent).toBe("Trim");
    expect(container.querySelector("#decision-problems li")?.textContent).toBe("600519 is not one of your holdings; ignored");
  });

  it("reads the result tolerantly: unknown actions and shapes are dropped", () => {
    expect(holdingDecisions(null)).toEqual([]);
    expect(holdingDecisions({ holding_decisions: "nope" })).toEqual([]);
    expect(
      holdingDecisions({ holding_decisions: [{ code: "1", action: "sell_all" }, { action: "keep" }, { code: "2", action: "exit" }] }),
    ).toEqual([{ code: "2", name: "", action: "exit", reason: "", size: null }]);
    expect(decisionProblems({ decision_problems: [{ type: "no_decision_block" }, 3] })).toEqual([{ type: "no_decision_block" }]);
    const cases: [Parameters<typeof decisionProblemText>[0], string][] = [
      [{ type: "no_decision_block" }, "The model gave no structured decision (only the text above)"],
      [{ type: "malformed", reason: "not JSON" }, "Not in the expected shape: not JSON"],
      [{ type: "duplicate", code: "000001" }, "000001 had more than one decision; the first is used"],
      [{ type: "missing_holding", code: "000002" }, "Holding 000002 got no valid decision"],
    ];
    for (const [p, want] of cases) expect(decisionProblemText(p, "en")).toBe(want);
    expect(["keep", "trim", "exit", "add"].map((a) => actionLabel(a as "keep", "zh"))).toEqual(["持有", "减仓", "清仓", "加仓"]);
  });

  it("shows the rules' size of an add and of each reviewed candidate, with the stop, risk, caps and breached limits", async () => {
    const sizing = (shares: number, stop_e6: number, risk_fen: number, risk_pct: number, bound: string[]) => ({
      shares,
      stop_e6,
      stop_from: "2×ATR14",
      risk_fen,
      risk_pct,
      risk_budget_fen: 100_000,
      equity_fen: 10_000_000,
      proposed_risk_fen: risk_fen,
      proposed_risk_pct: risk_pct,
      bound,
      why_none: null,
    });
    const sized = {
      ...result,
      holding_decisions: [
        {
          code: "000338",
          name: "潍柴动力",
          action: "add",
          reason: "放量突破",
          suggested_size: { code: "000338", sizing: sizing(1500, 9_120_000, 98_765, 0.99, ["单只上限 20%（20000.00 元）：最多 1500 股"]), breaches: [], unavailable: null },
        },
        { code: "000778", name: "新兴铸管", action: "keep", reason: "趋势完好" },
      ],
      decision_problems: [],
      candidate_facts: [
        {
          code: "000001",
          name: "平安银行",
          latest_close: 13.1,
          suggested_size: { code: "000001", sizing: sizing(700, 11_900_000, 85_000, 0.8512, []), breaches: [{ type: "positions", count: 3, limit: 2 }], unavailable: null },
        },
        { code: "300027", name: "华谊兄弟", latest_close: 4.2, suggested_size: { code: "300027", sizing: null, breaches: [], unavailable: "300027 没有本地K线" } },
        { code: "603220", name: "中贝通信", latest_close: 20 },
      ],
    };
    mocks.taskResult.mockResolvedValue({ status: "ok", data: sized });
    mocks.renderMarkdown.mockResolvedValue("<p>x</p>");
    const { container } = render(<ResultView task={task} onClose={() => {}} onAsk={() => {}} onOpenStock={() => {}} />);
    await waitFor(() => expect(container.querySelector("#decision-table")).not.toBeNull());
    const add = container.querySelector('#decision-table tr[data-code="000338"] .suggested-size')!;
    expect(add.getAttribute("data-shares")).toBe("1500");
    expect(add.textContent).toContain("1500 股 · 风险 ¥988（0.99%）");
    expect(add.textContent).toContain("止损 9.12 (2×ATR14)");
    expect(add.textContent).toContain("受限于 单只上限 20%（20000.00 元）：最多 1500 股");
    expect(container.querySelector('#decision-table tr[data-code="000778"] .suggested-size')?.textContent).toBe("—");
    const rows = [...container.querySelectorAll("#decision-candidates tbody tr")];
    // a candidate the result gives no size is not listed as sized
    expect(rows.map((r) => r.getAttribute("data-code"))).toEqual(["000001", "300027"]);
    const first = rows[0].querySelector(".suggested-size")!;
    expect(first.getAttribute("data-breaches")).toBe("positions");
    expect(first.textContent).toContain("700 股 · 风险 ¥850（0.85%） · 超限: 持仓数");
    expect(first.textContent).toContain("止损 11.90");
    expect(rows[1].querySelector(".suggested-size")?.textContent).toBe("无300027 没有本地K线");
  });

  it("a decision with no holdings shows only its text", async () => {
    mocks.taskResult.mockResolvedValue({ status: "ok", data: { decision_text: "## 风险提示", holding_decisions: [], decision_problems: [] } });
    mocks.renderMarkdown.mockResolvedValue("<h2>风险提示</h2>");
    const { container } = render(<ResultView task={task} onClose={() => {}} onAsk={() => {}} onOpenStock={() => {}} />);
    await waitFor(() => expect(container.querySelector(".markdown.report")).not.toBeNull());
    expect(container.querySelector("#decision-table")).toBeNull();
    expect(container.querySelector("#decision-problems")).toBeNull();
  });
});
