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
}

impl StockSeries {
    /// ST / *ST / risk-warning names ([`crate::board::is_st_name`]).
    pub fn is_st(&self) -> bool {
        is_st_name(&self.name)
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

    #[test]
    fn as_of_keeps_bars_on_or_before_the_date() {
        let bars = vec![bar(20240102), bar(20240103), bar(20240105)];
        assert_eq!(bars_as_of(&bars, 20240101).len(), 0);
        assert_eq!(bars_as_of(&bars, 20240103).len(), 2);
        assert_eq!(bars_as_of(&bars, 20240104).len(), 2);
        assert_eq!(bars_as_of(&bars, 20991231).len(), 3);
    }
}
