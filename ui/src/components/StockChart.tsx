// The chart wrapper: lightweight-charts (bundled, canvas) draws what `stock_chart` computed.
// Candles + volume + MA lines, event/signal markers, range and holding lines, phase bands as
// a background histogram, crosshair OHLCV legend. Zoom/pan are the library's own.
import { useContext, useEffect, useRef, useState } from "react";
import {
  CandlestickSeries,
  ColorType,
  CrosshairMode,
  HistogramSeries,
  LineSeries,
  createChart,
  createSeriesMarkers,
  type IChartApi,
  type Time,
} from "lightweight-charts";
import type { StockChart as ChartData } from "../bindings";
import { LanguageContext } from "../i18n";
import "./market.css";
import { marketText } from "../pages/marketText";
import { DOWN, UP, allMarkers, barAt, candles, levels, marksAt, maPoints, phaseColumns, volumes } from "../pages/stockModel";

const CHART_HEIGHT = 460;

/** Changes whenever the theme does (the setting's `data-theme`, or the system's scheme),
 * so the chart, which takes colours rather than CSS, is drawn again in the new ones. */
function useThemeVersion(): number {
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const bump = () => setVersion((v) => v + 1);
    const attr = new MutationObserver(bump);
    attr.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    const scheme = window.matchMedia("(prefers-color-scheme: dark)");
    scheme.addEventListener("change", bump);
    return () => {
      attr.disconnect();
      scheme.removeEventListener("change", bump);
    };
  }, []);
  return version;
}

function cssColor(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}
const MA_COLORS: Record<number, string> = { 5: "#f59e0b", 20: "#8b5cf6", 50: "#0ea5e9", 200: "#64748b" };

interface Props {
  chart: ChartData;
  /** Called once the data is on the canvas (for the click-to-drawn figure). */
  onDrawn?: () => void;
  /** Pixels; the stock page's chart by default, smaller inline in a chat card. */
  height?: number;
}

export default function StockChart({ chart, onDrawn, height = CHART_HEIGHT }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const api = useRef<IChartApi | null>(null);
  const [legend, setLegend] = useState<string>("");
  const [marks, setMarks] = useState<string[]>([]);
  const [failed, setFailed] = useState<string | null>(null);
  const lang = useContext(LanguageContext);
  const theme = useThemeVersion();

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const c = createChart(el, {
      autoSize: true,
      layout: { background: { type: ColorType.Solid, color: "transparent" }, textColor: cssColor("--muted", "#6b7280") },
      grid: { vertLines: { color: cssColor("--border", "#e5e7eb") }, horzLines: { color: cssColor("--border", "#e5e7eb") } },
      // The library formats with `navigator.language` by default, which is "C" under a
      // C/POSIX locale: Intl throws inside its paint loop and every canvas stays blank.
      localization: { locale: lang === "en" ? "en-US" : "zh-CN", dateFormat: "yyyy-MM-dd" },
      crosshair: { mode: CrosshairMode.Normal },
      rightPriceScale: { scaleMargins: { top: 0.05, bottom: 0.25 } },
      timeScale: { rightOffset: 4 },
    });
    api.current = c;
    try {
      const phases = c.addSeries(HistogramSeries, {
        priceScaleId: "phases",
        lastValueVisible: false,
        priceLineVisible: false,
      });
      c.priceScale("phases").applyOptions({ scaleMargins: { top: 0, bottom: 0 }, visible: false });
      phases.setData(phaseColumns(chart).map((p) => ({ ...p, time: p.time as Time })));
      const candle = c.addSeries(CandlestickSeries, {
        upColor: UP,
        downColor: DOWN,
        borderUpColor: UP,
        borderDownColor: DOWN,
        wickUpColor: UP,
        wickDownColor: DOWN,
      });
      candle.setData(candles(chart).map((b) => ({ ...b, time: b.time as Time })));
      const vol = c.addSeries(HistogramSeries, { priceScaleId: "volume", priceFormat: { type: "volume" }, lastValueVisible: false, priceLineVisible: false });
      c.priceScale("volume").applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });
      vol.setData(volumes(chart).map((v) => ({ ...v, time: v.time as Time })));
      for (const m of chart.ma) {
        const line = c.addSeries(LineSeries, {
          color: MA_COLORS[m.window] ?? "#999",
          lineWidth: 1,
          lastValueVisible: false,
          priceLineVisible: false,
          crosshairMarkerVisible: false,
        });
        line.setData(maPoints(chart, m.window).map((p) => ({ ...p, time: p.time as Time })));
      }
      createSeriesMarkers(
        candle,
        allMarkers(chart).map((m) => ({ ...m, time: m.time as Time })),
      );
      for (const l of levels(chart, (id) => marketText(lang, id))) {
        candle.createPriceLine({ price: l.price, color: l.color, lineWidth: 1, lineStyle: 2, axisLabelVisible: true, title: l.title });
      }
      // Start on the last ~250 bars; the whole history is a scroll/zoom away.
      const n = chart.bars.dates.length;
      if (n > 250) c.timeScale().setVisibleLogicalRange({ from: n - 250, to: n + 4 });
      else c.timeScale().fitContent();
      c.subscribeCrosshairMove((p) => {
        if (!p.time) {
          setLegend("");
          setMarks([]);
          return;
        }
        const b = barAt(chart, String(p.time));
        setLegend(b ? `${String(p.time)}  O ${b.open}  H ${b.high}  L ${b.low}  C ${b.close}  V ${b.volume}` : "");
        setMarks(marksAt(chart, String(p.time), lang === "en" ? "en" : "zh"));
      });
      setFailed(null);
    } catch (e) {
      // A chart the library refuses is said plainly, never a silent blank canvas.
      setFailed(e instanceof Error ? e.message : String(e));
    }
    requestAnimationFrame(() => onDrawn?.());
    return () => {
      c.remove();
      api.current = null;
    };
  }, [chart, onDrawn, lang, theme]);

  return (
    <div className="stock-chart">
      <div className="chart-legend" id="chart-legend" aria-live="polite">
        {legend || `${chart.code} ${chart.name ?? ""}`}
        {marks.map((m) => (
          <div key={m} className="chart-mark">
            {m}
          </div>
        ))}
      </div>
      {failed && (
        <p className="error" id="chart-error" role="alert">
          {failed}
        </p>
      )}
      <div ref={box} className="chart-canvas" id="chart-canvas" style={{ height }} />
    </div>
  );
}

/** Draws a throw-away chart once, off screen, soon after start-up: the first stock page
 * otherwise pays for compiling the chart library's code paths and setting up its canvases
 * (about 300 ms of a 5,000-bar page's first open, see the app_perf bench). Nothing of it
 * is ever visible; its series are a flat line, not market data. */
export function ChartWarmUp({ delayMs = 400 }: { delayMs?: number }) {
  const box = useRef<HTMLDivElement>(null);
  const [done, setDone] = useState(false);
  useEffect(() => {
    let chart: IChartApi | null = null;
    let frame = 0;
    const timer = window.setTimeout(() => {
      const el = box.current;
      if (!el) return;
      chart = createChart(el, { width: 800, height: CHART_HEIGHT, localization: { locale: "en-US", dateFormat: "yyyy-MM-dd" } });
      const day = 86_400;
      const start = Date.UTC(2020, 0, 1) / 1000;
      const flat = Array.from({ length: 300 }, (_, i) => ({ time: (start + i * day) as Time, value: 1 }));
      const candle = chart.addSeries(CandlestickSeries, {});
      candle.setData(flat.map((p) => ({ time: p.time, open: 1, high: 1, low: 1, close: 1 })));
      chart.addSeries(HistogramSeries, { priceScaleId: "volume" }).setData(flat);
      chart.addSeries(LineSeries, {}).setData(flat);
      createSeriesMarkers(candle, [{ time: flat[150].time, position: "belowBar", shape: "arrowUp", color: UP, text: "·" }]);
      // Two frames: the library paints on the next one.
      frame = requestAnimationFrame(() => {
        frame = requestAnimationFrame(() => {
          chart?.remove();
          chart = null;
          setDone(true);
        });
      });
    }, delayMs);
    return () => {
      window.clearTimeout(timer);
      cancelAnimationFrame(frame);
      chart?.remove();
    };
  }, [delayMs]);
  if (done) return null;
  return <div ref={box} aria-hidden="true" style={{ position: "fixed", left: -10_000, top: 0, width: 800, height: CHART_HEIGHT, pointerEvents: "none" }} />;
}
