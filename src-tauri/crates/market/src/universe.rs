//! Loads the whole cached market into the engine's [`Universe`]: every stock's bars (one
//! stored series per stock, paged by code), its facts from the stock list, its recorded
//! name history and delisting day (see [`crate::history`]), and the three benchmark
//! indices. Stocks whose data is damaged are skipped and listed, never patched. A delisted
//! stock with cached bars is loaded like any other: the engine stops at its delisting day.

use std::collections::VecDeque;

use serde::Serialize;
use wyckoff_engine::{Bar, Benchmarks, StockSeries, Universe};

use crate::cache::{
    BarTable, CacheError, CacheStore, CorruptRow, DecodedPage, Keep, decode_in_background,
};
use crate::code::{IndexCode, StockCode};
use crate::date::DateSet;
use crate::history::ListStatus;
use crate::industries::{IndustryCoverage, IndustryStore};
use crate::search::StockDirectory;

/// Series read per query: large enough to amortise the round trip, small enough that the
/// few pages waiting for decoding stay a small part of the market.
const PAGE: u32 = 512;
/// Pages a reader lets wait for decoding before it reads on.
const PAGES_IN_FLIGHT: usize = 2;
/// Connections a whole-market read uses at once.
const READERS: u32 = 2;

/// Why a cached stock is not in the universe.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SkipReason {
    /// The stored series failed its integrity checks (length, checksum, order).
    DamagedSeries { detail: String },
    /// Some bars fail sanity checks; a series with holes would skew every indicator.
    CorruptBars { rows: Vec<CorruptRow> },
    /// The cache key is not a valid stock code.
    InvalidCode,
    /// Nothing on or before the as-of date.
    NoBarsAsOf,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkippedStock {
    pub code: String,
    #[serde(flatten)]
    pub reason: SkipReason,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MissingBenchmark {
    pub code: String,
    pub name: &'static str,
    pub reason: String,
}

/// What was loaded and what was left out, for the caller to tell the user.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UniverseReport {
    pub stocks: usize,
    pub bars: usize,
    /// The newest bar date over all loaded stocks.
    pub last_date: Option<u32>,
    pub skipped: Vec<SkippedStock>,
    /// Stocks with bars but no stock-list entry: board from the code; name from the
    /// stock's recorded listing or last recorded name (a delisted stock), else empty.
    pub not_in_stock_list: Vec<String>,
    /// Loaded stocks with no recorded name history: their ST status on any past date can
    /// only be read from today's name.
    pub without_name_history: usize,
    /// With an as-of date: loaded stocks whose recorded names do not reach back to it
    /// (none, or the first starts later), so their ST status then is today's name's.
    pub names_unknown_as_of: Option<usize>,
    /// Loaded stocks recorded as delisted (their series carry the delisting day).
    pub delisted: usize,
    /// Stock-list names with no cached bars at all.
    pub listed_without_bars: usize,
    pub missing_benchmarks: Vec<MissingBenchmark>,
    /// Where the stocks' industries came from (an import as of the day, a later one, or
    /// today's stock list), and how to get some when none has one.
    pub industries: IndustryCoverage,
}

#[derive(Debug, Clone, Default)]
pub struct LoadedUniverse {
    pub universe: Universe,
    pub report: UniverseReport,
}

/// The whole cache as of `as_of` (bars dated on or before it; all when `None`), stocks
/// ordered by code. With `tail`, each stock keeps only its last `tail` bars as of then and
/// the universe carries every date of the full series as its
/// [`Universe::trading_days`]: enough to screen that one day, at a fraction of the memory.
/// Every bar is still checked (or was, when its series was sealed as sound), and the report
/// counts them all.
pub async fn load_universe(
    store: &CacheStore,
    as_of: Option<u32>,
    tail: Option<usize>,
) -> Result<LoadedUniverse, CacheError> {
    let listed = StockDirectory::new(store.load_stocks().await?);
    load_universe_listed(store, &listed, as_of, tail).await
}

/// [`load_universe`] with the stock list already at hand (read since the last write).
pub async fn load_universe_listed(
    store: &CacheStore,
    listed: &StockDirectory,
    as_of: Option<u32>,
    tail: Option<usize>,
) -> Result<LoadedUniverse, CacheError> {
    let mut out = LoadedUniverse::default();
    let mut seen_listed = 0usize;
    let stage = tracing::info_span!(target: "wyckoff::stage", "history");
    let mut history = crate::history::HistoryStore::new(store.pool().clone())
        .load()
        .await?;
    let mut caps = crate::cap_history::CapHistoryStore::new(store.pool().clone())
        .load()
        .await?;
    out.report.names_unknown_as_of = as_of.map(|_| 0);
    // the membership imported as of the day (or the nearest later load, counted)
    let imported = IndustryStore::new(store.pool().clone())
        .industries_as_of(as_of)
        .await?;
    out.report.industries.load = imported.load.clone();
    drop(stage);
    // Bars after `as_of` count too: a damaged series is left out whole.
    let keep = match tail {
        // a stock's last bar says whether it traded by then
        Some(bars) => Keep::Tail {
            as_of,
            bars: bars.max(1),
            // the series the loop below keeps (besides having no corrupt bar)
            admit: |key| StockCode::parse(key).is_ok(),
        },
        None => Keep::UpTo(None),
    };
    // The market is read in parts on separate connections at once (the fetch is the
    // slower side), each page decoded on every core while the next one is read.
    let stage = tracing::info_span!(target: "wyckoff::stage", "bars");
    let cuts = store.series_cut_keys(BarTable::Stocks, READERS).await?;
    let starts = std::iter::once(String::new()).chain(cuts.iter().cloned());
    let ends = cuts.iter().cloned().map(Some).chain(std::iter::once(None));
    let parts = futures::future::try_join_all(
        starts
            .zip(ends)
            .map(|(after, through)| read_pages(store, after, through, keep)),
    )
    .await?;
    drop(stage);
    let _assemble = tracing::info_span!(target: "wyckoff::stage", "assemble");
    // the pages bring the dates of the series kept below: every bar of theirs, not just the tail
    let mut dates = DateSet::default();
    for page in parts.into_iter().flatten() {
        dates = dates.union(page.dates);
        for (key, loaded) in page.rows {
            let Ok(code) = StockCode::parse(&key) else {
                out.report.skipped.push(SkippedStock {
                    code: key,
                    reason: SkipReason::InvalidCode,
                });
                continue;
            };
            let digits = code.digits().to_string();
            let info = listed.get(&digits);
            if info.is_some() {
                seen_listed += 1;
            }
            let reason = match loaded.corrupt.first() {
                Some(c) if c.date == 0 => Some(SkipReason::DamagedSeries {
                    detail: c.reason.clone(),
                }),
                Some(_) => Some(SkipReason::CorruptBars {
                    rows: loaded.corrupt.clone(),
                }),
                None => None,
            };
            if let Some(reason) = reason {
                out.report.skipped.push(SkippedStock {
                    code: digits,
                    reason,
                });
                continue;
            }
            let mut bars = loaded.bars;
            if let Some(a) = as_of {
                bars.truncate(bars.partition_point(|b| b.date <= a));
            }
            let Some(last) = bars.last().map(|b| b.date) else {
                out.report.skipped.push(SkippedStock {
                    code: digits,
                    reason: SkipReason::NoBarsAsOf,
                });
                continue;
            };
            out.report.last_date = out.report.last_date.max(Some(last));
            out.report.bars += loaded.earlier + bars.len();
            if info.is_none() {
                out.report.not_in_stock_list.push(digits.clone());
            }
            let name_history = history.names.remove(&digits).unwrap_or_default();
            let cap_history = caps.remove(&digits).unwrap_or_default();
            let listing = history.listings.get(&digits);
            let delist_date = listing
                .filter(|l| l.status == ListStatus::Delisted)
                .and_then(|l| l.delist_date);
            if name_history.is_empty() {
                out.report.without_name_history += 1;
            }
            if let Some(a) = as_of
                && name_history.first().is_none_or(|first| first.from > a)
            {
                *out.report.names_unknown_as_of.get_or_insert(0) += 1;
            }
            if delist_date.is_some() {
                out.report.delisted += 1;
            }
            // a delisted stock has left the current list: its last recorded name stands in
            let name = match info {
                Some(i) => i.name.clone(),
                None => listing
                    .map(|l| l.name.clone())
                    .filter(|n| !n.is_empty())
                    .or_else(|| name_history.last().map(|s| s.name.clone()))
                    .unwrap_or_default(),
            };
            let industry = match imported.industry.get(&digits) {
                Some(ind) => {
                    out.report.industries.from_later_load +=
                        usize::from(imported.later_for(&digits));
                    Some(ind.clone())
                }
                None => {
                    let listed = info.and_then(|i| i.industry.clone());
                    out.report.industries.from_stock_list += usize::from(listed.is_some());
                    listed
                }
            };
            out.report.industries.stocks_with_industry += usize::from(industry.is_some());
            out.universe.stocks.push(StockSeries {
                name,
                board: info.map_or(code.board(), |i| i.board),
                industry,
                // the list stores CNY; the funnel thinks in 亿元
                market_cap_yi: info.and_then(|i| i.market_cap).map(|c| c / 1e8),
                list_date: info
                    .and_then(|i| i.list_date)
                    .or_else(|| listing.and_then(|l| l.list_date)),
                code: digits,
                bars,
                name_history,
                delist_date,
                cap_history,
            });
        }
    }
    if tail.is_some() {
        out.universe.trading_days = Some(dates.into_sorted());
    }
    out.report.stocks = out.universe.stocks.len();
    out.report.listed_without_bars = listed.len().saturating_sub(seen_listed);
    if !out.report.skipped.is_empty() {
        tracing::warn!(
            skipped = out.report.skipped.len(),
            "stocks left out of the universe for damaged data"
        );
    }
    let mut benchmark = Vec::with_capacity(3);
    for alias in ["sse", "csi300", "chinext"] {
        match load_benchmark(store, alias, as_of).await? {
            Ok(bars) => benchmark.push(Some(bars)),
            Err(missing) => {
                out.report.missing_benchmarks.push(missing);
                benchmark.push(None);
            }
        }
    }
    let mut benchmark = benchmark.into_iter();
    let benchmarks = Benchmarks {
        sse: benchmark.next().flatten(),
        csi300: benchmark.next().flatten(),
        chinext: benchmark.next().flatten(),
    };
    out.universe.benchmarks = benchmarks;
    Ok(out)
}

/// The decoded pages of the stored stock series after `after` (through `through`), in key
/// order. A few pages wait for decoding at once: enough to keep every core busy without
/// reading far ahead of it.
async fn read_pages(
    store: &CacheStore,
    mut after: String,
    through: Option<String>,
    keep: Keep,
) -> Result<Vec<DecodedPage>, CacheError> {
    let mut decoding = VecDeque::new();
    let mut pages = Vec::new();
    loop {
        let page = store
            .series_page(BarTable::Stocks, &after, through.as_deref(), PAGE)
            .await?;
        let Some((last_key, _)) = page.last() else {
            break;
        };
        after = last_key.clone();
        decoding.push_back(decode_in_background(page, keep));
        if decoding.len() > PAGES_IN_FLIGHT
            && let Some(decoded) = decoding.pop_front()
        {
            pages.push(decoded.await.map_err(|_| CacheError::Interrupted)?);
        }
    }
    for decoded in decoding {
        pages.push(decoded.await.map_err(|_| CacheError::Interrupted)?);
    }
    Ok(pages)
}

async fn load_benchmark(
    store: &CacheStore,
    alias: &str,
    as_of: Option<u32>,
) -> Result<Result<Vec<Bar>, MissingBenchmark>, CacheError> {
    let idx = match IndexCode::parse(alias) {
        Ok(i) => i,
        Err(e) => {
            return Ok(Err(MissingBenchmark {
                code: alias.to_string(),
                name: "",
                reason: e.to_string(),
            }));
        }
    };
    let key = idx.symbol().key();
    let loaded = store.load_bars(BarTable::Indices, &key, as_of).await?;
    let reason = if let Some(c) = loaded.corrupt.first() {
        format!(
            "{} corrupt cached row(s), first: {} (date {})",
            loaded.corrupt.len(),
            c.reason,
            c.date
        )
    } else if loaded.bars.is_empty() {
        format!(
            "no cached bars (the bundled offline data has none); run `wyckoff data sync --index {alias}` when online"
        )
    } else {
        return Ok(Ok(loaded.bars));
    };
    Ok(Err(MissingBenchmark {
        code: key,
        name: idx.name(),
        reason,
    }))
}
