// A backtest's trades under its metrics: each entry and exit opens the
// stock page at that bar, so every figure leads to where it came from.
import { useContext } from "react";
import type { Value } from "../bindings";
import { LanguageContext } from "../i18n";
import { barDate, useOpenStockAt } from "./openAt";

/** Shown at most: a long backtest's full list stays in the task's result. */
const SHOWN = 50;

export interface TradeRow {
  code: string;
  name: string;
  entry: number | null;
  entryPrice: number | null;
  exit: number | null;
  exitPrice: number | null;
  pnlPct: number | null;
}

const num = (v: Value | undefined): number | null => (typeof v === "number" ? v : null);

/** The trades of a backtest result, as the tool reports them (ISO dates). */
export function tradeRows(result: Value): TradeRow[] {
  const trades = (result as Record<string, Value> | null)?.trades;
  if (!Array.isArray(trades)) return [];
  return trades.flatMap((t) => {
    const r = (t ?? {}) as Record<string, Value>;
    if (typeof r.code !== "string") return [];
    return [{ code: r.code, name: typeof r.name === "string" ? r.name : "", entry: barDate(r.entry_date), entryPrice: num(r.entry_price), exit: barDate(r.exit_date), exitPrice: num(r.exit_price), pnlPct: num(r.pnl_pct) }];
  });
}

const iso = (d: number) => `${String(d).slice(0, 4)}-${String(d).slice(4, 6)}-${String(d).slice(6, 8)}`;

export default function TradesTable({ result }: { result: Value }) {
  const lang = useContext(LanguageContext);
  const open = useOpenStockAt();
  const rows = tradeRows(result);
  if (rows.length === 0) return null;
  const en = lang === "en";
  const at = (code: string, d: number | null, price: number | null) =>
    d == null ? (
      "—"
    ) : (
      <button className="link trade-bar" data-at={d} disabled={!open} onClick={() => open?.(code, d)}>
        {iso(d)} @ {price ?? "—"}
      </button>
    );
  return (
    <div className="backtest-trades">
      <h4>{en ? `Trades (${rows.length}; each bar opens the chart there)` : `交易（${rows.length} 笔；点日期在图上打开那根 K 线）`}</h4>
      <table className="screen-table" id="backtest-trades">
        <thead>
          <tr>
            <th>{en ? "Stock" : "股票"}</th>
            <th>{en ? "Entry" : "买入"}</th>
            <th>{en ? "Exit" : "卖出"}</th>
            <th>{en ? "Return" : "收益"}</th>
          </tr>
        </thead>
        <tbody>
          {rows.slice(0, SHOWN).map((r, i) => (
            <tr key={i} data-code={r.code}>
              <td>
                {r.code} {r.name}
              </td>
              <td>{at(r.code, r.entry, r.entryPrice)}</td>
              <td>{at(r.code, r.exit, r.exitPrice)}</td>
              <td>{r.pnlPct == null ? "—" : `${r.pnlPct.toFixed(2)}%`}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
