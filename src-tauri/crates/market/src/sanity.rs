//! Bar sanity checks, shared by the parsers, the bundled loader and the cache reader, so a
//! broken row is reported where it is found instead of reaching the engine.

use wyckoff_engine::Bar;

/// Why a bar is rejected; `None` when it is usable.
pub fn check_bar(b: &Bar) -> Option<&'static str> {
    if crate::date::from_yyyymmdd(b.date).is_none() {
        return Some("invalid date");
    }
    let prices = [b.open, b.high, b.low, b.close];
    if prices.iter().any(|p| !p.is_finite()) {
        return Some("non-finite price");
    }
    if prices.iter().any(|p| *p <= 0.0) {
        return Some("non-positive price");
    }
    // allow rounding noise from vendors that round each field separately
    let eps = 1e-6 * b.high.abs().max(1.0);
    if b.high + eps < b.open.max(b.close).max(b.low) {
        return Some("high below open/close/low");
    }
    if b.low - eps > b.open.min(b.close) {
        return Some("low above open/close");
    }
    if !b.volume.is_finite() || b.volume < 0.0 {
        return Some("negative or non-finite volume");
    }
    if !b.amount.is_finite() || b.amount < 0.0 {
        return Some("negative or non-finite amount");
    }
    if let Some(t) = b.turnover
        && (!t.is_finite() || t < 0.0)
    {
        return Some("negative or non-finite turnover");
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
            assert_eq!(check_bar(&b), Some(want));
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
