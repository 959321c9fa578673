import { describe, expect, it, vi, beforeEach } from "vitest";
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { TaskInfo } from "../bindings";

const mocks = vi.hoisted(() => ({
  listTasks: vi.fn(),
  cancelTask: vi.fn(),
  taskResult: vi.fn(),
  researchReport: vi.fn(),
  renderMarkdown: vi.fn(),
  // The screen result's tracked hit rates (HitRates.test.tsx covers them).
  trackStats: vi.fn(() => Promise.resolve({ status: "ok", data: { screens: 0, signals: 0, horizons: [1, 5, 10, 20], rates: [] } })),
  listeners: [] as ((e: { payload: { task: TaskInfo } }) => void)[],
}));
vi.mock("../bindings", () => ({
  commands: { listTasks: mocks.listTasks, cancelTask: mocks.cancelTask, taskResult: mocks.taskResult, researchReport: mocks.researchReport, renderMarkdown: mocks.renderMarkdown, trackStats: mocks.trackStats },
  events: {
    taskChanged: {
      listen: (f: (e: { payload: { task: TaskInfo } }) => void) => {
        mocks.listeners.push(f);
        return Promise.resolve(() => {});
      },
    },
  },
}));

import TaskPanel from "./TaskPanel";
import { LanguageContext } from "../i18n";

const ok = <T,>(data: T) => ({ status: "ok", data });
const running: TaskInfo = {
  task_id: "bg_1_screen_stocks",
  tool_name: "screen_stocks",
  display_name: "全市场扫描",
  status: "running",
  progress: { stage: "L2 完成", detail: "5451 → 3827", fraction: 0.5 },
  started_at: new Date(Date.now() - 3_000).toISOString(),
};

describe("TaskPanel", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
    mocks.listeners.length = 0;
  });

  it("shows nothing without tasks", async () => {
    mocks.listTasks.mockResolvedValue(ok([]));
    const { container } = render(<TaskPanel />);
    await waitFor(() => expect(mocks.listTasks).toHaveBeenCalled());
    expect(container.querySelector(".task-panel")).toBeNull();
  });

  it("shows a running task with its stage, progress and a cancel that reaches the backend", async () => {
    mocks.listTasks.mockResolvedValue(ok([running]));
    mocks.cancelTask.mockResolvedValue(ok(true));
    render(<TaskPanel />);
    const row = await waitFor(() => {
      const r = document.querySelector("[data-task-id='bg_1_screen_stocks']");
      expect(r).not.toBeNull();
      return r as HTMLElement;
    });
    expect(row.textContent).toContain("L2 完成 5451 → 3827");
    expect(row.querySelector("[role=progressbar]")?.getAttribute("aria-valuenow")).toBe("50");
    expect(screen.getByText("1 个运行中")).toBeTruthy();
    fireEvent.click(screen.getByText("取消"));
    expect(mocks.cancelTask).toHaveBeenCalledWith("bg_1_screen_stocks");
  });

  it("a queued task reads queued, with why, and can be cancelled before it starts", async () => {
    const queued: TaskInfo = { ...running, task_id: "bg_4_screen_stocks", status: "queued", progress: { stage: "已提交", detail: "", fraction: null } };
    mocks.listTasks.mockResolvedValue(ok([running, queued]));
    mocks.cancelTask.mockResolvedValue(ok(true));
    render(<TaskPanel />);
    const row = await waitFor(() => {
      const r = document.querySelector("[data-status='queued']");
      expect(r).not.toBeNull();
      return r as HTMLElement;
    });
    expect(row.textContent).toContain("⋯");
    expect(row.textContent).toContain("排队中");
    expect(row.textContent).toContain("同时最多运行 3 个后台任务，有空位后自动开始");
    expect(row.textContent).not.toContain("已提交");
    expect(row.querySelector("[role=progressbar]")).toBeNull();
    expect(screen.getByText("1 个运行中")).toBeTruthy();
    expect(screen.getByText("1 个排队")).toBeTruthy();
    fireEvent.click(row.querySelector(".task-cancel") as HTMLElement);
    expect(mocks.cancelTask).toHaveBeenCalledWith("bg_4_screen_stocks");
  });

  it("in English, a queued task and a screen's funnel layer are worded in English", async () => {
    const layer: TaskInfo = { ...running, progress: { stage: "L3 行业共振", detail: "1234 → 800", fraction: 0.73, step: { kind: "screen_layer", layer: 3, input: 1234, passed: 800 } } };
    const queued: TaskInfo = { ...running, task_id: "bg_4_screen_stocks", status: "queued", progress: { stage: "已提交", detail: "", fraction: null } };
    mocks.listTasks.mockResolvedValue(ok([layer, queued]));
    render(
      <LanguageContext.Provider value="en">
        <TaskPanel />
      </LanguageContext.Provider>,
    );
    const queuedRow = await waitFor(() => {
      const r = document.querySelector("[data-status='queued']");
      expect(r).not.toBeNull();
      return r as HTMLElement;
    });
    expect(queuedRow.textContent).toContain("Queued");
    expect(queuedRow.textContent).toContain("At most 3 background tasks run at once; starts when one ends");
    const runningRow = document.querySelector("[data-task-id='bg_1_screen_stocks']") as HTMLElement;
    expect(runningRow.querySelector(".task-stage")?.textContent).toBe("L3 sector resonance: 1234 → 800");
    expect(screen.getByText("1 queued")).toBeTruthy();
  });

  it("a screen's layer events move the row from L1 to L5 in Chinese", async () => {
    mocks.listTasks.mockResolvedValue(ok([]));
    render(<TaskPanel />);
    await waitFor(() => expect(mocks.listeners.length).toBe(1));
    const names = ["基础门槛", "强势通道", "行业共振", "结构触发", "退出信号"];
    for (let n = 1; n <= 5; n++) {
      const progress = { stage: `L${n}`, detail: "", fraction: 0.4 + 0.11 * n, step: { kind: "screen_layer" as const, layer: n, input: 100 - n, passed: 90 - n } };
      act(() => mocks.listeners[0]({ payload: { task: { ...running, progress } } }));
      expect(document.querySelector("[data-task-id='bg_1_screen_stocks'] .task-stage")?.textContent).toBe(`L${n} ${names[n - 1]}：${100 - n} → ${90 - n}`);
    }
  });

  it("an unknown fraction is an indeterminate bar", async () => {
    mocks.listTasks.mockResolvedValue(ok([{ ...running, progress: { stage: "加载K线", detail: "", fraction: null } }]));
    render(<TaskPanel />);
    const bar = await waitFor(() => {
      const b = document.querySelector(".task-progress");
      expect(b).not.toBeNull();
      return b as HTMLElement;
    });
    expect(bar.className).toContain("indeterminate");
    expect(bar.getAttribute("aria-valuenow")).toBeNull();
  });

  it("follows changes, then opens a finished screen as a sortable table that leads to the chart and the agent", async () => {
    mocks.listTasks.mockResolvedValue(ok([running]));
    mocks.taskResult.mockResolvedValue(
      ok({
        as_of: "2020-06-16",
        regime: { regime: { regime: "UNKNOWN" }, new_buy_allowed: false },
        candidates: [
          { code: "000001", name: "平安银行", channel: "主升通道", triggers: [{ kind: "Spring" }], score: 1.2, last_close: 12.3, bars_as_of: "2020-06-16" },
          { code: "600519", name: "贵州茅台", channel: "潜伏通道", triggers: [{ kind: "EVR" }], score: 3.5, last_close: 1400, bars_as_of: "2020-06-16" },
        ],
      }),
    );
    const onAsk = vi.fn();
    const onOpenStock = vi.fn();
    render(<TaskPanel onAsk={onAsk} onOpenStock={onOpenStock} />);
    await waitFor(() => expect(mocks.listeners.length).toBe(1));
    act(() => mocks.listeners[0]({ payload: { task: { ...running, status: "completed", finished_at: new Date().toISOString() } } }));
    expect(document.querySelector("[data-status='completed']")?.textContent).toContain("✓");
    fireEvent.click(screen.getByText("查看结果"));
    await waitFor(() => expect(document.querySelectorAll(".screen-table tbody tr")).toHaveLength(2));
    const codes = () => [...document.querySelectorAll(".screen-table tbody tr")].map((r) => r.getAttribute("data-code"));
    expect(codes()).toEqual(["600519", "000001"]);
    fireEvent.click(document.querySelector("button[data-sort='code']") as HTMLElement);
    expect(codes()).toEqual(["000001", "600519"]);
    expect(screen.getByText(/水温 UNKNOWN/)).toBeTruthy();
    fireEvent.click(screen.getByText("600519"));
    expect(onOpenStock).toHaveBeenCalledWith("600519");
  });

  it("a failed task shows its error", async () => {
    mocks.listTasks.mockResolvedValue(ok([{ ...running, status: "failed", error: "interrupted by restart", finished_at: running.started_at }]));
    render(<TaskPanel />);
    const row = await waitFor(() => {
      const r = document.querySelector("[data-status='failed']");
      expect(r).not.toBeNull();
      return r as HTMLElement;
    });
    expect(row.textContent).toContain("✗");
    expect(row.textContent).toContain("interrupted by restart");
  });
  it("a finished CSV import shows its counts and each rejected file with its first problems", async () => {
    const done: TaskInfo = { ...running, task_id: "bg_2_import_bars", tool_name: "import_bars", display_name: "导入行情 CSV", status: "completed", finished_at: new Date().toISOString() };
    mocks.listTasks.mockResolvedValue(ok([done]));
    mocks.taskResult.mockResolvedValue(
      ok({
        files: 3,
        files_imported: 1,
        files_rejected: 2,
        stocks: 1,
        bars: 2,
        bad_rows: 2,
        not_in_stock_list: [],
        outcomes: [
          { path: "/d/moutai.csv", status: "imported", stocks: 1, bars: 2 },
          {
            path: "/d/broken.csv",
            status: "rejected",
            errors: [{ line: 2, problem: "bad_date", value: "not-a-date", message: 'date "not-a-date" is not YYYY-MM-DD or YYYYMMDD' }],
            bad_rows: 1,
          },
          { path: "/d/gbk.csv", status: "rejected", errors: [{ line: 0, problem: "not_utf8", valid_up_to: 41, message: "not UTF-8 text" }], bad_rows: 1 },
        ],
      }),
    );
    render(<TaskPanel onAsk={() => {}} onOpenStock={() => {}} />);
    fireEvent.click(await screen.findByText("查看结果"));
    await waitFor(() => expect(document.getElementById("import-summary")).toBeTruthy());
    expect(document.getElementById("import-summary")?.textContent).toBe("导入了 1 个文件：1 只股票、2 根K线");
    const bad = document.querySelector("#import-rejected li[data-path='/d/broken.csv']") as HTMLElement;
    expect(bad.textContent).toContain('第 2 行: 日期 "not-a-date" 不是 YYYY-MM-DD 或 YYYYMMDD');
    // A problem with the file as a whole has no line.
    const gbk = document.querySelector("#import-rejected li[data-path='/d/gbk.csv'] .hint") as HTMLElement;
    expect(gbk.textContent).toBe("不是 UTF-8 文本（第 42 个字节起）；请把文件另存为 UTF-8");
    expect(document.querySelector("#import-rejected li[data-path='/d/moutai.csv']")).toBeNull();
  });

  it("a finished sweep shows its heatmap from the backend's typed summary", async () => {
    const done: TaskInfo = { ...running, task_id: "bg_3_run_backtest", tool_name: "run_backtest", display_name: "策略回测", status: "completed", finished_at: new Date().toISOString() };
    mocks.listTasks.mockResolvedValue(ok([done]));
    const metrics = (k: number) => ({ total_return_pct: k, annualized_return_pct: null, max_drawdown_pct: null, sharpe: k / 2, win_rate_pct: null, profit_factor: null, trades: k, turnover: null });
    const summary = {
      kind: "sweep",
      period: "2020-03-02 ~ 2020-06-16",
      combinations: 2,
      best_by: "sharpe",
      grid: { start: "2020-03-02", end: "2020-06-16", board: "all", hold_days: [5, 10], stop_loss_pct: [-8], take_profit_pct: [0], top_n: [4], entry_price_mode: ["open"], triggers: [["Spring", "EVR"]] },
      rows: [5, 10].map((hold, k) => ({ hold_days: hold, stop_loss_pct: -8, take_profit_pct: 0, top_n: 4, entry_price_mode: "open", triggers: ["Spring", "EVR"], metrics: metrics(k + 1) })),
      best: 1,
      stability: null,
    };
    // The stored report holds more than the summary; the page shows the summary.
    mocks.taskResult.mockResolvedValue(ok({ ...summary, best_run: {}, note: "…" }));
    mocks.researchReport.mockResolvedValue(ok(summary));
    render(<TaskPanel onAsk={() => {}} onOpenStock={() => {}} />);
    fireEvent.click(await screen.findByText("查看结果"));
    await waitFor(() => expect(document.getElementById("heatmap")).toBeTruthy());
    expect(mocks.researchReport).toHaveBeenCalledWith("bg_3_run_backtest");
    expect([...document.querySelectorAll(".heat-cell")].map((c) => c.textContent)).toEqual(["0.50", "1.00"]);
  });
});
