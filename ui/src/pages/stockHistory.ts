// Stock history as of a date, as the pages word it: a names file's import report (what
// was added, what was already there, every bad line by number), the names a stock carried
// (from which day, marked when the day is only when a stock-list sync first saw the name)
// and the counts on the data panel. Numbers are the backend's; nothing is made up.
import { useContext } from "react";
import type { BadLine, CodeHistory, HistoryCounts, NamesImportReport, StoredSpan } from "../bindings";
import { LanguageContext } from "../i18n";
import { isoDate } from "./stockModel";

const zh = {
  namesTitle: "名称历史（ST 判断按当时的名称）",
  namesPath: "导入名称历史 CSV（文件路径）",
  namesImport: "导入名称",
  namesNeedPath: "请填写名称 CSV 文件的路径",
  namesHint: "每行 date,code,name：自该日起生效的名称（表头可有可无）。有任何错误行时整个文件都不导入，并逐行说明。终端：`wyckoff data names import FILE`。",
  namesImported: "已导入 {path}：{rows} 条名称（{stocks} 只股票）：新增 {added}，更正 {changed}，已有 {unchanged}",
  namesNothingNew: "没有新内容：{path} 中的 {rows} 条名称（{stocks} 只股票）都已记录",
  namesRejected: "{path} 未导入任何内容：{n} 行有错误",
  namesMoreErrors: "……另有 {n} 行错误未列出",
  lineN: "第 {line} 行",
  wholeFile: "文件",
  historyCounts: "{codes} 只股票 · {spans} 段名称（{firstSeen} 段为同步首次见到）· 上市信息 {listings}（退市 {delisted}）· 股票列表快照 {snapshots}",
  historyNone: "没有名称历史：历史选股按今天的名称判断 ST，今天已退市的股票不在其中",
  namesOfStock: "名称",
  firstSeen: "首次见到",
  firstSeenNote: "“首次见到”：这一天是同步第一次看到该名称，实际改名可能更早。",
  noNames: "没有记录的名称：历史日期的 ST 判断用的是今天的名称。",
  listed: "上市 {d}",
  delisted: "退市（最后交易日 {d}）",
  paused: "暂停上市",
};

type Key = keyof typeof zh;

const en: Record<Key, string> = {
  namesTitle: "Name history (ST status as of each date)",
  namesPath: "Import a name-history CSV (file path)",
  namesImport: "Import names",
  namesNeedPath: "Give the path of a names CSV file",
  namesHint: "Rows date,code,name: the name in force from that date (header optional). A file with any bad line imports nothing, and each bad line is named. In a terminal: `wyckoff data names import FILE`.",
  namesImported: "Imported {path}: {rows} name(s) for {stocks} stock(s): {added} new, {changed} corrected, {unchanged} already recorded",
  namesNothingNew: "Nothing new: all {rows} name(s) for {stocks} stock(s) in {path} were already recorded",
  namesRejected: "{path}: nothing imported, {n} bad line(s)",
  namesMoreErrors: "… and {n} more bad line(s) not listed",
  lineN: "line {line}",
  wholeFile: "the file",
  historyCounts: "{codes} stock(s) · {spans} name span(s) ({firstSeen} first seen by a sync) · {listings} listing(s) ({delisted} delisted) · {snapshots} stock-list snapshot(s)",
  historyNone: "No name history: past screens read ST status from today's names, and stocks delisted since are missing from them",
  namesOfStock: "Names",
  firstSeen: "first seen",
  firstSeenNote: "“first seen”: the day a sync first saw the name; the rename may be older.",
  noNames: "No recorded names: ST status on past dates is read from today's name.",
  listed: "listed {d}",
  delisted: "delisted (last trading day {d})",
  paused: "listing paused",
};

export type HistoryKey = Key;
type Vars = Record<string, string | number>;

export function historyText(lang: string, k: Key, vars?: Vars): string {
  let s = (lang === "en" ? en : zh)[k];
  for (const [name, v] of Object.entries(vars ?? {})) s = s.split(`{${name}}`).join(String(v));
  return s;
}

export function useHistoryText() {
  const lang = useContext(LanguageContext);
  return (k: Key, vars?: Vars) => historyText(lang, k, vars);
}

/** The file's name, not its whole path: the report's lines stay short. */
const baseName = (path: string) => path.split(/[\\/]/).filter(Boolean).pop() ?? path;

/** What a bad line is, in the page's language (English: the backend's own message). */
export function badLineText(b: BadLine, lang: string): string {
  if (lang === "en") return b.message;
  switch (b.problem) {
    case "not_utf8":
      return "不是 UTF-8 文本；请另存为 UTF-8";
    case "empty_file":
      return "文件是空的；应为 date,code,name 行";
    case "no_data_rows":
      return "表头之后没有数据行";
    case "missing_columns":
      return `表头缺少列 ${b.columns.join(", ")}（应为 date,code,name，或不要表头）`;
    case "field_count":
      return `有 ${b.fields} 个字段，应为 ${b.expected} 个（date,code,name）`;
    case "bad_date":
      return `日期 "${b.value}" 不是 YYYYMMDD 或 YYYY-MM-DD`;
    case "future_date":
      return `日期 ${b.date} 在未来`;
    case "unknown_code":
      return `未知代码 "${b.code}"：${b.reason}`;
    case "empty_name":
      return "名称为空";
    case "name_too_long":
      return `名称 "${b.name}" 太长，不像股票名称`;
    case "conflict":
      return `${b.code} 在 ${b.date} 已在第 ${b.first_line} 行命名为 "${b.first_name}"`;
  }
}

/** The report as the page shows it: a headline, whether it went through, and the bad lines. */
export function importReportView(r: NamesImportReport, lang: string): { ok: boolean; headline: string; lines: string[] } {
  const path = baseName(r.path);
  if (r.status === "imported") {
    const changed = r.changed + r.confirmed;
    const fresh = r.added + changed;
    const vars = { path, rows: r.rows, stocks: r.stocks, added: r.added, changed, unchanged: r.unchanged };
    return { ok: true, headline: historyText(lang, fresh === 0 ? "namesNothingNew" : "namesImported", vars), lines: [] };
  }
  const sep = lang === "en" ? ": " : "：";
  const lines = r.errors.map((b) => `${b.line === 0 ? historyText(lang, "wholeFile") : historyText(lang, "lineN", { line: b.line })}${sep}${badLineText(b, lang)}`);
  const more = r.bad_lines - r.errors.length;
  if (more > 0) lines.push(historyText(lang, "namesMoreErrors", { n: more }));
  return { ok: false, headline: historyText(lang, "namesRejected", { path, n: r.bad_lines }), lines };
}

export function countsText(c: HistoryCounts, lang: string): string {
  if (c.spans === 0 && c.listings === 0 && c.snapshots === 0) return historyText(lang, "historyNone");
  return historyText(lang, "historyCounts", {
    codes: c.codes_with_names,
    spans: c.spans,
    firstSeen: c.first_seen_spans,
    listings: c.listings,
    delisted: c.delisted,
    snapshots: c.snapshots,
  });
}

/**
 * The names in the order they took effect, a span that only repeats the name already in
 * force left out (a sync seeing the name a dated record already gives says nothing new).
 */
export function nameSpans(h: CodeHistory): StoredSpan[] {
  const out: StoredSpan[] = [];
  for (const s of [...h.spans].sort((a, b) => a.from - b.from)) {
    if (out.length > 0 && out[out.length - 1].name === s.name) continue;
    out.push(s);
  }
  return out;
}

/** The listing's line, when a source gave one. */
export function listingText(h: CodeHistory, lang: string): string | null {
  const l = h.listing;
  if (!l) return null;
  const listed = l.list_date != null ? historyText(lang, "listed", { d: isoDate(l.list_date) }) : null;
  const status =
    l.status === "delisted"
      ? historyText(lang, "delisted", { d: l.delist_date != null ? isoDate(l.delist_date) : "?" })
      : l.status === "paused"
        ? historyText(lang, "paused")
        : null;
  const parts = [listed, status].filter((p): p is string => p !== null);
  return parts.length ? parts.join(" · ") : null;
}
