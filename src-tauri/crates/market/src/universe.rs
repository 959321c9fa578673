//! Loads the whole cached market into the engine's [`Universe`]: every stock's bars (one
//! stored series per stock, paged by code), its facts from the stock list, its recorded
//! name history and delisting day (see [`crate::history`]), and the three benchmark
//! indices. Stocks whose data is damaged are skipped and listed, never patched. A delisted
//! stock with cached bars is loaded like any other: the engine stops at its delisting day.

use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;

use serde::Serialize;
use wyckoff_engine::{Bar, Benchmarks, StockSeries, Universe};

use crate::cache::{
    BarTable, CacheError, CacheStore, CorruptRow, DecodedPage, Keep, LoadedBars,
    decode_in_background,
};
use crate::code::{IndexCode, StockCode};
use crate::date::DateSet;
use crate::history::ListStatus;
use crate::industries::{IndustryCoverage, IndustryStore};
use crate::search::StockDirectory;
use crate::tail_cache::{self, Miss, Stamp, TailRows};

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
    load_universe_with(store, listed, as_of, tail, None).await
}

/// Where the screen's tail cache ([`crate::tail_cache`]) lives and the database's write
/// generation, read before anything else, that it must have been built at.
#[derive(Debug, Clone)]
pub struct TailCacheAt {
    pub path: PathBuf,
    pub generation: i64,
}

/// [`load_universe_listed`] that takes a tail read (`tail` given) from the tail cache at
/// `cache` when that stands for the database now, and otherwise reads the database and
/// builds the cache anew from what it read (when the read was of the latest bars; a file
/// that cannot be written only costs the next read the same trip). The universe is the same
/// either way.
pub async fn load_universe_with(
    store: &CacheStore,
    listed: &StockDirectory,
    as_of: Option<u32>,
    tail: Option<usize>,
    cache: Option<&TailCacheAt>,
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
    // the bar read, whatever it reads: nested in it, `tail cache` (the file's read),
    // `stored series` (the database's) and `tail cache write` (the file built anew)
    let stage = tracing::info_span!(target: "wyckoff::stage", "bars");
    let read = match (tail, cache) {
        (Some(bars), Some(at)) => read_tail_cached(store, at, as_of, bars.max(1), keep).await?,
        _ => read_stock_series(store, keep).await?,
    };
    drop(stage);
    let _assemble = tracing::info_span!(target: "wyckoff::stage", "assemble");
    // the read brings the dates of the series kept below: every bar of theirs, not just the tail
    for (key, loaded) in read.rows {
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
                out.report.industries.from_later_load += usize::from(imported.later_for(&digits));
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
    if tail.is_some() {
        out.universe.trading_days = Some(read.dates);
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

/// Every stored stock series, read in parts on separate connections at once (the fetch is
/// the slower side), each page decoded on every core while the next one is read; with
/// the dates of the admitted series gathered (a tail read), sorted.
async fn read_stock_series(store: &CacheStore, keep: Keep) -> Result<TailRows, CacheError> {
    let _stage = tracing::info_span!(target: "wyckoff::stage", "stored series");
    let cuts = store.series_cut_keys(BarTable::Stocks, READERS).await?;
    let starts = std::iter::once(String::new()).chain(cuts.iter().cloned());
    let ends = cuts.iter().cloned().map(Some).chain(std::iter::once(None));
    let parts = futures::future::try_join_all(
        starts
            .zip(ends)
            .map(|(after, through)| read_pages(store, after, through, keep)),
    )
    .await?;
    let mut dates = DateSet::default();
    let mut rows = Vec::new();
    for page in parts.into_iter().flatten() {
        dates = dates.union(page.dates);
        rows.extend(page.rows);
    }
    Ok(TailRows {
        rows,
        dates: dates.into_sorted(),
    })
}

/// The key in `market_meta` of the database's identity (migration 3600).
const IDENTITY: &str = "identity";

/// The tail read from the cache file when it stands for the database now; otherwise from
/// the database, and the file built anew from it when it is the latest tail.
async fn read_tail_cached(
    store: &CacheStore,
    at: &TailCacheAt,
    as_of: Option<u32>,
    bars: usize,
    keep: Keep,
) -> Result<TailRows, CacheError> {
    let Some(identity) = store.meta(IDENTITY).await? else {
        return read_stock_series(store, keep).await;
    };
    let expect = Stamp {
        identity,
        generation: at.generation,
        tail: 0,
        last_date: 0,
    };
    let stage = tracing::info_span!(target: "wyckoff::stage", "tail cache");
    let path = at.path.clone();
    let wanted = expect.clone();
    let got = tokio::task::spawn_blocking(move || tail_cache::read(&path, &wanted, bars, as_of))
        .await
        .unwrap_or_else(|e| Err(Miss::Unreadable(e.to_string())));
    let miss = match got {
        Ok(read) => {
            tracing::debug!(target: "wyckoff::tail_cache", used = true, stocks = read.rows.len(), "tail read from the cache file");
            return Ok(read);
        }
        Err(miss) => miss,
    };
    drop(stage);
    tracing::debug!(target: "wyckoff::tail_cache", used = false, reason = %miss, "tail read from the database");
    let read = read_stock_series(store, keep).await?;
    if !miss.calls_for_rebuild() {
        return Ok(read);
    }
    let last_date = last_stock_date(store).await?;
    if as_of.is_some_and(|a| a < last_date) {
        // an as-of read of an earlier day holds other tails than the latest
        return Ok(read);
    }
    let stamp = Stamp {
        tail: u32::try_from(bars).unwrap_or(u32::MAX),
        last_date,
        ..expect
    };
    match write_cache(at.path.clone(), stamp, read).await {
        Some(read) => Ok(read),
        // the writing thread failed holding the read: read again rather than lose it
        None => read_stock_series(store, keep).await,
    }
}

/// Each of `keys`' (stock series keys) last `bars` usable bars, as
/// [`CacheStore::load_many_tails`] reads them: from the tail cache at `cache` when it stands
/// for the database now and holds as many bars a stock (only those stocks decoded), else
/// from the database. A miss leaves the file to the next screen to build: a few stocks'
/// read is no reason to read the whole market.
pub async fn load_tails(
    store: &CacheStore,
    keys: &[String],
    bars: usize,
    cache: Option<&TailCacheAt>,
) -> Result<Vec<(String, LoadedBars)>, CacheError> {
    let identity = match cache {
        Some(_) => store.meta(IDENTITY).await?,
        None => None,
    };
    if let (Some(at), Some(identity)) = (cache, identity) {
        let _stage = tracing::info_span!(target: "wyckoff::stage", "tail cache");
        let expect = Stamp {
            identity,
            generation: at.generation,
            tail: 0,
            last_date: 0,
        };
        let path = at.path.clone();
        let wanted: HashSet<String> = keys.iter().cloned().collect();
        let got = tokio::task::spawn_blocking(move || {
            tail_cache::read_some(&path, &expect, bars, &wanted)
        })
        .await
        .unwrap_or_else(|e| Err(Miss::Unreadable(e.to_string())));
        match got {
            Ok(rows) => {
                tracing::debug!(target: "wyckoff::tail_cache", used = true, stocks = rows.len(), "tails read from the cache file");
                return Ok(rows);
            }
            Err(miss) => {
                tracing::debug!(target: "wyckoff::tail_cache", used = false, reason = %miss, "tails read from the database");
            }
        }
    }
    store.load_many_tails(BarTable::Stocks, keys, bars).await
}

/// The newest bar date stored for any stock (0 for none).
async fn last_stock_date(store: &CacheStore) -> Result<u32, CacheError> {
    let last: Option<i64> =
        sqlx::query_scalar("SELECT max(last_date) FROM market_series WHERE kind = 'stock'")
            .fetch_one(store.pool())
            .await?;
    Ok(last.and_then(|d| u32::try_from(d).ok()).unwrap_or(0))
}

/// Writes `read` as the tail cache, off the async runtime, and hands it back; a failure to
/// write is logged, never passed on (the database has the bars).
async fn write_cache(path: PathBuf, stamp: Stamp, read: TailRows) -> Option<TailRows> {
    let _stage = tracing::info_span!(target: "wyckoff::stage", "tail cache write");
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job = tokio::task::spawn_blocking(move || {
        if let Err(e) = tail_cache::write(&path, &stamp, &read) {
            tracing::warn!(target: "wyckoff::tail_cache", error = %e, "tail cache not written");
        }
        let _ = tx.send(read);
    });
    let _ = job.await;
    rx.await.ok()
}

/// Builds the tail cache at `at` from the database (each stock's last `bars` bars), unless
/// the file there already stands for the database at `at.generation`. Returns whether it
/// wrote one.
pub async fn refresh_tail_cache(
    store: &CacheStore,
    at: &TailCacheAt,
    bars: usize,
) -> Result<bool, CacheError> {
    let Some(identity) = store.meta(IDENTITY).await? else {
        return Ok(false);
    };
    let held = {
        let path = at.path.clone();
        tokio::task::spawn_blocking(move || tail_cache::peek(&path))
            .await
            .unwrap_or_else(|e| Err(Miss::Unreadable(e.to_string())))
    };
    if held
        .as_ref()
        .is_ok_and(|h| h.identity == identity && h.generation == at.generation)
    {
        return Ok(false);
    }
    let bars = held.map_or(bars, |h| h.tail as usize).max(1);
    let keep = Keep::Tail {
        as_of: None,
        bars,
        admit: |key| StockCode::parse(key).is_ok(),
    };
    let read = read_stock_series(store, keep).await?;
    let stamp = Stamp {
        identity,
        generation: at.generation,
        tail: u32::try_from(bars).unwrap_or(u32::MAX),
        last_date: last_stock_date(store).await?,
    };
    let path = at.path.clone();
    let written = tokio::task::spawn_blocking(move || tail_cache::write(&path, &stamp, &read))
        .await
        .map_err(|_| CacheError::Interrupted)?;
    match written {
        Ok(()) => Ok(true),
        Err(e) => {
            tracing::warn!(target: "wyckoff::tail_cache", error = %e, "tail cache not written");
            Ok(false)
        }
    }
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
