import { describe, expect, it } from "vitest";
import type { FillRow } from "../bindings";
import { badLines, draftToFill, newestFirst, priceText } from "./journalModel";
import { journalText } from "./text";

const t = journalText("zh");
const draft = { side: "buy" as const, code: "000001", date: "2020-01-02", price: "16", shares: "1000", fees: "" };

describe("journal model", () => {
  it("turns the form into a FillForm; empty fees are the backend's to compute", () => {
    expect(draftToFill(draft, t)).toEqual({ side: "buy", code: "000001", date: "2020-01-02", price: 16, shares: 1000, fees: null });
    expect(draftToFill({ ...draft, fees: "0" }, t)).toMatchObject({ fees: 0 });
    expect(draftToFill({ ...draft, shares: "" }, t)).toBe("请填写股数");
    expect(draftToFill({ ...draft, fees: "five" }, t)).toBe("费用（元，可空） 必须是数字");
    expect(draftToFill({ ...draft, code: " " }, t)).toBe("请填写代码");
  });

  it("reads every bad line of a refused import, and none from a refusal about the whole file", () => {
    expect(badLines("1 行有错误，未导入任何记录：第 4 行 成交数量必须是正整数")).toEqual([{ line: 4, message: "成交数量必须是正整数" }]);
    expect(badLines("2 行有错误，未导入任何记录：第 4 行 a；b；第 12 行 c")).toEqual([
      { line: 4, message: "a；b" },
      { line: 12, message: "c" },
    ]);
    expect(badLines("文件不是 UTF-8 或 GBK 编码的文本")).toEqual([]);
  });

  it("orders the fills newest first, same-day fills by the later id", () => {
    const f = (id: number, date: string) => ({ id, date }) as FillRow;
    expect(newestFirst([f(1, "2020-01-02"), f(3, "2020-03-02"), f(2, "2020-03-02")]).map((x) => x.id)).toEqual([3, 2, 1]);
  });

  it("shows a fill price to the decimals it has, at least two", () => {
    expect(priceText(14)).toBe("14.00");
    expect(priceText(3.456)).toBe("3.456");
    expect(priceText(1234.5)).toBe("1234.50");
    expect(priceText(null)).toBe("—");
  });
});
