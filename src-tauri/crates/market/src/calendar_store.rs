//! The trading calendar as stored: the bundled list, extended by days learned from the
//! SSE Composite's cached bars after the fact, so schedules, screens and freshness stop
//! assuming once the market has shown which weekdays it was closed.

use std::sync::OnceLock;

use chrono::{Datelike, Duration, Weekday};
use serde::Serialize;
use sqlx::SqlitePool;

use crate::bundled;
use crate::cache::{BarTable, CacheStore};
use crate::calendar::TradingCalendar;
use crate::code::IndexCode;
use crate::date::{from_yyyymmdd, to_yyyymmdd};
use crate::facade::MarketError;

/// Where learned days come from.
pub const INDEX_SOURCE: &str = "index bars of 000001.SH (SSE Composite)";

/// What the calendar knows and from where (`wyckoff doctor`, `data sync`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CalendarInfo {
    /// The bundled list's last day.
    pub bundled_through: u32,
    /// The last day whose state is known; later days are assumed (weekdays but the fixed
    /// holidays are taken as open).
    pub known_through: u32,
    /// Where days after the bundled list came from, when any were learned.
    pub learned_from: Option<String>,
    /// Days learned by this call (`data sync`), else 0.
    pub learned_now: usize,
}

/// The bundled calendar, decoded once per process (every schedule pass reads the
/// calendar again).
fn bundled_calendar() -> Result<TradingCalendar, MarketError> {
    static BUNDLED: OnceLock<TradingCalendar> = OnceLock::new();
    if let Some(calendar) = BUNDLED.get() {
        return Ok(calendar.clone());
    }
    let calendar = bundled::calendar()?;
    Ok(BUNDLED.get_or_init(|| calendar).clone())
}

/// What the bundled calendar alone knows (a data home with no database yet).
pub fn bundled_info() -> Result<CalendarInfo, MarketError> {
    let through = bundled_calendar()?.known_through();
    Ok(CalendarInfo {
        bundled_through: through,
        known_through: through,
        learned_from: None,
        learned_now: 0,
    })
}

/// The bundled calendar extended by the stored learned days.
pub async fn load(pool: &SqlitePool) -> Result<(TradingCalendar, CalendarInfo), MarketError> {
    let mut calendar = bundled_calendar()?;
    let bundled_through = calendar.known_through();
    let rows: Vec<(i64, bool, String)> =
        sqlx::query_as("SELECT day, open, source FROM trading_calendar_day ORDER BY day")
            .fetch_all(pool)
            .await?;
    let learned: Vec<(u32, bool)> = rows
        .iter()
        .filter_map(|(d, open, _)| u32::try_from(*d).ok().map(|d| (d, *open)))
        .collect();
    let known_through = calendar.extend_known(&learned);
    let learned_from = rows
        .last()
        .filter(|_| known_through > bundled_through)
        .map(|(_, _, source)| source.clone());
    Ok((
        calendar,
        CalendarInfo {
            bundled_through,
            known_through,
            learned_from,
            learned_now: 0,
        },
    ))
}

/// The weekdays after `known_through` up to `last_bar`, each open when the index has a
/// bar that day: what the bars say after the fact.
pub fn days_from_bars(known_through: u32, bar_days: &[u32]) -> Vec<(u32, bool)> {
    let Some(&last_bar) = bar_days.iter().max() else {
        return Vec::new();
    };
    let Some(mut day) = from_yyyymmdd(known_through) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    loop {
        day += Duration::days(1);
        let d = to_yyyymmdd(day);
        if d > last_bar {
            return out;
        }
        if !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
            out.push((d, bar_days.binary_search(&d).is_ok()));
        }
    }
}

/// Learns the days the cached SSE Composite bars settle past the known calendar and
/// stores them with their source. Returns what the calendar knows now.
pub async fn learn_from_index(
    pool: &SqlitePool,
    store: &CacheStore,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<CalendarInfo, MarketError> {
    let (mut calendar, mut info) = load(pool).await?;
    let key = IndexCode::sse_composite().symbol().key();
    let bars = store.load_bars(BarTable::Indices, &key, None).await?.bars;
    // Only a series that reaches back to the last known trading day says anything about
    // the weekdays after it: one fetched from a later start would call them all holidays.
    if !bars.iter().any(|b| b.date == calendar.last_day()) {
        return Ok(info);
    }
    let mut bar_days: Vec<u32> = bars
        .iter()
        .map(|b| b.date)
        .filter(|d| *d > calendar.known_through())
        .collect();
    bar_days.sort_unstable();
    let learned = days_from_bars(calendar.known_through(), &bar_days);
    if learned.is_empty() {
        return Ok(info);
    }
    let at = now.to_rfc3339();
    let mut tx = wyckoff_db::begin_write(pool).await?;
    for (day, open) in &learned {
        sqlx::query(
            "INSERT INTO trading_calendar_day (day, open, source, learned_at) VALUES (?, ?, ?, ?)
             ON CONFLICT(day) DO UPDATE SET open = excluded.open, source = excluded.source,
             learned_at = excluded.learned_at",
        )
        .bind(i64::from(*day))
        .bind(*open)
        .bind(INDEX_SOURCE)
        .bind(&at)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    // What was stored continues the calendar just read: it extends it the same way.
    info.known_through = calendar.extend_known(&learned);
    info.learned_from = Some(INDEX_SOURCE.to_owned());
    info.learned_now = learned.len();
    tracing::info!(
        days = learned.len(),
        known_through = info.known_through,
        "trading calendar extended from index bars"
    );
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wyckoff_engine::Bar;

    fn bar(date: u32) -> Bar {
        Bar {
            date,
            open: 3000.0,
            high: 3010.0,
            low: 2990.0,
            close: 3000.0,
            volume: 1.0e9,
            amount: 1.0e11,
            turnover: None,
        }
    }

    async fn home() -> (tempfile::TempDir, SqlitePool, CacheStore) {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::cache::connect_db(&dir.path().join("wyckoff.db"))
            .await
            .unwrap();
        crate::cache::migrate(&pool).await.unwrap();
        let store = CacheStore::new(pool.clone());
        (dir, pool, store)
    }

    fn at() -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::parse_from_rfc3339("2027-01-07T08:00:00Z")
            .unwrap()
            .to_utc()
    }

    #[tokio::test]
    async fn the_index_bars_after_the_fact_extend_the_stored_calendar_with_their_source() {
        let (_d, pool, store) = home().await;
        let key = IndexCode::sse_composite().symbol().key();
        let days = [20261230, 20261231, 20270104, 20270105, 20270106];
        let bars: Vec<Bar> = days.iter().map(|d| bar(*d)).collect();
        store
            .upsert_bars(BarTable::Indices, &key, &bars, "eastmoney", true)
            .await
            .unwrap();
        let info = learn_from_index(&pool, &store, at()).await.unwrap();
        assert_eq!(info.bundled_through, 20261231);
        assert_eq!(info.known_through, 20270106);
        assert_eq!(info.learned_now, 4);
        assert_eq!(info.learned_from.as_deref(), Some(INDEX_SOURCE));
        // Read back as every process reads it: New Year's Day known closed, the rest open,
        // past the last bar assumed.
        let (calendar, again) = load(&pool).await.unwrap();
        assert_eq!(again.known_through, 20270106);
        assert!(!calendar.is_trading_day(20270101));
        assert!(!calendar.is_assumed(20270101));
        assert!(calendar.is_trading_day(20270105));
        assert!(calendar.is_assumed(20270107));
        // Nothing new: nothing learned again.
        assert_eq!(
            learn_from_index(&pool, &store, at())
                .await
                .unwrap()
                .learned_now,
            0
        );
    }

    #[tokio::test]
    async fn an_index_series_that_starts_after_the_known_calendar_teaches_nothing() {
        let (_d, pool, store) = home().await;
        let key = IndexCode::sse_composite().symbol().key();
        store
            .upsert_bars(
                BarTable::Indices,
                &key,
                &[bar(20270301), bar(20270302)],
                "eastmoney",
                true,
            )
            .await
            .unwrap();
        let info = learn_from_index(&pool, &store, at()).await.unwrap();
        assert_eq!(info.known_through, 20261231);
        assert_eq!(info.learned_now, 0);
        assert_eq!(info.learned_from, None);
    }

    #[test]
    fn weekdays_without_an_index_bar_are_holidays_and_weekends_are_left_out() {
        // 2026-12-31 known; bars on 2027-01-04, 05, 06 and 08: the 1st and the 7th closed.
        let bars = [20270104, 20270105, 20270106, 20270108];
        assert_eq!(
            days_from_bars(20261231, &bars),
            [
                (20270101, false),
                (20270104, true),
                (20270105, true),
                (20270106, true),
                (20270107, false),
                (20270108, true),
            ]
        );
        assert!(days_from_bars(20261231, &[]).is_empty());
    }
}
