//! Injected time, so staleness, backoff and the circuit breaker are tested without sleeping.

use std::sync::Mutex;

use chrono::{DateTime, FixedOffset, NaiveDateTime, Utc};

/// China has used UTC+8 all year since 1991 (no DST), so a fixed offset is exact for
/// every date the trading calendar covers and avoids pulling in a tz database.
pub const SHANGHAI_OFFSET_SECS: i32 = 8 * 3600;

pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;

    /// Wall-clock time at the exchange (Asia/Shanghai).
    fn now_shanghai(&self) -> NaiveDateTime {
        to_shanghai(self.now())
    }
}

pub fn to_shanghai(t: DateTime<Utc>) -> NaiveDateTime {
    match FixedOffset::east_opt(SHANGHAI_OFFSET_SECS) {
        Some(off) => t.with_timezone(&off).naive_local(),
        // unreachable for a constant in range; fall back to UTC rather than panic
        None => t.naive_utc(),
    }
}

#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to; for tests and replay.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<DateTime<Utc>>,
}

impl ManualClock {
    pub fn new(now: DateTime<Utc>) -> Self {
        Self {
            now: Mutex::new(now),
        }
    }

    /// A clock set to a Shanghai wall-clock time.
    pub fn at_shanghai(local: NaiveDateTime) -> Self {
        let utc = local - chrono::Duration::seconds(i64::from(SHANGHAI_OFFSET_SECS));
        Self::new(DateTime::from_naive_utc_and_offset(utc, Utc))
    }

    pub fn set(&self, now: DateTime<Utc>) {
        if let Ok(mut g) = self.now.lock() {
            *g = now;
        }
    }

    pub fn advance(&self, by: std::time::Duration) {
        if let Ok(mut g) = self.now.lock() {
            *g += chrono::Duration::from_std(by).unwrap_or(chrono::Duration::zero());
        }
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        match self.now.lock() {
            Ok(g) => *g,
            Err(p) => *p.into_inner(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    #[test]
    fn shanghai_is_utc_plus_8() {
        let local = NaiveDate::from_ymd_opt(2024, 1, 2)
            .unwrap()
            .and_hms_opt(15, 0, 0)
            .unwrap();
        let c = ManualClock::at_shanghai(local);
        assert_eq!(c.now().format("%H").to_string(), "07");
        assert_eq!(c.now_shanghai(), local);
        c.advance(std::time::Duration::from_secs(3600));
        assert_eq!(c.now_shanghai().format("%H").to_string(), "16");
    }
}
