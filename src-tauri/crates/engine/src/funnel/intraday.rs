//! L4's second timeframe: a daily trigger read again on the trigger day's 60-minute bars.
//! It never filters or re-scores a candidate; each candidate says which of the three it is,
//! so a missing minute series reads as "no minute data", never as a pass.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::timeframes::{HourBar, Intraday, intraday_confirmation};

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
            Some(h) => match intraday_confirmation(h) {
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
            },
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

/// The L4 layer's note: how many candidates each check gave.
pub fn layer_note(checks: impl Iterator<Item = IntradayCheck>) -> String {
    let (mut yes, mut no, mut none) = (0, 0, 0);
    for c in checks {
        match c {
            IntradayCheck::Confirmed { .. } => yes += 1,
            IntradayCheck::NotConfirmed { .. } => no += 1,
            IntradayCheck::NoMinuteData => none += 1,
        }
    }
    format!("60分钟确认 {yes}，未确认 {no}，无分钟数据 {none}（仅标注，不筛选）")
}

#[cfg(test)]
mod tests {
    use super::*;

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
                    c,
                    IntradayCheck::NoMinuteData,
                    IntradayCheck::NoMinuteData,
                    IntradayCheck::Confirmed {
                        close_in_range_pct: 80.0
                    }
                ]
                .into_iter()
            ),
            "60分钟确认 1，未确认 1，无分钟数据 2（仅标注，不筛选）"
        );
    }
}
