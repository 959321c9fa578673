// The research page: start a sweep or a walk-forward without a model (the same
// `run_backtest` background task the agent starts, the CLI's spec strings checked by the
// backend as the CLI checks them), follow its progress, list stored results and view one.
import { useCallback, useContext, useEffect, useState } from "react";
import { commands, type ResearchPlan, type ResearchReport, type ResearchRequest, type ResearchRun } from "../bindings";
import { LanguageContext } from "../i18n";
import SweepView from "./SweepView";
import SizingLine from "./SizingLine";
import WalkForwardView from "./WalkForwardView";
import { researchProgress } from "./heatmap";
import { researchText } from "./text";
import { useTaskRun } from "./useTaskRun";
import "./research.css";

type Form = {
  start: string;
  end: string;
  hold_days: string;
  stop_loss_pct: string;
  take_profit_pct: string;
  top_n: string;
  entry_price_mode: string;
  triggers: string;
  best_by: string;
  mode: "sweep" | "walk";
  in_sample: string;
  out_of_sample: string;
  step: string;
  sizing: "equal" | "risk";
  risk_pct: string;
};

const EMPTY: Form = {
  start: "",
  end: "",
  hold_days: "5,10,20",
  stop_loss_pct: "5,8",
  take_profit_pct: "",
  top_n: "",
  entry_price_mode: "",
  triggers: "",
  best_by: "sharpe",
  mode: "sweep",
  in_sample: "120",
  out_of_sample: "40",
  step: "",
  sizing: "equal",
  risk_pct: "",
};

/** The request the form asks for (blank fields left to the backend's defaults). */
export function requestOf(f: Form): ResearchRequest {
  const s = (v: string) => (v.trim() === "" ? null : v.trim());
  const wf = f.mode === "walk" ? [f.in_sample, f.out_of_sample, f.step].map((v) => v.trim()).filter((v) => v !== "").join(",") : "";
  return {
    start: s(f.start),
    end: s(f.end),
    board: null,
    hold_days: s(f.hold_days),
    stop_loss_pct: s(f.stop_loss_pct),
    take_profit_pct: s(f.take_profit_pct),
    top_n: s(f.top_n),
    entry_price_mode: s(f.entry_price_mode),
    triggers: s(f.triggers),
    best_by: s(f.best_by),
    walk_forward: s(wf),
    sizing: f.sizing === "risk" ? "risk" : null,
    // Blank: the settings' value (text that is not a number is refused before this).
    risk_pct: f.sizing === "risk" && f.risk_pct.trim() !== "" && Number.isFinite(Number(f.risk_pct)) ? Number(f.risk_pct) : null,
  };
}

// The viewed result and the running task survive leaving the page (the app unmounts it).
let lastViewed: string | null = null;
let running: string | null = null;

export default function ResearchPage({ openTask }: { openTask?: string | null }) {
  const lang = useContext(LanguageContext);
  const t = researchText(lang);
  const [form, setForm] = useState<Form>(EMPTY);
  const [plan, setPlan] = useState<ResearchPlan | null>(null);
  const [planError, setPlanError] = useState<string | null>(null);
  const [runs, setRuns] = useState<ResearchRun[]>([]);
  const [viewing, setViewing] = useState<string | null>(openTask ?? lastViewed);
  const [report, setReport] = useState<ResearchReport | null>(null);

  const reload = useCallback(async () => {
    const r = await commands.researchRuns();
    if (r.status === "ok") setRuns(r.data);
  }, []);
  const run = useTaskRun((task) => {
    void reload();
    if (task.status === "completed") setViewing(task.task_id);
  });

  useEffect(() => {
    void reload();
  }, [reload]);
  // Back on the page while a run started here still goes: follow it again.
  const { attach } = run;
  useEffect(() => {
    const id = running;
    if (!id) return;
    void commands.listTasks().then((r) => {
      const t = r.status === "ok" ? r.data.find((x) => x.task_id === id) : undefined;
      if (t) void attach(t);
      else running = null;
    });
  }, [attach]);
  useEffect(() => {
    const t = run.task;
    if (t) running = t.status === "running" || t.status === "queued" ? t.task_id : null;
  }, [run.task]);
  useEffect(() => {
    if (openTask) setViewing(openTask);
  }, [openTask]);
  useEffect(() => {
    lastViewed = viewing;
    setReport(null);
    if (!viewing) return;
    let live = true;
    void commands.researchReport(viewing).then((r) => {
      if (live && r.status === "ok") setReport(r.data);
    });
    return () => {
      live = false;
    };
  }, [viewing]);

  // The backend checks the specs as the CLI does, as the user types.
  useEffect(() => {
    let live = true;
    if (form.sizing === "risk" && form.risk_pct.trim() !== "" && !Number.isFinite(Number(form.risk_pct))) {
      setPlan(null);
      setPlanError(t("riskPctBad", { v: form.risk_pct.trim() }));
      return;
    }
    const timer = setTimeout(() => {
      void commands.researchPlan(requestOf(form)).then((r) => {
        if (!live) return;
        if (r.status === "ok") {
          setPlan(r.data);
          setPlanError(null);
        } else {
          setPlan(null);
          setPlanError(r.error.message);
        }
      });
    }, 250);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [form, lang]);

  const field = (key: keyof Form, label: string, placeholder?: string) => (
    <label className="research-field">
      <span>{label}</span>
      <input id={`research-${key}`} value={form[key]} placeholder={placeholder} onChange={(e) => setForm({ ...form, [key]: e.target.value })} />
    </label>
  );
  const active = run.task !== null && (run.task.status === "running" || run.task.status === "queued");
  const p = run.task ? researchProgress(run.task) : null;
  const progressText = p
    ? t(p.kind === "combinations" ? "progressCombinations" : p.kind === "window" ? "progressWindow" : "progressDays", { done: p.done, total: p.total })
    : (run.task?.progress.stage ?? "");

  return (
    <div className="research-page" id="research-page">
      <h2>{t("title")}</h2>
      <p className="hint">{t("intro")}</p>
      <form
        className="research-form"
        onSubmit={(e) => {
          e.preventDefault();
          void run.start(requestOf(form));
        }}
      >
        <div className="research-grid">
          {field("start", t("start"), plan?.start ?? "YYYY-MM-DD")}
          {field("end", t("end"), plan?.end ?? "YYYY-MM-DD")}
          {field("hold_days", t("hold_days"), "10")}
          {field("stop_loss_pct", t("stop_loss_pct"), "-8")}
          {field("take_profit_pct", t("take_profit_pct"), "0")}
          {field("top_n", t("top_n"), "4")}
          {field("entry_price_mode", t("entry_price_mode"), "open")}
          {field("triggers", t("triggers"), "spring+evr+trend_pb")}
          <label className="research-field">
            <span>{t("best_by")}</span>
            <select id="research-best_by" value={form.best_by} onChange={(e) => setForm({ ...form, best_by: e.target.value })}>
              {(["sharpe", "return", "annualized", "max_drawdown", "win_rate", "profit_factor"] as const).map((m) => (
                <option key={m} value={m}>
                  {t(({ sharpe: "sharpe", return: "total_return_pct", annualized: "annualized_return_pct", max_drawdown: "max_drawdown_pct", win_rate: "win_rate_pct", profit_factor: "profit_factor" } as const)[m])}
                </option>
              ))}
            </select>
          </label>
          <label className="research-field">
            <span>{t("mode")}</span>
            <select id="research-mode" value={form.mode} onChange={(e) => setForm({ ...form, mode: e.target.value as Form["mode"] })}>
              <option value="sweep">{t("modeSweep")}</option>
              <option value="walk">{t("modeWalk")}</option>
            </select>
          </label>
          <label className="research-field">
            <span>{t("sizing")}</span>
            <select id="research-sizing" value={form.sizing} onChange={(e) => setForm({ ...form, sizing: e.target.value as Form["sizing"] })}>
              <option value="equal">{t("sizingEqual")}</option>
              <option value="risk">{t("sizingRisk")}</option>
            </select>
          </label>
          {form.sizing === "risk" && field("risk_pct", t("riskPct"), plan?.sizing.type === "risk" ? String(plan.sizing.risk_bp / 100) : "1")}
          {form.mode === "walk" && (
            <>
              {field("in_sample", t("inSample"))}
              {field("out_of_sample", t("outOfSample"))}
              {field("step", t("step"))}
            </>
          )}
        </div>
        <div className="research-actions">
          <span id="research-plan" className={planError ? "error" : "hint"}>
            {planError ?? (plan ? `${plan.start} ~ ${plan.end} · ${t("combinations", { n: plan.combinations })}` : "")}
          </span>
          {plan && !planError && <SizingLine sizing={plan.sizing} id="research-plan-sizing" />}
          <button id="research-run" type="submit" disabled={!!planError || active}>
            {t("run")}
          </button>
          {active && (
            <button id="research-cancel" type="button" onClick={run.cancel}>
              {t("cancel")}
            </button>
          )}
        </div>
        {active && (
          <div id="research-progress" data-kind={p?.kind ?? ""}>
            <span>
              {t("running")}: {progressText}
            </span>
            <div className="task-progress" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={run.percent ?? undefined}>
              <div className="task-progress-fill" style={{ width: `${run.percent ?? 0}%` }} />
            </div>
          </div>
        )}
        {run.error && <p className="error" id="research-error">{run.error}</p>}
      </form>
      <section className="research-stored">
        <h3>{t("stored")}</h3>
        {runs.length === 0 ? (
          <p className="hint">{t("noneStored")}</p>
        ) : (
          <ul id="research-runs">
            {runs.map((r) => (
              <li key={r.task.task_id} data-task-id={r.task.task_id} data-kind={r.kind} className={viewing === r.task.task_id ? "active" : undefined}>
                <button className="link" onClick={() => setViewing(r.task.task_id)}>
                  {t(r.kind === "sweep" ? "kindSweep" : "kindWalk")} · {r.period} · {t("combinations", { n: r.combinations })} · {r.task.finished_at?.slice(0, 16).replace("T", " ") ?? ""}
                </button>
              </li>
            ))}
          </ul>
        )}
      </section>
      {report?.kind === "sweep" && <SweepView key={viewing ?? ""} report={report} />}
      {report?.kind === "walk_forward" && <WalkForwardView key={viewing ?? ""} report={report} />}
    </div>
  );
}
