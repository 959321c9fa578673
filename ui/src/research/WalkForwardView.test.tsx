import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, render } from "@testing-library/react";
import type { RunMetrics, RunParams, WalkForwardSummary } from "../bindings";

vi.mock("lightweight-charts", () => ({
  ColorType: { Solid: "solid" },
  LineSeries: {},
  createChart: () => ({ addSeries: () => ({ setData: () => {} }), timeScale: () => ({ fitContent: () => {} }), remove: () => {} }),
}));

import WalkForwardView, { windowSegments } from "./WalkForwardView";
import { ascending } from "./EquityChart";

afterEach(cleanup);

const chosen: RunParams = { hold_days: 5, stop_loss_pct: -8, take_profit_pct: 0, top_n: 4, entry_price_mode: "open", triggers: ["Spring", "EVR"] };
const oos: RunMetrics = { total_return_pct: -3.1, annualized_return_pct: null, max_drawdown_pct: null, sharpe: null, win_rate_pct: null, profit_factor: null, trades: 2, turnover: null };
const report = (fallsApart: boolean): WalkForwardSummary => ({
    period: "2020-01-02 ~ 2020-06-16",
    combinations: 4,
    best_by: "return",
    windows: [
      { index: 1, in_sample_start: "2020-01-02", in_sample_end: "2020-02-28", out_of_sample_start: "2020-03-02", out_of_sample_end: "2020-03-27", partial: false, chosen, in_sample_metric: 4.2, out_of_sample: oos },
      { index: 2, in_sample_start: "2020-01-30", in_sample_end: "2020-03-27", out_of_sample_start: "2020-03-30", out_of_sample_end: "2020-04-10", partial: true, chosen: null, in_sample_metric: null, out_of_sample: null },
    ],
    out_of_sample_curve: [
      { date: "2020-03-02", equity: 100000, window: 1 },
      { date: "2020-03-03", equity: 99000, window: 1 },
    ],
    in_sample_curve: [
      { date: "2020-01-02", equity: 100000, window: 1 },
      { date: "2020-02-28", equity: 104000, window: 1 },
      { date: "2020-01-30", equity: 104000, window: 2 },
    ],
    verdict: { falls_apart: fallsApart, text: "样本外失效：walk-forward 仅 0/1 个测试窗口为正" },
  });

describe("walk-forward view", () => {
  it("shows every window's choice and out-of-sample result and warns when out-of-sample falls apart", () => {
    render(<WalkForwardView report={report(true)} />);
    const rows = [...document.querySelectorAll("#wf-windows tbody tr")];
    expect(rows).toHaveLength(2);
    expect(rows[0].textContent).toContain("5 / -8 / 0 / 4 / open / Spring+EVR");
    expect(rows[0].textContent).toContain("-3.10%");
    expect(rows[1].textContent).toContain("2020-04-10 *");
    const verdict = document.getElementById("wf-verdict");
    expect(verdict?.getAttribute("role")).toBe("alert");
    expect(verdict?.className).toBe("warning");
    expect(verdict?.textContent).toContain("仅 0/1");
    expect(document.getElementById("wf-is-curve")?.dataset.series).toBe("2");
  });

  it("lists the data notes the runs rest on, and none when there are none", () => {
    const note = "150 只股票中 150 只的 ST 状态取自今日名称（没有该日的历史名称），可能与当日不符";
    render(<WalkForwardView report={{ ...report(false), notes: [note] }} />);
    expect([...document.querySelectorAll("#wf-notes li")].map((li) => li.textContent)).toEqual([note]);
    cleanup();
    render(<WalkForwardView report={report(false)} />);
    expect(document.getElementById("wf-notes")).toBeNull();
  });

  it("does not alarm when out-of-sample holds", () => {
    render(<WalkForwardView report={report(false)} />);
    expect(document.getElementById("wf-verdict")?.className).toBe("hint");
  });

  it("splits the in-sample chain by window and keeps each curve's dates ascending", () => {
    const segs = windowSegments(report(true).in_sample_curve);
    expect(segs.map((s) => s.points.length)).toEqual([2, 1]);
    expect(
      ascending([
        { date: "2020-01-02", equity: 1 },
        { date: "2020-01-02", equity: 2 },
        { date: "2020-01-01", equity: 3 },
        { date: "2020-01-03", equity: 4 },
      ]),
    ).toEqual([
      { time: "2020-01-02", value: 2 },
      { time: "2020-01-03", value: 4 },
    ]);
  });
});
