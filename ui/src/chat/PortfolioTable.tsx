import { useContext } from "react";
import { StockCodeLink } from "./StockCodeLink";
import { LanguageContext, useT } from "../i18n";
import { MISSING, engineLabel, formatPct, formatPrice } from "./diagnosis";
import { formatCost, formatMoney, formatShares, type Portfolio, type PortfolioRow } from "./portfolio";

const DATA_STATUSES = ["ok", "stale", "partial", "unavailable", "no_data"] as const;

/** Red up, green down (A-share convention). */
const pnlClass = (n: number | null) => (n === null || n === 0 ? undefined : n > 0 ? "up" : "down");

function DiagnosisCell({ r }: { r: PortfolioRow }) {
  const lang = useContext(LanguageContext);
  if (r.error) return <span className="error">{engineLabel(r.error, lang)}</span>;
  const parts = [engineLabel(r.health, lang), engineLabel(r.verdict, lang)].filter((p): p is string => !!p);
  return <span title={r.healthReasons.join("\n") || undefined}>{parts.length ? parts.join(" · ") : MISSING}</span>;
}

/** The `portfolio` tool's result as a table (positions, or the per-holding diagnosis). */
export default function PortfolioTable({ p }: { p: Portfolio }) {
  const t = useT();
  const diagnose = p.mode === "diagnose";
  const status = DATA_STATUSES.find((s) => s === p.dataStatus);
  const facts: [string, string][] = [
    [t("pfFreeCash"), formatMoney(p.freeCash)],
    ...(diagnose
      ? ([
          [t("pfMarketValue"), formatMoney(p.totalMarketValue)],
          [t("pfTotalAssets"), formatMoney(p.totalAssets)],
          [t("diagData"), [status ? t(`diagStatus_${status}`) : p.dataStatus, p.asOf].filter(Boolean).join(" · ") || MISSING],
        ] as [string, string][])
      : []),
  ];
  return (
    <div className="portfolio" data-mode={p.mode}>
      {p.rows.length > 0 && (
        <div className="portfolio-scroll">
          <table className="portfolio-table">
            <thead>
              <tr>
                <th>{t("pfCode")}</th>
                <th>{t("pfName")}</th>
                <th className="num">{t("pfShares")}</th>
                <th className="num">{t("pfCost")}</th>
                {diagnose ? (
                  <>
                    <th className="num">{t("pfLast")}</th>
                    <th className="num">{t("pfPnl")}</th>
                    <th className="num">{t("pfWeight")}</th>
                    <th>{t("pfDiagnosis")}</th>
                  </>
                ) : (
                  <>
                    <th>{t("pfBuyDate")}</th>
                    <th className="num">{t("pfStop")}</th>
                  </>
                )}
              </tr>
            </thead>
            <tbody>
              {p.rows.map((r, i) => (
                <tr key={`${r.code ?? ""}-${i}`} className="portfolio-row" data-code={r.code ?? ""}>
                  <td>
                    {r.code ? <StockCodeLink code={r.code} /> : <code>{MISSING}</code>}
                  </td>
                  <td>{r.name ?? MISSING}</td>
                  <td className="num">{formatShares(r.shares)}</td>
                  <td className="num">{formatCost(r.cost)}</td>
                  {diagnose ? (
                    <>
                      <td className="num">{formatPrice(r.latestClose)}</td>
                      <td className={["num", pnlClass(r.pnlPct)].filter(Boolean).join(" ")}>{formatPct(r.pnlPct)}</td>
                      <td className="num">{r.weightPct === null ? MISSING : `${r.weightPct.toFixed(2)}%`}</td>
                      <td className="portfolio-diagnosis">
                        <DiagnosisCell r={r} />
                      </td>
                    </>
                  ) : (
                    <>
                      <td>{r.buyDate ?? MISSING}</td>
                      <td className="num">{formatPrice(r.stop)}</td>
                    </>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <dl className="facts portfolio-facts">
        {facts.map(([k, v]) => (
          <div key={k} className="fact">
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      {p.notes.map((n) => (
        <p key={n} className="hint portfolio-note">
          {n}
        </p>
      ))}
    </div>
  );
}
