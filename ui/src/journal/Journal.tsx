// The account journal on the portfolio page: record a fill or a bank transfer, import a
// broker 交割单, the fills with realised P/L, the daily NAV with cash and the exit review. The
// positions table above is the page's own; a fill or an import re-derives the positions
// in the backend, so the page is told to reload it (`onChanged`). `refreshKey` changes
// when the page wrote a position by hand (an opening fill), so the journal reloads too.
import { useCallback, useContext, useEffect, useState } from "react";
import { commands, type JournalReport } from "../bindings";
import { LanguageContext } from "../i18n";
import DailyValue from "./DailyValue";
import ExitReviews from "./ExitReviews";
import FillsList from "./FillsList";
import ImportFills from "./ImportFills";
import RecordCashForm from "./RecordCashForm";
import RecordFillForm from "./RecordFillForm";
import { journalErrorText } from "./journalModel";
import { journalText } from "./text";
import "./journal.css";

export default function Journal({ onChanged, refreshKey }: { onChanged: () => void; refreshKey?: unknown }) {
  const lang = useContext(LanguageContext);
  const t = journalText(lang);
  const [report, setReport] = useState<JournalReport | null>(null);
  const [error, setError] = useState<string | null>(null);

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
  }, [load, refreshKey]);

  return (
    <section className="jr" id="journal">
      <h2>{t("title")}</h2>
      <p className="hint">{t("intro")}</p>
      <div className="jr-inputs">
        <RecordFillForm
          onRecorded={(r) => {
            setReport(r);
            onChanged();
          }}
        />
        <RecordCashForm onRecorded={setReport} />
        <ImportFills
          onImported={() => {
            void load();
            onChanged();
          }}
        />
      </div>
      {error && (
        <p className="error" role="alert" id="jr-load-error">
          {t("loadError", { message: error })}
        </p>
      )}
      {report && (
        <>
          <FillsList summary={report.summary} />
          <DailyValue values={report.values} held={report.summary.entries.length > 0} performance={report.performance} />
          <ExitReviews reviews={report.reviews} />
        </>
      )}
    </section>
  );
}
