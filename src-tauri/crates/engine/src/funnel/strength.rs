//! L2 with the market in view (REFERENCE §15.1 L2): the single-stock channels of
//! [`crate::channels`] plus the cross-sectional RPS, which only a screen can compute.

use serde::{Deserialize, Serialize};

use crate::channels::{
    CHANNEL_ORDER, ChannelConfig, ChannelStatus, NOT_SELECTED, Track, l2_channels,
};
use crate::indicators::{linear_slope, ma, mean_by, ratio, ret_pct, tail};
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
    let path: Vec<f64> = w
        .iter()
        .map(|b| ratio(b.close, base).map(|r| (r - 1.0) * 100.0))
        .collect::<Option<_>>()?;
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

/// L2 as of the last bar of `bars`. `bench` is cut to the stock's last date inside.
pub fn l2_strength(
    bars: &[Bar],
    bench: Option<&[Bar]>,
    board: Board,
    rps: Option<Rps>,
    cfg: &StrengthConfig,
) -> Strength {
    let single = l2_channels(bars, bench, board, &cfg.channels);
    let flags = rps_flags(rps, rps_slope(bars));
    let single_pass = |i: usize| {
        single
            .channels
            .get(i)
            .is_some_and(|c| c.status == ChannelStatus::Pass)
    };
    let ma50 = ma(bars, 50);
    let ma200 = ma(bars, 200);
    let bullish = matches!((ma50, ma200), (Some(a), Some(b)) if a > b);
    let close = bars.last().map(|b| b.close);
    let mut passed = [false; 8];
    passed[0] = single_pass(0) && flags.momentum_ok;
    passed[1] = single_pass(1) && flags.ambush_ok;
    passed[2] = single_pass(2);
    passed[3] = single_pass(3);
    passed[4] = single_pass(4);
    if let (true, Some(r)) = (cfg.enable_trend_cont && ma200.is_some(), rps) {
        passed[5] = bullish
            && r.rps120 >= TREND_CONT_SLOW
            && volume_ratio_windows(bars, 5, 20).is_some_and(|v| v >= TREND_CONT_VOL);
    }
    if let (true, Some(r), Some(c), Some(m50)) = (
        cfg.enable_breakout_accel && ma200.is_some(),
        rps,
        close,
        ma50,
    ) {
        passed[6] = c > m50
            && !bullish
            && r.rps50 >= ACCEL_BREAK_FAST
            && ret_pct(bars, 20).is_some_and(|x| x >= ACCEL_BREAK_RET20)
            && prior_volume_ratio(bars, 20, 40).is_some_and(|v| v >= ACCEL_BREAK_VOL);
    }
    passed[7] = single_pass(7) && rps.is_none_or(|r| r.rps120 >= SOS_BYPASS_SLOW);
    let names: Vec<&str> = CHANNEL_ORDER
        .iter()
        .zip(passed)
        .filter(|(_, p)| *p)
        .map(|(c, _)| *c)
        .collect();
    let label = if names.is_empty() {
        NOT_SELECTED.to_string()
    } else {
        names.join("+")
    };
    Strength {
        track: Track::from_label(&label),
        label,
        rs_10d: single.rs_10d,
        rs_3d: single.rs_3d,
    }
}

/// Mean volume of the last `recent` bars over the mean of the last `base` bars.
fn volume_ratio_windows(bars: &[Bar], recent: usize, base: usize) -> Option<f64> {
    crate::indicators::volume_ratio(bars, recent, base)
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
