// A call the approval inbox held, decided later: worded here from the stored
// notice, in the page's language — allowed and run (with what it returned), allowed but
// failed, denied (with the reason), or expired unanswered.
import type { ApprovalNotice, Decider } from "../bindings";
import { useT, type MessageKey } from "../i18n";

type T = (key: MessageKey, vars?: Record<string, string | number>) => string;

function deciderText(by: Decider | null | undefined, t: T): string {
  switch (by?.type) {
    case "app":
      return t("approvalByApp");
    case "cli":
      return t("approvalByCli");
    case "bot":
      return t("approvalByBot", { bot: by.bot, sender: by.label || by.sender });
    default:
      return "";
  }
}

/** The notice's line: what happened to the queued call, who decided, and why (80
 * characters of a reason at most; the call's result is a click away). */
export function approvalNoticeText(notice: ApprovalNotice, t: T): string {
  const vars = { name: notice.display_name, by: deciderText(notice.decided_by, t) };
  const why = (notice.reason ?? "").trim().slice(0, 80);
  const withWhy = (line: string) => (why ? `${line} ${why}` : line);
  switch (notice.status) {
    case "allowed":
      return notice.reason ? withWhy(t("approvalNoticeFailed", vars)) : t("approvalNoticeAllowed", vars);
    case "denied":
      return withWhy(t("approvalNoticeDenied", vars));
    case "expired":
      return t("approvalNoticeExpired", vars);
    case "pending":
      return t("approvalNoticePending", vars);
  }
}

export default function ApprovalNoticeLine({ notice, interrupted = false }: { notice: ApprovalNotice; interrupted?: boolean }) {
  const t = useT();
  return (
    <div className={`msg system approval-notice${interrupted ? " interrupted" : ""}`} data-request-id={notice.request_id} data-status={notice.status}>
      {approvalNoticeText(notice, t)}
      {notice.status === "allowed" && notice.summary && (
        <details className="notice-summary">
          <summary>{t("noticeSummary")}</summary>
          <pre>{notice.summary}</pre>
        </details>
      )}
    </div>
  );
}
