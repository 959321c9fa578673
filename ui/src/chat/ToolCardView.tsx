import { useContext, useEffect, useRef, useState } from "react";
import { LanguageContext, useT } from "../i18n";
import { MISSING, asDiagnosis, engineLabel, formatPct, formatPrice, type Diagnosis, type TargetLevel } from "./diagnosis";
import PortfolioTable from "./PortfolioTable";
import { asPortfolio } from "./portfolio";
import type { ToolCard } from "./reducer";
import { InlineChart, StockCodeLink } from "./StockCodeLink";
import { asOutcome, isDelegate, paneElapsed, roleLabel, roleOf, useRoleLimits } from "./subagent";
import { useTickingNow } from "../useTickingNow";
import { toolLabel } from "./toolNames";
import { barDate, useOpenStockAt } from "../review/openAt";

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

const TARGET_KINDS = ["conservative", "aggressive", "measured_move", "prior_120d_high", "atr_3x"] as const;
const DATA_STATUSES = ["ok", "stale", "partial", "unavailable", "no_data"] as const;

function targetText(levels: TargetLevel[], t: ReturnType<typeof useT>, sep: string): string {
  if (levels.length === 0) return MISSING;
  return levels
    .map((l) => {
      const known = TARGET_KINDS.find((k) => k === l.kind);
      const label = known ? t(`diagTarget_${known}`) : l.kind;
      return label ? `${label} ${formatPrice(l.price)}` : formatPrice(l.price);
    })
    .join(sep);
}

/** A diagnosis as a card. Its figures lead to their source: the stock page
 * at the diagnosis's bar (its as-of date), or, with no bar to open, the tool result. */
export function DiagnosisCard({ d, onShowSource }: { d: Diagnosis; onShowSource?: () => void }) {
  const t = useT();
  const lang = useContext(LanguageContext);
  const [chartShown, setChartShown] = useState(false);
  const openAt = useOpenStockAt();
  const at = barDate(d.asOf);
  const code = d.code;
  const openBar = code && openAt && at !== null ? () => openAt(code, at) : null;
  const source = openBar ?? onShowSource ?? null;
  const sourceTitle = openBar && at !== null ? t("diagOpenBar", { date: d.asOf ?? String(at) }) : t("diagFromResult");
  const status = DATA_STATUSES.find((s) => s === d.dataStatus);
  const close =
    d.latestClose === null ? MISSING : d.dayChangePct === null ? formatPrice(d.latestClose) : `${formatPrice(d.latestClose)} (${formatPct(d.dayChangePct)})`;
  // [label, text, is a figure (a number read off the bar, or the bar's date)]
  const rows: [string, string, boolean][] = [
    [t("diagHealth"), engineLabel(d.health, lang) ?? MISSING, false],
    [t("diagClose"), close, true],
    ...(d.cost !== null || d.pnlPct !== null
      ? ([
          [t("diagCost"), formatPrice(d.cost), true],
          [t("diagPnl"), formatPct(d.pnlPct), true],
        ] as [string, string, boolean][])
      : []),
    [t("diagMa"), engineLabel(d.maPattern, lang) ?? MISSING, false],
    [t("diagChannel"), engineLabel(d.l2Channel, lang) ?? MISSING, false],
    [t("diagTriggers"), d.triggers.length ? d.triggers.join(lang === "zh" ? "、" : ", ") : MISSING, false],
    [t("diagStop"), formatPrice(d.stop), true],
    [t("diagTargets"), targetText(d.targets, t, " / "), true],
    ...(d.candidates.length ? ([[t("diagCandidates"), targetText(d.candidates, t, " · "), true]] as [string, string, boolean][]) : []),
    [t("diagData"), [status ? t(`diagStatus_${status}`) : d.dataStatus, d.asOf].filter(Boolean).join(" · ") || MISSING, true],
  ];
  return (
    <div className="diagnosis">
      <div className="diagnosis-title">
        {d.name ?? ""} {d.code ? <StockCodeLink code={d.code} /> : null}
        {d.code && (
          <button type="button" className="link chart-toggle" aria-expanded={chartShown} onClick={() => setChartShown((v) => !v)}>
            {chartShown ? t("diagHideChart") : t("diagShowChart")}
          </button>
        )}
        {onShowSource && (
          <button type="button" className="link diag-result" onClick={onShowSource}>
            {t("diagResult")}
          </button>
        )}
      </div>
      {chartShown && d.code && <InlineChart code={d.code} />}
      <dl className="facts">
        {rows.map(([k, v, figure]) => (
          <div key={k} className="fact">
            <dt>{k}</dt>
            <dd>
              {figure && source && v !== MISSING ? (
                <button type="button" className="link diag-figure" data-at={openBar ? (at ?? undefined) : undefined} title={sourceTitle} onClick={source}>
                  {v}
                </button>
              ) : (
                v
              )}
            </dd>
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

/** The sub-agent's pane in a delegate card: live progress (its clock ticking), then its
 * structured result; a reopened conversation shows the same from the stored steps and
 * result. Limits come from the backend's role table. */
export function SubAgentPaneView({ card }: { card: ToolCard }) {
  const lang = useContext(LanguageContext);
  const role = roleOf(card.name);
  const limits = useRoleLimits(role);
  const outcome = card.status === "ok" ? asOutcome(card.result) : null;
  const pane = card.sub;
  const zh = lang === "zh";
  // Tool rounds against the role's max_tool_rounds (the result's `rounds` counts model
  // calls, the answer's too); a result stored before tool_rounds existed shows "…".
  const toolRounds = outcome ? outcome.toolRounds : (pane?.toolRounds ?? 0);
  const running = card.status === "running" && outcome === null;
  const now = useTickingNow(running);
  const elapsed = paneElapsed(outcome?.elapsed ?? null, running, card.startedAt, now);
  return (
    <details className="subagent-pane" open data-agent={role} data-status={outcome?.status ?? (card.status === "running" ? "running" : card.status)}>
      <summary>
        {roleLabel(role, limits, zh)}
        {outcome ? ` · ${outcome.status}` : card.status === "running" ? (zh ? " · 工作中" : " · working") : ""}
        {limits && (
          <span className="subagent-limits" data-elapsed={elapsed}>
            {zh ? "工具轮次" : "tool rounds"} {toolRounds ?? "…"}/{limits.rounds} · {elapsed}/{limits.deadline}s
          </span>
        )}
      </summary>
      {pane && pane.tools.length > 0 && (
        <ul className="subagent-tools">
          {pane.tools.map((t, i) => (
            <li key={i} className={`subagent-tool ${t.status}`} data-tool={t.name} data-status={t.status}>
              {t.status === "running" ? "⟳" : t.status === "ok" ? "✓" : "✗"} {t.name}
              {t.ms !== null && ` ${formatElapsed(t.ms)}`}
              {t.error && <span className="error"> {t.error}</span>}
            </li>
          ))}
        </ul>
      )}
      {pane && pane.text !== "" && !outcome && <div className="subagent-text">{pane.text}</div>}
      {outcome && (
        <div className="subagent-outcome">
          {outcome.result !== "" && <div className="subagent-text">{outcome.result}</div>}
          {outcome.error !== "" && <div className="error">{outcome.error}</div>}
          <div className="hint subagent-policy" data-next-action={outcome.nextAction}>
            {outcome.nextAction}
            {outcome.instruction ? ` — ${outcome.instruction}` : ""}
            {outcome.contextTruncated ? (zh ? " · 上下文已裁剪" : " · context cut") : ""}
            {outcome.resultTruncated ? (zh ? " · 结果已截断" : " · result cut") : ""}
          </div>
        </div>
      )}
    </details>
  );
}

export default function ToolCardView({ card }: { card: ToolCard }) {
  const t = useT();
  const lang = useContext(LanguageContext);
  const [open, setOpen] = useState(false);
  const body = useRef<HTMLDivElement>(null);
  // A diagnosis figure with no bar to open shows the result it came from.
  const showSource = () => {
    setOpen(true);
    requestAnimationFrame(() => body.current?.scrollIntoView?.({ block: "nearest" }));
  };
  const portfolio = card.status === "ok" && card.name === "portfolio" ? asPortfolio(card.result) : null;
  const diagnosis = card.status === "ok" && !portfolio && !isDelegate(card.name) ? asDiagnosis(card.result) : null;
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
    <div className={`tool-card tool-${card.status}`} data-tool={card.name} data-status={card.status} data-call-id={card.id}>
      <button className="tool-head" onClick={() => setOpen(!open)} aria-expanded={open}>
        <span className="tool-status">{status}</span>
        <span className="tool-name">{toolLabel(card.name, card.displayName, lang)}</span>
        {card.status === "error" && <span className="error tool-error">{card.error}</span>}
        {card.approval && <span className="badge">{approvalLabel(card.approval, t)}</span>}
      </button>
      {isDelegate(card.name) && <SubAgentPaneView card={card} />}
      {portfolio && <PortfolioTable p={portfolio} />}
      {diagnosis && <DiagnosisCard d={diagnosis} onShowSource={showSource} />}
      {open && (
        <div className="tool-body" ref={body}>
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
