// The ledger against the balances the imported statements stated: each day-end 资金余额
// and 股份余额 beside what the ledger's entries up to that day derive. One line says how
// many agree; a table has the statement's last stated balance of cash and of each holding
// beside the ledger's; every difference is its own row with the day, the code and the
// statement line, so the reader finds where it starts. With no statement balances on
// record it says so rather than showing an empty "all agree".
import { useContext } from "react";
import type { Difference, Reconciliation as Rec } from "../bindings";
import { LanguageContext } from "../i18n";
import { balanceRow } from "./journalModel";
import { journalText } from "./text";

type Text = ReturnType<typeof journalText>;

function BalanceTable({ id, rows, rowClass, t }: { id: string; rows: Difference[]; rowClass: string; t: Text }) {
  return (
    <div className="portfolio-scroll">
      <table className="portfolio-table" id={id}>
        <thead>
          <tr>
            <th>{t("colDate")}</th>
            <th>{t("colItem")}</th>
            <th className="num">{t("colLine")}</th>
            <th className="num">{t("colStatement")}</th>
            <th className="num">{t("colLedger")}</th>
            <th className="num">{t("colGap")}</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {rows.map((d) => {
            const r = balanceRow(d);
            return (
              <tr key={r.key} className={rowClass} data-kind={r.kind} data-code={r.code} data-date={r.date} data-line={r.line} data-agrees={String(r.agrees)}>
                <td>{r.date}</td>
                <td className="jr-rec-item">{r.kind === "cash" ? t("recCash") : r.code}</td>
                <td className="num">{r.line}</td>
                <td className="num jr-rec-statement" data-value={d.statement}>
                  {r.statement}
                </td>
                <td className="num jr-rec-ledger" data-value={d.derived}>
                  {r.derived}
                </td>
                <td className={["num", "jr-rec-gap", r.agrees ? "" : "warn"].filter(Boolean).join(" ")}>{r.gap}</td>
                <td className={r.agrees ? "jr-rec-status" : "jr-rec-status warn"}>{r.agrees ? t("recOk") : t("recBad")}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

export default function Reconciliation({ rec, error }: { rec: Rec | null; error: string | null }) {
  const lang = useContext(LanguageContext);
  const t = journalText(lang);
  return (
    <div className="jr-rec" id="jr-rec">
      <h3>{t("recTitle")}</h3>
      <p className="hint">{t("recIntro")}</p>
      {error && (
        <p className="error" role="alert" id="jr-rec-error">
          {t("recLoadError", { message: error })}
        </p>
      )}
      {rec &&
        (rec.checked === 0 ? (
          <p className="hint" id="jr-rec-none">
            {t("recNone")}
          </p>
        ) : (
          <>
            <p id="jr-rec-summary" className={rec.differences.length ? "warn" : undefined} data-checked={rec.checked} data-differences={rec.differences.length}>
              {rec.differences.length === 0 ? t("recAgrees", { n: rec.checked }) : t("recDiffers", { n: rec.checked, d: rec.differences.length })}
            </p>
            {rec.differences.length > 0 && (
              <>
                <h4>{t("recDifferences")}</h4>
                <BalanceTable id="jr-rec-diffs" rows={rec.differences} rowClass="jr-rec-diff" t={t} />
              </>
            )}
            <h4>{t("recClosing")}</h4>
            <BalanceTable id="jr-rec-closing" rows={rec.closing} rowClass="jr-rec-close" t={t} />
          </>
        ))}
    </div>
  );
}
