import { describe, expect, it } from "vitest";
import type { IndustryBadLine } from "../bindings";
import { badLineText, isoDay, ladderGroups, moodFigures, noteText, sealRateText } from "./mapModel";
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

describe("an industries file's bad lines", () => {
  const bad = (file: string, line: number, problem: Record<string, unknown>): IndustryBadLine => ({ file, line, message: "(English from the desk)", ...problem }) as IndustryBadLine;
  const lines: IndustryBadLine[] = [
    bad("ind.csv", 3, { problem: "bad_code", code: "123456", why: "not_a_stock", reason: "x" }),
    bad("ind.csv", 4, { problem: "field_count", fields: 1, expected: 2 }),
    bad("ind.csv", 6, { problem: "conflict", code: "000001", first_line: 2, first_industry: "银行" }),
    bad("ind.csv", 0, { problem: "empty_file" }),
    bad("/tdx/T0002/hq_cache/block_gn.dat", 2, { problem: "bad_code", code: "60x519", why: "not_six_digits", reason: "x" }),
    bad("/tdx/T0002/hq_cache/tdxhy.cfg", 2, { problem: "bad_market", market: "7" }),
  ];

  it("says each in Chinese, with its line (or block, or the whole file)", () => {
    expect(lines.map((l) => badLineText(l, mapText("zh")))).toEqual([
      "ind.csv 第 3 行：代码 “123456” 不是 A 股股票（基金、债券、ETF、B 股不支持）",
      "ind.csv 第 4 行：有 1 列，应为 2 列",
      "ind.csv 第 6 行：000001 已在第 2 行归入行业 “银行”",
      "ind.csv：文件是空的，应为 code,industry 两列",
      "/tdx/T0002/hq_cache/block_gn.dat 第 2 个板块：代码 “60x519” 不是 6 位数字",
      "/tdx/T0002/hq_cache/tdxhy.cfg 第 2 行：市场字段 “7” 不是 0（深圳）、1（上海）或 2（北京）",
    ]);
  });

  it("and in English, never the desk's English message verbatim", () => {
    const en = lines.map((l) => badLineText(l, mapText("en")));
    expect(en[1]).toBe("ind.csv line 4: 1 field(s), expected 2");
    expect(en[2]).toBe("ind.csv line 6: 000001 is already in industry “银行” on line 2");
    expect(en[4]).toBe("/tdx/T0002/hq_cache/block_gn.dat block 2: code “60x519” is not six digits");
    expect(en.every((l) => !l.includes("(English from the desk)"))).toBe(true);
  });
});
