// The account's daily value from the cached closes: a sparkline of the holdings' market
// value and the last days in a table, with the data's date and any holding without a
// close said (cash is not in the journal, so not in the value).
import { useContext } from "react";
import type { DayValue } from "../bindings";
import { LanguageContext } from "../i18n";
import { pnlClass } from "../pages/workspaceModel";
import { fen, sparkPoints } from "./journalModel";
import { journalText } from "./text";

/** Days shown in the table (the sparkline has them all). */
const SHOWN = 10;
const W = 320;
const H = 48;

export default function DailyValue({ values, held }: { values: DayValue[]; held: boolean }) {
  const lang = useContext(LanguageContext);
  const t = journalText(lang);
  if (values.length === 0) {
    // nothing held ever: nothing to say; held but unvalued: say why
    return held ? (
      <div className="jr-value">
        <h3>{t("valueTitle")}</h3>
        <p className="hint warn" id="jr-value-none">
          {t("valueNone")}
        </p>
      </div>
    ) : null;
  }
  const last = values[values.length - 1];
  const daysMissing = values.filter((v) => v.missing.length > 0).length;
  const points = sparkPoints(values, W, H);
  const recent = values.slice(-SHOWN).reverse();
  return (
    <div className="jr-value" id="jr-value">
      <h3>{t("valueTitle")}</h3>
      <p className="hint" id="jr-value-asof" data-date={last.date}>
        {t("valueAsOf", { d: last.date })}
      </p>
      {last.missing.length > 0 && (
        <p className="hint warn" id="jr-value-missing">
          {t("valueMissing", { d: last.date, codes: last.missing.join(", ") })}
        </p>
      )}
      {daysMissing > 0 && <p className="hint warn">{t("valueDaysMissing", { n: daysMissing })}</p>}
      {points && (
        <svg className="jr-spark" id="jr-spark" width={W} height={H} viewBox={`0 0 ${W} ${H}`} role="img" aria-label={t("sparkLabel", { from: values[0].date, to: last.date })}>
          <title>{t("sparkLabel", { from: values[0].date, to: last.date })}</title>
          <polyline points={points} fill="none" stroke="currentColor" strokeWidth={1.5} />
        </svg>
      )}
      <p className="hint">{t("valueLast", { n: recent.length })}</p>
      <div className="portfolio-scroll">
        <table className="portfolio-table" id="jr-value-table">
          <thead>
            <tr>
              <th>{t("colDate")}</th>
              <th className="num">{t("colMarketValue")}</th>
              <th className="num">{t("colCostBasis")}</th>
              <th className="num">{t("colUnrealised")}</th>
              <th className="num">{t("colRealisedCum")}</th>
              <th>{t("colMissing")}</th>
            </tr>
          </thead>
          <tbody>
            {recent.map((v) => (
              <tr key={v.date} className="jr-day" data-date={v.date}>
                <td>{v.date}</td>
                <td className="num" data-value={v.market_value_fen}>
                  {fen(v.market_value_fen)}
                </td>
                <td className="num">{fen(v.cost_basis_fen)}</td>
                <td className={["num", pnlClass(v.unrealised_fen)].filter(Boolean).join(" ")}>{fen(v.unrealised_fen)}</td>
                <td className={["num", pnlClass(v.realised_fen)].filter(Boolean).join(" ")}>{fen(v.realised_fen)}</td>
                <td className={v.missing.length ? "warn" : undefined}>{v.missing.join(", ")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
