import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, render, waitFor } from "@testing-library/react";
import type { TaskInfo } from "../bindings";

const mocks = vi.hoisted(() => ({
  researchPlan: vi.fn(),
  startResearch: vi.fn(),
  researchRuns: vi.fn(),
  listTasks: vi.fn(),
  taskResult: vi.fn(),
  researchReport: vi.fn(),
  cancelTask: vi.fn(),
  sweepBest: vi.fn(),
}));
const listeners = vi.hoisted(() => ({ task: null as null | ((e: { payload: { task: TaskInfo } }) => void) }));
vi.mock("../bindings", () => ({
  commands: mocks,
  events: {
    taskChanged: {
      listen: (f: (e: { payload: { task: TaskInfo } }) => void) => {
        listeners.task = f;
        return Promise.resolve(() => {});
      },
    },
  },
}));
// The canvas library needs a real layout; the heatmap and the flow are what is tested here.
vi.mock("lightweight-charts", () => ({
  ColorType: { Solid: "solid" },
  LineSeries: {},
  createChart: () => ({ addSeries: () => ({ setData: () => {} }), timeScale: () => ({ fitContent: () => {} }), remove: () => {} }),
}));

import ResearchPage from "./ResearchPage";

const ok = <T,>(data: T) => ({ status: "ok", data });
const task = (over: Partial<TaskInfo>): TaskInfo => ({
  task_id: "bg_1_run_backtest",
  tool_name: "run_backtest",
  display_name: "策略回测",
  status: "running",
  progress: { stage: "组合回测", detail: "3/4 个组合", fraction: 0.8 },
  started_at: "2026-12-05T01:00:00Z",
  finished_at: null,
  session_id: null,
  result_summary: null,
  result: null,
  error: null,
  ...over,
});
const sweep = {
  kind: "sweep",
  period: "2020-03-02 ~ 2020-06-16",
  combinations: 4,
  best_by: "sharpe",
  grid: { start: "2020-03-02", end: "2020-06-16", board: "all", hold_days: [5, 10], stop_loss_pct: [-8, -5], take_profit_pct: [0], top_n: [4], entry_price_mode: ["open"], triggers: [["Spring", "EVR"]] },
  rows: [0, 1, 2, 3].map((k) => ({
    hold_days: k < 2 ? 5 : 10,
    stop_loss_pct: k % 2 ? -5 : -8,
    take_profit_pct: 0,
    top_n: 4,
    entry_price_mode: "open",
    triggers: ["Spring", "EVR"],
    metrics: { total_return_pct: k, sharpe: k / 2, max_drawdown_pct: -1, trades: k },
  })),
  best: 3,
  stability: { score: 0.5 },
};

beforeEach(() => {
  mocks.researchPlan.mockResolvedValue(ok({ start: "2020-03-02", end: "2020-06-16", combinations: 6, axes: [], best_by: "sharpe", walk_forward: null }));
  mocks.researchRuns.mockResolvedValue(ok([]));
  mocks.listTasks.mockResolvedValue(ok([]));
  mocks.startResearch.mockResolvedValue(ok(task({})));
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

describe("research page", () => {
  it("starts a sweep with the CLI's spec strings and shows combinations done / total", async () => {
    render(<ResearchPage />);
    fireEvent.change(document.getElementById("research-hold_days") as HTMLInputElement, { target: { value: "5..15:5" } });
    await waitFor(() => expect(document.getElementById("research-plan")?.textContent).toContain("共 6 个组合"));
    await act(async () => {
      fireEvent.click(document.getElementById("research-run") as HTMLButtonElement);
    });
    expect(mocks.startResearch).toHaveBeenCalledWith(expect.objectContaining({ hold_days: "5..15:5", stop_loss_pct: "5,8", walk_forward: null, best_by: "sharpe" }));
    await act(async () => listeners.task?.({ payload: { task: task({}) } }));
    expect(document.getElementById("research-progress")?.textContent).toContain("3/4 个组合");
    fireEvent.click(document.getElementById("research-cancel") as HTMLButtonElement);
    expect(mocks.cancelTask).toHaveBeenCalledWith("bg_1_run_backtest");
  });

  it("says the backend's refusal and does not start", async () => {
    mocks.researchPlan.mockResolvedValue({ status: "error", error: { kind: "invalid_input", message: "hold_days (--hold-days) 的取值 5 重复", code: null } });
    render(<ResearchPage />);
    await waitFor(() => expect(document.getElementById("research-plan")?.textContent).toContain("重复"));
    expect((document.getElementById("research-run") as HTMLButtonElement).disabled).toBe(true);
  });

  it("shows a finished sweep's heatmap and runs a clicked cell as its single backtest", async () => {
    render(<ResearchPage />);
    await act(async () => {
      fireEvent.click(document.getElementById("research-run") as HTMLButtonElement);
    });
    mocks.taskResult.mockResolvedValue(ok(sweep));
    mocks.researchReport.mockResolvedValue(ok(sweep));
    mocks.researchRuns.mockResolvedValue(ok([{ task: task({ status: "completed" }), kind: "sweep", period: sweep.period, combinations: 4, best_by: "sharpe" }]));
    await act(async () => listeners.task?.({ payload: { task: task({ status: "completed" }) } }));
    await waitFor(() => expect(document.getElementById("heatmap")).toBeTruthy());
    const cells = [...document.querySelectorAll<HTMLButtonElement>(".heat-cell")];
    expect(cells.map((c) => c.textContent)).toEqual(["0.00", "1.00", "0.50", "1.50"]);
    expect(document.getElementById("sweep-stability")?.textContent).toContain("0.50");
    expect(document.querySelectorAll("#research-runs li")).toHaveLength(1);

    // Another metric: its best and stability by the engine's rule (asked of the backend).
    mocks.sweepBest.mockResolvedValue(ok({ best: 2, stability: 0.25 }));
    await act(async () => {
      fireEvent.change(document.getElementById("heat-metric") as HTMLSelectElement, { target: { value: "total_return_pct" } });
    });
    expect(mocks.sweepBest).toHaveBeenCalledWith([2, 2, 1, 1, 1, 1], [0, 1, 2, 3], "return");
    await waitFor(() => expect(document.getElementById("sweep-stability")?.textContent).toContain("0.25"));
    expect(document.getElementById("sweep-best")?.dataset.best).toBe("2");
    await act(async () => {
      fireEvent.change(document.getElementById("heat-metric") as HTMLSelectElement, { target: { value: "sharpe" } });
    });
    expect(document.getElementById("sweep-stability")?.textContent).toContain("0.50");

    mocks.startResearch.mockResolvedValue(ok(task({ task_id: "bg_2_run_backtest", progress: { stage: "逐日回测" } })));
    await act(async () => {
      fireEvent.click(cells[1]);
    });
    // Column 2, row 1: hold 10, stop -8 (row 2 of the grid).
    expect(mocks.startResearch).toHaveBeenLastCalledWith(expect.objectContaining({ hold_days: "10", stop_loss_pct: "-8", start: "2020-03-02", triggers: "Spring+EVR" }));
    expect(document.getElementById("cell-progress")).toBeTruthy();
    mocks.taskResult.mockResolvedValueOnce(ok({ metrics: { total_return_pct: 2 }, trades: [{ code: "000001.SZ", entry_date: "2020-03-05", exit_date: "2020-03-12", pnl_pct: 1.5 }], equity_curve: [] }));
    await act(async () => listeners.task?.({ payload: { task: task({ task_id: "bg_2_run_backtest", status: "completed" }) } }));
    await waitFor(() => expect(document.querySelectorAll("#cell-trades tbody tr")).toHaveLength(1));
  });
});

describe("research page, left and reopened", () => {
  it("follows a run started before the page was left", async () => {
    const first = render(<ResearchPage />);
    await act(async () => {
      fireEvent.click(document.getElementById("research-run") as HTMLButtonElement);
    });
    first.unmount();
    mocks.listTasks.mockResolvedValue(ok([task({ progress: { stage: "滚动窗口", detail: "第 2/5 个窗口", fraction: 0.6 } })]));
    render(<ResearchPage />);
    await waitFor(() => expect(document.getElementById("research-progress")?.textContent).toContain("第 2/5 个窗口"));
    fireEvent.click(document.getElementById("research-cancel") as HTMLButtonElement);
    expect(mocks.cancelTask).toHaveBeenCalledWith("bg_1_run_backtest");
  });
});
