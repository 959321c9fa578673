// The exit review: each sale against the close 5 / 10 / 20 trading days later (pending
// while the cache lacks that day) and the engine's exit signal at the sale day's close.
// The code opens the stock page; the sale date opens the chart at that bar.
import { useContext } from "react";
import type { AfterSale, ExitReview } from "../bindings";
import { LanguageContext } from "../i18n";
import { formatPrice, formatPct } from "../chat/diagnosis";
import { formatShares } from "../chat/portfolio";
import { StockCodeLink } from "../chat/StockCodeLink";
import { barDate, useOpenStockAt } from "../review/openAt";
import { pnlClass } from "../pages/workspaceModel";
import { fen } from "./journalModel";
import { journalText } from "./text";

const HORIZONS = [5, 10, 20];

const SIGNAL_EN: Record<string, string> = {
  stop_loss: "stop loss",
  upthrust_warning: "upthrust warning",
  distribution_warning: "distribution warning",
};
const SIGNAL_ZH: Record<string, string> = {
  stop_loss: "止损",
  upthrust_warning: "上冲回落警告",
  distribution_warning: "派发警告",
};

export default function ExitReviews({ reviews }: { reviews: ExitReview[] }) {
  const lang = useContext(LanguageContext);
  const t = journalText(lang);
  const openAt = useOpenStockAt();

  const after = (list: AfterSale[], days: number) => {
    const a = list.find((x) => x.days === days);
    if (!a || a.status === "pending") {
      return (
        <td key={days} className="num jr-after muted" data-days={days} data-status="pending">
          {t("pending")}
        </td>
      );
    }
    return (
      <td key={days} className={["num", "jr-after", pnlClass(a.change_pct)].filter(Boolean).join(" ")} data-days={days} data-status="done" title={a.date}>
        {formatPrice(a.close)} ({formatPct(a.change_pct)})
      </td>
    );
  };

  return (
    <div className="jr-review">
      <h3>{t("reviewTitle")}</h3>
      <p className="hint">{t("reviewIntro")}</p>
      {reviews.length === 0 ? (
        <p className="hint" id="jr-no-reviews">
          {t("noReviews")}
        </p>
      ) : (
        <div className="portfolio-scroll">
          <table className="portfolio-table" id="jr-reviews">
            <thead>
              <tr>
                <th>{t("colCode")}</th>
                <th>{t("colSold")}</th>
                <th className="num">{t("colShares")}</th>
                <th className="num">{t("colRealised")}</th>
                <th>{t("colHeldSince")}</th>
                {HORIZONS.map((n) => (
                  <th key={n} className="num">
                    {t("colAfter", { n })}
                  </th>
                ))}
                <th>{t("colSignal")}</th>
              </tr>
            </thead>
            <tbody>
              {reviews.map((r) => {
                const at = barDate(r.date);
                return (
                  <tr key={r.fill_id} className="jr-review-row" data-id={r.fill_id} data-code={r.code}>
                    <td>
                      <StockCodeLink code={r.code} /> {r.name}
                    </td>
                    <td>
                      {openAt && at !== null ? (
                        <button type="button" className="link jr-sale-at" title={t("openAtSale")} onClick={() => openAt(r.code, at)}>
                          {r.date}
                        </button>
                      ) : (
                        r.date
                      )}{" "}
                      @ {formatPrice(r.price)}
                    </td>
                    <td className="num">{formatShares(r.shares)}</td>
                    <td className={["num", pnlClass(r.realised_fen)].filter(Boolean).join(" ")}>{fen(r.realised_fen)}</td>
                    <td>{r.held_since}</td>
                    {HORIZONS.map((n) => after(r.after, n))}
                    <td className="jr-signal" data-signal={r.exit_signal?.signal ?? (r.signal_unknown ? "unknown" : "none")}>
                      {r.exit_signal
                        ? `${(lang === "en" ? SIGNAL_EN : SIGNAL_ZH)[r.exit_signal.signal] ?? r.exit_signal.signal}: ${r.exit_signal.reason}`
                        : r.signal_unknown
                          ? t("signalUnknown")
                          : t("noSignal")}
                    </td>
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
