// The backend's data notes (code + figures) worded in the page's language.
import type { DataNote, Language, RegimeReason } from "../bindings";

export function dataNoteText(note: DataNote, lang: Language): string {
  const zh = lang === "zh";
  switch (note.type) {
    case "not_in_stock_list":
      return zh
        ? `${note.code} 不在本地股票列表中；联网后运行 \`wyckoff data sync --list\``
        : `${note.code} is not in the cached stock list; run \`wyckoff data sync --list\` when online`;
    case "market_cap_unavailable":
      return zh ? "没有市值数据（本地列表中没有，不编造）" : "Market cap unavailable (not in the cached list; not invented)";
    case "industry_unavailable":
      return zh ? "没有行业数据" : "Industry unavailable";
    case "listing_date_unknown":
      return zh ? "上市日期未知" : "Listing date unknown";
    case "no_bars_before":
      return zh
        ? `${note.as_of} 及之前没有K线；本地 ${note.code} 的数据从 ${note.first_cached} 开始`
        : `No bars on or before ${note.as_of}; cached data for ${note.code} starts ${note.first_cached}`;
    case "no_data_offline":
      return zh
        ? `本地没有 ${note.code} 的数据；联网后点“同步行情”或运行 \`wyckoff data sync ${note.code}\``
        : `No data offline for ${note.code}; press Sync when online or run \`wyckoff data sync ${note.code}\``;
    case "index_unavailable_offline":
      return zh
        ? `本地没有指数 ${note.index} 的数据（内置数据不含指数K线）；联网后运行 \`wyckoff data sync --index ${note.index}\``
        : `Index data unavailable offline for ${note.index} (the bundled data has no index bars); run \`wyckoff data sync --index ${note.index}\` when online`;
    case "turnover_unavailable":
      return zh ? "该数据源没有换手率（不编造）" : "Turnover rate unavailable from this source (not invented)";
    case "refresh_failed":
      return zh ? `联网更新失败，使用本地缓存：${note.error}` : `Live refresh failed, using the cache: ${note.error}`;
    case "corrupt_rows_skipped":
      return zh
        ? `跳过了 ${note.count} 行损坏的缓存数据；重新同步即可修复`
        : `${note.count} corrupt cached row(s) skipped; sync again to repair`;
    case "amount_missing":
      return zh
        ? `${note.count} 根K线的数据源没有成交额；这些K线的成交额记为 0，不估算`
        : `${note.count} bar(s) have no traded amount from their source; it is 0 there, not estimated`;
    case "delisted":
      return zh
        ? `${note.code} 已退市；K线止于其最后交易日 ${note.last_day}`
        : `${note.code} was delisted; its bars end on ${note.last_day}, its last trading day`;
    case "unadjusted":
      return zh
        ? `通达信导入的K线是不复权价格（真实成交价），联网同步 ${note.code} 后换成前复权历史`
        : `Bars imported from TDX are unadjusted (real traded prices) until a sync of ${note.code} brings the forward-adjusted history`;
    case "stale":
      return zh
        ? `数据已陈旧：最新K线是 ${note.last_bar}，而最近收盘的交易日是 ${note.expected}；联网后点“同步行情”`
        : `Data is stale: the last bar is ${note.last_bar} but the last closed trading day is ${note.expected}; press Sync when online`;
  }
}

/** One step of the 水温 decision, with its figures. */
export function regimeReasonText(reason: RegimeReason, lang: Language): string {
  const zh = lang === "zh";
  const pct = (n: number | null) => (n === null ? "—" : `${n.toFixed(0)}%`);
  switch (reason.type) {
    case "no_benchmark_bars":
      return zh
        ? "本地没有上证指数日线，无法判断水温；联网后点“全市场同步”"
        : "No SSE Composite bars in the cache, so the regime cannot be judged; go online and use “Full-market sync”";
    case "no_bars":
      return zh ? "本地没有任何K线；请先同步或导入行情" : "No bars in the cache at all; sync or import data first";
    case "too_few_benchmark_bars":
      return zh
        ? `上证指数日线不足 ${reason.need} 根，无法判断水温`
        : `Fewer than ${reason.need} SSE Composite bars, too few to judge the regime`;
    case "bear_structure":
      return zh ? "空头结构：收盘<MA200，MA50<MA200 且 MA50 下行" : "Bear structure: close < MA200, MA50 < MA200 and MA50 falling";
    case "bull_structure":
      return zh
        ? "多头结构：收盘>MA50>MA200 且 MA50 上行，近 3 日累计不跌"
        : "Bull structure: close > MA50 > MA200, MA50 rising, not down over 3 days";
    case "neutral_structure":
      return zh ? "结构中性" : "Neutral structure";
    case "breadth_weak":
      return zh
        ? `站上 MA20 的股票 ${pct(reason.pct_above_ma20)} ≤ ${pct(reason.threshold)}`
        : `${pct(reason.pct_above_ma20)} of stocks above MA20 (≤ ${pct(reason.threshold)})`;
    case "breadth_strong":
      return zh
        ? `站上 MA20 的股票 ${pct(reason.pct_above_ma20)} ≥ ${pct(reason.threshold)}`
        : `${pct(reason.pct_above_ma20)} of stocks above MA20 (≥ ${pct(reason.threshold)})`;
    case "breadth_collapsed":
      return zh ? "站上 MA20 的比例单日骤降" : "The share above MA20 collapsed in one day";
    case "index_strong_breadth_thin":
      return zh ? "指数偏强但广度不足" : "The index is strong but breadth is thin";
    case "few_stocks_up":
      return zh
        ? `上涨家数占比 ${pct(reason.up_ratio_pct)} ≤ ${pct(reason.threshold)}`
        : `Only ${pct(reason.up_ratio_pct)} of stocks rose (≤ ${pct(reason.threshold)})`;
    case "panic_confirmed":
      return zh ? "恐慌下跌，且广度 / 资金确认" : "Panic selling, confirmed by breadth / money flow";
    case "panic_price_only":
      return zh ? "指数恐慌下跌（仅价格信号）" : "Panic drop in the index (price signal only)";
    case "panic_repair":
      return zh ? "前日恐慌后今日放量修复" : "Rebound on volume after yesterday's panic";
    case "panic_repair_confirmed":
      return zh ? "恐慌修复次日确认" : "Panic repair confirmed the next day";
    case "bear_rebound":
      return zh ? "广度转强但指数未成多头结构" : "Breadth turned strong but the index is not in a bull structure";
  }
}
