//! Candidate lanes for one symbol (REFERENCE §15.1 "Candidate lanes"), feeding
//! `candidate_lane` / `candidate_score` of the diagnosis and its `priority_watch` status.
//!
//! Two lanes need market-wide inputs a single-symbol diagnosis does not have: `main_force_entry`
//! (a main-force money score) and `sector_strength` (membership of a top sector). They are
//! reported as unavailable unless the caller passes those inputs; the main-force term of the
//! score is then 0. The reference names two hard-blocking risks without thresholds
//! (放量长上影, 缩量阴跌); ours are documented on the constants below.

use serde::{Deserialize, Serialize};

use crate::Bar;
use crate::indicators::{ma, max_high, mean_by, min_low, ratio, ret_pct, tail};

/// Lane thresholds and scores, in priority order (§15.1): base score, minimum score.
const TREND_BREAKOUT: (f64, f64) = (74.0, 78.0);
const MAIN_FORCE_ENTRY: (f64, f64) = (72.0, 78.0);
const TREND_LANE_PULLBACK: (f64, f64) = (70.0, 76.0);
const SECTOR_STRENGTH: (f64, f64) = (66.0, 74.0);
const WYCKOFF_STRUCTURE: (f64, f64) = (62.0, 72.0);
/// Main-force lane: score ≥ this (ours; the reference does not publish it).
const MAIN_FORCE_MIN: f64 = 0.6;
/// 放量长上影 (ours): upper shadow ≥ 50 % of the day's range on ≥ 1.5× the prior 20-day volume.
const LONG_SHADOW_FRAC: f64 = 0.5;
const LONG_SHADOW_VOL: f64 = 1.5;
/// 缩量阴跌 (ours): ret20 ≤ −5 % while volume 5/20 ≤ 0.7.
const BLEED_RET20: f64 = -5.0;
const BLEED_VOL: f64 = 0.7;

/// Market-wide inputs that only a screen has.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LaneContext {
    /// Main-force score in 0..=1.
    pub main_force: Option<f64>,
    /// The stock belongs to one of the screen's top sectors.
    pub in_top_sector: Option<bool>,
    /// The stock passed an L2 channel.
    pub l2_pass: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneMetrics {
    pub ret5: f64,
    pub ret20: f64,
    pub ret60: f64,
    pub ret120: f64,
    pub dist_ma20_pct: f64,
    pub dist_ma50_pct: f64,
    pub pos20: f64,
    pub pos60: f64,
    pub vol_5_20: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateLane {
    /// The first lane that passes, in priority order; `None` if none does.
    pub lane: Option<String>,
    /// `breakout`, `main_force`, `pullback`, `sector` or `structure`.
    pub entry_type: Option<String>,
    pub score: Option<f64>,
    pub risks: Vec<String>,
    /// Lanes that could not be evaluated, with why.
    pub unavailable: Vec<String>,
    pub metrics: Option<LaneMetrics>,
}

/// Metrics as of the last bar; `None` with fewer than 121 bars (ret120 needs them).
pub fn lane_metrics(bars: &[Bar]) -> Option<LaneMetrics> {
    let close = bars.last()?.close;
    let pos = |n: usize| {
        let w = tail(bars, n);
        let (h, l) = (max_high(w)?, min_low(w)?);
        // A range of zero width puts the close in the middle by convention (as `close_position`).
        Some(ratio(close - l, h - l).unwrap_or(0.5).clamp(0.0, 1.0))
    };
    let dist = |n: usize| {
        ma(bars, n)
            .and_then(|m| ratio(close - m, m))
            .map(|r| r * 100.0)
    };
    let v5 = mean_by(tail(bars, 5), |b| b.volume)?;
    let v20 = mean_by(tail(bars, 20), |b| b.volume)?;
    Some(LaneMetrics {
        ret5: ret_pct(bars, 5)?,
        ret20: ret_pct(bars, 20)?,
        ret60: ret_pct(bars, 60)?,
        ret120: ret_pct(bars, 120)?,
        dist_ma20_pct: dist(20)?,
        dist_ma50_pct: dist(50)?,
        pos20: pos(20)?,
        pos60: pos(60)?,
        // Zero volume leaves the ratio undefined: no metrics rather than a made-up 0.
        vol_5_20: ratio(v5, v20)?,
    })
}

/// Evaluate the lanes as of the last bar.
pub fn candidate_lane(bars: &[Bar], ctx: &LaneContext) -> CandidateLane {
    let mut out = CandidateLane {
        lane: None,
        entry_type: None,
        score: None,
        risks: Vec::new(),
        unavailable: Vec::new(),
        metrics: None,
    };
    let Some(m) = lane_metrics(bars) else {
        out.unavailable.push("all: 需要≥121根K线".into());
        return out;
    };
    // Hard-blocking risks (the first four of §15.1).
    if m.dist_ma20_pct > 18.0 || m.ret20 > 45.0 {
        out.risks.push("短线过热".into());
    }
    if let Some(last) = bars.last() {
        let n = bars.len();
        let prior = mean_by(&bars[n.saturating_sub(21)..n - 1], |b| b.volume);
        if last.upper_shadow_frac() >= LONG_SHADOW_FRAC
            && prior
                .and_then(|p| ratio(last.volume, p))
                .is_some_and(|r| r >= LONG_SHADOW_VOL)
        {
            out.risks.push("放量长上影".into());
        }
    }
    if m.dist_ma20_pct < -6.0 || m.dist_ma50_pct < -10.0 {
        out.risks.push("跌破确认支撑".into());
    }
    if m.ret20 <= BLEED_RET20 && m.vol_5_20 <= BLEED_VOL {
        out.risks.push("缩量阴跌".into());
    }
    let blocked = !out.risks.is_empty();
    let mf = ctx.main_force.unwrap_or(0.0).clamp(0.0, 1.0);
    let score = |base: f64, top_sector: bool| {
        let s = base
            + 12.0 * (m.ret60 / 45.0).clamp(0.0, 1.0)
            + 8.0 * m.pos20
            + 6.0 * (1.0 - (m.dist_ma20_pct - 6.0).max(0.0) / 12.0).clamp(0.0, 1.0)
            + 8.0 * mf
            + if top_sector { 5.0 } else { 0.0 }
            + if ctx.l2_pass { 3.0 } else { 0.0 };
        s.min(100.0)
    };
    let top = ctx.in_top_sector == Some(true);
    let in_range = |x: f64, lo: f64, hi: f64| (lo..=hi).contains(&x);
    if ctx.main_force.is_none() {
        out.unavailable
            .push("main_force_entry: 需要主力资金数据".into());
    }
    if ctx.in_top_sector.is_none() {
        out.unavailable.push("sector_strength: 需要板块排名".into());
    }
    let lanes: [(&str, &str, (f64, f64), bool); 5] = [
        (
            "trend_breakout",
            "breakout",
            TREND_BREAKOUT,
            m.pos60 >= 0.86
                && in_range(m.ret20, 8.0, 38.0)
                && m.ret60 >= 18.0
                && in_range(m.dist_ma20_pct, -2.0, 14.0)
                && in_range(m.vol_5_20, 0.75, 2.4),
        ),
        (
            "main_force_entry",
            "main_force",
            MAIN_FORCE_ENTRY,
            ctx.main_force.is_some_and(|x| x >= MAIN_FORCE_MIN),
        ),
        (
            "trend_lane_pullback",
            "pullback",
            TREND_LANE_PULLBACK,
            m.ret60 >= 12.0
                && m.ret120 >= 10.0
                && in_range(m.dist_ma20_pct, -3.0, 7.0)
                && m.dist_ma50_pct >= -3.0
                && m.vol_5_20 <= 1.1
                && m.pos20 >= 0.42,
        ),
        (
            "sector_strength",
            "sector",
            SECTOR_STRENGTH,
            top && in_range(m.ret20, 4.0, 34.0)
                && m.ret60 >= 10.0
                && m.dist_ma20_pct <= 12.0
                && m.pos20 >= 0.55,
        ),
        (
            "wyckoff_structure",
            "structure",
            WYCKOFF_STRUCTURE,
            ctx.l2_pass && m.ret20 >= 6.0 && m.ret60 >= 8.0 && m.dist_ma20_pct <= 12.0,
        ),
    ];
    if !blocked {
        for (lane, entry, (base, min), ok) in lanes {
            let s = score(base, top);
            if ok && s >= min {
                out.lane = Some(lane.to_string());
                out.entry_type = Some(entry.to_string());
                out.score = Some(s);
                break;
            }
        }
    }
    out.metrics = Some(m);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indicators::test_support::from_closes;

    fn tape(daily: f64, last20: f64) -> Vec<Bar> {
        let mut closes: Vec<f64> = (0..180).map(|i| 10.0 * (1.0 + daily).powi(i)).collect();
        let base = closes[closes.len() - 1];
        for k in 1..=20 {
            closes.push(base * (1.0 + last20).powi(k));
        }
        from_closes(&closes, 1000.0)
    }

    #[test]
    fn steady_advance_is_a_trend_breakout() {
        let c = candidate_lane(&tape(0.004, 0.006), &LaneContext::default());
        assert_eq!(c.lane.as_deref(), Some("trend_breakout"), "{c:?}");
        assert!(c.score.unwrap() >= 78.0 && c.score.unwrap() <= 100.0);
        assert_eq!(c.unavailable.len(), 2);
    }

    #[test]
    fn overheated_run_is_blocked() {
        let c = candidate_lane(&tape(0.004, 0.025), &LaneContext::default());
        assert!(c.risks.contains(&"短线过热".to_string()), "{c:?}");
        assert_eq!(c.lane, None);
    }

    #[test]
    fn decline_has_no_lane_and_flags_support_break() {
        let c = candidate_lane(&tape(0.0, -0.01), &LaneContext::default());
        assert_eq!(c.lane, None);
        assert!(c.risks.contains(&"跌破确认支撑".to_string()), "{c:?}");
    }

    #[test]
    fn too_short_is_unavailable() {
        let c = candidate_lane(&tape(0.004, 0.006)[..100], &LaneContext::default());
        assert!(c.metrics.is_none() && c.lane.is_none());
    }
}
