// The stock page at a minute period (60/30/15/5 minutes): the cached bars as candles, the
// daily reading's levels and events where they apply, notes on what is daily-only, and —
// when nothing is cached — an offer to sync the bars, with each step shown.
import { useCallback, useContext, useEffect, useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import { commands, type MinuteChart, type MinutePeriod, type MinuteSyncEvent } from "../bindings";
import { LanguageContext } from "../i18n";
import { marketErrorText } from "./Stock";
import { geometry, levelLabel, minuteText, noteTexts, syncLine, timeLabel } from "./minuteModel";

const WIDTH = 900;
const HEIGHT = 360;

export default function MinutePanel({ code, period }: { code: string; period: MinutePeriod }) {
  const lang = useContext(LanguageContext) === "en" ? "en" : "zh";
  const [chart, setChart] = useState<{ key: string; data: MinuteChart } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [syncing, setSyncing] = useState(false);
  const [progress, setProgress] = useState<string | null>(null);
  const key = `${code}-${period}`;

  const load = useCallback(async () => {
    setError(null);
    try {
      const r = await commands.minuteChart(code, period);
      if (r.status === "ok") setChart({ key: `${code}-${period}`, data: r.data });
      else setError(marketErrorText(r.error));
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  }, [code, period]);
  useEffect(() => {
    void load();
  }, [load]);

  const sync = async () => {
    setSyncing(true);
    setError(null);
    const channel = new Channel<MinuteSyncEvent>();
    channel.onmessage = (e) => setProgress(syncLine(e, period, lang));
    try {
      const r = await commands.syncMinutes(code, period, channel);
      if (r.status === "ok") {
        setProgress(syncLine({ type: "finished", outcome: r.data, done: 1, total: 1 }, period, lang));
        await load();
      } else setError(marketErrorText(r.error));
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setSyncing(false);
    }
  };

  const c = chart?.key === key ? chart.data : null;
  const empty = c != null && c.times.length === 0;
  const g = c && !empty ? geometry(c, WIDTH, HEIGHT) : null;
  return (
    <div className="minute-panel" id="minute-panel" data-period={period}>
      {error && (
        <p className="error" id="minute-error" role="alert">
          {error}
        </p>
      )}
      {(empty || syncing) && (
        <p id="minute-empty">
          {empty && minuteText(lang, "noBars", { p: period })}{" "}
          <button id="minute-sync" disabled={syncing} aria-busy={syncing} onClick={() => void sync()}>
            {minuteText(lang, "syncOffer", { p: period })}
          </button>
        </p>
      )}
      {progress && (
        <p className="muted" id="minute-progress" role="status">
          {progress}
        </p>
      )}
      {c && g && (
        <>
          <svg id="minute-chart" width="100%" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`${code} ${period}`} data-bars={g.candles.length}>
            {g.levels.map((l, i) => (
              <g key={`l${i}`} className={`level level-${l.kind}`} data-kind={l.kind} data-price={l.price} data-timeframe={l.timeframe}>
                <line x1={0} x2={WIDTH} y1={l.y} y2={l.y} stroke="currentColor" strokeDasharray="6 4" opacity={0.5} />
                <text x={4} y={l.y - 3} fontSize={11} fill="currentColor">
                  {levelLabel(l.kind, l.timeframe, l.price, lang)}
                </text>
              </g>
            ))}
            {g.candles.map((k) => (
              <g key={k.time} className={k.up ? "candle up" : "candle down"} data-time={k.time}>
                <line x1={k.x + k.w / 2} x2={k.x + k.w / 2} y1={k.yHigh} y2={k.yLow} stroke={k.up ? "#d9534f" : "#2e8b57"} />
                <rect x={k.x} width={k.w} y={Math.min(k.yOpen, k.yClose)} height={Math.max(1, Math.abs(k.yOpen - k.yClose))} fill={k.up ? "#d9534f" : "#2e8b57"} />
              </g>
            ))}
            {g.marks.map((m, i) => (
              <g key={`m${i}`} className="minute-mark" data-label={m.label} data-time={m.time} data-timeframe={m.timeframe}>
                <circle cx={m.x} cy={m.y} r={4} fill={m.timeframe === "daily" ? "#f0ad4e" : "#5b8def"} />
                <text x={m.x + 5} y={m.y - 5} fontSize={11} fill="currentColor">
                  {m.label}
                </text>
              </g>
            ))}
          </svg>
          <p className="muted" id="minute-facts">
            {minuteText(lang, "bars", { n: c.times.length, from: timeLabel(c.times[0]), to: timeLabel(c.times[c.times.length - 1]) })}
            {c.sources.length > 0 && ` · ${c.sources.join(", ")}`}
            {c.scale_day != null && ` · ${minuteText(lang, "unadjusted", { d: timeLabel(c.scale_day * 10000).slice(0, 10) })}`}
          </p>
        </>
      )}
      {c && (
        <ul id="minute-notes" className="muted">
          {noteTexts(c.notes, lang).map((n) => (
            <li key={n.type} data-note={n.type}>
              {n.text}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
