//! The whole market as the funnel and the backtest see it: one [`StockSeries`] per stock,
//! plus the benchmark indices. The `market` crate loads it from the bar cache; the engine
//! never does I/O. Bars are ascending by date; "as of" a date means the bars up to it.

use serde::{Deserialize, Serialize};

use crate::board::is_st_name;
use crate::{Bar, Board};

/// One stock's daily bars and the facts about it the funnel needs besides them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StockSeries {
    /// Six digits, e.g. `000001`.
    pub code: String,
    pub name: String,
    pub board: Board,
    /// Industry, when the stock list has one (L3 sector resonance).
    pub industry: Option<String>,
    /// Market capitalisation in 亿元, when known (L1 cap gate).
    pub market_cap_yi: Option<f64>,
    /// Listing date `YYYYMMDD`, when known (L1 new-listing gate).
    pub list_date: Option<u32>,
    /// Forward-adjusted daily bars, ascending by date.
    pub bars: Vec<Bar>,
    /// The names in force from each date, ascending by `from` (point-in-time: a stock's ST
    /// status on a past date is read from the name it carried then). Empty when the history
    /// is unknown: `name` (today's) then stands for every date, and as-of callers say so.
    #[serde(default)]
    pub name_history: Vec<NameSpan>,
    /// The last trading day of a delisted stock (`YYYYMMDD`); `None` while listed or unknown.
    #[serde(default)]
    pub delist_date: Option<u32>,
    /// Market caps recorded on sampled days, ascending by date: the size gates of a past
    /// day read the nearest one, moved by price ([`StockSeries::market_cap_on`]). Empty
    /// when none was recorded: today's `market_cap_yi` then stands in, and callers say so.
    #[serde(default)]
    pub cap_history: Vec<CapSample>,
}

/// A stock's market capitalisation (亿元) on a sampled day.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CapSample {
    pub date: u32,
    pub cap_yi: f64,
}

/// A name in force from `from` (`YYYYMMDD`) until the next span's `from`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameSpan {
    pub from: u32,
    pub name: String,
}

/// A point-in-time fact and whether it came from history or fell back to today's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsOf<T> {
    pub value: T,
    /// `false`: no history covers the date, so today's value was used.
    pub known: bool,
}

impl StockSeries {
    /// ST / *ST / risk-warning names ([`crate::board::is_st_name`]).
    pub fn is_st(&self) -> bool {
        is_st_name(&self.name)
    }

    /// The name in force on `date`: from the name history when a span covers it, else
    /// today's name, marked as a fallback.
    pub fn name_on(&self, date: u32) -> AsOf<&str> {
        let covering = self.name_history.partition_point(|span| span.from <= date);
        match covering
            .checked_sub(1)
            .and_then(|i| self.name_history.get(i))
        {
            Some(span) => AsOf {
                value: span.name.as_str(),
                known: true,
            },
            None => AsOf {
                value: self.name.as_str(),
                known: false,
            },
        }
    }

    /// ST / *ST status on `date`, read from the name in force then ([`Self::name_on`]).
    pub fn is_st_on(&self, date: u32) -> AsOf<bool> {
        let name = self.name_on(date);
        AsOf {
            value: is_st_name(name.value),
            known: name.known,
        }
    }

    /// Whether the stock still traded on `date`: `false` after its delisting day.
    pub fn listed_on(&self, date: u32) -> bool {
        self.delist_date.is_none_or(|last| date <= last)
    }

    /// A delisted stock's last trading day: its last bar on or before the delisting day,
    /// where a position in it ends. `None` while listed (or when no bar is that early).
    pub fn last_trading_day(&self) -> Option<u32> {
        let last = self.delist_date?;
        self.bars_as_of(last).last().map(|b| b.date)
    }

    /// The market cap (亿元) on `date`: the nearest recorded sample (the last on or before
    /// the date, else the first after it) times the price move from the sample's day to
    /// this one, in forward-adjusted closes — splits and bonus shares move price and share
    /// count together, so the adjusted move is the cap's; a new issue between the two days
    /// is not seen. With no sample, today's cap stands in, marked as a fallback.
    pub fn market_cap_on(&self, date: u32) -> AsOf<Option<f64>> {
        let after = self.cap_history.partition_point(|s| s.date <= date);
        let nearest = after
            .checked_sub(1)
            .or((!self.cap_history.is_empty()).then_some(0))
            .and_then(|i| self.cap_history.get(i));
        let Some(sample) = nearest else {
            return AsOf {
                value: self.market_cap_yi,
                known: false,
            };
        };
        let close_on = |d: u32| self.bars_as_of(d).last().map(|b| b.close);
        // a sample before the first bar is read at the first bar's price
        let first = self.bars.first().map(|b| b.close);
        let value = match (close_on(sample.date).or(first), close_on(date).or(first)) {
            (Some(then), Some(now)) if then > 0.0 && now.is_finite() => {
                Some(sample.cap_yi * now / then)
            }
            _ => Some(sample.cap_yi),
        };
        AsOf { value, known: true }
    }

    /// The bars known at the close of `date` (those dated on or before it).
    pub fn bars_as_of(&self, date: u32) -> &[Bar] {
        bars_as_of(&self.bars, date)
    }
}

/// The prefix of `bars` dated on or before `date`.
pub fn bars_as_of(bars: &[Bar], date: u32) -> &[Bar] {
    let end = bars.partition_point(|b| b.date <= date);
    &bars[..end]
}

/// The benchmark indices whose cached bars the funnel and the regime use.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Benchmarks {
    /// SSE Composite (000001.SH): relative strength and the market regime.
    pub sse: Option<Vec<Bar>>,
    /// CSI 300 (000300.SH): the backtest's comparison.
    pub csi300: Option<Vec<Bar>>,
    /// ChiNext index (399006.SZ): the regime's small-cap leg.
    pub chinext: Option<Vec<Bar>>,
}

/// Everything the funnel runs over.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Universe {
    /// In a deterministic order (by code).
    pub stocks: Vec<StockSeries>,
    pub benchmarks: Benchmarks,
    /// Every date of the stocks' full series, ascending, when `stocks` hold only the tail of
    /// each (a one-day screen reads no more bars than its window): the trading calendar, so
    /// a stale stock's lag still counts every trading day. `None`: the calendar comes from
    /// the bars themselves. A tail universe is for screening one day, never a backtest.
    pub trading_days: Option<Vec<u32>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(date: u32) -> Bar {
        Bar {
            date,
            open: 1.0,
            high: 1.0,
            low: 1.0,
            close: 1.0,
            volume: 1.0,
            amount: 1.0,
            turnover: None,
        }
    }

    fn series(name: &str, history: &[(u32, &str)]) -> StockSeries {
        StockSeries {
            code: "000005".into(),
            name: name.into(),
            board: Board::Main,
            industry: None,
            market_cap_yi: None,
            list_date: None,
            bars: Vec::new(),
            name_history: history
                .iter()
                .map(|&(from, name)| NameSpan {
                    from,
                    name: name.into(),
                })
                .collect(),
            delist_date: None,
            cap_history: Vec::new(),
        }
    }

    #[test]
    fn the_cap_on_a_day_is_the_nearest_sample_moved_by_price() {
        let closes = [
            (20190102, 10.0),
            (20190103, 11.0),
            (20190104, 12.0),
            (20190107, 6.0),
        ];
        let base = StockSeries {
            market_cap_yi: Some(500.0),
            bars: closes
                .iter()
                .map(|&(d, c)| Bar { close: c, ..bar(d) })
                .collect(),
            ..series("平安银行", &[])
        };
        let with = |samples: &[(u32, f64)]| StockSeries {
            cap_history: samples
                .iter()
                .map(|&(date, cap_yi)| CapSample { date, cap_yi })
                .collect(),
            ..base.clone()
        };
        // (samples, day, cap, known)
        type Case<'a> = (&'a [(u32, f64)], u32, Option<f64>, bool);
        let cases: &[Case<'_>] = &[
            // none: today's cap, a fallback
            (&[], 20190103, Some(500.0), false),
            // the sample's own day
            (&[(20190102, 100.0)], 20190102, Some(100.0), true),
            // a later day moves with the close: 10 → 12
            (&[(20190102, 100.0)], 20190104, Some(120.0), true),
            // the last sample on or before the day wins over an earlier one
            (
                &[(20190102, 100.0), (20190104, 90.0)],
                20190107,
                Some(45.0),
                true,
            ),
            // a day before every sample reads the first one backwards: 11 → 10
            (&[(20190103, 110.0)], 20190102, Some(100.0), true),
            // a sample on a non-trading day reads the close before it
            (&[(20190105, 120.0)], 20190107, Some(60.0), true),
        ];
        for &(samples, day, cap, known) in cases {
            let got = with(samples).market_cap_on(day);
            assert_eq!(
                (got.value.map(|c| (c * 1e6).round() / 1e6), got.known),
                (cap, known),
                "{samples:?} on {day}"
            );
        }
    }

    #[test]
    fn st_status_is_read_from_the_name_in_force_on_the_date() {
        // (history, date, ST then, known)
        type Names<'a> = &'a [(u32, &'a str)];
        let cases: &[(Names<'_>, u32, bool, bool)] = &[
            // ST only from 2021: healthy in 2019, from history
            (
                &[(19900101, "世纪星源"), (20210501, "ST星源")],
                20190116,
                false,
                true,
            ),
            (
                &[(19900101, "世纪星源"), (20210501, "ST星源")],
                20210501,
                true,
                true,
            ),
            // ST in 2019, healthy today
            (
                &[(20180101, "*ST海润"), (20200101, "海润光伏")],
                20190116,
                true,
                true,
            ),
            (
                &[(20180101, "*ST海润"), (20200101, "海润光伏")],
                20200102,
                false,
                true,
            ),
            // before the first recorded name: today's name, flagged as a fallback
            (&[(20200101, "海润光伏")], 20190116, true, false),
            // no history at all: today's name, a fallback
            (&[], 20190116, true, false),
        ];
        for &(history, date, st, known) in cases {
            let s = series("ST星源", history);
            assert_eq!(
                s.is_st_on(date),
                AsOf { value: st, known },
                "{history:?} on {date}"
            );
        }
    }

    #[test]
    fn a_delisted_stock_is_listed_up_to_its_last_day() {
        let mut s = series("退市海润", &[]);
        assert!(s.listed_on(20300101));
        s.delist_date = Some(20190705);
        assert!(s.listed_on(20190705));
        assert!(!s.listed_on(20190708));
    }

    #[test]
    fn a_delisted_stock_trades_last_on_its_last_bar_by_the_delisting_day() {
        let mut s = series("退市海润", &[]);
        s.bars = vec![bar(20190620), bar(20190621)];
        // (delisting day, last trading day)
        let cases = [
            (None, None),
            // suspended before the delisting: the last bar it had
            (Some(20190705), Some(20190621)),
            (Some(20190621), Some(20190621)),
            // a stray bar after the delisting day is not a trading day
            (Some(20190620), Some(20190620)),
            (Some(20190101), None),
        ];
        for (delist, last) in cases {
            s.delist_date = delist;
            assert_eq!(s.last_trading_day(), last, "delisted {delist:?}");
        }
    }

    #[test]
    fn as_of_keeps_bars_on_or_before_the_date() {
        let bars = vec![bar(20240102), bar(20240103), bar(20240105)];
        assert_eq!(bars_as_of(&bars, 20240101).len(), 0);
        assert_eq!(bars_as_of(&bars, 20240103).len(), 2);
        assert_eq!(bars_as_of(&bars, 20240104).len(), 2);
        assert_eq!(bars_as_of(&bars, 20991231).len(), 3);
    }
}
