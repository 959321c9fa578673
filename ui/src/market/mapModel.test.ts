import { describe, expect, it } from "vitest";
import { isoDay, ladderGroups, moodFigures, noteText, sealRateText } from "./mapModel";
import { limitDay } from "./fixtures";
import { mapText } from "./text";

describe("the mood line and the ladder", () => {
  it("groups the ladder by board height, the highest first, keeping the engine's order", () => {
    const groups = ladderGroups(limitDay().ladder);
    expect(groups.map((g) => [g.boards, g.stocks.map((s) => s.code)])).toEqual([
      [2, ["000001"]],
      [1, ["000338", "601318"]],
    ]);
    expect(ladderGroups([])).toEqual([]);
  });

  it("words each figure of the day in both languages", () => {
    expect(moodFigures(limitDay(), mapText("zh"))).toEqual([
      ["limit-up", "涨停", "3"],
      ["limit-down", "跌停", "1"],
      ["failed", "炸板", "2"],
      ["highest-board", "最高板", "2"],
      ["premium", "涨停溢价", "+1.23%"],
      ["seal-rate", "封板率", "60.0%"],
    ]);
    const en = moodFigures(limitDay({ premium_pct: null, seal_rate: null }), mapText("en"));
    expect(en.map(([, label, value]) => `${label} ${value}`)).toEqual(["Limit-up 3", "Limit-down 1", "Failed boards 2", "Highest board 2", "Limit-up premium —", "Seal rate —"]);
    expect(sealRateText(1)).toBe("100.0%");
  });

  it("says each note on the inputs", () => {
    const zh = mapText("zh");
    expect(noteText({ type: "no_industries" }, zh)).toContain("wyckoff data industries import PATH");
    expect(noteText({ type: "raw_closes_missing", previous_scale: 2, adjusted: 1 }, zh)).toContain("2 只按前一日比例判断，1 只");
    expect(noteText({ type: "industries_from_later_load", stocks: 8 }, mapText("en"))).toBe("Industries of 8 stocks from a membership loaded after the day");
    expect(isoDay(20200616)).toBe("2020-06-16");
  });
});
