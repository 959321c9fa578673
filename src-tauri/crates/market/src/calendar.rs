//! The Shanghai exchange trading calendar: the bundled list of trading days, extended by
//! days learned later (index bars after the fact), and past that an assumption that is
//! always said as such.

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
    /// The last day whose open or closed state is known (a holiday may end the list, so
    /// this can be later than the last trading day).
    known_through: u32,
}

/// Days the exchange is closed every year by law, whatever the year's notice says:
/// New Year's Day, Labour Day and the first three days of National Day. Past the known
/// calendar they are assumed closed; every other weekday is assumed open.
const FIXED_HOLIDAYS: [(u32, u32); 5] = [(1, 1), (5, 1), (10, 1), (10, 2), (10, 3)];

/// Whether a day past the known calendar is taken as a trading day: a weekday that is
/// not a fixed holiday.
pub fn assumed_open(d: u32) -> bool {
    from_yyyymmdd(d).is_some_and(|nd| {
        !matches!(nd.weekday(), Weekday::Sat | Weekday::Sun)
            && !FIXED_HOLIDAYS.contains(&(nd.month(), nd.day()))
    })
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
        let known_through = days.last().copied().unwrap_or(0);
        Ok(Self {
            days,
            known_through,
        })
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

    /// Extends the calendar with learned days `(YYYYMMDD, open)`. Only a run of days that
    /// continues the known calendar is taken (a weekend day may be left out: it is
    /// closed); a gap leaves what follows it unknown. Returns the new last known day.
    pub fn extend_known(&mut self, learned: &[(u32, bool)]) -> u32 {
        let mut learned: Vec<(u32, bool)> = learned
            .iter()
            .copied()
            .filter(|(d, _)| *d > self.known_through && from_yyyymmdd(*d).is_some())
            .collect();
        learned.sort_unstable();
        learned.dedup_by_key(|(d, _)| *d);
        for (day, open) in learned {
            let Some(next) = self.first_unknown_weekday() else {
                break;
            };
            if day > next {
                break;
            }
            if open {
                self.days.push(day);
            }
            self.known_through = day;
        }
        self.known_through
    }

    /// The first weekday after the known calendar.
    fn first_unknown_weekday(&self) -> Option<u32> {
        let mut nd = from_yyyymmdd(self.known_through)?;
        loop {
            nd += Duration::days(1);
            if !matches!(nd.weekday(), Weekday::Sat | Weekday::Sun) {
                return Some(to_yyyymmdd(nd));
            }
        }
    }

    pub fn first_day(&self) -> u32 {
        self.days.first().copied().unwrap_or(0)
    }
    /// The last known trading day.
    pub fn last_day(&self) -> u32 {
        self.days.last().copied().unwrap_or(0)
    }
    /// The last day whose state is known; later days are assumed ([`assumed_open`]).
    pub fn known_through(&self) -> u32 {
        self.known_through
    }
    pub fn len(&self) -> usize {
        self.days.len()
    }
    pub fn is_empty(&self) -> bool {
        self.days.is_empty()
    }

    /// Whether the calendar knows about this date; past it, days are assumed.
    pub fn covers(&self, d: u32) -> bool {
        d >= self.first_day() && d <= self.known_through
    }

    /// Whether `d` is past the known calendar, so its state is assumed.
    pub fn is_assumed(&self, d: u32) -> bool {
        d > self.known_through
    }

    pub fn is_trading_day(&self, d: u32) -> bool {
        if self.covers(d) {
            self.days.binary_search(&d).is_ok()
        } else if d > self.known_through {
            // Holidays past the known calendar are unknown beyond the fixed ones: the
            // other weekdays are taken as trading days rather than declaring the market
            // closed, and callers say the day was assumed.
            assumed_open(d)
        } else {
            false
        }
    }

    /// The last trading day strictly before `d`.
    pub fn previous_trading_day(&self, d: u32) -> Option<u32> {
        if d > self.known_through {
            let mut nd = from_yyyymmdd(d)?;
            loop {
                nd -= Duration::days(1);
                let v = to_yyyymmdd(nd);
                if v <= self.known_through {
                    return self.days.last().copied();
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
        let mut nd = from_yyyymmdd(d.max(self.known_through))?;
        for _ in 0..14 {
            nd += Duration::days(1);
            let v = to_yyyymmdd(nd);
            if self.is_trading_day(v) {
                return Some(v);
            }
        }
        None
    }

    /// Trading days in `[start, end]`, inclusive (only those the calendar knows).
    pub fn trading_days_between(&self, start: u32, end: u32) -> &[u32] {
        if start > end {
            return &[];
        }
        let a = self.days.partition_point(|x| *x < start);
        let b = self.days.partition_point(|x| *x <= end);
        &self.days[a..b]
    }

    /// Number of trading days in `[start, end]`, including assumed days past the known
    /// calendar (see `is_trading_day`).
    pub fn count_trading_days(&self, start: u32, end: u32) -> usize {
        let mut n = self.trading_days_between(start, end).len();
        if end > self.known_through {
            let Some(last) = from_yyyymmdd(self.known_through) else {
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
        // beyond the list: weekdays but the fixed holidays (New Year's Day)
        assert_eq!(c.next_trading_day(20261231), Some(20270104));
        assert_eq!(c.previous_trading_day(20270104), Some(20261231));
        assert_eq!(c.previous_trading_day(20270105), Some(20270104));
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
        assert_eq!(c.count_trading_days(20261230, 20270105), 2 + 2);
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
    fn past_the_known_calendar_weekdays_but_the_fixed_holidays_are_assumed_open() {
        let c = cal();
        let cases = [
            (20261231, true, false), // known: the bundled list's last day
            (20270101, false, true), // New Year's Day, assumed closed
            (20270102, false, true), // Saturday
            (20270104, true, true),  // Monday, assumed open
            (20270501, false, true), // Labour Day
            (20271001, false, true), // National Day
            (20271004, true, true),  // past the fixed days: assumed open
        ];
        for (d, open, assumed) in cases {
            assert_eq!(c.is_trading_day(d), open, "{d}");
            assert_eq!(c.is_assumed(d), assumed, "{d}");
        }
    }

    #[test]
    fn learned_days_extend_the_calendar_only_while_they_continue_it() {
        let mut c = cal();
        // 2027-01-01 (Friday) closed, 2027-01-04..06 open; 2027-01-08 follows a gap (the
        // 7th is unknown), so it is not taken.
        let learned = [
            (20270101, false),
            (20270104, true),
            (20270105, true),
            (20270106, true),
            (20270108, true),
        ];
        assert_eq!(c.extend_known(&learned), 20270106);
        assert_eq!(c.known_through(), 20270106);
        assert!(!c.is_trading_day(20270101));
        assert!(!c.is_assumed(20270105));
        assert!(c.is_trading_day(20270105));
        assert!(c.is_assumed(20270107));
        assert_eq!(c.last_day(), 20270106);
        assert_eq!(c.next_trading_day(20261231), Some(20270104));
        // A later pass fills the gap and goes on.
        assert_eq!(
            c.extend_known(&[(20270107, false), (20270108, true)]),
            20270108
        );
        assert!(!c.is_trading_day(20270107));
        // Days already known are not learned again (the bundled list wins).
        assert_eq!(c.extend_known(&[(20261231, false)]), 20270108);
        assert!(c.is_trading_day(20261231));
    }

    #[test]
    fn a_holiday_at_the_end_of_what_is_known_is_still_known() {
        let mut c = cal();
        c.extend_known(&[(20270101, false)]);
        assert_eq!(c.known_through(), 20270101);
        assert_eq!(c.last_day(), 20261231);
        assert!(!c.is_assumed(20270101));
        assert!(c.is_assumed(20270104));
        assert_eq!(c.previous_trading_day(20270104), Some(20261231));
    }

    #[test]
    fn rejects_bad_json() {
        assert!(TradingCalendar::from_json(b"[\"20230230\"]").is_err());
        assert!(TradingCalendar::from_json(b"[]").is_err());
        assert!(TradingCalendar::from_json(b"{").is_err());
    }
}
