// The stock page at a minute period: the periods offered, the chart's geometry (candles,
// the daily levels carried over, the daily events on their day's last bar) and the texts
// that say which marks are daily-only. Pure, so it is tested without the app.
import type { MinuteChart, MinuteChartNote, MinutePeriod, MinuteSyncEvent } from "../bindings";

export const MINUTE_PERIODS: MinutePeriod[] = ["60m", "30m", "15m", "5m"];

type Lang = "zh" | "en";

const TEXT = {
  zh: {
    noBars: "还没有缓存 {p} 分钟K线。",
    syncOffer: "同步 {p} K线",
    syncStarted: "正在同步 {code} 的 {p} K线…",
    synced: "{code} {p}：新增 {n} 根K线（来自 {source}）",
    eventsDailyOnly: "日线判定的威科夫事件标在事件当日的最后一根K线上；标有分钟周期的事件是在这些分钟K线上判定的。",
    phasesDailyOnly: "阶段只在日线图上画出。",
    levelsWithoutCommonDay: "没有同一天既有日线收盘又有 15:00 分钟K线，无法把日线的区间、止损和目标价换算到分钟图（分钟K线为不复权价）。",
    unadjusted: "分钟K线为不复权价；日线价位按 {d} 的收盘折算。",
    levelNames: { support: "支撑", resistance: "压力", stop: "止损", target: "目标", cost: "成本" } as Record<string, string>,
    daily: "日线",
    holding: "持仓",
    bars: "{n} 根K线 · {from} – {to}",
  },
  en: {
    noBars: "No {p} bars are cached yet.",
    syncOffer: "Sync {p} bars",
    syncStarted: "Syncing {code}'s {p} bars…",
    synced: "{code} {p}: {n} new bar(s) from {source}",
    eventsDailyOnly: "Daily Wyckoff events mark the last bar of their day; events marked with a minute period were read on these minute bars.",
    phasesDailyOnly: "Phases are drawn on the daily chart only.",
    levelsWithoutCommonDay:
      "No day has both a daily close and a 15:00 minute bar, so the daily range, stop and target cannot be carried onto the minute chart (minute bars are unadjusted).",
    unadjusted: "Minute bars are unadjusted prices; daily levels are carried over by the closes of {d}.",
    levelNames: { support: "support", resistance: "resistance", stop: "stop", target: "target", cost: "cost" } as Record<string, string>,
    daily: "daily",
    holding: "holding",
    bars: "{n} bars · {from} – {to}",
  },
};

function fill(s: string, vars: Record<string, string | number>): string {
  return s.replace(/\{(\w+)\}/g, (m, k: string) => (k in vars ? String(vars[k]) : m));
}

export function minuteText(lang: Lang, key: Exclude<keyof (typeof TEXT)["zh"], "levelNames">, vars: Record<string, string | number> = {}): string {
  return fill(TEXT[lang][key], vars);
}

/** `202412021030` as `2024-12-02 10:30`. */
export function timeLabel(time: number | null): string {
  if (time == null) return "—";
  const s = String(time).padStart(12, "0");
  return `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)} ${s.slice(8, 10)}:${s.slice(10, 12)}`;
}

/** Each note as a sentence; `NoBars` is said by the sync offer instead. */
export function noteTexts(notes: MinuteChartNote[], lang: Lang): { type: string; text: string }[] {
  return notes
    .filter((n) => n.type !== "no_bars")
    .map((n) => {
      const key = n.type === "events_daily_only" ? "eventsDailyOnly" : n.type === "phases_daily_only" ? "phasesDailyOnly" : "levelsWithoutCommonDay";
      return { type: n.type, text: minuteText(lang, key) };
    });
}

export function levelLabel(kind: string, timeframe: string, price: number, lang: Lang): string {
  const name = TEXT[lang].levelNames[kind] ?? kind;
  const tf = timeframe === "holding" ? TEXT[lang].holding : TEXT[lang].daily;
  return `${name} ${price} (${tf})`;
}

export interface Geometry {
  width: number;
  height: number;
  candles: { x: number; w: number; yOpen: number; yClose: number; yHigh: number; yLow: number; up: boolean; time: number }[];
  levels: { y: number; kind: string; price: number; timeframe: string }[];
  marks: { x: number; y: number; label: string; time: number; timeframe: string }[];
}

/** A number the IPC may send as `null` (a non-finite float): `NaN`, drawn nowhere. */
const num = (v: number | null): number => v ?? NaN;

/** Where everything is drawn in a `width` × `height` box; the last `keep` bars at most. */
export function geometry(c: MinuteChart, width: number, height: number, keep = 240): Geometry {
  const [times, open, high, low, close] = [c.times, c.open, c.high, c.low, c.close].map((col) => col.map(num));
  const n = times.length;
  const from = Math.max(0, n - keep);
  const idx = Array.from({ length: n - from }, (_, i) => from + i);
  const prices = idx.flatMap((i) => [high[i], low[i]]).filter(Number.isFinite);
  const levels = c.levels.map((l) => ({ ...l, price: num(l.price) }));
  const inView = levels.filter((l) => Number.isFinite(l.price) && (prices.length === 0 || (l.price >= Math.min(...prices) * 0.8 && l.price <= Math.max(...prices) * 1.2)));
  const all = prices.concat(inView.map((l) => l.price));
  const lo = all.length ? Math.min(...all) : 0;
  const hi = all.length ? Math.max(...all) : 1;
  const pad = (hi - lo || 1) * 0.05;
  const y = (p: number) => height - ((p - (lo - pad)) / (hi - lo + 2 * pad)) * height;
  const step = idx.length ? width / idx.length : width;
  const w = Math.max(1, step * 0.7);
  const candles = idx.map((i, k) => ({
    x: k * step + (step - w) / 2,
    w,
    yOpen: y(open[i]),
    yClose: y(close[i]),
    yHigh: y(high[i]),
    yLow: y(low[i]),
    up: close[i] >= open[i],
    time: times[i],
  }));
  const pos = new Map(idx.map((i, k) => [times[i], k]));
  return {
    width,
    height,
    candles,
    levels: inView.map((l) => ({ y: y(l.price), kind: l.kind, price: l.price, timeframe: l.timeframe })),
    marks: c.marks
      .filter((m) => m.bar_time != null && pos.has(m.bar_time) && m.price != null)
      .map((m) => ({ x: (pos.get(num(m.bar_time)) ?? 0) * step + step / 2, y: y(num(m.price)), label: m.timeframe === "daily" ? m.label : `${m.label} ${m.timeframe}`, time: num(m.bar_time), timeframe: m.timeframe })),
  };
}

/** A sync's progress as a line. */
export function syncLine(e: MinuteSyncEvent, period: MinutePeriod, lang: Lang): string {
  if (e.type === "started") return minuteText(lang, "syncStarted", { code: e.code, p: period });
  const o = e.outcome;
  if (o.status.type === "updated") return minuteText(lang, "synced", { code: o.code, p: o.period, n: o.status.new_bars, source: o.status.source });
  return `${o.code} ${o.period}: ${o.status.error}`;
}
