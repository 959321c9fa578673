// A walk-forward's result: each window's in-sample choice beside its out-of-sample result,
// the chained out-of-sample curve beside the in-sample one, and the engine's plain verdict.
import { useContext, useMemo } from "react";
import type { Value } from "../bindings";
import { LanguageContext } from "../i18n";
import EquityChart, { type Series } from "./EquityChart";
import { metricOfBestBy, PARAMS } from "./heatmap";
import { researchText } from "./text";

type Obj = Record<string, Value>;
const num = (v: Value | undefined, dp = 2) => (typeof v === "number" ? v.toFixed(dp) : "—");

/** The in-sample chain split into its windows (their dates overlap when step < IS). */
export function windowSegments(curve: Value | undefined): Series[] {
  const points = (Array.isArray(curve) ? curve : []) as Obj[];
  const by = new Map<number, { date: string; equity: number }[]>();
  for (const p of points) {
    const w = typeof p.window === "number" ? p.window : 0;
    if (!by.has(w)) by.set(w, []);
    by.get(w)?.push({ date: String(p.date), equity: Number(p.equity) });
  }
  return [...by.entries()].map(([w, pts]) => ({ points: pts, color: w % 2 ? "#9333ea" : "#f59e0b" }));
}

export default function WalkForwardView({ report }: { report: Value }) {
  const t = researchText(useContext(LanguageContext));
  const r = report as Obj;
  const windows = (Array.isArray(r.windows) ? r.windows : []) as Obj[];
  const verdict = (r.verdict ?? {}) as Obj;
  const metric = metricOfBestBy(typeof r.best_by === "string" ? r.best_by : null);
  const oos = useMemo<Series[]>(() => windowSegments(r.out_of_sample_curve).flatMap((s) => s.points).length ? [{ points: windowSegments(r.out_of_sample_curve).flatMap((s) => s.points), color: "#2563eb" }] : [], [r.out_of_sample_curve]);
  const is = useMemo(() => windowSegments(r.in_sample_curve), [r.in_sample_curve]);
  const choice = (c: Value | undefined) => {
    const o = (c ?? null) as Obj | null;
    if (!o) return "—";
    return PARAMS.map((p) => (p === "triggers" && Array.isArray(o[p]) ? (o[p] as Value[]).join("+") : String(o[p]))).join(" / ");
  };
  return (
    <div className="walk-forward-view" id="walk-forward-view">
      <p className="result-meta">
        {String(r.period ?? "")} · {t("combinations", { n: Number(r.combinations ?? 0) })}
      </p>
      <p className={verdict.falls_apart === true ? "warning" : "hint"} id="wf-verdict" role={verdict.falls_apart === true ? "alert" : undefined} data-falls-apart={String(verdict.falls_apart === true)}>
        {String(verdict.text ?? "")}
      </p>
      <div className="wf-curves">
        <div>
          <h4>{t("oosCurve")}</h4>
          <EquityChart id="wf-oos-curve" series={oos} />
        </div>
        <div>
          <h4>{t("isCurve")}</h4>
          <EquityChart id="wf-is-curve" series={is} />
        </div>
      </div>
      <h4>{t("windows")}</h4>
      <table className="screen-table" id="wf-windows">
        <thead>
          <tr>
            <th>#</th>
            <th>{t("isPeriod")}</th>
            <th>{t("oosPeriod")}</th>
            <th>{t("chosen")} ({PARAMS.map((p) => t(p).split("（")[0].split(" (")[0]).join(" / ")})</th>
            <th>
              {t("isMetric")} ({t(metric)})
            </th>
            <th>{t("oosReturn")}</th>
          </tr>
        </thead>
        <tbody>
          {windows.map((w) => {
            const o = (w.out_of_sample ?? null) as Obj | null;
            const ret = o ? o.total_return_pct : undefined;
            return (
              <tr key={String(w.index)} data-window={String(w.index)} className={typeof ret === "number" && ret <= 0 ? "negative" : undefined}>
                <td>{String(w.index)}</td>
                <td>
                  {String(w.in_sample_start)} ~ {String(w.in_sample_end)}
                </td>
                <td>
                  {String(w.out_of_sample_start)} ~ {String(w.out_of_sample_end)}
                  {w.partial === true ? " *" : ""}
                </td>
                <td>{choice(w.chosen)}</td>
                <td>{num(w.in_sample_metric)}</td>
                <td>{typeof ret === "number" ? `${ret.toFixed(2)}%` : "—"}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
