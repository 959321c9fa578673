// The account's daily value at the cached unadjusted closes: cash, NAV (cash + reverse
// repos + holdings), the time-weighted return and the deepest drawdown, the NAV curve on
// the charting library the research page uses, a sparkline of the holdings' market value
// and the last days in a table, with the data's date, any holding without a close and any
// day valued at adjusted closes said.
import { useContext } from "react";
import type { DayValue, Performance } from "../bindings";
import { LanguageContext } from "../i18n";
import EquityChart from "../research/EquityChart";
import HoldingLines from "./HoldingLines";
import { pnlClass } from "../pages/workspaceModel";
import { fen, sparkPoints } from "./journalModel";
import { journalText } from "./text";

/** Days shown in the table (the sparkline has them all). */
const SHOWN = 10;
const W = 320;
const H = 48;

const pct = (x: number | null | undefined) => (x === null || x === undefined ? "—" : `${x >= 0 ? "+" : ""}${x.toFixed(2)}%`);

export default function DailyValue({ values, held, performance }: { values: DayValue[]; held: boolean; performance?: Performance }) {
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
      <p className="jr-nav" id="jr-nav">
        {t("cashNow")} <b id="jr-cash" data-value={last.cash_fen + last.repo_fen}>{fen(last.cash_fen + last.repo_fen)}</b> · {t("navNow")}{" "}
        <b id="jr-nav-value" data-value={last.nav_fen}>{fen(last.nav_fen)}</b> · {t("twr")} <b id="jr-twr">{pct(performance?.twr_pct ?? last.twr_pct)}</b> · {t("maxDrawdown")}{" "}
        <b id="jr-drawdown">{pct(performance?.max_drawdown_pct)}</b>
      </p>
      <HoldingLines lines={performance?.holdings ?? []} asOf={last.date} />
      {(performance?.notes ?? []).map((n) => (
        <p key={n} className="hint warn jr-note">
          {n}
        </p>
      ))}
      {values.length > 1 && (
        <div id="jr-nav-chart" aria-label={t("navChart")}>
          <EquityChart id="jr-nav-curve" height={180} series={[{ points: values.map((v) => ({ date: v.date, equity: v.nav_fen / 100 })) }]} />
        </div>
      )}
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
              <th className="num">{t("colCash")}</th>
              <th className="num">{t("colNav")}</th>
              <th className="num">{t("colDayPnl")}</th>
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
                <td className="num jr-day-cash">{fen(v.cash_fen + v.repo_fen)}</td>
                <td className="num jr-day-nav" data-value={v.nav_fen}>
                  {fen(v.nav_fen)}
                </td>
                <td className={["num", pnlClass(v.pnl_fen)].filter(Boolean).join(" ")}>{fen(v.pnl_fen)}</td>
                <td className={v.missing.length || v.approximate.length ? "warn" : undefined}>
                  {[...v.missing, ...v.approximate.map((c) => t("approxMark", { code: c }))].join(", ")}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
