//! L2 with the market in view (REFERENCE §15.1 L2): the single-stock channels of
//! [`crate::channels`] plus the cross-sectional RPS, which only a screen can compute.

use serde::{Deserialize, Serialize};

use crate::accumulation::{DRY_VOL_QUANTILE, dry_volume, volume_contraction};
// The single-stock channel thresholds: one set for the diagnosis and the screen.
use crate::channels::{
    ACC_MA_GAP, ACC_MAX_ABOVE_LOW, ACC_MAX_RANGE_60, ACC_VOL_RATIO, AMBUSH_MAX_BIAS,
    AMBUSH_MAX_RET20, AMBUSH_RS3_MIN, AMBUSH_RS10_MIN, BENCH_DROP_3D, BENCH_STRONG_3D,
    BENCH_STRONG_10D, CHANNEL_ORDER, ChannelConfig, ChannelStatus, DRY_MAX_ABOVE_LOW, L2_MIN_BARS,
    MOMENTUM_MAX_BIAS, NOT_SELECTED, RS_RELAX, RS3_MIN, RS10_MIN, Track, as_of, l2_channels,
    relative_strength,
};
use crate::indicators::{
    linear_slope, ma, max_high, mean_by, min_low, ratio, ret_pct, tail, volume_ratio,
};
use crate::triggers::{bias_cap_for_channel, detect_sos};
use crate::{Bar, Board};

/// RPS windows: `ret_fast(50)` and `ret_slow(120)`.
pub const RPS_FAST: usize = 50;
pub const RPS_SLOW: usize = 120;
/// RPS momentum: (rps50 ≥ 65, rps120 ≥ 70, slope ok) or (rps120 ≥ 80, rps50 ≥ 50) or the
/// acceleration bypass (slope ≥ 1.5, rps50 ≥ 50, rps120 ≥ 55).
const MOM_FAST: f64 = 65.0;
const MOM_SLOW: f64 = 70.0;
const MOM_STRONG_SLOW: f64 = 80.0;
const MOM_STRONG_FAST: f64 = 50.0;
const SLOPE_OK: f64 = 0.5;
const ACCEL_SLOPE: f64 = 1.5;
const ACCEL_FAST: f64 = 50.0;
const ACCEL_SLOW: f64 = 55.0;
/// RPS ambush: rps50 ≤ 45 and rps120 ≥ 70.
const AMBUSH_FAST_MAX: f64 = 45.0;
const AMBUSH_SLOW_MIN: f64 = 70.0;
/// 点火破局 needs rps120 ≥ 30 when RPS is active.
const SOS_BYPASS_SLOW: f64 = 30.0;
/// 趋势延续: bullish, rps120 ≥ 75, volume 5/20 ≥ 0.70.
const TREND_CONT_SLOW: f64 = 75.0;
const TREND_CONT_VOL: f64 = 0.70;
/// 加速突破: close > MA50, not bullish, rps50 ≥ 70, ret20 ≥ 15 %, volume 20 / prior 40 ≥ 1.3.
const ACCEL_BREAK_FAST: f64 = 70.0;
const ACCEL_BREAK_RET20: f64 = 15.0;
const ACCEL_BREAK_VOL: f64 = 1.3;

/// A stock's place in the market: percentile ranks ×100 of its 50- and 120-day returns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rps {
    pub rps50: f64,
    pub rps120: f64,
}

/// Percentile ranks ×100 (ties share their average rank, as pandas `rank(pct=True)`); `None`
/// stays `None` and is not counted.
pub fn percentile_ranks(values: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut idx: Vec<usize> = (0..values.len()).filter(|&i| values[i].is_some()).collect();
    let key = |i: usize| values[i].unwrap_or(f64::NAN);
    idx.sort_by(|&a, &b| key(a).total_cmp(&key(b)).then(a.cmp(&b)));
    let n = idx.len() as f64;
    let mut out = vec![None; values.len()];
    let mut start = 0;
    while start < idx.len() {
        let mut end = start + 1;
        while end < idx.len() && key(idx[end]) == key(idx[start]) {
            end += 1;
        }
        // Ranks start..end (0-based) → average 1-based rank.
        let avg = (start + end + 1) as f64 / 2.0;
        for &i in &idx[start..end] {
            out[i] = Some(avg / n * 100.0);
        }
        start = end;
    }
    out
}

/// Slope (%/day) of the cumulative-return path of the last 10 closes.
pub fn rps_slope(bars: &[Bar]) -> Option<f64> {
    let w = tail(bars, 10);
    if w.len() < 10 {
        return None;
    }
    let base = w[0].close;
    // On the stack: this runs for every stock on every screened day.
    let mut path = [0.0f64; 10];
    for (p, b) in path.iter_mut().zip(w) {
        *p = (ratio(b.close, base)? - 1.0) * 100.0;
    }
    linear_slope(&path)
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RpsFlags {
    pub momentum_ok: bool,
    pub ambush_ok: bool,
}

/// §15.1 RPS flags; without RPS both pass (the reference's "RPS unavailable" rule).
pub fn rps_flags(rps: Option<Rps>, slope: Option<f64>) -> RpsFlags {
    let Some(Rps { rps50, rps120 }) = rps else {
        return RpsFlags {
            momentum_ok: true,
            ambush_ok: true,
        };
    };
    let slope_ok = slope.is_some_and(|s| s >= SLOPE_OK);
    let accel =
        slope.is_some_and(|s| s >= ACCEL_SLOPE) && rps50 >= ACCEL_FAST && rps120 >= ACCEL_SLOW;
    RpsFlags {
        momentum_ok: (rps50 >= MOM_FAST && rps120 >= MOM_SLOW && slope_ok)
            || (rps120 >= MOM_STRONG_SLOW && rps50 >= MOM_STRONG_FAST)
            || accel,
        ambush_ok: rps50 <= AMBUSH_FAST_MAX && rps120 >= AMBUSH_SLOW_MIN,
    }
}

/// Channel switches of the screen (0.9.467 defaults: 趋势延续, 加速突破, 暗中护盘 off).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StrengthConfig {
    pub channels: ChannelConfig,
    pub enable_trend_cont: bool,
    pub enable_breakout_accel: bool,
}

/// The funnel's L2 verdict for one stock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Strength {
    /// Passing channels `+`-joined in the fixed order, or `未入选`.
    pub label: String,
    pub track: Track,
    pub rs_10d: Option<f64>,
    pub rs_3d: Option<f64>,
}

impl Strength {
    pub fn passed(&self) -> bool {
        self.label != NOT_SELECTED
    }
}

/// The SOS detector's day change minimum (§15.1 L4 SOS: ≥ 6 %).
const SOS_DAY_PCT_MIN: f64 = 6.0;

/// L2 inputs a caller has precomputed for the last bar, each equal to what this module would
/// compute from the bars (MA50, MA200, the 250-day low, the 地量 volume test).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L2Pre {
    pub ma50: Option<f64>,
    pub ma200: Option<f64>,
    pub low250: Option<f64>,
    pub dry: bool,
    /// [`volume_contraction`].
    pub vol_contraction: Option<f64>,
}

/// L2 as of the last bar of `bars` (§15.1 L2 with RPS). `bench` is cut to the stock's last
/// date inside. `pre` carries precomputed inputs ([`super::Funnel`] with daily features has
/// them; reading them instead of 250 bars is most of a screen's saving); `None` computes all.
pub fn l2_strength(
    bars: &[Bar],
    bench: Option<&[Bar]>,
    board: Board,
    rps: Option<Rps>,
    pre: Option<&L2Pre>,
    cfg: &StrengthConfig,
) -> Strength {
    let bench = bench.and_then(|b| bars.last().map(|l| as_of(b, l.date)));
    let rs10 = bench.and_then(|b| relative_strength(bars, b, 10));
    let rs3 = bench.and_then(|b| relative_strength(bars, b, 3));
    let mut out = Strength {
        label: NOT_SELECTED.to_string(),
        track: Track::Unknown,
        rs_10d: rs10,
        rs_3d: rs3,
    };
    let (Some(last), true) = (bars.last(), bars.len() >= L2_MIN_BARS) else {
        return out;
    };
    let (ma50, ma200) = match pre {
        Some(p) => (p.ma50, p.ma200),
        None => (ma(bars, 50), ma(bars, 200)),
    };
    let (Some(ma50), Some(ma200)) = (ma50, ma200) else {
        return out;
    };
    let flags = rps_flags(rps, rps_slope(bars));
    let close = last.close;
    let bias = ratio(close - ma200, ma200);
    let bullish = ma50 > ma200;
    let mut passed = [false; 8];

    // 主升通道
    let bench3 = bench.and_then(|b| ret_pct(b, 3));
    let bench10 = bench.and_then(|b| ret_pct(b, 10));
    let holding_ma20 =
        bench3.is_some_and(|r| r <= BENCH_DROP_3D) && ma(bars, 20).is_some_and(|m| close >= m);
    let rs_ok = match (bench, rs10, rs3) {
        (Some(_), Some(a), Some(b)) => {
            let strong = bench10.is_some_and(|r| r >= BENCH_STRONG_10D)
                || bench3.is_some_and(|r| r >= BENCH_STRONG_3D);
            let k = if strong { RS_RELAX } else { 1.0 };
            a >= RS10_MIN * k && b >= RS3_MIN * k
        }
        // No benchmark, or it lacks a date: RS is not checked (reported as rs = null).
        _ => true,
    };
    passed[0] = (bullish || holding_ma20)
        && rs_ok
        && bias.is_some_and(|b| b <= MOMENTUM_MAX_BIAS)
        && flags.momentum_ok;

    // 潜伏通道
    let ambush_rs = match (bench, rs10, rs3) {
        (Some(_), Some(a), Some(b)) => a >= AMBUSH_RS10_MIN && b >= AMBUSH_RS3_MIN,
        _ => true,
    };
    passed[1] = bias.is_some_and(|b| b.abs() <= AMBUSH_MAX_BIAS)
        && ret_pct(bars, 20).is_some_and(|r| r <= AMBUSH_MAX_RET20)
        && ambush_rs
        && flags.ambush_ok;

    // 吸筹通道, 地量蓄势
    let low250 = match pre {
        Some(p) => p.low250,
        None => (bars.len() >= 250)
            .then(|| min_low(tail(bars, 250)))
            .flatten(),
    };
    if let Some(low) = low250 {
        let range60 = || {
            let b60 = tail(bars, 60);
            match (max_high(b60), min_low(b60)) {
                (Some(h), Some(l)) => ratio(h - l, l),
                _ => None,
            }
        };
        passed[2] = close <= low * ACC_MAX_ABOVE_LOW
            && range60().is_some_and(|r| r <= ACC_MAX_RANGE_60)
            && pre
                .map_or_else(|| volume_contraction(bars), |p| p.vol_contraction)
                .is_some_and(|r| r < ACC_VOL_RATIO)
            && ratio((ma50 - ma200).abs(), ma200).is_some_and(|g| g <= ACC_MA_GAP);
        passed[3] =
            close <= low * DRY_MAX_ABOVE_LOW && pre.map_or_else(|| dry_volume(bars), |p| p.dry);
    }

    // 暗中护盘 (off by default): the single-stock evaluation, which has the divergence rule.
    if cfg.channels.enable_rs_divergence {
        passed[4] = l2_channels(bars, bench, board, &cfg.channels)
            .channels
            .get(4)
            .is_some_and(|c| c.status == ChannelStatus::Pass);
    }
    if let (true, Some(r)) = (cfg.enable_trend_cont, rps) {
        passed[5] = bullish
            && r.rps120 >= TREND_CONT_SLOW
            && volume_ratio(bars, 5, 20).is_some_and(|v| v >= TREND_CONT_VOL);
    }
    if let (true, Some(r)) = (cfg.enable_breakout_accel, rps) {
        passed[6] = close > ma50
            && !bullish
            && r.rps50 >= ACCEL_BREAK_FAST
            && ret_pct(bars, 20).is_some_and(|x| x >= ACCEL_BREAK_RET20)
            && prior_volume_ratio(bars, 20, 40).is_some_and(|v| v >= ACCEL_BREAK_VOL);
    }
    // 点火破局: the SOS detector, with rps120 ≥ 30 when RPS is active.
    // The day-change test first: the detector requires it, and it needs two bars, not 200.
    let n = bars.len();
    passed[7] = rps.is_none_or(|r| r.rps120 >= SOS_BYPASS_SLOW)
        && bars[n - 1]
            .pct_change(bars[n - 2].close)
            .is_some_and(|p| p >= SOS_DAY_PCT_MIN)
        && detect_sos(bars, bias_cap_for_channel(board, "点火破局")).is_some();

    let names: Vec<&str> = CHANNEL_ORDER
        .iter()
        .zip(passed)
        .filter(|(_, p)| *p)
        .map(|(c, _)| *c)
        .collect();
    if !names.is_empty() {
        out.label = names.join("+");
    }
    out.track = Track::from_label(&out.label);
    out
}

/// Mean volume of the last `recent` bars over the mean of the `prior` bars before them.
fn prior_volume_ratio(bars: &[Bar], recent: usize, prior: usize) -> Option<f64> {
    let n = bars.len();
    if n < recent + prior {
        return None;
    }
    ratio(
        mean_by(&bars[n - recent..], |b| b.volume)?,
        mean_by(&bars[n - recent - prior..n - recent], |b| b.volume)?,
    )
}

/// The 地量 volume test ([`dry_volume`]) for every bar at once: `out[i]` is its value on
/// `bars[..=i]` (given at least 250 bars of history in the caller's window). One sliding
/// sorted window instead of a selection per bar per day; the quantile is formed exactly as
/// [`crate::indicators::quantile_in_place`] forms it, so the flags are identical.
pub fn dry_volume_series(bars: &[Bar]) -> Vec<bool> {
    const WINDOW: usize = 250;
    const RECENT: usize = 10;
    const MIN_BARS: usize = 50;
    let mut sorted: Vec<f64> = Vec::with_capacity(WINDOW + 1);
    let mut out = Vec::with_capacity(bars.len());
    for (i, b) in bars.iter().enumerate() {
        let v = b.volume;
        if v.is_finite() {
            let at = sorted.partition_point(|x| x.total_cmp(&v).is_lt());
            sorted.insert(at, v);
        }
        if i >= WINDOW {
            let old = bars[i - WINDOW].volume;
            if old.is_finite()
                && let Ok(at) = sorted.binary_search_by(|x| x.total_cmp(&old))
            {
                sorted.remove(at);
            }
        }
        if i + 1 < MIN_BARS || sorted.is_empty() {
            out.push(false);
            continue;
        }
        // As `quantile_in_place`: lo + (next order statistic − lo) · frac.
        let pos = DRY_VOL_QUANTILE * (sorted.len() - 1) as f64;
        let lo = (pos.floor() as usize).min(sorted.len() - 1);
        let frac = pos - lo as f64;
        let lo_v = sorted[lo];
        let hi_v = if frac > 0.0 {
            sorted.get(lo + 1).copied().unwrap_or(lo_v)
        } else {
            lo_v
        };
        let q = lo_v + (hi_v - lo_v) * frac;
        let dry = q.is_finite()
            && bars[i + 1 - RECENT.min(i + 1)..=i]
                .iter()
                .map(|b| b.volume)
                .reduce(f64::min)
                .is_some_and(|m| m <= q);
        out.push(dry);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indicators::test_support::from_closes;

    #[test]
    fn percentile_ranks_average_ties_and_skip_missing() {
        // pandas: Series([3, 1, None, 3, 2]).rank(pct=True) = [0.875, 0.25, NaN, 0.875, 0.5].
        let r = percentile_ranks(&[Some(3.0), Some(1.0), None, Some(3.0), Some(2.0)]);
        assert_eq!(
            r,
            vec![Some(87.5), Some(25.0), None, Some(87.5), Some(50.0)]
        );
        assert!(percentile_ranks(&[]).is_empty());
    }

    #[test]
    fn rps_flags_table() {
        let rps = |a, b| {
            Some(Rps {
                rps50: a,
                rps120: b,
            })
        };
        let cases = [
            // (rps, slope, momentum, ambush)
            (None, None, true, true),
            (rps(65.0, 70.0), Some(0.5), true, false),
            (rps(65.0, 70.0), Some(0.49), false, false),
            (rps(50.0, 80.0), None, true, false),
            (rps(49.9, 80.0), None, false, false),
            (rps(50.0, 55.0), Some(1.5), true, false),
            (rps(50.0, 55.0), Some(1.4), false, false),
            (rps(45.0, 70.0), None, false, true),
            (rps(45.1, 70.0), None, false, false),
        ];
        for (r, slope, momentum, ambush) in cases {
            let f = rps_flags(r, slope);
            assert_eq!(
                (f.momentum_ok, f.ambush_ok),
                (momentum, ambush),
                "{r:?} {slope:?}"
            );
        }
    }

    #[test]
    fn slope_of_a_steady_one_percent_path() {
        // The last 10 closes 102…111 step by 1 from a base of 102: the cumulative % path
        // climbs 100/102 % a day.
        let closes: Vec<f64> = (0..12).map(|i| 100.0 + f64::from(i)).collect();
        let bars = from_closes(&closes, 1.0);
        let s = rps_slope(&bars).unwrap();
        assert!((s - 100.0 / 102.0).abs() < 1e-9, "{s}");
        assert_eq!(rps_slope(&bars[..9]), None);
    }
}
