// Starts a research request as a background task and follows it: progress from the task
// events, the stored result once it completes, its error otherwise.
import { useCallback, useEffect, useRef, useState } from "react";
import { commands, events, type ResearchRequest, type TaskInfo, type Value } from "../bindings";
import { percent } from "../tasks/tasks";

export function useTaskRun(onFinished?: (task: TaskInfo) => void) {
  const [task, setTask] = useState<TaskInfo | null>(null);
  const [result, setResult] = useState<Value | null>(null);
  const [error, setError] = useState<string | null>(null);
  const id = useRef<string | null>(null);
  const finished = useRef(onFinished);
  finished.current = onFinished;

  const follow = useCallback(async (t: TaskInfo) => {
    if (t.task_id !== id.current) return;
    setTask(t);
    if (t.status === "completed") {
      const r = await commands.taskResult(t.task_id);
      if (t.task_id !== id.current) return;
      if (r.status === "ok" && r.data !== null) setResult(r.data);
      else setError(r.status === "error" ? r.error.message : "no result");
      finished.current?.(t);
    } else if (t.status === "failed" || t.status === "cancelled") {
      setError(t.error ?? t.status);
      finished.current?.(t);
    }
  }, []);

  useEffect(() => {
    const unlisten = events.taskChanged.listen((e) => void follow(e.payload.task));
    return () => {
      void unlisten.then((f) => f());
    };
  }, [follow]);

  const start = useCallback(
    async (request: ResearchRequest): Promise<string | null> => {
      setResult(null);
      setError(null);
      setTask(null);
      id.current = null;
      const r = await commands.startResearch(request);
      if (r.status === "error") {
        setError(r.error.message);
        return r.error.message;
      }
      id.current = r.data.task_id;
      setTask(r.data);
      // A task that finished before the listener saw it: read its state once.
      const list = await commands.listTasks();
      const now = list.status === "ok" ? list.data.find((t) => t.task_id === r.data.task_id) : undefined;
      if (now && now.status !== "running" && now.status !== "queued") await follow(now);
      return null;
    },
    [follow],
  );

  /** Follows a task started earlier (the page was left while it ran). */
  const attach = useCallback(
    async (t: TaskInfo) => {
      id.current = t.task_id;
      setTask(t);
      if (t.status !== "running" && t.status !== "queued") await follow(t);
    },
    [follow],
  );

  const cancel = useCallback(() => {
    if (id.current) void commands.cancelTask(id.current);
  }, []);

  return { task, result, error, start, attach, cancel, percent: task ? percent(task.progress.fraction) : null };
}
