// The stock page's live quote: during the session the day's partial bar is drawn as
// today's candle in its own style (hollow, labelled "partial · 10:42"), and the diagnosis
// card says the reading is of the last close while the price is as of the quote. The
// partial bar is never a daily bar: the backend keeps it out of the cache, and the page
// only draws it next to the closes.
import { useEffect, useState } from "react";
import { commands, type LiveQuote, type StockChart } from "../bindings";
import { isoDate } from "./stockModel";

/** How often the page asks again while the session is under way (the backend caches a few
 * seconds and paces every source across processes). */
export const POLL_MS = 15_000;
/** Outside the session: often enough to pick up the open of a page left open. */
export const IDLE_POLL_MS = 60_000;

/** The partial candle as the chart draws it. */
export interface LiveCandle {
  time: string;
  open: number;
  high: number;
  low: number;
  close: number;
  /** "partial · 10:42" */
  label: string;
  /** Up (red) or down (green) against the previous close, the A-share way. */
  up: boolean;
}

const yuan = (e6: number): number => Math.round(e6 / 10_000) / 100;

/** Today's partial candle for `chart`, or null when there is nothing to draw: the session
 * is not under way, the stock has not traded today, the chart is not of days, or the
 * chart already has a bar for the day (the close is in). */
export function liveCandle(chart: Pick<StockChart, "bars">, live: LiveQuote | null, period: string): LiveCandle | null {
  const p = live?.partial;
  if (!live || !live.live || !p || period !== "day") return null;
  const dates = chart.bars.dates;
  const last = dates.length > 0 ? dates[dates.length - 1] : null;
  if (last != null && last >= p.date) return null;
  return {
    time: isoDate(p.date),
    open: yuan(p.open_e6),
    high: yuan(p.high_e6),
    low: yuan(p.low_e6),
    close: yuan(p.last_e6),
    label: `partial · ${p.time}`,
    up: p.last_e6 >= live.quote.prev_close_e6,
  };
}

/** The diagnosis card's line: the live price as of the quote, and that the reading above
 * is of the last close. */
export function liveLine(live: LiveQuote | null, lang: "zh" | "en", closeDate: number | null): string | null {
  const p = live?.partial;
  if (!live || !live.live || !p) return null;
  const { price, pct } = priceAndChange(live.quote);
  const close = closeDate != null ? isoDate(closeDate) : "—";
  return lang === "en"
    ? `Live ${price}${pct} as of ${p.time}, partial — the reading is of the close of ${close}`
    : `盘中 ${price}${pct}，截至 ${p.time}（未收盘，partial）— 诊断基于 ${close} 收盘`;
}

/** Polls the stock's live quote while `on` (the day chart, not replaying). Errors (offline,
 * no source) leave no candle: the closes stand alone, as they do outside the session. */
export function useLiveQuote(code: string | null, on: boolean): LiveQuote | null {
  const [live, setLive] = useState<LiveQuote | null>(null);
  useEffect(() => {
    setLive(null);
    if (!code || !on) return;
    let stopped = false;
    let timer: number | undefined;
    const ask = async () => {
      try {
        const r = await commands.liveQuote(code);
        if (stopped) return;
        setLive(r.status === "ok" ? r.data : null);
        const live = r.status === "ok" && r.data.live;
        timer = window.setTimeout(() => void ask(), live ? POLL_MS : IDLE_POLL_MS);
      } catch {
        if (!stopped) setLive(null);
      }
    };
    void ask();
    return () => {
      stopped = true;
      if (timer !== undefined) window.clearTimeout(timer);
    };
  }, [code, on]);
  return live;
}

/** Live quotes of `codes` while `on` (the watchlist's rows, the holdings), by code: only
 * those whose session is under way today, so outside it the pages show their closes alone.
 * The backend asks a source for many codes at once, caches a few seconds and paces every
 * source across processes; an error (offline, no source) leaves the closes alone too. */
export function useLiveQuotes(codes: readonly string[], on: boolean): Map<string, LiveQuote> {
  const key = codes.join(",");
  const [live, setLive] = useState<Map<string, LiveQuote>>(() => new Map());
  useEffect(() => {
    setLive(new Map());
    const asked = key ? key.split(",") : [];
    if (!on || asked.length === 0) return;
    let stopped = false;
    let timer: number | undefined;
    const ask = async () => {
      let underWay = false;
      try {
        const r = await commands.liveQuotes(asked);
        if (stopped) return;
        const byCode = new Map<string, LiveQuote>();
        if (r.status === "ok") for (const q of r.data) if (q.live) byCode.set(q.quote.code, q);
        underWay = byCode.size > 0;
        setLive(byCode);
      } catch {
        if (stopped) return;
        setLive(new Map());
      }
      timer = window.setTimeout(() => void ask(), underWay ? POLL_MS : IDLE_POLL_MS);
    };
    void ask();
    return () => {
      stopped = true;
      if (timer !== undefined) window.clearTimeout(timer);
    };
  }, [key, on]);
  return live;
}

/** A table cell's live price: the last price, its change against the previous close and
 * the quote's time ("13.05 +1.24% · 10:42"). */
export function liveCellText(q: LiveQuote): { text: string; up: boolean } {
  const { price, pct } = priceAndChange(q.quote);
  const time = q.partial?.time ?? q.quote.time.slice(11, 16);
  return { text: `${price}${pct} · ${time}`, up: q.quote.last_e6 >= q.quote.prev_close_e6 };
}

/** The quote's last price and its change against the previous close ("13.05", " +1.24%";
 * no change without a previous close). */
function priceAndChange(q: LiveQuote["quote"]): { price: string; pct: string } {
  const price = yuan(q.last_e6).toFixed(2);
  const change = q.prev_close_e6 > 0 ? ((q.last_e6 / q.prev_close_e6 - 1) * 100).toFixed(2) : null;
  // The sign as rounded: a change that rounds to "-0.00" is not given a "+" as well.
  const pct = change == null ? "" : ` ${change.startsWith("-") ? "" : "+"}${change}%`;
  return { price, pct };
}

/** The live column's heading. */
export const liveHeading = (lang: "zh" | "en"): string => (lang === "en" ? "Live" : "盘中");

