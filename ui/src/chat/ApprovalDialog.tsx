import { useState } from "react";
import type { AlwaysAllows, ApprovalDecision, ApprovalPreview, ApprovalRequest, Value } from "../bindings";
import { useT } from "../i18n";
import { BatchSizingView, BuySizingView } from "../risk/RiskViews";

/** Parses the edited arguments: must be a JSON object. */
export function parseArgs(text: string): { ok: true; args: Value } | { ok: false; error: string } {
  try {
    const v = JSON.parse(text) as Value;
    if (typeof v !== "object" || v === null || Array.isArray(v)) return { ok: false, error: "object" };
    return { ok: true, args: v };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/** A unified diff, one line per element, coloured by its first character. */
function DiffView({ diff }: { diff: string }) {
  const lines = diff.replace(/\n$/, "").split("\n");
  const kind = (line: string) =>
    line.startsWith("+++") || line.startsWith("---") || line.startsWith("@@")
      ? "diff-meta"
      : line.startsWith("+")
        ? "diff-add"
        : line.startsWith("-")
          ? "diff-del"
          : "";
  return (
    <pre className="diff" id="approval-diff">
      {lines.map((line, i) => (
        <div key={i} className={kind(line)}>
          {line}
        </div>
      ))}
    </pre>
  );
}

/** What the call will do, worked out by the backend before it runs. */
export function PreviewView({ preview }: { preview: ApprovalPreview }) {
  const t = useT();
  switch (preview.type) {
    case "command":
      return (
        <div className="approval-preview">
          <div className="muted">{t("approvalCommand")}</div>
          <pre className="command" id="approval-command">
            {preview.command}
          </pre>
          <div>
            {t("approvalCwd")}: <code id="approval-cwd">{preview.cwd}</code>
          </div>
          <div className="muted">{t("approvalTimeLimit", { n: preview.timeout_secs })}</div>
          {preview.detaches.length > 0 && (
            <div className="warning" id="approval-detaches">
              {t("approvalDetaches")}
              <ul>
                {preview.detaches.map((d) => (
                  <li key={d}>{d}</li>
                ))}
              </ul>
            </div>
          )}
        </div>
      );
    case "file_write":
      return (
        <div className="approval-preview">
          <div>
            {t("approvalFile")}: <code id="approval-path">{preview.path}</code>
            {preview.created && <span className="badge"> {t("approvalNewFile")}</span>}
          </div>
          {preview.diff ? <DiffView diff={preview.diff} /> : <div className="muted">{t("approvalNoChange")}</div>}
        </div>
      );
    case "buy_sizing":
      return <BuySizingView preview={preview} />;
    case "batch_sizing":
      return <BatchSizingView preview={preview} />;
    case "invalid":
      return (
        <div className="warning approval-preview" id="approval-invalid">
          {t("approvalInvalid")} {preview.reason}
        </div>
      );
  }
}

/** What "always allow" lets run without asking from now on, as the backend will remember it. */
export function AlwaysAllowsView({ scope, displayName }: { scope: AlwaysAllows; displayName: string }) {
  const t = useT();
  return (
    <div className="muted approval-always" id="approval-always-allows">
      {t("approvalAlwaysScope")}{" "}
      {scope.type === "tool" ? (
        t("approvalAlwaysTool", { tool: displayName })
      ) : (
        <>
          {t("approvalAlwaysBase", { base: scope.base })}; {t("approvalAlwaysBaseAsks")}
        </>
      )}
    </div>
  );
}

export default function ApprovalDialog({
  request,
  onDecide,
}: {
  request: ApprovalRequest;
  onDecide: (decision: ApprovalDecision) => void;
}) {
  const t = useT();
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(() => JSON.stringify(request.args, null, 2));
  const parsed = parseArgs(text);
  const can = (k: ApprovalRequest["available_decisions"][number]) => request.available_decisions.includes(k);
  return (
    <div className="modal-backdrop">
      <div className="modal approval" role="dialog" aria-modal="true" aria-labelledby="approval-title" id="approval-dialog">
        <h2 id="approval-title">{t("approvalTitle")}</h2>
        <p>
          <strong id="approval-tool">{request.display_name}</strong> <code>{request.tool}</code>
        </p>
        {request.preview && !editing && <PreviewView preview={request.preview} />}
        {editing ? (
          <>
            <textarea
              id="approval-editor"
              className="json-editor"
              value={text}
              spellCheck={false}
              rows={Math.min(16, text.split("\n").length + 1)}
              onChange={(e) => setText(e.target.value)}
            />
            {!parsed.ok && (
              <div className="error" id="approval-edit-error">
                {parsed.error === "object" ? t("approvalNeedObject") : `${t("approvalBadJson")}: ${parsed.error}`}
              </div>
            )}
          </>
        ) : (
          <pre className="json" id="approval-args">{JSON.stringify(request.args, null, 2)}</pre>
        )}
        {!editing && can("allow_always") && request.always_allows && (
          <AlwaysAllowsView scope={request.always_allows} displayName={request.display_name} />
        )}
        <div className="row approval-actions">
          {editing ? (
            <>
              <button
                id="approval-run-edited"
                className="primary"
                disabled={!parsed.ok}
                onClick={() => parsed.ok && onDecide({ type: "edit", args: parsed.args })}
              >
                {t("approvalRunEdited")}
              </button>
              <button id="approval-edit-cancel" onClick={() => setEditing(false)}>
                {t("cancel")}
              </button>
            </>
          ) : (
            <>
              {can("allow_once") && (
                <button id="approval-allow-once" className="primary" onClick={() => onDecide({ type: "allow_once" })}>
                  {t("approvalAllowOnce")}
                </button>
              )}
              {can("allow_always") && (
                <button id="approval-allow-always" onClick={() => onDecide({ type: "allow_always" })}>
                  {t("approvalAllowAlways")}
                </button>
              )}
              {can("edit") && (
                <button id="approval-edit" onClick={() => setEditing(true)}>
                  {t("approvalEdit")}
                </button>
              )}
              {can("deny") && (
                <button id="approval-deny" className="danger" onClick={() => onDecide({ type: "deny" })}>
                  {t("approvalDeny")}
                </button>
              )}
            </>
          )}
        </div>
      </div>
    </div>
  );
}
