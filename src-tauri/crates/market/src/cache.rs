//! The local store in `wyckoff.db`: bars by (symbol, date), the stock list, sync metadata.
//! Rows that fail decoding or sanity checks are returned as `CorruptRow`s, never used.

use std::cell::RefCell;
use std::path::Path;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use rayon::prelude::*;
// table names in formatted SQL come only from the closed `BarTable` enum
use sqlx::{AssertSqlSafe, QueryBuilder, Row, Sqlite, SqliteConnection, SqlitePool};
use wyckoff_engine::Bar;

use crate::code::{Board, StockCode};
use crate::date::DateSet;
use crate::meta::StockInfo;
use crate::series::{Decoded, Series, SeriesError};

#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error(transparent)]
    Series(#[from] SeriesError),
    #[error("reading the cached series stopped before it was done")]
    Interrupted,
    #[error("the cached stock list does not read back: {0}")]
    StockList(String),
}

/// Opens (creating if needed) the SQLite file with WAL and a busy timeout, and runs this
/// crate's migrations. Other crates' migrations in the same file are left alone.
pub async fn open_db(path: &Path) -> Result<SqlitePool, CacheError> {
    let pool = connect_db(path).await?;
    migrate(&pool).await?;
    Ok(pool)
}

/// `open_db` without the migrations, for callers that run them next themselves.
pub async fn connect_db(path: &Path) -> Result<SqlitePool, CacheError> {
    Ok(wyckoff_db::open(path).await?)
}

pub async fn migrate(pool: &SqlitePool) -> Result<(), CacheError> {
    let mut migrator = sqlx::migrate!("./migrations");
    // versions applied by other crates are unknown to this migrator; that is expected
    migrator.set_ignore_missing(true);
    migrator.run(pool).await?;
    move_legacy_rows(pool).await?;
    compact_series(pool).await?;
    Ok(())
}

/// Marker left by migration 2400 until every stored series is in the compact layout.
const SERIES_V2_PENDING: &str = "series_v2_pending";

/// Re-encodes version-1 series blobs as version 2, once (migration 2400 leaves a marker).
/// The bars are decoded and encoded again, bit for bit; a blob that no longer decodes is
/// left as it is, so the reader still reports it as damaged.
async fn compact_series(pool: &SqlitePool) -> Result<(), CacheError> {
    let pending: Option<String> = sqlx::query_scalar("SELECT value FROM market_meta WHERE key = ?")
        .bind(SERIES_V2_PENDING)
        .fetch_optional(pool)
        .await?;
    if pending.is_none() {
        return Ok(());
    }
    let mut tx = wyckoff_db::begin_write(pool).await?;
    let rows: Vec<(i64, Vec<u8>)> =
        sqlx::query_as("SELECT rowid, data FROM market_series WHERE substr(data, 1, 1) = x'01'")
            .fetch_all(&mut *tx)
            .await?;
    let mut converted = 0usize;
    for (rowid, blob) in &rows {
        match Series::decode(blob) {
            Ok(series) => {
                sqlx::query("UPDATE market_series SET data = ? WHERE rowid = ?")
                    .bind(series.encode())
                    .bind(rowid)
                    .execute(&mut *tx)
                    .await?;
                converted += 1;
            }
            Err(e) => tracing::warn!(rowid, error = %e, "damaged series left as stored"),
        }
    }
    sqlx::query("DELETE FROM market_meta WHERE key = ?")
        .bind(SERIES_V2_PENDING)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    if converted > 0 {
        tracing::info!(converted, "series blobs moved to the compact layout");
    }
    Ok(())
}

/// Moves bars stored one row per bar (migration 2000) into per-symbol series, once: the
/// old tables are empty afterwards. Rows that no longer decode cannot be carried over;
/// they are logged and dropped (a sync of that code refetches them).
async fn move_legacy_rows(pool: &SqlitePool) -> Result<(), CacheError> {
    for table in [BarTable::Stocks, BarTable::Indices] {
        let legacy = table.legacy_name();
        let any: Option<i64> =
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT 1 FROM {legacy} LIMIT 1")))
                .fetch_optional(pool)
                .await?;
        if any.is_none() {
            continue;
        }
        let mut tx = wyckoff_db::begin_write(pool).await?;
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT code, date, open, high, low, close, volume, amount, turnover, source
             FROM {legacy} ORDER BY code, date"
        )))
        .fetch_all(&mut *tx)
        .await?;
        let mut groups: Vec<(String, Series)> = Vec::new();
        let mut dropped = 0usize;
        for row in &rows {
            let code: String = row.try_get("code")?;
            if groups.last().is_none_or(|(c, _)| *c != code) {
                groups.push((code.clone(), Series::default()));
            }
            let Some((_, series)) = groups.last_mut() else {
                continue;
            };
            match decode_bar(row) {
                Ok((bar, amount_known, source)) => {
                    if let Err(e) = series.merge(&[bar], &source, amount_known) {
                        tracing::warn!(code, error = %e, "legacy bar not carried over");
                        dropped += 1;
                    }
                }
                Err(reason) => {
                    tracing::warn!(code, reason, "undecodable legacy bar row dropped");
                    dropped += 1;
                }
            }
        }
        for (code, series) in groups {
            let exists: Option<i64> =
                sqlx::query_scalar("SELECT 1 FROM market_series WHERE kind = ? AND code = ?")
                    .bind(table.kind())
                    .bind(&code)
                    .fetch_optional(&mut *tx)
                    .await?;
            // a series written in the new format is newer than any legacy row
            if exists.is_none() {
                write_series(&mut tx, table, &code, &series).await?;
            }
        }
        sqlx::query(AssertSqlSafe(format!("DELETE FROM {legacy}")))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        tracing::info!(
            table = legacy,
            rows = rows.len(),
            dropped,
            "bar rows moved to per-symbol series"
        );
    }
    Ok(())
}

/// Reads the stored series (a damaged one is replaced: its bars cannot be trusted), merges
/// `bars` in by date and writes it back. Sync and import both write through here.
async fn merge_series(
    conn: &mut SqliteConnection,
    table: BarTable,
    key: &str,
    bars: &[Bar],
    source: &str,
    has_amount: bool,
) -> Result<(), CacheError> {
    let write = BarsWrite {
        bars,
        raw: &[],
        source,
        has_amount,
        replace: false,
    };
    write_bars_in(conn, table, key, &write).await
}

/// Bars to store for one series, with the unadjusted closes that came with them.
#[derive(Debug, Clone, Copy)]
pub struct BarsWrite<'a> {
    pub bars: &'a [Bar],
    /// (date, unadjusted close), any order: set on the stored bar of that date, whether it
    /// is one of `bars` or an older one (a raw close never changes, so a later fetch of it
    /// can fill in an older bar).
    pub raw: &'a [(u32, f64)],
    pub source: &'a str,
    /// False: the bars' traded amounts are unknown.
    pub has_amount: bool,
    /// True: `bars` replace the stored series as a whole (forward adjustment was re-based
    /// upstream, or stored bars were damaged); the raw closes of their dates are kept.
    pub replace: bool,
}

async fn write_bars_in(
    conn: &mut SqliteConnection,
    table: BarTable,
    key: &str,
    write: &BarsWrite<'_>,
) -> Result<(), CacheError> {
    let blob: Option<Vec<u8>> =
        sqlx::query_scalar("SELECT data FROM market_series WHERE kind = ? AND code = ?")
            .bind(table.kind())
            .bind(key)
            .fetch_optional(&mut *conn)
            .await?;
    let stored = match blob.map(|b| Series::decode(&b)) {
        Some(Ok(s)) => s,
        Some(Err(e)) => {
            tracing::warn!(code = key, error = %e, "damaged stored series replaced by new bars");
            Series::default()
        }
        None => Series::default(),
    };
    let mut series = if write.replace {
        stored.replaced_by(write.bars, write.raw, write.source, write.has_amount)?
    } else {
        let mut s = stored;
        s.merge_with_raw(write.bars, write.raw, write.source, write.has_amount)?;
        s
    };
    series.attach_raw(write.raw);
    if write.replace && series.bars.is_empty() {
        sqlx::query("DELETE FROM market_series WHERE kind = ? AND code = ?")
            .bind(table.kind())
            .bind(key)
            .execute(&mut *conn)
            .await?;
        return Ok(());
    }
    write_series(conn, table, key, &series).await
}

async fn write_series(
    conn: &mut SqliteConnection,
    table: BarTable,
    key: &str,
    series: &Series,
) -> Result<(), CacheError> {
    let (Some(first), Some(last)) = (series.bars.first(), series.bars.last()) else {
        return Ok(());
    };
    sqlx::query(
        "INSERT INTO market_series (kind, code, first_date, last_date, bars, data)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT(kind, code) DO UPDATE SET first_date = excluded.first_date,
           last_date = excluded.last_date, bars = excluded.bars, data = excluded.data",
    )
    .bind(table.kind())
    .bind(key)
    .bind(i64::from(first.date))
    .bind(i64::from(last.date))
    .bind(series.bars.len() as i64)
    .bind(series.encode())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

async fn record_sync_in(
    conn: &mut SqliteConnection,
    key: &str,
    source: &str,
    first: Option<u32>,
    last: Option<u32>,
    at: DateTime<Utc>,
) -> Result<(), CacheError> {
    sqlx::query(
        "INSERT INTO market_sync (code, source, first_date, last_date, synced_at)
         VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(code, source) DO UPDATE SET
           first_date = COALESCE(MIN(market_sync.first_date, excluded.first_date), excluded.first_date),
           last_date = COALESCE(MAX(market_sync.last_date, excluded.last_date), excluded.last_date),
           synced_at = excluded.synced_at",
    )
    .bind(key)
    .bind(source)
    .bind(first.map(i64::from))
    .bind(last.map(i64::from))
    .bind(at.to_rfc3339())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Splits a decoded series into usable bars and corrupt ones (listed, never handed
/// out), up to `end`. A series sealed as sound (the `bool`) is not checked again.
pub(crate) fn loaded_from(
    key: &str,
    decoded: Result<(Series, bool), SeriesError>,
    end: Option<u32>,
) -> LoadedBars {
    let (mut series, sound) = match decoded {
        Ok(s) => s,
        Err(e) => return damaged(key, e),
    };
    if let Some(end) = end {
        series.truncate_after(end);
    }
    let mut out = checked(key, &series, 0..series.bars.len(), !sound);
    // The bars are handed over, not copied (the whole market is millions of them); the
    // rare bad ones are dropped in place.
    out.bars = series.bars;
    if !out.corrupt.is_empty() {
        out.bars.retain(|b| crate::sanity::check_bar(b).is_none());
    }
    out
}

/// [`loaded_from`] that hands out only the last `keep` usable bars dated on or before
/// `as_of` (copied out of a scratch series), and how many usable ones came before them.
/// Every bar is checked unless the stored series was sealed as sound; the bars of which
/// only the dates were decoded are not looked at (only a sound series has such bars).
fn loaded_tail_from(
    key: &str,
    decoded: Result<(&Series, Decoded), SeriesError>,
    as_of: Option<u32>,
    keep: usize,
) -> LoadedBars {
    let (series, decoded) = match decoded {
        Ok(s) => s,
        Err(e) => return damaged(key, e),
    };
    let len = series.bars.len();
    let mut out = checked(key, series, decoded.dates_only..len, !decoded.sound);
    let filtered: Vec<Bar>;
    let mut usable = series.bars.as_slice();
    if !out.corrupt.is_empty() {
        // not sealed sound: every bar was decoded
        filtered = usable
            .iter()
            .filter(|b| crate::sanity::check_bar(b).is_none())
            .copied()
            .collect();
        usable = &filtered;
    }
    if let Some(as_of) = as_of {
        usable = &usable[..usable.partition_point(|b| b.date <= as_of)];
    }
    let (earlier, tail) = usable.split_at(usable.len().saturating_sub(keep));
    out.earlier = earlier.len();
    out.bars = tail.to_vec();
    out
}

fn damaged(key: &str, e: SeriesError) -> LoadedBars {
    LoadedBars {
        corrupt: vec![CorruptRow {
            code: key.to_string(),
            date: 0,
            reason: e.to_string(),
        }],
        ..LoadedBars::default()
    }
}

/// The corrupt bars among `range` of `series`' bars (none looked for unless `check`), and
/// the missing amounts and the sources of the usable ones there; the bars themselves are
/// left to the caller.
fn checked(key: &str, series: &Series, range: std::ops::Range<usize>, check: bool) -> LoadedBars {
    let mut out = LoadedBars::default();
    let mut seen = vec![false; series.sources.len()];
    for i in range {
        let bar = &series.bars[i];
        if let Some(why) = check.then(|| crate::sanity::check_bar(bar)).flatten() {
            out.corrupt.push(CorruptRow {
                code: key.to_string(),
                date: i64::from(bar.date),
                reason: why.to_string(),
            });
            continue;
        }
        if !series.amount_known[i] {
            out.amount_missing += 1;
        }
        let src = usize::from(series.source_of[i]);
        if !seen[src] {
            seen[src] = true;
            out.sources.push(series.sources[src].clone());
        }
    }
    // the freshest bar's source is the one worth reporting first
    out.sources.reverse();
    out
}

/// Decoded stored series, as `load_bars` hands out each, in the order they were read.
#[derive(Default)]
pub(crate) struct DecodedPage {
    pub rows: Vec<(String, LoadedBars)>,
    /// For a tail read ([`Keep::Tail`]): every usable date of the admitted series, the
    /// bars before their tails included (empty otherwise).
    pub dates: DateSet,
}

thread_local! {
    /// Each decoding thread's series buffers, for reads that keep only a tail: the bars
    /// they drop are never allocated.
    static SCRATCH: RefCell<Series> = RefCell::default();
}

/// What a decode hands out of each series.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Keep {
    /// The usable bars dated on or before the date (all when `None`); later bars are not
    /// checked.
    UpTo(Option<u32>),
    /// The bars are checked as [`loaded_tail_from`] says; the last `bars` usable ones
    /// dated on or before `as_of` are handed out (see [`LoadedBars::earlier`]). The dates
    /// of every series that has no corrupt bar and whose key `admit`s go into
    /// [`DecodedPage::dates`], gathered while the series is at hand.
    Tail {
        as_of: Option<u32>,
        bars: usize,
        admit: fn(&str) -> bool,
    },
}

/// Decodes `rows` (key, stored series) on every core, off the async runtime, so the caller
/// can read the next rows meanwhile. A dropped receiver (a cancelled read) skips the work
/// if it has not started.
pub(crate) fn decode_in_background(
    rows: Vec<(String, Vec<u8>)>,
    keep: Keep,
) -> tokio::sync::oneshot::Receiver<DecodedPage> {
    let (done, decoded) = tokio::sync::oneshot::channel();
    rayon::spawn(move || {
        if done.is_closed() {
            return;
        }
        // folded in pieces and joined in order: the rows keep the order they were read in
        let page = rows
            .into_par_iter()
            .fold(DecodedPage::default, |mut page, (key, blob)| {
                let loaded = match keep {
                    Keep::UpTo(end) => loaded_from(&key, Series::decode_sealed(&blob), end),
                    Keep::Tail { as_of, bars, admit } => SCRATCH.with_borrow_mut(|scratch| {
                        let decoded = scratch.decode_tail_into(&blob, as_of, bars);
                        let loaded =
                            loaded_tail_from(&key, decoded.map(|d| (&*scratch, d)), as_of, bars);
                        if loaded.corrupt.is_empty() && admit(&key) {
                            // no bar was dropped: the usable ones lead the series
                            let usable = &scratch.bars[..loaded.earlier + loaded.bars.len()];
                            page.dates.extend(usable.iter().map(|b| b.date));
                        }
                        loaded
                    }),
                };
                page.rows.push((key, loaded));
                page
            })
            .reduce(DecodedPage::default, |mut left, right| {
                left.rows.extend(right.rows);
                left.dates = left.dates.union(right.dates);
                left
            });
        let _ = done.send(page);
    });
    decoded
}

fn coverage_row(code: String, first: i64, last: i64, bars: i64) -> Coverage {
    Coverage {
        code,
        first_date: u32::try_from(first).unwrap_or(0),
        last_date: u32::try_from(last).unwrap_or(0),
        bars: u32::try_from(bars).unwrap_or(0),
    }
}

/// Keys bound per `load_many` query: one round trip for many series, far below SQLite's
/// limit on bound parameters.
const KEYS_PER_QUERY: usize = 500;

/// A stock-list row as `load_stocks` reads it: (code, name, board, list_date, industry,
/// market_cap as text).
type StockJsonRow = (
    String,
    String,
    String,
    Option<i64>,
    Option<String>,
    Option<String>,
);
/// (code, source, first_date, last_date, synced_at)
type SyncRow = (String, String, Option<i64>, Option<i64>, String);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarTable {
    Stocks,
    Indices,
}

impl BarTable {
    /// The `kind` column of `market_series`.
    fn kind(self) -> &'static str {
        match self {
            BarTable::Stocks => "stock",
            BarTable::Indices => "index",
        }
    }

    /// The one-row-per-bar table of migration 2000, emptied on open.
    fn legacy_name(self) -> &'static str {
        match self {
            BarTable::Stocks => "market_bars",
            BarTable::Indices => "market_index_bars",
        }
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CorruptRow {
    pub code: String,
    pub date: i64,
    pub reason: String,
}

#[derive(Debug, Clone, Default)]
pub struct LoadedBars {
    pub bars: Vec<Bar>,
    pub corrupt: Vec<CorruptRow>,
    /// Bars whose source gave no traded amount (stored NULL, handed out as 0.0).
    pub amount_missing: usize,
    /// Distinct sources of the usable bars, most recent bar's source first.
    pub sources: Vec<String>,
    /// When only a tail was asked for: how many usable bars came before `bars` (otherwise
    /// 0). Then `amount_missing` and `sources` of a series sealed as sound cover only the
    /// bars from the tail on: the ones before it are not decoded.
    pub earlier: usize,
}

/// The days of a series without a raw close: the first, the last and how many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawMissing {
    pub first: u32,
    pub last: u32,
    pub count: u32,
}

impl RawMissing {
    /// The bars of `series` dated in `dates` that have no raw close; `None` when every one
    /// has.
    pub fn of(series: &Series, dates: std::ops::RangeInclusive<u32>) -> Option<RawMissing> {
        let mut out: Option<RawMissing> = None;
        for (i, b) in series.bars.iter().enumerate() {
            if !dates.contains(&b.date) || series.raw_close.get(i).copied().flatten().is_some() {
                continue;
            }
            match &mut out {
                Some(m) => {
                    m.last = b.date;
                    m.count += 1;
                }
                None => {
                    out = Some(RawMissing {
                        first: b.date,
                        last: b.date,
                        count: 1,
                    })
                }
            }
        }
        out
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Coverage {
    pub code: String,
    pub first_date: u32,
    pub last_date: u32,
    pub bars: u32,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SyncEntry {
    pub code: String,
    pub source: String,
    pub first_date: Option<u32>,
    pub last_date: Option<u32>,
    pub synced_at: String,
}

/// Thin typed access to the market tables.
#[derive(Debug, Clone)]
pub struct CacheStore {
    pool: SqlitePool,
}

impl CacheStore {
    pub fn new(pool: SqlitePool) -> Self {
        Self { pool }
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// A transaction that takes the write lock up front: a merge reads the stored series
    /// and writes it back, and a lock upgraded mid-way fails at once when another process
    /// (the app and the CLI share the file) wrote in between; waiting is what we want.
    async fn write_tx(&self) -> Result<sqlx::Transaction<'static, Sqlite>, CacheError> {
        Ok(wyckoff_db::begin_write(&self.pool).await?)
    }

    /// Inserts or replaces bars (merged into the stored series by date);
    /// `has_amount == false` marks their amount as unknown.
    pub async fn upsert_bars(
        &self,
        table: BarTable,
        key: &str,
        bars: &[Bar],
        source: &str,
        has_amount: bool,
    ) -> Result<usize, CacheError> {
        let mut tx = self.write_tx().await?;
        merge_series(&mut tx, table, key, bars, source, has_amount).await?;
        tx.commit().await?;
        Ok(bars.len())
    }

    /// Many series in one transaction, each through the same merge as `upsert_bars`, and
    /// their sync metadata; used by CSV import, where one commit per stock would dominate.
    pub async fn upsert_many(
        &self,
        table: BarTable,
        batch: &[(String, Vec<Bar>)],
        source: &str,
        has_amount: bool,
        at: DateTime<Utc>,
    ) -> Result<usize, CacheError> {
        let mut tx = self.write_tx().await?;
        let mut n = 0;
        for (key, bars) in batch {
            merge_series(&mut tx, table, key, bars, source, has_amount).await?;
            record_sync_in(
                &mut tx,
                key,
                source,
                bars.iter().map(|b| b.date).min(),
                bars.iter().map(|b| b.date).max(),
                at,
            )
            .await?;
            n += bars.len();
        }
        tx.commit().await?;
        Ok(n)
    }

    /// Reads the stored series of each of `keys` and hands it to `update` (with the key's
    /// index; `None` when nothing or only a damaged series is stored); what `update` returns
    /// replaces the stored series and is recorded as fetched from `source` over its dates
    /// (first, last). All in one transaction: a caller that rewrites thousands of series in
    /// one go (an import) pays for one commit. Returns how many series were written.
    pub async fn rewrite_many(
        &self,
        table: BarTable,
        keys: &[String],
        source: &str,
        at: DateTime<Utc>,
        update: &mut (dyn FnMut(usize, Option<Series>) -> Option<(Series, u32, u32)> + Send),
    ) -> Result<usize, CacheError> {
        let mut tx = self.write_tx().await?;
        let mut written = 0;
        for (i, key) in keys.iter().enumerate() {
            let blob: Option<Vec<u8>> =
                sqlx::query_scalar("SELECT data FROM market_series WHERE kind = ? AND code = ?")
                    .bind(table.kind())
                    .bind(key)
                    .fetch_optional(&mut *tx)
                    .await?;
            let stored = match blob.map(|b| Series::decode(&b)) {
                Some(Ok(s)) => Some(s),
                Some(Err(e)) => {
                    tracing::warn!(code = %key, error = %e, "damaged stored series replaced by new bars");
                    None
                }
                None => None,
            };
            if let Some((series, first, last)) = update(i, stored) {
                write_series(&mut tx, table, key, &series).await?;
                record_sync_in(&mut tx, key, source, Some(first), Some(last), at).await?;
                written += 1;
            }
        }
        tx.commit().await?;
        Ok(written)
    }

    /// Stores `write` into the series of `key` in one transaction (see [`BarsWrite`]).
    pub async fn write_bars(
        &self,
        table: BarTable,
        key: &str,
        write: BarsWrite<'_>,
    ) -> Result<usize, CacheError> {
        let mut tx = self.write_tx().await?;
        write_bars_in(&mut tx, table, key, &write).await?;
        tx.commit().await?;
        Ok(write.bars.len())
    }

    /// Drops every cached bar of `key`.
    pub async fn delete_bars(&self, table: BarTable, key: &str) -> Result<u64, CacheError> {
        Ok(
            sqlx::query("DELETE FROM market_series WHERE kind = ? AND code = ?")
                .bind(table.kind())
                .bind(key)
                .execute(&self.pool)
                .await?
                .rows_affected(),
        )
    }

    /// The stored series of `key`, or why it cannot be used.
    async fn read_series(
        &self,
        table: BarTable,
        key: &str,
    ) -> Result<Option<Result<(Series, bool), SeriesError>>, CacheError> {
        let blob: Option<Vec<u8>> =
            sqlx::query_scalar("SELECT data FROM market_series WHERE kind = ? AND code = ?")
                .bind(table.kind())
                .bind(key)
                .fetch_optional(&self.pool)
                .await?;
        Ok(blob.map(|b| Series::decode_sealed(&b)))
    }

    /// The stored series of `key` as it is stored (bars, their sources and raw closes;
    /// nothing checked but the blob), or why it cannot be read; `None` when there is none.
    pub async fn load_series(
        &self,
        table: BarTable,
        key: &str,
    ) -> Result<Option<Result<Series, SeriesError>>, CacheError> {
        Ok(self
            .read_series(table, key)
            .await?
            .map(|r| r.map(|(s, _)| s)))
    }

    /// [`Self::load_series`] of every key in `keys` that has a stored series, in no
    /// particular order: many keys a query (one round trip each, not one a key), decoded on
    /// every core while the next keys are read.
    pub async fn load_series_many(
        &self,
        table: BarTable,
        keys: &[String],
    ) -> Result<Vec<(String, Result<Series, SeriesError>)>, CacheError> {
        let mut decoding = Vec::new();
        for chunk in keys.chunks(KEYS_PER_QUERY) {
            let mut query =
                QueryBuilder::<Sqlite>::new("SELECT code, data FROM market_series WHERE kind = ");
            query.push_bind(table.kind()).push(" AND code IN (");
            let mut list = query.separated(", ");
            for key in chunk {
                list.push_bind(key.as_str());
            }
            list.push_unseparated(")");
            let rows: Vec<(String, Vec<u8>)> = query.build_query_as().fetch_all(&self.pool).await?;
            let (done, decoded) = tokio::sync::oneshot::channel();
            rayon::spawn(move || {
                let series: Vec<(String, Result<Series, SeriesError>)> = rows
                    .into_par_iter()
                    .map(|(key, blob)| {
                        let series = Series::decode(&blob);
                        (key, series)
                    })
                    .collect();
                // the reader may have gone: nothing to hand the series to
                let _ = done.send(series);
            });
            decoding.push(decoded);
        }
        let mut out = Vec::with_capacity(keys.len());
        for decoded in decoding {
            out.extend(decoded.await.map_err(|_| CacheError::Interrupted)?);
        }
        Ok(out)
    }

    /// The days of `key` that still lacked a raw close after the last fetch of raw prices
    /// that answered: (first, last, how many), or `None` when none was recorded.
    pub async fn raw_asked(
        &self,
        table: BarTable,
        key: &str,
    ) -> Result<Option<RawMissing>, CacheError> {
        let row: Option<(i64, i64, i64)> = sqlx::query_as(
            "SELECT missing_first, missing_last, missing_count FROM market_raw_asked
             WHERE kind = ? AND code = ?",
        )
        .bind(table.kind())
        .bind(key)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|(first, last, count)| RawMissing {
            first: u32::try_from(first).unwrap_or(0),
            last: u32::try_from(last).unwrap_or(0),
            count: u32::try_from(count).unwrap_or(0),
        }))
    }

    /// Records what [`CacheStore::raw_asked`] answers next.
    pub async fn set_raw_asked(
        &self,
        table: BarTable,
        key: &str,
        missing: RawMissing,
        at: DateTime<Utc>,
    ) -> Result<(), CacheError> {
        sqlx::query(
            "INSERT INTO market_raw_asked (kind, code, missing_first, missing_last, missing_count, asked_at)
             VALUES (?, ?, ?, ?, ?, ?)
             ON CONFLICT(kind, code) DO UPDATE SET missing_first = excluded.missing_first,
               missing_last = excluded.missing_last, missing_count = excluded.missing_count,
               asked_at = excluded.asked_at",
        )
        .bind(table.kind())
        .bind(key)
        .bind(i64::from(missing.first))
        .bind(i64::from(missing.last))
        .bind(i64::from(missing.count))
        .bind(at.to_rfc3339())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Bars of `key` up to `end` (inclusive), ascending; corrupt data is split out: a
    /// damaged series as one `CorruptRow` (date 0), an insane bar as a row of its date.
    pub async fn load_bars(
        &self,
        table: BarTable,
        key: &str,
        end: Option<u32>,
    ) -> Result<LoadedBars, CacheError> {
        let out = match self.read_series(table, key).await? {
            None => LoadedBars::default(),
            Some(decoded) => loaded_from(key, decoded, end),
        };
        if !out.corrupt.is_empty() {
            tracing::warn!(
                code = key,
                count = out.corrupt.len(),
                "corrupt cached bars skipped"
            );
        }
        Ok(out)
    }

    /// The bars of every key in `keys` that has a stored series, each as `load_bars` gives
    /// it, in no particular order: many keys a query (one round trip each, not one a key),
    /// decoded on every core while the next keys are read.
    pub async fn load_many(
        &self,
        table: BarTable,
        keys: &[String],
        end: Option<u32>,
    ) -> Result<Vec<(String, LoadedBars)>, CacheError> {
        self.load_many_keeping(table, keys, Keep::UpTo(end)).await
    }

    /// [`Self::load_many`] handing out only each series' last `bars` usable bars (as
    /// [`Keep::Tail`] without a date: the bars before them are counted in
    /// [`LoadedBars::earlier`], never allocated).
    pub async fn load_many_tails(
        &self,
        table: BarTable,
        keys: &[String],
        bars: usize,
    ) -> Result<Vec<(String, LoadedBars)>, CacheError> {
        let keep = Keep::Tail {
            as_of: None,
            bars,
            // no dates gathered: a read of some stocks is no calendar
            admit: |_| false,
        };
        self.load_many_keeping(table, keys, keep).await
    }

    async fn load_many_keeping(
        &self,
        table: BarTable,
        keys: &[String],
        keep: Keep,
    ) -> Result<Vec<(String, LoadedBars)>, CacheError> {
        let mut decoding = Vec::new();
        for chunk in keys.chunks(KEYS_PER_QUERY) {
            let mut query =
                QueryBuilder::<Sqlite>::new("SELECT code, data FROM market_series WHERE kind = ");
            query.push_bind(table.kind()).push(" AND code IN (");
            let mut list = query.separated(", ");
            for key in chunk {
                list.push_bind(key.as_str());
            }
            list.push_unseparated(")");
            let rows: Vec<(String, Vec<u8>)> = query.build_query_as().fetch_all(&self.pool).await?;
            decoding.push(decode_in_background(rows, keep));
        }
        let mut out = Vec::with_capacity(keys.len());
        for decoded in decoding {
            out.extend(decoded.await.map_err(|_| CacheError::Interrupted)?.rows);
        }
        let corrupt: usize = out.iter().map(|(_, l)| l.corrupt.len()).sum();
        if corrupt > 0 {
            tracing::warn!(count = corrupt, "corrupt cached bars skipped");
        }
        Ok(out)
    }

    pub async fn last_date(&self, table: BarTable, key: &str) -> Result<Option<u32>, CacheError> {
        let v: Option<i64> =
            sqlx::query_scalar("SELECT last_date FROM market_series WHERE kind = ? AND code = ?")
                .bind(table.kind())
                .bind(key)
                .fetch_optional(&self.pool)
                .await?;
        Ok(v.and_then(|d| u32::try_from(d).ok()))
    }

    /// Close of `key` on `date`, if cached and readable (used to detect a rebase).
    pub async fn close_on(
        &self,
        table: BarTable,
        key: &str,
        date: u32,
    ) -> Result<Option<f64>, CacheError> {
        Ok(match self.read_series(table, key).await? {
            Some(Ok((s, _))) => s
                .bars
                .binary_search_by_key(&date, |b| b.date)
                .ok()
                .map(|i| s.bars[i].close),
            _ => None,
        })
    }

    pub async fn coverage_of(
        &self,
        table: BarTable,
        key: &str,
    ) -> Result<Option<Coverage>, CacheError> {
        let row: Option<(i64, i64, i64)> = sqlx::query_as(
            "SELECT first_date, last_date, bars FROM market_series WHERE kind = ? AND code = ?",
        )
        .bind(table.kind())
        .bind(key)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row
            .filter(|(_, _, n)| *n > 0)
            .map(|(a, b, n)| coverage_row(key.to_string(), a, b, n)))
    }

    pub async fn coverage(&self, table: BarTable) -> Result<Vec<Coverage>, CacheError> {
        let rows: Vec<(String, i64, i64, i64)> = sqlx::query_as(
            "SELECT code, first_date, last_date, bars FROM market_series
             WHERE kind = ? AND bars > 0 ORDER BY code",
        )
        .bind(table.kind())
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(code, a, b, n)| coverage_row(code, a, b, n))
            .collect())
    }

    /// Every stored series of `table` whose key is after `after` (and not after `through`,
    /// when given), by key, at most `limit`, still encoded: the whole-market read pages
    /// through this and decodes each page on every core while the next is read.
    pub async fn series_page(
        &self,
        table: BarTable,
        after: &str,
        through: Option<&str>,
        limit: u32,
    ) -> Result<Vec<(String, Vec<u8>)>, CacheError> {
        Ok(sqlx::query_as(
            "SELECT code, data FROM market_series WHERE kind = ?1 AND code > ?2
             AND (?3 IS NULL OR code <= ?3) ORDER BY code LIMIT ?4",
        )
        .bind(table.kind())
        .bind(after)
        .bind(through)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?)
    }

    /// The keys that cut `table`'s stored series (by key) into `parts` parts of about the
    /// same size, ascending: each is the last key of its part. A whole-market read reads the
    /// parts on separate connections at once.
    pub async fn series_cut_keys(
        &self,
        table: BarTable,
        parts: u32,
    ) -> Result<Vec<String>, CacheError> {
        let count: i64 = sqlx::query_scalar("SELECT count(*) FROM market_series WHERE kind = ?")
            .bind(table.kind())
            .fetch_one(&self.pool)
            .await?;
        let mut cuts: Vec<String> = Vec::new();
        for k in 1..i64::from(parts) {
            let offset = count * k / i64::from(parts);
            let key: Option<String> = sqlx::query_scalar(
                "SELECT code FROM market_series WHERE kind = ? ORDER BY code LIMIT 1 OFFSET ?",
            )
            .bind(table.kind())
            .bind(offset)
            .fetch_optional(&self.pool)
            .await?;
            cuts.extend(key.filter(|k| cuts.last() < Some(k)));
        }
        Ok(cuts)
    }

    pub async fn upsert_stocks(
        &self,
        list: &[StockInfo],
        source: &str,
        now: DateTime<Utc>,
    ) -> Result<usize, CacheError> {
        let now = now.to_rfc3339();
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        for chunk in list.chunks(500) {
            let mut qb = QueryBuilder::<Sqlite>::new(
                "INSERT INTO market_stocks
                   (code, exchange, name, board, list_date, industry, market_cap, source, updated_at) ",
            );
            qb.push_values(chunk, |mut row, s| {
                row.push_bind(s.code.digits().to_string())
                    .push_bind(s.code.exchange().as_str())
                    .push_bind(s.name.clone())
                    .push_bind(s.board.as_str())
                    .push_bind(s.list_date.map(i64::from))
                    .push_bind(s.industry.clone())
                    .push_bind(s.market_cap)
                    .push_bind(source)
                    .push_bind(now.clone());
            });
            // a refresh that lacks industry/market cap must not erase what we had
            qb.push(
                " ON CONFLICT(code) DO UPDATE SET exchange = excluded.exchange,
                   name = excluded.name, board = excluded.board,
                   list_date = COALESCE(excluded.list_date, market_stocks.list_date),
                   industry = COALESCE(excluded.industry, market_stocks.industry),
                   market_cap = COALESCE(excluded.market_cap, market_stocks.market_cap),
                   source = excluded.source, updated_at = excluded.updated_at",
            );
            qb.build().execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(list.len())
    }

    /// The cached stock list; rows whose code no longer parses are logged and skipped.
    pub async fn load_stocks(&self) -> Result<Vec<StockInfo>, CacheError> {
        // The whole list as one JSON value: one row, not thousands (sqlx's cost per row was
        // most of opening a data home). The market cap travels as text with 17 significant
        // digits, which reads back bit for bit.
        let json: String = sqlx::query_scalar(
            "SELECT json_group_array(json_array(code, name, board, list_date, industry,
                 CASE WHEN market_cap IS NULL THEN NULL ELSE printf('%!.17g', market_cap) END))
             FROM market_stocks",
        )
        .fetch_one(&self.pool)
        .await?;
        let mut rows: Vec<StockJsonRow> =
            serde_json::from_str(&json).map_err(|e| CacheError::StockList(e.to_string()))?;
        // by code; sorted here, where it costs less than SQLite's sorter
        rows.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut out = Vec::with_capacity(rows.len());
        for (code, name, board, list_date, industry, market_cap) in rows {
            let market_cap = match market_cap.map(|m| m.parse::<f64>()).transpose() {
                Ok(m) => m,
                Err(e) => return Err(CacheError::StockList(format!("{code}: market cap {e}"))),
            };
            let Ok(c) = StockCode::from_str(&code) else {
                tracing::warn!(code, "cached stock with invalid code skipped");
                continue;
            };
            out.push(StockInfo {
                board: Board::parse(&board).unwrap_or(c.board()),
                code: c,
                name,
                list_date: list_date.and_then(|d| u32::try_from(d).ok()),
                industry,
                market_cap,
            });
        }
        Ok(out)
    }

    pub async fn stock_name(&self, digits: &str) -> Result<Option<String>, CacheError> {
        Ok(
            sqlx::query_scalar("SELECT name FROM market_stocks WHERE code = ?")
                .bind(digits)
                .fetch_optional(&self.pool)
                .await?,
        )
    }

    pub async fn record_sync(
        &self,
        key: &str,
        source: &str,
        first: Option<u32>,
        last: Option<u32>,
        at: DateTime<Utc>,
    ) -> Result<(), CacheError> {
        let mut conn = self.pool.acquire().await?;
        record_sync_in(&mut conn, key, source, first, last, at).await
    }

    pub async fn sync_entries(&self) -> Result<Vec<SyncEntry>, CacheError> {
        let rows: Vec<SyncRow> = sqlx::query_as(
            "SELECT code, source, first_date, last_date, synced_at FROM market_sync ORDER BY code, source",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(code, source, f, l, synced_at)| SyncEntry {
                code,
                source,
                first_date: f.and_then(|d| u32::try_from(d).ok()),
                last_date: l.and_then(|d| u32::try_from(d).ok()),
                synced_at,
            })
            .collect())
    }

    /// Moves on every write to the bars or the stock list, by any process (migration
    /// 2600's triggers): equal numbers mean nothing a universe is built from changed.
    pub async fn write_generation(&self) -> Result<i64, CacheError> {
        Ok(
            sqlx::query_scalar("SELECT n FROM market_generation WHERE id = 1")
                .fetch_optional(&self.pool)
                .await?
                .unwrap_or(0),
        )
    }

    pub async fn meta(&self, key: &str) -> Result<Option<String>, CacheError> {
        Ok(
            sqlx::query_scalar("SELECT value FROM market_meta WHERE key = ?")
                .bind(key)
                .fetch_optional(&self.pool)
                .await?,
        )
    }

    pub async fn set_meta(&self, key: &str, value: &str) -> Result<(), CacheError> {
        sqlx::query(
            "INSERT INTO market_meta (key, value) VALUES (?, ?)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        )
        .bind(key)
        .bind(value)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}

fn decode_bar(row: &sqlx::sqlite::SqliteRow) -> Result<(Bar, bool, String), String> {
    let f = |name: &str| -> Result<f64, String> {
        row.try_get::<f64, _>(name)
            .map_err(|e| format!("column {name} unreadable: {e}"))
    };
    let date: i64 = row
        .try_get("date")
        .map_err(|e| format!("column date unreadable: {e}"))?;
    let amount: Option<f64> = row
        .try_get("amount")
        .map_err(|e| format!("column amount unreadable: {e}"))?;
    let turnover: Option<f64> = row
        .try_get("turnover")
        .map_err(|e| format!("column turnover unreadable: {e}"))?;
    let source: String = row.try_get("source").unwrap_or_default();
    let bar = Bar {
        date: u32::try_from(date).map_err(|_| format!("date out of range: {date}"))?,
        open: f("open")?,
        high: f("high")?,
        low: f("low")?,
        close: f("close")?,
        volume: f("volume")?,
        amount: amount.unwrap_or(0.0),
        turnover,
    };
    Ok((bar, amount.is_some(), source))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::series::tests::{bundled_series, resealed, rules_byte};

    /// The real 000001 bundle with one bar whose low is above its high.
    fn with_a_bad_bar() -> (Series, u32) {
        let mut s = bundled_series();
        let n = s.bars.len();
        let bad = &mut s.bars[n - 10];
        bad.low = bad.high * 2.0;
        let date = bad.date;
        (s, date)
    }

    /// Sealed as sound over its bad bar: the seal byte set and the checksum made again.
    fn forged(s: &Series) -> Vec<u8> {
        let mut body = s.encode();
        body.truncate(body.len() - 8);
        let at = rules_byte(s);
        assert_eq!(body[at], 0);
        body[at] = crate::sanity::RULES;
        resealed(body)
    }

    /// A series that does not say every bar passed is checked bar by bar on both reads; one
    /// sealed as sound is taken at its seal, which its checksum covers (so a seal can only
    /// be wrong if the checks at writing were: that is what the seal saves re-doing).
    #[test]
    fn an_unsealed_series_is_checked_and_a_sealed_one_is_taken_at_its_seal() {
        let (s, bad_date) = with_a_bad_bar();
        let n = s.bars.len();
        let blob = s.encode();
        let whole = loaded_from("000001.SZ", Series::decode_sealed(&blob), None);
        assert_eq!(whole.corrupt.len(), 1);
        assert_eq!(whole.corrupt[0].date, i64::from(bad_date));
        assert_eq!(whole.bars.len(), n - 1);
        let mut scratch = Series::default();
        let decoded = scratch.decode_tail_into(&blob, None, 320);
        let tail = loaded_tail_from("000001.SZ", decoded.map(|d| (&scratch, d)), None, 320);
        assert_eq!(tail.corrupt, whole.corrupt);
        assert_eq!(tail.amount_missing, whole.amount_missing);
        assert_eq!(tail.sources, whole.sources);

        let blob = forged(&s);
        let whole = loaded_from("000001.SZ", Series::decode_sealed(&blob), None);
        assert!(whole.corrupt.is_empty());
        assert_eq!(whole.bars, s.bars);
        let decoded = scratch.decode_tail_into(&blob, None, 320);
        let tail = loaded_tail_from("000001.SZ", decoded.map(|d| (&scratch, d)), None, 320);
        assert!(tail.corrupt.is_empty());
        assert_eq!(tail.bars, s.bars[n - 320..]);
        assert_eq!(tail.earlier, n - 320);
        // what the checks count besides is still counted over the bars handed out
        let bundled = vec![crate::bundled::BARS_SOURCE.to_string()];
        assert_eq!((&whole.sources, &tail.sources), (&bundled, &bundled));
        let missing = |bars: std::ops::Range<usize>| bars.filter(|&i| !s.amount_known[i]).count();
        assert_eq!(whole.amount_missing, missing(0..n));
        assert_eq!(tail.amount_missing, missing(n - 320..n));
    }
}
