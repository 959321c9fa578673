//! `get_market_map` (市场情绪, read-only): the day's limit statistics from the cached bars
//! — 涨停/跌停/炸板/一字板 counts, the 连板 ladder with each stock's name as of the day,
//! 涨停溢价 and the seal rate ([`wyckoff_engine::limits`]) — and what the figures rest on:
//! how many stocks near a limit had no raw close that day, whose names (hence ST status
//! and limit) came from today's list. The CLI's `wyckoff market map` and the agent's tool
//! run this same function and return the same typed answer. Nothing is written.

use std::fmt;

use serde::Serialize;
use serde_json::{Value, json};
use wyckoff_agent::ToolError;
use wyckoff_engine::FunnelConfig;
use wyckoff_engine::limits::{LADDER_WARMUP_BARS, LimitDay, RawCloseMap, limit_series, needs_raw};
use wyckoff_engine::sectors::{SectorConfig, SectorDay, sector_day};
use wyckoff_market::{MarketData, SkipReason};
use wyckoff_time::iso;

use crate::common::opt_date;

pub const NAME: &str = "get_market_map";
pub const DISPLAY_NAME: &str = "市场情绪";
pub const DESCRIPTION: &str = "读取某个交易日的涨跌停情绪（只读，仅用本地缓存的日线，不编造）：涨停、跌停、炸板（盘中触及涨停、收盘未封住）、\
一字板家数，连板天梯（按连续涨停天数，含当日的股票名称）与最高板，昨日涨停股今日平均涨幅（涨停溢价，%）和封板率（涨停 ÷ (涨停 + 炸板)）。\
涨跌停价按交易所规则由前一日不复权收盘价计算并四舍五入到分：主板 10%、ST 5%（按当日名称）、创业板 2020-08-24 起与科创板 20%、北交所 30%，新股上市首日（注册制下前 5 日）不设涨跌幅限制。\
notes 说明缺少不复权收盘价的股票数与名称取自今日名单的股票数。";

const ERR_AS_OF: &str = "as_of 须为有效日期，如 2024-05-10 或 20240510";

pub fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "as_of": {"type": "string", "description": "交易日（YYYY-MM-DD）；省略则取本地最新交易日，非交易日取其前最近一个"}
        },
        "additionalProperties": false
    })
}

/// The day's limit statistics and what they rest on.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct MarketMap {
    /// The trading day mapped (`YYYY-MM-DD`): the last one with bars on or before the
    /// date asked for.
    pub trade_date: String,
    /// The date asked for, when one was (`YYYY-MM-DD`).
    pub asked: Option<String>,
    pub limits: LimitDay,
    /// Per industry: 5/20-day returns relative to the market, breadth, amount share,
    /// limit-ups, rotation and leaders ([`wyckoff_engine::sectors`]); `None` when no stock
    /// has an industry (a note says how to import some).
    pub sectors: Option<SectorDay>,
    pub notes: Vec<MapNote>,
}

/// What a reader of the map should know about its inputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MapNote {
    /// Stocks that came near a limit that day without that day's raw (unadjusted) close:
    /// `previous_scale` judged with the previous day's (right unless an ex-date),
    /// `adjusted` on forward-adjusted prices, counted at a limit within one fen.
    RawClosesMissing { previous_scale: u32, adjusted: u32 },
    /// Stocks whose name that day (hence ST status and limit) is today's: no recorded name
    /// history covers the day.
    NamesFromToday { stocks: u32 },
    /// A listing's first days, which trade without a limit and are left out of the counts.
    NewListingsWithoutLimit { stocks: u32 },
    /// Stocks left out because their cached data is damaged.
    SkippedStocks { stocks: u32 },
    /// No stock has an industry: no sector table.
    NoIndustries,
    /// Stocks whose industry came from a membership loaded after the day (none earlier).
    IndustriesFromLaterLoad { stocks: u32 },
}

impl fmt::Display for MapNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MapNote::RawClosesMissing {
                previous_scale,
                adjusted,
            } => write!(
                f,
                "near a limit without the day's unadjusted close: {previous_scale} judged on the previous day's scale (right unless an ex-date), {adjusted} on forward-adjusted prices within one fen"
            ),
            MapNote::NamesFromToday { stocks } => write!(
                f,
                "names and ST status from today's list for {stocks} stock(s) (no recorded name history covers the day)"
            ),
            MapNote::NewListingsWithoutLimit { stocks } => write!(
                f,
                "{stocks} new listing(s) in their first days without a limit, not counted"
            ),
            MapNote::SkippedStocks { stocks } => {
                write!(f, "{stocks} stock(s) left out: damaged cached data")
            }
            MapNote::NoIndustries => f.write_str(
                "no industries, so no sector table: run `wyckoff data industries import PATH` (a code,industry CSV or a TDX install folder)",
            ),
            MapNote::IndustriesFromLaterLoad { stocks } => write!(
                f,
                "industries of {stocks} stock(s) from a membership loaded after the day (none earlier on record)"
            ),
        }
    }
}

/// The tool's answer: the typed map as JSON.
pub async fn run(md: &MarketData, args: &Value) -> Result<Value, ToolError> {
    let as_of = opt_date(args, "as_of", ERR_AS_OF)?;
    let map = market_map(md, as_of).await?;
    serde_json::to_value(&map).map_err(|e| ToolError::Failed(e.to_string()))
}

/// The market map of the last trading day on or before `as_of` (the newest cached day when
/// `None`).
pub async fn market_map(md: &MarketData, as_of: Option<u32>) -> Result<MarketMap, ToolError> {
    // the day's screen view, shared with the screens and the breadth (warm in the app);
    // its tail reaches back further than the ladder's warm-up
    let tail = FunnelConfig::default()
        .screen_bars()
        .max(LADDER_WARMUP_BARS + 2);
    let loaded = md
        .universe(as_of, Some(tail))
        .await
        .map_err(|e| ToolError::Failed(format!("读取本地K线缓存失败: {e}")))?;
    let Some(day) = loaded.report.last_date else {
        return Err(ToolError::Failed(match as_of {
            Some(d) => format!(
                "本地在 {} 及之前没有个股日线；先运行 `wyckoff data sync --all` 或 `wyckoff data import PATH`。",
                iso(d)
            ),
            None => {
                "本地没有个股日线；先运行 `wyckoff data sync --all` 或 `wyckoff data import PATH`。"
                    .into()
            }
        }));
    };
    // raw closes only for the stocks that came near a limit: a few of the market
    let first = loaded
        .universe
        .stocks
        .iter()
        .filter_map(|s| s.bars.first().map(|b| b.date))
        .min()
        .unwrap_or(day);
    let codes: Vec<String> = needs_raw(&loaded.universe.stocks, day, day)
        .into_iter()
        .map(str::to_string)
        .collect();
    let mut raw = RawCloseMap::new();
    for code in codes {
        let closes = md
            .raw_closes(&code, first..=day)
            .await
            .map_err(crate::common::market_err)?;
        let exact: Vec<(u32, f64)> = closes
            .closes
            .iter()
            .filter(|c| c.exact)
            .map(|c| (c.date, c.close_e6 as f64 / 1e6))
            .collect();
        if !exact.is_empty() {
            raw.insert(code, exact);
        }
    }
    let worker = loaded.clone();
    let has_industries = loaded.report.industries.stocks_with_industry > 0;
    let (series, sectors) = tokio::task::spawn_blocking(move || {
        let stocks = &worker.universe.stocks;
        let series = limit_series(stocks, &raw, day, day);
        let sectors = has_industries
            .then(|| sector_day(stocks, day, Some(&series), &SectorConfig::default()))
            .flatten();
        (series, sectors)
    })
    .await
    .map_err(|e| ToolError::Failed(format!("涨跌停统计异常中止: {e}")))?;
    let limits = series
        .days
        .into_iter()
        .find(|d| d.date == day)
        .unwrap_or_else(|| LimitDay {
            date: day,
            ..LimitDay::default()
        });
    let mut notes = Vec::new();
    if limits.previous_scale_days + limits.adjusted_days > 0 {
        notes.push(MapNote::RawClosesMissing {
            previous_scale: limits.previous_scale_days,
            adjusted: limits.adjusted_days,
        });
    }
    if limits.st_from_today > 0 {
        notes.push(MapNote::NamesFromToday {
            stocks: limits.st_from_today,
        });
    }
    if limits.unlimited > 0 {
        notes.push(MapNote::NewListingsWithoutLimit {
            stocks: limits.unlimited,
        });
    }
    let damaged = loaded
        .report
        .skipped
        .iter()
        .filter(|s| {
            matches!(
                s.reason,
                SkipReason::DamagedSeries { .. } | SkipReason::CorruptBars { .. }
            )
        })
        .count();
    if damaged > 0 {
        notes.push(MapNote::SkippedStocks {
            stocks: u32::try_from(damaged).unwrap_or(u32::MAX),
        });
    }
    let industries = &loaded.report.industries;
    if !has_industries {
        notes.push(MapNote::NoIndustries);
    } else if industries.from_later_load > 0 {
        notes.push(MapNote::IndustriesFromLaterLoad {
            stocks: u32::try_from(industries.from_later_load).unwrap_or(u32::MAX),
        });
    }
    Ok(MarketMap {
        trade_date: iso(day),
        asked: as_of.map(iso),
        limits,
        sectors,
        notes,
    })
}
