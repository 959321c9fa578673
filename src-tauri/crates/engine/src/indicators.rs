//! Slice-based indicators. Every function looks at the *end* of the slice (the "as of" bar is the
//! last one) and returns `None` when there is not enough history, or when a result would not be a
//! finite number; callers never see NaN or infinity.

use crate::Bar;

/// `Some(x)` only for finite `x`.
pub fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// `a / b` for positive `b`, finite results only.
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    if b > 0.0 { finite(a / b) } else { None }
}

/// Arithmetic mean; `None` for an empty slice.
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    finite(xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Mean of `f(bar)` over bars, without collecting.
pub fn mean_by(bars: &[Bar], f: impl Fn(&Bar) -> f64) -> Option<f64> {
    if bars.is_empty() {
        return None;
    }
    finite(bars.iter().map(f).sum::<f64>() / bars.len() as f64)
}

/// Linear-interpolated quantile (`q` in 0..=1), the pandas/numpy default; `None` if empty.
pub fn quantile(xs: &[f64], q: f64) -> Option<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    quantile_in_place(&mut v, q)
}

/// As [`quantile`], reordering the caller's scratch buffer (no allocation).
pub fn quantile_in_place(v: &mut [f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let lo = (pos.floor() as usize).min(v.len() - 1);
    let frac = pos - lo as f64;
    // Selection instead of a full sort: O(n); the next order statistic is the minimum of the
    // part above `lo`.
    let (_, &mut lo_v, above) = v.select_nth_unstable_by(lo, f64::total_cmp);
    let hi_v = if frac > 0.0 {
        above.iter().copied().reduce(f64::min).unwrap_or(lo_v)
    } else {
        lo_v
    };
    finite(lo_v + (hi_v - lo_v) * frac)
}

/// Median (quantile 0.5).
pub fn median(xs: &[f64]) -> Option<f64> {
    quantile(xs, 0.5)
}

/// Rolling quantile of `window` values ending at each index (`None` until the window is full).
pub fn rolling_quantile(xs: &[f64], window: usize, q: f64) -> Vec<Option<f64>> {
    let mut scratch = Vec::with_capacity(window);
    (0..xs.len())
        .map(|i| {
            if window == 0 || i + 1 < window {
                return None;
            }
            scratch.clear();
            scratch.extend_from_slice(&xs[i + 1 - window..=i]);
            quantile_in_place(&mut scratch, q)
        })
        .collect()
}

/// Simple moving average of the last `n` closes, as of the last bar.
pub fn ma(bars: &[Bar], n: usize) -> Option<f64> {
    if n == 0 || bars.len() < n {
        return None;
    }
    mean_by(&bars[bars.len() - n..], |b| b.close)
}

/// MA of the last `n` closes as of bar index `end` (inclusive).
pub fn ma_at(bars: &[Bar], end: usize, n: usize) -> Option<f64> {
    if end >= bars.len() {
        return None;
    }
    ma(&bars[..=end], n)
}

/// Full moving-average series (`None` until `n` closes exist); O(len) with a running sum.
pub fn ma_series(bars: &[Bar], n: usize) -> Vec<Option<f64>> {
    let mut out = Vec::with_capacity(bars.len());
    let mut sum = 0.0;
    for (i, b) in bars.iter().enumerate() {
        sum += b.close;
        if n > 0 && i >= n {
            sum -= bars[i - n].close;
        }
        out.push(if n > 0 && i + 1 >= n {
            finite(sum / n as f64)
        } else {
            None
        });
    }
    out
}

/// True range of bar `i` (uses bar `i-1`'s close; just high − low for the first bar).
pub fn true_range_at(bars: &[Bar], i: usize) -> f64 {
    let prev = (i > 0).then(|| bars[i - 1].close);
    bars[i].true_range(prev)
}

/// ATR = simple mean of the last `n` true ranges (REFERENCE §15 version note 4).
pub fn atr(bars: &[Bar], n: usize) -> Option<f64> {
    if n == 0 || bars.len() < n {
        return None;
    }
    let start = bars.len() - n;
    finite(
        (start..bars.len())
            .map(|i| true_range_at(bars, i))
            .sum::<f64>()
            / n as f64,
    )
}

/// Mean of TR/close over the last `n` bars (ATR as a fraction of price).
pub fn atr_pct(bars: &[Bar], n: usize) -> Option<f64> {
    if n == 0 || bars.len() < n {
        return None;
    }
    let start = bars.len() - n;
    let mut sum = 0.0;
    for i in start..bars.len() {
        sum += ratio(true_range_at(bars, i), bars[i].close)?;
    }
    finite(sum / n as f64)
}

/// Indices whose value equals the max of its ±`window` neighbourhood (edges excluded, as a
/// centred rolling window would; REFERENCE §15.0 `swing_values`).
pub fn swing_highs(values: &[f64], window: usize) -> Vec<usize> {
    swings(values, window, |a, b| a >= b)
}

/// Indices whose value equals the min of its ±`window` neighbourhood.
pub fn swing_lows(values: &[f64], window: usize) -> Vec<usize> {
    swings(values, window, |a, b| a <= b)
}

fn swings(values: &[f64], w: usize, keeps: impl Fn(f64, f64) -> bool) -> Vec<usize> {
    if values.len() < 2 * w + 1 {
        return Vec::new();
    }
    (w..values.len() - w)
        .filter(|&i| {
            let v = values[i];
            values[i - w..=i + w].iter().all(|&o| keeps(v, o))
        })
        .collect()
}

/// Swing-high values of the bars' highs.
pub fn swing_high_values(bars: &[Bar], window: usize) -> Vec<f64> {
    let highs: Vec<f64> = bars.iter().map(|b| b.high).collect();
    swing_highs(&highs, window)
        .into_iter()
        .map(|i| highs[i])
        .collect()
}

/// Swing-low values of the bars' lows.
pub fn swing_low_values(bars: &[Bar], window: usize) -> Vec<f64> {
    let lows: Vec<f64> = bars.iter().map(|b| b.low).collect();
    swing_lows(&lows, window)
        .into_iter()
        .map(|i| lows[i])
        .collect()
}

/// `close[-1] / close[-n-1] − 1`, in percent (REFERENCE §15.0 `ret_N`).
pub fn ret_pct(bars: &[Bar], n: usize) -> Option<f64> {
    if bars.len() < n + 1 {
        return None;
    }
    let last = bars[bars.len() - 1].close;
    let base = bars[bars.len() - 1 - n].close;
    ratio(last, base).map(|r| (r - 1.0) * 100.0)
}

/// Mean volume of the last `recent` bars over mean volume of the last `base` bars.
pub fn volume_ratio(bars: &[Bar], recent: usize, base: usize) -> Option<f64> {
    if recent == 0 || base == 0 || bars.len() < recent.max(base) {
        return None;
    }
    let r = mean_by(&bars[bars.len() - recent..], |b| b.volume)?;
    let b = mean_by(&bars[bars.len() - base..], |b| b.volume)?;
    ratio(r, b)
}

/// Highest high over the bars.
pub fn max_high(bars: &[Bar]) -> Option<f64> {
    bars.iter().map(|b| b.high).reduce(f64::max)
}

/// Lowest low over the bars.
pub fn min_low(bars: &[Bar]) -> Option<f64> {
    bars.iter().map(|b| b.low).reduce(f64::min)
}

/// Least-squares slope of `ys` against 0..n.
pub fn linear_slope(ys: &[f64]) -> Option<f64> {
    let n = ys.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mx = (nf - 1.0) / 2.0;
    let my = ys.iter().sum::<f64>() / nf;
    let (mut num, mut den) = (0.0, 0.0);
    for (i, &y) in ys.iter().enumerate() {
        let dx = i as f64 - mx;
        num += dx * (y - my);
        den += dx * dx;
    }
    ratio(num, den)
}

/// Last `n` bars (or all, if fewer).
pub fn tail(bars: &[Bar], n: usize) -> &[Bar] {
    &bars[bars.len().saturating_sub(n)..]
}

#[cfg(test)]
pub(crate) mod test_support {
    use crate::Bar;

    /// A bar with a given close; open = close, high/low ±1 %, fixed volume.
    pub fn bar(date: u32, close: f64, volume: f64) -> Bar {
        Bar {
            date,
            open: close,
            high: close * 1.01,
            low: close * 0.99,
            close,
            volume,
            amount: close * volume,
            turnover: None,
        }
    }

    /// Consecutive weekday dates starting 2020-01-06 (a Monday).
    pub fn dates(n: usize) -> Vec<u32> {
        let mut out = Vec::with_capacity(n);
        let mut d = crate::dates::days_from_civil(20200106).unwrap_or(0);
        while out.len() < n {
            let wd = (d + 3).rem_euclid(7);
            if wd < 5 {
                out.push(crate::dates::civil_from_days(d));
            }
            d += 1;
        }
        out
    }

    /// Bars from a list of closes with constant volume.
    pub fn from_closes(closes: &[f64], volume: f64) -> Vec<Bar> {
        let ds = dates(closes.len());
        closes
            .iter()
            .zip(ds)
            .map(|(&c, d)| bar(d, c, volume))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;

    #[test]
    fn ma_and_series_agree() {
        let bars = from_closes(&[1.0, 2.0, 3.0, 4.0, 5.0], 100.0);
        assert_eq!(ma(&bars, 3), Some(4.0));
        assert_eq!(ma(&bars, 6), None);
        let s = ma_series(&bars, 3);
        assert_eq!(s[1], None);
        assert_eq!(s[2], Some(2.0));
        assert_eq!(s[4], Some(4.0));
        assert_eq!(ma_at(&bars, 3, 2), Some(3.5));
    }

    #[test]
    fn atr_is_simple_mean_of_true_ranges() {
        let mut bars = from_closes(&[10.0, 10.0, 10.0], 1.0);
        bars[1].high = 12.0; // TR = max(12-9.9, |12-10|, |9.9-10|) = 2.1
        bars[2].low = 9.0; // TR = max(10.1-9, |10.1-10|, |9-10|) = 1.1
        let a = atr(&bars, 2).unwrap();
        assert!((a - 1.6).abs() < 1e-9, "{a}");
        assert_eq!(atr(&bars, 4), None);
    }

    #[test]
    fn quantile_matches_linear_interpolation() {
        let xs = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(quantile(&xs, 0.0), Some(1.0));
        assert_eq!(quantile(&xs, 1.0), Some(4.0));
        assert_eq!(quantile(&xs, 0.5), Some(2.5));
        assert!((quantile(&xs, 0.2).unwrap() - 1.6).abs() < 1e-12);
        assert_eq!(quantile(&[], 0.5), None);
        let r = rolling_quantile(&[1.0, 2.0, 3.0, 4.0], 2, 0.5);
        assert_eq!(r, vec![None, Some(1.5), Some(2.5), Some(3.5)]);
    }

    #[test]
    fn swings_exclude_edges_and_find_extremes() {
        let v = [1.0, 2.0, 5.0, 2.0, 1.0, 0.5, 1.0, 3.0];
        assert_eq!(swing_highs(&v, 2), vec![2]);
        assert_eq!(swing_lows(&v, 2), vec![5]);
        assert!(swing_highs(&v[..3], 2).is_empty());
    }

    #[test]
    fn returns_and_volume_ratio() {
        let bars = from_closes(&[10.0, 11.0, 12.0], 100.0);
        assert!((ret_pct(&bars, 2).unwrap() - 20.0).abs() < 1e-9);
        assert_eq!(ret_pct(&bars, 3), None);
        assert_eq!(volume_ratio(&bars, 1, 3), Some(1.0));
        let zero = from_closes(&[10.0, 11.0], 0.0);
        assert_eq!(volume_ratio(&zero, 1, 2), None);
    }

    #[test]
    fn slope_of_a_line() {
        assert_eq!(linear_slope(&[1.0, 3.0, 5.0]), Some(2.0));
        assert_eq!(linear_slope(&[1.0]), None);
    }
}
