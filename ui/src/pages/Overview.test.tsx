import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { DataStatusView, HistoryCounts, MarketOverview, NamesImportReport, TaskInfo } from "../bindings";

const mocks = vi.hoisted(() => ({
  marketOverview: vi.fn(),
  dataStatus: vi.fn(),
  listTasks: vi.fn(),
  startTask: vi.fn(),
  taskResult: vi.fn(),
  renderMarkdown: vi.fn(),
  historyCounts: vi.fn(),
  namesImport: vi.fn(),
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
const noHistory: HistoryCounts = { codes_with_names: 0, spans: 0, first_seen_spans: 0, listings: 0, delisted: 0, snapshots: 0 };
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
  mocks.historyCounts.mockResolvedValue(ok(noHistory));
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
  it("imports a names file, shows what was added and what was already there, and counts the history again", async () => {
    const imported = (added: number, unchanged: number): NamesImportReport => ({
      path: "/home/me/names.csv",
      status: "imported",
      rows: 3,
      stocks: 2,
      added,
      changed: 0,
      confirmed: 0,
      unchanged,
      kept_exact: 0,
    });
    mocks.namesImport.mockResolvedValueOnce(ok(imported(3, 0))).mockResolvedValueOnce(ok(imported(0, 3)));
    render(<Overview onOpenStock={() => {}} onAsk={() => {}} />);
    // nothing recorded yet: said, with what it means for past screens
    await waitFor(() => expect(document.getElementById("ov-history")?.textContent).toContain("没有名称历史"));
    await click("ov-names-import");
    expect(mocks.namesImport).not.toHaveBeenCalled();
    expect(document.getElementById("ov-names-error")?.textContent).toBe("请填写名称 CSV 文件的路径");

    mocks.historyCounts.mockResolvedValue(ok({ ...noHistory, codes_with_names: 2, spans: 3 }));
    fireEvent.change(document.getElementById("ov-names-path") as HTMLInputElement, { target: { value: " /home/me/names.csv " } });
    await click("ov-names-import");
    expect(mocks.namesImport).toHaveBeenLastCalledWith("/home/me/names.csv");
    expect(document.getElementById("ov-names-report")?.dataset.status).toBe("imported");
    expect(document.getElementById("ov-names-headline")?.textContent).toBe("已导入 names.csv：3 条名称（2 只股票）：新增 3，更正 0，已有 0");
    await waitFor(() => expect(document.getElementById("ov-history")?.dataset.spans).toBe("3"));
    expect(document.getElementById("ov-history")?.textContent).toBe("2 只股票 · 3 段名称（0 段为同步首次见到）· 上市信息 0（退市 0）· 股票列表快照 0");

    await click("ov-names-import");
    expect(document.getElementById("ov-names-headline")?.textContent).toBe("没有新内容：names.csv 中的 3 条名称（2 只股票）都已记录");
  });

  it("lists a rejected names file's bad lines by number, in English too", async () => {
    const rejected: NamesImportReport = {
      path: "/home/me/bad.csv",
      status: "rejected",
      bad_lines: 52,
      errors: [
        { line: 3, problem: "bad_date", value: "2020-02-30", message: 'date "2020-02-30" is not YYYYMMDD or YYYY-MM-DD' },
        { line: 4, problem: "unknown_code", code: "510300", reason: "not an A-share stock code", message: 'unknown code "510300": not an A-share stock code' },
      ],
    };
    mocks.namesImport.mockResolvedValue(ok(rejected));
    const { unmount } = render(<Overview onOpenStock={() => {}} onAsk={() => {}} />);
    fireEvent.change(document.getElementById("ov-names-path") as HTMLInputElement, { target: { value: "/home/me/bad.csv" } });
    await click("ov-names-import");
    expect(document.getElementById("ov-names-report")?.dataset.status).toBe("rejected");
    expect(document.getElementById("ov-names-headline")?.textContent).toBe("bad.csv 未导入任何内容：52 行有错误");
    const lines = [...document.querySelectorAll(".ov-names-bad")].map((l) => [(l as HTMLElement).dataset.line, l.textContent]);
    expect(lines).toEqual([
      ["3", '第 3 行：日期 "2020-02-30" 不是 YYYYMMDD 或 YYYY-MM-DD'],
      ["4", '第 4 行：未知代码 "510300"：not an A-share stock code'],
      [undefined, "……另有 50 行错误未列出"],
    ]);
    unmount();
    render(
      <LanguageContext.Provider value="en">
        <Overview onOpenStock={() => {}} onAsk={() => {}} />
      </LanguageContext.Provider>,
    );
    fireEvent.change(document.getElementById("ov-names-path") as HTMLInputElement, { target: { value: "/home/me/bad.csv" } });
    await click("ov-names-import");
    expect(document.getElementById("ov-names-headline")?.textContent).toBe("bad.csv: nothing imported, 52 bad line(s)");
    expect(document.querySelector(".ov-names-bad")?.textContent).toBe('line 3: date "2020-02-30" is not YYYYMMDD or YYYY-MM-DD');
  });

  it("says a names file that cannot be read as the error it is", async () => {
    mocks.namesImport.mockResolvedValue({ status: "error", error: { kind: "invalid_input", message: "/tmp/x is a folder; give the CSV file", code: null } });
    render(<Overview onOpenStock={() => {}} onAsk={() => {}} />);
    fireEvent.change(document.getElementById("ov-names-path") as HTMLInputElement, { target: { value: "/tmp/x" } });
    await click("ov-names-import");
    expect(document.getElementById("ov-names-error")?.textContent).toBe("/tmp/x is a folder; give the CSV file");
    expect(document.getElementById("ov-names-report")).toBeNull();
  });
});
