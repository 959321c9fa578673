// The review page's model: every tracked screen signal as a row with its
// figures 1–20 trading days on, pending marked, each opening the stock at a date.
import type { GroupBy, Outcome, TrackedCandidate, TrackedScreen } from "../bindings";
import { localTexts } from "../i18n";

const zh = {
  nav: "信号复盘",
  title: "信号复盘：跟踪的筛选信号",
  lead: "每次保存的筛选（窗口、CLI、Agent、定时任务、回填）的候选，从缓存的 K 线看其后 1–20 个交易日的扣费收益（次日开盘买入，买入日之后第 N 个交易日收盘卖出；T+1，跌停收盘顺延到下一个交易日）。点一行在个股页打开信号当天；点一个收益打开它的卖出日。",
  empty: "尚无跟踪的信号：运行一次筛选，或 wyckoff track backfill。",
  day: "信号日",
  stock: "股票",
  triggers: "触发",
  regime: "水温",
  pending: "待定 {n}/{h}",
  noEntry: "未买入（涨停或停牌）",
  more: "显示更多（还有 {n} 个）",
  loading: "加载中…",
  signals: "{n} 个信号",
  counted: "{what} · {h}日：计入命中率的 {n} 个信号，其中 {hits} 个扣费后盈利",
  countedPending: "{what} · {h}日：{n} 个信号还在等 K 线",
  showAll: "显示全部信号",
  pickCell: "列出这个格子计入的信号",
  all: "全部信号",
};
const en: typeof zh = {
  nav: "Signal review",
  title: "Signal review: tracked screen signals",
  lead: "Candidates of every saved screen (window, CLI, agent, schedules, backfill), followed from the cached bars 1–20 trading days on: net return after fees, bought at the next trading day's open and sold at the close N trading days after that (T+1; a limit-down close waits for the next). Click a row to open the stock at the signal day; click a return to open its exit day.",
  empty: "No tracked signals yet: run a screen, or wyckoff track backfill.",
  day: "Signal day",
  stock: "Stock",
  triggers: "Triggers",
  regime: "Regime",
  pending: "pending {n}/{h}",
  noEntry: "not bought (limit-up or suspended)",
  more: "Show more ({n} left)",
  loading: "Loading…",
  signals: "{n} signals",
  counted: "{what} · {h}d: the {n} signals this hit rate counts, {hits} of them up after fees",
  countedPending: "{what} · {h}d: {n} signals still waiting for their bars",
  showAll: "Show all signals",
  pickCell: "List the signals this cell counts",
  all: "All signals",
};
export const reviewText = localTexts(zh, en);

export interface Cell {
  text: string;
  /** The bar the figure came from (its exit day), if any. */
  at: number | null;
  status: Outcome["status"];
}

export interface SignalRow {
  key: string;
  /** YYYYMMDD of the screen day. */
  day: number;
  code: string;
  name: string;
  triggers: string;
  regime: string;
  cells: Cell[];
}

function pct(x: number | null): string {
  if (x == null) return "—";
  return `${x > 0 ? "+" : ""}${x.toFixed(2)}%`;
}

export function outcomeCell(o: Outcome, lang: string): Cell {
  const t = reviewText(lang);
  switch (o.status) {
    case "pending":
      return { text: t("pending", { n: o.bars_after, h: o.horizon }), at: null, status: o.status };
    case "no_entry":
      return { text: t("noEntry"), at: o.entry_date, status: o.status };
    case "done":
      return { text: pct(o.net_return_pct), at: o.exit_date, status: o.status };
  }
}

/** Newest screen first, candidates in their screen's order. */
export function signalRows(screens: TrackedScreen[], lang: string): SignalRow[] {
  const out: SignalRow[] = [];
  for (const s of [...screens].reverse()) {
    const day = Number(s.as_of.replaceAll("-", ""));
    for (const c of s.candidates) {
      out.push({
        key: `${s.id}:${c.code}`,
        day,
        code: c.code,
        name: c.name,
        triggers: c.triggers.join(" "),
        regime: s.regime ?? "—",
        cells: c.outcomes.map((o) => outcomeCell(o, lang)),
      });
    }
  }
  return out;
}

/** What a hit-rate cell counts: one group at one horizon, its finished signals (the rate's
 * count) or, for a cell that only has pending ones, those. */
export interface SignalFilter {
  group: GroupBy;
  key: string;
  horizon: number;
  status: "done" | "pending";
}

function inGroup(s: TrackedScreen, c: TrackedCandidate, f: SignalFilter): boolean {
  switch (f.group) {
    case "all":
      return true;
    case "trigger":
      return c.triggers.includes(f.key);
    case "track":
      return c.track === f.key;
    case "regime":
      return s.regime === f.key;
  }
}

/** The signals a hit-rate cell counts, counted as the backend's stats do (wyckoff_track
 * stats_of): a stock on a day once, as first saved; in the group; with that status at the
 * horizon. Newest first, as the review list. */
export function countedRows(screens: TrackedScreen[], f: SignalFilter, lang: string): SignalRow[] {
  const seen = new Set<string>();
  const keep = new Set<string>();
  for (const s of screens) {
    for (const c of s.candidates) {
      const signal = `${s.as_of}:${c.code}`;
      if (seen.has(signal)) continue;
      seen.add(signal);
      if (inGroup(s, c, f) && c.outcomes.some((o) => o.horizon === f.horizon && o.status === f.status)) keep.add(`${s.id}:${c.code}`);
    }
  }
  return signalRows(screens, lang).filter((r) => keep.has(r.key));
}

/** How many of the counted signals gained after fees at the filter's horizon. */
export function countedHits(screens: TrackedScreen[], rows: SignalRow[], horizon: number): number {
  const keys = new Set(rows.map((r) => r.key));
  let hits = 0;
  for (const s of screens)
    for (const c of s.candidates)
      if (keys.has(`${s.id}:${c.code}`) && c.outcomes.some((o) => o.horizon === horizon && o.status === "done" && o.hit)) hits += 1;
  return hits;
}

/** The label of a hit-rate group, as its row is headed. */
export function groupLabel(group: GroupBy, key: string, lang: string): string {
  return group === "all" ? reviewText(lang)("all") : group === "regime" ? `水温 ${key}` : key;
}

/** The line above a cell's counted signals: what it counts, how many, how many hit. */
export function countedSummary(screens: TrackedScreen[], f: SignalFilter, rows: SignalRow[], lang: string): string {
  const t = reviewText(lang);
  const what = groupLabel(f.group, f.key, lang);
  return f.status === "pending"
    ? t("countedPending", { what, h: f.horizon, n: rows.length })
    : t("counted", { what, h: f.horizon, n: rows.length, hits: countedHits(screens, rows, f.horizon) });
}
