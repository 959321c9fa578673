// The overview (概览) without any model: the benchmark indices, 水温 and breadth from the
// cache (said unavailable, with how to get them, when the cache lacks them), the cache's
// status, the full-market sync, and the screen and backtest started directly as background
// tasks; the newest screen result opens in the task result view.
import { useCallback, useContext, useEffect, useState } from "react";
import { createPortal } from "react-dom";
import { commands, events, type DataStatusView, type MarketOverview, type TaskInfo, type TaskRequest } from "../bindings";
import { LanguageContext } from "../i18n";
import { MISSING, formatPct, formatPrice } from "../chat/diagnosis";
import ResultView from "../tasks/ResultView";
import { isActive, upsertTask } from "../tasks/tasks";
import { lastScreen, monthsBefore, parseNumber, pnlClass, workspaceErrorText } from "./workspaceModel";
import { useWorkspaceText } from "./workspaceText";
import { regimeReasonText } from "./dataNotes";
import NamesImport from "./NamesImport";
import { MoodSection, RegimeLimits, useDayMap } from "../market/Mood";

// One line per field group; the shared stylesheet has no form layout of its own.
const FIELD_STYLE = { display: "inline-flex", alignItems: "center", gap: 6, margin: "0 12px 8px 0" } as const;

type Props = {
  onOpenStock: (code: string) => void;
  onAsk: (text: string) => void;
};

/** The full-market sync's task (src-tauri commands/sync.rs). */
/** Tasks that change what the cache holds: the data status is counted again after them. */
const DATA_TOOLS = ["sync_market", "import_bars"];

const errText = (e: unknown) => (e instanceof Error ? e.message : String(e));

function Indices({ o }: { o: MarketOverview }) {
  const t = useWorkspaceText();
  if (o.indices.every((i) => i.date === null)) {
    return (
      <p className="notice" id="ov-indices-missing">
        {t("ovIndicesMissing")}
      </p>
    );
  }
  return (
    <table className="portfolio-table" id="ov-indices">
      <thead>
        <tr>
          <th>{t("ovIndex")}</th>
          <th className="num">{t("ovClose")}</th>
          <th className="num">{t("ovChange")}</th>
          <th>{t("ovDate")}</th>
        </tr>
      </thead>
      <tbody>
        {o.indices.map((i) => (
          <tr key={i.code} className="ov-index" data-code={i.code} data-status={i.data_status}>
            <td>
              {i.name} <span className="hint">{i.code}</span>
            </td>
            <td className="num">{formatPrice(i.close)}</td>
            <td className={["num", pnlClass(i.change_pct)].filter(Boolean).join(" ")}>{formatPct(i.change_pct)}</td>
            <td className={i.data_status === "ok" ? "" : "warn"}>{i.date ?? MISSING}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Breadth({ o }: { o: MarketOverview }) {
  const t = useWorkspaceText();
  const lang = useContext(LanguageContext);
  const b = o.breadth;
  if (!b.available) {
    const sample = b.sample_size ?? 0;
    const why =
      sample === 0 ? t("ovBreadthNoBars") : t("ovBreadthFew", { n: sample, need: b.min_sample ?? "?" });
    return (
      <p className="notice" id="ov-breadth-missing">
        {t("ovBreadthMissing")}
        {`${lang === "en" ? ": " : "："}${why}`}
      </p>
    );
  }
  const pct = (n: number | null) => (n === null ? MISSING : `${n.toFixed(2)}%`);
  return (
    <dl className="facts" id="ov-breadth">
      <dt>{t("ovAboveMa20")}</dt>
      <dd>{pct(b.pct_above_ma20)}</dd>
      <dt>{t("ovUpRatio")}</dt>
      <dd>{pct(b.up_ratio_pct)}</dd>
      <dt>{t("ovMedian")}</dt>
      <dd>{formatPct(b.median_pct_chg)}</dd>
      <dt>{t("ovDate")}</dt>
      <dd>
        {b.trade_date ?? MISSING} · {t("ovSample", { n: b.sample_size ?? 0 })}
      </dd>
    </dl>
  );
}

function DataFacts({ s }: { s: DataStatusView }) {
  const t = useWorkspaceText();
  const item = (id: string, label: string, value: string | number) => (
    <>
      <dt>{label}</dt>
      <dd id={id} data-value={value}>
        {value}
      </dd>
    </>
  );
  return (
    <dl className="facts" id="ov-data">
      {item("ov-stocks", t("ovStocks"), s.stocks_cached)}
      {item("ov-newest", t("ovNewest"), s.newest_date ?? MISSING)}
      {item("ov-expected", t("ovExpected"), s.last_closed_trading_day ?? MISSING)}
      {item("ov-stale", t("ovStaleCount"), s.stale)}
      {item("ov-damaged", t("ovDamaged"), s.damaged)}
      {item("ov-indices-cached", t("ovIndicesCached"), s.indices_cached)}
      {item("ov-list", t("ovList"), s.stock_list_size)}
      {item("ov-sources", t("ovSources"), s.sources.length ? s.sources.join(" → ") : t("ovOffline"))}
    </dl>
  );
}

export default function Overview({ onOpenStock, onAsk }: Props) {
  const t = useWorkspaceText();
  const lang = useContext(LanguageContext);
  const [overview, setOverview] = useState<MarketOverview | null>(null);
  const [status, setStatus] = useState<DataStatusView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tasks, setTasks] = useState<TaskInfo[]>([]);
  const [viewing, setViewing] = useState<TaskInfo | null>(null);
  const [taskNote, setTaskNote] = useState<{ ok: boolean; text: string } | null>(null);
  const [syncNote, setSyncNote] = useState<{ ok: boolean; text: string } | null>(null);
  const [importPath, setImportPath] = useState("");
  const [importNote, setImportNote] = useState<{ ok: boolean; text: string } | null>(null);
  const [bt, setBt] = useState({ start: "", end: "", hold: "10", top: "4" });
  // Counted up when the data status is read again: the name-history counts follow.
  const [dataLoads, setDataLoads] = useState(0);
  // The day's market map: the mood line, the ladder and the limit counts the 水温 line cites.
  const mood = useDayMap(dataLoads);

  const load = useCallback(async () => {
    setDataLoads((n) => n + 1);
    try {
      const [o, s] = await Promise.all([commands.marketOverview(), commands.dataStatus()]);
      if (o.status === "ok") setOverview(o.data);
      else setError(workspaceErrorText(o.error, t));
      if (s.status === "ok") {
        setStatus(s.data);
        const end = s.data.newest_date;
        // A short span ending at the newest cached bar: something the cache can answer.
        if (end) setBt((b) => (b.start || b.end ? b : { ...b, end, start: monthsBefore(end, 6) }));
      } else setError(workspaceErrorText(s.error, t));
    } catch (e) {
      setError(errText(e));
    }
    // Loaded once on open; the wording of an error follows the language at that time.
  }, []);

  useEffect(() => {
    void load();
    let live = true;
    void (async () => {
      try {
        const r = await commands.listTasks();
        if (live && r.status === "ok") setTasks((prev) => r.data.reduce(upsertTask, prev));
      } catch {
        // The task list is a convenience here; the panel says what is wrong with it.
      }
    })();
    const unlisten = events.taskChanged.listen((e) => {
      setTasks((prev) => upsertTask(prev, e.payload.task));
      // A finished sync or import changed what the cache holds: count again.
      if (DATA_TOOLS.includes(e.payload.task.tool_name) && !isActive(e.payload.task)) void load();
    });
    return () => {
      live = false;
      void unlisten.then((f) => f());
    };
  }, [load]);

  const start = async (request: TaskRequest, note: (n: { ok: boolean; text: string }) => void) => {
    try {
      const r = await commands.startTask(request);
      if (r.status === "ok") {
        setTasks((prev) => upsertTask(prev, r.data));
        note({ ok: true, text: request.type === "screen" || request.type === "backtest" ? t("ovStarted", { name: r.data.display_name }) : t("ovSyncStarted") });
      } else note({ ok: false, text: workspaceErrorText(r.error, t) });
    } catch (e) {
      note({ ok: false, text: errText(e) });
    }
  };

  const runBacktest = () => {
    const hold = parseNumber(bt.hold);
    const top = parseNumber(bt.top);
    if (hold === null) return setTaskNote({ ok: false, text: t("pfNotNumber", { field: t("ovHold") }) });
    if (top === null) return setTaskNote({ ok: false, text: t("pfNotNumber", { field: t("ovTopN") }) });
    void start({ type: "backtest", start: bt.start.trim(), end: bt.end.trim(), hold_days: Math.trunc(hold), top_n: Math.trunc(top) }, setTaskNote);
  };

  const screen = lastScreen(tasks);
  const note = (n: { ok: boolean; text: string } | null, id: string) =>
    n && (
      <p id={id} className={n.ok ? "hint" : "error"} role={n.ok ? undefined : "alert"} data-ok={n.ok}>
        {n.text}
      </p>
    );
  const input = (id: string, label: string, key: keyof typeof bt) => (
    <label className="pf-field" style={FIELD_STYLE}>
      <span>{label}</span>
      <input id={id} value={bt[key]} placeholder={key === "start" || key === "end" ? "YYYY-MM-DD" : undefined} onChange={(e) => setBt({ ...bt, [key]: e.target.value })} />
    </label>
  );

  return (
    <div className="overview" id="overview" lang={lang === "en" ? "en" : "zh-CN"}>
      {error && (
        <p className="error" role="alert" id="ov-error">
          {error}
        </p>
      )}
      <div className="card">
        <h2>{t("ovIndices")}</h2>
        {overview ? <Indices o={overview} /> : <p className="hint">…</p>}
        {overview && (
          <p id="ov-regime" data-regime={overview.regime}>
            <strong>{t("ovRegime")}</strong>: {overview.regime}
            {overview.regime_as_of ? ` · ${t("ovRegimeAsOf", { d: overview.regime_as_of })}` : ""}
            {overview.regime_reasons.length > 0 && (
              <span className="hint" id="ov-regime-reasons">
                {" — "}
                {overview.regime_reasons.map((r) => regimeReasonText(r, lang)).join(lang === "en" ? "; " : "；")}
              </span>
            )}
            <RegimeLimits map={mood.map} />
          </p>
        )}
        <h2>{t("ovBreadth")}</h2>
        {overview && <Breadth o={overview} />}
      </div>
      <MoodSection map={mood.map} error={mood.error} onOpenStock={onOpenStock} />
      <div className="card">
        <h2>{t("ovData")}</h2>
        {status && <DataFacts s={status} />}
        <button id="ov-sync-all" onClick={() => void start({ type: "sync_all" }, setSyncNote)}>
          {t("ovSyncAll")}
        </button>
        {note(syncNote, "ov-sync-note")}
        <form
          id="ov-import-form"
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            if (importPath.trim() === "") return setImportNote({ ok: false, text: t("ovImportNeedPath") });
            void start({ type: "import", path: importPath.trim() }, setImportNote);
          }}
        >
          <label className="pf-field" style={{ flex: 1 }}>
            <span>{t("ovImportPath")}</span>
            <input id="ov-import-path" value={importPath} placeholder="/home/me/bars" spellCheck={false} onChange={(e) => setImportPath(e.target.value)} />
          </label>
          <button id="ov-import" type="submit">
            {t("ovImport")}
          </button>
        </form>
        <p className="hint">{t("ovImportHint")}</p>
        {note(importNote, "ov-import-note")}
        <NamesImport reloadKey={dataLoads} />
      </div>
      <div className="card">
        <h2>{t("ovTools")}</h2>
        <p>
          <button id="ov-run-screen" className="primary" onClick={() => void start({ type: "screen", as_of: null }, setTaskNote)}>
            {t("ovRunScreen")}
          </button>
        </p>
        <form
          id="ov-backtest-form"
          onSubmit={(e) => {
            e.preventDefault();
            runBacktest();
          }}
        >
          {input("bt-start", t("ovStart"), "start")}
          {input("bt-end", t("ovEnd"), "end")}
          {input("bt-hold", t("ovHold"), "hold")}
          {input("bt-top", t("ovTopN"), "top")}
          <button id="ov-run-backtest" type="submit">
            {t("ovRunBacktest")}
          </button>
        </form>
        {note(taskNote, "ov-task-note")}
        <h2>{t("ovLastScreen")}</h2>
        {screen ? (
          <p id="ov-last-screen" data-task-id={screen.task_id}>
            {(screen.finished_at ?? screen.started_at).slice(0, 16).replace("T", " ")}{" "}
            <button className="link" id="ov-open-screen" onClick={() => setViewing(screen)}>
              {t("ovOpen")}
            </button>
          </p>
        ) : (
          <p className="hint" id="ov-no-screen">
            {t("ovNoScreen")}
          </p>
        )}
      </div>
      {viewing &&
        createPortal(
        <ResultView
          task={viewing}
          onClose={() => setViewing(null)}
          onAsk={(text) => {
            setViewing(null);
            onAsk(text);
          }}
          onOpenStock={(code) => {
            setViewing(null);
            onOpenStock(code);
          }}
        />,
        // Above the page's scroll container, like the panel's own result view.
        document.body,
      )}
    </div>
  );
}
