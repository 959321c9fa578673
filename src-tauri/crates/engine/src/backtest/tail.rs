//! The 14:55 entry: a pick is bought on its signal day at the price it traded at 14:55,
//! read from minute bars. Minute bars are unadjusted and the backtest's daily bars forward
//! adjusted, so the price enters as a fraction of the same day's 15:00 close in the same
//! minute bars: the entry is the daily close times that fraction, on the daily bars' scale
//! whatever happened to the adjustment since.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// Where a day's 14:55 price came from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TailEntry {
    /// The 14:55 price over the day's 15:00 close, both from the same minute bars.
    pub ratio: f64,
    /// End of the minute bar read (`HHMM`: 1455 from 5-minute bars; 1445, 1430 and 1400
    /// from 15, 30 and 60: the last bar that ended by 14:55, never a later one).
    pub bar_end: u16,
    /// That bar's length in minutes.
    pub period_minutes: u16,
}

/// The 14:55 prices known, by (code, YYYYMMDD).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TailEntries {
    by_day: HashMap<(String, u32), TailEntry>,
}

impl TailEntries {
    /// From (code, day, 14:55 price, 15:00 close, bar end, period minutes); a day whose
    /// prices are not positive is left out (it then counts as missing).
    pub fn new(rows: impl IntoIterator<Item = (String, u32, f64, f64, u16, u16)>) -> Self {
        let by_day = rows
            .into_iter()
            .filter(|(_, _, p, c, _, _)| p.is_finite() && c.is_finite() && *p > 0.0 && *c > 0.0)
            .map(|(code, day, price, close, bar_end, period_minutes)| {
                (
                    (code, day),
                    TailEntry {
                        ratio: price / close,
                        bar_end,
                        period_minutes,
                    },
                )
            })
            .collect();
        Self { by_day }
    }

    pub fn get(&self, code: &str, day: u32) -> Option<TailEntry> {
        self.by_day.get(&(code.to_owned(), day)).copied()
    }

    pub fn is_empty(&self) -> bool {
        self.by_day.is_empty()
    }

    pub fn len(&self) -> usize {
        self.by_day.len()
    }
}

/// The signal-day entry price at 14:55: the daily close times the minute bars' fraction.
pub fn price_at_1455(daily_close: f64, entry: TailEntry) -> f64 {
    daily_close * entry.ratio
}

/// `600519 2024-12-02, 000001 2024-12-03, …` for an error naming what is missing (the first
/// `shown`, then how many more).
pub fn missing_list(missing: &[(String, u32)], shown: usize) -> String {
    let mut parts: Vec<String> = missing
        .iter()
        .take(shown)
        .map(|(c, d)| format!("{c} {:04}-{:02}-{:02}", d / 10_000, d / 100 % 100, d % 100))
        .collect();
    if missing.len() > shown {
        parts.push(format!("…及另外 {} 个", missing.len() - shown));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_table() {
        let t = TailEntries::new([
            ("600519".to_owned(), 20241202, 1530.0, 1526.8, 1455, 5),
            ("000001".to_owned(), 20241202, 0.0, 10.0, 1455, 5),
        ]);
        assert_eq!(t.len(), 1);
        let e = t.get("600519", 20241202).unwrap();
        assert_eq!((e.bar_end, e.period_minutes), (1455, 5));
        // a daily close of 100 (adjusted) enters at 100 × 1530 / 1526.8
        assert!((price_at_1455(100.0, e) - 100.0 * 1530.0 / 1526.8).abs() < 1e-9);
        assert_eq!(t.get("000001", 20241202), None);
        assert_eq!(t.get("600519", 20241203), None);
    }

    #[test]
    fn missing_is_listed_then_counted() {
        let m = vec![
            ("600519".to_owned(), 20241202),
            ("000001".to_owned(), 20241203),
            ("000002".to_owned(), 20241204),
        ];
        assert_eq!(
            missing_list(&m, 5),
            "600519 2024-12-02, 000001 2024-12-03, 000002 2024-12-04"
        );
        assert_eq!(missing_list(&m, 1), "600519 2024-12-02, …及另外 2 个");
    }

    /// The simulation buys a 14:55 pick at the daily close times the minute fraction, and
    /// refuses a run whose pick has no minute bars, naming it.
    #[test]
    fn a_1455_run_buys_at_the_fraction_and_refuses_without_it() {
        use crate::backtest::{
            BacktestArgs, BacktestError, RawBacktestArgs, SignalSource, run_backtest_with_tails,
        };
        use crate::cancel::Never;
        use crate::{Bar, Board, StockSeries, Universe};

        struct Fixed(Vec<(u32, &'static str)>);
        impl SignalSource for Fixed {
            fn picks(&mut self, day: u32) -> Vec<String> {
                self.0
                    .iter()
                    .filter(|(d, _)| *d == day)
                    .map(|(_, c)| (*c).to_owned())
                    .collect()
            }
        }
        let days = [20220104, 20220105, 20220106, 20220107];
        let stock = |code: &str| StockSeries {
            code: code.into(),
            name: "测试".into(),
            board: Board::from_code(code),
            industry: None,
            market_cap_yi: None,
            list_date: None,
            bars: days
                .iter()
                .map(|&date| Bar {
                    date,
                    open: 10.0,
                    high: 10.5,
                    low: 9.5,
                    close: 10.0,
                    volume: 1e6,
                    amount: 1e7,
                    turnover: None,
                })
                .collect(),
            name_history: Vec::new(),
            delist_date: None,
            cap_history: Vec::new(),
        };
        let u = Universe {
            stocks: vec![stock("600000"), stock("600001")],
            benchmarks: Default::default(),
            trading_days: None,
        };
        let args = BacktestArgs::parse(
            &RawBacktestArgs {
                start: Some("2022-01-04"),
                end: Some("2022-01-07"),
                hold_days: Some(2),
                top_n: Some(2),
                entry_price_mode: Some("1455"),
                ..RawBacktestArgs::default()
            },
            20260101,
        )
        .unwrap();
        // the 14:55 price 19.80 against a 15:00 close of 20.00 (unadjusted): 1 % under
        let tails = TailEntries::new([("600000".to_owned(), 20220104, 19.8, 20.0, 1455, 5)]);
        let r = run_backtest_with_tails(
            &u,
            &args,
            &mut Fixed(vec![(20220104, "600000")]),
            &Never,
            &tails,
        )
        .unwrap();
        assert_eq!(r.trades.len(), 1);
        assert_eq!(r.trades[0].entry_date, 20220104);
        assert!(
            (r.trades[0].entry_price - 9.9).abs() < 1e-9,
            "{}",
            r.trades[0].entry_price
        );
        assert!(
            r.notes.iter().any(|n| n.contains("5m 1455 ×1")),
            "{:?}",
            r.notes
        );

        let err = run_backtest_with_tails(
            &u,
            &args,
            &mut Fixed(vec![(20220104, "600000"), (20220105, "600001")]),
            &Never,
            &tails,
        )
        .unwrap_err();
        match &err {
            BacktestError::MissingMinuteBars { missing, .. } => {
                assert_eq!(missing, &[("600001".to_owned(), 20220105)])
            }
            other => panic!("{other}"),
        }
        assert!(err.to_string().contains("600001 2022-01-05"), "{err}");
    }
}
