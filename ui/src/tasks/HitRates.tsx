// Forward tracking under a screen result: how often each trigger's past
// candidates gained after fees, 1–20 trading days on, with counts. The backend computes
// every figure (wyckoff_track); this only lays them out. A cell opens what it counts:
// the review page filters its list to those signals; elsewhere (the
// screen result) they are listed under the table, each opening its stock.
import { useContext, useEffect, useState } from "react";
import { commands, type HitRate, type Language as Lang, type TrackedScreen, type TrackStats } from "../bindings";
import { LanguageContext } from "../i18n";
import { isoDate } from "../pages/stockModel";
import { useOpenStockAt } from "../review/openAt";
import { countedRows, countedSummary, groupLabel, reviewText, type SignalFilter } from "../review/reviewModel";

export type HitRow = { group: string; key: string; cells: string[] };

/** "61% of 143" / "61%（143 次）"; pending-only and empty groups say so. */
export function hitCell(r: HitRate | undefined, lang: Lang): string {
  if (!r) return "—";
  if (r.hit_rate_pct === null) return r.pending > 0 ? (lang === "en" ? `${r.pending} pending` : `${r.pending} 待定`) : "—";
  const pct = Math.round(r.hit_rate_pct);
  return lang === "en" ? `${pct}% of ${r.signals}` : `${pct}%（${r.signals} 次）`;
}

/** The groups shown, in order, by the backend's key: all signals, each trigger, each 水温. */
function hitGroups(stats: TrackStats): { group: HitRate["group"]; key: string }[] {
  const keys: { group: HitRate["group"]; key: string }[] = [];
  for (const r of stats.rates) {
    if (r.group === "track") continue;
    if (!keys.some((k) => k.group === r.group && k.key === r.key)) keys.push({ group: r.group, key: r.key });
  }
  return keys;
}

const rateOf = (stats: TrackStats, group: HitRate["group"], key: string, h: number) =>
  stats.rates.find((r) => r.group === group && r.key === key && r.horizon === h);

/** All signals first, then each trigger, then 水温 groups; one cell per horizon. */
export function hitRows(stats: TrackStats, lang: Lang): HitRow[] {
  return hitGroups(stats).map(({ group, key }) => ({
    group,
    key: groupLabel(group, key, lang),
    cells: stats.horizons.map((h) => hitCell(rateOf(stats, group, key, h), lang)),
  }));
}

/** What a cell counts, or null for a cell with nothing behind it. */
export function cellFilter(r: HitRate | undefined): SignalFilter | null {
  if (!r) return null;
  if (r.signals > 0) return { group: r.group, key: r.key, horizon: r.horizon, status: "done" };
  if (r.pending > 0) return { group: r.group, key: r.key, horizon: r.horizon, status: "pending" };
  return null;
}

const same = (a: SignalFilter | null | undefined, b: SignalFilter) =>
  !!a && a.group === b.group && a.key === b.key && a.horizon === b.horizon && a.status === b.status;

/** A cell's counted signals under the table (where no list of signals is on the page). */
function CountedSignals({ filter }: { filter: SignalFilter }) {
  const lang = useContext(LanguageContext);
  const open = useOpenStockAt();
  const [screens, setScreens] = useState<TrackedScreen[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    void commands.trackScreens().then((r) => {
      if (!live) return;
      if (r.status === "ok") setScreens(r.data);
      else setError(r.error.message);
    });
    return () => {
      live = false;
    };
  }, []);
  if (error) return <p className="error">{error}</p>;
  if (!screens) return <p className="muted">…</p>;
  const rows = countedRows(screens, filter, lang);
  const col = screens.find((s) => s.candidates.length > 0)?.candidates[0].outcomes.findIndex((o) => o.horizon === filter.horizon) ?? -1;
  const shown = rows.slice(0, 50);
  return (
    <div className="hit-counted" id="hit-counted">
      <p className="result-meta">{countedSummary(screens, filter, rows, lang)}</p>
      <table className="screen-table">
        <tbody>
          {shown.map((r) => {
            const c = col >= 0 ? r.cells[col] : undefined;
            return (
              <tr key={r.key} data-code={r.code} data-day={r.day}>
                <td>
                  <button className="link stock-link hit-counted-day" disabled={!open} onClick={() => open?.(r.code, r.day)}>
                    {isoDate(r.day)} {r.code} {r.name}
                  </button>
                </td>
                <td>{r.triggers}</td>
                <td>
                  {c && c.at != null ? (
                    <button className="link stock-link hit-counted-figure" data-at={c.at} disabled={!open} onClick={() => open?.(r.code, c.at)}>
                      {c.text}
                    </button>
                  ) : (
                    <span className="muted">{c?.text ?? "—"}</span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {rows.length > shown.length && <p className="muted">+{rows.length - shown.length}</p>}
    </div>
  );
}

/** `onPick`: the page lists the cell's signals itself (the review page); `picked` marks it. */
export default function HitRates({ onPick, picked }: { onPick?: (f: SignalFilter) => void; picked?: SignalFilter | null } = {}) {
  const lang = useContext(LanguageContext);
  const [stats, setStats] = useState<TrackStats | null | undefined>(undefined);
  const [shown, setShown] = useState<SignalFilter | null>(null);
  useEffect(() => {
    let live = true;
    void commands.trackStats().then((r) => {
      if (live) setStats(r.status === "ok" ? r.data : null);
    });
    return () => {
      live = false;
    };
  }, []);
  if (stats === undefined) return null;
  const title = lang === "en" ? "Tracked hit rates (net return after fees > 0)" : "跟踪命中率（扣费后收益 > 0）";
  if (stats === null || stats.signals === 0)
    return (
      <div className="hit-rates" id="hit-rates">
        <h4>{title}</h4>
        <p className="hit-rates-empty">{lang === "en" ? "No tracked signals yet." : "尚无跟踪记录。"}</p>
      </div>
    );
  const groups = hitGroups(stats);
  const rows = hitRows(stats, lang);
  const pick = (f: SignalFilter) => (onPick ? onPick(f) : setShown((cur) => (same(cur, f) ? null : f)));
  const current = onPick ? picked : shown;
  return (
    <div className="hit-rates" id="hit-rates">
      <h4>{title}</h4>
      <p className="result-meta">
        {lang === "en"
          ? `${stats.screens} saved screens · ${stats.signals} signals · entry at the next open`
          : `已保存 ${stats.screens} 次筛选 · ${stats.signals} 个信号 · 次日开盘买入`}
      </p>
      <table className="screen-table hit-rates-table">
        <thead>
          <tr>
            <th />
            {stats.horizons.map((h) => (
              <th key={h}>{lang === "en" ? `${h}d` : `${h}日`}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, ri) => (
            <tr key={`${r.group}:${r.key}`} data-group={r.group}>
              <td>{r.key}</td>
              {r.cells.map((c, i) => {
                const f = cellFilter(rateOf(stats, groups[ri].group, groups[ri].key, stats.horizons[i]));
                return (
                  <td key={i}>
                    {f ? (
                      <button
                        className="link hit-cell"
                        data-horizon={f.horizon}
                        aria-pressed={same(current, f)}
                        title={reviewText(lang)("pickCell")}
                        onClick={() => pick(f)}
                      >
                        {c}
                      </button>
                    ) : (
                      c
                    )}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
      {!onPick && shown && <CountedSignals key={`${shown.group}:${shown.key}:${shown.horizon}:${shown.status}`} filter={shown} />}
    </div>
  );
}
