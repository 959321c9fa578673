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
  type ISeriesApi,
  type SeriesType,
  type Time,
} from "lightweight-charts";
import type { Annotation, StockChart as ChartData, Language } from "../bindings";
import { place } from "../pages/chartNotes";
import { NotesPrimitive } from "./notesPrimitive";
import { LanguageContext } from "../i18n";
import "./market.css";
import { marketText } from "../pages/marketText";
import type { LiveCandle } from "../pages/liveQuote";
import { drawLiveCandle } from "../pages/liveQuoteDraw";
import { DOWN, UP, allMarkers, barAt, candles, levels, marksAt, maPoints, phaseColumns, volumes, warmUpChart } from "../pages/stockModel";

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

/** Draws `chart` into `el`: candles, volume, MA lines, markers, levels and phase bands.
 * A chart the library refuses is returned with the reason, to be said plainly rather than
 * left as a blank canvas. */
function drawChart(el: HTMLElement, chart: ChartData, lang: Language): { api: IChartApi; candle: ISeriesApi<SeriesType, Time> | null; failure: string | null } {
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
    return { api: c, candle, failure: null };
  } catch (e) {
    return { api: c, candle: null, failure: e instanceof Error ? e.message : String(e) };
  }
}

interface Props {
  chart: ChartData;
  /** Called once the data is on the canvas (for the click-to-drawn figure), with the
   * milliseconds the chart took to build. */
  onDrawn?: (drawn: ChartData, buildMs: number) => void;
  /** How often an event's tracked signals worked, for its tooltip line. */
  hitText?: (label: string) => string | null;
  /** Pixels; the stock page's chart by default, smaller inline in a chat card. */
  height?: number;
  /** The agent's and the user's notes, drawn over the bars in their author's colour. */
  notes?: Annotation[];
  /** A click on the chart: the bar's date (YYYYMMDD) and the price under the pointer. */
  onPick?: (date: number, price: number | null) => void;
  /** The day's partial bar during the session, drawn as today's candle in its own style. */
  live?: LiveCandle | null;
}

export default function StockChart({ chart, onDrawn, hitText, height = CHART_HEIGHT, notes, onPick, live }: Props) {
  // Read at hover time: a new function must not redraw the chart.
  const hitRef = useRef(hitText);
  hitRef.current = hitText;
  const pickRef = useRef(onPick);
  pickRef.current = onPick;
  const candleRef = useRef<ISeriesApi<SeriesType, Time> | null>(null);
  const apiRef = useRef<IChartApi | null>(null);
  // Bumped when the chart is built anew, so the notes are attached to the new series.
  const [built, setBuilt] = useState(0);
  const box = useRef<HTMLDivElement>(null);
  const [legend, setLegend] = useState<string>("");
  const [marks, setMarks] = useState<string[]>([]);
  const [failed, setFailed] = useState<string | null>(null);
  const lang = useContext(LanguageContext);
  const theme = useThemeVersion();

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const building = performance.now();
    const { api: c, candle, failure } = drawChart(el, chart, lang);
    const buildMs = performance.now() - building;
    setFailed(failure);
    candleRef.current = candle;
    apiRef.current = c;
    setBuilt((n) => n + 1);
    c.subscribeClick((p) => {
      if (!p.time || !pickRef.current) return;
      const price = p.point && candle ? candle.coordinateToPrice(p.point.y) : null;
      pickRef.current(Number(String(p.time).replaceAll("-", "")), price);
    });
    c.subscribeCrosshairMove((p) => {
      if (!p.time) {
        setLegend("");
        setMarks([]);
        return;
      }
      const b = barAt(chart, String(p.time));
      setLegend(b ? `${String(p.time)}  O ${b.open}  H ${b.high}  L ${b.low}  C ${b.close}  V ${b.volume}` : "");
      setMarks(marksAt(chart, String(p.time), lang === "en" ? "en" : "zh", (label) => hitRef.current?.(label) ?? null));
    });
    requestAnimationFrame(() => onDrawn?.(chart, buildMs));
    return () => {
      candleRef.current = null;
      apiRef.current = null;
      c.remove();
    };
  }, [chart, onDrawn, lang, theme]);

  // The live candle comes and goes with each quote without rebuilding the chart.
  useEffect(() => {
    const api = apiRef.current;
    if (!api || !live) return;
    const series = drawLiveCandle(api, live);
    return () => {
      if (apiRef.current === api) api.removeSeries(series);
    };
  }, [live, built]);

  // Notes are drawn apart from the chart: adding or removing one does not rebuild it.
  useEffect(() => {
    const candle = candleRef.current;
    if (!candle || !notes || notes.length === 0) return;
    const prim = new NotesPrimitive(place(notes, chart.bars.dates, chart.bars.high, lang));
    candle.attachPrimitive(prim);
    return () => {
      if (candleRef.current === candle) candle.detachPrimitive(prim);
    };
  }, [notes, chart, lang, built]);

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

/** Draws a throw-away chart once, unseen, soon after start-up: the first stock page
 * otherwise pays for compiling the chart library's and the page model's code paths and
 * for setting up their canvases (the app_perf bench's first 5,000-bar open). It draws
 * through the page's own `drawChart`, at the page's size, and is never visible. */
export function ChartWarmUp({ delayMs = 400 }: { delayMs?: number }) {
  const box = useRef<HTMLDivElement>(null);
  const lang = useContext(LanguageContext);
  const [done, setDone] = useState(false);
  useEffect(() => {
    let chart: IChartApi | null = null;
    let frame = 0;
    const timer = window.setTimeout(() => {
      const el = box.current;
      if (!el) return;
      chart = drawChart(el, warmUpChart(), lang).api;
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
  }, [delayMs, lang]);
  if (done) return null;
  // Inside the viewport, so that WebKit really paints it (and sets up its canvas
  // compositing); behind the page and all but transparent, so that nobody sees it.
  return (
    <div
      ref={box}
      aria-hidden="true"
      style={{ position: "fixed", left: 0, top: 0, width: 800, height: CHART_HEIGHT, zIndex: -1, opacity: 0.01, pointerEvents: "none" }}
    />
  );
}
