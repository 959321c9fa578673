// The as-of data notes reach the window: a past screen's warnings, a backtest's notes and
// a sweep's and walk-forward's notes are listed where their results are shown.
import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, render, waitFor } from "@testing-library/react";
import type { SweepSummary } from "../bindings";

const mocks = vi.hoisted(() => ({ trackStats: vi.fn(), taskResult: vi.fn(), researchReport: vi.fn() }));
vi.mock("../bindings", () => ({ commands: mocks, events: { taskChanged: { listen: () => Promise.resolve(() => {}) } } }));
vi.mock("lightweight-charts", () => ({
  ColorType: { Solid: "solid" },
  LineSeries: {},
  createChart: () => ({ addSeries: () => ({ setData: () => {} }), timeScale: () => ({ fitContent: () => {} }), remove: () => {} }),
}));

import ResultView from "./ResultView";
import SweepView from "../research/SweepView";
import { LanguageContext } from "../i18n";

const ok = <T,>(data: T) => ({ status: "ok", data });
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

const ST_NOTE = "3 只股票中 2 只的 ST 状态取自今日名称（没有该日的历史名称），可能与当日不符";
const DELISTED_NOTE = "股票列表没有任何退市记录：此后退市的股票不在其中（幸存者偏差）";

const task = (tool: string) =>
  ({
    task_id: `bg_1_${tool}`,
    tool_name: tool,
    display_name: tool,
    status: "completed",
    progress: { stage: "完成", detail: "", fraction: 1 },
    started_at: "2026-12-05T07:00:00Z",
  }) as never;

const notes = () => [...document.querySelectorAll("#result-notes li")].map((li) => li.textContent);

describe("a result's data notes", () => {
  it("a past screen lists its warnings under the meta line", async () => {
    mocks.trackStats.mockResolvedValue(ok({ screens: 0, signals: 0, horizons: [1, 5, 10, 20], rates: [] }));
    mocks.taskResult.mockResolvedValue(ok({ as_of: "2019-01-16", regime: {}, candidates: [], data_quality: { status: "degraded", warnings: [ST_NOTE, DELISTED_NOTE] } }));
    render(<ResultView task={task("screen_stocks")} onClose={() => {}} onAsk={() => {}} onOpenStock={() => {}} />);
    await waitFor(() => expect(notes()).toEqual([ST_NOTE, DELISTED_NOTE]));
    expect(document.getElementById("result-notes")?.textContent).toContain("数据说明");
  });

  it("a backtest lists its notes, in English too", async () => {
    mocks.taskResult.mockResolvedValue(ok({ period: "2019-01-02 ~ 2019-03-29", metrics: {}, notes: [ST_NOTE] }));
    render(
      <LanguageContext.Provider value="en">
        <ResultView task={task("run_backtest")} onClose={() => {}} onAsk={() => {}} onOpenStock={() => {}} />
      </LanguageContext.Provider>,
    );
    await waitFor(() => expect(notes()).toEqual([ST_NOTE]));
    expect(document.getElementById("result-notes")?.textContent).toContain("Data notes");
  });

  it("a result without notes shows none", async () => {
    mocks.taskResult.mockResolvedValue(ok({ period: "2019-01-02 ~ 2019-03-29", metrics: {}, notes: [] }));
    render(<ResultView task={task("run_backtest")} onClose={() => {}} onAsk={() => {}} onOpenStock={() => {}} />);
    await waitFor(() => expect(document.querySelector(".backtest-result")).not.toBeNull());
    expect(document.getElementById("result-notes")).toBeNull();
  });

  it("a sweep lists its notes", () => {
    const report: SweepSummary = {
      period: "2019-01-02 ~ 2019-03-29",
      combinations: 1,
      best_by: "return",
      grid: { start: "2019-01-02", end: "2019-03-29", board: "all", hold_days: [5], stop_loss_pct: [-8], take_profit_pct: [0], top_n: [4], entry_price_mode: ["open"], triggers: [["Spring", "EVR"]] },
      rows: [
        {
          hold_days: 5,
          stop_loss_pct: -8,
          take_profit_pct: 0,
          top_n: 4,
          entry_price_mode: "open",
          triggers: ["Spring", "EVR"],
          metrics: { total_return_pct: 1, annualized_return_pct: null, max_drawdown_pct: null, sharpe: null, win_rate_pct: null, profit_factor: null, trades: 1, turnover: null },
        },
      ],
      best: 0,
      stability: null,
      notes: [ST_NOTE, DELISTED_NOTE],
    };
    render(<SweepView report={report} />);
    expect([...document.querySelectorAll("#sweep-notes li")].map((li) => li.textContent)).toEqual([ST_NOTE, DELISTED_NOTE]);
  });
});
