//! The local store in `wyckoff.db`: bars by (symbol, date), the stock list, sync metadata.
//! Rows that fail decoding or sanity checks are returned as `CorruptRow`s, never used.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
// table names in formatted SQL come only from the closed `BarTable` enum
use sqlx::{AssertSqlSafe, QueryBuilder, Row, Sqlite, SqlitePool};
use wyckoff_engine::Bar;

use crate::code::{Board, StockCode};
use crate::meta::StockInfo;

#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

/// Opens (creating if needed) the SQLite file with WAL and a busy timeout, and runs this
/// crate's migrations. Other crates' migrations in the same file are left alone.
pub async fn open_db(path: &Path) -> Result<SqlitePool, CacheError> {
    let opts = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(5))
        .foreign_keys(true);
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .connect_with(opts)
        .await?;
    migrate(&pool).await?;
    Ok(pool)
}

pub async fn migrate(pool: &SqlitePool) -> Result<(), CacheError> {
    let mut migrator = sqlx::migrate!("./migrations");
    // versions applied by other crates are unknown to this migrator; that is expected
    migrator.set_ignore_missing(true);
    migrator.run(pool).await?;
    Ok(())
}

/// (code, name, board, list_date, industry, market_cap)
type StockRow = (
    String,
    String,
    String,
    Option<i64>,
    Option<String>,
    Option<f64>,
);
/// (code, source, first_date, last_date, synced_at)
type SyncRow = (String, String, Option<i64>, Option<i64>, String);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarTable {
    Stocks,
    Indices,
}

impl BarTable {
    fn name(self) -> &'static str {
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
    /// Distinct sources of the returned bars, most recent bar's source first.
    pub sources: Vec<String>,
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

    /// Inserts or replaces bars; `has_amount == false` stores the amount as NULL.
    pub async fn upsert_bars(
        &self,
        table: BarTable,
        key: &str,
        bars: &[Bar],
        source: &str,
        has_amount: bool,
    ) -> Result<usize, CacheError> {
        // multi-row statements: seeding 22k bundled bars row by row is needlessly slow
        const ROWS_PER_STATEMENT: usize = 500;
        let mut tx = self.pool.begin().await?;
        for chunk in bars.chunks(ROWS_PER_STATEMENT) {
            let mut qb = QueryBuilder::<Sqlite>::new(format!(
                "INSERT INTO {} (code, date, open, high, low, close, volume, amount, turnover, source) ",
                table.name()
            ));
            qb.push_values(chunk, |mut row, b| {
                row.push_bind(key)
                    .push_bind(i64::from(b.date))
                    .push_bind(b.open)
                    .push_bind(b.high)
                    .push_bind(b.low)
                    .push_bind(b.close)
                    .push_bind(b.volume)
                    .push_bind(has_amount.then_some(b.amount))
                    .push_bind(b.turnover)
                    .push_bind(source);
            });
            qb.push(
                " ON CONFLICT(code, date) DO UPDATE SET open = excluded.open, high = excluded.high,
                   low = excluded.low, close = excluded.close, volume = excluded.volume,
                   amount = excluded.amount, turnover = excluded.turnover, source = excluded.source",
            );
            qb.build().execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(bars.len())
    }

    /// Drops every cached bar of `key`; used when forward adjustment was rebased upstream.
    pub async fn delete_bars(&self, table: BarTable, key: &str) -> Result<u64, CacheError> {
        let sql = format!("DELETE FROM {} WHERE code = ?", table.name());
        Ok(sqlx::query(AssertSqlSafe(sql.as_str()))
            .bind(key)
            .execute(&self.pool)
            .await?
            .rows_affected())
    }

    /// Bars of `key` up to `end` (inclusive), ascending; corrupt rows are split out.
    pub async fn load_bars(
        &self,
        table: BarTable,
        key: &str,
        end: Option<u32>,
    ) -> Result<LoadedBars, CacheError> {
        let sql = format!(
            "SELECT date, open, high, low, close, volume, amount, turnover, source FROM {}
             WHERE code = ? AND date <= ? ORDER BY date",
            table.name()
        );
        let rows = sqlx::query(AssertSqlSafe(sql.as_str()))
            .bind(key)
            .bind(i64::from(end.unwrap_or(99_991_231)))
            .fetch_all(&self.pool)
            .await?;
        let mut out = LoadedBars::default();
        for row in rows {
            let date: i64 = row.try_get("date").unwrap_or(-1);
            match decode_bar(&row) {
                Ok((bar, amount_known, source)) => {
                    if let Some(why) = crate::sanity::check_bar(&bar) {
                        out.corrupt.push(CorruptRow {
                            code: key.to_string(),
                            date,
                            reason: why.to_string(),
                        });
                        continue;
                    }
                    if !amount_known {
                        out.amount_missing += 1;
                    }
                    if !out.sources.contains(&source) {
                        out.sources.push(source);
                    }
                    out.bars.push(bar);
                }
                Err(reason) => out.corrupt.push(CorruptRow {
                    code: key.to_string(),
                    date,
                    reason,
                }),
            }
        }
        if !out.corrupt.is_empty() {
            tracing::warn!(
                code = key,
                count = out.corrupt.len(),
                "corrupt cached bars skipped"
            );
        }
        // the freshest bar's source is the one worth reporting first
        out.sources.reverse();
        Ok(out)
    }

    pub async fn last_date(&self, table: BarTable, key: &str) -> Result<Option<u32>, CacheError> {
        let sql = format!("SELECT MAX(date) FROM {} WHERE code = ?", table.name());
        let v: Option<i64> = sqlx::query_scalar(AssertSqlSafe(sql.as_str()))
            .bind(key)
            .fetch_one(&self.pool)
            .await?;
        Ok(v.and_then(|d| u32::try_from(d).ok()))
    }

    /// Close of `key` on `date`, if cached (used to detect a forward-adjustment rebase).
    pub async fn close_on(
        &self,
        table: BarTable,
        key: &str,
        date: u32,
    ) -> Result<Option<f64>, CacheError> {
        let sql = format!(
            "SELECT close FROM {} WHERE code = ? AND date = ?",
            table.name()
        );
        let v: Option<f64> = sqlx::query_scalar(AssertSqlSafe(sql.as_str()))
            .bind(key)
            .bind(i64::from(date))
            .fetch_optional(&self.pool)
            .await?;
        Ok(v)
    }

    pub async fn coverage_of(
        &self,
        table: BarTable,
        key: &str,
    ) -> Result<Option<Coverage>, CacheError> {
        let sql = format!(
            "SELECT MIN(date), MAX(date), COUNT(*) FROM {} WHERE code = ?",
            table.name()
        );
        let (a, b, n): (Option<i64>, Option<i64>, i64) =
            sqlx::query_as(AssertSqlSafe(sql.as_str()))
                .bind(key)
                .fetch_one(&self.pool)
                .await?;
        Ok(match (a, b) {
            (Some(a), Some(b)) if n > 0 => Some(Coverage {
                code: key.to_string(),
                first_date: u32::try_from(a).unwrap_or(0),
                last_date: u32::try_from(b).unwrap_or(0),
                bars: u32::try_from(n).unwrap_or(0),
            }),
            _ => None,
        })
    }

    pub async fn coverage(&self, table: BarTable) -> Result<Vec<Coverage>, CacheError> {
        let sql = format!(
            "SELECT code, MIN(date), MAX(date), COUNT(*) FROM {} GROUP BY code ORDER BY code",
            table.name()
        );
        let rows: Vec<(String, i64, i64, i64)> = sqlx::query_as(AssertSqlSafe(sql.as_str()))
            .fetch_all(&self.pool)
            .await?;
        Ok(rows
            .into_iter()
            .map(|(code, a, b, n)| Coverage {
                code,
                first_date: u32::try_from(a).unwrap_or(0),
                last_date: u32::try_from(b).unwrap_or(0),
                bars: u32::try_from(n).unwrap_or(0),
            })
            .collect())
    }

    pub async fn upsert_stocks(
        &self,
        list: &[StockInfo],
        source: &str,
        now: DateTime<Utc>,
    ) -> Result<usize, CacheError> {
        let now = now.to_rfc3339();
        let mut tx = self.pool.begin().await?;
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
        let rows: Vec<StockRow> = sqlx::query_as(
                "SELECT code, name, board, list_date, industry, market_cap FROM market_stocks ORDER BY code",
            )
            .fetch_all(&self.pool)
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for (code, name, board, list_date, industry, market_cap) in rows {
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
        .execute(&self.pool)
        .await?;
        Ok(())
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
