// Settings → Schedules: each schedule with its rule and job in words, on/off, the next run,
// run now, edit, remove, and its history (each run linked to the task or conversation it
// produced); and the add form with the 盘前 / 收盘后 presets, which also edits a schedule
// (its name fixed). Refreshed on `schedule-ran`.
import { useCallback, useContext, useEffect, useState } from "react";
import { commands, events, type DamagedSchedule, type CommandError, type ScheduleRunView, type ScheduleView, type TaskInfo } from "../bindings";
import { useT, type MessageKey } from "../i18n";
import { OpenStockContext } from "../chat/stockLinks";
import ResultView from "../tasks/ResultView";
import {
  BOARDS,
  BOARD_KEYS,
  EMPTY_FORM,
  PRESETS,
  WEEKDAYS,
  applyPreset,
  formToNewSchedule,
  jobText,
  scheduleToForm,
  runStatusText,
  scheduleErrorText,
  toggleWeekday,
  weekdayText,
  whenText,
  type Board,
  type JobKind,
  type ScheduleForm,
  type Translate,
} from "./schedules";
import "./schedules.css";

type Props = {
  /** Ask the agent about a stock from a screen result (prefills the chat). */
  onAsk: (text: string) => void;
};

// A problem is kept as it came (a key, or the backend's error) and worded at render, in
// the language shown then.
type Problem = { local: MessageKey } | { backend: CommandError };

function problemText(p: Problem, t: Translate): string {
  return "local" in p ? t(p.local) : scheduleErrorText(p.backend, t);
}

function RunRow({ run, t, onOpenTask }: { run: ScheduleRunView; t: Translate; onOpenTask: (id: string) => void }) {
  return (
    <li className="sched-run-row" data-run-id={run.id} data-status={run.status} data-task-id={run.task_id ?? undefined} data-conversation-id={run.conversation_id ?? undefined}>
      <span className={`badge sched-status ${run.status}`}>{runStatusText(run.status, t)}</span>
      <span className="sched-run-when">{run.occurrence ?? t("schedRunManual")}</span>
      {run.catch_up && <span className="badge sched-catch-up">{t("schedCatchUp")}</span>}
      {/* One line each (a task's summary is the start of its stored result); the whole on hover. */}
      {run.error ? (
        <span className="sched-run-error error" title={run.error}>
          {run.error}
        </span>
      ) : (
        run.summary && (
          <span className="sched-run-summary" title={run.summary}>
            {run.summary}
          </span>
        )
      )}
      {run.task_id && (
        <button type="button" className="link sched-open-task" onClick={() => onOpenTask(run.task_id as string)}>
          {t("schedOpenTask")}
        </button>
      )}
      {run.conversation_id && (
        <button
          type="button"
          className="link sched-open-conversation"
          // The same event the tray and notifications send: the app shows that conversation.
          onClick={() => void events.openConversation.emit({ conversation_id: run.conversation_id })}
        >
          {t("schedOpenConversation")}
        </button>
      )}
    </li>
  );
}

export default function SchedulesPanel({ onAsk }: Props) {
  const t = useT();
  const openStock = useContext(OpenStockContext);
  const [list, setList] = useState<ScheduleView[] | null>(null);
  const [listProblem, setListProblem] = useState<CommandError | null>(null);
  const [damaged, setDamaged] = useState<DamagedSchedule[]>([]);
  const [form, setForm] = useState<ScheduleForm>(EMPTY_FORM);
  const [formNote, setFormNote] = useState<{ ok: true; name: string; edited: boolean } | { ok: false; problem: Problem } | null>(null);
  const [adding, setAdding] = useState(false);
  /** The schedule the form edits; `null` while it adds one. */
  const [editing, setEditing] = useState<string | null>(null);
  const [running, setRunning] = useState<Record<string, boolean>>({});
  const [confirming, setConfirming] = useState<string | null>(null);
  const [rowProblem, setRowProblem] = useState<{ name: string; error: CommandError } | null>(null);
  const [viewing, setViewing] = useState<TaskInfo | null>(null);
  const [taskGone, setTaskGone] = useState<string | null>(null);

  const load = useCallback(async () => {
    const [r, d] = await Promise.all([commands.listSchedules(), commands.damagedSchedules()]);
    if (r.status === "ok") {
      setList(r.data);
      setListProblem(null);
    } else {
      setListProblem(r.error);
    }
    setDamaged(d.status === "ok" ? d.data : []);
  }, []);

  useEffect(() => {
    void load();
    const unlisten = events.scheduleRan.listen(() => void load());
    return () => {
      void unlisten.then((f) => f());
    };
  }, [load]);

  const set = <K extends keyof ScheduleForm>(k: K, v: ScheduleForm[K]) => setForm((f) => ({ ...f, [k]: v }));

  const add = async () => {
    setFormNote(null);
    const built = formToNewSchedule(form);
    if (!built.ok) {
      setFormNote({ ok: false, problem: { local: built.problem } });
      return;
    }
    setAdding(true);
    const r = editing === null ? await commands.addSchedule(built.schedule) : await commands.updateSchedule(editing, built.schedule.when, built.schedule.job);
    setAdding(false);
    if (r.status === "ok") {
      setFormNote({ ok: true, name: r.data.name, edited: editing !== null });
      setForm(EMPTY_FORM);
      setEditing(null);
      await load();
    } else {
      setFormNote({ ok: false, problem: { backend: r.error } });
    }
  };

  const edit = (s: ScheduleView) => {
    const filled = scheduleToForm(s);
    if (!filled) return;
    setFormNote(null);
    setEditing(s.name);
    setForm(filled);
    document.getElementById("sched-form")?.scrollIntoView?.({ block: "nearest" });
  };

  const stopEditing = () => {
    setEditing(null);
    setForm(EMPTY_FORM);
    setFormNote(null);
  };

  const runNow = async (name: string) => {
    setRowProblem(null);
    setRunning((m) => ({ ...m, [name]: true }));
    const r = await commands.runScheduleNow(name);
    setRunning((m) => ({ ...m, [name]: false }));
    if (r.status === "error") setRowProblem({ name, error: r.error });
    await load();
  };

  const setEnabled = async (name: string, enabled: boolean) => {
    setRowProblem(null);
    const r = await commands.setScheduleEnabled(name, enabled);
    if (r.status === "error") setRowProblem({ name, error: r.error });
    await load();
  };

  const remove = async (name: string) => {
    setConfirming(null);
    setRowProblem(null);
    const r = await commands.removeSchedule(name);
    if (r.status === "error") setRowProblem({ name, error: r.error });
    await load();
  };

  // A run's task is shown the way the task panel shows it, while the core still lists it.
  const openTask = async (id: string) => {
    setTaskGone(null);
    const r = await commands.listTasks();
    const task = r.status === "ok" ? r.data.find((x) => x.task_id === id) : undefined;
    if (task && task.status === "completed") setViewing(task);
    else setTaskGone(id);
  };

  const jobs: { kind: JobKind; label: MessageKey }[] = [
    { kind: "screen", label: "schedJobScreen" },
    { kind: "sync", label: "schedJobSync" },
    { kind: "backtest", label: "schedJobBacktest" },
    { kind: "alerts", label: "schedJobAlerts" },
    { kind: "prompt", label: "schedJobPrompt" },
  ];

  return (
    <section className="card" id="schedules-panel">
      <h2>{t("schedTitle")}</h2>
      <p className="muted">{t("schedIntro")}</p>
      {listProblem && (
        <p className="error" id="sched-list-error" role="alert">
          {scheduleErrorText(listProblem, t)}
        </p>
      )}
      {damaged.map((d) => (
        <p className="error sched-damaged" key={d.name} data-name={d.name} role="alert">
          {t("schedDamaged", { name: d.name, why: d.why })}{" "}
          <button type="button" onClick={() => void remove(d.name)}>
            {t("schedRemove")}
          </button>
        </p>
      ))}
      {list === null && !listProblem && <p className="hint">{t("schedLoading")}</p>}
      {list !== null && list.length === 0 && (
        <p className="hint" id="sched-empty">
          {t("schedEmpty")}
        </p>
      )}
      {list !== null && list.length > 0 && (
        <ul className="sched-list">
          {list.map((s) => {
            const busy = !!running[s.name];
            return (
              <li key={s.name} className="sched-item" data-name={s.name} data-enabled={s.enabled}>
                <div className="row sched-head">
                  <strong className="sched-name">{s.name}</strong>
                  <span className="sched-when">{whenText(s.when, t)}</span>
                  <span className="sched-job">{jobText(s.job, t)}</span>
                  <label className="inline sched-toggle">
                    <input type="checkbox" className="sched-enabled" checked={s.enabled} onChange={(e) => void setEnabled(s.name, e.target.checked)} />
                    {t("schedEnabled")}
                  </label>
                </div>
                <div className="row sched-next-line">
                  <span className="hint">{t("schedNext")}:</span>
                  <span className="sched-next" data-next={s.next_due ?? ""}>
                    {s.next_due ?? t("schedNextNone")}
                  </span>
                  {s.next_due_assumed_trading_day && <span className="sched-assumed warning">{t("schedAssumed")}</span>}
                </div>
                <div className="row sched-actions">
                  <button type="button" className="sched-run-now" disabled={busy} aria-busy={busy} onClick={() => void runNow(s.name)}>
                    {busy ? t("schedRunningNow") : t("schedRunNow")}
                  </button>
                  {scheduleToForm(s) && (
                    <button type="button" className="sched-edit" disabled={editing === s.name} onClick={() => edit(s)}>
                      {t("schedEdit")}
                    </button>
                  )}
                  {confirming === s.name ? (
                    <>
                      <span>{t("schedRemoveAsk", { name: s.name })}</span>
                      <button type="button" className="danger sched-remove-confirm" onClick={() => void remove(s.name)}>
                        {t("schedRemoveConfirm")}
                      </button>
                      <button type="button" className="sched-remove-cancel" onClick={() => setConfirming(null)}>
                        {t("cancel")}
                      </button>
                    </>
                  ) : (
                    <button type="button" className="sched-remove" disabled={busy} onClick={() => setConfirming(s.name)}>
                      {t("schedRemove")}
                    </button>
                  )}
                </div>
                {rowProblem?.name === s.name && (
                  <p className="error sched-row-error" role="alert">
                    {scheduleErrorText(rowProblem.error, t)}
                  </p>
                )}
                <div className="sched-history">
                  <span className="hint">{t("schedHistory")}</span>
                  {s.runs.length === 0 ? (
                    <span className="hint sched-no-runs"> — {t("schedNoRuns")}</span>
                  ) : (
                    <ul className="sched-runs">
                      {s.runs.map((run) => (
                        <RunRow key={run.id} run={run} t={t} onOpenTask={(id) => void openTask(id)} />
                      ))}
                    </ul>
                  )}
                </div>
              </li>
            );
          })}
        </ul>
      )}
      {taskGone && (
        <p className="hint" id="sched-task-gone">
          {t("schedTaskGone", { id: taskGone })}
        </p>
      )}

      <form
        id="sched-form"
        className="sched-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void add();
        }}
      >
        <label className="field">
          <span>{t("schedName")}</span>
          <input id="sched-name" value={form.name} disabled={editing !== null} onChange={(e) => set("name", e.target.value)} />
        </label>
        <div className="row sched-presets">
          <span className="hint">{t("schedPresets")}:</span>
          {PRESETS.map((p) => (
            <button key={p.id} type="button" id={`sched-preset-${p.id}`} onClick={() => setForm((f) => applyPreset(f, p.time))}>
              {t(p.label)}
            </button>
          ))}
        </div>
        <div className="row">
          <label className="inline">
            <input type="radio" name="sched-mode" id="sched-mode-at" checked={form.mode === "at"} onChange={() => set("mode", "at")} />
            {t("schedModeAt")}
          </label>
          <label className="inline">
            <input type="radio" name="sched-mode" id="sched-mode-cron" checked={form.mode === "cron"} onChange={() => set("mode", "cron")} />
            {t("schedModeCron")}
          </label>
        </div>
        {form.mode === "at" ? (
          <>
            <label className="field">
              <span>{t("schedTime")}</span>
              <input id="sched-time" placeholder="15:05" value={form.time} onChange={(e) => set("time", e.target.value)} />
            </label>
            <div className="row sched-days">
              <span className="hint">{t("schedDays")}:</span>
              {(["trading", "daily", "weekdays"] as const).map((d) => (
                <label key={d} className="inline">
                  <input type="radio" name="sched-days" id={`sched-days-${d}`} checked={form.days === d} onChange={() => set("days", d)} />
                  {t(d === "trading" ? "schedDaysTrading" : d === "daily" ? "schedDaysDaily" : "schedDaysWeekdays")}
                </label>
              ))}
            </div>
            {form.days === "weekdays" && (
              <div className="row sched-weekdays">
                {WEEKDAYS.map((d) => (
                  <label key={d} className="inline">
                    <input
                      type="checkbox"
                      id={`sched-weekday-${d}`}
                      checked={form.weekdays.includes(d)}
                      onChange={(e) => set("weekdays", toggleWeekday(form.weekdays, d, e.target.checked))}
                    />
                    {weekdayText(d, t)}
                  </label>
                ))}
              </div>
            )}
          </>
        ) : (
          <label className="field">
            <span>{t("schedCron")}</span>
            <input id="sched-cron" placeholder="5 15 * * 1-5" value={form.cron} onChange={(e) => set("cron", e.target.value)} />
          </label>
        )}
        <div className="row sched-jobs">
          <span className="hint">{t("schedJob")}:</span>
          {jobs.map((j) => (
            <label key={j.kind} className="inline">
              <input type="radio" name="sched-job" id={`sched-job-${j.kind}`} checked={form.job === j.kind} onChange={() => set("job", j.kind)} />
              {t(j.label)}
            </label>
          ))}
        </div>
        {form.job === "screen" && (
          <>
            <label className="field">
              <span>{t("schedScreenBoard")}</span>
              <select id="sched-screen-board" value={form.board} onChange={(e) => set("board", e.target.value as Board)}>
                {BOARDS.map((b) => (
                  <option key={b} value={b}>
                    {t(BOARD_KEYS[b])}
                  </option>
                ))}
              </select>
            </label>
            <label className="field">
              <span>{t("schedScreenLimit")}</span>
              <input id="sched-screen-limit" inputMode="numeric" placeholder="300" value={form.limit} onChange={(e) => set("limit", e.target.value)} />
            </label>
          </>
        )}
        {form.job === "backtest" && (
          <>
            <label className="field">
              <span>{t("schedStart")}</span>
              <input id="sched-bt-start" placeholder="2024-01-02" value={form.start} onChange={(e) => set("start", e.target.value)} />
            </label>
            <label className="field">
              <span>{t("schedEnd")}</span>
              <input id="sched-bt-end" placeholder="2024-06-28" value={form.end} onChange={(e) => set("end", e.target.value)} />
            </label>
          </>
        )}
        {form.job === "prompt" && (
          <textarea id="sched-prompt" className="sched-prompt" rows={2} placeholder={t("schedPromptPlaceholder")} value={form.prompt} onChange={(e) => set("prompt", e.target.value)} />
        )}
        <div className="actions">
          <button id="sched-add" type="submit" className="primary" disabled={adding}>
            {editing === null ? t("schedAdd") : t("schedSave")}
          </button>
          {editing !== null && (
            <button id="sched-edit-cancel" type="button" onClick={stopEditing}>
              {t("cancel")}
            </button>
          )}
        </div>
        {formNote && (
          <p id="sched-form-note" className={formNote.ok ? "ok" : "error"} role={formNote.ok ? "status" : "alert"}>
            {formNote.ok ? t(formNote.edited ? "schedSaved" : "schedAdded", { name: formNote.name }) : problemText(formNote.problem, t)}
          </p>
        )}
      </form>

      {viewing && (
        <ResultView
          task={viewing}
          onClose={() => setViewing(null)}
          onAsk={(text) => {
            setViewing(null);
            onAsk(text);
          }}
          onOpenStock={(code) => {
            setViewing(null);
            openStock?.(code);
          }}
        />
      )}
    </section>
  );
}
