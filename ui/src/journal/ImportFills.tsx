// "Import 交割单 / 对账单": the chosen file's bytes go to the backend as they are (it decodes
// UTF-8 or GBK and knows the big brokers' columns). All rows or none: a refused file
// lists every bad line with its number and says plainly that nothing was imported. A done
// import says what was already on record and how the statement's own balances compare
// with the ledger, every difference named. A file over the backend's size cap is refused
// before it is read.
import { useContext, useRef, useState } from "react";
import { commands, type Difference, type ImportOutcome } from "../bindings";
import { LanguageContext } from "../i18n";
import { badLines, fen, journalErrorText, type BadLine } from "./journalModel";
import { journalText } from "./text";

/** The backend's cap on a statement (`STATEMENT_MAX_BYTES`): a bigger file is refused
 *  here, before it is read into memory and sent. */
export const STATEMENT_MAX_BYTES = 32 * 1024 * 1024;

type State =
  | { kind: "idle" }
  | { kind: "busy"; name: string }
  | { kind: "done"; name: string; outcome: ImportOutcome }
  | { kind: "refused"; name: string; message: string; lines: BadLine[] };

/** A file's bytes (FileReader: also in the test DOM, which lacks Blob.arrayBuffer in places). */
function readBytes(file: File): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(Array.from(new Uint8Array(reader.result as ArrayBuffer)));
    reader.onerror = () => reject(reader.error ?? new Error("read failed"));
    reader.readAsArrayBuffer(file);
  });
}

export default function ImportFills({ onImported }: { onImported: () => void }) {
  const lang = useContext(LanguageContext);
  const t = journalText(lang);
  const [state, setState] = useState<State>({ kind: "idle" });
  const input = useRef<HTMLInputElement>(null);

  const importFile = async (file: File) => {
    if (file.size > STATEMENT_MAX_BYTES) {
      setState({ kind: "refused", name: file.name, message: t("importTooLarge", { size: file.size, limit: STATEMENT_MAX_BYTES }), lines: [] });
      if (input.current) input.current.value = "";
      return;
    }
    setState({ kind: "busy", name: file.name });
    try {
      const r = await commands.journalImport(await readBytes(file));
      if (r.status === "ok") {
        setState({ kind: "done", name: file.name, outcome: r.data });
        onImported();
      } else {
        const message = journalErrorText(r.error, lang);
        setState({ kind: "refused", name: file.name, message, lines: r.error.kind === "invalid_input" ? badLines(r.error.message) : [] });
      }
    } catch (e) {
      setState({ kind: "refused", name: file.name, message: e instanceof Error ? e.message : String(e), lines: [] });
    } finally {
      // the same file, corrected, can be chosen again
      if (input.current) input.current.value = "";
    }
  };

  return (
    <div className="card jr-import" id="ji-card">
      <h2>{t("importTitle")}</h2>
      <label className="jr-file">
        <span>{t("importChoose")}</span>{" "}
        <input
          ref={input}
          id="ji-file"
          type="file"
          accept=".csv,text/csv,text/plain"
          disabled={state.kind === "busy"}
          onChange={(e) => {
            const f = e.target.files?.[0];
            if (f) void importFile(f);
          }}
        />
      </label>
      <p className="hint">{t("importHint")}</p>
      {state.kind === "busy" && <p className="hint">{t("importing", { name: state.name })}</p>}
      {state.kind === "done" && (
        <div id="ji-done" data-imported={state.outcome.imported}>
          <p>{t("imported", { n: state.outcome.imported, name: state.name, pnl: fen(state.outcome.realised_fen) })}</p>
          {state.outcome.duplicates > 0 && (
            <p className="hint" id="ji-duplicates">
              {t("importDuplicates", { n: state.outcome.duplicates })}
            </p>
          )}
          <Reconciled outcome={state.outcome} t={t} />
          {state.outcome.skipped.length > 0 && (
            <>
              <p className="hint">{t("importSkipped")}</p>
              <ul className="hint" id="ji-skipped">
                {state.outcome.skipped.map((s) => (
                  <li key={s.line} data-line={s.line}>
                    {t("importSkippedLine", { line: s.line, business: s.business })}
                  </li>
                ))}
              </ul>
            </>
          )}
          {state.outcome.ignored.length > 0 && (
            <>
              <p className="hint">{t("importIgnored")}</p>
              <ul className="hint" id="ji-ignored">
                {state.outcome.ignored.map((l) => (
                  <li key={l.line} data-line={l.line}>
                    {t("importIgnoredLine", { line: l.line, text: l.text })}
                  </li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
      {state.kind === "refused" && (
        <div className="error" role="alert" id="ji-error">
          <p>
            <strong>{t("importRefused", { name: state.name })}</strong>
          </p>
          {state.lines.length > 0 ? (
            <ul id="ji-bad-lines">
              {state.lines.map((l) => (
                <li key={`${l.line}-${l.message}`} className="ji-bad-line" data-line={l.line}>
                  {t("badLine", { line: l.line })} {l.message}
                </li>
              ))}
            </ul>
          ) : (
            <p id="ji-error-message">{state.message}</p>
          )}
          <p id="ji-nothing">{t("importNothing")}</p>
        </div>
      )}
    </div>
  );
}

type Text = ReturnType<typeof journalText>;

/** The statement's balances against the ledger: agreement in one line, else each difference. */
function Reconciled({ outcome, t }: { outcome: ImportOutcome; t: Text }) {
  const r = outcome.reconciliation;
  if (r.checked === 0) return <p className="hint" id="ji-reconcile">{t("noBalances")}</p>;
  if (r.differences.length === 0) return <p id="ji-reconcile">{t("reconciled", { n: r.checked })}</p>;
  const line = (d: Difference) =>
    d.kind === "cash"
      ? t("reconcileCash", { date: d.date, statement: fen(d.statement), derived: fen(d.derived), line: d.line })
      : t("reconcileShares", { date: d.date, code: d.code ?? "", statement: d.statement, derived: d.derived, line: d.line });
  return (
    <div className="error" id="ji-reconcile">
      <p>{t("reconcileDiffers", { n: r.checked, d: r.differences.length })}</p>
      <ul>
        {r.differences.map((d) => (
          <li key={`${d.kind}-${d.code ?? ""}-${d.date}`} className="ji-difference" data-line={d.line}>
            {line(d)}
          </li>
        ))}
      </ul>
    </div>
  );
}
