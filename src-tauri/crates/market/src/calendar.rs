//! The Shanghai exchange trading calendar, from the bundled list of trading days.

use chrono::{Datelike, Duration, NaiveDateTime, NaiveTime, Weekday};

use crate::date::{from_yyyymmdd, to_yyyymmdd};

/// The exchange closes at 15:00 Shanghai time; a day's bar is final only after that.
pub const MARKET_CLOSE: (u32, u32) = (15, 0);

#[derive(Debug, thiserror::Error)]
pub enum CalendarError {
    #[error("trading calendar is not a JSON array of YYYYMMDD strings: {0}")]
    Json(#[from] serde_json::Error),
    #[error("trading calendar holds an invalid date: {0:?}")]
    BadDate(String),
    #[error("trading calendar is empty")]
    Empty,
}

#[derive(Debug, Clone)]
pub struct TradingCalendar {
    /// Sorted, unique trading days as YYYYMMDD.
    days: Vec<u32>,
}

impl TradingCalendar {
    pub fn from_days(mut days: Vec<u32>) -> Result<Self, CalendarError> {
        if days.is_empty() {
            return Err(CalendarError::Empty);
        }
        if let Some(bad) = days.iter().find(|d| from_yyyymmdd(**d).is_none()) {
            return Err(CalendarError::BadDate(bad.to_string()));
        }
        days.sort_unstable();
        days.dedup();
        Ok(Self { days })
    }

    /// Parses the akshare-style JSON list `["19901219", ...]`.
    pub fn from_json(bytes: &[u8]) -> Result<Self, CalendarError> {
        let raw: Vec<String> = serde_json::from_slice(bytes)?;
        let days = raw
            .iter()
            .map(|s| crate::date::parse_date(s).ok_or_else(|| CalendarError::BadDate(s.clone())))
            .collect::<Result<Vec<_>, _>>()?;
        Self::from_days(days)
    }

    pub fn first_day(&self) -> u32 {
        self.days.first().copied().unwrap_or(0)
    }
    pub fn last_day(&self) -> u32 {
        self.days.last().copied().unwrap_or(0)
    }
    pub fn len(&self) -> usize {
        self.days.len()
    }
    pub fn is_empty(&self) -> bool {
        self.days.is_empty()
    }

    /// Whether the list knows about this date; outside it we fall back to weekdays.
    pub fn covers(&self, d: u32) -> bool {
        d >= self.first_day() && d <= self.last_day()
    }

    pub fn is_trading_day(&self, d: u32) -> bool {
        if self.covers(d) {
            self.days.binary_search(&d).is_ok()
        } else if d > self.last_day() {
            // beyond the bundled list (it ends 2026-12-31): holidays are unknown, so
            // treat weekdays as trading days rather than declaring the market closed
            from_yyyymmdd(d).is_some_and(|nd| !matches!(nd.weekday(), Weekday::Sat | Weekday::Sun))
        } else {
            false
        }
    }

    /// The last trading day strictly before `d`.
    pub fn previous_trading_day(&self, d: u32) -> Option<u32> {
        if d > self.last_day() {
            let mut nd = from_yyyymmdd(d)?;
            loop {
                nd -= Duration::days(1);
                let v = to_yyyymmdd(nd);
                if v <= self.last_day() {
                    return Some(self.last_day());
                }
                if self.is_trading_day(v) {
                    return Some(v);
                }
            }
        }
        let i = self.days.partition_point(|x| *x < d);
        i.checked_sub(1).map(|i| self.days[i])
    }

    /// The first trading day strictly after `d`.
    pub fn next_trading_day(&self, d: u32) -> Option<u32> {
        let i = self.days.partition_point(|x| *x <= d);
        if let Some(v) = self.days.get(i) {
            return Some(*v);
        }
        let mut nd = from_yyyymmdd(d.max(self.last_day()))?;
        for _ in 0..14 {
            nd += Duration::days(1);
            let v = to_yyyymmdd(nd);
            if self.is_trading_day(v) {
                return Some(v);
            }
        }
        None
    }

    /// Trading days in `[start, end]`, inclusive (only those the bundled list knows).
    pub fn trading_days_between(&self, start: u32, end: u32) -> &[u32] {
        if start > end {
            return &[];
        }
        let a = self.days.partition_point(|x| *x < start);
        let b = self.days.partition_point(|x| *x <= end);
        &self.days[a..b]
    }

    /// Number of trading days in `[start, end]`, including weekday estimates past the list.
    pub fn count_trading_days(&self, start: u32, end: u32) -> usize {
        let mut n = self.trading_days_between(start, end).len();
        if end > self.last_day() {
            // past the list: count weekdays (see `is_trading_day`)
            let Some(last) = from_yyyymmdd(self.last_day()) else {
                return n;
            };
            let mut nd = last + Duration::days(1);
            if let Some(s) = from_yyyymmdd(start) {
                nd = nd.max(s);
            }
            while to_yyyymmdd(nd) <= end {
                if self.is_trading_day(to_yyyymmdd(nd)) {
                    n += 1;
                }
                nd += Duration::days(1);
            }
        }
        n
    }

    /// The latest trading day whose session has closed at Shanghai wall-clock `now`.
    pub fn last_closed_trading_day(&self, now: NaiveDateTime) -> Option<u32> {
        let today = to_yyyymmdd(now.date());
        let close = NaiveTime::from_hms_opt(MARKET_CLOSE.0, MARKET_CLOSE.1, 0)?;
        if self.is_trading_day(today) && now.time() >= close {
            Some(today)
        } else {
            self.previous_trading_day(today)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn cal() -> TradingCalendar {
        crate::bundled::calendar().unwrap()
    }

    fn at(d: u32, h: u32, m: u32) -> NaiveDateTime {
        from_yyyymmdd(d).unwrap().and_hms_opt(h, m, 0).unwrap()
    }

    #[test]
    fn bundled_calendar_matches_provenance() {
        let c = cal();
        assert_eq!(c.len(), 8797);
        assert_eq!(c.first_day(), 19901219);
        assert_eq!(c.last_day(), 20261231);
    }

    #[test]
    fn trading_day_table() {
        let c = cal();
        let cases = [
            (20240102, true),  // Tuesday after New Year
            (20240101, false), // New Year holiday
            (20240106, false), // Saturday
            (20241001, false), // National Day
            (20241008, true),  // first day after Golden Week
            (20200616, true),
            (19901218, false), // before the exchange opened
        ];
        for (d, want) in cases {
            assert_eq!(c.is_trading_day(d), want, "{d}");
        }
    }

    #[test]
    fn previous_and_next_skip_holidays() {
        let c = cal();
        assert_eq!(c.previous_trading_day(20241008), Some(20240930));
        assert_eq!(c.next_trading_day(20240930), Some(20241008));
        assert_eq!(c.previous_trading_day(20240102), Some(20231229));
        assert_eq!(c.next_trading_day(20240105), Some(20240108));
        assert_eq!(c.previous_trading_day(19901219), None);
        // beyond the list: weekdays
        assert_eq!(c.next_trading_day(20261231), Some(20270101));
        assert_eq!(c.previous_trading_day(20270104), Some(20270101));
        assert_eq!(c.previous_trading_day(20270101), Some(20261231));
    }

    #[test]
    fn between_is_inclusive() {
        let c = cal();
        assert_eq!(
            c.trading_days_between(20240926, 20241009),
            &[20240926, 20240927, 20240930, 20241008, 20241009]
        );
        assert!(c.trading_days_between(20241001, 20241007).is_empty());
        assert!(c.trading_days_between(20241009, 20240926).is_empty());
        assert_eq!(c.count_trading_days(20261230, 20270105), 2 + 3);
    }

    #[test]
    fn last_closed_day_uses_the_15_00_close() {
        let c = cal();
        // Tuesday 2024-01-02
        assert_eq!(
            c.last_closed_trading_day(at(20240102, 14, 59)),
            Some(20231229)
        );
        assert_eq!(
            c.last_closed_trading_day(at(20240102, 15, 0)),
            Some(20240102)
        );
        // Saturday → Friday
        assert_eq!(
            c.last_closed_trading_day(at(20240106, 10, 0)),
            Some(20240105)
        );
        // holiday
        assert_eq!(
            c.last_closed_trading_day(at(20241003, 18, 0)),
            Some(20240930)
        );
        let _ = NaiveDate::from_ymd_opt(2024, 1, 1);
    }

    #[test]
    fn rejects_bad_json() {
        assert!(TradingCalendar::from_json(b"[\"20230230\"]").is_err());
        assert!(TradingCalendar::from_json(b"[]").is_err());
        assert!(TradingCalendar::from_json(b"{").is_err());
    }
}
