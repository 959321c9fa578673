// Forward tracking under a screen result (issue 27): how often each trigger's past
// candidates gained after fees, 1–20 trading days on, with counts. The backend computes
// every figure (wyckoff_track); this only lays them out.
import { useContext, useEffect, useState } from "react";
import { commands, type HitRate, type Language as Lang, type TrackStats } from "../bindings";
import { LanguageContext } from "../i18n";

export type HitRow = { group: string; key: string; cells: string[] };

/** "61% of 143" / "61%（143 次）"; pending-only and empty groups say so. */
export function hitCell(r: HitRate | undefined, lang: Lang): string {
  if (!r) return "—";
  if (r.hit_rate_pct === null) return r.pending > 0 ? (lang === "en" ? `${r.pending} pending` : `${r.pending} 待定`) : "—";
  const pct = Math.round(r.hit_rate_pct);
  return lang === "en" ? `${pct}% of ${r.signals}` : `${pct}%（${r.signals} 次）`;
}

/** All signals first, then each trigger, then 水温 groups; one cell per horizon. */
export function hitRows(stats: TrackStats, lang: Lang): HitRow[] {
  const keys: { group: HitRate["group"]; key: string }[] = [];
  for (const r of stats.rates) {
    if (r.group === "track") continue;
    if (!keys.some((k) => k.group === r.group && k.key === r.key)) keys.push({ group: r.group, key: r.key });
  }
  return keys.map(({ group, key }) => ({
    group,
    key: group === "all" ? (lang === "en" ? "All signals" : "全部信号") : group === "regime" ? `水温 ${key}` : key,
    cells: stats.horizons.map((h) => hitCell(stats.rates.find((r) => r.group === group && r.key === key && r.horizon === h), lang)),
  }));
}

export default function HitRates() {
  const lang = useContext(LanguageContext);
  const [stats, setStats] = useState<TrackStats | null | undefined>(undefined);
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
  const rows = hitRows(stats, lang);
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
          {rows.map((r) => (
            <tr key={`${r.group}:${r.key}`} data-group={r.group}>
              <td>{r.key}</td>
              {r.cells.map((c, i) => (
                <td key={i}>{c}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
