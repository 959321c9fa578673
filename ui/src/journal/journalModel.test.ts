import { describe, expect, it } from "vitest";
import type { EntryKind, EntryRow, FillRow } from "../bindings";
import { activityEntries, badLines, balanceRow, draftToFill, entryCode, entryDetail, entrySharesIn, newestFirst, priceText } from "./journalModel";
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

  it("keeps the entries that are not trades, newest first", () => {
    const e = (id: number, date: string, kind: EntryKind) => ({ id, date, kind }) as EntryRow;
    const fees = { commission_fen: 500, stamp_fen: 0, transfer_fen: 13 };
    const entries = [
      e(1, "2020-06-01", { type: "cash_in", amount_fen: 5_000_000 }),
      e(2, "2020-06-02", { type: "buy", code: "000001", shares: 1000, price_e6: 13_000_000, amount_fen: 1_300_000, fees }),
      e(3, "2020-06-02", { type: "note", text: "指定交易" }),
      e(4, "2020-06-05", { type: "opening", code: "600000", shares: 100, price_e6: 10_000_000 }),
      e(5, "2020-06-05", { type: "dividend", code: "000001", amount_fen: 14_380 }),
      e(6, "2020-06-03", { type: "sell", code: "000001", shares: 100, price_e6: 13_000_000, amount_fen: 130_000, fees }),
    ];
    expect(activityEntries(entries).map((x) => x.id)).toEqual([5, 3, 1]);
  });

  it("says an entry's code, the shares it brings in and what else it carries", () => {
    expect(entryCode({ type: "cash_out", amount_fen: 1 })).toBe("");
    expect(entryCode({ type: "tax", code: null, amount_fen: 1 })).toBe("");
    expect(entryCode({ type: "tax", code: "600036", amount_fen: 1 })).toBe("600036");
    expect(entryCode({ type: "repo_lend", code: "204001", amount_fen: 1 })).toBe("204001");
    expect(entrySharesIn({ type: "bonus_shares", code: "600036", shares: 300 })).toBe(300);
    expect(entrySharesIn({ type: "rights_issue", code: "600036", shares: 130, price_e6: 8_500_000, amount_fen: 110_500 })).toBe(130);
    expect(entrySharesIn({ type: "dividend", code: "600036", amount_fen: 1 })).toBeNull();
    expect(entryDetail({ type: "rights_issue", code: "600036", shares: 130, price_e6: 8_500_000, amount_fen: 110_500 }, t)).toBe("配股价 8.50");
    expect(entryDetail({ type: "repo_return", code: "204001", principal_fen: 10_000_000, interest_fen: 5_479 }, t)).toBe("本金 100,000.00 + 利息 54.79");
    expect(entryDetail({ type: "note", text: "指定交易" }, t)).toBe("指定交易");
    expect(entryDetail({ type: "interest", amount_fen: 12 }, t)).toBe("");
  });

  it("shows a compared balance in its own unit with the gap statement − ledger", () => {
    const cash = balanceRow({ kind: "cash", code: null, date: "2020-06-03", line: 2, statement: 3_699_487, derived: 3_700_000 });
    expect(cash).toMatchObject({ code: "", statement: "36,994.87", derived: "37,000.00", gap: "-5.13", agrees: false });
    const shares = balanceRow({ kind: "shares", code: "000001", date: "2020-06-03", line: 2, statement: 1600, derived: 1500 });
    expect(shares).toMatchObject({ code: "000001", statement: "1,600", derived: "1,500", gap: "+100", agrees: false });
    expect(balanceRow({ kind: "shares", code: "000001", date: "2020-06-02", line: 3, statement: 1000, derived: 1000 })).toMatchObject({ gap: "", agrees: true });
  });
});
