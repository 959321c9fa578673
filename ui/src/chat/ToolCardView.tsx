import { useEffect, useState } from "react";
import { useT } from "../i18n";
import { asDiagnosis, type Diagnosis } from "./diagnosis";
import type { ToolCard } from "./reducer";

const FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";

export function Spinner() {
  const [i, setI] = useState(0);
  useEffect(() => {
    const h = setInterval(() => setI((n) => (n + 1) % FRAMES.length), 80);
    return () => clearInterval(h);
  }, []);
  return <span className="spinner" aria-hidden="true">{FRAMES[i]}</span>;
}

export function formatElapsed(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${(ms / 1000).toFixed(1)}s`;
}

export function DiagnosisCard({ d }: { d: Diagnosis }) {
  const t = useT();
  const rows: [string, string | null][] = [
    [t("diagHealth"), d.health],
    [t("diagMa"), d.maPattern],
    [t("diagChannel"), d.l2Channel],
    [t("diagTriggers"), d.triggers.length ? d.triggers.join("、") : null],
    [t("diagStop"), d.stop],
    [t("diagTargets"), d.targets.length ? d.targets.join(" / ") : null],
    [t("diagData"), [d.dataStatus, d.asOf].filter(Boolean).join(" · ") || null],
  ];
  return (
    <div className="diagnosis">
      <div className="diagnosis-title">
        {d.name ?? ""} {d.code ? <code>{d.code}</code> : null}
      </div>
      <dl className="facts">
        {rows
          .filter(([, v]) => v !== null && v !== "")
          .map(([k, v]) => (
            <div key={k} className="fact">
              <dt>{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
      </dl>
    </div>
  );
}

const OUTCOMES = ["allow_once", "allow_always", "edit", "deny", "timeout"] as const;

function approvalLabel(outcome: string, t: ReturnType<typeof useT>): string {
  const known = OUTCOMES.find((o) => o === outcome);
  return known ? t(`approval_${known}`) : outcome;
}

export default function ToolCardView({ card }: { card: ToolCard }) {
  const t = useT();
  const [open, setOpen] = useState(false);
  const diagnosis = card.status === "ok" ? asDiagnosis(card.result) : null;
  const status =
    card.status === "running" || card.status === "pending" ? (
      <Spinner />
    ) : card.status === "ok" ? (
      <span className="ok">✓ {card.elapsedMs !== null ? formatElapsed(card.elapsedMs) : ""}</span>
    ) : card.status === "error" ? (
      <span className="error">✗</span>
    ) : (
      <span className="muted">{t("toolInterrupted")}</span>
    );
  return (
    <div className={`tool-card tool-${card.status}`} data-tool={card.name} data-status={card.status}>
      <button className="tool-head" onClick={() => setOpen(!open)} aria-expanded={open}>
        <span className="tool-status">{status}</span>
        <span className="tool-name">{card.displayName}</span>
        {card.status === "error" && <span className="error tool-error">{card.error}</span>}
        {card.approval && <span className="badge">{approvalLabel(card.approval, t)}</span>}
      </button>
      {diagnosis && <DiagnosisCard d={diagnosis} />}
      {open && (
        <div className="tool-body">
          <div className="hint">{t("toolArgs")}</div>
          <pre className="json">{JSON.stringify(card.args, null, 2)}</pre>
          {card.result !== null && (
            <>
              <div className="hint">{t("toolResult")}</div>
              <pre className="json">{JSON.stringify(card.result, null, 2)}</pre>
            </>
          )}
        </div>
      )}
    </div>
  );
}
