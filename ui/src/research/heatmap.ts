// The research page's model, pure so it is tested without a webview: a sweep's axes and
// rows (the backend's typed summary) as a two-parameter grid of one metric, its colour
// scale, the single run behind a cell, and the progress line of a sweep / walk-forward task.
import type { ResearchRequest, RunParams, SweepRowSummary, SweepSummary, TaskInfo } from "../bindings";

/** The swept parameters, in the grid's order (the first varies slowest). */
export const PARAMS = ["hold_days", "stop_loss_pct", "take_profit_pct", "top_n", "entry_price_mode", "triggers"] as const satisfies readonly (keyof RunParams)[];
export type Param = (typeof PARAMS)[number];

export const METRICS = [
  "total_return_pct",
  "annualized_return_pct",
  "max_drawdown_pct",
  "sharpe",
  "win_rate_pct",
  "profit_factor",
  "trades",
  "turnover",
] as const satisfies readonly (keyof SweepRowSummary["metrics"])[];
export type Metric = (typeof METRICS)[number];

/** The sweep's `best_by` as the metric it names in `metrics`. */
export function metricOfBestBy(bestBy: string | null | undefined): Metric {
  switch (bestBy) {
    case "return":
      return "total_return_pct";
    case "annualized":
      return "annualized_return_pct";
    case "max_drawdown":
      return "max_drawdown_pct";
    case "win_rate":
      return "win_rate_pct";
    case "profit_factor":
      return "profit_factor";
    default:
      return "sharpe";
  }
}

/** The `best_by` name of a metric; `null` for trades and turnover (neither good nor bad). */
export function bestByOf(metric: Metric): string | null {
  const names: Partial<Record<Metric, string>> = {
    total_return_pct: "return",
    annualized_return_pct: "annualized",
    max_drawdown_pct: "max_drawdown",
    sharpe: "sharpe",
    win_rate_pct: "win_rate",
    profit_factor: "profit_factor",
  };
  return names[metric] ?? null;
}

/** Axis sizes and every row's value of `metric`, in grid order (for the engine's best). */
export function metricColumn(report: SweepSummary, metric: Metric): { dims: number[]; values: (number | null)[] } {
  const ax = axes(report);
  return { dims: PARAMS.map((p) => ax[p].length), values: report.rows.map((r) => metricValue(r, metric)) };
}

/** A parameter's value as a label, for display and for a request (triggers joined by +). */
export function valueLabel(v: RunParams[Param]): string {
  return Array.isArray(v) ? v.join("+") : String(v);
}

/** The values of every axis, as labels. */
export function axes(report: SweepSummary): Record<Param, string[]> {
  const g = report.grid;
  return {
    hold_days: g.hold_days.map(valueLabel),
    stop_loss_pct: g.stop_loss_pct.map(valueLabel),
    take_profit_pct: g.take_profit_pct.map(valueLabel),
    top_n: g.top_n.map(valueLabel),
    entry_price_mode: g.entry_price_mode.map(valueLabel),
    triggers: g.triggers.map(valueLabel),
  };
}

/** A combination's parameters, each a label, in the grid's order. */
export function paramLabels(row: RunParams): string[] {
  return PARAMS.map((p) => valueLabel(row[p]));
}

/** The coordinates of row `i` (rows in grid order, the first axis slowest). */
export function rowCoords(dims: number[], i: number): number[] {
  const c = new Array<number>(dims.length).fill(0);
  let k = i;
  for (let a = dims.length - 1; a >= 0; a--) {
    const d = Math.max(1, dims[a]);
    c[a] = k % d;
    k = Math.floor(k / d);
  }
  return c;
}

/** A row's value of `metric`; `null` when the run has none (no Sharpe on a flat curve…). */
export function metricValue(row: SweepRowSummary | null | undefined, metric: Metric): number | null {
  const v = row?.metrics[metric];
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

export type Cell = { row: number; value: number | null };
export type HeatGrid = { xs: string[]; ys: string[]; cells: (Cell | null)[][]; lo: number | null; hi: number | null };

/** `metric` over `x` (columns) and `y` (rows of the map), every other axis at `fixed`'s
 * index. A cell no row fills is `null`; a run without the metric has `value: null`. */
export function heatGrid(report: SweepSummary, x: Param, y: Param, metric: Metric, fixed: Record<Param, number>): HeatGrid {
  const ax = axes(report);
  const dims = PARAMS.map((p) => ax[p].length);
  const xi = PARAMS.indexOf(x);
  const yi = PARAMS.indexOf(y);
  const cells: (Cell | null)[][] = ax[y].map(() => ax[x].map(() => null));
  report.rows.forEach((row, i) => {
    const c = rowCoords(dims, i);
    const others = PARAMS.every((p, a) => a === xi || a === yi || c[a] === (fixed[p] ?? 0));
    if (!others || c[yi] >= cells.length || c[xi] >= (cells[0]?.length ?? 0)) return;
    cells[c[yi]][c[xi]] = { row: i, value: metricValue(row, metric) };
  });
  const values = cells.flat().flatMap((c) => (c && c.value !== null ? [c.value] : []));
  return {
    xs: ax[x],
    ys: ax[y],
    cells,
    lo: values.length ? Math.min(...values) : null,
    hi: values.length ? Math.max(...values) : null,
  };
}

/** The fixed index of every axis: the best row's, else the first value. */
export function bestCoords(report: SweepSummary): Record<Param, number> {
  const ax = axes(report);
  const dims = PARAMS.map((p) => ax[p].length);
  const c = report.best !== null ? rowCoords(dims, report.best) : PARAMS.map(() => 0);
  return Object.fromEntries(PARAMS.map((p, a) => [p, c[a]])) as Record<Param, number>;
}

/** The two axes a map starts on: the first two swept (or the first two axes). */
export function defaultAxes(report: SweepSummary): [Param, Param] {
  const ax = axes(report);
  const swept = PARAMS.filter((p) => ax[p].length > 1);
  const pick = [...swept, ...PARAMS.filter((p) => !swept.includes(p))];
  return [pick[0], pick[1]];
}

/** A cell's colour: red (worst) → amber → green (best) between `lo` and `hi`; grey when
 * the run has no value. The drawdown is a positive size (lower is better, as the engine's
 * best_by ranks it); trades and turnover are neither good nor bad: neutral blue by size. */
export function colour(value: number | null, lo: number | null, hi: number | null, metric: Metric): string {
  if (value === null || lo === null || hi === null) return "var(--muted-bg, #9ca3af55)";
  const up = hi > lo ? (value - lo) / (hi - lo) : 1;
  const t = metric === "max_drawdown_pct" && hi > lo ? 1 - up : up;
  if (metric === "trades" || metric === "turnover") return `hsl(210 70% ${Math.round(85 - 40 * t)}%)`;
  return `hsl(${Math.round(120 * t)} 65% 45%)`;
}

/** The single backtest behind row `i`: the sweep's period and board with that row's values
 * (its result equals the cell's). */
export function cellRequest(report: SweepSummary, i: number): ResearchRequest | null {
  const row: SweepRowSummary | undefined = report.rows[i];
  if (!row) return null;
  const s = (v: number | null) => (v === null ? null : String(v));
  return {
    start: report.grid.start,
    end: report.grid.end,
    board: report.grid.board,
    hold_days: String(row.hold_days),
    stop_loss_pct: s(row.stop_loss_pct),
    take_profit_pct: s(row.take_profit_pct),
    top_n: String(row.top_n),
    entry_price_mode: row.entry_price_mode,
    triggers: valueLabel(row.triggers),
    best_by: null,
    walk_forward: null,
  };
}

export type Progress = { kind: "combinations" | "window" | "days"; done: number; total: number };

/** The typed progress of a sweep / walk-forward task from the tool's detail line. */
export function researchProgress(task: TaskInfo): Progress | null {
  const d = task.progress.detail ?? "";
  let m = /^(\d+)\/(\d+) 个组合/.exec(d);
  if (m) return { kind: "combinations", done: Number(m[1]), total: Number(m[2]) };
  m = /^第 (\d+)\/(\d+) 个窗口/.exec(d);
  if (m) return { kind: "window", done: Number(m[1]), total: Number(m[2]) };
  m = /^(\d+)\/(\d+) 个交易日/.exec(d);
  if (m) return { kind: "days", done: Number(m[1]), total: Number(m[2]) };
  return null;
}
