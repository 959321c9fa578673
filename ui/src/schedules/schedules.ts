// Settings → Schedules, the parts without React: how a rule and a job read in words, and
// what the add form sends. Wording goes through `t` so both languages come from i18n.ts.
import type { CommandError, Days, Job, NewSchedule, RunStatus, ScheduleView, When } from "../bindings";
import type { MessageKey } from "../i18n";

export type Translate = (key: MessageKey, vars?: Record<string, string | number>) => string;

/** Monday = 1 … Sunday = 7, as the backend numbers them. */
export const WEEKDAYS = [1, 2, 3, 4, 5, 6, 7] as const;

const WEEKDAY_KEYS: Record<number, MessageKey> = {
  1: "schedWeekday1",
  2: "schedWeekday2",
  3: "schedWeekday3",
  4: "schedWeekday4",
  5: "schedWeekday5",
  6: "schedWeekday6",
  7: "schedWeekday7",
};

export function weekdayText(day: number, t: Translate): string {
  const key = WEEKDAY_KEYS[day];
  return key ? t(key) : String(day);
}

export function daysText(days: Days, t: Translate): string {
  switch (days.type) {
    case "trading":
      return t("schedDaysTrading");
    case "daily":
      return t("schedDaysDaily");
    case "weekdays":
      return [...days.days]
        .sort((a, b) => a - b)
        .map((d) => weekdayText(d, t))
        .join(t("schedListSeparator"));
  }
}

/** "交易日 15:05" / "Trading days 15:05"; a cron expression as it was written. */
export function whenText(when: When, t: Translate): string {
  if (when.type === "cron") return t("schedWhenCron", { expr: when.expr });
  return t("schedWhenAt", { days: daysText(when.days, t), time: when.time });
}

/** What a schedule does, in a few words. */
export function jobText(job: Job, t: Translate): string {
  if (job.type === "prompt") return t("schedJobPromptText", { text: job.text });
  const r = job.request;
  switch (r.type) {
    case "screen": {
      if (r.as_of) return t("schedJobScreenAsOf", { date: r.as_of });
      const scope: string[] = [];
      if (r.board && r.board !== "all") scope.push(isBoard(r.board) ? t(BOARD_KEYS[r.board]) : r.board);
      if (r.limit) scope.push(t("schedScreenTop", { n: r.limit }));
      return scope.length === 0 ? t("schedJobScreen") : t("schedJobScreenScope", { scope: scope.join(" · ") });
    }
    case "sync_all":
      return t("schedJobSync");
    case "backtest":
      return t("schedJobBacktestText", { start: r.start, end: r.end });
    case "import":
      return t("schedJobImportText", { path: r.path });
    case "alerts":
      return t("schedJobAlerts");
  }
}

const STATUS_KEYS: Record<RunStatus, MessageKey> = {
  running: "schedStatus_running",
  done: "schedStatus_done",
  failed: "schedStatus_failed",
  interrupted: "schedStatus_interrupted",
  cancelled: "schedStatus_cancelled",
  timed_out: "schedStatus_timed_out",
};

export function runStatusText(status: RunStatus, t: Translate): string {
  return t(STATUS_KEYS[status]);
}

/** A backend refusal in words: its kind in the page's language, then what it said. */
export function scheduleErrorText(e: CommandError, t: Translate): string {
  switch (e.kind) {
    case "invalid_input":
      return t("schedErrInvalid", { message: e.message });
    case "not_found":
      return t("schedErrNotFound", { message: e.message });
    default:
      return t("schedErrOther", { message: e.message });
  }
}

export type JobKind = "screen" | "sync" | "backtest" | "alerts" | "prompt";

/** The boards `wyckoff screen --board` takes. */
export const BOARDS = ["all", "main", "chinext", "star", "bse"] as const;
export type Board = (typeof BOARDS)[number];
export const BOARD_KEYS: Record<Board, MessageKey> = {
  all: "schedBoard_all",
  main: "schedBoard_main",
  chinext: "schedBoard_chinext",
  star: "schedBoard_star",
  bse: "schedBoard_bse",
};
function isBoard(b: string): b is Board {
  return (BOARDS as readonly string[]).includes(b);
}
/** The screen's cap on how many stocks it scans. */
const MAX_SCREEN_LIMIT = 3000;
export type DaysKind = Days["type"];

/** The add form as typed. */
export type ScheduleForm = {
  name: string;
  mode: "at" | "cron";
  time: string;
  days: DaysKind;
  weekdays: number[];
  cron: string;
  job: JobKind;
  start: string;
  end: string;
  /** A backtest's holding days and positions per day: not on the form, kept on an edit. */
  holdDays: number;
  topN: number;
  /** A screen's board and how many of the most liquid it scans ("" = all). */
  board: Board;
  limit: string;
  prompt: string;
};

export const EMPTY_FORM: ScheduleForm = {
  name: "",
  mode: "at",
  time: "",
  days: "trading",
  weekdays: [1, 2, 3, 4, 5],
  cron: "",
  job: "screen",
  start: "",
  end: "",
  // The overview's backtest defaults, so a scheduled backtest matches a button-started one.
  holdDays: 10,
  topN: 4,
  board: "all",
  limit: "",
  prompt: "",
};

/** The trader's two fixed points of the day: before the open, after the close. */
export const PRESETS: { id: string; label: MessageKey; time: string }[] = [
  { id: "pre-open", label: "schedPresetPreOpen", time: "09:25" },
  { id: "after-close", label: "schedPresetAfterClose", time: "15:05" },
];

/** A preset sets the time on trading days; the rest of the form stays as typed. */
export function applyPreset(form: ScheduleForm, time: string): ScheduleForm {
  return { ...form, mode: "at", time, days: "trading" };
}

export type FormResult = { ok: true; schedule: NewSchedule } | { ok: false; problem: MessageKey };

/**
 * The form as the backend takes it. Only what the backend cannot word for the form is
 * checked here (an empty field, no weekday ticked); the time, the cron expression and the
 * name's characters are the backend's to judge, so the two never disagree.
 */
export function formToNewSchedule(form: ScheduleForm): FormResult {
  const name = form.name.trim();
  if (name === "") return { ok: false, problem: "schedNameEmpty" };

  let when: When;
  if (form.mode === "cron") {
    const expr = form.cron.trim();
    if (expr === "") return { ok: false, problem: "schedCronEmpty" };
    when = { type: "cron", expr };
  } else {
    const time = form.time.trim();
    if (time === "") return { ok: false, problem: "schedTimeEmpty" };
    let days: Days;
    if (form.days === "weekdays") {
      if (form.weekdays.length === 0) return { ok: false, problem: "schedNoWeekday" };
      days = { type: "weekdays", days: [...form.weekdays].sort((a, b) => a - b) };
    } else {
      days = { type: form.days };
    }
    when = { type: "at", time, days };
  }

  let job: Job;
  switch (form.job) {
    case "screen": {
      const raw = form.limit.trim();
      const limit = raw === "" ? null : Number(raw);
      if (limit !== null && !(/^\d+$/.test(raw) && limit <= MAX_SCREEN_LIMIT)) return { ok: false, problem: "schedScreenLimitBad" };
      // Left out when not chosen, as the CLI stores a screen without them.
      const board = form.board === "all" ? {} : { board: form.board };
      job = { type: "task", request: { type: "screen", as_of: null, ...board, ...(limit === null ? {} : { limit }) } };
      break;
    }
    case "sync":
      job = { type: "task", request: { type: "sync_all" } };
      break;
    case "alerts":
      job = { type: "task", request: { type: "alerts" } };
      break;
    case "backtest": {
      const start = form.start.trim();
      const end = form.end.trim();
      if (start === "" || end === "") return { ok: false, problem: "schedBacktestDates" };
      job = { type: "task", request: { type: "backtest", start, end, hold_days: form.holdDays, top_n: form.topN } };
      break;
    }
    case "prompt": {
      const text = form.prompt.trim();
      if (text === "") return { ok: false, problem: "schedPromptEmpty" };
      job = { type: "prompt", text };
      break;
    }
  }
  return { ok: true, schedule: { name, when, job } };
}

export function toggleWeekday(days: number[], day: number, on: boolean): number[] {
  const rest = days.filter((d) => d !== day);
  return on ? [...rest, day].sort((a, b) => a - b) : rest;
}

/**
 * The form filled with a stored schedule, to edit it; `null` for a job the form cannot
 * show (an import, or a screen as of a fixed date, made elsewhere): editing it here would
 * change what it does.
 */
export function scheduleToForm(s: ScheduleView): ScheduleForm | null {
  const form: ScheduleForm = { ...EMPTY_FORM, name: s.name };
  if (s.when.type === "cron") {
    form.mode = "cron";
    form.cron = s.when.expr;
  } else {
    form.time = s.when.time;
    form.days = s.when.days.type;
    if (s.when.days.type === "weekdays") form.weekdays = [...s.when.days.days].sort((a, b) => a - b);
  }
  if (s.job.type === "prompt") return { ...form, job: "prompt", prompt: s.job.text };
  const r = s.job.request;
  switch (r.type) {
    case "screen":
      // A board the form has no choice for would be lost on save.
      if (r.as_of || (r.board && !isBoard(r.board))) return null;
      return { ...form, job: "screen", board: (r.board ?? "all") as Board, limit: r.limit == null ? "" : String(r.limit) };
    case "sync_all":
      return { ...form, job: "sync" };
    case "backtest":
      return { ...form, job: "backtest", start: r.start, end: r.end, holdDays: r.hold_days, topN: r.top_n };
    case "alerts":
      return { ...form, job: "alerts" };
    case "import":
      return null;
  }
}
