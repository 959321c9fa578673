//! What a result over past days read from today's data instead of the day's own: the
//! point-in-time facts of a stock ([`StockSeries::is_st_on`], [`StockSeries::listed_on`])
//! fall back to today's name when no name history covers the day, and to today's market
//! cap when no cap was recorded for the stock ([`StockSeries::market_cap_on`]). A result
//! says how many stocks that touched — never silently.
//!
//! "Today" is the data's newest day (`current`): a screen of that day reads today's facts
//! as its own, so nothing falls back; any earlier day that reads them does.

use serde::{Deserialize, Serialize};

use crate::{StockSeries, Universe};

/// Counts of the point-in-time fallbacks of a screen (one day) or a backtest (a period).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AsOfNotes {
    /// Stocks the day's rules looked at (the funnel's L1 input; a backtest's: the stocks
    /// with a bar in the period).
    pub stocks: usize,
    /// Of them, those whose ST status on a past day came from today's name (no name
    /// history covers the day).
    pub st_from_today: usize,
    /// Of them, those whose market cap for a past day was today's (the size gate and the
    /// trend pullback's large-cap threshold): no cap was recorded for them.
    pub cap_from_today: usize,
    /// Stocks left out because they were delisted before the day (a screen), or delisted
    /// within the period and followed up to their last day (a backtest).
    pub delisted: usize,
    /// A past day over a stock list that records no delisting at all: stocks delisted
    /// since are missing from it (survivorship bias), not known to be absent.
    pub no_delisting_records: bool,
}

impl AsOfNotes {
    /// Whether any input fell back to today's data.
    pub fn any_fallback(&self) -> bool {
        self.st_from_today > 0 || self.cap_from_today > 0 || self.no_delisting_records
    }

    /// The data-note lines: one per rule that fell back, and the delisted stocks left out
    /// of a screen; empty when every fact was the day's own.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.st_from_today > 0 {
            out.push(format!(
                "{} 只股票中 {} 只的 ST 状态取自今日名称（没有该日的历史名称），可能与当日不符",
                self.stocks, self.st_from_today
            ));
        }
        if self.cap_from_today > 0 {
            out.push(format!(
                "{} 只股票的市值门槛按今日市值判断（没有该股的历史市值记录）",
                self.cap_from_today
            ));
        }
        if self.no_delisting_records {
            out.push("股票列表没有任何退市记录：此后退市的股票不在其中（幸存者偏差）".to_owned());
        }
        out
    }

    /// The notes of a backtest over [`start`, `end`] of the stocks `in_scope` admits:
    /// every stock with a bar in the period counts once, with the first such bar as the
    /// day its facts were first read (name history covers every day after its first span,
    /// so a stock that falls back on any day of the period falls back on that one).
    /// Delisted: stocks whose last trading day falls in the period.
    pub fn of_period(
        universe: &Universe,
        in_scope: impl Fn(&StockSeries) -> bool,
        start: u32,
        end: u32,
        current: u32,
    ) -> Self {
        let mut notes = AsOfNotes::default();
        for s in universe.stocks.iter().filter(|s| in_scope(s)) {
            let from = s.bars.partition_point(|b| b.date < start);
            let Some(first) = s.bars.get(from).filter(|b| b.date <= end) else {
                continue;
            };
            notes.stocks += 1;
            let f = fallbacks(s, first.date, current);
            notes.st_from_today += usize::from(f.st);
            notes.cap_from_today += usize::from(f.cap);
            notes.delisted += usize::from(
                s.last_trading_day()
                    .is_some_and(|d| (start..=end).contains(&d)),
            );
        }
        notes.no_delisting_records = start < current && !records_delistings(universe);
        notes
    }
}

/// Which of one stock's facts on `day` come from today's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fallbacks {
    /// Its ST status (no name history covering the day).
    pub st: bool,
    /// Its market cap (none recorded but today's).
    pub cap: bool,
}

/// The facts of `s` on `day` that are today's stand-ins, with `current` the data's newest
/// day: none on `current` itself (today's facts are that day's own).
pub fn fallbacks(s: &StockSeries, day: u32, current: u32) -> Fallbacks {
    let past = day < current;
    Fallbacks {
        st: past && !s.is_st_on(day).known,
        cap: past && {
            let cap = s.market_cap_on(day);
            !cap.known && cap.value.is_some()
        },
    }
}

/// Whether the stock list records any delisting (a list of listed stocks only does not).
pub fn records_delistings(universe: &Universe) -> bool {
    universe.stocks.iter().any(|s| s.delist_date.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Bar, Board, NameSpan};

    fn bar(date: u32) -> Bar {
        Bar {
            date,
            open: 10.0,
            high: 10.0,
            low: 10.0,
            close: 10.0,
            volume: 1e6,
            amount: 1e7,
            turnover: None,
        }
    }

    fn series(history: &[(u32, &str)], cap: Option<f64>, delist: Option<u32>) -> StockSeries {
        StockSeries {
            code: "000005".into(),
            name: "ST星源".into(),
            board: Board::Main,
            industry: None,
            market_cap_yi: cap,
            list_date: None,
            bars: [20190115, 20190116, 20190117].map(bar).to_vec(),
            name_history: history
                .iter()
                .map(|&(from, name)| NameSpan {
                    from,
                    name: name.into(),
                })
                .collect(),
            delist_date: delist,
            cap_history: Vec::new(),
        }
    }

    #[test]
    fn a_fact_falls_back_only_on_a_past_day_without_its_history() {
        let named: &[(u32, &str)] = &[(19900101, "世纪星源"), (20210501, "ST星源")];
        // (history, cap, day, current, ST fell back, cap fell back)
        type Names<'a> = &'a [(u32, &'a str)];
        type Case<'a> = (Names<'a>, Option<f64>, u32, u32, bool, bool);
        let cases: &[Case<'_>] = &[
            // a past day with history: the name then; the cap is still today's
            (named, Some(30.0), 20190116, 20260105, false, true),
            (named, None, 20190116, 20260105, false, false),
            // no history: today's name stands in on a past day
            (&[], Some(30.0), 20190116, 20260105, true, true),
            (&[], None, 20190116, 20260105, true, false),
            // history starting after the day: today's name again
            (
                &[(20200101, "世纪星源")],
                None,
                20190116,
                20260105,
                true,
                false,
            ),
            // the newest day itself: today's facts are its own
            (&[], Some(30.0), 20260105, 20260105, false, false),
        ];
        for &(history, cap, day, current, st, cap_fell) in cases {
            let s = series(history, cap, None);
            // a recorded cap is the day's own, whatever today's is
            let sampled = StockSeries {
                cap_history: vec![crate::CapSample {
                    date: 20190115,
                    cap_yi: 20.0,
                }],
                ..s.clone()
            };
            assert!(!fallbacks(&sampled, day, current).cap, "{history:?}");
            assert_eq!(
                fallbacks(&s, day, current),
                Fallbacks { st, cap: cap_fell },
                "{history:?} cap {cap:?} on {day} (newest {current})"
            );
        }
    }

    #[test]
    fn a_period_counts_each_stock_once_from_its_first_bar_in_it() {
        let universe = Universe {
            stocks: vec![
                series(&[(19900101, "世纪星源")], Some(30.0), None),
                series(&[], None, Some(20190116)),
                // no bar in the period: not counted
                StockSeries {
                    bars: vec![bar(20200101)],
                    ..series(&[], Some(1.0), None)
                },
            ],
            ..Universe::default()
        };
        let notes = AsOfNotes::of_period(&universe, |_| true, 20190115, 20190117, 20260105);
        assert_eq!(
            notes,
            AsOfNotes {
                stocks: 2,
                st_from_today: 1,
                cap_from_today: 1,
                delisted: 1,
                no_delisting_records: false,
            }
        );
        assert!(notes.any_fallback());
        let lines = notes.lines();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].contains("2 只股票中 1 只的 ST 状态取自今日名称"),
            "{lines:?}"
        );
        assert!(
            lines[1].contains("1 只股票的市值门槛按今日市值"),
            "{lines:?}"
        );
    }

    #[test]
    fn a_list_without_any_delisting_is_named_for_a_past_period_only() {
        let universe = Universe {
            stocks: vec![series(&[(19900101, "世纪星源")], None, None)],
            ..Universe::default()
        };
        let past = AsOfNotes::of_period(&universe, |_| true, 20190115, 20190117, 20260105);
        assert!(past.no_delisting_records);
        assert!(past.lines().iter().any(|l| l.contains("幸存者偏差")));
        let today = AsOfNotes::of_period(&universe, |_| true, 20260105, 20260105, 20260105);
        assert!(!today.no_delisting_records);
        assert_eq!(today.lines(), Vec::<String>::new());
    }
}
