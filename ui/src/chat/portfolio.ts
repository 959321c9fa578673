// Recognises the `portfolio` tool's result (REFERENCE §14.2–14.3, crates/tools/src/portfolio.rs)
// so it can be shown as a table: `mode: "view"` returns `positions[]`, `mode: "diagnose"`
// returns `diagnostics[]` with the engine's health per holding. Nothing is made up: a field
// that is missing or not a finite number stays null and is shown as "—".
import type { Value } from "../bindings";
import { num } from "./diagnosis";

export interface PortfolioRow {
  code: string | null;
  name: string | null;
  shares: number | null;
  cost: number | null;
  /** Set in view mode (YYYY-MM-DD). */
  buyDate: string | null;
  /** The user's own stop in view mode. */
  stop: number | null;
  latestClose: number | null;
  pnlPct: number | null;
  /** Share of the total market value, in percent. */
  weightPct: number | null;
  /** The engine's health label ("🟢健康", …). */
  health: string | null;
  /** The engine's verdict ("观察", "回避", …; `diagnosis_brief.label`). */
  verdict: string | null;
  healthReasons: string[];
  /** Why this holding could not be diagnosed (e.g. no quotes). */
  error: string | null;
}

export interface Portfolio {
  mode: "view" | "diagnose";
  rows: PortfolioRow[];
  freeCash: number | null;
  totalMarketValue: number | null;
  totalAssets: number | null;
  failedCount: number | null;
  dataStatus: string | null;
  asOf: string | null;
  /** The tool's own remarks (an empty portfolio, partial market value). */
  notes: string[];
}

type Obj = { [k: string]: Value };
const isObj = (v: Value | undefined): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const text = (v: Value | undefined): string | null => (typeof v === "string" && v.trim() !== "" ? v : null);
const texts = (v: Value | undefined): string[] => (Array.isArray(v) ? v.flatMap((x) => text(x) ?? []) : []);

function row(r: Obj, mode: Portfolio["mode"]): PortfolioRow {
  const brief = isObj(r.diagnosis_brief) ? r.diagnosis_brief : null;
  return {
    code: text(r.code),
    name: text(r.name),
    shares: num(r.shares),
    // view: the stored position (`cost_price`); diagnose: `cost`
    cost: num(mode === "view" ? (r.cost_price ?? r.cost) : (r.cost ?? r.cost_price)),
    buyDate: text(r.buy_dt),
    stop: num(r.stop_loss),
    latestClose: num(r.latest_close),
    pnlPct: num(r.pnl_pct),
    weightPct: num(r.weight_pct),
    health: text(r.health),
    verdict: brief ? text(brief.label) : null,
    healthReasons: texts(r.health_reasons),
    error: text(r.error),
  };
}

/** The portfolio in a tool result, or null when the result is not one. */
export function asPortfolio(result: Value | null): Portfolio | null {
  if (!isObj(result ?? null)) return null;
  const r = result as Obj;
  const mode = Array.isArray(r.diagnostics) ? "diagnose" : Array.isArray(r.positions) ? "view" : null;
  if (mode === null) return null;
  const list = (mode === "diagnose" ? r.diagnostics : r.positions) as Value[];
  return {
    mode,
    rows: list.filter(isObj).map((x) => row(x, mode)),
    freeCash: num(r.free_cash),
    totalMarketValue: num(r.total_market_value),
    totalAssets: num(r.total_assets),
    failedCount: num(r.failed_count),
    dataStatus: text(r.data_status),
    asOf: text(r.as_of),
    notes: [text(r.message), text(r.market_value_note)].flatMap((n) => n ?? []),
  };
}

/** A sum of money: two decimals with thousands separators; "—" when unknown. */
export function formatMoney(n: number | null): string {
  return n === null ? "—" : n.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

/** A holding cost: two decimals, three when the cost has them (the tool rounds to 3). */
export function formatCost(n: number | null): string {
  if (n === null) return "—";
  const three = n.toFixed(3);
  return three.endsWith("0") ? n.toFixed(2) : three;
}

/** A share count with thousands separators. */
export function formatShares(n: number | null): string {
  return n === null ? "—" : n.toLocaleString("en-US", { maximumFractionDigits: 4 });
}
