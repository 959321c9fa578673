import { describe, expect, it } from "vitest";
import { badRowText, type BadRow } from "./importProblems";

// One row per problem the backend sends (crates/market/src/import.rs RowProblem).
const rows: BadRow[] = [
  { line: 0, problem: "unreadable", error: "Permission denied (os error 13)", message: "cannot read: Permission denied (os error 13)" },
  { line: 0, problem: "not_utf8", valid_up_to: 9, message: "not UTF-8 text (from byte 10); save the file as UTF-8" },
  { line: 0, problem: "empty_file", message: "file is empty; a header row is required: date,code,open,high,low,close,volume,amount (optional)" },
  { line: 1, problem: "header_is_data", message: "the first row is data, but a header row is required: date,code,open,high,low,close,volume,amount (optional)" },
  { line: 1, problem: "missing_columns", columns: ["volume", "close"], message: "header lacks column(s) volume, close" },
  { line: 0, problem: "no_data_rows", message: "no data rows after the header" },
  { line: 3, problem: "field_count", fields: 6, header: 7, message: "6 field(s), the header has 7" },
  { line: 4, problem: "unknown_code", code: "999999", reason: "no exchange", message: 'unknown code "999999": no exchange' },
  { line: 5, problem: "bad_date", value: "2024-13-01", message: 'date "2024-13-01" is not YYYY-MM-DD or YYYYMMDD' },
  { line: 6, problem: "future_date", date: "2030-01-02", message: "date 2030-01-02 is in the future" },
  { line: 7, problem: "not_a_number", column: "high", value: "abc", message: 'high "abc" is not a number' },
  {
    line: 8,
    problem: "impossible_bar",
    fault: "high_below_body",
    open: 10,
    high: 9,
    low: 11,
    close: 10,
    volume: 1000,
    message: "high below open/close/low (open 10, high 9, low 11, close 10, volume 1000)",
  },
  { line: 9, problem: "duplicate_date", date: "2024-01-02", code: "600519.SH", first_line: 2, message: "duplicate date 2024-01-02 for 600519.SH (first on line 2)" },
];

describe("badRowText", () => {
  it("words every problem in Chinese with its figures, never the English message", () => {
    for (const row of rows) {
      const zh = badRowText(row, "zh");
      expect(zh, row.problem).not.toBe(row.message);
      expect(zh, row.problem).toMatch(/[\u4e00-\u9fff]/);
    }
    expect(badRowText(rows[4], "zh")).toBe("表头缺少列：volume, close");
    expect(badRowText(rows[11], "zh")).toBe("最高价低于开盘/收盘/最低价（开 10，高 9，低 11，收 10，量 1000）");
    expect(badRowText(rows[12], "zh")).toBe("600519.SH 的日期 2024-01-02 重复（首次出现在第 2 行）");
  });

  it("words them in English with the same figures as the backend", () => {
    for (const row of rows) {
      expect(badRowText(row, "en"), row.problem).toBe(row.message);
    }
  });

  it("falls back to the backend's message for a problem this build does not know", () => {
    const newer = { line: 2, problem: "from_the_future", message: "a newer backend's words" } as unknown as BadRow;
    expect(badRowText(newer, "zh")).toBe("a newer backend's words");
  });
});
