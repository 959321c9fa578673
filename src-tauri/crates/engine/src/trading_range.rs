//! Dynamic trading range (REFERENCE §15.3).

use serde::{Deserialize, Serialize};

use crate::Bar;
use crate::indicators::{atr, median, quantile, ratio, swing_high_values, swing_low_values};

/// Bars examined for the range (REFERENCE §15.3 `lookback=90`).
pub const TR_LOOKBACK: usize = 90;
/// The last bar is excluded so that today's bar can be tested against the range (`exclude_last=1`).
pub const TR_EXCLUDE_LAST: usize = 1;
/// Minimum bars in the zone (§15.3).
pub const TR_MIN_BARS: usize = 40;
/// Swing neighbourhood (§15.3 `swing_window=3`).
pub const TR_SWING_WINDOW: usize = 3;
/// Swings used for the median (§15.3: last 5).
const TR_SWINGS_USED: usize = 5;
/// Width bounds in percent: [4, min(max(30×1.5, 24), 55)] = [4, 45] (§15.3).
pub const TR_MIN_WIDTH_PCT: f64 = 4.0;
pub const TR_MAX_WIDTH_PCT: f64 = 45.0;
/// Max |last − first close| / first close, percent: max(12×1.5, 18) = 18 (§15.3).
pub const TR_MAX_DRIFT_PCT: f64 = 18.0;
/// A bar "tests" support when its low ≤ S×1.035 and resistance when its high ≥ R×0.965 (§15.3).
const TR_TEST_BAND: f64 = 0.035;
/// At least this many tests of each side (§15.3).
const TR_MIN_TESTS: usize = 2;
/// ATR period for the ideal width (§15.3: mean TR over 20).
const TR_ATR_PERIOD: usize = 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TradingRange {
    pub support: f64,
    pub resistance: f64,
    pub mid: f64,
    pub width_pct: f64,
    pub support_tests: usize,
    pub resistance_tests: usize,
    pub quality_score: f64,
    /// First and last bar of the zone the range was measured on (for drawing it).
    pub start_date: u32,
    pub end_date: u32,
}

impl TradingRange {
    /// Absolute width R − S.
    pub fn width(&self) -> f64 {
        self.resistance - self.support
    }
}

/// Identify the trading range as of the last bar, or `None` when the tape is not ranging.
pub fn identify_trading_range(bars: &[Bar]) -> Option<TradingRange> {
    let end = bars.len().checked_sub(TR_EXCLUDE_LAST)?;
    let zone = &bars[end.saturating_sub(TR_LOOKBACK)..end];
    if zone.len() < TR_MIN_BARS {
        return None;
    }
    let lows: Vec<f64> = zone.iter().map(|b| b.low).collect();
    let highs: Vec<f64> = zone.iter().map(|b| b.high).collect();
    let support = level(&swing_low_values(zone, TR_SWING_WINDOW), &lows, 0.10)?;
    let resistance = level(&swing_high_values(zone, TR_SWING_WINDOW), &highs, 0.90)?;
    if !(support > 0.0 && support < resistance) {
        return None;
    }
    let width_pct = (resistance - support) / support * 100.0;
    if !(TR_MIN_WIDTH_PCT..=TR_MAX_WIDTH_PCT).contains(&width_pct) {
        return None;
    }
    let first = zone[0].close;
    let last = zone[zone.len() - 1].close;
    let drift_pct = ratio((last - first).abs(), first)? * 100.0;
    if drift_pct > TR_MAX_DRIFT_PCT {
        return None;
    }
    let support_tests = lows
        .iter()
        .filter(|&&l| l <= support * (1.0 + TR_TEST_BAND))
        .count();
    let resistance_tests = highs
        .iter()
        .filter(|&&h| h >= resistance * (1.0 - TR_TEST_BAND))
        .count();
    if support_tests < TR_MIN_TESTS || resistance_tests < TR_MIN_TESTS {
        return None;
    }
    let atr_pct = atr(zone, TR_ATR_PERIOD)
        .and_then(|a| ratio(a, last))
        .unwrap_or(0.0)
        * 100.0;
    let ideal = (atr_pct * 4.0).clamp(6.0, 40.0);
    let tests_part = ((support_tests + resistance_tests) as f64 / 6.0).min(1.0);
    let width_part = (1.0 - (width_pct - ideal).abs() / ideal).max(0.0);
    let drift_part = (1.0 - drift_pct / TR_MAX_DRIFT_PCT).max(0.0);
    let quality_score = 0.45 * tests_part + 0.35 * width_part + 0.20 * drift_part;
    Some(TradingRange {
        support,
        resistance,
        mid: (support + resistance) / 2.0,
        width_pct,
        support_tests,
        resistance_tests,
        quality_score,
        start_date: zone[0].date,
        end_date: zone[zone.len() - 1].date,
    })
}

/// Median of the last few swings (≥ 2 of them), else the fallback quantile of all values.
fn level(swings: &[f64], all: &[f64], fallback_q: f64) -> Option<f64> {
    if swings.len() >= 2 {
        median(&swings[swings.len().saturating_sub(TR_SWINGS_USED)..])
    } else {
        quantile(all, fallback_q)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::indicators::test_support::from_closes;

    /// A clean box oscillating between ~10 and ~11 with a 20-bar period.
    pub fn box_closes(n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| {
                let phase = (i % 20) as f64 / 20.0 * std::f64::consts::TAU;
                10.5 + 0.5 * phase.sin()
            })
            .collect()
    }

    #[test]
    fn finds_a_box() {
        let bars = from_closes(&box_closes(91), 1000.0);
        let tr = identify_trading_range(&bars).expect("range");
        assert!(tr.support > 9.7 && tr.support < 10.2, "{tr:?}");
        assert!(tr.resistance > 10.8 && tr.resistance < 11.3, "{tr:?}");
        assert!(tr.support_tests >= 2 && tr.resistance_tests >= 2);
        assert!(tr.quality_score > 0.5 && tr.quality_score <= 1.0);
    }

    #[test]
    fn trend_is_not_a_range() {
        // +1 % a day for 90 days drifts far beyond 18 %.
        let closes: Vec<f64> = (0..91).map(|i| 10.0 * 1.01f64.powi(i)).collect();
        assert!(identify_trading_range(&from_closes(&closes, 1000.0)).is_none());
    }

    #[test]
    fn too_tight_or_too_short_is_not_a_range() {
        // ±0.5 % wiggle: width < 4 %.
        let closes: Vec<f64> = box_closes(91)
            .iter()
            .map(|c| 10.0 + (c - 10.5) * 0.02)
            .collect();
        let mut bars = from_closes(&closes, 1000.0);
        for b in &mut bars {
            b.high = b.close * 1.001;
            b.low = b.close * 0.999;
        }
        assert!(identify_trading_range(&bars).is_none());
        assert!(identify_trading_range(&from_closes(&box_closes(30), 1000.0)).is_none());
        assert!(identify_trading_range(&[]).is_none());
    }
}
