// The background-task panel's logic, pure so it is tested without a webview: the task
// list as change events arrive, elapsed time, and the screen result's sortable rows.
import type { Language, TaskInfo, Value } from "../bindings";
import { taskText } from "./text";
import { researchProgress } from "../research/heatmap";
import { researchText } from "../research/text";

/** Applies one change (submitted, progress, finished): newest first, one row per task. */
export function upsertTask(tasks: TaskInfo[], task: TaskInfo): TaskInfo[] {
  const rest = tasks.filter((t) => t.task_id !== task.task_id);
  const merged = [task, ...rest];
  return merged.sort((a, b) => (a.started_at < b.started_at ? 1 : a.started_at > b.started_at ? -1 : 0));
}

export function runningCount(tasks: TaskInfo[]): number {
  return tasks.filter((t) => t.status === "running").length;
}

/** Tasks waiting for a slot (the backend runs at most three at once). */
export function queuedCount(tasks: TaskInfo[]): number {
  return tasks.filter((t) => t.status === "queued").length;
}

/** Running or queued: it can still be cancelled and its clock still ticks. */
export function isActive(task: TaskInfo): boolean {
  return task.status === "running" || task.status === "queued";
}

/** Background tasks the backend runs at once (agent `MAX_RUNNING_TASKS`). */
export const MAX_RUNNING_TASKS = 3;

/** The line under an active task's name, in the page's language: why a queued task waits,
 * a typed step (a screen's funnel layer with its counts) worded here, else the backend's
 * stage and detail as sent. */
export function progressLine(task: TaskInfo, lang: Language): string {
  if (task.status === "queued") return taskText(lang, "queuedWhy", { n: MAX_RUNNING_TASKS });
  const step = task.progress.step;
  if (step?.kind === "screen_layer" && step.layer >= 1 && step.layer <= 5) {
    const name = taskText(lang, `layer${step.layer}` as "layer1");
    return taskText(lang, "screenLayer", { layer: step.layer, name, input: step.input, passed: step.passed });
  }
  // A sweep's combinations and a walk-forward's windows, worded here (the tool sends Chinese).
  const research = task.tool_name === "run_backtest" ? researchProgress(task) : null;
  if (research) {
    const key = research.kind === "combinations" ? "progressCombinations" : research.kind === "window" ? "progressWindow" : "progressDays";
    return researchText(lang)(key, { done: research.done, total: research.total });
  }
  return [task.progress.stage, task.progress.detail ?? ""].filter((s) => s !== "").join(" ");
}

/** `m:ss` (or `h:mm:ss`) from `started` to `finished` or `now`. */
export function elapsed(started: string, finished: string | null | undefined, now: number): string {
  const from = Date.parse(started);
  const to = finished ? Date.parse(finished) : now;
  if (Number.isNaN(from) || Number.isNaN(to)) return "";
  const total = Math.max(0, Math.floor((to - from) / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const mmss = `${h > 0 ? String(m).padStart(2, "0") : m}:${String(s).padStart(2, "0")}`;
  return h > 0 ? `${h}:${mmss}` : mmss;
}

/** Percent for a determinate bar; `null` when the task cannot tell (indeterminate). */
export function percent(fraction: number | null | undefined): number | null {
  if (fraction === null || fraction === undefined || Number.isNaN(fraction)) return null;
  return Math.round(Math.min(1, Math.max(0, fraction)) * 100);
}

export type ScreenRow = {
  code: string;
  name: string;
  channel: string;
  triggers: string;
  score: number | null;
  stage: string;
  last_close: number | null;
  bars_as_of: string;
  /** The risk rules' suggested shares (board lots); null when none was worked out. */
  suggested_shares: number | null;
  /** The suggestion's loss at its stop, fen, and as a percent of equity. */
  suggested_risk_fen: number | null;
  suggested_risk_pct: number | null;
  /** What bound the size (caps), then the account limits the buy would break. */
  suggested_bound: string[];
  suggested_breaches: string[];
  /** Why there is no size (no account, no stop…), or why no lot fits. */
  suggested_why: string;
  /** L4's weekly context: `up`, `down`, `sideways`, or "" when too few weeks were read. */
  weekly_trend: string;
  /** L4's 60-minute check: `confirmed`, `not_confirmed` or `no_minute_data` ("" from an older screen). */
  intraday_60m: string;
  /** What each timeframe said (daily trigger, weekly, 60-minute), each line naming its timeframe. */
  timeframe_lines: TimeframeLine[];
};

export type TimeframeLine = { timeframe: string; zh: string; en: string };

const TREND: Record<string, [string, string]> = {
  up: ["上升", "up"],
  down: ["下降", "down"],
  sideways: ["横盘", "sideways"],
};
const CHECK: Record<string, [string, string]> = {
  confirmed: ["确认", "confirmed"],
  not_confirmed: ["未确认", "not confirmed"],
  no_minute_data: ["无分钟数据", "no minute data"],
};

/** A candidate's timeframes in a cell: the weekly trend and the 60-minute check, each named
 *  by its timeframe; "—" for a screen saved before L4 read them. */
export function timeframesText(row: Pick<ScreenRow, "weekly_trend" | "intraday_60m" | "timeframe_lines">, lang: string): string {
  const en = lang === "en" ? 1 : 0;
  if (!row.timeframe_lines.length && !row.intraday_60m) return "—";
  const weekly = row.weekly_trend ? (TREND[row.weekly_trend]?.[en] ?? row.weekly_trend) : en ? "too few weeks" : "不足周数";
  const check = row.intraday_60m ? (CHECK[row.intraday_60m]?.[en] ?? row.intraday_60m) : "—";
  return en ? `weekly ${weekly} · 60m ${check}` : `周线${weekly} · 60分钟${check}`;
}

/** What "ask the agent" prefills for a screen candidate, with the figures it was picked on. */
export function askAboutCandidate(row: Pick<ScreenRow, "code" | "name" | "triggers" | "bars_as_of">, lang: string): string {
  return lang === "en"
    ? `Analyse ${row.code} ${row.name} (screen candidate: ${row.triggers}, bars as of ${row.bars_as_of})`
    : `分析 ${row.code} ${row.name}（筛选候选：${row.triggers}，数据截至 ${row.bars_as_of}）`;
}

type Obj = Record<string, Value>;
const obj = (v: Value | undefined): Obj | null =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : null;
const str = (v: Value | undefined): string => (typeof v === "string" ? v : v === null || v === undefined ? "" : String(v));
const num = (v: Value | undefined): number | null => (typeof v === "number" ? v : null);

/** A candidate's `suggested_size` (the approval's own sizing), tolerant of its absence. */
function suggestedOf(z: Obj | null) {
  const sizing = obj(z?.sizing);
  const strings = (v: Value | undefined) => (Array.isArray(v) ? (v as Value[]).map((x) => str(obj(x)?.type ?? x)) : []);
  return {
    suggested_shares: num(sizing?.shares),
    suggested_risk_fen: num(sizing?.risk_fen),
    suggested_risk_pct: num(sizing?.risk_pct),
    suggested_bound: strings(sizing?.bound),
    suggested_breaches: strings(z?.breaches),
    suggested_why: str(z?.unavailable ?? sizing?.why_none ?? ""),
  };
}

const BREACH_ZH: Record<string, string> = {
  heat: "总风险",
  industry: "行业占比",
  positions: "持仓数",
  drawdown: "回撤刹车",
  stop_outs: "止损刹车",
};

/** A candidate's suggested size in a cell: shares and risk, then the limits it would break. */
export function suggestedText(row: ReturnType<typeof suggestedOf>, lang: string): string {
  const en = lang === "en";
  if (row.suggested_shares === null) return row.suggested_why ? (en ? "none" : "无") : "—";
  const breaks = row.suggested_breaches.map((b) => (en ? b : (BREACH_ZH[b] ?? b)));
  // The engine's percent unrounded (0.5354): shown to the hundredth.
  const pct = Math.round((row.suggested_risk_pct ?? 0) * 100) / 100;
  const size =
    row.suggested_shares === 0
      ? en
        ? "no lot fits"
        : "不足一手"
      : en
        ? `${row.suggested_shares} sh · risk ¥${((row.suggested_risk_fen ?? 0) / 100).toFixed(0)} (${pct}%)`
        : `${row.suggested_shares} 股 · 风险 ¥${((row.suggested_risk_fen ?? 0) / 100).toFixed(0)}（${pct}%）`;
  return breaks.length ? `${size} · ${en ? "breaks" : "超限"}: ${breaks.join(en ? ", " : "、")}` : size;
}

/** The candidates of a `screen_stocks` result, tolerant of missing fields. */
export function screenRows(result: Value | null): ScreenRow[] {
  const r = obj(result ?? undefined);
  const cands = r && Array.isArray(r.candidates) ? (r.candidates as Value[]) : [];
  return cands.map((c) => {
    const o = obj(c) ?? {};
    const triggers = Array.isArray(o.triggers)
      ? (o.triggers as Value[]).map((t) => str(obj(t)?.kind ?? t)).join("+")
      : "";
    return {
      code: str(o.code),
      name: str(o.name),
      channel: str(o.channel),
      triggers,
      score: num(o.score),
      stage: str(o.stage),
      last_close: num(o.last_close),
      bars_as_of: str(o.bars_as_of),
      ...suggestedOf(obj(o.suggested_size)),
      weekly_trend: str(obj(o.weekly)?.trend),
      intraday_60m: str(obj(o.intraday_60m)?.type),
      timeframe_lines: Array.isArray(o.timeframes)
        ? (o.timeframes as Value[]).map((l) => obj(l)).filter((l): l is Obj => l !== null).map((l) => ({ timeframe: str(l.timeframe), zh: str(l.zh), en: str(l.en) }))
        : [],
    };
  });
}

export type SortKey = keyof ScreenRow;

/** Rows sorted by `key`; numbers descending first, text ascending first. */
export function sortRows(rows: ScreenRow[], key: SortKey, descending: boolean): ScreenRow[] {
  const sorted = [...rows].sort((a, b) => {
    const x = a[key];
    const y = b[key];
    if (x === y) return a.code < b.code ? -1 : 1;
    if (x === null) return 1;
    if (y === null) return -1;
    const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y), "zh");
    return descending ? -c : c;
  });
  return sorted;
}

export type EquityPoint = { date: string; equity: number };

/** A backtest result's daily equity curve. */
export function equityCurve(result: Value | null): EquityPoint[] {
  const r = obj(result ?? undefined);
  const curve = r && Array.isArray(r.equity_curve) ? (r.equity_curve as Value[]) : [];
  return curve
    .map((p) => obj(p))
    .filter((p): p is Obj => p !== null && typeof p.equity === "number")
    .map((p) => ({ date: str(p.date), equity: p.equity as number }));
}

/** SVG polyline points for `curve` in a `width` × `height` box (empty for < 2 points). */
export function polyline(curve: EquityPoint[], width: number, height: number): string {
  if (curve.length < 2) return "";
  const values = curve.map((p) => p.equity);
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const span = hi - lo || 1;
  return curve
    .map((p, i) => {
      const x = (i / (curve.length - 1)) * width;
      const y = height - ((p.equity - lo) / span) * height;
      return `${x.toFixed(1)},${y.toFixed(1)}`;
    })
    .join(" ");
}

/** The Markdown of a report or decision result, if it has one. */
export function reportText(result: Value | null): string | null {
  const r = obj(result ?? undefined);
  if (!r) return null;
  const text = r.report_text ?? r.decision_text;
  return typeof text === "string" ? text : null;
}

export type HoldingAction = "keep" | "trim" | "exit" | "add";
/** A buy's suggested size as the decision view shows it: the screen's cells, the stop and
 *  the caps that bound it. */
export type DecisionSize = ReturnType<typeof suggestedOf> & { suggested_stop_e6: number | null; suggested_stop_from: string };
export type HoldingDecision = { code: string; name: string; action: HoldingAction; reason: string; size: DecisionSize | null };
/** A candidate the decision reviewed, with the size the rules give a buy of it. */
export type DecisionCandidate = { code: string; name: string; latest_close: number | null; size: DecisionSize | null };

/** A `suggested_size` with its stop, or null when the result carries none. */
function decisionSize(v: Value | undefined): DecisionSize | null {
  const z = obj(v);
  if (z === null) return null;
  const sizing = obj(z.sizing);
  return { ...suggestedOf(z), suggested_stop_e6: num(sizing?.stop_e6), suggested_stop_from: str(sizing?.stop_from ?? "") };
}

/** The stop of a suggested size and the caps that bound it, in one line. */
export function sizeDetail(size: DecisionSize, lang: string): string {
  if (size.suggested_stop_e6 === null) return "";
  const en = lang === "en";
  const stop = `${en ? "stop" : "止损"} ${(size.suggested_stop_e6 / 1e6).toFixed(2)}${size.suggested_stop_from ? ` (${size.suggested_stop_from})` : ""}`;
  return size.suggested_bound.length ? `${stop} · ${en ? "bound by" : "受限于"} ${size.suggested_bound.join("；")}` : stop;
}

/** The reviewed candidates of a `generate_strategy_decision` result, with their sizes. */
export function decisionCandidates(result: Value | null): DecisionCandidate[] {
  const r = obj(result ?? undefined);
  const rows = r && Array.isArray(r.candidate_facts) ? (r.candidate_facts as Value[]) : [];
  return rows
    .map((v) => obj(v))
    .filter((o): o is Obj => o !== null && str(o.code) !== "")
    .map((o) => ({ code: str(o.code), name: str(o.name), latest_close: num(o.latest_close), size: decisionSize(o.suggested_size) }));
}
/** Why part of the model's structured decision was rejected (see the backend's DecisionProblem). */
export type DecisionProblem =
  | { type: "no_decision_block" }
  | { type: "malformed"; reason: string }
  | { type: "unknown_action"; code: string; action: string }
  | { type: "not_a_holding"; code: string }
  | { type: "duplicate"; code: string }
  | { type: "missing_holding"; code: string };

const ACTIONS: readonly string[] = ["keep", "trim", "exit", "add"];

/** The checked keep/trim/exit/add per holding of a `generate_strategy_decision` result. */
export function holdingDecisions(result: Value | null): HoldingDecision[] {
  const r = obj(result ?? undefined);
  const rows = r && Array.isArray(r.holding_decisions) ? (r.holding_decisions as Value[]) : [];
  return rows
    .map((v) => obj(v))
    .filter((o): o is Obj => o !== null && ACTIONS.includes(str(o.action)) && str(o.code) !== "")
    .map((o) => ({ code: str(o.code), name: str(o.name), action: str(o.action) as HoldingAction, reason: str(o.reason), size: decisionSize(o.suggested_size) }));
}

/** The problems the backend found in the model's structured decision. */
export function decisionProblems(result: Value | null): DecisionProblem[] {
  const r = obj(result ?? undefined);
  const rows = r && Array.isArray(r.decision_problems) ? (r.decision_problems as Value[]) : [];
  return rows.map((v) => obj(v)).filter((o): o is Obj => o !== null && typeof o.type === "string") as unknown as DecisionProblem[];
}

/** A holding action in the app's language. */
export function actionLabel(action: HoldingAction, lang: Language): string {
  const key = ({ keep: "actionKeep", trim: "actionTrim", exit: "actionExit", add: "actionAdd" } as const)[action];
  return taskText(lang, key);
}

/** One problem of the structured decision, worded for the user. */
export function decisionProblemText(p: DecisionProblem, lang: Language): string {
  switch (p.type) {
    case "no_decision_block":
      return taskText(lang, "problemNoBlock");
    case "malformed":
      return taskText(lang, "problemMalformed", { reason: p.reason });
    case "unknown_action":
      return taskText(lang, "problemUnknownAction", { code: p.code, action: p.action });
    case "not_a_holding":
      return taskText(lang, "problemNotAHolding", { code: p.code });
    case "duplicate":
      return taskText(lang, "problemDuplicate", { code: p.code });
    case "missing_holding":
      return taskText(lang, "problemMissing", { code: p.code });
  }
}
