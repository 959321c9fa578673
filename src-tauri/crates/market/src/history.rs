//! Stock history as of a date: the names each stock carried from which day (so its ST
//! status on a past day is the one it had then), when it listed and delisted, and the
//! stock list as each sync fetched it.
//!
//! Name spans come from three places, each kept with its source and when it was recorded:
//! a vendor's name-change history (Tushare `namechange`), a user's import (`wyckoff data
//! names import`), and the dated stock-list snapshots every sync records. A span from a
//! snapshot starts on the day a sync *first saw* that name, not the day it changed: the
//! change may be days older. Such a span never overwrites one from a source that gives the
//! change's own date.

use std::collections::HashMap;
use std::io::{Read, Write};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use specta::Type;
use sqlx::{QueryBuilder, Sqlite, SqliteConnection, SqlitePool};
use wyckoff_engine::NameSpan;

use crate::cache::CacheError;
use crate::facade::MarketData;
use crate::meta::StockInfo;
use crate::name_import::{NamesImportError, NamesImportReport};

/// The source of spans a user imported from a CSV file.
pub const IMPORT_SOURCE: &str = "names-import";
/// Spans rows per INSERT (SQLite's bound-parameter limit is 32 766).
const ROWS_PER_INSERT: usize = 2_000;

/// The source name of spans a stock-list snapshot added (`snapshot:eastmoney`).
pub fn snapshot_source(list_source: &str) -> String {
    format!("snapshot:{list_source}")
}

/// A name in force for `code` from `from` until the code's next change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NameChange {
    /// Six digits.
    pub code: String,
    /// `YYYYMMDD`.
    pub from: u32,
    pub name: String,
}

/// Listing status as the exchanges' lists give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ListStatus {
    /// `L`: trading (or suspended but listed).
    Listed,
    /// `D`: delisted; `delist_date` is its last day.
    Delisted,
    /// `P`: listing paused (暂停上市), not trading, not yet delisted.
    Paused,
}

impl ListStatus {
    /// The one-letter code the store and Tushare use.
    pub fn letter(self) -> &'static str {
        match self {
            ListStatus::Listed => "L",
            ListStatus::Delisted => "D",
            ListStatus::Paused => "P",
        }
    }

    pub fn from_letter(s: &str) -> Option<Self> {
        match s.trim() {
            "L" => Some(ListStatus::Listed),
            "D" => Some(ListStatus::Delisted),
            "P" => Some(ListStatus::Paused),
            _ => None,
        }
    }
}

/// A stock's listing as a source last gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct Listing {
    /// Six digits.
    pub code: String,
    pub name: String,
    pub status: ListStatus,
    pub list_date: Option<u32>,
    /// The last trading day of a delisted stock.
    pub delist_date: Option<u32>,
}

/// What a vendor gave of the market's history, and the rows it could not read (each a
/// line saying which and why; none of them was stored).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StockHistory {
    pub names: Vec<NameChange>,
    pub listings: Vec<Listing>,
    pub rejected: Vec<String>,
    /// Industry membership, when the source has it.
    pub industries: crate::industry_spans::IndustryFetch,
}

/// A stored span with where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct StoredSpan {
    pub from: u32,
    pub name: String,
    /// From a stock-list snapshot: `from` is when a sync first saw the name, which may be
    /// later than the change.
    pub first_seen: bool,
    pub source: String,
    pub recorded_at: String,
}

/// What the store holds about one stock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct CodeHistory {
    /// Six digits.
    pub code: String,
    /// Ascending by start.
    pub spans: Vec<StoredSpan>,
    pub listing: Option<Listing>,
}

/// What writing a batch of spans did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Type)]
pub struct SpanWrite {
    /// Spans for a (code, date) the store had no name for.
    pub added: usize,
    /// Spans that replaced a different name recorded for the same (code, date).
    pub changed: usize,
    /// Spans that gave a change's own date to a name a snapshot had only seen that day.
    pub confirmed: usize,
    /// Spans already recorded as they are.
    pub unchanged: usize,
    /// Snapshot spans not written: a source with the change's own date holds that day.
    pub kept_exact: usize,
}

impl SpanWrite {
    /// Rows this write put in or changed.
    pub fn written(&self) -> usize {
        self.added + self.changed + self.confirmed
    }
}

/// One recorded stock-list snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct SnapshotInfo {
    /// Beijing day of the sync, `YYYYMMDD`.
    pub day: u32,
    pub source: String,
    pub stocks: usize,
    /// Name spans this snapshot added: names no earlier record had in force that day.
    pub new_names: usize,
    pub recorded_at: String,
}

/// Everything the universe loader needs: each code's names (ascending, a repeated name
/// folded into the span before it) and its listing.
#[derive(Debug, Clone, Default)]
pub struct Histories {
    pub names: HashMap<String, Vec<NameSpan>>,
    pub listings: HashMap<String, Listing>,
}

/// Counts of what the store holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Type)]
pub struct HistoryCounts {
    /// Codes with at least one name span.
    pub codes_with_names: usize,
    pub spans: usize,
    /// Spans whose start is the day a snapshot first saw the name.
    pub first_seen_spans: usize,
    pub listings: usize,
    pub delisted: usize,
    pub snapshots: usize,
}

/// The history tables in `wyckoff.db`.
#[derive(Debug, Clone)]
pub struct HistoryStore {
    pool: SqlitePool,
}

/// A span about to be written.
struct Incoming<'a> {
    code: &'a str,
    from: u32,
    name: &'a str,
    first_seen: bool,
}

impl HistoryStore {
    pub fn new(pool: SqlitePool) -> Self {
        Self { pool }
    }

    /// Writes spans whose start is the change's own date (a vendor's history, an import).
    /// A later one for the same (code, date) replaces the earlier.
    pub async fn add_names(
        &self,
        names: &[NameChange],
        source: &str,
        now: DateTime<Utc>,
    ) -> Result<SpanWrite, CacheError> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        let incoming: Vec<Incoming<'_>> = names
            .iter()
            .map(|n| Incoming {
                code: &n.code,
                from: n.from,
                name: &n.name,
                first_seen: false,
            })
            .collect();
        let written = write_spans(&mut tx, &incoming, source, now).await?;
        tx.commit().await?;
        Ok(written)
    }

    /// A vendor's whole history in one transaction: its names, then its listings.
    pub async fn record_vendor_history(
        &self,
        history: &StockHistory,
        source: &str,
        now: DateTime<Utc>,
    ) -> Result<SpanWrite, CacheError> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        let incoming: Vec<Incoming<'_>> = history
            .names
            .iter()
            .map(|n| Incoming {
                code: &n.code,
                from: n.from,
                name: &n.name,
                first_seen: false,
            })
            .collect();
        let written = write_spans(&mut tx, &incoming, source, now).await?;
        write_listings(&mut tx, &history.listings, source, now).await?;
        tx.commit().await?;
        Ok(written)
    }

    pub async fn record_listings(
        &self,
        listings: &[Listing],
        source: &str,
        now: DateTime<Utc>,
    ) -> Result<(), CacheError> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        write_listings(&mut tx, listings, source, now).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Records `list` as the stock list of Beijing day `day` (replacing one recorded
    /// earlier that day) and adds a span dated `day` for every stock whose name there is
    /// not the one the history has in force that day: a rename since the last snapshot, or
    /// a stock no record names yet. Such a span's start is "first seen", not the change.
    pub async fn record_snapshot(
        &self,
        day: u32,
        list: &[StockInfo],
        list_source: &str,
        now: DateTime<Utc>,
    ) -> Result<SnapshotInfo, CacheError> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        let known = read_spans(&mut tx).await?;
        let mut stocks: Vec<(&str, &str)> = list
            .iter()
            .map(|s| (s.code.digits(), s.name.as_str()))
            .collect();
        stocks.sort_unstable();
        stocks.dedup_by(|a, b| a.0 == b.0);
        let incoming: Vec<Incoming<'_>> = stocks
            .iter()
            .filter(|(code, name)| {
                !name.is_empty()
                    && known
                        .get(*code)
                        .and_then(|spans| in_force(spans, day))
                        .is_none_or(|held| held != *name)
            })
            .map(|&(code, name)| Incoming {
                code,
                from: day,
                name,
                first_seen: true,
            })
            .collect();
        let source = snapshot_source(list_source);
        let written = write_spans(&mut tx, &incoming, &source, now).await?;
        let info = SnapshotInfo {
            day,
            source: list_source.to_string(),
            stocks: stocks.len(),
            new_names: written.written(),
            recorded_at: now.to_rfc3339(),
        };
        sqlx::query(
            "INSERT INTO market_list_snapshot (day, source, stocks, new_names, recorded_at, data)
             VALUES (?, ?, ?, ?, ?, ?)
             ON CONFLICT(day) DO UPDATE SET source = excluded.source, stocks = excluded.stocks,
               new_names = market_list_snapshot.new_names + excluded.new_names,
               recorded_at = excluded.recorded_at, data = excluded.data",
        )
        .bind(i64::from(day))
        .bind(list_source)
        .bind(info.stocks as i64)
        .bind(info.new_names as i64)
        .bind(&info.recorded_at)
        .bind(encode_snapshot(&stocks)?)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(info)
    }

    /// The recorded snapshots, oldest first.
    pub async fn snapshots(&self) -> Result<Vec<SnapshotInfo>, CacheError> {
        let rows: Vec<(i64, String, i64, i64, String)> = sqlx::query_as(
            "SELECT day, source, stocks, new_names, recorded_at FROM market_list_snapshot
             ORDER BY day",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(
                |(day, source, stocks, new_names, recorded_at)| SnapshotInfo {
                    day: u32::try_from(day).unwrap_or(0),
                    source,
                    stocks: usize::try_from(stocks).unwrap_or(0),
                    new_names: usize::try_from(new_names).unwrap_or(0),
                    recorded_at,
                },
            )
            .collect())
    }

    /// The stock list recorded on `day`: (code, name) by code.
    pub async fn snapshot(&self, day: u32) -> Result<Option<Vec<(String, String)>>, CacheError> {
        let blob: Option<Vec<u8>> =
            sqlx::query_scalar("SELECT data FROM market_list_snapshot WHERE day = ?")
                .bind(i64::from(day))
                .fetch_optional(&self.pool)
                .await?;
        blob.map(|b| decode_snapshot(&b)).transpose()
    }

    /// Every span recorded for `code` (six digits), ascending.
    pub async fn spans_of(&self, code: &str) -> Result<Vec<StoredSpan>, CacheError> {
        let rows: Vec<(i64, String, i64, String, String)> = sqlx::query_as(
            "SELECT from_date, name, first_seen, source, recorded_at FROM market_name_history
             WHERE code = ? ORDER BY from_date",
        )
        .bind(code)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(from, name, first_seen, source, recorded_at)| StoredSpan {
                from: u32::try_from(from).unwrap_or(0),
                name,
                first_seen: first_seen != 0,
                source,
                recorded_at,
            })
            .collect())
    }

    /// One stock's recorded names and listing.
    pub async fn of(&self, code: &str) -> Result<CodeHistory, CacheError> {
        Ok(CodeHistory {
            code: code.to_string(),
            spans: self.spans_of(code).await?,
            listing: self.listing_of(code).await?,
        })
    }

    pub async fn listing_of(&self, code: &str) -> Result<Option<Listing>, CacheError> {
        let row: Option<ListingRow> = sqlx::query_as(
            "SELECT code, name, list_status, list_date, delist_date FROM market_listing
             WHERE code = ?",
        )
        .bind(code)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.and_then(listing_from_row))
    }

    /// Every code's names and listing, as the universe loader uses them.
    pub async fn load(&self) -> Result<Histories, CacheError> {
        let mut conn = self.pool.acquire().await?;
        let spans = read_spans(&mut conn).await?;
        let names = spans
            .into_iter()
            .map(|(code, spans)| {
                let mut folded: Vec<NameSpan> = Vec::with_capacity(spans.len());
                for (from, name) in spans {
                    // the same name again (a snapshot seeing what a vendor dated) adds nothing
                    if folded.last().is_none_or(|last| last.name != name) {
                        folded.push(NameSpan { from, name });
                    }
                }
                (code, folded)
            })
            .collect();
        let rows: Vec<ListingRow> = sqlx::query_as(
            "SELECT code, name, list_status, list_date, delist_date FROM market_listing",
        )
        .fetch_all(&mut *conn)
        .await?;
        let listings = rows
            .into_iter()
            .filter_map(listing_from_row)
            .map(|l| (l.code.clone(), l))
            .collect();
        Ok(Histories { names, listings })
    }

    /// Delisting days by six-digit code (of delisted stocks whose day is known), or of
    /// `code` alone when given.
    pub async fn delisting_days(
        &self,
        code: Option<&str>,
    ) -> Result<std::collections::HashMap<String, u32>, CacheError> {
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT code, delist_date FROM market_listing
             WHERE list_status = 'D' AND delist_date IS NOT NULL AND (?1 IS NULL OR code = ?1)",
        )
        .bind(code)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(code, day)| u32::try_from(day).ok().map(|d| (code, d)))
            .collect())
    }

    pub async fn counts(&self) -> Result<HistoryCounts, CacheError> {
        let (codes, spans, first_seen): (i64, i64, Option<i64>) = sqlx::query_as(
            "SELECT COUNT(DISTINCT code), COUNT(*), SUM(first_seen) FROM market_name_history",
        )
        .fetch_one(&self.pool)
        .await?;
        let (listings, delisted): (i64, Option<i64>) =
            sqlx::query_as("SELECT COUNT(*), SUM(list_status = 'D') FROM market_listing")
                .fetch_one(&self.pool)
                .await?;
        let snapshots: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM market_list_snapshot")
            .fetch_one(&self.pool)
            .await?;
        let n = |v: i64| usize::try_from(v).unwrap_or(0);
        Ok(HistoryCounts {
            codes_with_names: n(codes),
            spans: n(spans),
            first_seen_spans: n(first_seen.unwrap_or(0)),
            listings: n(listings),
            delisted: n(delisted.unwrap_or(0)),
            snapshots: n(snapshots),
        })
    }
}

type ListingRow = (String, String, String, Option<i64>, Option<i64>);

fn listing_from_row((code, name, status, list_date, delist_date): ListingRow) -> Option<Listing> {
    let Some(status) = ListStatus::from_letter(&status) else {
        tracing::warn!(
            code,
            status,
            "stored listing with an unknown status skipped"
        );
        return None;
    };
    let date = |d: Option<i64>| d.and_then(|d| u32::try_from(d).ok());
    Some(Listing {
        code,
        name,
        status,
        list_date: date(list_date),
        delist_date: date(delist_date),
    })
}

/// The name in force on `day` among `spans` (ascending by start).
fn in_force(spans: &[(u32, String)], day: u32) -> Option<&str> {
    let i = spans.partition_point(|(from, _)| *from <= day);
    i.checked_sub(1)
        .and_then(|i| spans.get(i))
        .map(|(_, n)| n.as_str())
}

/// Every stored span by code, ascending: read as one JSON value (one row, not tens of
/// thousands; sqlx's cost is per row).
async fn read_spans(
    conn: &mut SqliteConnection,
) -> Result<HashMap<String, Vec<(u32, String)>>, CacheError> {
    let json: String = sqlx::query_scalar(
        "SELECT json_group_array(json_array(code, from_date, name)) FROM market_name_history",
    )
    .fetch_one(&mut *conn)
    .await?;
    let rows: Vec<(String, u32, String)> = serde_json::from_str(&json)
        .map_err(|e| CacheError::StockList(format!("name history: {e}")))?;
    let mut by_code: HashMap<String, Vec<(u32, String)>> = HashMap::new();
    for (code, from, name) in rows {
        by_code.entry(code).or_default().push((from, name));
    }
    for spans in by_code.values_mut() {
        spans.sort_unstable_by_key(|(from, _)| *from);
    }
    Ok(by_code)
}

/// What to do with one incoming span given the stored one for its (code, date).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Add,
    Change,
    Confirm,
    Unchanged,
    KeepExact,
}

/// The precedence rule, as a pure function: a span with the change's own date replaces
/// anything; a "first seen" one only another "first seen" one (a later sync that day).
fn verdict(stored: Option<(&str, bool)>, name: &str, first_seen: bool) -> Verdict {
    match stored {
        None => Verdict::Add,
        Some((held, held_first_seen)) => match (held == name, held_first_seen, first_seen) {
            (true, true, false) => Verdict::Confirm,
            (true, _, _) => Verdict::Unchanged,
            (false, false, true) => Verdict::KeepExact,
            (false, _, _) => Verdict::Change,
        },
    }
}

async fn write_spans(
    tx: &mut SqliteConnection,
    incoming: &[Incoming<'_>],
    source: &str,
    now: DateTime<Utc>,
) -> Result<SpanWrite, CacheError> {
    let mut out = SpanWrite::default();
    if incoming.is_empty() {
        return Ok(out);
    }
    let stored: Vec<(String, i64, String, i64)> =
        sqlx::query_as("SELECT code, from_date, name, first_seen FROM market_name_history")
            .fetch_all(&mut *tx)
            .await?;
    let stored: HashMap<(&str, u32), (&str, bool)> = stored
        .iter()
        .filter_map(|(code, from, name, fs)| {
            Some((
                (code.as_str(), u32::try_from(*from).ok()?),
                (name.as_str(), *fs != 0),
            ))
        })
        .collect();
    // the last of several for one (code, date) wins
    let mut latest: HashMap<(&str, u32), &Incoming<'_>> = HashMap::new();
    for span in incoming {
        latest.insert((span.code, span.from), span);
    }
    let mut to_write: Vec<&Incoming<'_>> = Vec::new();
    for (key, span) in latest {
        match verdict(stored.get(&key).copied(), span.name, span.first_seen) {
            Verdict::Add => out.added += 1,
            Verdict::Change => out.changed += 1,
            Verdict::Confirm => out.confirmed += 1,
            Verdict::Unchanged => {
                out.unchanged += 1;
                continue;
            }
            Verdict::KeepExact => {
                out.kept_exact += 1;
                continue;
            }
        }
        to_write.push(span);
    }
    to_write.sort_unstable_by_key(|s| (s.code, s.from));
    let now = now.to_rfc3339();
    for chunk in to_write.chunks(ROWS_PER_INSERT) {
        let mut qb = QueryBuilder::<Sqlite>::new(
            "INSERT INTO market_name_history (code, from_date, name, first_seen, source, recorded_at) ",
        );
        qb.push_values(chunk, |mut row, s| {
            row.push_bind(s.code)
                .push_bind(i64::from(s.from))
                .push_bind(s.name)
                .push_bind(i64::from(s.first_seen))
                .push_bind(source)
                .push_bind(now.as_str());
        });
        qb.push(
            " ON CONFLICT(code, from_date) DO UPDATE SET name = excluded.name,
               first_seen = excluded.first_seen, source = excluded.source,
               recorded_at = excluded.recorded_at",
        );
        qb.build().execute(&mut *tx).await?;
    }
    Ok(out)
}

async fn write_listings(
    tx: &mut SqliteConnection,
    listings: &[Listing],
    source: &str,
    now: DateTime<Utc>,
) -> Result<(), CacheError> {
    let now = now.to_rfc3339();
    for chunk in listings.chunks(ROWS_PER_INSERT) {
        let mut qb = QueryBuilder::<Sqlite>::new(
            "INSERT INTO market_listing
               (code, name, list_status, list_date, delist_date, source, recorded_at) ",
        );
        qb.push_values(chunk, |mut row, l| {
            row.push_bind(l.code.as_str())
                .push_bind(l.name.as_str())
                .push_bind(l.status.letter())
                .push_bind(l.list_date.map(i64::from))
                .push_bind(l.delist_date.map(i64::from))
                .push_bind(source)
                .push_bind(now.as_str());
        });
        // a relisted stock is listed again: its old delisting day no longer holds
        qb.push(
            " ON CONFLICT(code) DO UPDATE SET name = excluded.name,
               list_status = excluded.list_status,
               list_date = COALESCE(excluded.list_date, market_listing.list_date),
               delist_date = excluded.delist_date,
               source = excluded.source, recorded_at = excluded.recorded_at",
        );
        qb.build().execute(&mut *tx).await?;
    }
    Ok(())
}

fn encode_snapshot(stocks: &[(&str, &str)]) -> Result<Vec<u8>, CacheError> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let io = |e: std::io::Error| CacheError::StockList(format!("snapshot: {e}"));
    for (code, name) in stocks {
        writeln!(gz, "{code}\t{name}").map_err(io)?;
    }
    gz.finish().map_err(io)
}

fn decode_snapshot(blob: &[u8]) -> Result<Vec<(String, String)>, CacheError> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(blob)
        .read_to_string(&mut text)
        .map_err(|e| CacheError::StockList(format!("snapshot: {e}")))?;
    text.lines()
        .map(|line| {
            line.split_once('\t')
                .map(|(c, n)| (c.to_string(), n.to_string()))
                .ok_or_else(|| CacheError::StockList(format!("snapshot line {line:?}")))
        })
        .collect()
}

/// What [`MarketData::sync_stock_history`] fetched and stored.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct HistorySync {
    pub source: String,
    /// Name-change rows read (after folding repeats).
    pub names: usize,
    #[serde(flatten)]
    pub write: SpanWrite,
    pub listings: usize,
    pub delisted: usize,
    pub paused: usize,
    /// Quarter ends whose whole-market caps were fetched and recorded by this sync.
    pub cap_days: usize,
    /// Quarter ends of the cached span still without caps (a failed fetch, or the limit
    /// of a sync, stops the run; the next sync goes on from there).
    pub cap_days_missing: usize,
    /// Why the cap fetch stopped early, when it did.
    pub cap_error: Option<String>,
    /// Rows not stored, each saying which and why (the first [`MAX_REJECTED_SHOWN`]).
    pub rejected: Vec<String>,
    pub rejected_rows: usize,
    /// The industry membership the source gave, as stored (`None`: it gives none).
    pub industries: Option<crate::industry_spans::IndustrySync>,
}

/// Rejected vendor rows a report lists; the rest are counted.
pub const MAX_REJECTED_SHOWN: usize = 20;

impl MarketData {
    /// The stock-history tables of this data home.
    pub fn history(&self) -> HistoryStore {
        HistoryStore::new(self.pool().clone())
    }

    /// Whether a configured source gives the market's name and listing history (Tushare,
    /// with a token).
    pub fn has_stock_history_source(&self) -> bool {
        self.chain().has_stock_history()
    }

    /// Fetches every name change and listing from the first source that has them and
    /// stores them in one transaction; `Ok(None)` when no configured source offers them.
    pub async fn sync_stock_history(&self) -> Result<Option<HistorySync>, HistorySyncError> {
        let chain = self.chain();
        if !chain.has_stock_history() {
            return Ok(None);
        }
        let got = chain.stock_history().await?;
        let history = got.value;
        if !history.rejected.is_empty() {
            tracing::warn!(
                source = got.source,
                rejected = history.rejected.len(),
                first = history.rejected.first().map(String::as_str),
                "stock history rows not stored"
            );
        }
        let write = self
            .history()
            .record_vendor_history(&history, got.source, self.clock().now())
            .await?;
        let caps = self.sync_cap_history(&chain).await?;
        let today = crate::date::to_yyyymmdd(self.clock().now_beijing().date());
        let industries = crate::industry_spans::record_fetch(
            &crate::industries::IndustryStore::new(self.pool().clone()),
            history.industries,
            today,
            self.clock().now(),
        )
        .await?;
        let count = |st: ListStatus| history.listings.iter().filter(|l| l.status == st).count();
        Ok(Some(HistorySync {
            cap_days: caps.recorded,
            cap_days_missing: caps.missing,
            cap_error: caps.error,
            source: got.source.to_string(),
            names: history.names.len(),
            write,
            listings: history.listings.len(),
            delisted: count(ListStatus::Delisted),
            paused: count(ListStatus::Paused),
            industries,
            rejected_rows: history.rejected.len(),
            rejected: history
                .rejected
                .into_iter()
                .take(MAX_REJECTED_SHOWN)
                .collect(),
        }))
    }

    /// Fetches the whole market's caps of each quarter end of the cached span that has
    /// none yet, newest first, at most [`CAP_DAYS_PER_SYNC`] a sync and stopping at the
    /// first failure (what was fetched stays; the next sync goes on from there).
    async fn sync_cap_history(
        &self,
        chain: &crate::sources::SourceChain,
    ) -> Result<CapSync, CacheError> {
        let store = crate::cap_history::CapHistoryStore::new(self.pool().clone());
        let coverage = self
            .store()
            .coverage(crate::cache::BarTable::Stocks)
            .await?;
        let first = coverage.iter().map(|c| c.first_date).min();
        let last = coverage.iter().map(|c| c.last_date).max();
        let (Some(first), Some(last)) = (first, last) else {
            return Ok(CapSync::default());
        };
        let recorded = store.recorded_days().await?;
        let this_quarter = quarter_of(crate::date::to_yyyymmdd(self.clock().now_beijing().date()));
        let mut wanted: Vec<u32> =
            crate::cap_history::quarter_ends(self.calendar().trading_days_between(first, last))
                .into_iter()
                // a quarter still running has no end yet: the list sync samples it
                .filter(|d| quarter_of(*d) < this_quarter && !recorded.contains(d))
                .collect();
        wanted.reverse();
        let mut out = CapSync {
            missing: wanted.len(),
            ..CapSync::default()
        };
        for day in wanted.into_iter().take(CAP_DAYS_PER_SYNC) {
            match chain.market_caps_on(day).await {
                Ok(got) => {
                    store
                        .record_day(day, &got.value, got.source, self.clock().now())
                        .await?;
                    out.recorded += 1;
                    out.missing -= 1;
                }
                Err(e) => {
                    tracing::warn!(day, error = %e, "market caps not fetched; the next sync goes on");
                    out.error = Some(e.to_string());
                    break;
                }
            }
        }
        Ok(out)
    }

    /// Imports a `date,code,name` CSV file of names in force from each date (see
    /// [`crate::name_import`]); names dated after today (Beijing) are refused.
    pub async fn import_names(
        &self,
        path: &std::path::Path,
    ) -> Result<NamesImportReport, NamesImportError> {
        let today = crate::date::to_yyyymmdd(self.clock().now_beijing().date());
        crate::name_import::import_names(&self.history(), path, today, self.clock().now()).await
    }
}

/// Quarter ends a history sync fetches caps for (ten years, newest first); a paced
/// vendor answers them in about ten seconds.
pub const CAP_DAYS_PER_SYNC: usize = 40;

/// (year, quarter 0–3) of a `YYYYMMDD` day, ordered.
fn quarter_of(day: u32) -> (u32, u32) {
    (day / 10_000, ((day / 100) % 100).saturating_sub(1) / 3)
}

/// What [`MarketData::sync_cap_history`] did.
#[derive(Debug, Default)]
struct CapSync {
    recorded: usize,
    missing: usize,
    error: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum HistorySyncError {
    #[error(transparent)]
    Fetch(#[from] crate::sources::ChainError),
    #[error(transparent)]
    Store(#[from] CacheError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_of_a_span_over_the_one_stored_for_its_day() {
        // (stored (name, first_seen), incoming name, incoming first_seen, verdict)
        let cases = [
            (None, "ST星源", false, Verdict::Add),
            (None, "ST星源", true, Verdict::Add),
            (Some(("ST星源", false)), "ST星源", false, Verdict::Unchanged),
            (Some(("ST星源", false)), "ST星源", true, Verdict::Unchanged),
            (Some(("ST星源", true)), "ST星源", true, Verdict::Unchanged),
            // a dated source confirms what a snapshot only saw
            (Some(("ST星源", true)), "ST星源", false, Verdict::Confirm),
            // a dated source corrects anything
            (Some(("世纪星源", false)), "ST星源", false, Verdict::Change),
            (Some(("世纪星源", true)), "ST星源", false, Verdict::Change),
            // a later sync that day replaces what the earlier one saw
            (Some(("世纪星源", true)), "ST星源", true, Verdict::Change),
            // a snapshot never overrides a dated change
            (
                Some(("世纪星源", false)),
                "ST星源",
                true,
                Verdict::KeepExact,
            ),
        ];
        for (stored, name, first_seen, want) in cases {
            assert_eq!(
                verdict(stored, name, first_seen),
                want,
                "{stored:?} ← {name} first_seen={first_seen}"
            );
        }
    }

    #[test]
    fn the_name_in_force_is_the_last_span_started_on_or_before_the_day() {
        let spans = vec![(20100101, "A".to_string()), (20200101, "ST A".to_string())];
        assert_eq!(in_force(&spans, 20091231), None);
        assert_eq!(in_force(&spans, 20100101), Some("A"));
        assert_eq!(in_force(&spans, 20191231), Some("A"));
        assert_eq!(in_force(&spans, 20200101), Some("ST A"));
    }

    #[test]
    fn a_snapshot_blob_reads_back() {
        let stocks = [("000001", "平安银行"), ("600519", "贵州茅台")];
        let blob = encode_snapshot(&stocks).unwrap();
        let back = decode_snapshot(&blob).unwrap();
        assert_eq!(
            back,
            stocks
                .iter()
                .map(|(c, n)| (c.to_string(), n.to_string()))
                .collect::<Vec<_>>()
        );
        assert!(decode_snapshot(b"not gzip").is_err());
    }

    #[test]
    fn list_status_letters_round_trip() {
        for s in [ListStatus::Listed, ListStatus::Delisted, ListStatus::Paused] {
            assert_eq!(ListStatus::from_letter(s.letter()), Some(s));
        }
        assert_eq!(ListStatus::from_letter("X"), None);
    }
}
