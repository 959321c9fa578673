// The risk views: the Settings section of sizing and account limits, the portfolio page's
// account risk, and a buy's sizing in the approval dialog and the inbox. Every figure is
// the backend's (the engine's sizing and limits); these only draw them.
import { useEffect, useState } from "react";
import { commands, type AccountRisk, type BatchPreview, type BuyPreview, type RiskBreach, type RiskSettings } from "../bindings";
import { useRiskText } from "./text";

// f64 figures cross IPC as `number | null` (a non-finite one is null): shown as "—".
const yuan = (fen: number) => (fen / 100).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const price = (e6: number) => (e6 / 1e6).toFixed(2);
const pct = (v: number | null) => (v === null ? "—" : v.toFixed(2));

/** One breached limit in words. */
export function BreachText({ b }: { b: RiskBreach }) {
  const t = useRiskText();
  switch (b.type) {
    case "heat":
      return <>{t("heatBreach", { v: pct(b.heat_pct), limit: pct(b.limit_pct) })}</>;
    case "industry":
      return <>{t("industryBreach", { industry: b.industry, v: pct(b.share_pct), limit: pct(b.limit_pct) })}</>;
    case "positions":
      return <>{t("positionsBreach", { count: b.count, limit: b.limit })}</>;
    case "drawdown":
      return <>{t("drawdownBreach", { v: pct(b.drawdown_pct), limit: pct(b.limit_pct) })}</>;
    case "stop_outs":
      return <>{t("stopOutsBreach", { count: b.count, days: b.days, limit: b.limit })}</>;
    case "trade_risk":
      return <>{t("tradeRiskBreach", { v: pct(b.risk_pct), limit: pct(b.limit_pct) })}</>;
    case "position_size":
      return <>{t("positionSizeBreach", { v: pct(b.cost_pct), limit: pct(b.limit_pct) })}</>;
    case "cash":
      return <>{t("cashBreach", { cost: yuan(b.cost_fen), cash: yuan(b.cash_fen) })}</>;
  }
}

function Breaches({ breaches, id }: { breaches: RiskBreach[]; id: string }) {
  const t = useRiskText();
  if (breaches.length === 0) return <div className="ok" id={`${id}-none`}>{t("noBreach")}</div>;
  return (
    <div className="warning" id={id}>
      {t("breaks")}
      <ul>
        {breaches.map((b, i) => (
          <li key={i} data-limit={b.type}>
            <BreachText b={b} />
          </li>
        ))}
      </ul>
    </div>
  );
}

/** A buy's sizing: the proposed shares and their risk beside what the rules give. */
export function BuySizingView({ preview }: { preview: BuyPreview }) {
  const t = useRiskText();
  const s = preview.sizing;
  return (
    <div className="approval-preview" id="approval-sizing">
      <div className="muted">
        {t("buyTitle")} · {preview.code} {preview.name}
      </div>
      {s ? (
        <table className="sizing-table">
          <tbody>
            <tr>
              <th />
              <th>{t("proposed")}</th>
              <th>{t("rules")}</th>
            </tr>
            <tr>
              <th>{t("shares", { n: "" }).trim()}</th>
              <td id="sizing-proposed-shares">{preview.proposed_shares}</td>
              <td id="sizing-rule-shares">{s.shares}</td>
            </tr>
            <tr>
              <th>{t("risk")}</th>
              <td id="sizing-proposed-risk">
                {yuan(s.proposed_risk_fen)} ({pct(s.proposed_risk_pct)}%)
              </td>
              <td id="sizing-rule-risk">
                {yuan(s.risk_fen)} ({pct(s.risk_pct)}%)
              </td>
            </tr>
          </tbody>
        </table>
      ) : (
        <div className="warning" id="sizing-unavailable">
          {t("notSized")}
          {preview.unavailable}
        </div>
      )}
      {s && (
        <div>
          {t("stop")}: <span id="sizing-stop">{price(s.stop_e6)}</span> ({s.stop_from}) · {t("budget")}: {yuan(s.risk_budget_fen)}
          {s.why_none && <div className="warning">{s.why_none}</div>}
          {s.bound.length > 0 && (
            <div className="muted">
              {t("bound")}: {s.bound.join("；")}
            </div>
          )}
        </div>
      )}
      <Breaches breaches={preview.breaches} id="sizing-breaches" />
      {preview.notes.length > 0 && (
        <ul className="muted">
          {preview.notes.map((n, i) => (
            <li key={i}>{n}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** A batch `update_portfolio`: each line (an add with the rules' size, its stop, risk and
 *  the limits it breaks on the account with the earlier lines applied), then the batch's
 *  heat and positions before and after and the limits the whole batch breaks. */
export function BatchSizingView({ preview }: { preview: BatchPreview }) {
  const t = useRiskText();
  const action = (a: string) => (a === "add" ? t("actionAdd") : a === "update" ? t("actionUpdate") : a === "remove" ? t("actionRemove") : a);
  const limitOf = (v: number, unit: string) => <Limit v={v} unit={unit} />;
  return (
    <div className="approval-preview" id="approval-batch">
      <div className="muted">{t("batchTitle")}</div>
      {preview.unavailable && (
        <div className="warning" id="batch-unavailable">
          {t("notSized")}
          {preview.unavailable}
        </div>
      )}
      <table className="sizing-table batch-table">
        <thead>
          <tr>
            <th>{t("batchLine")}</th>
            <th>{t("batchCode")}</th>
            <th>{t("batchAction")}</th>
            <th>{t("batchShares")}</th>
            <th>{t("batchRule")}</th>
            <th>{t("batchRisk")}</th>
            <th>{t("batchBreaks")}</th>
          </tr>
        </thead>
        <tbody>
          {preview.lines.map((l) => {
            const s = l.buy?.sizing ?? null;
            const breaches = l.buy?.breaches ?? [];
            return (
              <tr key={l.line} data-line={l.line} data-code={l.code} data-breaches={breaches.map((b) => b.type).join(" ")}>
                <td>{l.line}</td>
                <td>
                  {l.code} {l.name}
                </td>
                <td>{action(l.action)}</td>
                <td className="batch-shares">
                  {l.held_shares} → {l.shares ?? (l.action === "remove" ? 0 : "—")}
                </td>
                <td className="batch-rule-shares">{s ? s.shares : l.buy?.unavailable ? t("none") : "—"}</td>
                <td className="batch-risk" title={s ? [s.stop_from, ...s.bound, s.why_none ?? ""].filter((x) => x).join("；") : (l.buy?.unavailable ?? "")}>
                  {s ? `${price(s.stop_e6)} · ${yuan(s.proposed_risk_fen)} (${pct(s.proposed_risk_pct)}%)` : "—"}
                </td>
                <td className={breaches.length > 0 ? "warning batch-line-breaches" : "batch-line-breaches"}>
                  {breaches.length === 0
                    ? "—"
                    : breaches.map((b, i) => (
                        <div key={i} data-limit={b.type}>
                          <BreachText b={b} />
                        </div>
                      ))}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <div id="batch-total">
        {t("batchTotal")}:{" "}
        <span id="batch-heat">{t("batchHeat", { before: pct(preview.heat_before_pct), after: pct(preview.heat_after_pct) })}</span>
        {limitOf(preview.max_heat_pct ?? 0, "%")} ·{" "}
        <span id="batch-positions">{t("batchPositions", { before: preview.positions_before, after: preview.positions_after })}</span>
        {limitOf(preview.max_positions, "")}
      </div>
      {preview.breaches.length > 0 ? (
        <div className="warning" id="batch-breaches">
          {t("batchBatchBreaks")}
          <ul>
            {preview.breaches.map((b, i) => (
              <li key={i} data-limit={b.type}>
                <BreachText b={b} />
              </li>
            ))}
          </ul>
        </div>
      ) : (
        <div className="ok" id="batch-breaches-none">
          {t("noBreach")}
        </div>
      )}
      {preview.notes.length > 0 && (
        <ul className="muted">
          {preview.notes.map((n, i) => (
            <li key={i}>{n}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

const RISK_FIELDS: { key: keyof RiskSettings; label: Parameters<ReturnType<typeof useRiskText>>[0] }[] = [
  { key: "risk_per_trade_pct", label: "riskPerTrade" },
  { key: "max_position_pct", label: "maxPosition" },
  { key: "max_heat_pct", label: "maxHeat" },
  { key: "max_industry_pct", label: "maxIndustry" },
  { key: "max_positions", label: "maxPositions" },
  { key: "drawdown_brake_pct", label: "drawdownBrake" },
  { key: "max_stop_outs", label: "maxStopOuts" },
  { key: "stop_out_days", label: "stopOutDays" },
];

/** The Settings section: sizing and account limits (saved with the rest of the form). */
export function RiskSettingsPanel({ value, onChange }: { value: RiskSettings; onChange: (v: RiskSettings) => void }) {
  const t = useRiskText();
  return (
    <section className="card" id="settings-risk">
      <h2>{t("settingsTitle")}</h2>
      <p className="muted">{t("settingsHint")}</p>
      {RISK_FIELDS.map(({ key, label }) => (
        <label className="field" htmlFor={`set-risk-${key}`} key={key}>
          <span>{t(label)}</span>
          <input
            id={`set-risk-${key}`}
            type="number"
            step="any"
            value={value[key] ?? ""}
            onChange={(e) => onChange({ ...value, [key]: e.target.valueAsNumber })}
          />
        </label>
      ))}
    </section>
  );
}

function Limit({ v, unit }: { v: number; unit: string }) {
  const t = useRiskText();
  return <span className="muted"> ({v > 0 ? t("limit", { v: `${v}${unit}` }) : t("off")})</span>;
}

/** The portfolio page's account risk: heat, the largest industry, positions, the brake. */
export function AccountRiskSection({ reload }: { reload?: unknown }) {
  const t = useRiskText();
  const [risk, setRisk] = useState<AccountRisk | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    commands
      .portfolioRisk()
      .then((r) => {
        if (!live) return;
        if (r.status === "ok") {
          setRisk(r.data);
          setError(null);
        } else setError(r.error.message);
      })
      .catch((e: unknown) => live && setError(e instanceof Error ? e.message : String(e)));
    return () => {
      live = false;
    };
  }, [reload]);
  if (error)
    return (
      <p className="error" role="alert" id="pf-risk-error">
        {t("loadError")}
        {error}
      </p>
    );
  if (!risk) return null;
  const r = risk.risk;
  const lim = r.limits;
  return (
    <section className="card" id="pf-risk">
      <h2>{t("pfRiskTitle")}</h2>
      <div id="pf-risk-heat">
        {t("heat")}: {yuan(r.heat_fen)} ({pct(r.heat_pct)}%)
        <Limit v={lim.max_heat_bp / 100} unit="%" />
      </div>
      <div id="pf-risk-industry">
        {t("largestIndustry")}:{" "}
        {r.largest_industry ? `${r.largest_industry.industry} ${pct(r.largest_industry.share_pct)}%` : t("noIndustry")}
        <Limit v={lim.max_industry_bp / 100} unit="%" />
      </div>
      <div id="pf-risk-positions">
        {t("positions")}: {r.positions}
        <Limit v={lim.max_positions} unit="" />
      </div>
      <div id="pf-risk-brake" className={r.brake.length > 0 ? "warning" : undefined}>
        {t("brake")}: {r.brake.length > 0 ? t("brakeOn") : t("brakeOff")} · {t("drawdown")} {pct(r.drawdown_pct)}%
        <Limit v={lim.drawdown_brake_bp / 100} unit="%" /> · {t("stopOuts", { days: lim.stop_out_days })} {r.recent_stop_outs}
        <Limit v={lim.max_stop_outs} unit="" />
        {r.brake.length > 0 && (
          <ul>
            {r.brake.map((b, i) => (
              <li key={i}>
                <BreachText b={b} />
              </li>
            ))}
          </ul>
        )}
      </div>
      <div className="muted">
        {risk.equity_source.type === "ledger" ? t("equityLedger", { date: risk.equity_source.date }) : t("equityPortfolio")} · {yuan(r.equity_fen)}
      </div>
      {risk.notes.length > 0 && (
        <ul className="muted" id="pf-risk-notes">
          {risk.notes.map((n, i) => (
            <li key={i}>{n}</li>
          ))}
        </ul>
      )}
    </section>
  );
}
