// The journal's fills, newest first, with each sale's realised P/L and the totals.
import { useContext } from "react";
import type { JournalSummary, Side, Source } from "../bindings";
import { LanguageContext } from "../i18n";
import { formatShares } from "../chat/portfolio";
import { StockCodeLink } from "../chat/StockCodeLink";
import { pnlClass } from "../pages/workspaceModel";
import { fen, newestFirst, priceText } from "./journalModel";
import { journalText, type JournalKey } from "./text";

const SIDE: Record<Side, JournalKey> = { buy: "sideBuy", sell: "sideSell", opening: "sideOpening" };
const SOURCE: Record<Source, JournalKey> = { manual: "srcManual", cli: "srcCli", agent: "srcAgent", import: "srcImport", opening: "srcOpening" };

export default function FillsList({ summary }: { summary: JournalSummary }) {
  const lang = useContext(LanguageContext);
  const t = journalText(lang);
  const fills = newestFirst(summary.fills);
  return (
    <div className="jr-fills">
      <h3>{t("fillsTitle")}</h3>
      <dl className="facts" id="jr-totals">
        <dt>{t("realisedTotal")}</dt>
        <dd id="jr-realised" className={pnlClass(summary.realised_fen)} data-value={summary.realised_fen}>
          {fen(summary.realised_fen)}
        </dd>
        <dt>{t("feesTotal")}</dt>
        <dd id="jr-fees" data-value={summary.fees_fen}>
          {fen(summary.fees_fen)}
        </dd>
      </dl>
      {fills.length === 0 ? (
        <p className="hint" id="jr-no-fills">
          {t("noFills")}
        </p>
      ) : (
        <div className="portfolio-scroll">
          <table className="portfolio-table" id="jr-fills">
            <thead>
              <tr>
                <th>{t("colDate")}</th>
                <th>{t("colSide")}</th>
                <th>{t("colCode")}</th>
                <th>{t("colName")}</th>
                <th className="num">{t("colPrice")}</th>
                <th className="num">{t("colShares")}</th>
                <th className="num">{t("colAmount")}</th>
                <th className="num">{t("colFees")}</th>
                <th className="num">{t("colRealised")}</th>
                <th>{t("colSource")}</th>
              </tr>
            </thead>
            <tbody>
              {fills.map((f) => (
                <tr key={f.id} className="jr-fill" data-id={f.id} data-code={f.code} data-side={f.side}>
                  <td>{f.date}</td>
                  <td className={f.side === "buy" ? "up" : f.side === "sell" ? "down" : undefined}>{t(SIDE[f.side])}</td>
                  <td>
                    <StockCodeLink code={f.code} />
                  </td>
                  <td>{f.name}</td>
                  <td className="num">{priceText(f.price)}</td>
                  <td className="num jr-fill-shares">{formatShares(f.shares)}</td>
                  <td className="num">{fen(f.amount_fen)}</td>
                  <td className="num jr-fill-fees" data-value={f.fees_total_fen} title={`${fen(f.fees.commission_fen)} + ${fen(f.fees.stamp_fen)} + ${fen(f.fees.transfer_fen)}`}>
                    {fen(f.fees_total_fen)}
                    {f.fees_computed ? ` (${t("computedMark")})` : ""}
                  </td>
                  <td className={["num", "jr-fill-realised", pnlClass(f.realised_fen)].filter(Boolean).join(" ")} data-value={f.realised_fen ?? ""}>
                    {f.realised_fen === null ? "" : fen(f.realised_fen)}
                  </td>
                  <td>{t(SOURCE[f.source])}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
