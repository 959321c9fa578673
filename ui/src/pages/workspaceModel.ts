// The portfolio and overview pages' logic, pure so it is tested without a webview: the
// form → edit conversion (numbers only; every rule is the backend's), error wording, and
// the newest screen task.
import type { CommandError, PortfolioEdit, TaskInfo } from "../bindings";
import type { WorkspaceKey } from "./workspaceText";

type T = (k: WorkspaceKey, vars?: Record<string, string | number>) => string;

export type PositionForm = { code: string; shares: string; cost: string; buyDate: string };

/** A number typed by the user, or null when it is not one ("" counts as not given). */
export function parseNumber(s: string): number | null {
  const t = s.trim().replace(/,/g, "");
  if (t === "") return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}

/**
 * The edit a form stands for: `add` for a new position, `update` of shares/cost when
 * `editing` names the row. Text that is no number is said here; whether the number is
 * allowed (positive shares, positive cost, a real date) is the backend's call.
 */
export function formToEdit(form: PositionForm, editing: string | null, t: T): PortfolioEdit | string {
  const shares = parseNumber(form.shares);
  const cost = parseNumber(form.cost);
  if (form.shares.trim() !== "" && shares === null) return t("pfNotNumber", { field: t("pfShares") });
  if (form.cost.trim() !== "" && cost === null) return t("pfNotNumber", { field: t("pfCost") });
  if (editing !== null) {
    return { type: "update", code: editing, shares: shares === null ? null : Math.trunc(shares), cost_price: cost };
  }
  if (shares === null) return t("pfNotNumber", { field: t("pfShares") });
  if (cost === null) return t("pfNotNumber", { field: t("pfCost") });
  return { type: "add", code: form.code.trim(), shares: Math.trunc(shares), cost_price: cost, buy_dt: form.buyDate.trim() };
}

// `update_portfolio`'s refusals (wyckoff-market portfolio.rs) are written in Chinese for
// the model; the English page shows them translated. A message not listed here is shown
// as it came.
const REFUSALS_EN: Record<string, string> = {
  "shares 必须大于 0": "Shares must be greater than 0",
  "cost_price 必须大于 0": "Cost must be greater than 0",
  "free_cash 不能为负数": "Free cash cannot be negative",
  "缺少建仓日 buy_dt，请询问用户后再写入": "The buy date is missing",
  "buy_dt 必须是合法日期 YYYYMMDD 或 YYYY-MM-DD": "The buy date must be a real date, YYYY-MM-DD or YYYYMMDD",
  "持仓不存在，无法 update；请改用 add 并提供建仓日 buy_dt": "There is no such position to edit; add it with a buy date",
  "持仓已存在，无法 add；请改用 update": "The position already exists; edit it instead",
  "持仓不存在，无法 remove": "There is no such position to remove",
  "无效的股票代码：A股用6位数字，如 600519、600519.SH 或 sh600519": "Not a stock code: A-shares use 6 digits, e.g. 600519, 600519.SH or sh600519",
};

export function workspaceErrorText(err: CommandError, t: T, lang: string = "zh"): string {
  switch (err.kind) {
    case "offline":
      return t("errOffline");
    case "not_found":
      return err.code === null ? err.message : t("errUnknownCode", { code: err.code });
    // A sync the sources failed: the code, and the message says why.
    case "unavailable":
      return err.code === null ? err.message : t("errSyncFailed", { code: err.code, message: err.message });
    case "invalid_input":
      return lang === "en" && Object.hasOwn(REFUSALS_EN, err.message) ? REFUSALS_EN[err.message] : err.message;
    default:
      return err.message;
  }
}

/** The newest finished screen (what the overview links to). */
export function lastScreen(tasks: TaskInfo[]): TaskInfo | null {
  const done = tasks.filter((x) => x.tool_name === "screen_stocks" && x.status === "completed");
  done.sort((a, b) => (a.started_at < b.started_at ? 1 : a.started_at > b.started_at ? -1 : 0));
  return done[0] ?? null;
}

/** Red up, green down (A-share convention). */
export function pnlClass(n: number | null): string | undefined {
  return n === null || n === 0 ? undefined : n > 0 ? "up" : "down";
}

/** `YYYY-MM-DD` of `iso` moved back `months` months (for the backtest's default start). */
export function monthsBefore(iso: string, months: number): string {
  const [y, m, d] = iso.split("-").map(Number);
  const total = y * 12 + (m - 1) - months;
  const year = Math.floor(total / 12);
  const month = (total % 12) + 1;
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const day = Math.min(d, last);
  return `${year}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}

/** Today's date in the local calendar, YYYY-MM-DD (the form's default buy date). */
export function todayIso(now: Date): string {
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, "0")}-${String(now.getDate()).padStart(2, "0")}`;
}
