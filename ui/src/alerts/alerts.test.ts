import { describe, expect, it } from "vitest";
import type { AlertCondition, AlertFigures, FiredAlert } from "../bindings";
import { EMPTY_RULE, alertsText, barDate, buildRule, conditionText, figuresText, unseen } from "./alerts";

const zh = alertsText("zh");
const en = alertsText("en");

describe("alerts in words", () => {
  it("words each condition in both languages", () => {
    const cases: [AlertCondition, string, string][] = [
      [{ type: "price_above", level: 12.5 }, "收盘价 ≥ 12.50", "close ≥ 12.50"],
      [{ type: "change_below", pct: -5 }, "日涨跌幅 ≤ -5%", "day change ≤ -5%"],
      [{ type: "volume_ratio", k: 2 }, "成交量 ≥ 20 日均量的 2 倍", "volume ≥ 2× the 20-day average"],
      [{ type: "event", event: "Spring" }, "威科夫事件 Spring", "Wyckoff event Spring"],
      [{ type: "event", event: null }, "出现任意威科夫事件", "any Wyckoff event"],
      [{ type: "phase_change" }, "阶段变化", "phase change"],
      [{ type: "target_reached" }, "收盘价达到持仓目标价", "close at or above the holding's target"],
    ];
    for (const [c, inZh, inEn] of cases) {
      expect(conditionText(c, zh)).toBe(inZh);
      expect(conditionText(c, en)).toBe(inEn);
    }
  });

  it("quotes the figures that fired it as the backend gave them", () => {
    const cases: [AlertFigures, string][] = [
      [{ type: "volume_ratio", volume: 3_000_000, avg_volume_20: 1_000_000, ratio: 3, k: 2 }, "volume 3000000 = 3× the 20-day average 1000000"],
      [{ type: "change_above", change_pct: 9.98, threshold_pct: 5, close: 11.02, prev_close: 10.02 }, "day change 9.98% (close 11.02, previous 10.02)"],
      [{ type: "event", events: [{ event: "SOS", schematic: "accumulation", bar_date: "2020-03-02", price: 14.1, known_on: "2020-03-02" }] }, "SOS (2020-03-02) known on 2020-03-02 at 14.10"],
      [{ type: "phase_change", from: null, to: { schematic: "accumulation", phase: "B" }, prev_date: "2020-03-01" }, "none → accumulation B (previous close 2020-03-01)"],
      [{ type: "target_reached", close: 23.22, target: 23 }, "close 23.22, target 23"],
    ];
    for (const [f, want] of cases) expect(figuresText(f, en)).toBe(want);
  });

  it("says an intraday firing's price is the last quote and its volume the day's pace", () => {
    const cases: [AlertFigures, string, string][] = [
      [{ type: "price_above", level: 13, close: 13.05 }, "last 13.05, level 13", "现价 13.05，阈值 13"],
      [{ type: "volume_ratio", volume: 204_115_000, avg_volume_20: 68_000_000, ratio: 3, k: 2 }, "volume at today's pace 204115000 = 3× the 20-day average 68000000", "按时段折算全天成交量 204115000，为 20 日均量 68000000 的 3 倍"],
      [{ type: "change_above", change_pct: 1.24, threshold_pct: 1, close: 13.05, prev_close: 12.89 }, "day change 1.24% (last 13.05, previous 12.89)", "涨跌幅 1.24%（现价 13.05，前收 12.89）"],
      [{ type: "stop_loss", close: 12.1, stop_loss: 12.2 }, "last 12.10, stop 12.20", "现价 12.10，止损 12.20"],
      [{ type: "target_reached", close: 23.22, target: 23 }, "last 23.22, target 23", "现价 23.22，目标 23"],
    ];
    for (const [f, inEn, inZh] of cases) {
      expect(figuresText(f, en, true)).toBe(inEn);
      expect(figuresText(f, zh, true)).toBe(inZh);
    }
  });

  it("reads a bar date and counts what was not seen", () => {
    expect(barDate("2020-03-02")).toBe(20200302);
    expect(barDate("yesterday")).toBeNull();
    const a = (id: number) => ({ id }) as FiredAlert;
    expect(unseen([a(3), a(5), a(8)], 5)).toBe(1);
    expect(unseen([], 0)).toBe(0);
  });
});

describe("the add form", () => {
  it("builds what the backend takes, leaving codes and ranges to it", () => {
    expect(buildRule({ ...EMPTY_RULE, code: " 600519 ", kind: "price_below", value: "1500" })).toEqual({
      ok: true,
      target: { type: "stock", code: "600519" },
      condition: { type: "price_below", level: 1500 },
      cooldown: 1,
    });
    expect(buildRule({ ...EMPTY_RULE, target: "watchlist", kind: "event", event: "Spring", cooldown: "" })).toEqual({
      ok: true,
      target: { type: "watchlist" },
      condition: { type: "event", event: "Spring" },
      cooldown: null,
    });
    expect(buildRule({ ...EMPTY_RULE, target: "portfolio", kind: "health_change" })).toMatchObject({ ok: true, condition: { type: "health_change" } });
  });

  it("says what is missing", () => {
    expect(buildRule({ ...EMPTY_RULE, kind: "volume_ratio", value: "2" })).toEqual({ ok: false, problem: "needCode" });
    expect(buildRule({ ...EMPTY_RULE, code: "600519", kind: "volume_ratio", value: "x" })).toEqual({ ok: false, problem: "needValue" });
    expect(buildRule({ ...EMPTY_RULE, code: "600519", value: "3", cooldown: "1.5" })).toEqual({ ok: false, problem: "needCooldown" });
  });
});
