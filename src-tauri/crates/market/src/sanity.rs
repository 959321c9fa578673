//! Bar sanity checks, shared by the parsers, the bundled loader and the cache reader, so a
//! broken row is reported where it is found instead of reaching the engine.

use serde::Serialize;
use wyckoff_engine::Bar;

/// What makes a bar unusable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BarFault {
    InvalidDate,
    NonFinitePrice,
    NonPositivePrice,
    HighBelowBody,
    LowAboveBody,
    BadVolume,
    BadAmount,
    BadTurnover,
}

impl std::fmt::Display for BarFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BarFault::InvalidDate => "invalid date",
            BarFault::NonFinitePrice => "non-finite price",
            BarFault::NonPositivePrice => "non-positive price",
            BarFault::HighBelowBody => "high below open/close/low",
            BarFault::LowAboveBody => "low above open/close",
            BarFault::BadVolume => "negative or non-finite volume",
            BarFault::BadAmount => "negative or non-finite amount",
            BarFault::BadTurnover => "negative or non-finite turnover",
        })
    }
}

/// Why a bar is rejected; `None` when it is usable.
pub fn check_bar(b: &Bar) -> Option<BarFault> {
    if !crate::date::is_valid_yyyymmdd(b.date) {
        return Some(BarFault::InvalidDate);
    }
    let prices = [b.open, b.high, b.low, b.close];
    if prices.iter().any(|p| !p.is_finite()) {
        return Some(BarFault::NonFinitePrice);
    }
    if prices.iter().any(|p| *p <= 0.0) {
        return Some(BarFault::NonPositivePrice);
    }
    // allow rounding noise from vendors that round each field separately
    let eps = 1e-6 * b.high.abs().max(1.0);
    if b.high + eps < b.open.max(b.close).max(b.low) {
        return Some(BarFault::HighBelowBody);
    }
    if b.low - eps > b.open.min(b.close) {
        return Some(BarFault::LowAboveBody);
    }
    if !b.volume.is_finite() || b.volume < 0.0 {
        return Some(BarFault::BadVolume);
    }
    if !b.amount.is_finite() || b.amount < 0.0 {
        return Some(BarFault::BadAmount);
    }
    if let Some(t) = b.turnover
        && (!t.is_finite() || t < 0.0)
    {
        return Some(BarFault::BadTurnover);
    }
    None
}

/// Sorts by date and drops duplicate dates (last one wins), as sources sometimes repeat.
pub fn sort_dedup(bars: &mut Vec<Bar>) {
    bars.sort_by_key(|b| b.date);
    let mut out: Vec<Bar> = Vec::with_capacity(bars.len());
    for b in bars.drain(..) {
        match out.last_mut() {
            Some(last) if last.date == b.date => *last = b,
            _ => out.push(b),
        }
    }
    *bars = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar() -> Bar {
        Bar {
            date: 20240102,
            open: 10.0,
            high: 11.0,
            low: 9.5,
            close: 10.5,
            volume: 1000.0,
            amount: 10_000.0,
            turnover: None,
        }
    }

    #[test]
    fn table() {
        assert_eq!(check_bar(&bar()), None);
        type Mutate = Box<dyn Fn(&mut Bar)>;
        let cases: Vec<(Mutate, &str)> = vec![
            (Box::new(|b| b.date = 20240230), "invalid date"),
            (Box::new(|b| b.close = f64::NAN), "non-finite price"),
            (Box::new(|b| b.low = 0.0), "non-positive price"),
            (Box::new(|b| b.high = 10.2), "high below open/close/low"),
            (Box::new(|b| b.low = 10.1), "low above open/close"),
            (
                Box::new(|b| b.volume = -1.0),
                "negative or non-finite volume",
            ),
            (
                Box::new(|b| b.amount = f64::INFINITY),
                "negative or non-finite amount",
            ),
            (
                Box::new(|b| b.turnover = Some(-0.1)),
                "negative or non-finite turnover",
            ),
        ];
        for (f, want) in cases {
            let mut b = bar();
            f(&mut b);
            assert_eq!(check_bar(&b).map(|f| f.to_string()).as_deref(), Some(want));
        }
    }

    #[test]
    fn dedup_keeps_last() {
        let mut a = bar();
        a.date = 20240103;
        let mut b = bar();
        b.close = 10.7;
        let mut v = vec![a, bar(), b];
        sort_dedup(&mut v);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].date, 20240102);
        assert_eq!(v[0].close, 10.7);
    }
}
