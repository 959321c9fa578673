import { describe, expect, it } from "vitest";
import { warmUpChart } from "./StockChart";
import { allMarkers, candles, levels, maPoints, phaseColumns, volumes } from "../pages/stockModel";

describe("chart warm-up data", () => {
  it("is as long as a long daily history and reaches every drawing path of the page", () => {
    const c = warmUpChart(5_000);
    const dates = c.bars.dates;
    expect(dates.length).toBe(5_000);
    expect(dates.every((d, i) => i === 0 || d > dates[i - 1])).toBe(true);
    // weekdays only, as trading days are
    const weekday = (d: number) => new Date(Date.UTC(Math.floor(d / 10_000), (Math.floor(d / 100) % 100) - 1, d % 100)).getUTCDay();
    expect(dates.some((d) => weekday(d) === 0 || weekday(d) === 6)).toBe(false);
    expect(candles(c)).toHaveLength(5_000);
    expect(volumes(c)).toHaveLength(5_000);
    expect(c.ma.map((m) => maPoints(c, m.window).length)).toEqual([5_000, 5_000, 5_000, 5_000]);
    expect(allMarkers(c)).toHaveLength(6);
    expect(new Set(phaseColumns(c).map((p) => p.color)).size).toBe(3);
    expect(phaseColumns(c)).toHaveLength(300);
    expect(levels(c).map((l) => l.id)).toEqual(["resistance", "mid", "support"]);
  });
});
