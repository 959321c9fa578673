import { describe, expect, it } from "vitest";
import { translate, type MessageKey } from "../i18n";
import type { CommandError, Job, Language, ScheduleView, When } from "../bindings";
import { EMPTY_FORM, applyPreset, formToNewSchedule, jobText, scheduleToForm, runStatusText, scheduleErrorText, toggleWeekday, whenText, type ScheduleForm } from "./schedules";

const tr = (lang: Language) => (k: MessageKey, v?: Record<string, string | number>) => translate(lang, k, v);
const zh = tr("zh");
const en = tr("en");

describe("a schedule's rule in words", () => {
  const cases: [When, string, string][] = [
    [{ type: "at", time: "15:05", days: { type: "trading" } }, "交易日 15:05", "Trading days 15:05"],
    [{ type: "at", time: "09:25", days: { type: "daily" } }, "每天 09:25", "Every day 09:25"],
    [{ type: "at", time: "20:00", days: { type: "weekdays", days: [5, 1, 3] } }, "周一、周三、周五 20:00", "Mon, Wed, Fri 20:00"],
    [{ type: "cron", expr: "*/30 9-15 * * 1-5" }, "Cron */30 9-15 * * 1-5", "Cron */30 9-15 * * 1-5"],
  ];
  it.each(cases)("%j", (when, inZh, inEn) => {
    expect(whenText(when, zh)).toBe(inZh);
    expect(whenText(when, en)).toBe(inEn);
  });
});

describe("a schedule's job in words", () => {
  const cases: [Job, string, string][] = [
    [{ type: "task", request: { type: "screen", as_of: null } }, "全市场选股", "Screen the market"],
    [{ type: "task", request: { type: "sync_all" } }, "同步全部行情", "Sync all market data"],
    [{ type: "task", request: { type: "backtest", start: "2024-01-02", end: "2024-06-28", hold_days: 10, top_n: 4 } }, "回测 2024-01-02 至 2024-06-28", "Backtest 2024-01-02 to 2024-06-28"],
    [{ type: "prompt", text: "/checkup" }, "提示词：/checkup", "Prompt: /checkup"],
    [{ type: "task", request: { type: "alerts" } }, "检查提醒", "Check alerts"],
    [{ type: "task", request: { type: "screen", as_of: null, board: "chinext", limit: 300 } }, "选股（创业板 · 流动性前 300 只）", "Screen (ChiNext · the 300 most liquid)"],
    [{ type: "task", request: { type: "screen", as_of: null, board: "all", limit: 0 } }, "全市场选股", "Screen the market"],
  ];
  it.each(cases)("%j", (job, inZh, inEn) => {
    expect(jobText(job, zh)).toBe(inZh);
    expect(jobText(job, en)).toBe(inEn);
  });
});

describe("statuses and backend errors in words", () => {
  it("words each status in both languages", () => {
    expect(runStatusText("done", zh)).toBe("完成");
    expect(runStatusText("interrupted", en)).toBe("interrupted");
    expect(runStatusText("timed_out", zh)).toBe("超时");
    expect(runStatusText("cancelled", en)).toBe("cancelled");
  });
  it("says the kind of refusal, then the backend's reason", () => {
    const e: CommandError = { kind: "invalid_input", message: "bad cron expression '61 * * * *'", code: null };
    expect(scheduleErrorText(e, zh)).toBe("未添加：bad cron expression '61 * * * *'");
    expect(scheduleErrorText({ kind: "not_found", message: "no schedule named 'x'", code: null }, en)).toBe("Not found: no schedule named 'x'");
    expect(scheduleErrorText({ kind: "internal", message: "disk full", code: null }, en)).toBe("Something went wrong: disk full");
  });
});

describe("the add form → NewSchedule", () => {
  const form = (patch: Partial<ScheduleForm>): ScheduleForm => ({ ...EMPTY_FORM, ...patch });

  it("the after-close preset is 15:05 on trading days, the rest kept", () => {
    const f = applyPreset(form({ name: "close", mode: "cron", cron: "x", days: "daily", job: "sync" }), "15:05");
    expect(formToNewSchedule(f)).toEqual({
      ok: true,
      schedule: { name: "close", when: { type: "at", time: "15:05", days: { type: "trading" } }, job: { type: "task", request: { type: "sync_all" } } },
    });
  });

  it("an alerts check after the close", () => {
    expect(formToNewSchedule(applyPreset(form({ name: "close-alerts", job: "alerts" }), "15:05"))).toEqual({
      ok: true,
      schedule: { name: "close-alerts", when: { type: "at", time: "15:05", days: { type: "trading" } }, job: { type: "task", request: { type: "alerts" } } },
    });
  });

  it("a screen before the open, name trimmed", () => {
    expect(formToNewSchedule(applyPreset(form({ name: "  pre_open " }), "09:25"))).toEqual({
      ok: true,
      schedule: { name: "pre_open", when: { type: "at", time: "09:25", days: { type: "trading" } }, job: { type: "task", request: { type: "screen", as_of: null } } },
    });
  });

  it("a screen's board and limit, left out when not chosen; a bad limit is refused", () => {
    const r = formToNewSchedule(form({ name: "s", time: "15:05", board: "star", limit: " 300 " }));
    expect(r.ok && r.schedule.job).toEqual({ type: "task", request: { type: "screen", as_of: null, board: "star", limit: 300 } });
    const all = formToNewSchedule(form({ name: "s", time: "15:05", board: "all", limit: "0" }));
    expect(all.ok && all.schedule.job).toEqual({ type: "task", request: { type: "screen", as_of: null, limit: 0 } });
    for (const limit of ["-1", "3001", "1.5", "abc"]) {
      expect(formToNewSchedule(form({ name: "s", time: "15:05", limit }))).toEqual({ ok: false, problem: "schedScreenLimitBad" });
    }
  });

  it("chosen weekdays go sorted; none chosen is refused", () => {
    const r = formToNewSchedule(form({ name: "w", time: "20:00", days: "weekdays", weekdays: [5, 1] }));
    expect(r.ok && r.schedule.when).toEqual({ type: "at", time: "20:00", days: { type: "weekdays", days: [1, 5] } });
    expect(formToNewSchedule(form({ name: "w", time: "20:00", days: "weekdays", weekdays: [] }))).toEqual({ ok: false, problem: "schedNoWeekday" });
  });

  it("a cron expression is sent as typed (trimmed), for the backend to judge", () => {
    const r = formToNewSchedule(form({ name: "c", mode: "cron", cron: " 61 * * * * " }));
    expect(r.ok && r.schedule.when).toEqual({ type: "cron", expr: "61 * * * *" });
  });

  it("a backtest carries its dates and the overview's defaults", () => {
    const r = formToNewSchedule(form({ name: "bt", time: "16:00", job: "backtest", start: "2024-01-02", end: "2024-06-28" }));
    expect(r.ok && r.schedule.job).toEqual({ type: "task", request: { type: "backtest", start: "2024-01-02", end: "2024-06-28", hold_days: 10, top_n: 4 } });
  });

  it("a prompt or /skill", () => {
    const r = formToNewSchedule(form({ name: "p", time: "16:00", job: "prompt", prompt: " /checkup " }));
    expect(r.ok && r.schedule.job).toEqual({ type: "prompt", text: "/checkup" });
  });

  it("says what is missing", () => {
    expect(formToNewSchedule(form({ time: "15:05" }))).toEqual({ ok: false, problem: "schedNameEmpty" });
    expect(formToNewSchedule(form({ name: "a" }))).toEqual({ ok: false, problem: "schedTimeEmpty" });
    expect(formToNewSchedule(form({ name: "a", mode: "cron" }))).toEqual({ ok: false, problem: "schedCronEmpty" });
    expect(formToNewSchedule(form({ name: "a", time: "1", job: "backtest", start: "2024-01-02" }))).toEqual({ ok: false, problem: "schedBacktestDates" });
    expect(formToNewSchedule(form({ name: "a", time: "1", job: "prompt", prompt: "  " }))).toEqual({ ok: false, problem: "schedPromptEmpty" });
  });

  it("toggles a weekday", () => {
    expect(toggleWeekday([1, 5], 3, true)).toEqual([1, 3, 5]);
    expect(toggleWeekday([1, 3, 5], 3, false)).toEqual([1, 5]);
  });
});

describe("editing a stored schedule", () => {
  const stored = (when: When, job: Job): ScheduleView => ({
    name: "s",
    when,
    job,
    enabled: true,
    next_due: null,
    next_due_assumed_trading_day: false,
    runs: [],
  });
  const cases: [When, Job][] = [
    [{ type: "at", time: "15:05", days: { type: "trading" } }, { type: "task", request: { type: "screen", as_of: null } }],
    [{ type: "at", time: "20:00", days: { type: "weekdays", days: [1, 5] } }, { type: "task", request: { type: "sync_all" } }],
    [{ type: "cron", expr: "5 15 * * 1-5" }, { type: "prompt", text: "/checkup" }],
    [{ type: "at", time: "15:10", days: { type: "trading" } }, { type: "task", request: { type: "alerts" } }],
    // Made by `wyckoff schedule add --job screen --board main --limit 300`: an edit keeps them.
    [{ type: "at", time: "15:05", days: { type: "trading" } }, { type: "task", request: { type: "screen", as_of: null, board: "main", limit: 300 } }],
    // Made by `wyckoff schedule add` with its own top-n: an edit keeps it.
    [{ type: "at", time: "16:00", days: { type: "daily" } }, { type: "task", request: { type: "backtest", start: "2024-01-02", end: "2024-06-28", hold_days: 20, top_n: 5 } }],
  ];
  it.each(cases)("fills the form so saving it unchanged stores the same: %j", (when, job) => {
    const form = scheduleToForm(stored(when, job));
    expect(form).not.toBeNull();
    expect(formToNewSchedule(form as ScheduleForm)).toEqual({ ok: true, schedule: { name: "s", when, job } });
  });
  it("refuses what the form cannot show", () => {
    expect(scheduleToForm(stored(cases[0][0], { type: "task", request: { type: "screen", as_of: "2024-06-28" } }))).toBeNull();
    expect(scheduleToForm(stored(cases[0][0], { type: "task", request: { type: "import", path: "/tmp/x.csv" } }))).toBeNull();
    expect(scheduleToForm(stored(cases[0][0], { type: "task", request: { type: "screen", as_of: null, board: "hk" } }))).toBeNull();
  });
});
