// The journal's page logic, pure so it is tested without a webview: the fill form → the
// command's FillForm (numbers only; every rule is the backend's), money in fen as yuan,
// the bad lines of a refused import, the sparkline of the daily value, the ledger's
// entries that are not trades and the reconciliation's rows.
import type { CommandError, DayValue, Difference, EntryKind, EntryRow, FillForm, FillRow } from "../bindings";
import { formatMoney, formatShares } from "../chat/portfolio";
import type { JournalKey } from "./text";

type T = (k: JournalKey, vars?: Record<string, string | number>) => string;

export type FillDraft = { side: "buy" | "sell"; code: string; date: string; price: string; shares: string; fees: string };

/** A number typed by the user; `null` when empty, `NaN` when it is not one. */
function parsed(s: string): number | null {
  const v = s.trim().replace(/,/g, "");
  if (v === "") return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : Number.NaN;
}

/**
 * The fill a draft stands for, or what is wrong with its text. Empty fees → `null`: the
 * backend computes them by the backtest's rules. Whether a figure is allowed (a positive
 * price, whole shares, a sale within the holding) is the backend's call.
 */
export function draftToFill(d: FillDraft, t: T): FillForm | string {
  if (d.code.trim() === "") return t("needField", { field: t("code") });
  if (d.date.trim() === "") return t("needField", { field: t("date") });
  const price = parsed(d.price);
  const shares = parsed(d.shares);
  const fees = parsed(d.fees);
  if (price === null) return t("needField", { field: t("price") });
  if (Number.isNaN(price)) return t("notNumber", { field: t("price") });
  if (shares === null) return t("needField", { field: t("shares") });
  if (Number.isNaN(shares)) return t("notNumber", { field: t("shares") });
  if (fees !== null && Number.isNaN(fees)) return t("notNumber", { field: t("fees") });
  return { side: d.side, code: d.code.trim(), date: d.date.trim(), price, shares: Math.trunc(shares), fees };
}

/** Fen as yuan with two decimals and separators; "—" when unknown. */
export function fen(n: number | null | undefined): string {
  return n == null ? "—" : formatMoney(n / 100);
}

/** A fill price: at least two decimals, up to the millionth it is stored to (14 → "14.00", 3.456 → "3.456"). */
export function priceText(n: number | null): string {
  return n === null ? "—" : n.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 6, useGrouping: false });
}

/** The journal's refusals are worded in Chinese (for the CLI and the model); the English page says the fixed ones in English. */
const REFUSALS_EN: Record<string, string> = {
  "成交数量必须是正整数": "Shares must be a positive whole number",
  "成交价格必须大于 0": "The price must be greater than 0",
  "费用不能为负数": "Fees cannot be negative",
  "成交日期无效，请用 YYYY-MM-DD": "Not a date: use YYYY-MM-DD",
  "无效的代码：股票、场内基金或债券用6位数字，如 600519、510300": "Not a code: stocks, exchange-traded funds and bonds use 6 digits, e.g. 600519, 510300",
  "缺少股票名称 name": "The stock's name is unknown (not in the stock list)",
  "只能记录买入或卖出": "Only a buy or a sell can be recorded",
};

export function journalErrorText(err: CommandError, lang: string): string {
  switch (err.kind) {
    case "invalid_input":
      return lang === "en" && Object.hasOwn(REFUSALS_EN, err.message) ? REFUSALS_EN[err.message] : err.message;
    case "offline":
      return lang === "en" ? "Offline" : "离线";
    case "not_found":
      if (err.code === null) return err.message;
      return lang === "en" ? `Unknown stock code ${err.code}` : `未知股票代码 ${err.code}`;
    default:
      return err.message;
  }
}

export interface BadLine {
  line: number;
  message: string;
}

/**
 * The lines a refused import names ("N 行有错误，未导入任何记录：第 4 行 …；第 5 行 …");
 * empty when the refusal is about the whole file (no header, not a text file).
 */
export function badLines(message: string): BadLine[] {
  const start = message.indexOf("第 ");
  if (start < 0) return [];
  return message
    .slice(start)
    .split(/；(?=第 \d+ 行)/)
    .flatMap((part) => {
      const m = /^第 (\d+) 行\s*([\s\S]*)$/.exec(part.trim());
      return m ? [{ line: Number(m[1]), message: m[2] }] : [];
    });
}

/** The fills newest first (the report lists them oldest first); same-day fills by id. */
export function newestFirst(fills: FillRow[]): FillRow[] {
  return [...fills].sort((a, b) => (a.date === b.date ? b.id - a.id : a.date < b.date ? 1 : -1));
}

/** Polyline points of the daily market value in a `w`×`h` box (empty below two days). */
export function sparkPoints(values: DayValue[], w: number, h: number): string {
  if (values.length < 2) return "";
  const ys = values.map((v) => v.market_value_fen);
  const lo = Math.min(...ys);
  const hi = Math.max(...ys);
  const span = hi - lo || 1;
  return ys
    .map((y, i) => {
      const x = (i / (ys.length - 1)) * w;
      const py = h - ((y - lo) / span) * h;
      return `${x.toFixed(1)},${py.toFixed(1)}`;
    })
    .join(" ");
}

/** The kinds the fills table lists; every other entry is account activity. */
const TRADES: ReadonlySet<EntryKind["type"]> = new Set(["buy", "sell", "opening"]);

/** The entries that are not trades (transfers, dividends, interest, taxes, bonus and rights shares, repos, notes), newest first. */
export function activityEntries(entries: EntryRow[]): EntryRow[] {
  return entries
    .filter((e) => !TRADES.has(e.kind.type))
    .sort((a, b) => (a.date === b.date ? b.id - a.id : a.date < b.date ? 1 : -1));
}

/** The security an entry is about ("" for a transfer, interest, a note). */
export function entryCode(kind: EntryKind): string {
  switch (kind.type) {
    case "cash_in":
    case "cash_out":
    case "interest":
    case "note":
      return "";
    case "tax":
    case "fee":
      return kind.code ?? "";
    default:
      return kind.code;
  }
}

/** The shares an entry moves into the holding (bonus and rights shares), else `null`. */
export function entrySharesIn(kind: EntryKind): number | null {
  return kind.type === "bonus_shares" || kind.type === "rights_issue" ? kind.shares : null;
}

/** What the entry says beyond its kind, cash and shares: a rights issue's price, a repo's principal and interest, a note's text. */
export function entryDetail(kind: EntryKind, t: T): string {
  switch (kind.type) {
    case "rights_issue":
      return t("detailRights", { price: priceText(kind.price_e6 / 1_000_000) });
    case "repo_lend":
      return t("detailRepoLend", { amount: fen(kind.amount_fen) });
    case "repo_return":
      return t("detailRepoReturn", { principal: fen(kind.principal_fen), interest: fen(kind.interest_fen) });
    case "subscription_paid":
      return t("detailSubscriptionPaid", { amount: fen(kind.amount_fen) });
    case "subscription_released":
      return t("detailSubscriptionReleased", { amount: fen(kind.amount_fen) });
    case "note":
      return kind.text;
    default:
      return "";
  }
}

/** One compared balance as the page shows it: what it is, the two figures and their gap, in the balance's unit. */
export interface BalanceRow {
  key: string;
  kind: Difference["kind"];
  /** The holding's code, "" for cash. */
  code: string;
  date: string;
  line: number;
  statement: string;
  derived: string;
  /** statement − ledger, formatted; "" when they agree. */
  gap: string;
  agrees: boolean;
}

function shares(n: number): string {
  return formatShares(n);
}

export function balanceRow(d: Difference): BalanceRow {
  const f = d.kind === "cash" ? fen : shares;
  const gap = d.statement - d.derived;
  return {
    key: `${d.kind}-${d.code ?? ""}-${d.date}`,
    kind: d.kind,
    code: d.code ?? "",
    date: d.date,
    line: d.line,
    statement: f(d.statement),
    derived: f(d.derived),
    gap: gap === 0 ? "" : `${gap > 0 ? "+" : ""}${f(gap)}`,
    agrees: gap === 0,
  };
}
