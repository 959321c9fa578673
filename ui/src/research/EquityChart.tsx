// Equity curves on lightweight-charts (the stock page's library): one line per series.
import { useContext, useEffect, useRef } from "react";
import { ColorType, LineSeries, createChart, type Time } from "lightweight-charts";
import { LanguageContext } from "../i18n";

export type Series = { points: { date: string; equity: number }[]; color?: string };

/** Points with strictly ascending dates (the library's rule); a repeated date keeps the last. */
export function ascending(points: { date: string; equity: number }[]): { time: string; value: number }[] {
  const out: { time: string; value: number }[] = [];
  for (const p of points) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(p.date)) continue;
    const last = out[out.length - 1];
    if (last && p.date <= last.time) {
      if (p.date === last.time) last.value = p.equity;
      continue;
    }
    out.push({ time: p.date, value: p.equity });
  }
  return out;
}

export default function EquityChart({ series, height = 220, id }: { series: Series[]; height?: number; id?: string }) {
  const box = useRef<HTMLDivElement>(null);
  const lang = useContext(LanguageContext);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const css = (n: string, f: string) => getComputedStyle(document.documentElement).getPropertyValue(n).trim() || f;
    const c = createChart(el, {
      autoSize: true,
      layout: { background: { type: ColorType.Solid, color: "transparent" }, textColor: css("--muted", "#6b7280") },
      grid: { vertLines: { color: css("--border", "#e5e7eb") }, horzLines: { color: css("--border", "#e5e7eb") } },
      // As the stock chart: a C locale would make Intl throw inside the paint loop.
      localization: { locale: lang === "en" ? "en-US" : "zh-CN", dateFormat: "yyyy-MM-dd" },
    });
    try {
      for (const s of series) {
        const line = c.addSeries(LineSeries, { color: s.color ?? "#2563eb", lineWidth: 2, priceLineVisible: false });
        line.setData(ascending(s.points).map((p) => ({ time: p.time as Time, value: p.value })));
      }
      c.timeScale().fitContent();
    } catch (e) {
      console.warn("equity chart", e);
    }
    return () => c.remove();
  }, [series, lang]);
  return <div className="equity-chart" id={id} ref={box} style={{ height, width: "100%" }} data-series={series.length} />;
}
