// Draws the chart notes (boxes, lines, text) on the candle series' pane: a series primitive
// of lightweight-charts, so they pan and zoom with the bars. Coordinates come from the
// library at paint time; a note off the bars' range is clipped by the canvas.
import type { IChartApiBase, IPrimitivePaneRenderer, IPrimitivePaneView, ISeriesApi, ISeriesPrimitive, SeriesAttachedParameter, SeriesType, Time } from "lightweight-charts";
import type { Placed } from "../pages/chartNotes";

type Target = Parameters<IPrimitivePaneRenderer["draw"]>[0];

export class NotesPrimitive implements ISeriesPrimitive<Time> {
  private chart: IChartApiBase<Time> | null = null;
  private series: ISeriesApi<SeriesType, Time> | null = null;
  private readonly view: IPrimitivePaneView;

  constructor(private readonly notes: Placed[]) {
    this.view = { renderer: () => ({ draw: (target: Target) => this.draw(target) }) };
  }

  attached(p: SeriesAttachedParameter<Time>): void {
    this.chart = p.chart;
    this.series = p.series;
    p.requestUpdate();
  }

  detached(): void {
    this.chart = null;
    this.series = null;
  }

  paneViews(): readonly IPrimitivePaneView[] {
    return [this.view];
  }

  private x(time: string | null, fallback: number): number {
    if (time == null || !this.chart) return fallback;
    return this.chart.timeScale().timeToCoordinate(time as Time) ?? fallback;
  }

  private draw(target: Target): void {
    const series = this.series;
    if (!series || !this.chart) return;
    target.useMediaCoordinateSpace(({ context: ctx, mediaSize }) => {
      for (const n of this.notes) {
        ctx.strokeStyle = n.color;
        ctx.fillStyle = n.color;
        ctx.lineWidth = 1.5;
        if (n.kind === "box") {
          const [x1, x2] = [this.x(n.from, 0), this.x(n.to, mediaSize.width)];
          const [y1, y2] = [series.priceToCoordinate(n.high), series.priceToCoordinate(n.low)];
          if (y1 == null || y2 == null) continue;
          ctx.globalAlpha = 0.12;
          ctx.fillRect(x1, y1, x2 - x1, y2 - y1);
          ctx.globalAlpha = 1;
          ctx.strokeRect(x1, y1, x2 - x1, y2 - y1);
        } else if (n.kind === "line") {
          const y = series.priceToCoordinate(n.price);
          if (y == null) continue;
          ctx.setLineDash([6, 3]);
          ctx.beginPath();
          ctx.moveTo(this.x(n.from, 0), y);
          ctx.lineTo(this.x(n.to, mediaSize.width), y);
          ctx.stroke();
          ctx.setLineDash([]);
        } else {
          const y = series.priceToCoordinate(n.price);
          const x = this.x(n.date, -1);
          if (y == null || x < 0) continue;
          ctx.font = "12px sans-serif";
          ctx.textAlign = "center";
          ctx.fillText(n.text, x, y - 14);
          ctx.beginPath();
          ctx.arc(x, y - 6, 2.5, 0, Math.PI * 2);
          ctx.fill();
        }
      }
    });
  }
}
