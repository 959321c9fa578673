import { beforeEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { TaskInfo } from "../bindings";

const mocks = vi.hoisted(() => ({
  listTasks: vi.fn(),
  journalSyncCloses: vi.fn(),
  taskResult: vi.fn(),
  listeners: [] as ((e: { payload: { task: TaskInfo } }) => void)[],
}));
vi.mock("../bindings", () => ({
  commands: { listTasks: mocks.listTasks, journalSyncCloses: mocks.journalSyncCloses, taskResult: mocks.taskResult },
  events: {
    taskChanged: {
      listen: (f: (e: { payload: { task: TaskInfo } }) => void) => {
        mocks.listeners.push(f);
        return Promise.resolve(() => {});
      },
    },
  },
}));

import RefreshCloses from "./RefreshCloses";
import { LanguageContext } from "../i18n";

const ok = <T,>(data: T) => ({ status: "ok", data });
const task = (over: Partial<TaskInfo>): TaskInfo => ({
  task_id: "bg_7_sync_ledger_closes",
  tool_name: "sync_ledger_closes",
  display_name: "同步持仓收盘价",
  status: "running",
  progress: { stage: "已提交" },
  started_at: "2024-08-09T08:00:00Z",
  ...over,
});
// task events carry no result body: the page asks for it when the task ends
const finished = task({
  status: "completed",
  finished_at: "2024-08-09T08:00:04Z",
  progress: { stage: "完成", fraction: 1 },
  result_summary: "2 个代码：1 个更新",
});
const body = {
  summary: "2 个代码：1 个更新",
  outcomes: [
    { code: "510300", status: { type: "updated", new_bars: 3, fetched: 3, rejected: [] }, last_close: "2024-08-09" },
    { code: "108888", status: { type: "not_supported", reason: "108888 的代码不能确定沪深" }, last_close: null },
  ],
};
const emit = (t: TaskInfo) => act(() => mocks.listeners.forEach((f) => f({ payload: { task: t } })));

describe("RefreshCloses", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
    mocks.listeners.length = 0;
    mocks.listTasks.mockResolvedValue(ok([]));
    mocks.taskResult.mockResolvedValue(ok(body));
  });

  it("starts the task, shows its progress, and reloads the ledger when it ends", async () => {
    const onDone = vi.fn();
    mocks.journalSyncCloses.mockResolvedValue(ok(task({})));
    render(
      <LanguageContext.Provider value="zh">
        <RefreshCloses onDone={onDone} />
      </LanguageContext.Provider>,
    );
    fireEvent.click(screen.getByText("刷新持仓收盘价"));
    await waitFor(() => expect(document.querySelector("#jr-sync-progress")).not.toBeNull());
    expect((document.querySelector("#jr-sync-closes") as HTMLButtonElement).disabled).toBe(true);
    emit(task({ progress: { stage: "基金、债券日线", detail: "510300（1/2）", fraction: 0.5 } }));
    expect(document.querySelector("#jr-sync-progress")?.textContent).toContain("510300（1/2）");
    expect(document.querySelector("#jr-sync-progress [role='progressbar']")?.getAttribute("aria-valuenow")).toBe("50");
    // another task's change is not this one
    emit({ ...finished, task_id: "bg_other_screen", tool_name: "screen_stocks" });
    expect(onDone).not.toHaveBeenCalled();
    emit(finished);
    expect(onDone).toHaveBeenCalledTimes(1);
    expect(mocks.taskResult).toHaveBeenCalledWith(finished.task_id);
    expect(document.querySelector("#jr-sync-progress")).toBeNull();
    await waitFor(() => expect(document.querySelector("#jr-sync-done")).not.toBeNull());
    const etf = document.querySelector("#jr-sync-done li[data-code='510300']");
    expect(etf?.getAttribute("data-last-close")).toBe("2024-08-09");
    expect(etf?.textContent).toContain("新增 3 天，收盘价至 2024-08-09");
    expect(document.querySelector("#jr-sync-done li[data-code='108888']")?.textContent).toContain("不取日线：108888 的代码不能确定沪深");
    expect((document.querySelector("#jr-sync-closes") as HTMLButtonElement).disabled).toBe(false);
  });

  it("keeps the end of a task that finished before the start's answer came", async () => {
    const onDone = vi.fn();
    let answer: (v: unknown) => void = () => {};
    mocks.journalSyncCloses.mockReturnValue(new Promise((r) => (answer = r)));
    render(<RefreshCloses onDone={onDone} />);
    fireEvent.click(document.querySelector("#jr-sync-closes") as HTMLElement);
    emit(finished);
    await act(async () => answer(ok(task({}))));
    expect(onDone).toHaveBeenCalled();
    await waitFor(() => expect(document.querySelector("#jr-sync-done")).not.toBeNull());
    expect(document.querySelector("#jr-sync-progress")).toBeNull();
  });

  it("says why the task could not start", async () => {
    mocks.journalSyncCloses.mockResolvedValue({ status: "error", error: { kind: "offline", message: "offline", code: null } });
    render(<RefreshCloses onDone={() => {}} />);
    fireEvent.click(document.querySelector("#jr-sync-closes") as HTMLElement);
    await waitFor(() => expect(document.querySelector("#jr-sync-error")?.textContent).toBe("离线"));
  });
});
