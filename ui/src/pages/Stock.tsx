// The stock page: the chart with the engine's Wyckoff reading, an accessible list of the
// events drawn (as known then, or with hindsight), the diagnosis card, data freshness, sync,
// watchlist and "ask the agent"; and replay, the page as it stood at a past close, stepped
// forward bar by bar (with a training score).
import { useCallback, useContext, useEffect, useMemo, useRef, useState } from "react";
import { commands, type Annotation, type CommandError, type Period, type Shape, type StockChart as ChartData, type TrackStats } from "../bindings";
import ChartNotes from "./ChartNotes";
import { hitCell } from "../tasks/HitRates";
import StockChart from "../components/StockChart";
import { LanguageContext } from "../i18n";
import { useMarketText } from "./marketText";
import { askText, chartInView, isoDate, knownNote, type EventsView } from "./stockModel";
import StockSync from "./StockSync";
import NameHistory from "./NameHistory";
import StockBlocksLine from "./StockBlocksLine";
import ReplayBar from "./ReplayBar";
import { keepSession, loadSessions, parseIsoDate, putGuess, score, startAt, stepBar, stepWeek, atEnd, type Cursor, type Guess, type TrainingLabel } from "./replayModel";
import { dataNoteText } from "./dataNotes";
import { liveCandle, liveLine, useLiveQuote } from "./liveQuote";
import MinutePanel from "./MinutePanel";
import { timeframeLines } from "./timeframeLines";
import { MINUTE_PERIODS } from "./minuteModel";

export function marketErrorText(e: CommandError | string): string {
  // IPC-level failures (bad arguments, a panic) arrive as a bare string.
  if (typeof e === "string") return e;
  // An unknown code, and a listed stock without bars (the message says why).
  if (e.code !== null && e.kind === "not_found") return `未知股票代码 / unknown stock code: ${e.code}`;
  if (e.code !== null && e.kind === "unavailable") return `${e.code}: ${e.message}`;
  return e.message;
}

interface Props {
  code: string | null;
  /** Opens the page replayed to this close (YYYYMMDD): an alert's bar. */
  replayAt?: number | null;
  /** Opens the alert centre with this stock in its form. */
  onAlert?: (code: string) => void;
  /** Opens the chat with a prefilled message. */
  onAsk: (text: string) => void;
}

export default function StockPage({ code, replayAt = null, onAlert, onAsk }: Props) {
  const t = useMarketText();
  const lang = useContext(LanguageContext);
  const [period, setPeriod] = useState<Period>("day");
  // A minute period shown instead of the day/week/month chart.
  const [minute, setMinute] = useState<(typeof MINUTE_PERIODS)[number] | null>(null);
  // What was loaded is kept with the code it was asked for, so that from the first render
  // after a switch the page shows nothing of the previous stock (not its chart, name or
  // watch state) while the new one loads.
  const [loaded, setLoaded] = useState<{ code: string; chart: ChartData } | null>(null);
  const whole = loaded?.code === code ? loaded.chart : null;
  // Replay: the cursor over the whole chart's bars, and the page as of the cursor's close.
  const [cursor, setCursor] = useState<Cursor | null>(null);
  const [atCursor, setAtCursor] = useState<{ date: number; chart: ChartData } | null>(null);
  const [playing, setPlaying] = useState(false);
  const [training, setTraining] = useState(false);
  const [guesses, setGuesses] = useState<Guess[]>([]);
  const [past, setPast] = useState(() => loadSessions());
  // How often each event's screen signals worked (forward tracking), for the event list.
  const [tracked, setTracked] = useState<TrackStats | null>(null);
  useEffect(() => {
    let live = true;
    void commands.trackStats().then((r) => {
      if (live && r.status === "ok") setTracked(r.data);
    });
    return () => {
      live = false;
    };
  }, []);
  /** "跟踪 20 日命中 61%（143 次）" for an event label with tracked signals, at the longest horizon. */
  const hitText = (label: string): string | null => {
    const horizon = tracked?.horizons.at(-1);
    const r = tracked?.rates.find((x) => x.group === "trigger" && x.key === label && x.horizon === horizon);
    if (!r || horizon == null) return null;
    const cell = hitCell(r, lang === "en" ? "en" : "zh");
    return lang === "en" ? `tracked ${horizon}-day hit ${cell}` : `跟踪 ${horizon} 日命中 ${cell}`;
  };
  // The agent's and the user's chart notes for this stock and period, and the bar last
  // clicked (the note form's prefill).
  const [notes, setNotes] = useState<{ key: string; list: Annotation[] } | null>(null);
  const [picked, setPicked] = useState<{ date: number; price: number | null } | null>(null);
  const notesKey = `${code}-${period}`;
  const shownNotes = notes?.key === notesKey ? notes.list : [];
  const loadNotes = useCallback(async () => {
    if (!code) return;
    const key = `${code}-${period}`;
    const r = await commands.chartNotes(code, period);
    if (r.status === "ok") setNotes({ key, list: r.data });
  }, [code, period]);
  useEffect(() => {
    void loadNotes();
  }, [loadNotes]);
  const addNote = async (shape: Shape): Promise<string | null> => {
    if (!code) return null;
    const r = await commands.chartNoteAdd(code, period, shape);
    if (r.status !== "ok") return r.error.message;
    await loadNotes();
    return null;
  };
  const removeNote = async (id: number) => {
    const r = await commands.chartNoteRemove(id);
    if (r.status !== "ok") setError(r.error.message);
    await loadNotes();
  };
  const onPick = useCallback((date: number, price: number | null) => setPicked({ date, price }), []);
  // While replaying, nothing past the cursor is shown: the previous step until the next loads.
  const chart = cursor ? (atCursor?.chart ?? null) : whole;
  // Labels as the engine could place them on each close by default: no hindsight unless asked.
  const [view, setView] = useState<EventsView>("known");
  const shown = useMemo(() => (chart ? chartInView(chart, view) : null), [chart, view]);
  // During the session: the day's partial bar as today's candle (never a stored bar).
  const liveQuote = useLiveQuote(code, period === "day" && !cursor);
  const today = useMemo(() => (chart && !cursor ? liveCandle(chart, liveQuote, period) : null), [chart, cursor, liveQuote, period]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [watch, setWatch] = useState<{ code: string; on: boolean } | null>(null);
  const watched = watch?.code === code && watch.on;
  // The click → drawn figure belongs to the chart it was measured on.
  const [drawn, setDrawn] = useState<{ chart: ChartData; ms: number; buildMs: number } | null>(null);
  const drawnMs = drawn && drawn.chart === shown ? drawn.ms : null;
  const started = useRef(0);
  // Click → data arrived over IPC, apart from the drawing (figures for the app_perf bench).
  const fetchedMs = useRef(0);
  // Only the newest request may fill the page: a slow answer for the stock or period the
  // user has already left must not land under the new title.
  const request = useRef(0);

  const load = useCallback(async () => {
    if (!code) return;
    const id = ++request.current;
    setBusy(true);
    setError(null);
    started.current = performance.now();
    try {
      const [r, w] = await Promise.all([commands.stockChart(code, period, null), commands.watchlistContains(code)]);
      if (id !== request.current) return;
      fetchedMs.current = Math.round(performance.now() - started.current);
      if (r.status === "ok") setLoaded({ code, chart: r.data });
      else {
        setLoaded(null);
        setError(marketErrorText(r.error));
      }
      if (w.status === "ok") setWatch({ code, on: w.data });
    } catch (e) {
      if (id !== request.current) return;
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      if (id === request.current) setBusy(false);
    }
  }, [code, period]);

  useEffect(() => {
    void load();
  }, [load]);

  const cursorDate = cursor ? cursor.dates[cursor.index] : null;
  const marks = whole?.reading.known_events ?? [];
  const trainingScore = useMemo(() => (cursor ? score(guesses, marks, cursor) : { hits: 0, misses: 0, pending: 0 }), [guesses, marks, cursor]);

  const leaveReplay = useCallback(() => {
    if (cursor && training && code) {
      setPast(keepSession({ code, from: cursor.dates[0], to: cursor.dates[cursor.index], hits: trainingScore.hits, misses: trainingScore.misses, at: new Date().toISOString() }));
    }
    setCursor(null);
    setAtCursor(null);
    setPlaying(false);
    setGuesses([]);
  }, [cursor, training, code, trainingScore]);

  // Another stock or period ends the replay.
  const leaveRef = useRef(leaveReplay);
  leaveRef.current = leaveReplay;
  useEffect(() => () => leaveRef.current(), [code, period]);

  // The page as of the cursor's close; only the newest step may land.
  useEffect(() => {
    if (!code || cursorDate == null) return;
    const id = ++request.current;
    setBusy(true);
    void commands
      .stockChart(code, period, cursorDate)
      .then((r) => {
        if (id !== request.current) return;
        if (r.status === "ok") {
          setAtCursor({ date: cursorDate, chart: r.data });
          setError(null);
        } else setError(marketErrorText(r.error));
      })
      .finally(() => {
        if (id === request.current) setBusy(false);
      });
  }, [code, period, cursorDate]);

  // → steps a bar while replaying (not while typing).
  useEffect(() => {
    if (!cursor) return;
    const onKey = (e: KeyboardEvent) => {
      const tag = (e.target as HTMLElement | null)?.tagName;
      if (e.key !== "ArrowRight" || tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
      e.preventDefault();
      setCursor((c) => (c ? stepBar(c) : c));
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [cursor]);

  // Play: a bar every 700 ms until the last one.
  useEffect(() => {
    if (!playing) return;
    if (cursor && atEnd(cursor)) {
      setPlaying(false);
      return;
    }
    const timer = window.setTimeout(() => setCursor((c) => (c ? stepBar(c) : c)), 700);
    return () => window.clearTimeout(timer);
  }, [playing, cursor]);

  const startReplay = (iso: string): boolean => {
    const d = parseIsoDate(iso);
    const c = whole && d != null ? startAt(whole.bars.dates, d) : null;
    if (!c) return false;
    setGuesses([]);
    setCursor(c);
    return true;
  };
  // An alert's bar: the page as of that close, once the whole chart is there.
  const openedAt = useRef<number | null>(null);
  useEffect(() => {
    if (!whole || replayAt == null || openedAt.current === replayAt) return;
    openedAt.current = replayAt;
    const c = startAt(whole.bars.dates, replayAt);
    if (c) setCursor(c);
  }, [whole, replayAt]);
  const defaultStart = whole ? isoDate(whole.bars.dates[Math.max(0, whole.bars.dates.length - 61)]) : "";
  const guessNow = cursorDate != null ? (guesses.find((g) => g.date === cursorDate)?.label ?? null) : null;

  // Of click → drawn, `buildMs` is the part spent building the chart (the rest: IPC,
  // rendering the page, waiting for the frame).
  const onDrawn = useCallback(
    (shown: ChartData, buildMs: number) => setDrawn({ chart: shown, ms: Math.round(performance.now() - started.current), buildMs: Math.round(buildMs) }),
    [],
  );

  const toggleWatch = async () => {
    if (!code) return;
    try {
      const r = watched ? await commands.watchlistRemove(code) : await commands.watchlistAdd(code);
      if (r.status === "ok") setWatch({ code, on: !watched });
      else setError(marketErrorText(r.error));
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };

  if (!code) {
    return (
      <section className="page" id="page-stock">
        <p className="lead">{t("noStock")}</p>
      </section>
    );
  }

  const d = chart?.diagnosis;
  const timeframes = timeframeLines(d);
  return (
    <section className="page stock-page" id="page-stock" aria-busy={busy}>
      <header className="stock-head">
        <h1 id="stock-title">
          {code} {chart?.name ?? ""}
        </h1>
        <div className="period-switch" role="group" aria-label="period">
          {(["day", "week", "month"] as const).map((p) => (
            <button key={p} id={`period-${p}`} className={p === period && !minute ? "active" : ""} aria-pressed={p === period && !minute} onClick={() => {
                setMinute(null);
                setPeriod(p);
              }}>
              {t(p)}
            </button>
          ))}
          {MINUTE_PERIODS.map((p) => (
            <button key={p} id={`period-${p}`} className={p === minute ? "active" : ""} aria-pressed={p === minute} onClick={() => setMinute(p)}>
              {p}
            </button>
          ))}
        </div>
        <button id="watch-toggle" onClick={() => void toggleWatch()}>
          {watched ? t("removeWatch") : t("addWatch")}
        </button>
        <StockSync code={code} onSynced={() => void load()} />
        {onAlert && (
          <button id="stock-alert" onClick={() => onAlert(code)}>
            {t("alert")}
          </button>
        )}
        <button id="ask-agent" disabled={!chart} onClick={() => chart && onAsk(askText(chart, lang === "en" ? "en" : "zh"))}>
          {t("ask")}
        </button>
      </header>
      <NameHistory code={code} />
      <StockBlocksLine code={code} />
      {whole && (
        <ReplayBar
          key={`${code}-${period}`}
          cursor={cursor}
          playing={playing}
          training={training}
          guess={guessNow}
          score={trainingScore}
          past={past}
          defaultStart={defaultStart}
          onStart={startReplay}
          onExit={leaveReplay}
          onStepBar={() => setCursor((c) => (c ? stepBar(c) : c))}
          onStepWeek={() => setCursor((c) => (c ? stepWeek(c) : c))}
          onPlay={setPlaying}
          onTraining={setTraining}
          onGuess={(label: TrainingLabel) => cursorDate != null && setGuesses((g) => putGuess(g, { date: cursorDate, label }))}
        />
      )}
      {error && (
        <p className="error" id="stock-error" role="alert">
          {error}
        </p>
      )}
      {busy && !chart && <p>{t("loading")}</p>}
      {minute && <MinutePanel code={code} period={minute} />}
      {!minute && chart && shown && (
        <div className="stock-body">
          <div className="stock-main">
            {/* Notes were drawn later than a replayed close: drawn only outside replay. */}
            <StockChart chart={shown} onDrawn={onDrawn} hitText={hitText} notes={cursor ? undefined : shownNotes} onPick={onPick} live={today} />
            <ChartNotes notes={shownNotes} lang={lang} picked={picked} onAdd={addNote} onRemove={(id) => void removeNote(id)} />
            <div className="chart-facts">
              {today && (
                <span id="live-candle" className="live-candle" data-time={today.time} data-close={today.close}>
                  {today.label}
                </span>
              )}
              {chart.reading.phase && (
                <span id="phase">
                  {t("phase")} {chart.reading.phase} ({chart.reading.schematic})
                </span>
              )}
              {chart.reading.support != null && (
                <span id="range">
                  {t("range")}: {t("support")} {chart.reading.support} · {t("mid")} {chart.reading.mid} · {t("resistance")} {chart.reading.resistance}
                  {chart.reading.range_known_on != null && ` (${t("knownOn")} ${isoDate(chart.reading.range_known_on)})`}
                </span>
              )}
              {drawnMs != null && !cursor && (
                <span className="muted" id="drawn-ms" data-ms={drawnMs} data-ipc-ms={fetchedMs.current} data-build-ms={drawn?.buildMs}>
                  {t("barsDrawn").replace("{n}", String(chart.bars.dates.length)).replace("{ms}", String(drawnMs))}
                </span>
              )}
            </div>
            <h2>{t("events")}</h2>
            <div className="period-switch" id="events-view" role="group" aria-label={t("eventsView")}>
              {(["known", "hindsight"] as const).map((v) => (
                <button key={v} id={`events-view-${v}`} className={v === view ? "active" : ""} aria-pressed={v === view} onClick={() => setView(v)}>
                  {v === "known" ? t("asKnown") : t("withHindsight")}
                </button>
              ))}
            </div>
            <p className="muted" id="events-view-note" data-view={view}>
              {view === "known" ? t("asKnownNote") : t("withHindsightNote")}
            </p>
            {shown.reading.events.length === 0 ? (
              <p id="no-events">{t("noEvents")}</p>
            ) : (
              <ul id="event-list" aria-label={t("events")} data-view={view}>
                {shown.reading.events.map((e, i) => (
                  <li
                    key={i}
                    className={e.ended ? "event superseded" : "event"}
                    data-label={e.label}
                    data-date={e.date}
                    data-bar-date={e.bar_date}
                    data-known-on={e.known_on ?? undefined}
                    data-ended={e.ended?.type}
                  >
                    <strong>{e.label}</strong> {isoDate(e.date)} @ {e.price} — {lang === "en" ? e.why : e.why_zh}{" "}
                    <span className="known-on">({knownNote(e, lang === "en" ? "en" : "zh")})</span>
                    {hitText(e.label) != null && (
                      <span className="hit-rate muted" data-label={e.label}>
                        {" "}
                        · {hitText(e.label)}
                      </span>
                    )}
                  </li>
                ))}
              </ul>
            )}
            {chart.signals.length > 0 && (
              <>
                <h2>{t("signals")}</h2>
                <ul id="signal-list">
                  {chart.signals.map((s, i) => (
                    <li key={i} data-kind={s.kind}>
                      {s.kind} {isoDate(s.date)} {s.label}
                    </li>
                  ))}
                </ul>
              </>
            )}
          </div>
          <aside className="stock-side">
            <div className="card" id="diagnosis-card">
              <h2>{t("diagnosis")}</h2>
              <p>
                {t("health")}: <strong id="health">{d?.health || "—"}</strong>
              </p>
              {d?.diagnosis_brief.headline && <p>{d.diagnosis_brief.headline}</p>}
              {d?.diagnosis_brief.next_step && <p className="muted">{d.diagnosis_brief.next_step}</p>}
              {timeframes.length > 0 && (
                <ul id="timeframe-lines" className="timeframe-lines">
                  {timeframes.map((l) => (
                    <li key={l.timeframe} className="timeframe-line muted" data-timeframe={l.timeframe}>
                      {lang === "en" ? l.en : l.zh}
                    </li>
                  ))}
                </ul>
              )}
              {today && (
                <p id="live-line" className="muted">
                  {liveLine(liveQuote, lang === "en" ? "en" : "zh", chart.as_of ?? null)}
                </p>
              )}
              {chart.holding && (
                <p id="holding">
                  {t("holding")}: {chart.holding.shares} · {t("cost")} {chart.holding.cost}
                  {chart.holding.stop_loss != null && ` · ${t("stop")} ${chart.holding.stop_loss}`}
                  {chart.holding.target != null && ` · ${t("target")} ${chart.holding.target}`}
                </p>
              )}
            </div>
            <div className="card" id="data-card">
              <h2>{t("data")}</h2>
              <p>
                {t("source")}: {chart.source ?? "—"}
              </p>
              <p>
                {t("asOf")}: <span id="as-of">{chart.as_of != null ? isoDate(chart.as_of) : "—"}</span>
              </p>
              <p id="freshness" className={chart.stale ? "warn" : ""} data-status={chart.data_status}>
                {chart.stale ? t("stale") : t("fresh")} ({chart.data_status})
              </p>
              {chart.notes.map((n, i) => (
                <p key={i} className="muted data-note" data-note={n.type}>
                  {dataNoteText(n, lang)}
                </p>
              ))}
            </div>
          </aside>
        </div>
      )}
    </section>
  );
}
