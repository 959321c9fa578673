import { useCallback, useEffect, useState } from "react";
import { commands, type KeyStatus, type KeysReport, type SecretError, type SecretId } from "../bindings";
import { useT } from "../i18n";
import { secretLabel, secretSlug, sourceLabel } from "../format";

function secretErrorText(err: SecretError): string {
  switch (err.type) {
    case "keychain_unavailable":
      return `${err.reason}. ${err.fix}`;
    case "keychain":
      return err.reason;
    case "empty":
      return "empty key";
  }
}

function KeyRow({ status, keychainOk, onChange }: { status: KeyStatus; keychainOk: boolean; onChange: (s: KeyStatus) => void }) {
  const t = useT();
  const slug = secretSlug(status.id);
  const [draft, setDraft] = useState("");
  const [sessionOnly, setSessionOnly] = useState(!keychainOk);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const run = async (action: () => ReturnType<typeof commands.setKey>) => {
    setBusy(true);
    setError(null);
    const res = await action();
    setBusy(false);
    if (res.status === "ok") {
      setDraft("");
      onChange(res.data);
    } else {
      setError(secretErrorText(res.error));
    }
  };

  return (
    <li className="key-row" id={`key-row-${slug}`}>
      <div className="key-head">
        <span className="key-name">{secretLabel(status.id, t)}</span>
        <span id={`key-status-${slug}`} className={status.set ? "badge ok" : "badge"} data-set={status.set ? "true" : "false"}>
          {status.set && status.source ? `${t("keySet")} · ${sourceLabel(status.source, t)}` : t("keyNotSet")}
        </span>
        <code className="env" title={t("envOverride")}>
          {status.env_var}
        </code>
      </div>
      <form
        className="key-form"
        onSubmit={(e) => {
          e.preventDefault();
          const value = draft;
          void run(() => commands.setKey(status.id, value, sessionOnly));
        }}
      >
        <input
          id={`key-input-${slug}`}
          type="password"
          autoComplete="off"
          spellCheck={false}
          placeholder={t("keyPlaceholder")}
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
        />
        <button id={`key-save-${slug}`} type="submit" disabled={busy || draft.trim() === ""}>
          {t("keySave")}
        </button>
        {status.set && status.source !== "environment" && (
          <button id={`key-delete-${slug}`} type="button" disabled={busy} onClick={() => void run(() => commands.deleteKey(status.id))}>
            {t("keyDelete")}
          </button>
        )}
        <label className="inline">
          <input type="checkbox" checked={sessionOnly} onChange={(e) => setSessionOnly(e.target.checked)} />
          {t("sessionOnly")}
        </label>
      </form>
      {error && (
        <p className="error" role="alert" id={`key-error-${slug}`}>
          {error}
        </p>
      )}
    </li>
  );
}

const sameId = (a: SecretId, b: SecretId) => JSON.stringify(a) === JSON.stringify(b);

export default function KeysPanel() {
  const t = useT();
  const [report, setReport] = useState<KeysReport | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(async () => {
    const res = await commands.keyStatuses();
    if (res.status === "ok") setReport(res.data);
    else setError(secretErrorText(res.error));
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  if (error) return <p className="error">{error}</p>;
  if (!report) return <p aria-busy="true">…</p>;
  const keychainOk = report.keychain.state === "available";
  return (
    <section className="card" id="keys-panel">
      <h2>{t("keys")}</h2>
      <p className="hint">{t("keysHint")}</p>
      {report.keychain.state === "unavailable" && (
        <div className="notice" id="keychain-unavailable" role="status">
          <strong>{t("keychainUnavailable")}</strong>
          <p>{report.keychain.reason}</p>
          <p>{report.keychain.fix}</p>
        </div>
      )}
      <ul className="keys">
        {report.keys.map((k) => (
          <KeyRow
            key={secretSlug(k.id)}
            status={k}
            keychainOk={keychainOk}
            onChange={(next) => setReport({ ...report, keys: report.keys.map((o) => (sameId(o.id, next.id) ? next : o)) })}
          />
        ))}
      </ul>
    </section>
  );
}
