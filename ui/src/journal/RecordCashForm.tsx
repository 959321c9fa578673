// The portfolio page's bank transfer (银证转账) form: in or out, an amount in yuan and a
// date. The cash line, the NAV and the return count it; the backend checks the amount and
// the date and its refusal is shown beside the form.
import { useContext, useState } from "react";
import { commands, type JournalReport } from "../bindings";
import { LanguageContext } from "../i18n";
import { todayIso } from "../pages/workspaceModel";
import { fen, journalErrorText } from "./journalModel";
import { journalText } from "./text";

const FIELD_STYLE = { display: "inline-flex", alignItems: "center", gap: 6, margin: "0 12px 8px 0" } as const;

export default function RecordCashForm({ onRecorded }: { onRecorded: (report: JournalReport) => void }) {
  const lang = useContext(LanguageContext);
  const t = journalText(lang);
  const [into, setInto] = useState(true);
  const [amount, setAmount] = useState("");
  const [date, setDate] = useState(() => todayIso(new Date()));
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async () => {
    setError(null);
    setDone(null);
    const yuan = Number(amount.replace(/,/g, "").trim());
    if (!Number.isFinite(yuan) || yuan <= 0) {
      setError(t("cashAmount"));
      return;
    }
    setBusy(true);
    try {
      const r = await commands.journalRecordCash({ into_account: into, amount: yuan, date: date.trim() });
      if (r.status === "error") {
        setError(journalErrorText(r.error, lang));
        return;
      }
      setDone(t("cashDone", { dir: into ? t("cashIn") : t("cashOut"), amount: fen(Math.round(yuan * 100)), cash: fen(r.data.summary.cash_fen) }));
      setAmount("");
      onRecorded(r.data);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  const dir = (v: boolean) => (
    <button type="button" id={v ? "jc-in" : "jc-out"} className={into === v ? "primary" : undefined} aria-pressed={into === v} onClick={() => setInto(v)}>
      {v ? t("cashIn") : t("cashOut")}
    </button>
  );

  return (
    <form
      className="card jr-form"
      id="jc-form"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <h3>{t("cashTitle")}</h3>
      <div style={FIELD_STYLE}>
        {dir(true)}
        {dir(false)}
      </div>
      <label className="jr-field" style={FIELD_STYLE}>
        <span>{t("cashAmount")}</span>
        <input id="jc-amount" inputMode="decimal" value={amount} onChange={(e) => setAmount(e.target.value)} />
      </label>
      <label className="jr-field" style={FIELD_STYLE}>
        <span>{t("cashDate")}</span>
        <input id="jc-date" value={date} onChange={(e) => setDate(e.target.value)} />
      </label>
      <button type="submit" id="jc-submit" className="primary" disabled={busy}>
        {t("cashSubmit")}
      </button>
      {error && (
        <p className="error" role="alert" id="jc-error">
          {error}
        </p>
      )}
      {done && (
        <p className="hint" id="jc-done">
          {done}
        </p>
      )}
    </form>
  );
}
