// The "refresh closes" task as the portfolio page reads it: which task it is, and what
// its result says of each code (pure, so it is tested without a webview).
import type { TaskInfo } from "../bindings";

/** The background task's tool name (the backend's `LEDGER_CLOSES_TASK`). */
export const LEDGER_CLOSES_TASK = "sync_ledger_closes";

export type CodeOutcome = {
  code: string;
  /** updated / up_to_date / not_supported / failed. */
  status: string;
  /** Days not stored before (updated only). */
  newBars: number | null;
  /** YYYY-MM-DD of the last close stored after the sync. */
  lastClose: string | null;
  /** Why there is no close to fetch, or why the fetch failed. */
  why: string | null;
};

export type ClosesSyncResult = { summary: string; outcomes: CodeOutcome[] };

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** The finished task's result body (`taskResult`; task events carry none), or null when
 * it has none readable; `summary` stands in for a body without one. */
export function closesSyncResult(r: unknown, summary?: string | null): ClosesSyncResult | null {
  if (r === null || r === undefined || typeof r !== "object" || Array.isArray(r)) return null;
  const rec = r as Record<string, unknown>;
  if (!Array.isArray(rec.outcomes)) return null;
  const outcomes: CodeOutcome[] = [];
  for (const o of rec.outcomes) {
    if (o === null || typeof o !== "object") continue;
    const x = o as Record<string, unknown>;
    const status = (x.status ?? {}) as Record<string, unknown>;
    const code = str(x.code);
    const type = str(status.type);
    if (code === null || type === null) continue;
    outcomes.push({
      code,
      status: type,
      newBars: typeof status.new_bars === "number" ? status.new_bars : null,
      lastClose: str(x.last_close),
      why: str(status.reason) ?? str(status.error),
    });
  }
  return { summary: str(rec.summary) ?? summary ?? "", outcomes };
}

/** Whether `task` is a refresh that is still queued or running. */
export function isRunningSync(task: TaskInfo): boolean {
  return task.tool_name === LEDGER_CLOSES_TASK && (task.status === "running" || task.status === "queued");
}
