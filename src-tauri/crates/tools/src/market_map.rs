//! `get_market_map` (市场情绪, read-only): the day's limit statistics from the cached bars
//! — 涨停/跌停/炸板/一字板 counts, the 连板 ladder with each stock's name as of the day,
//! 涨停溢价 and the seal rate ([`wyckoff_engine::limits`]) — and what the figures rest on:
//! how many stocks near a limit had no raw close that day, whose names (hence ST status
//! and limit) came from today's list. The CLI's `wyckoff market map` and the agent's tool
//! run this same function and return the same typed answer. Nothing is written.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};
use wyckoff_agent::ToolError;
use wyckoff_engine::FunnelConfig;
use wyckoff_engine::limits::{
    LADDER_WARMUP_BARS, LimitDay, LimitSeries, RawCloseMap, limit_series, needs_raw,
};
use wyckoff_engine::sectors::{
    Rotation, SectorConfig, SectorDay, SectorSeries, amount_of, sector_day, sector_series,
};
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
    /// Stocks whose industry came from a membership loaded after the day.
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
                "industries of {stocks} stock(s) from a membership loaded after the day"
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

/// The universe as the map reads it, and its last trading day on or before the day asked.
struct Loaded {
    loaded: std::sync::Arc<wyckoff_market::universe::LoadedUniverse>,
    day: u32,
}

/// The universe of the day's screen view (warm in the app), its tail reaching back further
/// than the longest series, its ladder's warm-up and the close before them; an error naming
/// what to do when no bars are cached.
async fn load(md: &MarketData, as_of: Option<u32>) -> Result<Loaded, ToolError> {
    let tail = FunnelConfig::default()
        .screen_bars()
        .max(MAX_SERIES_DAYS + LADDER_WARMUP_BARS + 1);
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
    Ok(Loaded { loaded, day })
}

/// The raw closes of the stocks that came near a limit in `from..=to` (or in the run of
/// such days just before it): a few of the market on a quiet day, thousands over a year or
/// on a rally. The market data keeps what it read while nothing is written, so a
/// long-lived process (the app) reads each stock's closes once; the extra stocks a kept
/// read may hold change nothing (only days near a limit read a raw close).
async fn raw_closes(
    md: &MarketData,
    stocks: &[wyckoff_engine::StockSeries],
    from: u32,
    to: u32,
) -> Result<Arc<RawCloseMap>, ToolError> {
    let first = stocks
        .iter()
        .filter_map(|s| s.bars.first().map(|b| b.date))
        .min()
        .unwrap_or(from);
    let codes: Vec<String> = needs_raw(stocks, from, to)
        .into_iter()
        .map(str::to_string)
        .collect();
    md.exact_raw_closes(&codes, first..=to)
        .await
        .map_err(crate::common::market_err)
}

/// The limit statistics of `from..=day` over the loaded universe, off the async runtime.
async fn limits_of(md: &MarketData, l: &Loaded, from: u32) -> Result<LimitSeries, ToolError> {
    let raw = raw_closes(md, &l.loaded.universe.stocks, from, l.day).await?;
    let worker = l.loaded.clone();
    let day = l.day;
    tokio::task::spawn_blocking(move || limit_series(&worker.universe.stocks, &raw, from, day))
        .await
        .map_err(|e| ToolError::Failed(format!("涨跌停统计异常中止: {e}")))
}

/// Notes on the universe the map read: damaged series left out, industries missing or
/// from a later load.
fn universe_notes(l: &Loaded, notes: &mut Vec<MapNote>) {
    let report = &l.loaded.report;
    let damaged = report
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
    let industries = &report.industries;
    // the newest day's view reads the latest load without flagging it, so a load dated
    // after the mapped day (bars older than the import) is told here
    let later = if industries.from_later_load > 0 {
        industries.from_later_load
    } else if industries
        .load
        .as_ref()
        .is_some_and(|load| load.loaded_on > l.day)
    {
        industries
            .stocks_with_industry
            .saturating_sub(industries.from_stock_list)
    } else {
        0
    };
    if industries.stocks_with_industry == 0 {
        notes.push(MapNote::NoIndustries);
    } else if later > 0 {
        notes.push(MapNote::IndustriesFromLaterLoad {
            stocks: u32::try_from(later).unwrap_or(u32::MAX),
        });
    }
}

/// The market map of the last trading day on or before `as_of` (the newest cached day when
/// `None`).
pub async fn market_map(md: &MarketData, as_of: Option<u32>) -> Result<MarketMap, ToolError> {
    let l = load(md, as_of).await?;
    let day = l.day;
    let series = limits_of(md, &l, day).await?;
    let has_industries = l.loaded.report.industries.stocks_with_industry > 0;
    let (series, sectors) = if has_industries {
        let worker = l.loaded.clone();
        tokio::task::spawn_blocking(move || {
            let stocks = &worker.universe.stocks;
            let sectors = sector_day(stocks, day, Some(&series), &SectorConfig::default());
            (series, sectors)
        })
        .await
        .map_err(|e| ToolError::Failed(format!("行业统计异常中止: {e}")))?
    } else {
        (series, None)
    };
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
    universe_notes(&l, &mut notes);
    Ok(MarketMap {
        trade_date: iso(day),
        asked: as_of.map(iso),
        limits,
        sectors,
        notes,
    })
}

/// Trading days a range series may span: a year of them. The map's tail of bars holds
/// them with the ladder's warm-up (it is the screen's, 320 bars, while that is enough).
pub const MAX_SERIES_DAYS: usize = 250;

/// Days of the rotation trail.
pub const TRAIL_DAYS: usize = 20;

/// One industry's position in the rotation on one day.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct RotationPoint {
    /// `YYYY-MM-DD`.
    pub date: String,
    pub rs_ratio: f64,
    pub rs_momentum: f64,
}

/// One industry's path through the rotation over the trail's days, oldest first: only the
/// days with both figures (an industry needs weeks of history before it has them).
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct RotationTrail {
    pub industry: String,
    /// Where the last point stands.
    pub rotation: Option<Rotation>,
    pub points: Vec<RotationPoint>,
}

/// The limit statistics of the last trading days up to a day, and each industry's rotation
/// trail over the last [`TRAIL_DAYS`] of them.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct MarketMapSeries {
    /// The last day of the range (`YYYY-MM-DD`).
    pub trade_date: String,
    pub asked: Option<String>,
    /// One per trading day, oldest first; each carries the counts of its own inputs
    /// (raw closes missing, names from today).
    pub limits: Vec<LimitDay>,
    /// Empty when no stock has an industry (a note says how to import some).
    pub trails: Vec<RotationTrail>,
    pub notes: Vec<MapNote>,
}

/// The limit statistics of the last `days` trading days (1 to [`MAX_SERIES_DAYS`]) up to the
/// last trading day on or before `as_of`, and the industries' rotation trails.
pub async fn market_series(
    md: &MarketData,
    as_of: Option<u32>,
    days: usize,
) -> Result<MarketMapSeries, ToolError> {
    if !(1..=MAX_SERIES_DAYS).contains(&days) {
        return Err(ToolError::InvalidArgs(format!(
            "days must be 1 to {MAX_SERIES_DAYS}, not {days}"
        )));
    }
    let l = load(md, as_of).await?;
    let day = l.day;
    let calendar = trading_days(&l.loaded.universe.stocks, day);
    let from_of = |n: usize| {
        calendar[calendar.len().saturating_sub(n)..]
            .first()
            .copied()
            .unwrap_or(day)
    };
    let from = from_of(days);
    let trail_from = from_of(TRAIL_DAYS);
    let series = limits_of(md, &l, from).await?;
    let has_industries = l.loaded.report.industries.stocks_with_industry > 0;
    let trails = if has_industries {
        let worker = l.loaded.clone();
        tokio::task::spawn_blocking(move || {
            let sectors = sector_series(
                &worker.universe.stocks,
                trail_from,
                day,
                None,
                &SectorConfig::default(),
            );
            trails_of(&sectors)
        })
        .await
        .map_err(|e| ToolError::Failed(format!("行业轮动统计异常中止: {e}")))?
    } else {
        Vec::new()
    };
    let mut notes = Vec::new();
    universe_notes(&l, &mut notes);
    Ok(MarketMapSeries {
        trade_date: iso(day),
        asked: as_of.map(iso),
        limits: series.days,
        trails,
        notes,
    })
}

/// Every date any stock has a bar on or before `day`, ascending.
fn trading_days(stocks: &[wyckoff_engine::StockSeries], day: u32) -> Vec<u32> {
    let mut dates: Vec<u32> = stocks
        .iter()
        .flat_map(|s| {
            let end = s.bars.partition_point(|b| b.date <= day);
            s.bars[..end].iter().map(|b| b.date)
        })
        .collect();
    dates.sort_unstable();
    dates.dedup();
    dates
}

/// Each industry's points over the series' days, in the order of the last day's table.
fn trails_of(sectors: &SectorSeries) -> Vec<RotationTrail> {
    let Some(last) = sectors.days.last() else {
        return Vec::new();
    };
    last.rows
        .iter()
        .map(|row| RotationTrail {
            industry: row.industry.clone(),
            rotation: row.rotation,
            points: sectors
                .days
                .iter()
                .filter_map(|d| {
                    let r = d.rows.iter().find(|r| r.industry == row.industry)?;
                    Some(RotationPoint {
                        date: iso(d.date),
                        rs_ratio: r.rs_ratio?,
                        rs_momentum: r.rs_momentum?,
                    })
                })
                .collect(),
        })
        .collect()
}

/// A member of an industry on the day.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct IndustryMember {
    pub code: String,
    /// The name it carried that day (today's when no recorded name covers the day).
    pub name: String,
    /// Close over the previous close, percent.
    pub change_pct: Option<f64>,
    /// Over its last 5 bars, percent (the sector table's short window).
    pub return_short_pct: Option<f64>,
    /// Traded value that day, CNY.
    pub amount: f64,
    /// Closed at the limit up that day.
    pub limit_up: bool,
    /// Its run of limit-ups when it did (1 = first board).
    pub boards: Option<u32>,
}

/// An industry's members with a bar on the day, the best 5-day return first.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct IndustryMembers {
    pub trade_date: String,
    pub industry: String,
    pub members: Vec<IndustryMember>,
}

/// The members of `industry` on the last trading day on or before `as_of`; an unknown
/// industry is an error naming it.
pub async fn industry_members(
    md: &MarketData,
    industry: &str,
    as_of: Option<u32>,
) -> Result<IndustryMembers, ToolError> {
    let l = load(md, as_of).await?;
    let day = l.day;
    let series = limits_of(md, &l, day).await?;
    let ladder: std::collections::HashMap<&str, u32> = series
        .days
        .iter()
        .filter(|d| d.date == day)
        .flat_map(|d| d.ladder.iter().map(|s| (s.code.as_str(), s.boards)))
        .collect();
    let short = SectorConfig::default().short_bars;
    let pct = |later: f64, earlier: f64| {
        (earlier > 0.0 && later.is_finite()).then(|| (later / earlier - 1.0) * 100.0)
    };
    let in_industry: Vec<&wyckoff_engine::StockSeries> = l
        .loaded
        .universe
        .stocks
        .iter()
        .filter(|s| s.industry.as_deref() == Some(industry))
        .collect();
    if in_industry.is_empty() {
        return Err(ToolError::InvalidArgs(format!(
            "no stock is in the industry {industry:?} as of {}",
            iso(day)
        )));
    }
    let mut members: Vec<IndustryMember> = in_industry
        .into_iter()
        .filter_map(|s| {
            let i = s.bars.binary_search_by_key(&day, |b| b.date).ok()?;
            let bar = &s.bars[i];
            let boards = ladder.get(s.code.as_str()).copied();
            Some(IndustryMember {
                code: s.code.clone(),
                name: s.name_on(day).value.to_string(),
                change_pct: i
                    .checked_sub(1)
                    .and_then(|j| pct(bar.close, s.bars[j].close)),
                return_short_pct: i
                    .checked_sub(short)
                    .and_then(|j| pct(bar.close, s.bars[j].close)),
                amount: amount_of(bar),
                limit_up: boards.is_some(),
                boards,
            })
        })
        .collect();
    members.sort_by(|a, b| {
        let key = |m: &IndustryMember| m.return_short_pct.unwrap_or(f64::NEG_INFINITY);
        key(b).total_cmp(&key(a)).then_with(|| a.code.cmp(&b.code))
    });
    Ok(IndustryMembers {
        trade_date: iso(day),
        industry: industry.to_string(),
        members,
    })
}
