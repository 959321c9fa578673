// Pure shaping of what `stock_chart` / `watchlist` return into what the chart library and
// the tables draw. Nothing here recomputes the engine's reading: it only reformats it.
import type { ChartEvent, DiagnosisCard, StockChart, WatchlistRow } from "../bindings";

/** `20200616` → `"2020-06-16"` (lightweight-charts business-day strings). */
export function isoDate(d: number): string {
  const s = String(d);
  if (!/^\d{8}$/.test(s)) return s;
  return `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}`;
}

export interface Candle {
  time: string;
  open: number;
  high: number;
  low: number;
  close: number;
}

export interface VolumeBar {
  time: string;
  value: number;
  color: string;
}

export const UP = "#d14343"; // A-share convention: red is up
export const DOWN = "#2e9e5b";

/** f64 columns arrive as `number | null` (a NaN would be null); the engine never sends one. */
const n = (x: number | null | undefined): number => x ?? NaN;

export function candles(c: StockChart): Candle[] {
  const b = c.bars;
  return b.dates.map((d, i) => ({ time: isoDate(d), open: n(b.open[i]), high: n(b.high[i]), low: n(b.low[i]), close: n(b.close[i]) }));
}

export function volumes(c: StockChart): VolumeBar[] {
  const b = c.bars;
  return b.dates.map((d, i) => ({
    time: isoDate(d),
    value: n(b.volume[i]),
    color: n(b.close[i]) >= n(b.open[i]) ? UP : DOWN,
  }));
}

export function maPoints(c: StockChart, window: number): { time: string; value: number }[] {
  const line = c.ma.find((m) => m.window === window);
  if (!line) return [];
  return line.values.map((v, i) => ({ time: isoDate(c.bars.dates[line.start + i]), value: n(v) }));
}

const BULLISH = new Set(["SC", "ST", "Spring", "SOS", "LPS"]);

export interface EventMarker {
  time: string;
  position: "belowBar" | "aboveBar";
  shape: "arrowUp" | "arrowDown";
  color: string;
  text: string;
  id: string;
}

/** Which labels the chart and the events list show: "known" — each label as the engine first
 * placed it, on the close it could (the default, no hindsight); "hindsight" — every schematic
 * in its latest, most developed form. */
export type EventsView = "known" | "hindsight";

/** The chart as drawn in a view: "known" swaps in the labels as known then. */
export function chartInView(c: StockChart, view: EventsView): StockChart {
  return view === "hindsight" ? c : { ...c, reading: { ...c.reading, events: c.reading.known_events } };
}

/** "known on 2019-04-16; removed 2019-05-01" — when the engine could first place the label,
 * and, as known then, when a later bar revised or removed it. */
export function knownNote(e: ChartEvent, lang: "zh" | "en"): string {
  const parts: string[] = [];
  if (e.known_on != null) parts.push(lang === "zh" ? `确认于 ${isoDate(e.known_on)}` : `known on ${isoDate(e.known_on)}`);
  if (e.ended) {
    const on = isoDate(e.ended.on);
    if (e.ended.type === "revised") parts.push(lang === "zh" ? `${on} 修订` : `revised ${on}`);
    else parts.push(lang === "zh" ? `${on} 撤销` : `removed ${on}`);
  }
  return parts.join(lang === "zh" ? "；" : "; ");
}

/** Labels a later bar revised or removed are drawn grey (as known then). */
const SUPERSEDED = "#9ca3af";

/** One marker per labelled event, below the bar for accumulation events (lows), above for
 * distribution ones (highs); several on one weekly/monthly bar stay separate. */
export function eventMarkers(c: StockChart): EventMarker[] {
  return c.reading.events.map((e, i) => {
    const low = BULLISH.has(e.label) || (e.label === "AR" && c.reading.schematic === "distribution");
    return {
      time: isoDate(e.bar_date),
      position: low ? "belowBar" : "aboveBar",
      shape: low ? "arrowUp" : "arrowDown",
      color: e.ended ? SUPERSEDED : low ? "#2f6fd6" : "#c2410c",
      text: e.label,
      id: `event-${i}`,
    };
  });
}

export function signalMarkers(c: StockChart): EventMarker[] {
  return c.signals.map((s, i) => ({
    time: isoDate(s.date),
    position: s.kind === "exit" ? "aboveBar" : "belowBar",
    shape: s.kind === "exit" ? "arrowDown" : "arrowUp",
    color: s.kind === "exit" ? "#b91c1c" : "#15803d",
    text: s.kind === "exit" ? `EXIT ${s.label}` : `BUY ${s.label}`,
    id: `signal-${i}`,
  }));
}

/** Markers must be in time order for the library. */
export function allMarkers(c: StockChart): EventMarker[] {
  return [...eventMarkers(c), ...signalMarkers(c)].sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
}

const PHASE_COLORS: Record<string, string> = {
  A: "rgba(239, 68, 68, 0.10)",
  B: "rgba(234, 179, 8, 0.10)",
  C: "rgba(59, 130, 246, 0.12)",
  D: "rgba(34, 197, 94, 0.12)",
  E: "rgba(168, 85, 247, 0.10)",
};

/** Phase bands as a full-height background histogram: one column per bar inside a band.
 * Bands of successive schematics can overlap; the later band wins the bar, since the
 * library refuses two points at one time. */
export function phaseColumns(c: StockChart): { time: string; value: number; color: string }[] {
  const byDate = new Map<number, string>();
  const bands = [...c.reading.phases].sort((a, b) => a.from - b.from);
  for (const band of bands) {
    for (const d of c.bars.dates) {
      if (d >= band.from && d <= band.to) byDate.set(d, PHASE_COLORS[band.phase] ?? "transparent");
    }
  }
  return [...byDate.entries()].sort((a, b) => a[0] - b[0]).map(([d, color]) => ({ time: isoDate(d), value: 1, color }));
}

export interface Level {
  id: string;
  price: number;
  title: string;
  color: string;
}

export type LevelId = "resistance" | "mid" | "support" | "cost" | "stop" | "target";

/** The range lines and a holding's lines; `title` names each (in the page's language). */
export function levels(c: StockChart, title: (id: LevelId) => string = (id) => id): Level[] {
  const out: Level[] = [];
  const add = (id: LevelId, price: number | null | undefined, color: string) => {
    if (price != null) out.push({ id, price, title: title(id), color });
  };
  const r = c.reading;
  add("resistance", r.resistance, "#c2410c");
  add("mid", r.mid, "#6b7280");
  add("support", r.support, "#2f6fd6");
  const h = c.holding;
  if (h) {
    add("cost", h.cost, "#374151");
    add("stop", h.stop_loss, "#b91c1c");
    add("target", h.target, "#15803d");
  }
  return out;
}

/** What the engine marked on the bar at a chart time — events with why (and, given
 * `hit`, how often that event's tracked signals worked), and signals — for the crosshair
 * legend (the markers' tooltip). */
export function marksAt(c: StockChart, time: string, lang: "zh" | "en", hit?: (label: string) => string | null): string[] {
  const events = c.reading.events
    .filter((e) => isoDate(e.bar_date) === time)
    .map((e) => {
      const note = knownNote(e, lang);
      const rate = hit?.(e.label);
      return `${e.label}: ${lang === "zh" ? e.why_zh : e.why}${note ? ` (${note})` : ""}${rate ? ` · ${rate}` : ""}`;
    });
  const signals = c.signals.filter((s) => isoDate(s.date) === time).map((s) => `${s.kind === "exit" ? "EXIT" : "BUY"} ${s.label}`);
  return [...events, ...signals];
}

/** OHLCV of the bar at a chart time, for the crosshair legend. */
export function barAt(c: StockChart, time: string): { open: number; high: number; low: number; close: number; volume: number } | null {
  const i = c.bars.dates.findIndex((d) => isoDate(d) === time);
  if (i < 0) return null;
  const b = c.bars;
  return { open: n(b.open[i]), high: n(b.high[i]), low: n(b.low[i]), close: n(b.close[i]), volume: n(b.volume[i]) };
}

export type SortKey = "code" | "last" | "change_pct" | "health" | "stage";

/** Watchlist rows sorted by a column; rows without the value always go last. */
export function sortRows(rows: WatchlistRow[], key: SortKey, asc: boolean): WatchlistRow[] {
  const val = (r: WatchlistRow): string | number | null => r[key] ?? null;
  return [...rows].sort((a, b) => {
    const x = val(a);
    const y = val(b);
    if (x === null && y === null) return 0;
    if (x === null) return 1;
    if (y === null) return -1;
    const cmp = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return asc ? cmp : -cmp;
  });
}

/** The message the "ask the agent" button prefills. */
export function askText(c: StockChart, lang: "zh" | "en"): string {
  const name = c.name ?? "";
  return lang === "zh"
    ? `请用威科夫方法分析 ${c.code} ${name}：当前处于什么阶段，有哪些关键事件，接下来该怎么做？`
    : `Analyse ${c.code} ${name} with the Wyckoff method: what phase is it in, which key events matter, and what next?`;
}

/** A diagnosis card that says nothing, for a chart that is no stock's (the warm-up). */
export function blankDiagnosis(code: string): DiagnosisCard {
  return {
    code,
    name: "",
    as_of: null,
    health: "",
    health_reasons: [],
    cost: null,
    candidate_lane: null,
    candidate_entry_type: null,
    exit_signal: null,
    stop_loss_price: null,
    targets: { conservative: null, aggressive: null, candidates: [] },
    diagnosis_brief: { status: "", label: "", headline: "", strengths: [], risks: [], direct_buy_allowed: false, next_step: "" },
  };
}

/** A flat chart the size of a long daily history: `n` bars, the four MA lines, a few
 * events, a signal, three phase bands and the range levels, so that the chart warm-up runs
 * every drawing path a real stock page does. Never shown; its figures are not market data. */
export function warmUpChart(n = 5_000): StockChart {
  const dates: number[] = [];
  for (let d = new Date(Date.UTC(2005, 0, 3)); dates.length < n; d.setUTCDate(d.getUTCDate() + 1)) {
    if (d.getUTCDay() === 0 || d.getUTCDay() === 6) continue;
    dates.push(d.getUTCFullYear() * 10_000 + (d.getUTCMonth() + 1) * 100 + d.getUTCDate());
  }
  const flat = dates.map(() => 1);
  const event = (label: string, i: number) => ({ label, date: dates[i], bar_date: dates[i], price: 1, why: "", why_zh: "", known_on: dates[i], ended: null });
  return {
    code: "warm-up",
    name: null,
    period: "day",
    bars: { dates, open: flat, high: flat, low: flat, close: flat, volume: flat },
    ma: [5, 20, 50, 200].map((window) => ({ window, start: 0, values: flat })),
    reading: {
      schematic: "accumulation",
      phase: "C",
      support: 1,
      resistance: 1,
      mid: 1,
      range_known_on: dates[n - 200],
      events: ["SC", "AR", "ST", "Spring", "SOS"].map((label, k) => event(label, n - 200 + k * 30)),
      known_events: ["SC", "AR", "ST", "Spring", "SOS"].map((label, k) => event(label, n - 200 + k * 30)),
      phases: ["A", "B", "C"].map((phase, k) => ({ phase, from: dates[n - 300 + k * 100], to: dates[n - 201 + k * 100], known_on: dates[n - 300 + k * 100] })),
    },
    signals: [{ kind: "trigger", date: dates[n - 1], label: "warm-up" }],
    holding: null,
    diagnosis: blankDiagnosis("warm-up"),
    source: null,
    as_of: null,
    data_status: "unavailable",
    stale: false,
    notes: [],
  };
}
