// The watchlist: last price, change, health and stage per row (from the cache and the
// engine), sortable by any column; a row opens the stock page. While the session is under
// way a live column shows each stock's price as of its quote beside the cached close.
import { useCallback, useContext, useEffect, useMemo, useState } from "react";
import { commands, type WatchlistRow } from "../bindings";
import { LanguageContext } from "../i18n";
import LiveCell from "./LiveCell";
import { liveHeading, useLiveQuotes } from "./liveQuote";
import { useMarketText } from "./marketText";
import { marketErrorText } from "./Stock";
import { isoDate, sortRows, type SortKey } from "./stockModel";

export default function WatchlistPage({ onOpen, onAlert }: { onOpen: (code: string) => void; /** Opens the alert centre with a rule on the whole watchlist. */ onAlert?: () => void }) {
  const t = useMarketText();
  const lang = useContext(LanguageContext);
  const [rows, setRows] = useState<WatchlistRow[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [sort, setSort] = useState<{ key: SortKey; asc: boolean }>({ key: "code", asc: true });

  const load = useCallback(async () => {
    try {
      const r = await commands.watchlist();
      if (r.status === "ok") setRows(r.data);
      else setError(marketErrorText(r.error));
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);
  const codes = useMemo(() => (rows ?? []).map((r) => r.code), [rows]);
  const live = useLiveQuotes(codes, true);

  const remove = async (code: string) => {
    const r = await commands.watchlistRemove(code);
    if (r.status === "ok") setRows(r.data);
    else setError(marketErrorText(r.error));
  };

  const header = (key: SortKey, label: string) => (
    <th aria-sort={sort.key === key ? (sort.asc ? "ascending" : "descending") : "none"}>
      <button className="link" id={`sort-${key}`} onClick={() => setSort((s) => ({ key, asc: s.key === key ? !s.asc : true }))}>
        {label}
        {sort.key === key ? (sort.asc ? " ▲" : " ▼") : ""}
      </button>
    </th>
  );

  return (
    <section className="page" id="page-watchlist">
      <h1>{t("watchTitle")}</h1>
      {onAlert && (
        <button id="watch-alert" onClick={onAlert}>
          {t("alertWatchlist")}
        </button>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {rows && rows.length === 0 && <p id="watch-empty">{t("watchEmpty")}</p>}
      {rows && rows.length > 0 && (
        <table className="table" id="watch-table">
          <thead>
            <tr>
              {header("code", t("code"))}
              <th>{t("name")}</th>
              {header("last", t("last"))}
              {header("change_pct", t("change"))}
              {live.size > 0 && <th id="watch-live-head">{liveHeading(lang === "en" ? "en" : "zh")}</th>}
              {header("health", t("health"))}
              {header("stage", t("stage"))}
              <th>{t("asOf")}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {sortRows(rows, sort.key, sort.asc).map((r) => (
              <tr key={r.code} className="watch-row" data-code={r.code}>
                <td>
                  <button className="link" onClick={() => onOpen(r.code)}>
                    {r.code}
                  </button>
                </td>
                <td>{r.name ?? "—"}</td>
                <td>{r.last ?? "—"}</td>
                <td className={r.change_pct == null ? "" : r.change_pct >= 0 ? "up" : "down"}>{r.change_pct == null ? "—" : `${r.change_pct.toFixed(2)}%`}</td>
                {live.size > 0 && <LiveCell quote={live.get(r.code)} className="watch-live" />}
                <td>{r.health ?? "—"}</td>
                <td>{r.stage ?? "—"}</td>
                <td className={r.data_status === "ok" ? "" : "warn"}>
                  {r.as_of != null ? isoDate(r.as_of) : "—"} {r.data_status === "ok" ? "" : `(${r.data_status})`}
                </td>
                <td>
                  <button onClick={() => void remove(r.code)}>{t("remove")}</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
