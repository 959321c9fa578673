//! Accumulation stage Accum_A/B/C (REFERENCE §15.1 `analyze_accum_stage`).

use serde::{Deserialize, Serialize};

use crate::Bar;
use crate::indicators::{ma, mean_by, min_low, quantile, ratio, tail};

/// Wyckoff stage labels shared by the accumulation analysis, the structure triggers and exits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Stage {
    #[serde(rename = "Accum_A")]
    AccumA,
    #[serde(rename = "Accum_B")]
    AccumB,
    #[serde(rename = "Accum_C")]
    AccumC,
    Markup,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::AccumA => "Accum_A",
            Stage::AccumB => "Accum_B",
            Stage::AccumC => "Accum_C",
            Stage::Markup => "Markup",
        }
    }

    pub fn is_accum(self) -> bool {
        !matches!(self, Stage::Markup)
    }
}

/// History needed: one trading year (§15.1).
pub const ACCUM_MIN_BARS: usize = 250;
/// Close must be within +45 % of the 250-day low (§15.1).
const ACCUM_MAX_ABOVE_BASE: f64 = 1.45;
/// |MA50 − MA200| / MA200 ≤ 8 % (§15.1).
const ACCUM_MA_GAP: f64 = 0.08;
/// Mean volume of the last 20 over the preceding 100 must be < 0.75 (§15.1).
const ACCUM_VOL_RATIO: f64 = 0.75;
/// Stage B: ≥ 3 lows in the last 60 bars within 5 % of the base low (§15.1).
const ACCUM_B_BAND: f64 = 1.05;
const ACCUM_B_TOUCHES: usize = 3;
const ACCUM_B_WINDOW: usize = 60;
/// Stage C: the last-20 min low holds ≥ 97 % of the base (§15.1) and volume is dry.
const ACCUM_C_HOLD: f64 = 0.97;
/// "Dry volume" = the 地量 test: min volume of the last 10 ≤ the 20 % quantile of the last 250
/// (§15.1 L2 地量 with `dry_vol_quantile=0.20` from the 0.9.467 defaults).
pub const DRY_VOL_QUANTILE: f64 = 0.20;
const DRY_VOL_RECENT: usize = 10;

/// The accumulation stage as of the last bar, or `None` when the tape is not in a base.
///
/// Checks run in the documented order: B (repeated tests of the base) before C (base held on
/// dry volume); anything else that passes the base filters is A.
pub fn accum_stage(bars: &[Bar]) -> Option<Stage> {
    if bars.len() < ACCUM_MIN_BARS {
        return None;
    }
    let year = tail(bars, ACCUM_MIN_BARS);
    let base = min_low(year)?;
    let close = bars[bars.len() - 1].close;
    if !(base > 0.0 && close <= base * ACCUM_MAX_ABOVE_BASE) {
        return None;
    }
    let ma50 = ma(bars, 50)?;
    let ma200 = ma(bars, 200)?;
    if ratio((ma50 - ma200).abs(), ma200)? > ACCUM_MA_GAP {
        return None;
    }
    if volume_contraction(bars)? >= ACCUM_VOL_RATIO {
        return None;
    }
    let touches = tail(bars, ACCUM_B_WINDOW)
        .iter()
        .filter(|b| b.low <= base * ACCUM_B_BAND)
        .count();
    if touches >= ACCUM_B_TOUCHES {
        return Some(Stage::AccumB);
    }
    let held = min_low(tail(bars, 20)).is_some_and(|l| l >= base * ACCUM_C_HOLD);
    if held && dry_volume(bars) {
        return Some(Stage::AccumC);
    }
    Some(Stage::AccumA)
}

/// Mean volume of the last 20 bars over the mean of the 100 before them (§15.1).
pub fn volume_contraction(bars: &[Bar]) -> Option<f64> {
    if bars.len() < 120 {
        return None;
    }
    let n = bars.len();
    let recent = mean_by(&bars[n - 20..], |b| b.volume)?;
    let prior = mean_by(&bars[n - 120..n - 20], |b| b.volume)?;
    ratio(recent, prior)
}

/// The 地量 test (§15.1 L2): the last 10 days hold a volume at or below the 20 % quantile of the
/// last 250 (needs ≥ 50 bars).
pub fn dry_volume(bars: &[Bar]) -> bool {
    if bars.len() < 50 {
        return false;
    }
    let vols: Vec<f64> = tail(bars, 250).iter().map(|b| b.volume).collect();
    let Some(q) = quantile(&vols, DRY_VOL_QUANTILE) else {
        return false;
    };
    tail(bars, DRY_VOL_RECENT)
        .iter()
        .map(|b| b.volume)
        .reduce(f64::min)
        .is_some_and(|m| m <= q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indicators::test_support::from_closes;

    /// 250 bars: a decline into a flat base with shrinking volume, the base tested `touches` times
    /// in the last 60 bars.
    fn base(touch_last_60: bool, dry: bool) -> Vec<Bar> {
        let mut closes = Vec::new();
        for i in 0..130 {
            closes.push(10.0 + 0.5 * ((i as f64) / 7.0).sin());
        }
        for i in 0..130 {
            closes.push(10.4 + 0.2 * ((i as f64) / 5.0).sin());
        }
        let mut bars = from_closes(&closes, 1000.0);
        let n = bars.len();
        for (i, b) in bars.iter_mut().enumerate() {
            // Quiet long ago, heavy in the prior 100, lighter (but not dry) in the last 20.
            b.volume = if i >= n - 20 {
                600.0
            } else if i < 130 {
                300.0
            } else {
                1000.0
            };
        }
        if dry {
            bars[n - 3].volume = 100.0;
        }
        let base_low = bars.iter().map(|b| b.low).fold(f64::INFINITY, f64::min);
        if touch_last_60 {
            for k in [n - 50, n - 40, n - 30] {
                bars[k].low = base_low * 1.02;
            }
        }
        bars
    }

    #[test]
    fn stage_b_on_repeated_tests() {
        assert_eq!(accum_stage(&base(true, false)), Some(Stage::AccumB));
    }

    #[test]
    fn stage_c_on_held_base_and_dry_volume() {
        assert_eq!(accum_stage(&base(false, true)), Some(Stage::AccumC));
    }

    #[test]
    fn stage_a_otherwise() {
        assert_eq!(accum_stage(&base(false, false)), Some(Stage::AccumA));
    }

    #[test]
    fn no_stage_without_volume_contraction_or_history() {
        let mut bars = base(true, true);
        for b in &mut bars {
            b.volume = 1000.0;
        }
        assert_eq!(accum_stage(&bars), None);
        assert_eq!(accum_stage(&base(true, true)[..200]), None);
    }

    #[test]
    fn no_stage_far_above_base() {
        let mut bars = base(false, true);
        let n = bars.len();
        bars[n - 1].close = 16.0;
        assert_eq!(accum_stage(&bars), None);
    }
}
