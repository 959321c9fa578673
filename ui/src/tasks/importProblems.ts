// A rejected CSV file's problems (the backend's code + figures) worded in the window's
// language. `message` is the backend's English wording, used for a problem this build
// does not know.
import type { Language } from "../bindings";

type BarFault =
  | "invalid_date"
  | "non_finite_price"
  | "non_positive_price"
  | "high_below_body"
  | "low_above_body"
  | "bad_volume"
  | "bad_amount"
  | "bad_turnover";

export type BadRow = { line: number; message: string } & (
  | { problem: "unreadable"; error: string }
  | { problem: "not_utf8"; valid_up_to: number }
  | { problem: "empty_file" }
  | { problem: "header_is_data" }
  | { problem: "missing_columns"; columns: string[] }
  | { problem: "no_data_rows" }
  | { problem: "field_count"; fields: number; header: number }
  | { problem: "unknown_code"; code: string; reason: string }
  | { problem: "bad_date"; value: string }
  | { problem: "future_date"; date: string }
  | { problem: "not_a_number"; column: string; value: string }
  | { problem: "impossible_bar"; fault: BarFault; open: number; high: number; low: number; close: number; volume: number }
  | { problem: "duplicate_date"; date: string; code: string; first_line: number }
);

const HEADER = "date,code,open,high,low,close,volume,amount";

const FAULTS: Record<BarFault, [zh: string, en: string]> = {
  invalid_date: ["日期无效", "invalid date"],
  non_finite_price: ["价格不是有限数", "non-finite price"],
  non_positive_price: ["价格不大于 0", "non-positive price"],
  high_below_body: ["最高价低于开盘/收盘/最低价", "high below open/close/low"],
  low_above_body: ["最低价高于开盘/收盘价", "low above open/close"],
  bad_volume: ["成交量为负或不是有限数", "negative or non-finite volume"],
  bad_amount: ["成交额为负或不是有限数", "negative or non-finite amount"],
  bad_turnover: ["换手率为负或不是有限数", "negative or non-finite turnover"],
};

export function badRowText(row: BadRow, lang: Language): string {
  const zh = lang === "zh";
  switch (row.problem) {
    case "unreadable":
      return zh ? `无法读取：${row.error}` : `cannot read: ${row.error}`;
    case "not_utf8":
      return zh
        ? `不是 UTF-8 文本（第 ${row.valid_up_to + 1} 个字节起）；请把文件另存为 UTF-8`
        : `not UTF-8 text (from byte ${row.valid_up_to + 1}); save the file as UTF-8`;
    case "empty_file":
      return zh ? `文件是空的；第一行须是表头：${HEADER}（amount 可省略）` : `file is empty; a header row is required: ${HEADER} (optional)`;
    case "header_is_data":
      return zh
        ? `第一行是数据，缺少表头：${HEADER}（amount 可省略）`
        : `the first row is data, but a header row is required: ${HEADER} (optional)`;
    case "missing_columns":
      return zh ? `表头缺少列：${row.columns.join(", ")}` : `header lacks column(s) ${row.columns.join(", ")}`;
    case "no_data_rows":
      return zh ? "表头之后没有数据行" : "no data rows after the header";
    case "field_count":
      return zh ? `有 ${row.fields} 个字段，表头有 ${row.header} 个` : `${row.fields} field(s), the header has ${row.header}`;
    case "unknown_code":
      return zh ? `无法识别的股票代码 "${row.code}"` : `unknown code "${row.code}": ${row.reason}`;
    case "bad_date":
      return zh ? `日期 "${row.value}" 不是 YYYY-MM-DD 或 YYYYMMDD` : `date "${row.value}" is not YYYY-MM-DD or YYYYMMDD`;
    case "future_date":
      return zh ? `日期 ${row.date} 在未来` : `date ${row.date} is in the future`;
    case "not_a_number":
      return zh ? `${row.column} 列的 "${row.value}" 不是数字` : `${row.column} "${row.value}" is not a number`;
    case "impossible_bar": {
      const fault = FAULTS[row.fault];
      if (!fault) return row.message;
      const figures = zh
        ? `开 ${row.open}，高 ${row.high}，低 ${row.low}，收 ${row.close}，量 ${row.volume}`
        : `open ${row.open}, high ${row.high}, low ${row.low}, close ${row.close}, volume ${row.volume}`;
      return zh ? `${fault[0]}（${figures}）` : `${fault[1]} (${figures})`;
    }
    case "duplicate_date":
      return zh
        ? `${row.code} 的日期 ${row.date} 重复（首次出现在第 ${row.first_line} 行）`
        : `duplicate date ${row.date} for ${row.code} (first on line ${row.first_line})`;
    default:
      return (row as { message: string }).message;
  }
}
