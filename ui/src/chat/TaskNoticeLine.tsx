// A finished background task's notice in its conversation: worded here
// from the stored fields, in the page's language; the model's notification text is
// never shown or parsed.
import type { TaskNotice } from "../bindings";
import { useT, type MessageKey } from "../i18n";

type T = (key: MessageKey, vars?: Record<string, string | number>) => string;

/** The notice's line: outcome and task, with why it failed (80 characters at most). A
 * notification stored before notices were typed has none: a plain line then. */
export function noticeText(notice: TaskNotice | null, t: T): string {
  if (!notice) return t("noticeUnknown");
  const name = notice.display_name;
  switch (notice.outcome) {
    case "completed":
      return t("noticeCompleted", { name });
    case "cancelled":
      return t("noticeCancelled", { name });
    case "failed": {
      const why = (notice.error ?? "").trim().slice(0, 80);
      return why ? `${t("noticeFailed", { name })} ${why}` : t("noticeFailed", { name });
    }
  }
}

export default function TaskNoticeLine({ notice, interrupted = false }: { notice: TaskNotice | null; interrupted?: boolean }) {
  const t = useT();
  return (
    <div className={`msg system task-notice${interrupted ? " interrupted" : ""}`} data-task-id={notice?.task_id} data-outcome={notice?.outcome}>
      {noticeText(notice, t)}
      {notice?.outcome === "completed" && notice.summary && (
        <details className="notice-summary">
          <summary>{t("noticeSummary")}</summary>
          <pre>{notice.summary}</pre>
        </details>
      )}
    </div>
  );
}
