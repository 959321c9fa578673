//! The watchlist: stocks the user follows, stored in `market_watchlist` (same `wyckoff.db`).
//! Only codes and when they were added live here; prices, health and stage are read from
//! the bar cache and the engine when a page shows them, so nothing here can go stale.

use chrono::{DateTime, Utc};
use sqlx::SqlitePool;

use crate::code::{CodeError, StockCode};

#[derive(Debug, thiserror::Error)]
pub enum WatchlistError {
    #[error(transparent)]
    Code(#[from] CodeError),
    #[error("watchlist storage: {0}")]
    Db(#[from] sqlx::Error),
    #[error("watchlist row for {code} has an unreadable added_at: {value}")]
    BadTimestamp { code: String, value: String },
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WatchlistEntry {
    /// Six digits.
    pub code: String,
    pub added_at: DateTime<Utc>,
}

#[derive(Debug, Clone)]
pub struct WatchlistStore {
    pool: SqlitePool,
}

impl WatchlistStore {
    /// The pool must have had the market migrations run (`MarketData::open*` does it).
    pub fn new(pool: SqlitePool) -> Self {
        WatchlistStore { pool }
    }

    /// Entries in the order they were added.
    pub async fn list(&self) -> Result<Vec<WatchlistEntry>, WatchlistError> {
        let rows: Vec<(String, String)> =
            sqlx::query_as("SELECT code, added_at FROM market_watchlist ORDER BY added_at, code")
                .fetch_all(&self.pool)
                .await?;
        rows.into_iter()
            .map(|(code, value)| match DateTime::parse_from_rfc3339(&value) {
                Ok(t) => Ok(WatchlistEntry {
                    code,
                    added_at: t.with_timezone(&Utc),
                }),
                Err(_) => Err(WatchlistError::BadTimestamp { code, value }),
            })
            .collect()
    }

    /// Adds a stock (any accepted spelling: `000001`, `000001.SZ`, `sz000001`). Adding one
    /// already there keeps its original date. Returns the normalised code.
    pub async fn add(&self, code: &str, now: DateTime<Utc>) -> Result<String, WatchlistError> {
        let code = StockCode::parse(code)?;
        let digits = code.digits().to_string();
        sqlx::query("INSERT OR IGNORE INTO market_watchlist (code, added_at) VALUES (?, ?)")
            .bind(&digits)
            .bind(now.to_rfc3339())
            .execute(&self.pool)
            .await?;
        Ok(digits)
    }

    /// Removes a stock; true when it was there.
    pub async fn remove(&self, code: &str) -> Result<bool, WatchlistError> {
        let code = StockCode::parse(code)?;
        let done = sqlx::query("DELETE FROM market_watchlist WHERE code = ?")
            .bind(code.digits())
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    pub async fn contains(&self, code: &str) -> Result<bool, WatchlistError> {
        let code = StockCode::parse(code)?;
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM market_watchlist WHERE code = ?")
            .bind(code.digits())
            .fetch_one(&self.pool)
            .await?;
        Ok(n > 0)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use chrono::TimeZone;

    use super::*;
    use crate::{MarketConfig, MarketData};

    async fn store(dir: &std::path::Path) -> WatchlistStore {
        let md = MarketData::open_with(MarketConfig::offline(dir))
            .await
            .unwrap();
        WatchlistStore::new(md.pool().clone())
    }

    fn at(day: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 1, day, 9, 30, 0).unwrap()
    }

    #[tokio::test]
    async fn add_list_remove_round_trip_in_a_real_database() {
        let tmp = tempfile::tempdir().unwrap();
        let wl = store(tmp.path()).await;
        assert!(wl.list().await.unwrap().is_empty());

        assert_eq!(wl.add("sh600519", at(2)).await.unwrap(), "600519");
        assert_eq!(wl.add("000001.SZ", at(3)).await.unwrap(), "000001");
        // a second add keeps the first date
        wl.add("600519", at(9)).await.unwrap();
        let codes: Vec<_> = wl.list().await.unwrap();
        assert_eq!(
            codes,
            vec![
                WatchlistEntry {
                    code: "600519".into(),
                    added_at: at(2)
                },
                WatchlistEntry {
                    code: "000001".into(),
                    added_at: at(3)
                },
            ]
        );
        assert!(wl.contains("600519.SH").await.unwrap());

        assert!(wl.remove("600519").await.unwrap());
        assert!(!wl.remove("600519").await.unwrap());
        assert!(!wl.contains("600519").await.unwrap());
        assert_eq!(wl.list().await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn survives_reopening_the_database() {
        let tmp = tempfile::tempdir().unwrap();
        store(tmp.path()).await.add("000001", at(1)).await.unwrap();
        let again = store(tmp.path()).await;
        assert_eq!(again.list().await.unwrap()[0].code, "000001");
    }

    #[tokio::test]
    async fn bad_codes_are_refused_with_the_code_error() {
        let tmp = tempfile::tempdir().unwrap();
        let wl = store(tmp.path()).await;
        for bad in ["", "12345", "abcdef", "00000１"] {
            let err = wl.add(bad, at(1)).await.unwrap_err();
            assert!(matches!(err, WatchlistError::Code(_)), "{bad}: {err}");
        }
        assert!(wl.list().await.unwrap().is_empty());
    }
}
