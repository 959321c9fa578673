// The guided start on a fresh desk (no bars beyond the bundled sample, no model, no
// watchlist): choose the data, add a model or not, import a watchlist. Each step is
// skippable; the steps' states are kept by the desk, so a start left half-way resumes.
// The guide sits above the overview, which re-reads what is there after each step; once
// finished, a line above the overview says what the desk holds.
import { Fragment, useCallback, useContext, useEffect, useState, type ReactNode } from "react";
import { Channel } from "@tauri-apps/api/core";
import {
  commands,
  type CommandError,
  type DeskContents,
  type FirstRun,
  type FirstRunStep,
  type IndustriesFailure,
  type Language,
  type StepState,
  type SyncEstimate,
  type TdxEvent,
  type TdxImportReport,
  type WatchlistImport,
} from "../bindings";
import { LanguageContext } from "../i18n";
import { badLineText } from "../market/mapModel";
import { mapText } from "../market/text";
import { duration, firstRunText, isoDay } from "./text";
import "./firstrun.css";

type Note = { ok: boolean; text: string } | null;
type T = ReturnType<typeof firstRunText>;

function errorText(e: CommandError | unknown): string {
  if (e && typeof e === "object" && "message" in e) return String((e as { message: unknown }).message);
  return e instanceof Error ? e.message : String(e);
}

/** What the desk holds, in one sentence. */
export function contentsLine(c: DeskContents, t: T): string {
  return t("summary", {
    stocks: c.stocks,
    last: isoDay(c.newest_bar) ?? t("none"),
    indices: c.indices,
    wl: c.watchlist,
    model: c.model ? t("withModel", { m: c.model }) : t("noModel"),
  });
}

/** Why an industry path could not be read, in the page's language. */
export function failureText(f: IndustriesFailure, t: T): string {
  switch (f.reason) {
    case "unreadable":
      return t("fUnreadable", { path: f.path, detail: f.detail });
    case "too_large":
      return t("fTooLarge", { path: f.path, mb: f.megabytes });
    case "not_tdx_folder":
      return t("fNotTdxFolder", { path: f.path });
    case "no_incon":
      return t("fNoIncon", { tdxhy: f.tdxhy });
    case "store":
      return t("fStore", { detail: f.detail });
  }
}

/** What a TDX import did, a line each; the industry file's bad lines in the map page's words. */
function tdxLines(r: TdxImportReport, t: T, lang: Language): string[] {
  const lines = [
    t("tdxResult", {
      stocks: r.stocks,
      added: r.bars_added + r.bars_changed,
      unchanged: r.bars_unchanged,
      last: isoDay(r.last_date) ?? t("none"),
      skipped: r.skipped.reduce((n, s) => n + s.files, 0),
    }),
  ];
  for (const b of r.blocks) {
    if (b.status === "read") lines.push(t("tdxBlocks", { name: b.name, stocks: b.stocks, added: b.added }));
    else lines.push(`${b.name}: ${b.errors.join("; ")}`);
  }
  const industries = r.industries.status === "imported" ? r.industries.report : null;
  if (industries?.status === "imported") {
    lines.push(t("tdxIndustries", { stocks: industries.stocks, n: industries.industries }));
  } else if (industries?.status === "rejected") {
    const m = mapText(lang);
    lines.push(`${t("tdxIndustriesRejected")}${m("importRejected", { n: industries.bad_lines })}`);
    for (const e of industries.errors) lines.push(badLineText(e, m));
  } else if (r.industries.status === "not_found") lines.push(t("tdxNoIndustries"));
  else if (r.industries.status === "failed") lines.push(t("tdxIndustriesFailed", { why: failureText(r.industries.failure, t) }));
  if (r.rejected.length > 0) {
    lines.push(t("tdxRejected", { n: r.rejected.length }));
    for (const f of r.rejected.slice(0, 5)) {
      const first = f.errors[0];
      lines.push(`${f.path}: ${first ? (first.record === 0 ? first.message : `#${first.record} (byte ${first.offset}): ${first.message}`) : ""}`);
    }
  }
  if (r.stocks_written === 0 && r.watchlist_added === 0) lines.push(t("tdxNothingNew"));
  return lines;
}

function progressText(ev: TdxEvent, t: T): string {
  switch (ev.stage) {
    case "bars":
      return t("progressBars", { done: ev.done, total: ev.total });
    case "watchlist":
      return t("progressWatchlist", { done: ev.done, total: ev.total });
    case "industries":
      return t("progressIndustries");
  }
}

function StepBadge({ state }: { state: StepState }) {
  const t = firstRunText(useContext(LanguageContext));
  if (state === "pending") return null;
  return (
    <span className="hint" data-state={state}>
      {" "}
      — {state === "done" ? t("done") : t("skipped")}
    </span>
  );
}

/** Imports a TDX folder with its progress; `onDone` gets the report. */
function TdxImport({ id, label, path, setPath, onDone }: { id: string; label: string; path: string; setPath: (p: string) => void; onDone: (r: TdxImportReport) => void }) {
  const lang = useContext(LanguageContext);
  const t = firstRunText(lang);
  const [busy, setBusy] = useState(false);
  const [progress, setProgress] = useState<string | null>(null);
  const [note, setNote] = useState<Note>(null);
  const [lines, setLines] = useState<string[]>([]);
  const run = async () => {
    setBusy(true);
    setNote(null);
    setLines([]);
    const channel = new Channel<TdxEvent>();
    channel.onmessage = (ev) => setProgress(progressText(ev, t));
    try {
      const r = await commands.importTdx(path, channel);
      if (r.status === "ok") {
        setLines(tdxLines(r.data, t, lang));
        onDone(r.data);
      } else setNote({ ok: false, text: errorText(r.error) });
    } catch (e) {
      setNote({ ok: false, text: errorText(e) });
    } finally {
      setBusy(false);
      setProgress(null);
    }
  };
  return (
    <form
      className="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        void run();
      }}
    >
      <label>
        {t("tdxLabel")}
        <input id={`${id}-path`} value={path} placeholder={lang === "en" ? "C:\\new_tdx or /home/me/tdx" : "C:\\new_tdx 或 /home/me/tdx"} spellCheck={false} onChange={(e) => setPath(e.target.value)} />
      </label>
      <button id={`${id}-import`} type="submit" disabled={busy || path.trim() === ""} aria-busy={busy}>
        {label}
      </button>
      {progress && (
        <p id={`${id}-progress`} className="hint" role="status">
          {progress}
        </p>
      )}
      {lines.length > 0 && (
        <ul id={`${id}-result`} className="hint">
          {lines.map((l, i) => (
            <li key={i}>{l}</li>
          ))}
        </ul>
      )}
      {note && (
        <p id={`${id}-error`} className="error" role="alert">
          {note.text}
        </p>
      )}
    </form>
  );
}

function DataStep({ fr, tdxPath, setTdxPath, mark, onReport }: { fr: FirstRun; tdxPath: string; setTdxPath: (p: string) => void; mark: (s: FirstRunStep, st: StepState) => Promise<void>; onReport: (r: TdxImportReport) => void }) {
  const lang = useContext(LanguageContext);
  const t = firstRunText(lang);
  const [csv, setCsv] = useState("");
  const [estimate, setEstimate] = useState<SyncEstimate | null>(null);
  const [note, setNote] = useState<Note>(null);
  useEffect(() => {
    void commands.fullSyncEstimate().then((r) => {
      if (r.status === "ok") setEstimate(r.data);
    });
  }, []);
  const start = async (request: { type: "import"; path: string } | { type: "sync_all" }, started: string) => {
    setNote(null);
    const r = await commands.startTask(request);
    if (r.status === "ok") {
      setNote({ ok: true, text: started });
      await mark("data", "done");
    } else setNote({ ok: false, text: errorText(r.error) });
  };
  return (
    <>
      <p className="hint">{t("tdxHint")}</p>
      <TdxImport
        id="fr-tdx"
        label={t("tdxImport")}
        path={tdxPath}
        setPath={setTdxPath}
        onDone={(r) => {
          onReport(r);
          if (r.stocks > 0) void mark("data", "done");
        }}
      />
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void start({ type: "import", path: csv.trim() }, t("csvStarted"));
        }}
      >
        <label>
          {t("csvLabel")}
          <input id="fr-csv-path" value={csv} spellCheck={false} onChange={(e) => setCsv(e.target.value)} />
        </label>
        <button id="fr-csv-import" type="submit" disabled={csv.trim() === ""}>
          {t("csvImport")}
        </button>
      </form>
      <p>
        <button id="fr-sync-all" disabled={estimate?.offline ?? false} onClick={() => void start({ type: "sync_all" }, t("syncStarted"))}>
          {t("syncAll")}
        </button>{" "}
        {estimate && (
          <span id="fr-sync-estimate" className="hint">
            {estimate.offline
              ? t("syncOffline")
              : t("syncEstimate", { n: estimate.to_fetch, s: 1, t: duration(estimate.seconds, lang), fresh: estimate.already_fresh })}
          </span>
        )}
      </p>
      {note && (
        <p id="fr-data-note" className={note.ok ? "hint" : "error"} role={note.ok ? "status" : "alert"}>
          {note.text}
        </p>
      )}
      {(fr.steps.data ?? "pending") === "pending" && (
        <button id="fr-skip-data" className="link" onClick={() => void mark("data", "skipped")}>
          {t("skip")}
        </button>
      )}
    </>
  );
}

function ModelStep({ fr, mark, onOpenSettings }: { fr: FirstRun; mark: (s: FirstRunStep, st: StepState) => Promise<void>; onOpenSettings: () => void }) {
  const t = firstRunText(useContext(LanguageContext));
  return (
    <>
      <p className="hint">{fr.contents.model ? t("modelSet", { m: fr.contents.model }) : t("modelText")}</p>
      <button id="fr-open-settings" onClick={onOpenSettings}>
        {t("openSettings")}
      </button>{" "}
      {(fr.steps.model ?? "pending") === "pending" && (
        <button id="fr-skip-model" className="link" onClick={() => void mark("model", fr.contents.model ? "done" : "skipped")}>
          {fr.contents.model ? t("done") : t("skip")}
        </button>
      )}
    </>
  );
}

function WatchlistStep({ fr, tdxPath, setTdxPath, mark }: { fr: FirstRun; tdxPath: string; setTdxPath: (p: string) => void; mark: (s: FirstRunStep, st: StepState) => Promise<void> }) {
  const t = firstRunText(useContext(LanguageContext));
  const [file, setFile] = useState("");
  const [result, setResult] = useState<WatchlistImport | null>(null);
  const [note, setNote] = useState<Note>(null);
  const importFile = async () => {
    setNote(null);
    const r = await commands.importWatchlistFile(file);
    if (r.status !== "ok") {
      setNote({ ok: false, text: errorText(r.error) });
      return;
    }
    setResult(r.data);
    if (r.data.bad_count === 0) await mark("watchlist", "done");
  };
  return (
    <>
      <p className="hint">{t("wlText")}</p>
      <p className="hint" id="fr-wl-count">
        {t("wlNow", { n: fr.contents.watchlist })}
      </p>
      <TdxImport
        id="fr-wl-tdx"
        label={t("wlTdx")}
        path={tdxPath}
        setPath={setTdxPath}
        onDone={(r) => {
          if (r.blocks.some((b) => b.status === "read")) void mark("watchlist", "done");
        }}
      />
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void importFile();
        }}
      >
        <label>
          {t("wlCsvLabel")}
          <input id="fr-wl-file-path" value={file} spellCheck={false} onChange={(e) => setFile(e.target.value)} />
        </label>
        <button id="fr-wl-file-import" type="submit" disabled={file.trim() === ""}>
          {t("wlCsv")}
        </button>
      </form>
      {result && (
        <div id="fr-wl-result" className="hint">
          {result.bad_count > 0 ? (
            <>
              <p className="error">{t("wlBad", { n: result.bad_count })}</p>
              <ul>
                {result.bad_lines.map((l, i) => (
                  <li key={i}>{l}</li>
                ))}
              </ul>
            </>
          ) : (
            <p>{t("wlResult", { stocks: result.stocks, added: result.added })}</p>
          )}
        </div>
      )}
      {note && (
        <p id="fr-wl-error" className="error" role="alert">
          {note.text}
        </p>
      )}
      {(fr.steps.watchlist ?? "pending") === "pending" && (
        <button id="fr-skip-watchlist" className="link" onClick={() => void mark("watchlist", "skipped")}>
          {t("skip")}
        </button>
      )}
    </>
  );
}

/** The guide above `children` (the overview) while it shows; afterwards a line saying what
 *  the desk holds above them. */
export default function FirstRunGate({ children, onOpenSettings }: { children: ReactNode; onOpenSettings: () => void }) {
  const lang = useContext(LanguageContext);
  const t = firstRunText(lang);
  const [fr, setFr] = useState<FirstRun | null>(null);
  const [loaded, setLoaded] = useState(false);
  // what the desk held when this session's guide finished
  const [after, setAfter] = useState<DeskContents | null>(null);
  const [tdxPath, setTdxPath] = useState("");
  // bumped after every step, so the overview below mounts again and reads what is there
  const [generation, setGeneration] = useState(0);
  // the data step's TDX import, still shown once the next step opens
  const [tdxReport, setTdxReport] = useState<TdxImportReport | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    // a failure to read the state leaves the overview as it is, with the error above it
    void Promise.resolve()
      .then(() => commands.firstRun())
      .then((r) => {
        if (r.status === "ok") setFr(r.data);
        else setError(errorText(r.error));
      })
      .catch((e: unknown) => setError(errorText(e)))
      .finally(() => setLoaded(true));
  }, []);

  const mark = useCallback(async (step: FirstRunStep | null, state: StepState) => {
    const r = await commands.setFirstRunStep(step, state);
    if (r.status === "ok") {
      setFr(r.data);
      setGeneration((g) => g + 1);
      if (step === null && state !== "pending") setAfter(r.data.contents);
    } else setError(errorText(r.error));
  }, []);

  if (!loaded) return <div className="loading" aria-busy="true" />;
  if (!fr || !fr.show) {
    return (
      <>
        {error && (
          <p className="error" role="alert" id="fr-error">
            {error}
          </p>
        )}
        {after && (
          <p className="notice" id="fr-desk-summary">
            {contentsLine(after, t)}
          </p>
        )}
        <Fragment key={generation}>{children}</Fragment>
      </>
    );
  }
  const steps: { key: FirstRunStep; title: string; state: StepState; body: ReactNode }[] = [
    { key: "data", title: t("stepData"), state: fr.steps.data ?? "pending", body: <DataStep fr={fr} tdxPath={tdxPath} setTdxPath={setTdxPath} mark={mark} onReport={setTdxReport} /> },
    { key: "model", title: t("stepModel"), state: fr.steps.model ?? "pending", body: <ModelStep fr={fr} mark={mark} onOpenSettings={onOpenSettings} /> },
    { key: "watchlist", title: t("stepWatchlist"), state: fr.steps.watchlist ?? "pending", body: <WatchlistStep fr={fr} tdxPath={tdxPath} setTdxPath={setTdxPath} mark={mark} /> },
  ];
  // the first step still pending is open; the others show their state
  const open = steps.find((s) => s.state === "pending")?.key ?? null;
  return (
    <>
    <section className="first-run" id="first-run" aria-labelledby="fr-title">
      <h2 id="fr-title">{t("title")}</h2>
      <p className="hint">{t("intro")}</p>
      {steps.map((s) => (
        <section key={s.key} id={`fr-step-${s.key}`} data-state={s.state} data-open={open === s.key}>
          <h3>
            {s.title}
            <StepBadge state={s.state} />
          </h3>
          {open === s.key && s.body}
          {open !== s.key && s.key === "data" && tdxReport && (
            <ul id="fr-tdx-summary" className="hint">
              {tdxLines(tdxReport, t, lang).map((l, i) => (
                <li key={i}>{l}</li>
              ))}
            </ul>
          )}
        </section>
      ))}
      {open === null && (
        <section id="fr-done">
          <h3>{t("summaryTitle")}</h3>
          <p id="fr-summary">{contentsLine(fr.contents, t)}</p>
          <button id="fr-finish" className="primary" onClick={() => void mark(null, "done")}>
            {t("finish")}
          </button>
        </section>
      )}
      {error && (
        <p className="error" role="alert" id="fr-error">
          {error}
        </p>
      )}
      <button id="fr-close" className="link" onClick={() => void mark(null, "done")}>
        {t("close")}
      </button>
    </section>
    <Fragment key={generation}>{children}</Fragment>
    </>
  );
}
