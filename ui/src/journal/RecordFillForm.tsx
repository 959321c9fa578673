// The portfolio page's "record a fill" form: buy or sell, code, date, price, shares and
// optional fees (empty → the backtest's fee rules, which the form says). The backend
// validates (a sale beyond the holding, a date after today, an unknown code); its refusal
// is shown beside the form and nothing is written.
import { useContext, useState } from "react";
import { commands, type JournalReport } from "../bindings";
import { LanguageContext } from "../i18n";
import { formatShares } from "../chat/portfolio";
import { todayIso } from "../pages/workspaceModel";
import { draftToFill, fen, journalErrorText, priceText, type FillDraft } from "./journalModel";
import { journalText } from "./text";

const FIELD_STYLE = { display: "inline-flex", alignItems: "center", gap: 6, margin: "0 12px 8px 0" } as const;

export default function RecordFillForm({ onRecorded }: { onRecorded: (report: JournalReport) => void }) {
  const lang = useContext(LanguageContext);
  const t = journalText(lang);
  const [draft, setDraft] = useState<FillDraft>(() => ({ side: "buy", code: "", date: todayIso(new Date()), price: "", shares: "", fees: "" }));
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async () => {
    setError(null);
    setDone(null);
    const fill = draftToFill(draft, t);
    if (typeof fill === "string") {
      setError(fill);
      return;
    }
    setBusy(true);
    try {
      const r = await commands.journalRecordFill(fill);
      if (r.status === "error") {
        setError(journalErrorText(r.error, lang));
        return;
      }
      // the fill just written: the highest id
      const last = r.data.summary.fills.reduce<(typeof r.data.summary.fills)[number] | null>((a, f) => (a === null || f.id > a.id ? f : a), null);
      if (last) {
        setDone(
          t("recorded", {
            side: last.side === "sell" ? t("sell") : t("buy"),
            code: last.code,
            shares: formatShares(last.shares),
            price: priceText(last.price),
            fees: fen(last.fees_total_fen),
            computed: last.fees_computed ? t("feesComputed") : "",
          }),
        );
      }
      setDraft({ ...draft, price: "", shares: "", fees: "" });
      onRecorded(r.data);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  const field = (id: string, label: string, key: Exclude<keyof FillDraft, "side">, placeholder?: string) => (
    <label className="jr-field" style={FIELD_STYLE}>
      <span>{label}</span>
      <input id={id} value={draft[key]} placeholder={placeholder} onChange={(e) => setDraft({ ...draft, [key]: e.target.value })} />
    </label>
  );

  const side = (s: "buy" | "sell") => (
    <button type="button" id={`jf-side-${s}`} className={draft.side === s ? "primary" : undefined} aria-pressed={draft.side === s} onClick={() => setDraft({ ...draft, side: s })}>
      {s === "buy" ? t("buy") : t("sell")}
    </button>
  );

  return (
    <form
      className="card jr-form"
      id="jf-form"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <h2>{t("recordTitle")}</h2>
      <div className="jr-sides" role="group" style={FIELD_STYLE}>
        {side("buy")}
        {side("sell")}
      </div>
      {field("jf-code", t("code"), "code", "000001")}
      {field("jf-date", t("date"), "date", "YYYY-MM-DD")}
      {field("jf-price", t("price"), "price")}
      {field("jf-shares", t("shares"), "shares")}
      {field("jf-fees", t("fees"), "fees")}
      <button id="jf-submit" className="primary" type="submit" disabled={busy}>
        {t("record")}
      </button>
      <p className="hint" id="jf-fees-hint">
        {t("feesHint")}
      </p>
      {error && (
        <p className="error" role="alert" id="jf-error">
          {error}
        </p>
      )}
      {done && (
        <p className="hint" id="jf-done">
          {done}
        </p>
      )}
    </form>
  );
}
