import { describe, expect, it } from "vitest";
import type { MinuteChart } from "../bindings";
import { MINUTE_PERIODS, geometry, levelLabel, minuteText, noteTexts, syncLine, timeLabel } from "./minuteModel";

function chart(over: Partial<MinuteChart> = {}): MinuteChart {
  return {
    code: "600519",
    name: "贵州茅台",
    period: "60m",
    times: [202412021030, 202412021130, 202412021400, 202412021500],
    open: [10, 11, 12, 11],
    high: [11.5, 12, 12.5, 11.5],
    low: [9.5, 10.5, 10.8, 10],
    close: [11, 12, 11, 10.5],
    volume: [100, 200, 300, 400],
    sources: ["tencent"],
    coverage: null,
    levels: [
      { kind: "support", price: 10, timeframe: "daily" },
      { kind: "cost", price: 100, timeframe: "holding" },
    ],
    marks: [
      { label: "Spring", date: 20241202, bar_time: 202412021500, price: 10.2, timeframe: "daily" },
      { label: "SOS", date: 20241129, bar_time: 202411291500, price: 10.2, timeframe: "daily" },
    ],
    scale_day: 20241202,
    notes: [{ type: "events_daily_only" }, { type: "phases_daily_only" }],
    ...over,
  };
}

describe("minute periods", () => {
  it("offers the four minute periods, coarsest first", () => {
    expect(MINUTE_PERIODS).toEqual(["60m", "30m", "15m", "5m"]);
  });

  it("labels bar times", () => {
    expect(timeLabel(202412021030)).toBe("2024-12-02 10:30");
    expect(timeLabel(202501020935)).toBe("2025-01-02 09:35");
  });
});

describe("geometry", () => {
  it("draws one candle a bar, red up and green down, inside the box", () => {
    const g = geometry(chart(), 400, 200);
    expect(g.candles.map((c) => c.up)).toEqual([true, true, false, false]);
    for (const c of g.candles) {
      expect(c.yHigh).toBeLessThanOrEqual(Math.min(c.yOpen, c.yClose));
      expect(c.yLow).toBeGreaterThanOrEqual(Math.max(c.yOpen, c.yClose));
      expect(c.yHigh).toBeGreaterThanOrEqual(0);
      expect(c.yLow).toBeLessThanOrEqual(200);
    }
    expect(g.candles[1].x).toBeGreaterThan(g.candles[0].x);
  });

  it("keeps levels near the bars and a mark only on a bar it has", () => {
    const g = geometry(chart(), 400, 200);
    // the cost 100 is far outside 9.5–12.5: left off rather than squashing the candles
    expect(g.levels.map((l) => l.kind)).toEqual(["support"]);
    expect(g.marks.map((m) => m.label)).toEqual(["Spring"]);
    expect(g.marks[0].x).toBeCloseTo(g.candles[3].x + g.candles[3].w / 2, 5);
  });

  it("names a mark read on the minute bars by its period", () => {
    const marks = [
      { label: "Spring", date: 20241202, bar_time: 202412021500, price: 10.2, timeframe: "daily" },
      { label: "SC", date: 20241202, bar_time: 202412021030, price: 9.5, timeframe: "60m" },
    ];
    const g = geometry(chart({ marks }), 400, 200);
    expect(g.marks.map((m) => [m.label, m.timeframe])).toEqual([
      ["Spring", "daily"],
      ["SC 60m", "60m"],
    ]);
    expect(g.marks[1].x).toBeCloseTo(g.candles[0].x + g.candles[0].w / 2, 5);
  });

  it("keeps only the last bars asked for", () => {
    const g = geometry(chart(), 400, 200, 2);
    expect(g.candles.map((c) => c.time)).toEqual([202412021400, 202412021500]);
  });
});

describe("texts", () => {
  it("says which marks are daily-only, in both languages", () => {
    const zh = noteTexts(chart().notes, "zh");
    expect(zh.map((n) => n.type)).toEqual(["events_daily_only", "phases_daily_only"]);
    expect(zh[0].text).toContain("日线");
    const en = noteTexts([{ type: "levels_without_common_day" }, { type: "no_bars" }], "en");
    expect(en).toHaveLength(1);
    expect(en[0].text).toContain("unadjusted");
  });

  it("names levels with their timeframe", () => {
    expect(levelLabel("support", "daily", 9.6, "en")).toBe("support 9.6 (daily)");
    expect(levelLabel("cost", "holding", 10.2, "zh")).toBe("成本 10.2 (持仓)");
  });

  it("words the sync offer and its progress", () => {
    expect(minuteText("en", "noBars", { p: "60m" })).toBe("No 60m bars are cached yet.");
    expect(syncLine({ type: "started", code: "600519", done: 0, total: 1 }, "60m", "en")).toBe("Syncing 600519's 60m bars…");
    const done = syncLine(
      {
        type: "finished",
        done: 1,
        total: 1,
        outcome: {
          code: "600519",
          period: "60m",
          coverage: null,
          status: { type: "updated", source: "tencent", new_bars: 8, fetched: 8, unfinished: 0, rejected: [], failed_before: [] },
        },
      },
      "60m",
      "zh",
    );
    expect(done).toBe("600519 60m：新增 8 根K线（来自 tencent）");
    const failed = syncLine({ type: "finished", done: 1, total: 1, outcome: { code: "600519", period: "5m", coverage: null, status: { type: "failed", error: "tencent: HTTP 500" } } }, "5m", "en");
    expect(failed).toBe("600519 5m: tencent: HTTP 500");
  });
});
