import { describe, expect, it } from "vitest";
import type { RunMetrics, SweepRowSummary, SweepSummary, TaskInfo } from "../bindings";
import { axes, bestByOf, bestCoords, metricColumn, cellRequest, colour, defaultAxes, heatGrid, metricOfBestBy, researchProgress, rowCoords } from "./heatmap";

const metrics = (ret: number, sharpe: number | null): RunMetrics => ({
  total_return_pct: ret,
  annualized_return_pct: null,
  sharpe,
  max_drawdown_pct: -5,
  win_rate_pct: null,
  profit_factor: null,
  trades: 3,
  turnover: null,
});
// hold 5,10 × stop -8,-5 × entry open,close: 8 rows, the first axis slowest.
function report(): SweepSummary {
  const rows: SweepRowSummary[] = [];
  let k = 0;
  for (const hold of [5, 10])
    for (const stop of [-8, -5])
      for (const entry of ["open", "close"]) {
        rows.push({ hold_days: hold, stop_loss_pct: stop, take_profit_pct: 0, top_n: 4, entry_price_mode: entry, triggers: ["Spring", "EVR"], metrics: metrics(k, k === 3 ? null : k / 10) });
        k++;
      }
  return {
    period: "2024-01-02 ~ 2024-03-29",
    combinations: 8,
    grid: { start: "2024-01-02", end: "2024-03-29", board: "all", hold_days: [5, 10], stop_loss_pct: [-8, -5], take_profit_pct: [0], top_n: [4], entry_price_mode: ["open", "close"], triggers: [["Spring", "EVR"]] },
    rows,
    best: 6,
    best_by: "sharpe",
    stability: null,
  };
}

describe("heatmap model", () => {
  it("reads rows in grid order, the first axis slowest", () => {
    expect(rowCoords([2, 2, 1, 1, 2, 1], 0)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(rowCoords([2, 2, 1, 1, 2, 1], 5)).toEqual([1, 0, 0, 0, 1, 0]);
    expect(axes(report()).triggers).toEqual(["Spring+EVR"]);
  });

  it("builds the grid of a metric over two parameters, the others fixed", () => {
    const fixed = bestCoords(report());
    // The best row (6) is hold 10, stop -5, open.
    expect(fixed).toMatchObject({ hold_days: 1, stop_loss_pct: 1, entry_price_mode: 0 });
    const g = heatGrid(report(), "hold_days", "stop_loss_pct", "total_return_pct", fixed);
    expect(g.xs).toEqual(["5", "10"]);
    expect(g.ys).toEqual(["-8", "-5"]);
    // entry fixed at open: rows 0, 2 (hold 5) and 4, 6 (hold 10).
    expect(g.cells.map((r) => r.map((c) => c?.row))).toEqual([
      [0, 4],
      [2, 6],
    ]);
    expect([g.lo, g.hi]).toEqual([0, 6]);
    const close = heatGrid(report(), "hold_days", "stop_loss_pct", "total_return_pct", { ...fixed, entry_price_mode: 1 });
    expect(close.cells[0][0]?.row).toBe(1);
  });

  it("keeps a run without the metric as a cell without a value, and a cell no row fills empty", () => {
    const fixed = { ...bestCoords(report()), entry_price_mode: 1 };
    const g = heatGrid(report(), "hold_days", "stop_loss_pct", "sharpe", fixed);
    // Row 3 (hold 5, stop -5, close) has no Sharpe.
    expect(g.cells[1][0]).toEqual({ row: 3, value: null });
    expect(g.lo).toBeCloseTo(0.1);
    const short = report();
    short.rows = short.rows.slice(0, 6);
    const cut = heatGrid(short, "hold_days", "stop_loss_pct", "sharpe", bestCoords(report()));
    expect(cut.cells[1][1]).toBeNull();
  });

  it("colours from worst to best, grey without a value", () => {
    expect(colour(0, 0, 10, "sharpe")).toBe("hsl(0 65% 45%)");
    expect(colour(10, 0, 10, "sharpe")).toBe("hsl(120 65% 45%)");
    expect(colour(5, 0, 10, "total_return_pct")).toBe("hsl(60 65% 45%)");
    // A drawdown is a size: 2 is better than 10.
    expect(colour(2, 2, 10, "max_drawdown_pct")).toBe("hsl(120 65% 45%)");
    expect(colour(10, 2, 10, "max_drawdown_pct")).toBe("hsl(0 65% 45%)");
    expect(colour(null, 0, 10, "sharpe")).toContain("#9ca3af");
    expect(colour(3, 3, 3, "sharpe")).toBe("hsl(120 65% 45%)");
    expect(colour(10, 0, 10, "trades")).toBe("hsl(210 70% 45%)");
  });

  it("starts on the swept axes and names the metric of best_by", () => {
    expect(defaultAxes(report())).toEqual(["hold_days", "stop_loss_pct"]);
    expect(metricOfBestBy("return")).toBe("total_return_pct");
    expect(metricOfBestBy("sharpe")).toBe("sharpe");
    expect(bestByOf("max_drawdown_pct")).toBe("max_drawdown");
    expect(bestByOf("trades")).toBeNull();
    const col = metricColumn(report(), "sharpe");
    expect(col.dims).toEqual([2, 2, 1, 1, 2, 1]);
    expect(col.values[3]).toBeNull();
    expect(col.values[6]).toBeCloseTo(0.6);
  });

  it("gives a cell's single run with its own values and the sweep's period", () => {
    expect(cellRequest(report(), 5)).toEqual({
      start: "2024-01-02",
      end: "2024-03-29",
      board: "all",
      hold_days: "10",
      stop_loss_pct: "-8",
      take_profit_pct: "0",
      top_n: "4",
      entry_price_mode: "close",
      triggers: "Spring+EVR",
      best_by: null,
      walk_forward: null,
    });
    expect(cellRequest(report(), 99)).toBeNull();
  });

  it("reads combinations done / total and window i of n from the task's progress", () => {
    const task = (detail: string) => ({ progress: { detail } }) as unknown as TaskInfo;
    expect(researchProgress(task("3/12 个组合"))).toEqual({ kind: "combinations", done: 3, total: 12 });
    expect(researchProgress(task("第 2/5 个窗口"))).toEqual({ kind: "window", done: 2, total: 5 });
    expect(researchProgress(task("读取本地缓存"))).toBeNull();
  });
});
