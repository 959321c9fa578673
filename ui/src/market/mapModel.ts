// What the map page and the overview make of the desk's market map: the ladder grouped by
// board height, the figures of the mood line and the notes in words. Pure, so tested alone.
import type { IndustryBadLine, LadderStock, LimitDay, MapNote } from "../bindings";
import { MISSING, formatPct } from "../chat/diagnosis";

type T = (key: import("./text").MapKey, vars?: Record<string, string | number>) => string;

/** `YYYYMMDD` → `YYYY-MM-DD`. */
export function isoDay(d: number): string {
  const s = String(d);
  return `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}`;
}

/** The ladder by board height, the highest first; within a height, the engine's order. */
export function ladderGroups(ladder: LadderStock[]): { boards: number; stocks: LadderStock[] }[] {
  const groups = new Map<number, LadderStock[]>();
  for (const s of ladder) groups.set(s.boards, [...(groups.get(s.boards) ?? []), s]);
  return [...groups.entries()].sort((a, b) => b[0] - a[0]).map(([boards, stocks]) => ({ boards, stocks }));
}

/** The seal rate as a percentage with one decimal, or the missing mark. */
export function sealRateText(rate: number | null): string {
  return rate === null ? MISSING : `${(rate * 100).toFixed(1)}%`;
}

/** The mood line's figures, in order: [id, label, value]. */
export function moodFigures(l: LimitDay, t: T): [string, string, string][] {
  return [
    ["limit-up", t("limitUp"), String(l.limit_up)],
    ["limit-down", t("limitDown"), String(l.limit_down)],
    ["failed", t("failed"), String(l.failed)],
    ["highest-board", t("highestBoard"), String(l.highest_board)],
    ["premium", t("premium"), formatPct(l.premium_pct)],
    ["seal-rate", t("sealRate"), sealRateText(l.seal_rate)],
  ];
}

/** A note on the map's inputs in the page's language. */
export function noteText(n: MapNote, t: T): string {
  switch (n.type) {
    case "raw_closes_missing":
      return t("noteRaw", { a: n.previous_scale, b: n.adjusted });
    case "names_from_today":
      return t("noteNamesToday", { n: n.stocks });
    case "new_listings_without_limit":
      return t("noteNew", { n: n.stocks });
    case "skipped_stocks":
      return t("noteSkipped", { n: n.stocks });
    case "no_industries":
      return t("noteNoIndustries");
    case "industries_from_later_load":
      return t("noteLaterLoad", { n: n.stocks });
  }
}

/** What is wrong with one line of an industries file, in the page's language. */
export function problemText(p: IndustryBadLine, t: T): string {
  switch (p.problem) {
    case "empty_file":
      return t("pEmptyFile");
    case "no_data_rows":
      return t("pNoDataRows");
    case "missing_columns":
      return t("pMissingColumns", { columns: p.columns.join(", ") });
    case "field_count":
      return t("pFieldCount", { fields: p.fields, expected: p.expected });
    case "bad_code": {
      const key = { not_six_digits: "pBadCodeDigits", format: "pBadCodeFormat", not_a_stock: "pBadCodeNotStock", exchange_mismatch: "pBadCodeExchange" } as const;
      return t(key[p.why], { code: p.code });
    }
    case "empty_name":
      return t("pEmptyName");
    case "name_too_long":
      return t("pNameTooLong", { name: p.name });
    case "conflict":
      return t("pConflict", { code: p.code, first_line: p.first_line, first_industry: p.first_industry });
    case "bad_market":
      return t("pBadMarket", { market: p.market });
    case "unknown_industry_code":
      return t("pUnknownIndustryCode", { code: p.code });
    case "bad_incon_line":
      return t("pBadInconLine");
    case "no_tdx_industry_section":
      return t("pNoTdxIndustrySection");
    case "truncated":
      return t("pTruncated", { blocks: p.blocks, needed: p.needed, bytes: p.bytes });
    case "bad_block_count":
      return t("pBadBlockCount", { block: p.block, stocks: p.stocks });
  }
}

/** A bad line with where it is: line 0 is the file as a whole; a binary block file's
 * `line` is its block's number. */
export function badLineText(b: IndustryBadLine, t: T): string {
  const problem = problemText(b, t);
  if (b.line === 0) return t("badFile", { file: b.file, problem });
  const block = /block_(gn|fg)\.dat$/i.test(b.file);
  return t(block ? "badBlock" : "badLine", { file: b.file, line: b.line, problem });
}
