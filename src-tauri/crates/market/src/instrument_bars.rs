//! Daily bars of the ledger's instruments that are not stocks — exchange-traded funds
//! (ETF / LOF) and listed bonds — kept apart from the stock series (no screen or chart
//! takes a fund for a stock), unadjusted, so an account holding them is valued at the
//! price they really closed at. Filled by [`sync_instruments`] from Eastmoney
//! ([`crate::sources::eastmoney_fund`]) for the codes a ledger holds; read back as closes
//! in integer millionths ([`InstrumentStore::closes`]).
//!
//! Repos (204xxx / 131xxx) have no bars here: cash lent is worth its principal until it
//! comes back (the ledger's rule), not a traded price.

use chrono::{DateTime, Duration as ChronoDuration, Timelike, Utc};
use serde::Serialize;
use sqlx::{Row, SqlitePool};
use wyckoff_engine::Bar;

use wyckoff_engine::Instrument;

use crate::code::{Exchange, fund_or_bond_exchange};
use crate::date::{iso, to_yyyymmdd};
use crate::facade::MarketData;
use crate::raw::price_e6;
use crate::sources::SourceError;
use crate::sources::eastmoney_fund::{EastmoneyFund, SOURCE_NAME};

/// The first day asked for when nothing is cached (the source answers from listing).
const EARLIEST: u32 = 19900101;

#[derive(Debug, thiserror::Error)]
pub enum InstrumentError {
    #[error("instrument bar store: {0}")]
    Db(String),
}

impl From<sqlx::Error> for InstrumentError {
    fn from(e: sqlx::Error) -> Self {
        InstrumentError::Db(e.to_string())
    }
}

/// The stored bars of funds and bonds.
#[derive(Debug, Clone)]
pub struct InstrumentStore {
    pool: SqlitePool,
}

impl InstrumentStore {
    pub fn new(pool: SqlitePool) -> Self {
        Self { pool }
    }

    /// Stores `bars` of `code` (a day already stored is replaced); returns how many days
    /// were not stored before. Bars without a usable close are left out.
    pub async fn save(
        &self,
        code: &str,
        bars: &[Bar],
        source: &str,
        now: DateTime<Utc>,
    ) -> Result<u32, InstrumentError> {
        let mut tx = self.pool.begin().await?;
        let mut new = 0;
        for b in bars {
            let Some(close_e6) = price_e6(b.close) else {
                continue;
            };
            let existed: Option<i64> = sqlx::query_scalar(
                "SELECT 1 FROM market_instrument_bars WHERE code = ?1 AND date = ?2",
            )
            .bind(code)
            .bind(i64::from(b.date))
            .fetch_optional(&mut *tx)
            .await?;
            if existed.is_none() {
                new += 1;
            }
            sqlx::query(
                "INSERT INTO market_instrument_bars
                   (code, date, open, high, low, close, close_e6, volume_lots, amount, source, fetched_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                 ON CONFLICT(code, date) DO UPDATE SET open = excluded.open, high = excluded.high,
                   low = excluded.low, close = excluded.close, close_e6 = excluded.close_e6,
                   volume_lots = excluded.volume_lots, amount = excluded.amount,
                   source = excluded.source, fetched_at = excluded.fetched_at",
            )
            .bind(code)
            .bind(i64::from(b.date))
            .bind(b.open)
            .bind(b.high)
            .bind(b.low)
            .bind(b.close)
            .bind(close_e6)
            // the kline parser counts shares (lots × 100); stored as the source's lots
            .bind(b.volume / 100.0)
            .bind(b.amount)
            .bind(source)
            .bind(now.to_rfc3339())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(new)
    }

    /// `code`'s closes, oldest first: (`YYYYMMDD`, millionths of a yuan).
    pub async fn closes(&self, code: &str) -> Result<Vec<(u32, i64)>, InstrumentError> {
        let rows = sqlx::query(
            "SELECT date, close_e6 FROM market_instrument_bars WHERE code = ?1 ORDER BY date",
        )
        .bind(code)
        .fetch_all(&self.pool)
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let date: i64 = r.try_get("date")?;
            let close: i64 = r.try_get("close_e6")?;
            if let Ok(date) = u32::try_from(date) {
                out.push((date, close));
            }
        }
        Ok(out)
    }

    /// The last day stored for `code`.
    pub async fn last_date(&self, code: &str) -> Result<Option<u32>, InstrumentError> {
        let d: Option<i64> =
            sqlx::query_scalar("SELECT MAX(date) FROM market_instrument_bars WHERE code = ?1")
                .bind(code)
                .fetch_one(&self.pool)
                .await?;
        Ok(d.and_then(|d| u32::try_from(d).ok()))
    }

    async fn record_asked(
        &self,
        code: &str,
        now: DateTime<Utc>,
        outcome: &str,
    ) -> Result<(), InstrumentError> {
        sqlx::query(
            "INSERT INTO market_instrument_asked (code, asked_at, outcome) VALUES (?1, ?2, ?3)
             ON CONFLICT(code) DO UPDATE SET asked_at = excluded.asked_at, outcome = excluded.outcome",
        )
        .bind(code)
        .bind(now.to_rfc3339())
        .bind(outcome)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}

/// What one code's sync did.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InstrumentSyncStatus {
    /// Bars came; `new_bars` of them were days not stored before.
    Updated {
        new_bars: u32,
        fetched: u32,
        /// Rows the source sent that were refused, with why.
        rejected: Vec<String>,
    },
    /// The last closed day is stored already (or the source had nothing after it).
    UpToDate,
    /// Not a fund or bond this source has bars for (a repo, or a code whose exchange its
    /// digits do not settle).
    NotSupported {
        reason: String,
    },
    Failed {
        error: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct InstrumentSyncOutcome {
    pub code: String,
    pub status: InstrumentSyncStatus,
    /// YYYY-MM-DD of the last close stored after the sync, if any.
    pub last_close: Option<String>,
}

/// A code the ledger has held, with the exchange its broker statement named (a 交易市场 or
/// 股东代码 column), if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerCode {
    pub code: String,
    pub stated: Option<Exchange>,
}

impl LedgerCode {
    /// A code no statement named an exchange for.
    pub fn bare(code: &str) -> Self {
        Self {
            code: code.to_owned(),
            stated: None,
        }
    }
}

/// The exchange whose closes value `code`: the one its digits settle (funds, and the bonds
/// whose prefix belongs to one exchange), else — for a bond whose prefix both exchanges
/// use (10xxxx, 13xxxx other than 131 repos) — the one the statement named. `None`: no
/// closes can be asked for (a repo, a stock, or an ambiguous bond nothing named).
pub fn instrument_exchange(code: &str, stated: Option<Exchange>) -> Option<Exchange> {
    fund_or_bond_exchange(code).or_else(|| match Instrument::of_code(code) {
        Instrument::Bond => stated.filter(|e| matches!(e, Exchange::SH | Exchange::SZ)),
        _ => None,
    })
}

/// Why `code` gets no closes here (for a code [`instrument_exchange`] gives none for).
pub fn no_closes_reason(code: &str) -> String {
    match Instrument::of_code(code) {
        Instrument::Bond => format!(
            "{code} 的代码不能确定沪深（10、13 开头的债券两个交易所都有），对账单也没有写明交易市场或股东代码，不估值"
        ),
        Instrument::Repo => format!("{code} 是逆回购，按本金计值，不取日线"),
        _ => format!("{code} 不是可取日线的基金或债券代码"),
    }
}

/// The fund source for `md`: Eastmoney when it is among the configured sources (none
/// offline, `WYCKOFF_OFFLINE=1`).
pub fn fund_source(md: &MarketData) -> Option<EastmoneyFund> {
    md.source_names()
        .contains(&"eastmoney")
        .then(EastmoneyFund::from_env)
}

/// The last day whose close is final at `now`: today from 15:30 Beijing time, else the
/// day before (a bar asked for during the session would still be forming).
pub fn last_closed_day(now: DateTime<Utc>) -> u32 {
    let bj = now + ChronoDuration::hours(8);
    let day = if bj.hour() * 60 + bj.minute() >= 15 * 60 + 30 {
        bj.date_naive()
    } else {
        bj.date_naive() - ChronoDuration::days(1)
    };
    to_yyyymmdd(day)
}

/// Brings the bars of each fund or bond among `codes` up to the last closed day: from the
/// last stored day (asked again, so a correction replaces it) or from listing.
/// `progress` hears each code as its turn comes (its index among `codes`).
pub async fn sync_instruments(
    md: &MarketData,
    codes: &[LedgerCode],
    source: Option<&EastmoneyFund>,
    progress: &mut (dyn FnMut(usize, &str) + Send),
) -> Result<Vec<InstrumentSyncOutcome>, InstrumentError> {
    let store = InstrumentStore::new(md.pool().clone());
    let now = md.clock().now();
    let end = last_closed_day(now);
    let mut out = Vec::with_capacity(codes.len());
    let mut asked_before = false;
    for (i, lc) in codes.iter().enumerate() {
        let code = &lc.code;
        progress(i, code);
        let last = store.last_date(code).await?;
        let status = if let Some(exchange) = instrument_exchange(code, lc.stated) {
            if last.is_some_and(|d| d >= end) {
                InstrumentSyncStatus::UpToDate
            } else if let Some(src) = source {
                if asked_before && !src.interval.is_zero() {
                    tokio::time::sleep(src.interval).await;
                }
                asked_before = true;
                let start = last.unwrap_or(EARLIEST);
                let status = match src.daily_bars(code, exchange, start, end).await {
                    Ok(f) => {
                        let new_bars = store.save(code, &f.bars, SOURCE_NAME, now).await?;
                        if new_bars == 0 {
                            InstrumentSyncStatus::UpToDate
                        } else {
                            InstrumentSyncStatus::Updated {
                                new_bars,
                                fetched: u32::try_from(f.bars.len()).unwrap_or(u32::MAX),
                                rejected: f.rejected,
                            }
                        }
                    }
                    Err(SourceError::Empty) if last.is_some() => InstrumentSyncStatus::UpToDate,
                    Err(e) => InstrumentSyncStatus::Failed {
                        error: format!("东方财富：{e}"),
                    },
                };
                let said = match &status {
                    InstrumentSyncStatus::Updated { .. } => "updated".to_owned(),
                    InstrumentSyncStatus::Failed { error } => error.clone(),
                    _ => "unchanged".to_owned(),
                };
                store.record_asked(code, now, &said).await?;
                status
            } else {
                InstrumentSyncStatus::Failed {
                    error: "没有可用的东方财富数据源（离线，或未在数据源中启用）".to_owned(),
                }
            }
        } else {
            InstrumentSyncStatus::NotSupported {
                reason: no_closes_reason(code),
            }
        };
        out.push(InstrumentSyncOutcome {
            code: code.clone(),
            status,
            last_close: store.last_date(code).await?.map(iso),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn a_day_is_closed_from_half_past_three_beijing() {
        for ((h, m), want) in [
            ((7, 29), 20240805),  // 15:29 Beijing: still the day before
            ((7, 30), 20240806),  // 15:30
            ((0, 0), 20240805),   // 08:00
            ((16, 30), 20240806), // 00:30 on the 7th: the 6th is the last closed day
        ] {
            let now = Utc.with_ymd_and_hms(2024, 8, 6, h, m, 0).unwrap();
            assert_eq!(last_closed_day(now), want, "{h}:{m} UTC");
        }
    }

    #[test]
    fn the_exchange_a_code_is_valued_on() {
        use Exchange::{BJ, SH, SZ};
        for (code, stated, want) in [
            // the digits settle it, whatever a statement says
            ("510300", None, Some(SH)),
            ("510300", Some(SZ), Some(SH)),
            ("159915", None, Some(SZ)),
            ("113050", Some(SZ), Some(SH)),
            ("127050", None, Some(SZ)),
            // 10xxxx / 13xxxx bonds: only what the statement named
            ("101234", None, None),
            ("101234", Some(SH), Some(SH)),
            ("101234", Some(SZ), Some(SZ)),
            ("132018", Some(SH), Some(SH)),
            ("138001", None, None),
            ("101234", Some(BJ), None),
            // repos, stocks and other codes never
            ("131810", Some(SZ), None),
            ("204001", Some(SH), None),
            ("600519", Some(SH), None),
            ("732001", Some(SH), None),
        ] {
            assert_eq!(instrument_exchange(code, stated), want, "{code} {stated:?}");
        }
        assert!(no_closes_reason("101234").contains("交易市场或股东代码"));
        assert!(no_closes_reason("131810").contains("本金"));
    }
}
