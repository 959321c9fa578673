// zh-CN / en strings of the market pages (kept beside them; i18n.ts is shared).
import { useContext } from "react";
import { LanguageContext } from "../i18n";

const zh = {
  navStock: "个股",
  navWatchlist: "自选",
  searchPlaceholder: "代码 / 名称 / 拼音首字母",
  day: "日线",
  week: "周线",
  month: "月线",
  loading: "加载中…",
  noStock: "用上方搜索框找一只股票。",
  events: "威科夫事件",
  noEvents: "引擎在最近 250 根日线中没有识别出威科夫结构。",
  phase: "阶段",
  range: "交易区间",
  support: "支撑",
  resistance: "阻力",
  mid: "中轴",
  signals: "信号",
  diagnosis: "诊断",
  health: "健康度",
  stage: "阶段",
  data: "数据",
  source: "来源",
  asOf: "最新日期",
  stale: "数据已陈旧",
  fresh: "数据最新",
  sync: "同步行情",
  barsDrawn: "{n} 根K线 · {ms} 毫秒",
  syncing: "同步中…",
  syncUnavailable: "当前版本的界面尚不能同步；请在终端运行",
  ask: "问问智能体",
  addWatch: "加入自选",
  removeWatch: "移出自选",
  watchTitle: "自选股",
  watchEmpty: "自选为空。在个股页点“加入自选”。",
  code: "代码",
  name: "名称",
  last: "最新价",
  change: "涨跌幅",
  remove: "移除",
  holding: "持仓",
  cost: "成本",
  stop: "止损",
  target: "目标",
};

type Key = keyof typeof zh;

const en: Record<Key, string> = {
  navStock: "Stock",
  navWatchlist: "Watchlist",
  searchPlaceholder: "Code / name / pinyin initials",
  day: "Day",
  week: "Week",
  month: "Month",
  loading: "Loading…",
  noStock: "Find a stock with the search box above.",
  events: "Wyckoff events",
  noEvents: "The engine found no Wyckoff structure in the last 250 daily bars.",
  phase: "Phase",
  range: "Trading range",
  support: "Support",
  resistance: "Resistance",
  mid: "Mid",
  signals: "Signals",
  diagnosis: "Diagnosis",
  health: "Health",
  stage: "Stage",
  data: "Data",
  source: "Source",
  asOf: "As of",
  stale: "Data is stale",
  fresh: "Data is current",
  sync: "Sync",
  barsDrawn: "{n} bars · {ms} ms",
  syncing: "Syncing…",
  syncUnavailable: "The app cannot sync yet; in a terminal run",
  ask: "Ask the agent",
  addWatch: "Add to watchlist",
  removeWatch: "Remove from watchlist",
  watchTitle: "Watchlist",
  watchEmpty: "The watchlist is empty. Use “Add to watchlist” on a stock page.",
  code: "Code",
  name: "Name",
  last: "Last",
  change: "Change",
  remove: "Remove",
  holding: "Holding",
  cost: "Cost",
  stop: "Stop",
  target: "Target",
};

export function marketText(lang: string, k: Key): string {
  return (lang === "en" ? en : zh)[k];
}

export function useMarketText() {
  const lang = useContext(LanguageContext);
  return (k: Key) => marketText(lang, k);
}
