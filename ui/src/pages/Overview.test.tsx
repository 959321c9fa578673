import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { DataStatusView, MarketOverview, TaskInfo } from "../bindings";

const mocks = vi.hoisted(() => ({
  marketOverview: vi.fn(),
  dataStatus: vi.fn(),
  listTasks: vi.fn(),
  startTask: vi.fn(),
  taskResult: vi.fn(),
  renderMarkdown: vi.fn(),
  // The screen result's tracked hit rates (HitRates.test.tsx covers them).
  trackStats: vi.fn(() => Promise.resolve({ status: "ok", data: { screens: 0, signals: 0, horizons: [1, 5, 10, 20], rates: [] } })),
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

import { LanguageContext } from "../i18n";
import Overview from "./Overview";

const ok = <T,>(data: T) => ({ status: "ok", data });

const offline: MarketOverview = {
  indices: ["000001.SH", "399001.SZ", "399006.SZ", "000300.SH"].map((code) => ({ code, name: code, close: null, change_pct: null, date: null, data_status: "unavailable" })),
  regime: "UNKNOWN",
  regime_as_of: null,
  regime_reasons: [{ type: "no_benchmark_bars" }],
  breadth: { available: false, trade_date: null, sample_size: 8, pct_above_ma20: null, up_ratio_pct: null, median_pct_chg: null, min_sample: 200 },
};
const status: DataStatusView = {
  stocks_cached: 8,
  indices_cached: 0,
  newest_date: "2020-06-16",
  last_closed_trading_day: "2026-12-02",
  fresh: 0,
  stale: 8,
  damaged: 0,
  stock_list_size: 5640,
  bundled_dataset: "zvt-8",
  sources: [],
};
const task = (over: Partial<TaskInfo>): TaskInfo => ({
  task_id: "bg_1_screen_stocks",
  tool_name: "screen_stocks",
  display_name: "全市场扫描",
  status: "running",
  progress: { stage: "" },
  started_at: "2026-12-03T01:00:00Z",
  finished_at: null,
  session_id: null,
  result_summary: null,
  result: null,
  error: null,
  ...over,
});
const click = async (id: string) => {
  await act(async () => {
    fireEvent.click(document.getElementById(id) as HTMLElement);
  });
};

beforeEach(() => {
  mocks.marketOverview.mockResolvedValue(ok(offline));
  mocks.dataStatus.mockResolvedValue(ok(status));
  mocks.listTasks.mockResolvedValue(ok([]));
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

describe("overview", () => {
  it("says indices and breadth are unavailable instead of numbers, and shows the cache's counts", async () => {
    render(<Overview onOpenStock={() => {}} onAsk={() => {}} />);
    await screen.findByText(/本地没有指数行情/);
    expect(document.getElementById("ov-indices")).toBeNull();
    expect(document.getElementById("ov-breadth-missing")?.textContent).toBe(
      "市场宽度不可用：当日只有 8 只股票有本地日线（至少需要 200 只），样本不足，不计算；联网后点“全市场同步”",
    );
    expect(document.getElementById("ov-regime")?.dataset.regime).toBe("UNKNOWN");
    expect(document.getElementById("ov-regime-reasons")?.textContent).toContain("本地没有上证指数日线");
    expect(document.getElementById("ov-stocks")?.textContent).toBe("8");
    expect(document.getElementById("ov-stale")?.textContent).toBe("8");
    expect(document.getElementById("ov-newest")?.textContent).toBe("2020-06-16");
    expect(document.getElementById("ov-sources")?.textContent).toBe("离线（无在线行情源）");
    // the backtest's default span ends at the newest cached bar
    expect((document.getElementById("bt-end") as HTMLInputElement).value).toBe("2020-06-16");
    expect((document.getElementById("bt-start") as HTMLInputElement).value).toBe("2019-12-16");
  });

  it("shows cached index quotes when there are some", async () => {
    const indices = offline.indices.map((i, n) => (n === 0 ? { ...i, name: "上证指数", close: 3030, change_pct: 1, date: "2026-12-02", data_status: "ok" } : i));
    mocks.marketOverview.mockResolvedValue(ok({ ...offline, indices }));
    render(<Overview onOpenStock={() => {}} onAsk={() => {}} />);
    await waitFor(() => expect(document.getElementById("ov-indices")).toBeTruthy());
    const first = document.querySelector('.ov-index[data-code="000001.SH"]') as HTMLElement;
    expect(first.textContent).toContain("3030.00");
    expect(first.textContent).toContain("+1.00%");
    expect(document.querySelector('.ov-index[data-code="000300.SH"]')?.textContent).toContain("—");
  });

  it("starts the screen and the backtest as tasks and says offline sync plainly", async () => {
    mocks.startTask.mockImplementation((r: { type: string }) =>
      Promise.resolve(r.type === "sync_all" ? { status: "error", error: { kind: "offline", message: "offline: no live data source is enabled", code: null } } : ok(task({ tool_name: r.type === "screen" ? "screen_stocks" : "run_backtest" }))),
    );
    render(
      <LanguageContext.Provider value="en">
        <Overview onOpenStock={() => {}} onAsk={() => {}} />
      </LanguageContext.Provider>,
    );
    await waitFor(() => expect(document.getElementById("ov-stocks")).toBeTruthy());
    // the backend sends codes and figures; the English page words them in English
    expect(document.getElementById("ov-breadth-missing")?.textContent).toBe(
      "Breadth unavailable: only 8 stocks have local bars that day (at least 200 are needed), too few to measure; go online and use “Full-market sync”",
    );
    expect(document.getElementById("ov-regime-reasons")?.textContent).toBe(
      " — No SSE Composite bars in the cache, so the regime cannot be judged; go online and use “Full-market sync”",
    );
    await click("ov-sync-all");
    expect(document.getElementById("ov-sync-note")?.textContent).toMatch(/^Offline: no live data source/);
    await click("ov-run-screen");
    expect(mocks.startTask).toHaveBeenLastCalledWith({ type: "screen", as_of: null });
    fireEvent.change(document.getElementById("bt-hold") as HTMLInputElement, { target: { value: "5" } });
    await click("ov-run-backtest");
    expect(mocks.startTask).toHaveBeenLastCalledWith({ type: "backtest", start: "2019-12-16", end: "2020-06-16", hold_days: 5, top_n: 4 });
    expect(document.getElementById("ov-task-note")?.dataset.ok).toBe("true");
  });

  it("links the newest finished screen to the result view", async () => {
    mocks.taskResult.mockResolvedValue(ok({ candidates: [{ code: "000001", name: "平安银行", score: 1.5 }], as_of: "2020-06-16" }));
    render(<Overview onOpenStock={() => {}} onAsk={() => {}} />);
    await screen.findByText("还没有选股结果。");
    await act(async () => {
      listeners.task?.({ payload: { task: task({ status: "completed", finished_at: "2026-12-03T01:01:00Z" }) } });
    });
    expect(mocks.dataStatus).toHaveBeenCalledTimes(1);
    await act(async () => {
      listeners.task?.({ payload: { task: task({ task_id: "bg_2_sync_market", tool_name: "sync_market", status: "completed" }) } });
    });
    expect(mocks.dataStatus).toHaveBeenCalledTimes(2);
    await click("ov-open-screen");
    await waitFor(() => expect(document.querySelector('.screen-table tr[data-code="000001"]')).toBeTruthy());
    expect(mocks.taskResult).toHaveBeenCalledWith("bg_1_screen_stocks");
  });
  it("imports a CSV path as a task, says a missing path inline, and counts the cache again when done", async () => {
    mocks.startTask.mockImplementation(() => Promise.resolve(ok(task({ task_id: "bg_3_import_bars", tool_name: "import_bars", display_name: "导入行情 CSV" }))));
    render(<Overview onOpenStock={() => {}} onAsk={() => {}} />);
    await waitFor(() => expect(document.getElementById("ov-stocks")).toBeTruthy());
    await click("ov-import");
    expect(mocks.startTask).not.toHaveBeenCalled();
    expect(document.getElementById("ov-import-note")?.textContent).toBe("请填写 CSV 文件或文件夹的路径");
    fireEvent.change(document.getElementById("ov-import-path") as HTMLInputElement, { target: { value: "  /home/me/bars  " } });
    await click("ov-import");
    expect(mocks.startTask).toHaveBeenLastCalledWith({ type: "import", path: "/home/me/bars" });
    expect(document.getElementById("ov-import-note")?.dataset.ok).toBe("true");
    const counted = mocks.dataStatus.mock.calls.length;
    await act(async () => {
      listeners.task?.({ payload: { task: task({ task_id: "bg_3_import_bars", tool_name: "import_bars", status: "completed" }) } });
    });
    expect(mocks.dataStatus).toHaveBeenCalledTimes(counted + 1);
  });
});
