// Each line the account holds at the last day valued and what it counts for in the NAV:
// a stock, ETF, LOF or bond at its unadjusted close, with that close's day (and how far
// it is behind the valuation day); a reverse repo at its principal; a new-share
// subscription's money frozen at what was paid; a code without any
// close named as not valued, with what would bring one.
import { useContext } from "react";
import type { HoldingValue, Instrument } from "../bindings";
import { LanguageContext } from "../i18n";
import { fen } from "./journalModel";
import { journalText, type JournalKey } from "./text";

const KIND: Record<Instrument, JournalKey> = {
  stock: "kindStock",
  fund: "kindFund",
  bond: "kindBond",
  repo: "kindRepo",
  other: "kindOther",
};

export default function HoldingLines({ lines, asOf }: { lines: HoldingValue[]; asOf: string }) {
  const lang = useContext(LanguageContext);
  const t = journalText(lang);
  if (lines.length === 0) return null;
  const what = (h: HoldingValue) => {
    const v = h.valuation;
    switch (v.type) {
      case "close":
        return t("lineClose", {
          close: v.close === null ? "—" : v.close.toFixed(3),
          shares: h.shares,
          value: fen(v.value_fen),
          date: v.close_date,
          behind: (v.days_behind > 0 ? t("lineBehind", { n: v.days_behind }) : "") + (v.exact ? "" : t("lineApprox")),
        });
      case "principal":
        return t("linePrincipal", { value: fen(v.value_fen) });
      case "frozen":
        return t("lineFrozen", { value: fen(v.value_fen) });
      case "unvalued":
        return t("lineUnvalued", { reason: v.reason });
    }
  };
  return (
    <div className="jr-lines" id="jr-lines">
      <h4>{t("linesTitle", { d: asOf })}</h4>
      <ul>
        {lines.map((h) => (
          <li
            key={h.code}
            className={["jr-line", h.valuation.type === "unvalued" || (h.valuation.type === "close" && h.valuation.days_behind > 0) ? "warn" : ""].filter(Boolean).join(" ")}
            data-code={h.code}
            data-valuation={h.valuation.type}
            data-value={h.valuation.type === "unvalued" ? undefined : h.valuation.value_fen}
          >
            <b>{h.code}</b> <span className="jr-line-kind">{t(KIND[h.instrument])}</span> {what(h)}
          </li>
        ))}
      </ul>
    </div>
  );
}
