//! Market caps as of past days: each stock's caps on sampled days, so the size gates of an
//! as-of screen or a backtest read the stock's size then ([`CapSample`], moved by price to
//! the day asked in the engine) instead of today's. Samples come from a stock-history
//! vendor's whole-market caps of a day (Tushare `daily_basic`, quarter ends over the
//! cached span) and from every stock list a sync fetches that carries caps (today's).

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use sqlx::SqlitePool;
use wyckoff_engine::CapSample;

use crate::cache::CacheError;

/// Bytes of one encoded sample: u32 date, f32 亿元.
const SAMPLE_BYTES: usize = 8;

pub struct CapHistoryStore {
    pool: SqlitePool,
}

impl CapHistoryStore {
    pub fn new(pool: SqlitePool) -> Self {
        Self { pool }
    }

    /// Records the whole market's caps of `day` from `source` (six-digit code, 亿元),
    /// replacing any sample of a stock on that day; returns the stocks recorded.
    pub async fn record_day(
        &self,
        day: u32,
        caps: &[(String, f64)],
        source: &str,
        now: DateTime<Utc>,
    ) -> Result<usize, CacheError> {
        let caps: Vec<&(String, f64)> = caps
            .iter()
            .filter(|(_, cap)| cap.is_finite() && *cap > 0.0)
            .collect();
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        let stored: Vec<(String, Vec<u8>)> =
            sqlx::query_as("SELECT code, samples FROM market_cap_history")
                .fetch_all(&mut *tx)
                .await?;
        let mut stored: HashMap<String, Vec<u8>> = stored.into_iter().collect();
        let recorded_at = now.to_rfc3339();
        for (code, cap) in &caps {
            let mut samples = match stored.remove(code) {
                Some(blob) => decode(&blob).map_err(|e| {
                    CacheError::StockList(format!("market cap history of {code}: {e}"))
                })?,
                None => Vec::new(),
            };
            insert(
                &mut samples,
                CapSample {
                    date: day,
                    cap_yi: *cap,
                },
            );
            sqlx::query(
                "INSERT INTO market_cap_history (code, samples, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(code) DO UPDATE SET samples = excluded.samples,
                   updated_at = excluded.updated_at",
            )
            .bind(code.as_str())
            .bind(encode(&samples))
            .bind(&recorded_at)
            .execute(&mut *tx)
            .await?;
        }
        sqlx::query(
            "INSERT OR REPLACE INTO market_cap_day (day, source, stocks, recorded_at)
             VALUES (?1, ?2, ?3, ?4)",
        )
        .bind(i64::from(day))
        .bind(source)
        .bind(i64::try_from(caps.len()).unwrap_or(i64::MAX))
        .bind(&recorded_at)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(caps.len())
    }

    /// Every stock's samples, ascending by date. A row that does not decode is left out
    /// (its stock reads today's cap, and says so) and logged.
    pub async fn load(&self) -> Result<HashMap<String, Vec<CapSample>>, CacheError> {
        let rows: Vec<(String, Vec<u8>)> =
            sqlx::query_as("SELECT code, samples FROM market_cap_history")
                .fetch_all(&self.pool)
                .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(code, blob)| match decode(&blob) {
                Ok(samples) => Some((code, samples)),
                Err(e) => {
                    tracing::warn!(%code, error = %e, "damaged market cap history left out");
                    None
                }
            })
            .collect())
    }

    /// The days whose whole-market caps are recorded.
    pub async fn recorded_days(&self) -> Result<BTreeSet<u32>, CacheError> {
        let days: Vec<i64> = sqlx::query_scalar("SELECT day FROM market_cap_day")
            .fetch_all(&self.pool)
            .await?;
        Ok(days
            .into_iter()
            .filter_map(|d| u32::try_from(d).ok())
            .collect())
    }
}

/// Puts `sample` in date order, replacing one of the same day.
fn insert(samples: &mut Vec<CapSample>, sample: CapSample) {
    match samples.binary_search_by_key(&sample.date, |s| s.date) {
        Ok(i) => samples[i] = sample,
        Err(i) => samples.insert(i, sample),
    }
}

fn encode(samples: &[CapSample]) -> Vec<u8> {
    let mut out = Vec::with_capacity(samples.len() * SAMPLE_BYTES);
    for s in samples {
        out.extend_from_slice(&s.date.to_le_bytes());
        // f32 keeps a cap to 7 significant digits: far finer than a gate needs
        out.extend_from_slice(&(s.cap_yi as f32).to_le_bytes());
    }
    out
}

fn decode(blob: &[u8]) -> Result<Vec<CapSample>, String> {
    if !blob.len().is_multiple_of(SAMPLE_BYTES) {
        return Err(format!(
            "{} bytes is not a whole number of {SAMPLE_BYTES}-byte samples",
            blob.len()
        ));
    }
    let mut out: Vec<CapSample> = Vec::with_capacity(blob.len() / SAMPLE_BYTES);
    for chunk in blob.chunks_exact(SAMPLE_BYTES) {
        let (date, cap) = chunk.split_at(4);
        let date = u32::from_le_bytes([date[0], date[1], date[2], date[3]]);
        let cap_yi = f64::from(f32::from_le_bytes([cap[0], cap[1], cap[2], cap[3]]));
        if !(crate::date::is_valid_yyyymmdd(date) && cap_yi.is_finite() && cap_yi > 0.0) {
            return Err(format!("sample {date} {cap_yi} is not a day and a cap"));
        }
        if out.last().is_some_and(|last| last.date >= date) {
            return Err(format!("sample {date} is out of order"));
        }
        out.push(CapSample { date, cap_yi });
    }
    Ok(out)
}

/// The last trading day of each calendar quarter in `days` (ascending trading days).
pub fn quarter_ends(days: &[u32]) -> Vec<u32> {
    let quarter = |d: u32| (d / 10_000, ((d / 100) % 100 - 1) / 3);
    let mut out: Vec<u32> = Vec::new();
    for &d in days {
        match out.last_mut() {
            Some(last) if quarter(*last) == quarter(d) => *last = d,
            _ => out.push(d),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(date: u32, cap_yi: f64) -> CapSample {
        CapSample { date, cap_yi }
    }

    #[test]
    fn samples_round_trip_in_date_order_and_a_day_is_replaced() {
        let mut v = Vec::new();
        for x in [s(20190131, 12.5), s(20181228, 10.0), s(20190131, 13.0)] {
            insert(&mut v, x);
        }
        assert_eq!(v, vec![s(20181228, 10.0), s(20190131, 13.0)]);
        assert_eq!(decode(&encode(&v)).unwrap(), v);
    }

    #[test]
    fn a_damaged_blob_is_refused_with_why() {
        // (blob, what the error names)
        let good = encode(&[s(20190131, 12.5)]);
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (good[..7].to_vec(), "whole number"),
            (
                [&20190231u32.to_le_bytes()[..], &1f32.to_le_bytes()[..]].concat(),
                "not a day",
            ),
            (
                [&20190131u32.to_le_bytes()[..], &(-1f32).to_le_bytes()[..]].concat(),
                "not a day and a cap",
            ),
            ([good.clone(), good].concat(), "out of order"),
        ];
        for (blob, why) in cases {
            let e = decode(&blob).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn quarter_ends_are_each_quarters_last_trading_day() {
        let days = [
            20181227, 20181228, 20190102, 20190329, 20190401, 20190628, 20190701,
        ];
        assert_eq!(
            quarter_ends(&days),
            vec![20181228, 20190329, 20190628, 20190701]
        );
        assert_eq!(quarter_ends(&[]), Vec::<u32>::new());
    }
}
