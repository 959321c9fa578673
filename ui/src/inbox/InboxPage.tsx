// The approval inbox: calls queued by runs with nobody to ask, each with
// who asked, its expiry, the same preview the approval dialog shows (diff, command,
// folder) and the exact arguments; Allow / Deny (with an optional reason). Decided ones
// show their status, who decided and what the call returned. Below, the approval log.
// Reloaded on `inbox-changed` (an answer here, or the app's inbox watcher). An allow whose
// preview changed since the request was queued comes back refused: the card then shows the
// new preview (reloaded) with why, to be allowed again.
import { useCallback, useEffect, useState } from "react";
import { commands, events, type AuditEntry, type CommandError, type InboxRequest, type InboxView } from "../bindings";
import { useT } from "../i18n";
import { PreviewView } from "../chat/ApprovalDialog";
import { useTickingNow } from "../useTickingNow";
import {
  argsLine,
  beijingTime,
  decisionText,
  deciderText,
  expiresText,
  inboxErrorText,
  reasonOrNull,
  requesterText,
  statusText,
  type Translate,
} from "./inbox";
import "./inbox.css";

function OpenConversation({ id, t }: { id: string; t: Translate }) {
  return (
    <button
      type="button"
      className="link inbox-open-conversation"
      // The same event the tray and notifications send: the app shows that conversation.
      onClick={() => void events.openConversation.emit({ conversation_id: id })}
    >
      {t("inboxOpenConversation")}
    </button>
  );
}

export function RequestCard({
  request,
  now,
  onAnswer,
}: {
  request: InboxRequest;
  now: number;
  /** Resolves with the backend's refusal, if any. */
  onAnswer: (allow: boolean, reason: string | null) => Promise<CommandError | null>;
}) {
  const t = useT();
  const [denying, setDenying] = useState(false);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CommandError | null>(null);
  const pending = request.status === "pending";
  const answer = async (allow: boolean) => {
    setBusy(true);
    setError(null);
    const e = await onAnswer(allow, allow ? null : reasonOrNull(reason));
    setBusy(false);
    setError(e);
  };
  return (
    <li className={`inbox-request ${request.status}`} data-request-id={request.id} data-status={request.status} data-tool={request.tool}>
      <div className="row inbox-request-head">
        <strong className="inbox-tool">{request.display_name}</strong> <code>{request.tool}</code>
        <span className={`badge inbox-status ${request.status}`}>{statusText(request.status, t)}</span>
      </div>
      <div className="muted inbox-meta">
        <span className="inbox-requested-by" data-requested-by={request.requested_by}>
          {t("inboxRequestedBy")}: {requesterText(request.requested_by, t)}
        </span>
        {" · "}
        <span>{t("inboxCreated", { at: beijingTime(request.created_at) })}</span>
        {pending && (
          <>
            {" · "}
            <span className="inbox-expires">{expiresText(request.expires_at, now, t)}</span>
          </>
        )}{" "}
        <OpenConversation id={request.conversation_id} t={t} />
      </div>
      {pending && request.preview && <PreviewView preview={request.preview} />}
      {pending ? (
        <>
          <div className="muted">{t("inboxArgs")}</div>
          <pre className="json inbox-args">{JSON.stringify(request.args, null, 2)}</pre>
        </>
      ) : (
        <div className="inbox-args-line muted" title={JSON.stringify(request.args)}>
          {argsLine(request.args)}
        </div>
      )}
      {!pending && (
        <div className="inbox-decided" data-decided-by={request.decided_by?.type ?? undefined}>
          {t("inboxDecidedBy", {
            status: statusText(request.status, t),
            by: request.decided_by ? deciderText(request.decided_by, t) : "—",
            at: request.decided_at ? beijingTime(request.decided_at) : expiresText(request.expires_at, now, t),
          })}
        </div>
      )}
      {!pending && request.result && (
        <details className="inbox-result">
          <summary>{t("inboxResult")}</summary>
          <pre>{request.result}</pre>
        </details>
      )}
      {pending && denying && (
        <textarea
          className="inbox-deny-reason"
          placeholder={t("inboxDenyReason")}
          aria-label={t("inboxDenyReason")}
          value={reason}
          rows={2}
          onChange={(e) => setReason(e.target.value)}
        />
      )}
      {pending && (
        <div className="row inbox-actions">
          {denying ? (
            <>
              <button type="button" className="danger inbox-deny-confirm" disabled={busy} onClick={() => void answer(false)}>
                {t("inboxDenyConfirm")}
              </button>
              <button type="button" className="inbox-deny-cancel" disabled={busy} onClick={() => setDenying(false)}>
                {t("cancel")}
              </button>
            </>
          ) : (
            <>
              <button type="button" className="primary inbox-allow" disabled={busy} onClick={() => void answer(true)}>
                {t("inboxAllow")}
              </button>
              <button type="button" className="danger inbox-deny" disabled={busy} onClick={() => setDenying(true)}>
                {t("inboxDeny")}
              </button>
            </>
          )}
          {busy && <span className="muted">{t("inboxWorking")}</span>}
        </div>
      )}
      {error && <div className="error inbox-error">{inboxErrorText(error, t)}</div>}
    </li>
  );
}

export function AuditLog({ entries }: { entries: AuditEntry[] }) {
  const t = useT();
  return (
    <section className="inbox-log" id="approval-log">
      <h2>{t("inboxLogTitle")}</h2>
      <p className="muted">{t("inboxLogIntro")}</p>
      {entries.length === 0 ? (
        <p className="muted inbox-log-empty">{t("inboxLogEmpty")}</p>
      ) : (
        <table className="inbox-log-table">
          <thead>
            <tr>
              <th>{t("inboxLogTime")}</th>
              <th>{t("inboxLogTool")}</th>
              <th>{t("inboxLogArgs")}</th>
              <th>{t("inboxLogDecision")}</th>
              <th>{t("inboxLogBy")}</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr
                key={e.id}
                className="inbox-log-row"
                data-call-id={e.call_id}
                data-request-id={e.request_id ?? undefined}
                data-decision={e.decision}
                data-decided-by={e.decided_by.type}
              >
                <td>{beijingTime(e.at)}</td>
                <td>
                  <code>{e.tool}</code>
                </td>
                <td className="inbox-log-args" title={JSON.stringify(e.args)}>
                  {argsLine(e.args, 80)}
                </td>
                <td>{decisionText(e.decision, t)}</td>
                <td className="inbox-log-by">{deciderText(e.decided_by, t)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export default function InboxPage() {
  const t = useT();
  const [view, setView] = useState<InboxView | null>(null);
  const [log, setLog] = useState<AuditEntry[]>([]);
  const [problem, setProblem] = useState<CommandError | null>(null);
  // A decision whose conversation is told later (no model now), and why.
  const [toldLater, setToldLater] = useState<string | null>(null);
  // Minutes are enough for an expiry; the ticking hook counts seconds.
  const now = useTickingNow(true);

  const reload = useCallback(async () => {
    const [v, l] = await Promise.all([commands.inboxList(), commands.approvalLog()]);
    if (v.status === "ok") setView(v.data);
    if (l.status === "ok") setLog(l.data);
    setProblem(v.status === "error" ? v.error : l.status === "error" ? l.error : null);
  }, []);

  useEffect(() => {
    void reload();
    const unlisten = events.inboxChanged.listen(() => void reload());
    return () => {
      void unlisten.then((f) => f());
    };
  }, [reload]);

  const answer = useCallback(
    async (id: string, allow: boolean, reason: string | null): Promise<CommandError | null> => {
      const r = allow ? await commands.inboxAllow(id) : await commands.inboxDeny(id, reason);
      await reload();
      setToldLater(r.status === "ok" ? r.data.told_later : null);
      return r.status === "error" ? r.error : null;
    },
    [reload],
  );

  const pending = view?.requests.filter((r) => r.status === "pending") ?? [];
  const decided = view?.requests.filter((r) => r.status !== "pending") ?? [];
  return (
    <div className="page inbox-page" id="inbox-page">
      <h1>{t("inboxTitle")}</h1>
      <p className="muted">{t("inboxIntro")}</p>
      {problem && <div className="error inbox-problem">{inboxErrorText(problem, t)}</div>}
      {toldLater && <div className="muted inbox-told-later">{t("inboxToldLater", { why: toldLater })}</div>}
      {view === null ? (
        <p className="muted">{t("inboxLoading")}</p>
      ) : (
        <>
          <h2>{t("inboxPendingHeading", { n: pending.length })}</h2>
          {pending.length === 0 ? (
            <p className="muted inbox-empty">{t("inboxEmpty")}</p>
          ) : (
            <ul className="inbox-list inbox-pending">
              {pending.map((r) => (
                <RequestCard key={r.id} request={r} now={now} onAnswer={(allow, reason) => answer(r.id, allow, reason)} />
              ))}
            </ul>
          )}
          {decided.length > 0 && (
            <>
              <h2>{t("inboxDecidedHeading")}</h2>
              <ul className="inbox-list inbox-decided-list">
                {decided.map((r) => (
                  <RequestCard key={r.id} request={r} now={now} onAnswer={(allow, reason) => answer(r.id, allow, reason)} />
                ))}
              </ul>
            </>
          )}
        </>
      )}
      <AuditLog entries={log} />
    </div>
  );
}

/** The sidebar's way to the inbox, with the number of requests waiting (from the first
 * read, then every `inbox-changed`). */
export function InboxNavButton({ active, onClick }: { active: boolean; onClick: () => void }) {
  const t = useT();
  const [pending, setPending] = useState(0);
  useEffect(() => {
    let live = true;
    void commands.inboxList().then((r) => {
      if (live && r.status === "ok") setPending(r.data.pending);
    });
    const unlisten = events.inboxChanged.listen((e) => setPending(e.payload.pending));
    return () => {
      live = false;
      void unlisten.then((f) => f());
    };
  }, []);
  return (
    <button id="nav-inbox" className={active ? "active" : ""} onClick={onClick} data-pending={pending}>
      {t("navInbox")}
      {pending > 0 && (
        <span className="inbox-badge" id="inbox-badge" aria-label={String(pending)}>
          {pending}
        </span>
      )}
    </button>
  );
}
