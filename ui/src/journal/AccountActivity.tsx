// The ledger's entries that are not trades — bank transfers, dividends, interest, taxes
// and fees, bonus and rights shares, reverse repos and the notes kept for the record
// (指定交易, 新股申购…) — newest first, each with the cash it moved, so a user sees what an
// imported statement booked besides the fills.
import { useContext } from "react";
import type { EntryKind, EntryRow, Source } from "../bindings";
import { LanguageContext } from "../i18n";
import { formatShares } from "../chat/portfolio";
import { StockCodeLink } from "../chat/StockCodeLink";
import { pnlClass } from "../pages/workspaceModel";
import { activityEntries, entryCode, entryDetail, entrySharesIn, fen } from "./journalModel";
import { journalText, type JournalKey } from "./text";

const KIND: Record<EntryKind["type"], JournalKey> = {
  buy: "sideBuy",
  sell: "sideSell",
  opening: "sideOpening",
  cash_in: "kindCashIn",
  cash_out: "kindCashOut",
  dividend: "kindDividend",
  interest: "kindInterest",
  tax: "kindTax",
  fee: "kindFee",
  bonus_shares: "kindBonus",
  rights_issue: "kindRights",
  repo_lend: "kindRepoLend",
  repo_return: "kindRepoReturn",
  subscription_paid: "kindSubscriptionPaid",
  subscription_released: "kindSubscriptionReleased",
  note: "kindNote",
};
const SOURCE: Record<Source, JournalKey> = { manual: "srcManual", cli: "srcCli", agent: "srcAgent", import: "srcImport", opening: "srcOpening" };

export default function AccountActivity({ entries }: { entries: EntryRow[] }) {
  const lang = useContext(LanguageContext);
  const t = journalText(lang);
  const rows = activityEntries(entries);
  return (
    <div className="jr-activity">
      <h3>{t("activityTitle")}</h3>
      <p className="hint">{t("activityIntro")}</p>
      {rows.length === 0 ? (
        <p className="hint" id="jr-no-activity">
          {t("noActivity")}
        </p>
      ) : (
        <div className="portfolio-scroll">
          <table className="portfolio-table" id="jr-activity">
            <thead>
              <tr>
                <th>{t("colDate")}</th>
                <th>{t("colKind")}</th>
                <th>{t("colCode")}</th>
                <th>{t("colName")}</th>
                <th className="num">{t("colSharesIn")}</th>
                <th className="num">{t("colCashMove")}</th>
                <th>{t("colDetail")}</th>
                <th>{t("colSource")}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => {
                const code = entryCode(e.kind);
                const shares = entrySharesIn(e.kind);
                return (
                  <tr key={e.id} className="jr-activity-row" data-id={e.id} data-kind={e.kind.type} data-code={code}>
                    <td>{e.time ? `${e.date} ${e.time}` : e.date}</td>
                    <td className="jr-activity-kind">{t(KIND[e.kind.type])}</td>
                    <td>{code && <StockCodeLink code={code} />}</td>
                    <td>{e.name}</td>
                    <td className="num jr-activity-shares">{shares === null ? "" : `+${formatShares(shares)}`}</td>
                    <td className={["num", "jr-activity-cash", pnlClass(e.cash_fen)].filter(Boolean).join(" ")} data-value={e.cash_fen}>
                      {e.cash_fen === 0 ? "" : `${e.cash_fen > 0 ? "+" : ""}${fen(e.cash_fen)}`}
                    </td>
                    <td className="jr-activity-detail">{entryDetail(e.kind, t)}</td>
                    <td>{t(SOURCE[e.source])}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
