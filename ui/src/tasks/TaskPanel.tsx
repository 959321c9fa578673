// The background-task panel, on every page: each task with its stage and detail (a queued one
// with why it waits), a progress bar (indeterminate when the task cannot tell), elapsed time
// and a cancel button; finished ones with ✓ / ✗ and their result. Fed by `list_tasks` once
// and `task-changed` after.
import { useContext, useEffect, useState } from "react";
import { commands, events, type TaskInfo } from "../bindings";
import { LanguageContext } from "../i18n";
import { toolLabel } from "../chat/toolNames";
import ResultView from "./ResultView";
import { elapsed, isActive, percent, progressLine, queuedCount, runningCount, upsertTask } from "./tasks";
import { taskText } from "./text";
import { useTickingNow } from "../useTickingNow";

export type TaskActions = {
  /** Ask the agent about a stock (prefills the chat). */
  onAsk?: (text: string) => void;
  /** Open a stock's chart page. */
  onOpenStock?: (code: string) => void;
  /** Open a sweep / walk-forward on the research page. */
  onOpenResearch?: (taskId: string) => void;
};

function mark(t: TaskInfo): string {
  switch (t.status) {
    case "running":
      return "⟳";
    case "queued":
      return "⋯";
    case "completed":
      return "✓";
    default:
      return "✗";
  }
}

export default function TaskPanel({ onAsk, onOpenStock, onOpenResearch }: TaskActions) {
  const lang = useContext(LanguageContext);
  const t = (k: Parameters<typeof taskText>[1], v?: Record<string, string | number>) => taskText(lang, k, v);
  const [tasks, setTasks] = useState<TaskInfo[]>([]);
  const [open, setOpen] = useState(true);
  const [viewing, setViewing] = useState<TaskInfo | null>(null);

  useEffect(() => {
    let live = true;
    void commands.listTasks().then((r) => {
      if (live && r.status === "ok") setTasks((prev) => r.data.reduce(upsertTask, prev));
    });
    const unlisten = events.taskChanged.listen((e) => setTasks((prev) => upsertTask(prev, e.payload.task)));
    return () => {
      live = false;
      void unlisten.then((f) => f());
    };
  }, []);

  const running = runningCount(tasks);
  const queued = queuedCount(tasks);
  const now = useTickingNow(running + queued > 0);

  if (tasks.length === 0) return null;
  return (
    <aside className="task-panel" aria-label={t("title")} data-running={running}>
      <button className="task-panel-head" aria-expanded={open} onClick={() => setOpen(!open)}>
        {t("title")}
        {running > 0 && <span className="task-badge">{t("running", { n: running })}</span>}
        {queued > 0 && <span className="task-badge queued">{t("queuedCount", { n: queued })}</span>}
        <span className="task-toggle">{open ? t("collapse") : t("expand")}</span>
      </button>
      {open && (
        <ul className="task-list">
          {tasks.map((task) => {
            const pct = percent(task.progress.fraction);
            const cancelled = task.status === "cancelled";
            return (
              <li key={task.task_id} className={`task-row ${task.status}`} data-task-id={task.task_id} data-status={task.status} data-tool={task.tool_name}>
                <div className="task-line">
                  <span className="task-mark" aria-hidden="true">
                    {mark(task)}
                  </span>
                  <span className="task-name">{toolLabel(task.tool_name, task.display_name, lang)}</span>
                  <span className="task-elapsed">{elapsed(task.started_at, task.finished_at, now)}</span>
                  {task.status === "queued" && <span className="task-queued">{t("queued")}</span>}
                  {isActive(task) && (
                    <button className="task-cancel" onClick={() => void commands.cancelTask(task.task_id)}>
                      {t("cancel")}
                    </button>
                  )}
                  {task.status === "completed" && (
                    <button className="task-open" onClick={() => setViewing(task)}>
                      {t("open")}
                    </button>
                  )}
                </div>
                {task.status === "queued" && <div className="task-stage">{progressLine(task, lang)}</div>}
                {task.status === "running" && (
                  <>
                    <div className="task-stage">{progressLine(task, lang)}</div>
                    <div
                      className={`task-progress${pct === null ? " indeterminate" : ""}`}
                      role="progressbar"
                      aria-valuemin={0}
                      aria-valuemax={100}
                      aria-valuenow={pct ?? undefined}
                    >
                      <div className="task-progress-fill" style={pct === null ? undefined : { width: `${pct}%` }} />
                    </div>
                  </>
                )}
                {!isActive(task) && task.status !== "completed" && (
                  <div className="task-error">{cancelled ? t("cancelled") : `${t("failed")}: ${task.error ?? ""}`}</div>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {viewing && (
        <ResultView
          task={viewing}
          onClose={() => setViewing(null)}
          onAsk={(text) => {
            setViewing(null);
            onAsk?.(text);
          }}
          onOpenStock={(code) => {
            setViewing(null);
            onOpenStock?.(code);
          }}
          onOpenResearch={
            onOpenResearch &&
            ((taskId) => {
              setViewing(null);
              onOpenResearch(taskId);
            })
          }
        />
      )}
    </aside>
  );
}
