// The overview's name-history import: a path, the button, and the typed report (what was
// added, what was already there, every bad line by number); the counts under it are what
// the store holds, loaded again after an import.
import { useCallback, useContext, useEffect, useState } from "react";
import { commands, type HistoryCounts, type NamesImportReport } from "../bindings";
import { LanguageContext } from "../i18n";
import { countsText, importReportView, useHistoryText } from "./stockHistory";
import { useWorkspaceText } from "./workspaceText";
import { workspaceErrorText } from "./workspaceModel";

const errText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** `reloadKey` changes when a data task finished: the counts are read again. */
export default function NamesImport({ reloadKey }: { reloadKey: number }) {
  const h = useHistoryText();
  const wt = useWorkspaceText();
  const lang = useContext(LanguageContext);
  const [path, setPath] = useState("");
  const [busy, setBusy] = useState(false);
  const [report, setReport] = useState<NamesImportReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [counts, setCounts] = useState<HistoryCounts | null>(null);
  const [countsError, setCountsError] = useState<string | null>(null);

  const loadCounts = useCallback(async () => {
    try {
      const r = await commands.historyCounts();
      if (r.status === "ok") {
        setCounts(r.data);
        setCountsError(null);
      } else setCountsError(r.error.message);
    } catch (e) {
      setCountsError(errText(e));
    }
  }, []);
  useEffect(() => {
    void loadCounts();
  }, [loadCounts, reloadKey]);

  const submit = async () => {
    if (path.trim() === "") {
      setReport(null);
      return setError(h("namesNeedPath"));
    }
    setBusy(true);
    setError(null);
    try {
      const r = await commands.namesImport(path.trim());
      if (r.status === "ok") {
        setReport(r.data);
        if (r.data.status === "imported") void loadCounts();
      } else {
        setReport(null);
        setError(workspaceErrorText(r.error, wt, lang));
      }
    } catch (e) {
      setReport(null);
      setError(errText(e));
    } finally {
      setBusy(false);
    }
  };

  const view = report && importReportView(report, lang);
  return (
    <div id="ov-names">
      <h3>{h("namesTitle")}</h3>
      {counts && (
        <p
          id="ov-history"
          className="hint"
          data-codes={counts.codes_with_names}
          data-spans={counts.spans}
          data-first-seen={counts.first_seen_spans}
          data-delisted={counts.delisted}
          data-snapshots={counts.snapshots}
        >
          {countsText(counts, lang)}
        </p>
      )}
      {countsError && (
        <p className="error" id="ov-history-error">
          {countsError}
        </p>
      )}
      <form
        id="ov-names-form"
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <label className="pf-field" style={{ flex: 1 }}>
          <span>{h("namesPath")}</span>
          <input id="ov-names-path" value={path} placeholder="/home/me/names.csv" spellCheck={false} onChange={(e) => setPath(e.target.value)} />
        </label>
        <button id="ov-names-import" type="submit" disabled={busy}>
          {h("namesImport")}
        </button>
      </form>
      <p className="hint">{h("namesHint")}</p>
      {error && (
        <p id="ov-names-error" className="error" role="alert">
          {error}
        </p>
      )}
      {view && report && (
        <div id="ov-names-report" data-status={report.status} role={view.ok ? "status" : "alert"}>
          <p className={view.ok ? "hint" : "error"} id="ov-names-headline">
            {view.headline}
          </p>
          {view.lines.length > 0 && (
            <ul id="ov-names-errors">
              {report.status === "rejected" &&
                view.lines.map((l, i) => (
                  <li key={i} className="ov-names-bad" data-line={report.errors[i]?.line}>
                    {l}
                  </li>
                ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}
