// The guided start's strings in both languages.
import { localTexts } from "../i18n";

const zh = {
  title: "开始使用",
  intro: "三步把桌面准备好：行情数据、模型、自选股。每一步都可以跳过，之后随时在设置和总览里补上；中途关闭应用，下次从这里继续。",
  close: "关闭向导",
  stepData: "1. 行情数据",
  stepModel: "2. 模型（可选）",
  stepWatchlist: "3. 自选股",
  done: "已完成",
  skipped: "已跳过",
  skip: "跳过",
  tdxLabel: "通达信安装目录（含 vipdoc 和 T0002）",
  tdxImport: "导入通达信",
  tdxHint: "读取全部股票的日线（不复权，同步后换成前复权并保留真实收盘价）、自选股和自定义板块、行业文件；几秒钟完成，重复导入不会重复添加。",
  csvLabel: "CSV 文件夹（date,code,open,high,low,close,volume[,amount]）",
  csvImport: "导入 CSV",
  csvStarted: "CSV 导入已作为后台任务开始，进度见任务面板。",
  syncAll: "后台全市场同步",
  syncEstimate: "约 {n} 只股票和指数要下载，按每只约 {s} 秒估计至少 {t}（已是最新的 {fresh} 只不再下载）；可以先用起来，同步在后台进行。",
  syncOffline: "没有启用联网数据源，无法同步；可在设置中启用。",
  syncStarted: "全市场同步已在后台开始，进度见任务面板。",
  progressBars: "日线 {done}/{total} 只股票",
  progressWatchlist: "板块 {done}/{total}",
  progressIndustries: "行业文件",
  tdxResult: "读取 {stocks} 只股票：新增 {added} 根K线，{unchanged} 根已存在，最新 {last}；跳过 {skipped} 个非股票文件。",
  tdxRejected: "{n} 个文件损坏未导入：",
  tdxNothingNew: "没有新内容：这个目录的K线和自选股都已导入过。",
  tdxBlocks: "{name}：{stocks} 只股票，新加入自选 {added} 只",
  tdxIndustries: "行业：{stocks} 只股票分属 {n} 个行业",
  tdxNoIndustries: "行业：该目录没有 tdxhy.cfg",
  tdxIndustriesRejected: "行业：",
  tdxIndustriesFailed: "行业未导入：{why}",
  fUnreadable: "无法读取 {path}（{detail}）",
  fTooLarge: "{path} 超过 {mb} MB，不是行业文件",
  fNotTdxFolder: "{path} 中没有通达信的行业文件（tdxhy.cfg、block_gn.dat）",
  fNoIncon: "{tdxhy} 的行业名称在 incon.dat 的 #TDXNHY 段中，但没有找到 incon.dat",
  fStore: "写入数据库失败（{detail}）",
  modelText: "不配置模型也能用：图表、选股、回测、持仓和预警都不需要模型。配置后可以让助手分析和跑任务。",
  modelSet: "已配置模型：{m}",
  openSettings: "去设置模型",
  wlText: "从通达信的自选股和自定义板块导入，或从每行一个代码的文件（或第一列是代码的 CSV）导入。",
  wlTdx: "从通达信板块导入",
  wlCsvLabel: "代码文件",
  wlCsv: "从文件导入",
  wlResult: "文件中 {stocks} 只股票，新加入 {added} 只",
  wlBad: "有 {n} 行不是股票代码，未导入：",
  wlNow: "自选股现有 {n} 只",
  summaryTitle: "准备好了",
  summary: "桌面现有 {stocks} 只股票的日线（最新 {last}），{indices} 个指数，自选股 {wl} 只，{model}。",
  noModel: "未配置模型（不影响使用）",
  withModel: "模型 {m}",
  finish: "打开总览",
  none: "—",
};

const en: Record<keyof typeof zh, string> = {
  title: "Getting started",
  intro: "Three steps to fill the desk: market data, a model, a watchlist. Each can be skipped and done later in Settings or the overview; close the app half-way and it resumes here.",
  close: "Close the guide",
  stepData: "1. Market data",
  stepModel: "2. A model (optional)",
  stepWatchlist: "3. Watchlist",
  done: "Done",
  skipped: "Skipped",
  skip: "Skip",
  tdxLabel: "TDX install folder (holding vipdoc and T0002)",
  tdxImport: "Import from TDX",
  tdxHint: "Reads every stock's daily bars (unadjusted until a sync swaps in adjusted ones, keeping the real closes), the 自选股 and custom blocks, and the industry file; takes seconds, and a second import adds nothing twice.",
  csvLabel: "CSV folder (date,code,open,high,low,close,volume[,amount])",
  csvImport: "Import CSV",
  csvStarted: "The CSV import started as a background task; see the task panel.",
  syncAll: "Full-market sync in the background",
  syncEstimate: "About {n} stocks and indices to download: at least {t} at about {s} s each ({fresh} already up to date are skipped). The desk is usable meanwhile.",
  syncOffline: "No live data source is enabled, so a sync cannot run; enable one in Settings.",
  syncStarted: "The full-market sync started in the background; see the task panel.",
  progressBars: "Daily bars: {done}/{total} stocks",
  progressWatchlist: "Blocks: {done}/{total}",
  progressIndustries: "Industry file",
  tdxResult: "{stocks} stocks read: {added} new bars, {unchanged} already stored, newest {last}; {skipped} files that are not stocks skipped.",
  tdxRejected: "{n} damaged file(s) not imported:",
  tdxNothingNew: "Nothing new: this folder's bars and watchlist are already imported.",
  tdxBlocks: "{name}: {stocks} stocks, {added} newly watched",
  tdxIndustries: "Industries: {stocks} stocks in {n} industries",
  tdxNoIndustries: "Industries: no tdxhy.cfg in this folder",
  tdxIndustriesRejected: "Industries: ",
  tdxIndustriesFailed: "Industries not imported: {why}",
  fUnreadable: "cannot read {path} ({detail})",
  fTooLarge: "{path} is over {mb} MB, no industry file",
  fNotTdxFolder: "{path} holds no TDX industry files (tdxhy.cfg, block_gn.dat)",
  fNoIncon: "{tdxhy} takes its industry names from incon.dat's #TDXNHY section, and no incon.dat was found",
  fStore: "the database could not store it ({detail})",
  modelText: "The desk works without a model: charts, screens, backtests, the portfolio and alerts need none. With one, the assistant analyses and runs tasks for you.",
  modelSet: "Model set up: {m}",
  openSettings: "Set up a model",
  wlText: "Import TDX's 自选股 and custom blocks, or a file with one code per line (or a CSV whose first column is the code).",
  wlTdx: "Import TDX blocks",
  wlCsvLabel: "Code file",
  wlCsv: "Import file",
  wlResult: "{stocks} stocks in the file, {added} newly watched",
  wlBad: "{n} line(s) are not stock codes; nothing imported:",
  wlNow: "The watchlist holds {n} stocks",
  summaryTitle: "Ready",
  summary: "The desk holds daily bars of {stocks} stocks (newest {last}), {indices} indices, {wl} watched stocks, {model}.",
  noModel: "no model (not needed)",
  withModel: "model {m}",
  finish: "Open the overview",
  none: "—",
};

export const firstRunText = localTexts(zh, en);
export type FirstRunKey = keyof typeof zh;

/** `YYYYMMDD` as `YYYY-MM-DD`. */
export function isoDay(d: number | null): string | null {
  if (d === null) return null;
  const s = String(d);
  return `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}`;
}

/** Seconds as hours and minutes, in the language's words. */
export function duration(seconds: number, lang: string): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.max(1, Math.round((seconds % 3600) / 60));
  if (lang === "en") return h > 0 ? `${h} h ${m} min` : `${m} min`;
  return h > 0 ? `${h} 小时 ${m} 分钟` : `${m} 分钟`;
}
