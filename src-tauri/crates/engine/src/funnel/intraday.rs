//! L4's other timeframes: the weekly structure a daily trigger sits in (the diagnosis's
//! [`crate::timeframes`] reading, the one implementation) and the trigger day read again on
//! its 60-minute bars. Neither filters or re-scores a candidate; each candidate says what each
//! timeframe said, so a missing minute series reads as "no minute data" and too short a
//! history as "no weekly read", never as a pass.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::Bar;
use crate::timeframes::{
    HourBar, Intraday, TimeframeLine, WeeklyContext, WeeklyTrend, intraday_confirmation, read,
};
use crate::triggers::Trigger;

/// The 60-minute bars of each (six-digit code, trigger day) the screen may read.
pub type HourBars = HashMap<(String, u32), Vec<HourBar>>;

/// What the trigger day's 60-minute bars said of a candidate's (bullish) L4 trigger.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum IntradayCheck {
    /// Closed in the upper half of the day's own range, the last hour not selling off.
    Confirmed { close_in_range_pct: f64 },
    /// Closed in the lower half of the day's range, or the last hour fell.
    NotConfirmed {
        close_in_range_pct: f64,
        last_hour_down: bool,
    },
    /// No cached 60-minute bars of the trigger day through its 15:00 bar. (Also what a
    /// screen saved before this check existed reads back as.)
    #[default]
    NoMinuteData,
}

impl IntradayCheck {
    /// The check of the trigger `day` of `code` from `hours`.
    pub fn of(hours: &HourBars, code: &str, day: u32) -> Self {
        match hours.get(&(code.to_owned(), day)) {
            None => IntradayCheck::NoMinuteData,
            Some(h) => intraday_confirmation(h).into(),
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            IntradayCheck::Confirmed { .. } => "confirmed",
            IntradayCheck::NotConfirmed { .. } => "not_confirmed",
            IntradayCheck::NoMinuteData => "no_minute_data",
        }
    }
}

impl From<Intraday> for IntradayCheck {
    fn from(i: Intraday) -> Self {
        match i {
            Intraday::Confirmed { close_in_range_pct } => {
                IntradayCheck::Confirmed { close_in_range_pct }
            }
            Intraday::NotConfirmed {
                close_in_range_pct,
                last_hour_down,
            } => IntradayCheck::NotConfirmed {
                close_in_range_pct,
                last_hour_down,
            },
            Intraday::NoBars => IntradayCheck::NoMinuteData,
        }
    }
}

/// What L4's timeframes said of one candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct L4Reading {
    pub weekly: Option<WeeklyContext>,
    pub intraday: IntradayCheck,
    /// One line per timeframe (daily trigger, weekly, 60-minute), each naming its timeframe.
    pub lines: Vec<TimeframeLine>,
}

/// The candidate of `code` whose `triggers` fired on the last bar of `window` (its daily
/// bars up to the trigger day), read on the weekly structure of that window and the trigger
/// day's 60-minute bars in `hours`.
pub fn l4_reading(window: &[Bar], code: &str, triggers: &[Trigger], hours: &HourBars) -> L4Reading {
    let Some(last) = window.last() else {
        return L4Reading {
            weekly: None,
            intraday: IntradayCheck::NoMinuteData,
            lines: Vec::new(),
        };
    };
    let names: Vec<&str> = triggers.iter().map(|t| t.kind.as_str()).collect();
    let day_hours = hours
        .get(&(code.to_owned(), last.date))
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let r = read(window, &names.join("+"), last.date, day_hours);
    L4Reading {
        weekly: r.weekly,
        intraday: r.intraday.into(),
        lines: r.lines,
    }
}

/// The L4 layer's note: how many candidates each weekly trend and each 60-minute check gave.
pub fn layer_note(readings: impl Iterator<Item = (Option<WeeklyTrend>, IntradayCheck)>) -> String {
    let (mut up, mut side, mut down, mut short) = (0, 0, 0, 0);
    let (mut yes, mut no, mut none) = (0, 0, 0);
    for (w, c) in readings {
        match w {
            Some(WeeklyTrend::Up) => up += 1,
            Some(WeeklyTrend::Sideways) => side += 1,
            Some(WeeklyTrend::Down) => down += 1,
            None => short += 1,
        }
        match c {
            IntradayCheck::Confirmed { .. } => yes += 1,
            IntradayCheck::NotConfirmed { .. } => no += 1,
            IntradayCheck::NoMinuteData => none += 1,
        }
    }
    format!(
        "周线上升 {up}，横盘 {side}，下降 {down}，不足{min}周 {short}；60分钟确认 {yes}，未确认 {no}，无分钟数据 {none}（仅标注，不筛选）",
        min = crate::timeframes::MIN_WEEKS
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeframes::Timeframe;

    fn h(hhmm: u16, open: f64, high: f64, low: f64, close: f64) -> HourBar {
        HourBar {
            hhmm,
            open,
            high,
            low,
            close,
        }
    }

    #[test]
    fn a_trigger_day_reads_confirmed_not_confirmed_or_no_minute_data() {
        let day = 20_241_202;
        let strong = vec![
            h(1030, 10.0, 10.1, 9.5, 9.6),
            h(1130, 9.6, 9.9, 9.6, 9.8),
            h(1400, 9.8, 10.2, 9.8, 10.1),
            h(1500, 10.1, 10.4, 10.0, 10.3),
        ];
        let faded = vec![
            h(1030, 10.0, 10.5, 10.0, 10.4),
            h(1130, 10.4, 10.4, 10.1, 10.2),
            h(1400, 10.2, 10.2, 9.8, 9.9),
            h(1500, 9.9, 9.9, 9.6, 9.7),
        ];
        let morning_only = vec![h(1030, 10.0, 10.5, 10.0, 10.4)];
        let mut hours = HourBars::new();
        hours.insert(("600001".into(), day), strong);
        hours.insert(("600002".into(), day), faded);
        hours.insert(("600003".into(), day), morning_only);
        // (code, day, expected kind, expected close-in-range %)
        let cases = [
            (
                "600001",
                day,
                "confirmed",
                Some((10.3 - 9.5) / (10.4 - 9.5) * 100.0),
            ),
            (
                "600002",
                day,
                "not_confirmed",
                Some((9.7 - 9.6) / (10.5 - 9.6) * 100.0),
            ),
            // no 15:00 bar of the day: not read as a confirmation either way
            ("600003", day, "no_minute_data", None),
            // bars of another day do not stand in for the trigger day's
            ("600001", day + 1, "no_minute_data", None),
            ("600004", day, "no_minute_data", None),
        ];
        for (code, d, kind, pct) in cases {
            let got = IntradayCheck::of(&hours, code, d);
            assert_eq!(got.as_str(), kind, "{code} {d}: {got:?}");
            let got_pct = match got {
                IntradayCheck::Confirmed { close_in_range_pct }
                | IntradayCheck::NotConfirmed {
                    close_in_range_pct, ..
                } => Some(close_in_range_pct),
                IntradayCheck::NoMinuteData => None,
            };
            match (got_pct, pct) {
                (Some(g), Some(w)) => assert!((g - w).abs() < 1e-9, "{code}: {g} vs {w}"),
                (g, w) => assert_eq!(g, w, "{code}"),
            }
        }
    }

    #[test]
    fn serialised_tagged_and_read_back_as_no_data_when_absent() {
        let c = IntradayCheck::NotConfirmed {
            close_in_range_pct: 20.0,
            last_hour_down: true,
        };
        let v = serde_json::to_value(c).unwrap();
        assert_eq!(v["type"], "not_confirmed");
        assert_eq!(v["last_hour_down"], true);
        assert_eq!(serde_json::from_value::<IntradayCheck>(v).unwrap(), c);
        assert_eq!(
            layer_note(
                [
                    (Some(WeeklyTrend::Up), c),
                    (Some(WeeklyTrend::Up), IntradayCheck::NoMinuteData),
                    (None, IntradayCheck::NoMinuteData),
                    (
                        Some(WeeklyTrend::Down),
                        IntradayCheck::Confirmed {
                            close_in_range_pct: 80.0
                        }
                    )
                ]
                .into_iter()
            ),
            "周线上升 2，横盘 0，下降 1，不足14周 1；60分钟确认 1，未确认 1，无分钟数据 2（仅标注，不筛选）"
        );
    }

    /// Weekday bars from 2024-01-01, closes from `close(i)`.
    fn daily(n: usize, close: impl Fn(usize) -> f64) -> Vec<Bar> {
        let mut out = Vec::new();
        let mut d = crate::dates::days_from_civil(20240101).unwrap();
        while out.len() < n {
            if (d + 3).rem_euclid(7) < 5 {
                let c = close(out.len());
                out.push(Bar {
                    date: crate::dates::civil_from_days(d),
                    open: c,
                    high: c + 0.2,
                    low: c - 0.2,
                    close: c,
                    volume: 1e6,
                    amount: 1e7,
                    turnover: None,
                });
            }
            d += 1;
        }
        out
    }

    fn spring() -> Vec<Trigger> {
        vec![Trigger {
            kind: crate::triggers::TriggerKind::Spring,
            score: 1.0,
            dates: vec![],
        }]
    }

    #[test]
    fn l4_reads_the_weekly_structure_and_names_each_timeframe() {
        // (daily window, 60-minute bars of its last day?, weekly trend, 60-minute check)
        let rising = daily(100, |i| 10.0 + i as f64 * 0.1);
        let falling = daily(100, |i| 30.0 - i as f64 * 0.1);
        let flat = daily(100, |i| 20.0 + if i % 2 == 0 { 0.3 } else { -0.3 });
        let short = daily(40, |i| 10.0 + i as f64 * 0.1);
        let held = vec![
            h(1030, 10.0, 10.1, 9.5, 9.6),
            h(1130, 9.6, 9.9, 9.6, 9.8),
            h(1400, 9.8, 10.2, 9.8, 10.1),
            h(1500, 10.1, 10.4, 10.0, 10.3),
        ];
        let cases: Vec<(&[Bar], bool, Option<WeeklyTrend>, &str)> = vec![
            (&rising, true, Some(WeeklyTrend::Up), "confirmed"),
            (&falling, false, Some(WeeklyTrend::Down), "no_minute_data"),
            (&flat, false, Some(WeeklyTrend::Sideways), "no_minute_data"),
            (&short, true, None, "confirmed"),
        ];
        for (window, with_hours, trend, check) in cases {
            let day = window.last().unwrap().date;
            let mut hours = HourBars::new();
            if with_hours {
                hours.insert(("600001".into(), day), held.clone());
            }
            let r = l4_reading(window, "600001", &spring(), &hours);
            assert_eq!(r.weekly.map(|w| w.trend), trend, "{day}");
            // the weekly read is the diagnosis's, as of the trigger day
            assert_eq!(r.weekly, crate::timeframes::weekly_context(window, day));
            assert_eq!(r.intraday.as_str(), check);
            let tf: Vec<Timeframe> = r.lines.iter().map(|l| l.timeframe).collect();
            assert_eq!(
                tf,
                [Timeframe::Daily, Timeframe::Weekly, Timeframe::Minutes60]
            );
            assert!(
                r.lines[0].en.starts_with("daily: Spring triggered on"),
                "{:?}",
                r.lines[0]
            );
            let weekly = &r.lines[1].en;
            match trend {
                Some(WeeklyTrend::Up) => {
                    assert!(weekly.starts_with("weekly: trend up"), "{weekly}")
                }
                Some(WeeklyTrend::Down) => {
                    assert!(weekly.starts_with("weekly: trend down"), "{weekly}")
                }
                Some(WeeklyTrend::Sideways) => {
                    assert!(weekly.starts_with("weekly: trend sideways"), "{weekly}")
                }
                None => assert!(weekly.contains("no weekly structure read"), "{weekly}"),
            }
            assert!(r.lines[2].en.starts_with("60-minute: "), "{:?}", r.lines[2]);
        }
        // another code's bars of the day are not this candidate's
        let mut hours = HourBars::new();
        hours.insert(("600002".into(), rising.last().unwrap().date), held);
        let r = l4_reading(&rising, "600001", &spring(), &hours);
        assert_eq!(r.intraday, IntradayCheck::NoMinuteData);
        assert!(
            l4_reading(&[], "600001", &spring(), &hours)
                .lines
                .is_empty()
        );
    }
}
