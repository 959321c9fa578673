// A walk-forward's result: each window's in-sample choice beside its out-of-sample result,
// the chained out-of-sample curve beside the in-sample one, and the engine's plain verdict.
import { useContext, useMemo } from "react";
import type { CurvePoint, RunParams, WalkForwardSummary } from "../bindings";
import { LanguageContext } from "../i18n";
import EquityChart, { type Series } from "./EquityChart";
import { metricOfBestBy, paramLabels, PARAMS } from "./heatmap";
import SizingLine, { heldBack } from "./SizingLine";
import DataNotes from "../tasks/DataNotes";
import { researchText } from "./text";

const num = (v: number | null, dp = 2) => (v === null ? "—" : v.toFixed(dp));

/** The in-sample chain split into its windows (their dates overlap when step < IS). */
export function windowSegments(curve: CurvePoint[]): Series[] {
  const by = new Map<number, { date: string; equity: number }[]>();
  for (const p of curve) {
    if (!by.has(p.window)) by.set(p.window, []);
    by.get(p.window)?.push({ date: p.date, equity: Number(p.equity) });
  }
  return [...by.entries()].map(([w, pts]) => ({ points: pts, color: w % 2 ? "#9333ea" : "#f59e0b" }));
}

export default function WalkForwardView({ report }: { report: WalkForwardSummary }) {
  const t = researchText(useContext(LanguageContext));
  const { windows, verdict } = report;
  const metric = metricOfBestBy(report.best_by);
  const oos = useMemo<Series[]>(() => {
    const points = windowSegments(report.out_of_sample_curve).flatMap((s) => s.points);
    return points.length ? [{ points, color: "#2563eb" }] : [];
  }, [report.out_of_sample_curve]);
  const is = useMemo(() => windowSegments(report.in_sample_curve), [report.in_sample_curve]);
  const choice = (c: RunParams | null) => (c ? paramLabels(c).join(" / ") : "—");
  return (
    <div className="walk-forward-view" id="walk-forward-view">
      <p className="result-meta">
        {report.period} · {t("combinations", { n: report.combinations })}
      </p>
      <SizingLine sizing={report.grid?.sizing} id="wf-sizing" />
      <DataNotes notes={report.notes ?? []} id="wf-notes" />
      <p className={verdict.falls_apart ? "warning" : "hint"} id="wf-verdict" role={verdict.falls_apart ? "alert" : undefined} data-falls-apart={String(verdict.falls_apart)}>
        {verdict.text}
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
            const ret = w.out_of_sample?.total_return_pct ?? null;
            return (
              <tr key={w.index} data-window={w.index} className={ret !== null && ret <= 0 ? "negative" : undefined}>
                <td>{w.index}</td>
                <td>
                  {w.in_sample_start} ~ {w.in_sample_end}
                </td>
                <td>
                  {w.out_of_sample_start} ~ {w.out_of_sample_end}
                  {w.partial ? " *" : ""}
                </td>
                <td>{choice(w.chosen)}</td>
                <td>{num(w.in_sample_metric)}</td>
                <td title={heldBack(w.out_of_sample_skipped) ? t("heldBack", { list: heldBack(w.out_of_sample_skipped) }) : undefined}>
                  {ret !== null ? `${ret.toFixed(2)}%` : "—"}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
