// A finished task's result: the screen as a sortable table (a code leads to the chart or
// to the agent), the backtest's metrics and equity curve, a CSV import's counts and
// rejected files, a report as sanitised Markdown
// (rendered by the backend), a strategy decision as its checked keep/trim/exit/add per
// holding above its Markdown, anything else as JSON.
import { useContext, useEffect, useMemo, useState } from "react";
import { commands, type ResearchReport, type TaskInfo, type Value } from "../bindings";
import TradesTable from "../review/TradesTable";
import { barDate, useOpenStockAt } from "../review/openAt";
import { LanguageContext } from "../i18n";
import { toolLabel } from "../chat/toolNames";
import {
  actionLabel,
  askAboutCandidate,
  timeframesText,
  suggestedText,
  decisionCandidates,
  decisionProblems,
  decisionProblemText,
  sizeDetail,
  type DecisionSize,
  equityCurve,
  holdingDecisions,
  polyline,
  reportText,
  screenRows,
  sortRows,
  type SortKey,
} from "./tasks";
import { badRowText, type BadRow } from "./importProblems";
import { taskText } from "./text";
import HitRates from "./HitRates";
import DataNotes, { noteLines } from "./DataNotes";
import SweepView from "../research/SweepView";
import WalkForwardView from "../research/WalkForwardView";
import { researchText } from "../research/text";

type Props = {
  task: TaskInfo;
  onClose: () => void;
  onAsk: (text: string) => void;
  onOpenStock: (code: string) => void;
  onOpenResearch?: (taskId: string) => void;
};

/** A backtest result's `kind` (`sweep`, `walk_forward`; none for a single run). */
const kindOf = (v: Value): string | null => (v !== null && typeof v === "object" && !Array.isArray(v) && typeof v.kind === "string" ? v.kind : null);

const fmt = (v: Value | undefined, dp = 2): string => (typeof v === "number" ? v.toFixed(dp) : "—");

function ScreenTable({ result, onAsk, onOpenStock }: { result: Value } & Pick<Props, "onAsk" | "onOpenStock">) {
  const lang = useContext(LanguageContext);
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: "score", desc: true });
  const rows = useMemo(() => sortRows(screenRows(result), sort.key, sort.desc), [result, sort]);
  const r = result as Record<string, Value>;
  const regime = (r.regime ?? {}) as Record<string, Value>;
  const regimeName = ((regime.regime ?? {}) as Record<string, Value>).regime;
  const openAt = useOpenStockAt();
  const asOf = barDate(r.as_of);
  // A row's close is its stock's last bar: the screen's day, or earlier when suspended.
  const barOf = (row: { bars_as_of: string }) => barDate(row.bars_as_of) ?? asOf;
  const header = (key: SortKey, label: string) => (
    <th>
      <button
        className="sort"
        data-sort={key}
        aria-sort={sort.key === key ? (sort.desc ? "descending" : "ascending") : "none"}
        onClick={() => setSort({ key, desc: sort.key === key ? !sort.desc : typeof rows[0]?.[key] === "number" })}
      >
        {label}
      </button>
    </th>
  );
  return (
    <div className="screen-result">
      <p className="result-meta">
        {taskText(lang, "candidates", { n: rows.length })} · {taskText(lang, "asOf", { d: String(r.as_of ?? "—") })} ·{" "}
        {taskText(lang, "regime", {
          r: String(regimeName ?? "UNKNOWN"),
          allowed: taskText(lang, regime.new_buy_allowed === true ? "buyAllowed" : "buyBlocked"),
        })}
      </p>
      <DataNotes notes={noteLines(((r.data_quality ?? {}) as Record<string, Value>).warnings)} id="result-notes" />
      <table className="screen-table">
        <thead>
          <tr>
            {header("code", lang === "en" ? "Code" : "代码")}
            {header("name", lang === "en" ? "Name" : "名称")}
            {header("channel", lang === "en" ? "Channel" : "通道")}
            {header("triggers", lang === "en" ? "Triggers" : "触发")}
            {header("score", lang === "en" ? "Score" : "分数")}
            {header("stage", lang === "en" ? "Stage" : "阶段")}
            {header("last_close", lang === "en" ? "Close" : "收盘")}
            {header("weekly_trend", lang === "en" ? "Timeframes" : "多周期")}
            {header("suggested_shares", lang === "en" ? "Suggested size" : "建议仓位")}
            <th />
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.code} data-code={row.code}>
              <td>
                <button className="link code" onClick={() => onOpenStock(row.code)}>
                  {row.code}
                </button>
              </td>
              <td>{row.name}</td>
              <td>{row.channel}</td>
              <td>{row.triggers}</td>
              <td>{row.score === null ? "—" : row.score.toFixed(2)}</td>
              <td>{row.stage || "—"}</td>
              {/* The close opens the bar it is (the screen's day; a suspended stock's last bar before it). */}
              <td>
                {row.last_close === null ? "—" : openAt && barOf(row) != null ? (
                  <button className="link close" data-at={barOf(row) ?? undefined} onClick={() => openAt(row.code, barOf(row))}>
                    {row.last_close.toFixed(2)}
                  </button>
                ) : (
                  row.last_close.toFixed(2)
                )}
              </td>
              {/* L4's other timeframes: reported beside the daily trigger, never a filter; each line names its timeframe. */}
              <td
                className="timeframes"
                data-weekly={row.weekly_trend}
                data-intraday={row.intraday_60m}
                title={row.timeframe_lines.map((l) => (lang === "en" ? l.en : l.zh)).join("\n")}
              >
                {timeframesText(row, lang)}
              </td>
              <td className="suggested-size" data-shares={row.suggested_shares ?? ""} data-breaches={row.suggested_breaches.join(" ")} title={[...row.suggested_bound, row.suggested_why].filter((x) => x).join("；")}>
                {suggestedText(row, lang)}
              </td>
              <td>
                <button className="link ask" onClick={() => onAsk(askAboutCandidate(row, lang))}>
                  {taskText(lang, "ask")}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <HitRates />
    </div>
  );
}

type ImportOutcome = { path: string; status: "imported" | "rejected"; errors?: BadRow[]; bad_rows?: number };

/** A CSV import's counts, and each rejected file with its first problems. */
function ImportView({ result }: { result: Value }) {
  const lang = useContext(LanguageContext);
  const r = result as Record<string, Value>;
  const num = (k: string) => (typeof r[k] === "number" ? (r[k] as number) : 0);
  const outcomes = (Array.isArray(r.outcomes) ? r.outcomes : []) as unknown as ImportOutcome[];
  const rejected = outcomes.filter((o) => o.status === "rejected");
  const notInList = (Array.isArray(r.not_in_stock_list) ? r.not_in_stock_list : []) as string[];
  return (
    <div className="import-result" id="import-result">
      <p id="import-summary">
        {taskText(lang, "imported", { files: num("files_imported"), stocks: num("stocks"), bars: num("bars") })}
      </p>
      {num("files_rejected") > 0 && (
        <div className="warning" id="import-rejected">
          {taskText(lang, "rejectedFiles", { n: num("files_rejected") })}
          <ul>
            {rejected.map((o) => (
              <li key={o.path} data-path={o.path}>
                <code>{o.path}</code>
                {(o.errors ?? []).slice(0, 3).map((e) => (
                  <div key={e.line} className="hint">
                    {e.line > 0 && `${taskText(lang, "line", { n: e.line })}: `}
                    {badRowText(e, lang)}
                  </div>
                ))}
              </li>
            ))}
          </ul>
          {num("bad_rows") > 0 && <div className="hint">{taskText(lang, "badRowsSkipped", { n: num("bad_rows") })}</div>}
        </div>
      )}
      {notInList.length > 0 && <p className="hint">{taskText(lang, "notInList", { n: notInList.length, codes: notInList.slice(0, 20).join(", ") })}</p>}
    </div>
  );
}

function BacktestView({ result }: { result: Value }) {
  const lang = useContext(LanguageContext);
  const r = result as Record<string, Value>;
  const m = (r.metrics ?? {}) as Record<string, Value>;
  const bench = (r.benchmark ?? {}) as Record<string, Value>;
  const curve = equityCurve(result);
  const [w, h] = [560, 160];
  const metric = (key: Parameters<typeof taskText>[1], v: string) => (
    <div className="metric" data-metric={key}>
      <span className="metric-label">{taskText(lang, key)}</span>
      <span className="metric-value">{v}</span>
    </div>
  );
  return (
    <div className="backtest-result">
      <p className="result-meta">{String(r.period ?? "")}</p>
      <DataNotes notes={noteLines(r.notes)} id="result-notes" />
      <div className="metrics">
        {metric("totalReturn", `${fmt(m.total_return_pct)}%`)}
        {metric("annualized", `${fmt(m.annualized_return_pct)}%`)}
        {metric("maxDrawdown", `${fmt(m.max_drawdown_pct)}%`)}
        {metric("winRate", typeof m.win_rate_pct === "number" ? `${fmt(m.win_rate_pct, 1)}%` : "—")}
        {metric("profitFactor", fmt(m.profit_factor))}
        {metric("sharpe", fmt(m.sharpe))}
        {metric("trades", String(m.trades ?? "—"))}
        {metric(
          "benchmark",
          typeof bench.return_pct === "number" ? `${String(bench.code)} ${fmt(bench.return_pct)}%` : String(bench.note ?? "—"),
        )}
      </div>
      {curve.length >= 2 && (
        <svg className="equity-curve" viewBox={`0 0 ${w} ${h}`} role="img" aria-label={`equity ${curve[0].date} – ${curve[curve.length - 1].date}`}>
          <polyline points={polyline(curve, w, h)} fill="none" stroke="currentColor" strokeWidth="1.5" />
        </svg>
      )}
      <TradesTable result={result} />
    </div>
  );
}

function ReportView({ text }: { text: string }) {
  const [html, setHtml] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    void commands.renderMarkdown(text).then((h) => {
      if (live) setHtml(h);
    });
    return () => {
      live = false;
    };
  }, [text]);
  // The backend sanitises (ammonia); until it answers, the text is shown as text.
  return html === null ? <pre className="md-pending">{text}</pre> : <div className="markdown report" dangerouslySetInnerHTML={{ __html: html }} />;
}

/** A suggested size in a cell: shares, risk and the limits broken; the stop and the caps
 *  that bound it beneath. */
function SizeCell({ size }: { size: DecisionSize | null }) {
  const lang = useContext(LanguageContext);
  if (size === null) return <td className="suggested-size">—</td>;
  const detail = sizeDetail(size, lang);
  return (
    <td className="suggested-size" data-shares={size.suggested_shares ?? ""} data-breaches={size.suggested_breaches.join(" ")} title={size.suggested_why}>
      {suggestedText(size, lang)}
      {detail && <div className="muted size-detail">{detail}</div>}
      {!size.suggested_shares && size.suggested_why && <div className="muted size-why">{size.suggested_why}</div>}
    </td>
  );
}

/** A strategy decision: the checked action per holding (an add with its suggested size),
 *  what was rejected, the reviewed candidates' suggested sizes, then the text. */
export function DecisionView({ result, onOpenStock }: { result: Value } & Pick<Props, "onOpenStock">) {
  const lang = useContext(LanguageContext);
  const decisions = holdingDecisions(result);
  const problems = decisionProblems(result);
  const candidates = decisionCandidates(result).filter((c) => c.size !== null);
  const sized = decisions.some((d) => d.size !== null);
  const text = reportText(result);
  return (
    <div className="decision-result">
      {decisions.length > 0 && (
        <>
          <h4>{taskText(lang, "decisionTitle")}</h4>
          <table className="screen-table decision-table" id="decision-table">
            <thead>
              <tr>
                <th>{taskText(lang, "decisionCode")}</th>
                <th>{taskText(lang, "decisionName")}</th>
                <th>{taskText(lang, "decisionAction")}</th>
                <th>{taskText(lang, "decisionReason")}</th>
                {sized && <th>{taskText(lang, "decisionSize")}</th>}
              </tr>
            </thead>
            <tbody>
              {decisions.map((d) => (
                <tr key={d.code} data-code={d.code} data-action={d.action}>
                  <td>
                    <button className="link code" onClick={() => onOpenStock(d.code)}>
                      {d.code}
                    </button>
                  </td>
                  <td>{d.name || "—"}</td>
                  <td className={`action action-${d.action}`}>{actionLabel(d.action, lang)}</td>
                  <td>{d.reason}</td>
                  {sized && <SizeCell size={d.size} />}
                </tr>
              ))}
            </tbody>
          </table>
          <p className="hint">{taskText(lang, "decisionNotExecuted")}</p>
        </>
      )}
      {problems.length > 0 && (
        <div className="warning" id="decision-problems" role="alert">
          {taskText(lang, "decisionProblems")}
          <ul>
            {problems.map((p, i) => (
              <li key={i} data-problem={p.type}>
                {decisionProblemText(p, lang)}
              </li>
            ))}
          </ul>
        </div>
      )}
      {candidates.length > 0 && (
        <>
          <h4>{taskText(lang, "decisionCandidatesTitle")}</h4>
          <table className="screen-table decision-table" id="decision-candidates">
            <thead>
              <tr>
                <th>{taskText(lang, "decisionCode")}</th>
                <th>{taskText(lang, "decisionName")}</th>
                <th>{taskText(lang, "decisionClose")}</th>
                <th>{taskText(lang, "decisionSize")}</th>
              </tr>
            </thead>
            <tbody>
              {candidates.map((c) => (
                <tr key={c.code} data-code={c.code}>
                  <td>
                    <button className="link code" onClick={() => onOpenStock(c.code)}>
                      {c.code}
                    </button>
                  </td>
                  <td>{c.name || "—"}</td>
                  <td>{c.latest_close === null ? "—" : c.latest_close.toFixed(2)}</td>
                  <SizeCell size={c.size} />
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {(sized || candidates.length > 0) && <p className="hint">{taskText(lang, "decisionSizeNote")}</p>}
      {text !== null && <ReportView text={text} />}
    </div>
  );
}

export default function ResultView({ task, onClose, onAsk, onOpenStock, onOpenResearch }: Props) {
  const lang = useContext(LanguageContext);
  const [result, setResult] = useState<Value | null | undefined>(undefined);
  // A sweep or walk-forward is shown from the backend's typed summary of it.
  const [research, setResearch] = useState<ResearchReport | null>(null);
  useEffect(() => {
    let live = true;
    void commands.taskResult(task.task_id).then(async (r) => {
      const value = r.status === "ok" ? r.data : null;
      const kind = value === null ? null : kindOf(value);
      const typed = task.tool_name === "run_backtest" && (kind === "sweep" || kind === "walk_forward") ? await commands.researchReport(task.task_id) : null;
      if (!live) return;
      setResearch(typed?.status === "ok" ? typed.data : null);
      setResult(value);
    });
    return () => {
      live = false;
    };
  }, [task.task_id, task.tool_name]);
  let body;
  if (result === undefined) body = <p>{taskText(lang, "loading")}</p>;
  else if (result === null) body = <p>{taskText(lang, "noResult")}</p>;
  else if (task.tool_name === "screen_stocks") body = <ScreenTable result={result} onAsk={onAsk} onOpenStock={onOpenStock} />;
  else if (research !== null)
    body = (
      <>
        {onOpenResearch && (
          <button className="link" id="open-in-research" onClick={() => onOpenResearch(task.task_id)}>
            {researchText(lang)("openInResearch")}
          </button>
        )}
        {research.kind === "sweep" ? <SweepView report={research} /> : <WalkForwardView report={research} />}
      </>
    );
  else if (task.tool_name === "run_backtest") body = <BacktestView result={result} />;
  else if (task.tool_name === "import_bars") body = <ImportView result={result} />;
  else if (task.tool_name === "generate_strategy_decision") body = <DecisionView result={result} onOpenStock={onOpenStock} />;
  else {
    const text = reportText(result);
    body = text !== null ? <ReportView text={text} /> : <pre className="json">{JSON.stringify(result, null, 2)}</pre>;
  }
  return (
    <div className="task-result" role="dialog" aria-label={toolLabel(task.tool_name, task.display_name, lang)} data-task-id={task.task_id}>
      <div className="task-result-head">
        <h3>{toolLabel(task.tool_name, task.display_name, lang)}</h3>
        <button className="task-result-close" onClick={onClose}>
          {taskText(lang, "close")}
        </button>
      </div>
      {body}
    </div>
  );
}
