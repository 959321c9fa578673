// The task panel's strings in both languages.
import type { Language } from "../bindings";

const zh = {
  title: "后台任务",
  running: "{n} 个运行中",
  none: "暂无后台任务",
  cancel: "取消",
  open: "查看结果",
  close: "关闭",
  cancelled: "已取消",
  failed: "失败",
  done: "完成",
  queued: "排队中",
  ask: "问问 agent",
  chart: "看K线",
  loading: "加载中…",
  noResult: "没有结果（任务未完成或结果已丢失）",
  candidates: "{n} 只候选",
  asOf: "数据截至 {d}",
  regime: "水温 {r}（{allowed}）",
  buyAllowed: "允许新开仓",
  buyBlocked: "不开新仓",
  totalReturn: "总收益",
  annualized: "年化",
  maxDrawdown: "最大回撤",
  winRate: "胜率",
  profitFactor: "盈亏比",
  sharpe: "夏普",
  trades: "交易",
  benchmark: "基准",
  collapse: "收起",
  expand: "展开",
  imported: "导入了 {files} 个文件：{stocks} 只股票、{bars} 根K线",
  rejectedFiles: "{n} 个文件未导入（其中的数据一条也没有写入）：",
  badRowsSkipped: "另有 {n} 行数据有误",
  notInList: "{n} 个代码不在本地股票列表中（联网同步列表后会显示名称）：{codes}",
  line: "第 {n} 行",
};

const en: typeof zh = {
  title: "Background tasks",
  running: "{n} running",
  none: "No background tasks",
  cancel: "Cancel",
  open: "Open result",
  close: "Close",
  cancelled: "Cancelled",
  failed: "Failed",
  done: "Done",
  queued: "Queued",
  ask: "Ask the agent",
  chart: "Chart",
  loading: "Loading…",
  noResult: "No result (not finished, or lost)",
  candidates: "{n} candidates",
  asOf: "Data as of {d}",
  regime: "Regime {r} ({allowed})",
  buyAllowed: "new buys allowed",
  buyBlocked: "no new buys",
  totalReturn: "Total return",
  annualized: "Annualised",
  maxDrawdown: "Max drawdown",
  winRate: "Win rate",
  profitFactor: "Profit factor",
  sharpe: "Sharpe",
  trades: "Trades",
  benchmark: "Benchmark",
  collapse: "Collapse",
  expand: "Expand",
  imported: "Imported {files} file(s): {stocks} stock(s), {bars} bars",
  rejectedFiles: "{n} file(s) not imported (nothing from them was written):",
  badRowsSkipped: "{n} bad row(s) in all",
  notInList: "{n} code(s) are not in the cached stock list (their names appear after a list sync): {codes}",
  line: "line {n}",
};

export type TaskTextKey = keyof typeof zh;

export function taskText(lang: Language, key: TaskTextKey, vars: Record<string, string | number> = {}): string {
  let s = (lang === "en" ? en : zh)[key];
  for (const [k, v] of Object.entries(vars)) s = s.replace(`{${k}}`, String(v));
  return s;
}
