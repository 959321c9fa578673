// Draws the day's partial candle on the stock chart: its own series (one bar), hollow in
// the up/down colour with a dashed last-price line and a "partial · 10:42" label, so it is
// never mistaken for a closed day.
import { CandlestickSeries, LineStyle, createSeriesMarkers, type IChartApi, type ISeriesApi, type SeriesType, type Time } from "lightweight-charts";
import type { LiveCandle } from "./liveQuote";
import { DOWN, UP } from "./stockModel";

const HOLLOW = "rgba(0, 0, 0, 0)";

export function drawLiveCandle(api: IChartApi, c: LiveCandle): ISeriesApi<SeriesType, Time> {
  const color = c.up ? UP : DOWN;
  const s = api.addSeries(CandlestickSeries, {
    upColor: HOLLOW,
    downColor: HOLLOW,
    borderUpColor: color,
    borderDownColor: color,
    wickUpColor: color,
    wickDownColor: color,
    priceLineStyle: LineStyle.Dashed,
    priceLineColor: color,
    title: c.label,
  });
  const time = c.time as Time;
  s.setData([{ time, open: c.open, high: c.high, low: c.low, close: c.close }]);
  createSeriesMarkers(s, [{ time, position: "aboveBar", color, shape: "circle", text: c.label }]);
  return s;
}
