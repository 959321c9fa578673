// The account journal on the portfolio page: record a fill or a bank transfer, import a
// broker 交割单, the fills with realised P/L, the other entries the ledger holds (transfers,
// dividends, repos, notes…), the daily NAV with cash, the ledger against the imported
// statements' balances and the exit review. The positions table above is the page's own;
// a fill or an import re-derives the positions in the backend, so the page is told to
// reload it (`onChanged`). `refreshKey` changes when the page wrote a position by hand (an
// opening fill), so the journal reloads too. Any change to the ledger reloads the
// reconciliation, which compares the whole ledger with the stated balances. Once the ledger
// holds a code, a button refreshes the closes it is valued at (a background task).
import { useCallback, useContext, useEffect, useState } from "react";
import { commands, type JournalReport, type Reconciliation as Rec } from "../bindings";
import { LanguageContext } from "../i18n";
import AccountActivity from "./AccountActivity";
import DailyValue from "./DailyValue";
import ExitReviews from "./ExitReviews";
import FillsList from "./FillsList";
import ImportFills from "./ImportFills";
import RecordCashForm from "./RecordCashForm";
import RecordFillForm from "./RecordFillForm";
import RefreshCloses from "./RefreshCloses";
import Reconciliation from "./Reconciliation";
import { journalErrorText } from "./journalModel";
import { journalText } from "./text";
import "./journal.css";

export default function Journal({ onChanged, refreshKey }: { onChanged: () => void; refreshKey?: unknown }) {
  const lang = useContext(LanguageContext);
  const t = journalText(lang);
  const [report, setReport] = useState<JournalReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [rec, setRec] = useState<Rec | null>(null);
  const [recError, setRecError] = useState<string | null>(null);

  const loadRec = useCallback(async () => {
    try {
      const r = await commands.journalReconciliation();
      if (r.status === "ok") {
        setRec(r.data);
        setRecError(null);
      } else setRecError(journalErrorText(r.error, lang));
    } catch (e) {
      setRecError(e instanceof Error ? e.message : String(e));
    }
  }, [lang]);

  const load = useCallback(async () => {
    try {
      const r = await commands.journalReport();
      if (r.status === "ok") {
        setReport(r.data);
        setError(null);
      } else setError(journalErrorText(r.error, lang));
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  }, [lang]);
  useEffect(() => {
    void load();
    void loadRec();
  }, [load, loadRec, refreshKey]);
  /** The ledger changed by a form: its report came back with it; the reconciliation is asked again. */
  const recorded = (r: JournalReport) => {
    setReport(r);
    void loadRec();
  };

  return (
    <section className="jr" id="journal">
      <h2>{t("title")}</h2>
      <p className="hint">{t("intro")}</p>
      <div className="jr-inputs">
        <RecordFillForm
          onRecorded={(r) => {
            recorded(r);
            onChanged();
          }}
        />
        <RecordCashForm onRecorded={recorded} />
        <ImportFills
          onImported={() => {
            void load();
            void loadRec();
            onChanged();
          }}
        />
      </div>
      {error && (
        <p className="error" role="alert" id="jr-load-error">
          {t("loadError", { message: error })}
        </p>
      )}
      {report && report.summary.entries.some((e) => e.instrument !== null) && (
        <RefreshCloses
          onDone={() => {
            void load();
            onChanged();
          }}
        />
      )}
      {report && (
        <>
          <FillsList summary={report.summary} />
          <AccountActivity entries={report.summary.entries} />
          <DailyValue values={report.values} held={report.summary.entries.length > 0} performance={report.performance} />
        </>
      )}
      <Reconciliation rec={rec} error={recError} />
      {report && <ExitReviews reviews={report.reviews} />}
    </section>
  );
}
