// A sweep's result: a heatmap of any metric over two chosen parameters (the others fixed at
// the best's values or chosen), the best and its stability; a cell opens its run, run again
// as the single backtest it equals (the stored sweep keeps metrics, not every curve).
import { useContext, useEffect, useMemo, useState } from "react";
import { commands, type SweepRowSummary, type SweepSummary, type Value } from "../bindings";
import { LanguageContext } from "../i18n";
import { equityCurve } from "../tasks/tasks";
import EquityChart from "./EquityChart";
import { METRICS, PARAMS, axes, bestByOf, bestCoords, metricColumn, cellRequest, colour, defaultAxes, heatGrid, metricOfBestBy, metricValue, paramLabels, type Metric, type Param } from "./heatmap";
import SizingLine, { heldBack } from "./SizingLine";
import DataNotes from "../tasks/DataNotes";
import { researchText } from "./text";
import { useTaskRun } from "./useTaskRun";

type Obj = Record<string, Value>;
const fmt = (v: number | null, metric: Metric) => (v === null ? "—" : metric === "trades" ? String(v) : v.toFixed(2));

export function RunDetail({ result }: { result: Value }) {
  const t = researchText(useContext(LanguageContext));
  const r = result as Obj;
  const m = (r.metrics ?? {}) as Obj;
  const trades = (Array.isArray(r.trades) ? r.trades : []) as Obj[];
  const curve = equityCurve(result);
  return (
    <div className="cell-run" id="cell-run">
      <div className="metrics">
        {METRICS.map((k) => (
          <span key={k} className="metric" data-metric={k}>
            {t(k)}: {fmt(typeof m[k] === "number" ? (m[k] as number) : null, k)}
          </span>
        ))}
      </div>
      <h4>{t("equity")}</h4>
      <EquityChart id="cell-equity" series={[{ points: curve }]} />
      <h4>
        {t("tradesTitle")} ({trades.length})
      </h4>
      <table className="screen-table" id="cell-trades">
        <thead>
          <tr>
            <th>{t("code")}</th>
            <th>{t("entryDate")}</th>
            <th>{t("exitDate")}</th>
            <th>{t("pnl")}</th>
            <th>{t("reason")}</th>
          </tr>
        </thead>
        <tbody>
          {trades.map((x, i) => (
            <tr key={i} data-code={String(x.code)}>
              <td>
                {String(x.code)} {String(x.name ?? "")}
              </td>
              <td>{String(x.entry_date)}</td>
              <td>{String(x.exit_date)}</td>
              <td>{typeof x.pnl_pct === "number" ? x.pnl_pct.toFixed(2) : "—"}</td>
              <td>{String(x.exit_reason ?? "")}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export default function SweepView({ report }: { report: SweepSummary }) {
  const lang = useContext(LanguageContext);
  const t = researchText(lang);
  const ax = useMemo(() => axes(report), [report]);
  const [initialX, initialY] = useMemo(() => defaultAxes(report), [report]);
  const [x, setX] = useState<Param>(initialX);
  const [y, setY] = useState<Param>(initialY);
  const [metric, setMetric] = useState<Metric>(metricOfBestBy(report.best_by));
  const [fixed, setFixed] = useState(() => bestCoords(report));
  const [cell, setCell] = useState<number | null>(null);
  const run = useTaskRun();
  const grid = useMemo(() => heatGrid(report, x, y, metric, fixed), [report, x, y, metric, fixed]);
  const runMetric = metricOfBestBy(report.best_by);
  // The best by the map's metric: the stored one for the sweep's own metric, else the
  // engine's rule asked for the other (trades and turnover are not ranked).
  const [other, setOther] = useState<{ metric: Metric; best: number | null; stability: number | null } | null>(null);
  useEffect(() => {
    const name = bestByOf(metric);
    if (metric === runMetric || name === null) return;
    let live = true;
    const { dims, values } = metricColumn(report, metric);
    void commands.sweepBest(dims, values, name).then((res) => {
      if (live && res.status === "ok") setOther({ metric, best: res.data.best, stability: res.data.stability });
    });
    return () => {
      live = false;
    };
  }, [report, metric, runMetric]);
  const stored = { best: report.best, stability: report.stability?.score ?? null };
  const ranked = metric === runMetric || bestByOf(metric) === null;
  const bestMetric = ranked ? runMetric : metric;
  const shown = ranked ? stored : other?.metric === metric ? other : null;
  const best = shown?.best ?? null;
  const bestRow: SweepRowSummary | null = best === null ? null : (report.rows[best] ?? null);
  const stability = shown?.stability ?? null;
  useEffect(() => setCell(null), [report]);

  const openCell = (i: number) => {
    setCell(i);
    // The run shows below the map: bring it (and its progress) into view.
    requestAnimationFrame(() => document.getElementById("cell-detail")?.scrollIntoView?.({ block: "start" }));
    const req = cellRequest(report, i);
    if (req) void run.start(req);
  };
  const describe = (row: SweepRowSummary) => {
    const labels = paramLabels(row);
    return PARAMS.map((p, i) => `${t(p).split("（")[0].split(" (")[0]} ${labels[i]}`).join(" · ");
  };

  return (
    <div className="sweep-view" id="sweep-view">
      <p className="result-meta">
        {report.period} · {t("combinations", { n: report.combinations })}
      </p>
      <SizingLine sizing={report.grid?.sizing} id="sweep-sizing" />
      <DataNotes notes={report.notes ?? []} id="sweep-notes" />
      <div className="sweep-best" id="sweep-best" data-metric={bestMetric} data-best={best ?? ""}>
        <strong>{t("best", { m: t(bestMetric) })}</strong>:{" "}
        {bestRow ? (
          <>
            {describe(bestRow)} — {t(bestMetric)} {fmt(metricValue(bestRow, bestMetric), bestMetric)}
            {heldBack(bestRow.skipped_entries) && <> · {t("heldBack", { list: heldBack(bestRow.skipped_entries) })}</>}
          </>
        ) : (
          t("noBest")
        )}
        <div id="sweep-stability">
          {stability !== null ? t("stability", { s: stability.toFixed(2) }) : bestRow ? t("noStability") : null}
        </div>
      </div>
      <div className="heat-controls">
        <label>
          {t("metric")}{" "}
          <select id="heat-metric" value={metric} onChange={(e) => setMetric(e.target.value as Metric)}>
            {METRICS.map((m) => (
              <option key={m} value={m}>
                {t(m)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t("xAxis")}{" "}
          <select id="heat-x" value={x} onChange={(e) => setX(e.target.value as Param)}>
            {PARAMS.map((p) => (
              <option key={p} value={p} disabled={p === y}>
                {t(p)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t("yAxis")}{" "}
          <select id="heat-y" value={y} onChange={(e) => setY(e.target.value as Param)}>
            {PARAMS.map((p) => (
              <option key={p} value={p} disabled={p === x}>
                {t(p)}
              </option>
            ))}
          </select>
        </label>
      </div>
      {PARAMS.some((p) => p !== x && p !== y && ax[p].length > 1) && (
        <div className="heat-fixed">
          {t("fixedAt")}:{" "}
          {PARAMS.filter((p) => p !== x && p !== y && ax[p].length > 1).map((p) => (
            <label key={p}>
              {t(p)}{" "}
              <select data-fixed={p} value={fixed[p]} onChange={(e) => setFixed({ ...fixed, [p]: Number(e.target.value) })}>
                {ax[p].map((v, i) => (
                  <option key={v} value={i}>
                    {v}
                  </option>
                ))}
              </select>
            </label>
          ))}
        </div>
      )}
      <table className="heatmap" id="heatmap" data-metric={metric}>
        <thead>
          <tr>
            <th>
              {t(y)} \ {t(x)}
            </th>
            {grid.xs.map((v) => (
              <th key={v}>{v}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {grid.ys.map((yv, yi) => (
            <tr key={yv}>
              <th>{yv}</th>
              {grid.xs.map((xv, xi) => {
                const c = grid.cells[yi]?.[xi] ?? null;
                return (
                  <td key={xv} style={{ background: colour(c?.value ?? null, grid.lo, grid.hi, metric) }} className={c && c.row === best ? "best" : undefined}>
                    {c ? (
                      <button className="heat-cell" data-row={c.row} aria-pressed={cell === c.row} title={c.value === null ? t("noValue") : undefined} onClick={() => openCell(c.row)}>
                        {fmt(c.value, metric)}
                      </button>
                    ) : (
                      "—"
                    )}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
      {cell !== null && (
        <section className="cell-detail" id="cell-detail" data-row={cell}>
          <h4>
            {t("cellRun")}: {report.rows[cell] ? describe(report.rows[cell]) : ""}
          </h4>
          {run.error && <p className="error">{t("cellFailed", { e: run.error })}</p>}
          {run.result === null && !run.error && (
            <div id="cell-progress">
              <span>{t("cellRunning")}</span>
              <div className="task-progress" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={run.percent ?? undefined}>
                <div className="task-progress-fill" style={{ width: `${run.percent ?? 0}%` }} />
              </div>
            </div>
          )}
          {run.result !== null && <RunDetail result={run.result} />}
        </section>
      )}
    </div>
  );
}
