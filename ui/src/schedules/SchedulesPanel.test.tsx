import { beforeEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, render, waitFor } from "@testing-library/react";
import type { ScheduleRunView, ScheduleView } from "../bindings";

const mocks = vi.hoisted(() => ({
  listSchedules: vi.fn(),
  damagedSchedules: vi.fn(),
  addSchedule: vi.fn(),
  updateSchedule: vi.fn(),
  setScheduleEnabled: vi.fn(),
  removeSchedule: vi.fn(),
  runScheduleNow: vi.fn(),
  listTasks: vi.fn(),
  taskResult: vi.fn(),
  emitOpen: vi.fn(),
  scheduleRan: null as null | (() => void),
}));
vi.mock("../bindings", () => ({
  commands: mocks,
  events: {
    scheduleRan: {
      listen: (f: () => void) => {
        mocks.scheduleRan = f;
        return Promise.resolve(() => {});
      },
    },
    openConversation: { emit: mocks.emitOpen },
  },
}));

import SchedulesPanel from "./SchedulesPanel";

const ok = <T,>(data: T) => ({ status: "ok", data });

const run = (patch: Partial<ScheduleRunView>): ScheduleRunView => ({
  id: 1,
  schedule: "close",
  occurrence: null,
  catch_up: false,
  status: "done",
  summary: "12 candidates",
  error: null,
  task_id: null,
  conversation_id: null,
  started_at: "2026-12-04T07:05:00Z",
  finished_at: "2026-12-04T07:05:09Z",
  ...patch,
});

const close: ScheduleView = {
  name: "close",
  when: { type: "at", time: "15:05", days: { type: "trading" } },
  job: { type: "task", request: { type: "screen", as_of: null } },
  enabled: true,
  next_due: "2026-12-07 15:05",
  next_due_assumed_trading_day: false,
  runs: [],
};

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const q = (c: HTMLElement, sel: string) => c.querySelector(sel) as HTMLElement;

describe("Settings → Schedules", () => {
  beforeEach(() => {
    cleanup();
    vi.clearAllMocks();
    mocks.scheduleRan = null;
    mocks.damagedSchedules.mockResolvedValue(ok([]));
  });

  it("names a damaged schedule with why and removes it on request", async () => {
    mocks.listSchedules.mockResolvedValue(ok([close]));
    mocks.damagedSchedules.mockResolvedValueOnce(ok([{ name: "broken", why: "when: unknown variant `sometimes`" }])).mockResolvedValue(ok([]));
    mocks.removeSchedule.mockResolvedValue(ok(null));
    const { container } = render(<SchedulesPanel onAsk={() => {}} />);
    const row = await waitFor(() => {
      const r = container.querySelector('.sched-damaged[data-name="broken"]');
      expect(r).not.toBeNull();
      return r as HTMLElement;
    });
    expect(row.textContent).toContain("unknown variant `sometimes`");
    // the readable schedule is still listed beside it
    await waitFor(() => expect(container.textContent).toContain("close"));
    fireEvent.click(row.querySelector("button") as HTMLElement);
    await waitFor(() => expect(mocks.removeSchedule).toHaveBeenCalledWith("broken"));
    await waitFor(() => expect(container.querySelector(".sched-damaged")).toBeNull());
  });

  it("adds a schedule from the after-close preset and lists it with its next run", async () => {
    mocks.listSchedules.mockResolvedValueOnce(ok([])).mockResolvedValue(ok([close]));
    mocks.addSchedule.mockResolvedValue(ok(close));
    const { container } = render(<SchedulesPanel onAsk={() => {}} />);
    await waitFor(() => expect(q(container, "#sched-empty")).not.toBeNull());

    fireEvent.change(q(container, "#sched-name"), { target: { value: "close" } });
    fireEvent.click(q(container, "#sched-preset-after-close"));
    expect((q(container, "#sched-time") as HTMLInputElement).value).toBe("15:05");
    fireEvent.click(q(container, "#sched-add"));

    await waitFor(() => expect(q(container, ".sched-item[data-name='close']")).not.toBeNull());
    expect(mocks.addSchedule).toHaveBeenCalledWith({
      name: "close",
      when: { type: "at", time: "15:05", days: { type: "trading" } },
      job: { type: "task", request: { type: "screen", as_of: null } },
    });
    const item = q(container, ".sched-item[data-name='close']");
    expect(q(item, ".sched-when").textContent).toBe("交易日 15:05");
    expect(q(item, ".sched-job").textContent).toBe("全市场选股");
    expect(q(item, ".sched-next").textContent).toBe("2026-12-07 15:05");
    expect(q(item, ".sched-assumed")).toBeNull();
  });

  it("a screen's board and limit go with it; a bad limit is said and nothing is sent", async () => {
    mocks.listSchedules.mockResolvedValue(ok([]));
    mocks.addSchedule.mockResolvedValue({ status: "error", error: { kind: "invalid_input", message: "stop here", code: null } });
    const { container } = render(<SchedulesPanel onAsk={() => {}} />);
    await waitFor(() => expect(q(container, "#sched-empty")).not.toBeNull());
    fireEvent.change(q(container, "#sched-name"), { target: { value: "gem" } });
    fireEvent.click(q(container, "#sched-preset-after-close"));
    fireEvent.change(q(container, "#sched-screen-board"), { target: { value: "chinext" } });
    fireEvent.change(q(container, "#sched-screen-limit"), { target: { value: "5000" } });
    fireEvent.click(q(container, "#sched-add"));
    await waitFor(() => expect(q(container, "#sched-form-note").textContent).toBe("扫描只数须为 0–3000 的整数"));
    expect(mocks.addSchedule).not.toHaveBeenCalled();
    fireEvent.change(q(container, "#sched-screen-limit"), { target: { value: "300" } });
    fireEvent.click(q(container, "#sched-add"));
    await waitFor(() => expect(mocks.addSchedule).toHaveBeenCalledTimes(1));
    expect(mocks.addSchedule).toHaveBeenCalledWith({
      name: "gem",
      when: { type: "at", time: "15:05", days: { type: "trading" } },
      job: { type: "task", request: { type: "screen", as_of: null, board: "chinext", limit: 300 } },
    });
    // Another job has no board to choose.
    fireEvent.click(q(container, "#sched-job-sync"));
    expect(q(container, "#sched-screen-board")).toBeNull();
  });

  it("shows the backend's refusal under the form, nothing listed", async () => {
    mocks.listSchedules.mockResolvedValue(ok([]));
    mocks.addSchedule.mockResolvedValue({ status: "error", error: { kind: "invalid_input", message: "bad cron expression 'nope'", code: null } });
    const { container } = render(<SchedulesPanel onAsk={() => {}} />);
    await waitFor(() => expect(q(container, "#sched-empty")).not.toBeNull());
    fireEvent.change(q(container, "#sched-name"), { target: { value: "bad" } });
    fireEvent.click(q(container, "#sched-mode-cron"));
    fireEvent.change(q(container, "#sched-cron"), { target: { value: "nope" } });
    fireEvent.click(q(container, "#sched-add"));
    await waitFor(() => expect(q(container, "#sched-form-note").textContent).toBe("未添加：bad cron expression 'nope'"));
    expect(q(container, "#sched-form-note").className).toBe("error");
    expect(mocks.addSchedule).toHaveBeenCalledWith({ name: "bad", when: { type: "cron", expr: "nope" }, job: { type: "task", request: { type: "screen", as_of: null } } });
    expect(q(container, ".sched-item")).toBeNull();
    // The form is kept for correcting.
    expect((q(container, "#sched-cron") as HTMLInputElement).value).toBe("nope");
  });

  it("an alerts check can be scheduled from the form", async () => {
    mocks.listSchedules.mockResolvedValue(ok([]));
    mocks.addSchedule.mockResolvedValue({ status: "error", error: { kind: "invalid_input", message: "no alert rule exists", code: null } });
    const { container } = render(<SchedulesPanel onAsk={() => {}} />);
    await waitFor(() => expect(q(container, "#sched-empty")).not.toBeNull());
    expect(q(container, "label[for='sched-job-alerts'], #sched-job-alerts")).not.toBeNull();
    fireEvent.change(q(container, "#sched-name"), { target: { value: "close-alerts" } });
    fireEvent.click(q(container, "#sched-mode-cron"));
    fireEvent.change(q(container, "#sched-cron"), { target: { value: "10 15 * * 1-5" } });
    fireEvent.click(q(container, "#sched-job-alerts"));
    fireEvent.click(q(container, "#sched-add"));
    await waitFor(() => expect(mocks.addSchedule).toHaveBeenCalledWith({ name: "close-alerts", when: { type: "cron", expr: "10 15 * * 1-5" }, job: { type: "task", request: { type: "alerts" } } }));
    await waitFor(() => expect(q(container, "#sched-form-note").textContent).toBe("未添加：no alert rule exists"));
  });

  it("a form missing a part is not sent", async () => {
    mocks.listSchedules.mockResolvedValue(ok([]));
    const { container } = render(<SchedulesPanel onAsk={() => {}} />);
    await waitFor(() => expect(q(container, "#sched-empty")).not.toBeNull());
    fireEvent.click(q(container, "#sched-preset-pre-open"));
    fireEvent.click(q(container, "#sched-add"));
    expect(q(container, "#sched-form-note").textContent).toBe("请填写名称");
    expect(mocks.addSchedule).not.toHaveBeenCalled();
  });

  it("run now is disabled while it runs, then the history shows the run with its links", async () => {
    const finished = run({ id: 7, task_id: "task-42" });
    mocks.listSchedules.mockResolvedValueOnce(ok([close])).mockResolvedValue(ok([{ ...close, runs: [finished, run({ id: 6, occurrence: "2026-12-03 15:05", catch_up: true, status: "failed", summary: null, error: "no cached bars", conversation_id: "conv-9" })] }]));
    const pending = deferred<unknown>();
    mocks.runScheduleNow.mockReturnValue(pending.promise);
    const { container } = render(<SchedulesPanel onAsk={() => {}} />);
    await waitFor(() => expect(q(container, ".sched-item[data-name='close']")).not.toBeNull());

    fireEvent.click(q(container, ".sched-run-now"));
    const button = q(container, ".sched-run-now") as HTMLButtonElement;
    expect(button.disabled).toBe(true);
    expect(button.textContent).toBe("运行中…");
    expect(mocks.runScheduleNow).toHaveBeenCalledWith("close");

    await act(async () => pending.resolve(ok(finished)));
    await waitFor(() => expect(q(container, ".sched-run-row[data-run-id='7']")).not.toBeNull());
    expect((q(container, ".sched-run-now") as HTMLButtonElement).disabled).toBe(false);

    const done = q(container, ".sched-run-row[data-run-id='7']");
    expect(done.dataset.status).toBe("done");
    expect(done.dataset.taskId).toBe("task-42");
    expect(q(done, ".sched-run-when").textContent).toBe("手动运行");
    expect(q(done, ".sched-run-summary").textContent).toBe("12 candidates");

    const failed = q(container, ".sched-run-row[data-run-id='6']");
    expect(q(failed, ".sched-status").textContent).toBe("失败");
    expect(q(failed, ".sched-run-when").textContent).toBe("2026-12-03 15:05");
    expect(q(failed, ".sched-catch-up").textContent).toBe("补跑");
    expect(q(failed, ".sched-run-error").textContent).toBe("no cached bars");

    // The conversation link asks the app to show it, the way the tray does.
    fireEvent.click(q(failed, ".sched-open-conversation"));
    expect(mocks.emitOpen).toHaveBeenCalledWith({ conversation_id: "conv-9" });

    // The task link opens its result while the core still lists the task.
    mocks.listTasks.mockResolvedValue(ok([{ task_id: "task-42", tool_name: "screen_stocks", display_name: null, status: "completed" }]));
    mocks.taskResult.mockResolvedValue(ok(null));
    fireEvent.click(q(done, ".sched-open-task"));
    await waitFor(() => expect(q(container, ".task-result[data-task-id='task-42']")).not.toBeNull());
  });

  it("a task no longer listed is said so", async () => {
    mocks.listSchedules.mockResolvedValue(ok([{ ...close, runs: [run({ task_id: "gone-1" })] }]));
    mocks.listTasks.mockResolvedValue(ok([]));
    const { container } = render(<SchedulesPanel onAsk={() => {}} />);
    await waitFor(() => expect(q(container, ".sched-open-task")).not.toBeNull());
    fireEvent.click(q(container, ".sched-open-task"));
    await waitFor(() => expect(q(container, "#sched-task-gone").textContent).toBe("任务 gone-1 的结果已不在任务列表中"));
  });

  it("refreshes when a scheduled run finishes", async () => {
    mocks.listSchedules.mockResolvedValueOnce(ok([close])).mockResolvedValue(ok([{ ...close, runs: [run({ id: 3, occurrence: "2026-12-04 15:05" })] }]));
    const { container } = render(<SchedulesPanel onAsk={() => {}} />);
    await waitFor(() => expect(q(container, ".sched-no-runs")).not.toBeNull());
    await act(async () => mocks.scheduleRan?.());
    await waitFor(() => expect(q(container, ".sched-run-row[data-run-id='3']")).not.toBeNull());
  });

  it("says when the next run is past the bundled calendar; toggles and removes after a confirm", async () => {
    const late = { ...close, next_due: "2027-01-04 15:05", next_due_assumed_trading_day: true };
    mocks.listSchedules.mockResolvedValueOnce(ok([late])).mockResolvedValueOnce(ok([{ ...late, enabled: false }])).mockResolvedValue(ok([]));
    mocks.setScheduleEnabled.mockResolvedValue(ok(null));
    mocks.removeSchedule.mockResolvedValue(ok(null));
    const { container } = render(<SchedulesPanel onAsk={() => {}} />);
    await waitFor(() => expect(q(container, ".sched-assumed")).not.toBeNull());
    expect(q(container, ".sched-assumed").textContent).toBe("已超出内置交易日历：假定工作日为交易日");

    fireEvent.click(q(container, ".sched-enabled"));
    expect(mocks.setScheduleEnabled).toHaveBeenCalledWith("close", false);
    await waitFor(() => expect(q(container, ".sched-item")?.dataset.enabled).toBe("false"));

    fireEvent.click(q(container, ".sched-remove"));
    expect(mocks.removeSchedule).not.toHaveBeenCalled();
    fireEvent.click(q(container, ".sched-remove-confirm"));
    expect(mocks.removeSchedule).toHaveBeenCalledWith("close");
    await waitFor(() => expect(q(container, "#sched-empty")).not.toBeNull());
  });
  it("edits a schedule in the form, its name fixed, and saves it", async () => {
    const moved: ScheduleView = { ...close, when: { type: "at", time: "09:25", days: { type: "trading" } }, next_due: "2026-12-07 09:25" };
    mocks.listSchedules.mockResolvedValueOnce(ok([close])).mockResolvedValue(ok([moved]));
    mocks.updateSchedule.mockResolvedValue(ok(moved));
    const { container } = render(<SchedulesPanel onAsk={() => {}} />);
    await waitFor(() => expect(q(container, ".sched-edit")).not.toBeNull());

    fireEvent.click(q(container, ".sched-edit"));
    const name = q(container, "#sched-name") as HTMLInputElement;
    expect(name.value).toBe("close");
    expect(name.disabled).toBe(true);
    expect((q(container, "#sched-time") as HTMLInputElement).value).toBe("15:05");
    fireEvent.click(q(container, "#sched-preset-pre-open"));
    await act(async () => {
      fireEvent.submit(q(container, "#sched-form"));
    });

    expect(mocks.addSchedule).not.toHaveBeenCalled();
    expect(mocks.updateSchedule).toHaveBeenCalledWith("close", moved.when, close.job);
    await waitFor(() => expect(q(container, ".sched-next").textContent).toBe("2026-12-07 09:25"));
    expect(q(container, "#sched-form-note").textContent).toContain("close");
    expect((q(container, "#sched-name") as HTMLInputElement).disabled).toBe(false);
  });
});
