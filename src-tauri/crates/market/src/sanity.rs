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

/// The version of the rules [`check_bar`] applies, stored with each series whose bars all
/// passed them when it was written (see `series`). Whatever changes what `check_bar`
/// rejects must raise it, so that series sealed under the old rules are checked again.
pub const RULES: u8 = 1;

/// Why a bar is rejected; `None` when it is usable.
pub fn check_bar(b: &Bar) -> Option<BarFault> {
    // every bar is checked as its series is written, and again on reads of series not
    // sealed as sound (millions of bars): the usual good bar is recognised in one pass
    // without branches, and only a doubtful one is diagnosed
    if looks_sound(b) {
        return None;
    }
    diagnose(b)
}

/// True only when [`diagnose`] finds nothing (NaN fails every comparison, and an infinity
/// fails `<= f64::MAX`).
#[inline]
fn looks_sound(b: &Bar) -> bool {
    let finite_non_negative = |x: f64| (0.0..=f64::MAX).contains(&x);
    let positive = |p: f64| (p > 0.0) & (p <= f64::MAX);
    let eps = 1e-6 * b.high.abs().max(1.0);
    positive(b.open)
        & positive(b.high)
        & positive(b.low)
        & positive(b.close)
        & (b.high + eps >= b.open.max(b.close).max(b.low))
        & (b.low - eps <= b.open.min(b.close))
        & finite_non_negative(b.volume)
        & finite_non_negative(b.amount)
        & b.turnover.is_none_or(finite_non_negative)
        & crate::date::is_valid_yyyymmdd(b.date)
}

fn diagnose(b: &Bar) -> Option<BarFault> {
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

    /// The quick pass never lets through a bar the diagnosis would reject, nor rejects
    /// one it accepts: every field drawn from edge values, many combinations.
    #[test]
    fn the_quick_pass_agrees_with_the_diagnosis() {
        let values = [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN_POSITIVE,
            -1.0,
            -0.0,
            0.0,
            1.0,
            10.0,
            10.0 + 5e-6,
            10.0 - 5e-6,
            10.5,
            1e9,
        ];
        let dates = [20240102, 20240230, 0, 19000229, 20000229, 99991231];
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut pick = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut rejected = 0;
        for _ in 0..300_000 {
            let mut b = bar();
            let fields = [
                &mut b.open,
                &mut b.high,
                &mut b.low,
                &mut b.close,
                &mut b.volume,
                &mut b.amount,
            ];
            // usually one or two fields off the good bar, sometimes all
            let changes = [1, 1, 2, 6][pick(4)];
            for field in fields {
                if pick(6) < changes {
                    *field = values[pick(values.len())];
                }
            }
            b.turnover = [None, Some(values[pick(values.len())])][pick(2)];
            b.date = dates[pick(dates.len())];
            let sound = looks_sound(&b);
            assert_eq!(sound, diagnose(&b).is_none(), "{b:?}");
            rejected += usize::from(!sound);
        }
        assert!(rejected > 100_000 && rejected < 290_000, "{rejected}");
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
