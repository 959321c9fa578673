// Concept blocks as the map page and the stock page show them: the strings in both
// languages and what each line says, from the desk's figures alone (a missing figure is
// said, never made up).
import type { ConceptStrength, IndustrySource, LoadInfo, StockMembership } from "../bindings";
import { localTexts } from "../i18n";
import { isoDay } from "./mapModel";

const zh = {
  industriesTab: "行业",
  conceptsTab: "概念",
  conceptTitle: "概念板块 5 日相对强弱（{d}）",
  concept: "概念",
  members: "成分股",
  counted: "计入",
  return5d: "5 日涨幅",
  relative5d: "相对大盘",
  upToday: "当日上涨",
  market: "大盘（{n} 只股票等权）5 日涨幅 {pct}",
  marketNone: "当日没有股票有 5 日涨幅",
  noConcepts: "还没有概念板块数据。用命令行运行 wyckoff data industries import PATH（PATH 为通达信安装目录或其 block_gn.dat 文件）导入。",
  noTable: "缓存中没有该日或之前的K线，无法计算概念强弱。",
  noRows: "当日没有成分股有 5 日涨幅的概念板块。",
  laterLoad: "概念板块取自 {load} 导入的数据（没有更早的），代替 {d} 当时的成分",
  loadFrom: "概念板块：{load} 导入（{source}）",
  industryLine: "行业：{industry}",
  industryLoad: "（{load} 导入，{source}）",
  industryLater: "，取自该日之后导入的数据",
  industryNone: "行业：无数据",
  conceptsLine: "概念：",
  conceptsNone: "概念：无（该股不在已导入的概念板块中）",
  conceptsNoLoad: "概念：还没有概念板块数据",
  blocksLater: "（板块取自之后导入的数据）",
  csv: "CSV 文件",
  tdx: "通达信",
  tushare: "Tushare",
  tushare_sw: "Tushare 申万",
};

const en: typeof zh = {
  industriesTab: "Industries",
  conceptsTab: "Concepts",
  conceptTitle: "Concept blocks, 5-day strength against the market ({d})",
  concept: "Concept",
  members: "Members",
  counted: "Counted",
  return5d: "5-day return",
  relative5d: "vs market",
  upToday: "Up today",
  market: "Market ({n} stocks, equal weight) 5-day return {pct}",
  marketNone: "No stock has a 5-day return on the day",
  noConcepts: "No concept blocks yet. Run wyckoff data industries import PATH (PATH a TDX install folder or its block_gn.dat) to import them.",
  noTable: "No bars cached on or before the day: no concept strength.",
  noRows: "No concept block has a member with a 5-day return on the day.",
  laterLoad: "Concept blocks from the load of {load} (none earlier) stand in for those of {d}",
  loadFrom: "Concept blocks: loaded {load} ({source})",
  industryLine: "Industry: {industry}",
  industryLoad: " (loaded {load}, {source})",
  industryLater: ", from a load after the day",
  industryNone: "Industry: none on record",
  conceptsLine: "Concepts: ",
  conceptsNone: "Concepts: none (the stock is in no imported concept block)",
  conceptsNoLoad: "Concepts: no concept blocks on record yet",
  blocksLater: " (blocks from a later load)",
  csv: "CSV file",
  tdx: "TDX",
  tushare: "Tushare",
  tushare_sw: "Tushare Shenwan",
};

export const conceptText = localTexts(zh, en);
export type ConceptT = ReturnType<typeof conceptText>;

const sourceText = (s: IndustrySource, t: ConceptT) => t(s);

/** Signed percent with two decimals; `—` when missing. */
export function signedPct(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return "—";
  return `${n > 0 ? "+" : ""}${n.toFixed(2)}%`;
}

/** The lines above the concept table: where the blocks came from, whether a later load
 * stands in for the day, the market's own figure, and why there is no table. */
export function conceptNotes(p: ConceptStrength, t: ConceptT): { id: string; text: string }[] {
  if (!p.load) return [{ id: "no-concepts", text: t("noConcepts") }];
  const load = isoDay(p.load.loaded_on);
  const notes = [{ id: "load", text: t("loadFrom", { load, source: sourceText(p.load.source, t) }) }];
  if (!p.table) return [...notes, { id: "no-table", text: t("noTable") }];
  const d = isoDay(p.table.date);
  if (p.load_later) notes.push({ id: "later-load", text: t("laterLoad", { load, d }) });
  notes.push(
    p.table.market_return_5d_pct === null
      ? { id: "market", text: t("marketNone") }
      : { id: "market", text: t("market", { n: p.table.market_stocks, pct: signedPct(p.table.market_return_5d_pct) }) },
  );
  if (p.table.rows.length === 0) notes.push({ id: "no-rows", text: t("noRows") });
  return notes;
}

function loadText(l: LoadInfo, t: ConceptT): string {
  return t("industryLoad", { load: isoDay(l.loaded_on), source: sourceText(l.source, t) });
}

/** The stock page's two lines: its industry with the load it was read from, and its
 * concepts (or why there are none). */
export function blocksLines(b: StockMembership, t: ConceptT): { industry: string; concepts: string | null; conceptsNote: string } {
  const industry = b.industry
    ? t("industryLine", { industry: b.industry }) + (b.industry_load ? loadText(b.industry_load, t) : "") + (b.industry_later ? t("industryLater") : "")
    : t("industryNone");
  const hasConceptLoad = b.block_loads.some((l) => l.kind === "concept");
  if (b.concepts.length > 0) return { industry, concepts: b.concepts.join("、"), conceptsNote: b.blocks_later ? t("blocksLater") : "" };
  return { industry, concepts: null, conceptsNote: hasConceptLoad ? t("conceptsNone") : t("conceptsNoLoad") };
}
