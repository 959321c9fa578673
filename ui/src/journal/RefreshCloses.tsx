// The ledger's "refresh closes" button: fetches the closes of every code the account has
// held (stocks, ETFs, LOFs, bonds; repos need none) as `wyckoff portfolio sync` does, as a
// background task — the task panel lists it, and its progress shows here too. When it
// ends the ledger is reloaded (`onDone`), so the lines show the new closes and their day;
// each code's outcome (the task's result, read once it ends) is listed with the day its
// closes now reach, or why it has none.
import { useContext, useEffect, useRef, useState } from "react";
import { commands, events, type TaskInfo } from "../bindings";
import { LanguageContext } from "../i18n";
import { percent } from "../tasks/tasks";
import { closesSyncResult, isRunningSync, LEDGER_CLOSES_TASK, type ClosesSyncResult } from "./closesSync";
import { journalErrorText } from "./journalModel";
import { journalText } from "./text";

export default function RefreshCloses({ onDone }: { onDone: () => void }) {
  const lang = useContext(LanguageContext);
  const t = journalText(lang);
  const [task, setTask] = useState<TaskInfo | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<ClosesSyncResult | null>(null);
  /** A finished task: the ledger reloads, and its outcomes are read (events carry no body). */
  const finish = (t: TaskInfo) => {
    onDone();
    if (t.status !== "completed") return;
    void commands.taskResult(t.task_id).then(
      (r) => {
        if (r.status === "ok") setResult(closesSyncResult(r.data, t.result_summary));
        else setError(journalErrorText(r.error, lang));
      },
      (e: unknown) => setError(e instanceof Error ? e.message : String(e)),
    );
  };
  // the task listener is set up once: it calls the latest `finish`
  const ended = useRef(finish);
  ended.current = finish;
  const following = useRef<string | null>(null);
  /** The last state of each refresh task seen, so an end that came before the start's answer is kept. */
  const lastSeen = useRef(new Map<string, TaskInfo>());

  useEffect(() => {
    let live = true;
    const seen = (next: TaskInfo) => {
      if (next.tool_name !== LEDGER_CLOSES_TASK) return;
      lastSeen.current.set(next.task_id, next);
      // the task this page started, or one running when the page opened
      if (following.current !== null && following.current !== next.task_id) return;
      if (following.current === null && !isRunningSync(next)) return;
      following.current = next.task_id;
      setTask(next);
      if (!isRunningSync(next)) ended.current(next);
    };
    void commands.listTasks().then((r) => {
      if (live && r.status === "ok") r.data.filter(isRunningSync).slice(0, 1).forEach(seen);
    });
    const unlisten = events.taskChanged.listen((e) => {
      if (live) seen(e.payload.task);
    });
    return () => {
      live = false;
      void unlisten.then((f) => f());
    };
  }, []);

  const start = async () => {
    setError(null);
    setResult(null);
    try {
      const r = await commands.journalSyncCloses();
      if (r.status === "error") {
        setError(journalErrorText(r.error, lang));
        return;
      }
      following.current = r.data.task_id;
      // a quick task may have ended before this answer came: its end is the state to show
      const end = lastSeen.current.get(r.data.task_id);
      if (end && !isRunningSync(end)) {
        setTask(end);
        finish(end);
      } else setTask(r.data);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };

  const running = task !== null && isRunningSync(task);
  const pct = task ? percent(task.progress.fraction) : null;
  return (
    <div className="jr-refresh" id="jr-refresh">
      <button id="jr-sync-closes" type="button" disabled={running} onClick={() => void start()}>
        {running ? t("syncClosesRunning") : t("syncCloses")}
      </button>{" "}
      <span className="hint">{t("syncClosesHint")}</span>
      {error && (
        <p className="error" role="alert" id="jr-sync-error">
          {error}
        </p>
      )}
      {task && running && (
        <div id="jr-sync-progress" data-task-id={task.task_id} data-status={task.status}>
          <span className="hint">{[task.progress.stage, task.progress.detail ?? ""].filter((s) => s !== "").join(" ")}</span>
          <div className={`task-progress${pct === null ? " indeterminate" : ""}`} role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={pct ?? undefined}>
            <div className="task-progress-fill" style={pct === null ? undefined : { width: `${pct}%` }} />
          </div>
        </div>
      )}
      {task && !running && task.status !== "completed" && (
        <p className="error" role="alert" id="jr-sync-failed" data-status={task.status}>
          {task.status === "cancelled" ? t("syncClosesCancelled") : t("syncClosesFailed", { message: task.error ?? "" })}
        </p>
      )}
      {result && task && !running && (
        <div id="jr-sync-done" data-task-id={task?.task_id}>
          <p className="hint">{t("syncClosesDone", { summary: result.summary, at: task?.finished_at?.slice(0, 19).replace("T", " ") ?? "" })}</p>
          <ul className="jr-sync-outcomes">
            {result.outcomes.map((o) => (
              <li key={o.code} className={o.status === "failed" || o.status === "not_supported" ? "warn" : undefined} data-code={o.code} data-status={o.status} data-last-close={o.lastClose ?? undefined}>
                <b>{o.code}</b>{" "}
                {o.status === "updated"
                  ? t("syncUpdated", { n: o.newBars ?? 0, d: o.lastClose ?? "—" })
                  : o.status === "up_to_date"
                    ? t("syncCurrent", { d: o.lastClose ?? "—" })
                    : o.status === "not_supported"
                      ? t("syncNone", { why: o.why ?? "" })
                      : t("syncFailed", { why: o.why ?? "" })}
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
