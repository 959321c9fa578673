//! When a schedule is due: a time of day on trading days, every day or chosen weekdays,
//! or a five-field cron expression — all in Beijing time (UTC+8). Pure functions over
//! the bundled SSE calendar; past its end, weekdays are assumed and said so.

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use serde::{Deserialize, Serialize};
use wyckoff_market::TradingCalendar;
use wyckoff_market::date::to_yyyymmdd;

/// Which days a time-of-day schedule runs on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Days {
    /// Shanghai exchange trading days (the bundled calendar).
    Trading,
    Daily,
    /// These weekdays, Monday = 1 … Sunday = 7.
    Weekdays {
        days: Vec<u8>,
    },
}

/// When a schedule is due.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum When {
    /// `HH:MM` Beijing time on `days`.
    At { time: String, days: Days },
    /// `minute hour day-of-month month day-of-week`, Beijing time.
    Cron { expr: String },
}

/// One due time of a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Occurrence {
    /// Beijing time.
    pub at: NaiveDateTime,
    /// A trading-days schedule past the bundled calendar's end: weekdays were assumed.
    pub assumed_trading_day: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WhenError {
    #[error("'{0}' is not a time of day: use HH:MM (24-hour, Beijing time), e.g. 09:25")]
    Time(String),
    #[error(
        "'{0}' names no days: use trading, daily, or weekdays like mon,tue,wed,thu,fri,sat,sun"
    )]
    Days(String),
    #[error("cron expression '{expr}': {why}")]
    Cron { expr: String, why: String },
}

/// Parses `HH:MM`.
pub fn parse_time(text: &str) -> Result<NaiveTime, WhenError> {
    let t = text.trim();
    let ok = t.len() == 5 && t.as_bytes()[2] == b':';
    ok.then(|| NaiveTime::parse_from_str(t, "%H:%M").ok())
        .flatten()
        .ok_or_else(|| WhenError::Time(text.to_owned()))
}

/// Parses `trading`, `daily` or a comma list of weekdays (`mon,tue,…`).
pub fn parse_days(text: &str) -> Result<Days, WhenError> {
    let t = text.trim().to_ascii_lowercase();
    match t.as_str() {
        "trading" => return Ok(Days::Trading),
        "daily" => return Ok(Days::Daily),
        _ => {}
    }
    let names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
    let mut days = Vec::new();
    for part in t.split(',').map(str::trim) {
        let n = names
            .iter()
            .position(|n| *n == part)
            .ok_or_else(|| WhenError::Days(text.to_owned()))?;
        days.push(u8::try_from(n + 1).unwrap_or(1));
    }
    days.sort_unstable();
    days.dedup();
    if days.is_empty() {
        return Err(WhenError::Days(text.to_owned()));
    }
    Ok(Days::Weekdays { days })
}

impl When {
    /// Checks the rule (the time, the weekdays, the cron expression).
    pub fn validate(&self) -> Result<(), WhenError> {
        match self {
            When::At { time, days } => {
                parse_time(time)?;
                if let Days::Weekdays { days: d } = days
                    && (d.is_empty() || d.iter().any(|n| !(1..=7).contains(n)))
                {
                    return Err(WhenError::Days(format!("{d:?}")));
                }
                Ok(())
            }
            When::Cron { expr } => Cron::parse(expr).map(|_| ()),
        }
    }

    /// The most recent due time at or before `now` (Beijing), looking back at most
    /// `horizon_days`; `None` when there is none in that window.
    pub fn latest_at_or_before(
        &self,
        now: NaiveDateTime,
        calendar: &TradingCalendar,
        horizon_days: i64,
    ) -> Result<Option<Occurrence>, WhenError> {
        let rule = Rule::of(self)?;
        for back in 0..=horizon_days {
            let day = now.date() - Duration::days(back);
            let Some(assumed) = rule.day_matches(day, calendar) else {
                continue;
            };
            let latest = if back == 0 { Some(now.time()) } else { None };
            if let Some(time) = rule.latest_time(latest) {
                return Ok(Some(Occurrence {
                    at: day.and_time(time),
                    assumed_trading_day: assumed,
                }));
            }
        }
        Ok(None)
    }

    /// The first due time strictly after `now` (Beijing), within a year.
    pub fn next_after(
        &self,
        now: NaiveDateTime,
        calendar: &TradingCalendar,
    ) -> Result<Option<Occurrence>, WhenError> {
        let rule = Rule::of(self)?;
        for ahead in 0..=366 {
            let day = now.date() + Duration::days(ahead);
            let Some(assumed) = rule.day_matches(day, calendar) else {
                continue;
            };
            let after = if ahead == 0 { Some(now.time()) } else { None };
            if let Some(time) = rule.first_time_after(after) {
                return Ok(Some(Occurrence {
                    at: day.and_time(time),
                    assumed_trading_day: assumed,
                }));
            }
        }
        Ok(None)
    }
}

/// A parsed rule.
enum Rule {
    At(NaiveTime, Days),
    Cron(Cron),
}

impl Rule {
    fn of(when: &When) -> Result<Rule, WhenError> {
        when.validate()?;
        Ok(match when {
            When::At { time, days } => Rule::At(parse_time(time)?, days.clone()),
            When::Cron { expr } => Rule::Cron(Cron::parse(expr)?),
        })
    }

    /// `Some(assumed)` when the rule may run on `day`; `assumed` is true for a trading-day
    /// rule past the end of the calendar (a weekday taken as trading).
    fn day_matches(&self, day: NaiveDate, calendar: &TradingCalendar) -> Option<bool> {
        let weekday = day.weekday().number_from_monday();
        match self {
            Rule::At(_, Days::Daily) => Some(false),
            Rule::At(_, Days::Weekdays { days }) => days
                .iter()
                .any(|d| u32::from(*d) == weekday)
                .then_some(false),
            Rule::At(_, Days::Trading) => {
                let d = to_yyyymmdd(day);
                calendar.is_trading_day(d).then_some(calendar.is_assumed(d))
            }
            Rule::Cron(c) => c.day_matches(day).then_some(false),
        }
    }

    /// The latest time of day at or before `bound` (any time when `None`).
    fn latest_time(&self, bound: Option<NaiveTime>) -> Option<NaiveTime> {
        match self {
            Rule::At(t, _) => bound.is_none_or(|b| *t <= b).then_some(*t),
            Rule::Cron(c) => c.times().rev().find(|t| bound.is_none_or(|b| *t <= b)),
        }
    }

    /// The first time of day strictly after `bound` (any time when `None`).
    fn first_time_after(&self, bound: Option<NaiveTime>) -> Option<NaiveTime> {
        match self {
            Rule::At(t, _) => bound.is_none_or(|b| *t > b).then_some(*t),
            Rule::Cron(c) => c.times().find(|t| bound.is_none_or(|b| *t > b)),
        }
    }
}

/// A five-field cron expression: `*`, numbers, `a-b` ranges, `*/n` and `a-b/n` steps,
/// comma lists; day-of-week 0 or 7 = Sunday. As in cron, when both day-of-month and
/// day-of-week are restricted a day matching either runs.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Cron {
    minutes: Vec<u32>,
    hours: Vec<u32>,
    days_of_month: Vec<u32>,
    months: Vec<u32>,
    /// 0 = Sunday … 6 = Saturday.
    days_of_week: Vec<u32>,
    dom_any: bool,
    dow_any: bool,
}

impl Cron {
    fn parse(expr: &str) -> Result<Cron, WhenError> {
        let err = |why: String| WhenError::Cron {
            expr: expr.to_owned(),
            why,
        };
        let fields: Vec<&str> = expr.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(err(format!(
                "expected 5 fields (minute hour day-of-month month day-of-week), got {}",
                fields.len()
            )));
        }
        let field = |i: usize, name: &str, lo: u32, hi: u32| {
            parse_field(fields[i], lo, hi).map_err(|why| err(format!("{name}: {why}")))
        };
        let mut days_of_week = field(4, "day-of-week", 0, 7)?;
        for d in &mut days_of_week {
            *d %= 7;
        }
        days_of_week.sort_unstable();
        days_of_week.dedup();
        Ok(Cron {
            minutes: field(0, "minute", 0, 59)?,
            hours: field(1, "hour", 0, 23)?,
            days_of_month: field(2, "day-of-month", 1, 31)?,
            months: field(3, "month", 1, 12)?,
            days_of_week,
            dom_any: fields[2] == "*",
            dow_any: fields[4] == "*",
        })
    }

    fn day_matches(&self, day: NaiveDate) -> bool {
        if !self.months.contains(&day.month()) {
            return false;
        }
        let dom = self.days_of_month.contains(&day.day());
        let dow = self
            .days_of_week
            .contains(&day.weekday().num_days_from_sunday());
        match (self.dom_any, self.dow_any) {
            (true, true) => true,
            (true, false) => dow,
            (false, true) => dom,
            (false, false) => dom || dow,
        }
    }

    /// Every time of day it names, in order.
    fn times(&self) -> impl DoubleEndedIterator<Item = NaiveTime> + '_ {
        self.hours.iter().flat_map(move |h| {
            self.minutes
                .iter()
                .filter_map(move |m| NaiveTime::from_hms_opt(*h, *m, 0))
        })
    }
}

fn parse_field(text: &str, lo: u32, hi: u32) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => {
                let step: u32 = s.parse().map_err(|_| format!("'{s}' is not a step"))?;
                if step == 0 {
                    return Err("a step of 0".into());
                }
                (r, step)
            }
            None => (part, 1),
        };
        let (a, b) = if range == "*" {
            (lo, hi)
        } else if let Some((a, b)) = range.split_once('-') {
            (number(a, lo, hi)?, number(b, lo, hi)?)
        } else {
            let a = number(range, lo, hi)?;
            // `5/15` means from 5 to the end, every 15.
            (a, if part.contains('/') { hi } else { a })
        };
        if a > b {
            return Err(format!("the range {a}-{b} runs backwards"));
        }
        out.extend((a..=b).step_by(usize::try_from(step).unwrap_or(1)));
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

fn number(text: &str, lo: u32, hi: u32) -> Result<u32, String> {
    let n: u32 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    if n < lo || n > hi {
        return Err(format!("{n} is outside {lo}–{hi}"));
    }
    Ok(n)
}

/// `YYYY-MM-DD HH:MM`, the form occurrences are stored and shown in.
pub fn format_minute(t: NaiveDateTime) -> String {
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute()
    )
}

/// The years a clock may be set to: the exchange opened in 1990, and everything past a
/// due time (a year of look-ahead, catch-up windows) stays far inside chrono's range.
pub const YEARS: std::ops::RangeInclusive<i32> = 1990..=2999;

/// Parses `YYYY-MM-DD HH:MM` (Beijing time), the form `--now` takes; a year outside
/// [`YEARS`] is refused like any other malformed time.
pub fn parse_minute(text: &str) -> Option<NaiveDateTime> {
    NaiveDateTime::parse_from_str(text.trim(), "%Y-%m-%d %H:%M")
        .ok()
        .filter(|t| YEARS.contains(&t.year()))
}

#[cfg(test)]
mod tests;
