// The alert centre: what fired (each opening the stock page at that bar), the
// rules (switch, remove) and the add form; "check now" runs the alerts job as a background
// task, the same one schedules run. The nav button carries the count of alerts not seen.
import { useCallback, useEffect, useState } from "react";
import { commands, events, type CommandError, type AlertRule, type AlertTarget, type FiredAlert, type TaskInfo } from "../bindings";
import { EMPTY_RULE, EVENTS, RULE_KINDS, barDate, buildRule, conditionText, kindLabel, deliveryText, figuresText, intradayTime, targetText, unseen, useAlertsText, type RuleForm, type T } from "./alerts";
import "./alerts.css";

const SEEN_KEY = "wyckoff.alertsSeen";
const POLL_MS = 60_000;

function lastSeen(): number {
  return Number(localStorage.getItem(SEEN_KEY) ?? "0") || 0;
}

function errorText(e: CommandError | string, t: T): string {
  if (typeof e === "string") return t("other", { message: e });
  return t(e.kind === "invalid_input" ? "invalid" : e.kind === "not_found" ? "notFound" : "other", { message: e.message });
}

/** What a finished check said (its task's summary), when it can be read: the counts, and
 * its data notes (what fell back to today's data, the delisted stocks it left out). */
function checkedLine(summary: string | null | undefined, t: T): { line: string | null; notes: string[] } {
  try {
    const s = JSON.parse(summary ?? "") as { data_date?: string | null; fired?: number; suppressed?: number; unevaluated?: number; notes?: unknown };
    const notes = Array.isArray(s.notes) ? s.notes.filter((n): n is string => typeof n === "string") : [];
    return { line: t("checked", { date: s.data_date ?? "—", fired: s.fired ?? 0, held: s.suppressed ?? 0, missing: s.unevaluated ?? 0 }), notes };
  } catch {
    return { line: null, notes: [] };
  }
}

function withPreset(f: RuleForm, preset: AlertTarget | null): RuleForm {
  if (!preset) return f;
  return preset.type === "stock" ? { ...f, target: "stock", code: preset.code } : { ...f, target: preset.type };
}

type Props = {
  /** What the form starts with: the stock page's stock, or the watchlist. */
  preset: AlertTarget | null;
  onOpenStock: (code: string, at: number | null) => void;
};

export default function AlertsPage({ preset, onOpenStock }: Props) {
  const t = useAlertsText();
  const [history, setHistory] = useState<FiredAlert[] | null>(null);
  const [rules, setRules] = useState<AlertRule[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [form, setForm] = useState<RuleForm>(() => withPreset(EMPTY_RULE, preset));
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const [check, setCheck] = useState<{ taskId: string | null; line: string | null; notes?: string[] } | null>(null);

  const load = useCallback(async () => {
    const [h, r] = await Promise.all([commands.alertHistory(), commands.alertRules()]);
    if (h.status === "ok") {
      setHistory(h.data);
      const newest = h.data.reduce((m, a) => Math.max(m, a.id), 0);
      if (newest > lastSeen()) {
        localStorage.setItem(SEEN_KEY, String(newest));
        window.dispatchEvent(new Event("alerts-seen"));
      }
    } else setProblem(errorText(h.error, t));
    if (r.status === "ok") setRules(r.data);
    else setProblem(errorText(r.error, t));
    // t changes with the language only; the lists need not reload for it.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  useEffect(() => {
    setForm((f) => withPreset(f, preset));
  }, [preset]);

  // The running check's task: when it ends, its summary and the new alerts.
  const checkTask = check?.taskId ?? null;
  useEffect(() => {
    if (!checkTask) return;
    let done = false;
    const finish = (task: TaskInfo) => {
      if (done || task.task_id !== checkTask || !["completed", "failed", "cancelled"].includes(task.status)) return;
      done = true;
      const checked = task.status === "completed" ? checkedLine(task.result_summary, t) : { line: t("checkFailed", { message: task.error ?? task.status }), notes: [] };
      setCheck({ taskId: null, ...checked });
      void load();
    };
    const unlisten = events.taskChanged.listen((e) => finish(e.payload.task));
    // A quick check can end before the listener is in place: look once it is.
    void unlisten.then(() =>
      commands.listTasks().then((r) => {
        if (r.status === "ok") r.data.forEach(finish);
      }),
    );
    return () => {
      done = true;
      void unlisten.then((f) => f());
    };
  }, [checkTask, load, t]);

  const checkNow = async () => {
    setCheck({ taskId: null, line: null });
    const r = await commands.startTask({ type: "alerts" });
    if (r.status === "ok") setCheck({ taskId: r.data.task_id, line: null });
    else setCheck({ taskId: null, line: t("checkFailed", { message: r.error.message }) });
  };

  const add = async () => {
    setNote(null);
    const built = buildRule(form);
    if (!built.ok) {
      setNote({ ok: false, text: t(built.problem) });
      return;
    }
    const r = await commands.alertAdd(built.target, built.condition, built.cooldown);
    if (r.status === "ok") {
      setNote({ ok: true, text: t("added", { id: r.data.id }) });
      setForm((f) => ({ ...EMPTY_RULE, code: f.code }));
      await load();
    } else setNote({ ok: false, text: errorText(r.error, t) });
  };

  const setEnabled = async (id: number, on: boolean) => {
    const r = await commands.alertSetEnabled(id, on);
    if (r.status === "error") setProblem(errorText(r.error, t));
    await load();
  };

  const remove = async (id: number) => {
    const r = await commands.alertRemove(id);
    if (r.status === "error") setProblem(errorText(r.error, t));
    await load();
  };

  const set = <K extends keyof RuleForm>(k: K, v: RuleForm[K]) => setForm((f) => ({ ...f, [k]: v }));
  const needsValue = form.kind !== "event" && form.kind !== "phase_change" && form.kind !== "health_change";

  return (
    <section className="page alerts-page" id="page-alerts">
      <header className="row alerts-head">
        <h1>{t("title")}</h1>
        <button id="alerts-check" className="primary" disabled={checkTask != null} aria-busy={checkTask != null} onClick={() => void checkNow()}>
          {checkTask != null ? t("checking") : t("checkNow")}
        </button>
      </header>
      <p className="muted">{t("intro")}</p>
      {check?.line && (
        <p id="alerts-checked" role="status">
          {check.line}
        </p>
      )}
      {check?.notes?.map((n) => (
        <p key={n} className="muted alerts-check-note">
          {n}
        </p>
      ))}
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}

      <h2>{t("fired")}</h2>
      {history !== null && history.length === 0 && (
        <p className="hint" id="alerts-none">
          {t("noneFired")}
        </p>
      )}
      {history !== null && history.length > 0 && (
        <ul className="alert-list" id="alert-list">
          {history.map((a) => (
            <li key={a.id} className="alert-row" data-id={a.id} data-code={a.code} data-bar-date={a.bar_date} data-kind={a.condition.type} data-delivery={a.delivery} data-intraday-at={a.intraday_at ?? undefined}>
              <strong>
                {a.code} {a.name ?? ""}
              </strong>
              <span className="alert-date">{a.bar_date}</span>
              {a.intraday_at && (
                <span className="badge alert-intraday" title={t("intradayTitle", { at: a.intraday_at })}>
                  {t("intraday", { time: intradayTime(a) ?? a.intraday_at })}
                </span>
              )}
              <span className="alert-condition">{a.rule_id == null ? t(a.condition.type === "target_reached" ? "targetReached" : "stopLoss") : conditionText(a.condition, t)}</span>
              <span className="alert-figures">{figuresText(a.figures, t, a.intraday_at != null)}</span>
              <span className={`badge alert-delivery ${a.delivery}`} title={a.delivered_to.join(", ")}>
                {deliveryText(a.delivery, t)}
              </span>
              <button type="button" className="link alert-open" onClick={() => onOpenStock(a.code, barDate(a.bar_date))}>
                {t("open")}
              </button>
            </li>
          ))}
        </ul>
      )}

      <h2>{t("rules")}</h2>
      {rules !== null && rules.length === 0 && <p className="hint">{t("noRules")}</p>}
      {rules !== null && rules.length > 0 && (
        <ul className="alert-rules" id="alert-rules">
          {rules.map((r) => (
            <li key={r.id} className="alert-rule" data-id={r.id} data-enabled={r.enabled}>
              <span>#{r.id}</span>
              <strong>{targetText(r.target, t)}</strong>
              <span>{conditionText(r.condition, t)}</span>
              <span className="muted">
                {t("cooldown")}: {r.cooldown_days}
              </span>
              <label className="inline">
                <input type="checkbox" className="alert-enabled" checked={r.enabled} onChange={(e) => void setEnabled(r.id, e.target.checked)} />
                {t("enabled")}
              </label>
              <button type="button" className="alert-remove" onClick={() => void remove(r.id)}>
                {t("remove")}
              </button>
            </li>
          ))}
        </ul>
      )}

      <form
        id="alert-form"
        className="alert-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void add();
        }}
      >
        <div className="row">
          <span className="hint">{t("target")}:</span>
          {(["stock", "watchlist", "portfolio"] as const).map((k) => (
            <label key={k} className="inline">
              <input type="radio" name="alert-target" id={`alert-target-${k}`} checked={form.target === k} onChange={() => set("target", k)} />
              {t(k === "stock" ? "targetStock" : k === "watchlist" ? "targetWatchlist" : "targetPortfolio")}
            </label>
          ))}
          {form.target === "stock" && <input id="alert-code" placeholder={t("code")} value={form.code} size={8} onChange={(e) => set("code", e.target.value)} />}
        </div>
        <div className="row">
          <label>
            {t("condition")}{" "}
            <select id="alert-kind" value={form.kind} onChange={(e) => set("kind", e.target.value as RuleForm["kind"])}>
              {RULE_KINDS.map((k) => (
                <option key={k} value={k}>
                  {kindLabel(k, t)}
                </option>
              ))}
            </select>
          </label>
          {needsValue && <input id="alert-value" placeholder={t("value")} value={form.value} size={8} onChange={(e) => set("value", e.target.value)} />}
          {form.kind === "event" && (
            <select id="alert-event" value={form.event} onChange={(e) => set("event", e.target.value)}>
              <option value="">{t("anyEvent")}</option>
              {EVENTS.map((ev) => (
                <option key={ev} value={ev}>
                  {ev}
                </option>
              ))}
            </select>
          )}
          <label>
            {t("cooldown")} <input id="alert-cooldown" value={form.cooldown} size={4} onChange={(e) => set("cooldown", e.target.value)} />
          </label>
          <button id="alert-add" type="submit">
            {t("add")}
          </button>
        </div>
        {note && (
          <p id="alert-note" className={note.ok ? "ok" : "error"} role={note.ok ? "status" : "alert"}>
            {note.text}
          </p>
        )}
      </form>
    </section>
  );
}

/** The sidebar entry with the count of alerts fired since the page was last open. */
export function AlertsNavButton({ active, onClick }: { active: boolean; onClick: () => void }) {
  const t = useAlertsText();
  const [count, setCount] = useState(0);
  useEffect(() => {
    let live = true;
    const refresh = () =>
      void commands.alertHistory().then((r) => {
        if (live && r.status === "ok") setCount(unseen(r.data, lastSeen()));
      });
    refresh();
    const timer = window.setInterval(refresh, POLL_MS);
    window.addEventListener("alerts-seen", refresh);
    const ran = events.scheduleRan.listen(refresh);
    const task = events.taskChanged.listen((e) => {
      if (e.payload.task.tool_name === "check_alerts" && e.payload.task.status === "completed") refresh();
    });
    return () => {
      live = false;
      window.clearInterval(timer);
      window.removeEventListener("alerts-seen", refresh);
      void ran.then((f) => f());
      void task.then((f) => f());
    };
  }, []);
  return (
    <button id="nav-alerts" className={active ? "active" : ""} onClick={onClick} data-unseen={count}>
      {t("title")}
      {count > 0 && (
        <span className="inbox-badge" id="alerts-badge" aria-label={String(count)}>
          {count}
        </span>
      )}
    </button>
  );
}
