import { describe, expect, it } from "vitest";
import type { TaskInfo } from "../bindings";
import { closesSyncResult, isRunningSync, LEDGER_CLOSES_TASK } from "./closesSync";

const task = (over: Partial<TaskInfo>): TaskInfo => ({
  task_id: "bg_1_sync_ledger_closes",
  tool_name: LEDGER_CLOSES_TASK,
  display_name: "同步持仓收盘价",
  status: "completed",
  progress: { stage: "完成" },
  started_at: "2024-08-09T08:00:00Z",
  ...over,
});

describe("the refresh-closes task", () => {
  it("reads each code's outcome from the task's result", () => {
    const r = closesSyncResult({
      summary: "3 个代码：1 个更新",
      outcomes: [
        { code: "510300", status: { type: "updated", new_bars: 4, fetched: 4, rejected: [] }, last_close: "2024-08-09" },
        { code: "101234", status: { type: "not_supported", reason: "101234 的代码不能确定沪深" }, last_close: null },
        { code: "127050", status: { type: "failed", error: "东方财富：超时" }, last_close: "2024-08-07" },
        { code: 7, status: {} },
      ],
    });
    expect(r?.summary).toBe("3 个代码：1 个更新");
    expect(r?.outcomes).toEqual([
      { code: "510300", status: "updated", newBars: 4, lastClose: "2024-08-09", why: null },
      { code: "101234", status: "not_supported", newBars: null, lastClose: null, why: "101234 的代码不能确定沪深" },
      { code: "127050", status: "failed", newBars: null, lastClose: "2024-08-07", why: "东方财富：超时" },
    ]);
  });

  it("has nothing to read from a task without outcomes, and knows a running refresh", () => {
    expect(closesSyncResult(null)).toBeNull();
    expect(closesSyncResult(["x"])).toBeNull();
    expect(closesSyncResult({ outcomes: [] }, "0 个代码")).toEqual({ summary: "0 个代码", outcomes: [] });
    expect(isRunningSync(task({ status: "running" }))).toBe(true);
    expect(isRunningSync(task({ status: "queued" }))).toBe(true);
    expect(isRunningSync(task({ status: "completed" }))).toBe(false);
    expect(isRunningSync(task({ status: "running", tool_name: "sync_data" }))).toBe(false);
  });
});
