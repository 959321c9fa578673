import { describe, expect, it } from "vitest";
import type { LiveQuote, StockChart } from "../bindings";
import { liveCandle, liveLine } from "./liveQuote";

function bars(dates: number[]): Pick<StockChart, "bars"> {
  return { bars: { dates } as StockChart["bars"] };
}

function quote(over: Partial<LiveQuote> = {}, last = 13_050_000): LiveQuote {
  return {
    quote: {
      code: "000001",
      name: "平安银行",
      last_e6: last,
      prev_close_e6: 12_890_000,
      open_e6: 12_900_000,
      high_e6: 13_100_000,
      low_e6: 12_880_000,
      volume: 61_234_500,
      amount_fen: 79_512_345_600,
      time: "2020-06-17 10:42:03",
      source: "tencent",
    },
    partial: {
      date: 20200617,
      open_e6: 12_900_000,
      high_e6: 13_100_000,
      low_e6: 12_880_000,
      last_e6: last,
      volume: 61_234_500,
      amount_fen: 79_512_345_600,
      time: "10:42",
      partial: true,
    },
    phase: { type: "morning" },
    live: true,
    ...over,
  };
}

describe("the partial candle", () => {
  it("is today's candle after the last close, labelled partial with the quote time", () => {
    const c = liveCandle(bars([20200615, 20200616]), quote(), "day");
    expect(c).toEqual({
      time: "2020-06-17",
      open: 12.9,
      high: 13.1,
      low: 12.88,
      close: 13.05,
      label: "partial · 10:42",
      up: true,
    });
    expect(liveCandle(bars([20200616]), quote({}, 12_500_000), "day")?.up).toBe(false);
  });

  it("is drawn only while the session is under way, on the day chart, before the close is in", () => {
    const cases: [string, Pick<StockChart, "bars">, LiveQuote | null, string][] = [
      ["no quote", bars([20200616]), null, "day"],
      ["session not under way", bars([20200616]), quote({ live: false, phase: { type: "after_close" } }), "day"],
      ["no trade yet today", bars([20200616]), quote({ partial: null }), "day"],
      ["a weekly chart", bars([20200616]), quote(), "week"],
      ["the close of the day is cached", bars([20200616, 20200617]), quote(), "day"],
    ];
    for (const [why, chart, live, period] of cases) {
      expect(liveCandle(chart, live, period), why).toBeNull();
    }
  });
});

describe("the diagnosis card's live line", () => {
  it("says the price is as of the quote and partial, and the reading is of the last close", () => {
    expect(liveLine(quote(), "en", 20200616)).toBe("Live 13.05 +1.24% as of 10:42, partial — the reading is of the close of 2020-06-16");
    expect(liveLine(quote(), "zh", 20200616)).toBe("盘中 13.05 +1.24%，截至 10:42（未收盘，partial）— 诊断基于 2020-06-16 收盘");
    expect(liveLine(quote({}, 12_500_000), "en", 20200616)).toContain("12.50 -3.03%");
    expect(liveLine(quote({ live: false }), "en", 20200616)).toBeNull();
  });
});
