//! L5 exit signals: structural stop-loss, Upthrust/UTAD, distribution (REFERENCE §15.1 L5).

use serde::{Deserialize, Serialize};

use crate::Bar;
use crate::accumulation::Stage;
use crate::dates::skipped_weekdays;
use crate::indicators::{
    ma, max_high, mean_by, median, min_low, quantile, ratio, swing_highs, tail,
};
use crate::triggers::bias_200_pct;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ExitKind {
    StopLoss,
    UpthrustWarning,
    DistributionWarning,
}

impl ExitKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ExitKind::StopLoss => "stop_loss",
            ExitKind::UpthrustWarning => "upthrust_warning",
            ExitKind::DistributionWarning => "distribution_warning",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExitSignal {
    pub signal: ExitKind,
    /// Stop price for `stop_loss`, the resistance for `upthrust_warning`; none for distribution.
    pub trigger_price: Option<f64>,
    pub reason: String,
    /// Bars that support the signal (the last bar first).
    pub dates: Vec<u32>,
}

/// Exit settings (REFERENCE §15.1 L5 and §15 version note 5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExitConfig {
    /// `exit_holiday_grace_days`: how many recent bar-to-bar gaps are checked for a holiday.
    pub holiday_grace_days: usize,
    /// Bars needed before Upthrust/UTAD is checked (0.9.467 diagnosis: 201).
    pub upthrust_min_bars: usize,
    /// Bars needed before distribution is checked (0.9.467 diagnosis: 220).
    pub distribution_min_bars: usize,
}

impl Default for ExitConfig {
    fn default() -> Self {
        ExitConfig {
            holiday_grace_days: 1,
            upthrust_min_bars: 201,
            distribution_min_bars: 220,
        }
    }
}

impl ExitConfig {
    /// The funnel's L5 runs on the whole window: only the detectors' own history needs apply.
    pub fn funnel() -> Self {
        ExitConfig {
            upthrust_min_bars: 0,
            distribution_min_bars: 0,
            ..ExitConfig::default()
        }
    }
}

/// Grace days when the market context is known (§15.1 L5): 2 when the regime is neither CRASH
/// nor RISK_OFF and money flow is known not to be retreating, else the default 1.
pub fn holiday_grace_days(
    regime: Option<crate::regime::Regime>,
    money_flow_retreating: Option<bool>,
) -> usize {
    use crate::regime::Regime;
    let calm =
        regime.is_some_and(|r| !matches!(r, Regime::Crash | Regime::RiskOff | Regime::Unknown));
    if calm && money_flow_retreating == Some(false) {
        2
    } else {
        1
    }
}

/// Trailing stop: 90 % of the 60-day high (§15.1 L5).
const TRAIL_HIGH_FRAC: f64 = 0.90;
const TRAIL_HIGH_WINDOW: usize = 60;
/// ... or 98 % of MA50, whichever is higher.
const TRAIL_MA50_FRAC: f64 = 0.98;
/// Accumulation stages count as "left the base" 15 % above the 250-day low.
const ACCUM_LEFT_BASE: f64 = 1.15;
/// Accumulation base stop: 93 % of the 250-day low.
const ACCUM_BASE_STOP: f64 = 0.93;
/// A close ≥ 5 % below the stop is a deep breach: exit at once.
const DEEP_BREACH: f64 = 0.95;
/// Otherwise two closes under the stop on ≥ 0.8× the prior 20-day volume (when ≥ 22 bars).
const CONFIRM_VOL_RATIO: f64 = 0.8;
/// Upthrust: high ≥ R×1.01, close ≤ R/1.003, upper shadow ≥ 35 %, volume ≥ 1.5× prior 20,
/// bias_200 ≥ 15 %.
const UT_BREAK: f64 = 1.01;
const UT_CLOSE_BACK: f64 = 1.003;
const UT_SHADOW: f64 = 0.35;
const UT_VOL: f64 = 1.5;
const UT_BIAS_PCT: f64 = 15.0;
/// Distribution: bias_200 ≥ 30 % and mean volume of the last 3 / last 60 ≤ 0.5.
const DIST_BIAS_PCT: f64 = 30.0;
const DIST_VOL: f64 = 0.5;

/// True when any of the last `n` bar-to-bar gaps skipped a weekday (an exchange holiday).
/// A plain weekend is not a holiday: the 0.9.467 fix of the Monday QUIRK (§15 version note 3).
pub fn in_holiday_grace(bars: &[Bar], n: usize) -> bool {
    let k = bars.len();
    (1..=n.min(k.saturating_sub(1)))
        .any(|j| skipped_weekdays(bars[k - 1 - j].date, bars[k - j].date).is_some_and(|s| s > 0))
}

/// The structural stop price and its reason for a stage (`None` = Markup).
pub fn structural_stop(bars: &[Bar], stage: Option<Stage>) -> Option<(f64, String)> {
    let last = bars.last()?;
    let trailing = || {
        let hi = max_high(tail(bars, TRAIL_HIGH_WINDOW))? * TRAIL_HIGH_FRAC;
        Some(ma(bars, 50).map_or(hi, |m| hi.max(m * TRAIL_MA50_FRAC)))
    };
    match stage {
        Some(s) if s.is_accum() => {
            let low = min_low(tail(bars, 250))?;
            if last.close >= low * ACCUM_LEFT_BASE {
                Some((
                    trailing()?,
                    "已脱离底部，触发利润保护(动态跟踪止损)".to_string(),
                ))
            } else {
                Some((
                    low * ACCUM_BASE_STOP,
                    format!("破位防守(跌破 {} 吸筹底线)", s.as_str()),
                ))
            }
        }
        _ => Some((trailing()?, "主升趋势破位(跌破MA50或高位回撤)".to_string())),
    }
}

/// The first exit signal that fires as of the last bar: stop-loss, else Upthrust/UTAD, else
/// distribution.
pub fn exit_signal(bars: &[Bar], stage: Option<Stage>, cfg: &ExitConfig) -> Option<ExitSignal> {
    if bars.is_empty() {
        return None;
    }
    if !in_holiday_grace(bars, cfg.holiday_grace_days)
        && let Some(s) = stop_loss(bars, stage)
    {
        return Some(s);
    }
    if bars.len() >= cfg.upthrust_min_bars
        && let Some(s) = upthrust(bars)
    {
        return Some(s);
    }
    if bars.len() >= cfg.distribution_min_bars {
        return distribution(bars);
    }
    None
}

fn stop_loss(bars: &[Bar], stage: Option<Stage>) -> Option<ExitSignal> {
    let (stop, reason) = structural_stop(bars, stage)?;
    let n = bars.len();
    let last = bars[n - 1];
    if stop <= 0.0 || last.close > stop {
        return None;
    }
    if last.close <= stop * DEEP_BREACH {
        return Some(ExitSignal {
            signal: ExitKind::StopLoss,
            trigger_price: Some(stop),
            reason: format!("{reason}(深度破位)"),
            dates: vec![last.date],
        });
    }
    if n < 2 || bars[n - 2].close > stop {
        return None;
    }
    if n >= 22 {
        let recent = mean_by(&bars[n - 2..], |b| b.volume)?;
        let prior = mean_by(&bars[n - 22..n - 2], |b| b.volume)?;
        if ratio(recent, prior).is_none_or(|r| r < CONFIRM_VOL_RATIO) {
            return None;
        }
    }
    Some(ExitSignal {
        signal: ExitKind::StopLoss,
        trigger_price: Some(stop),
        reason,
        dates: vec![last.date, bars[n - 2].date],
    })
}

fn upthrust(bars: &[Bar]) -> Option<ExitSignal> {
    let n = bars.len();
    if n < 62 {
        return None;
    }
    let last = bars[n - 1];
    let prior = &bars[n - 61..n - 1];
    let highs: Vec<f64> = prior.iter().map(|b| b.high).collect();
    let idx = swing_highs(&highs, 3);
    let resistance = if idx.is_empty() {
        quantile(&highs, 0.95)?
    } else {
        let vals: Vec<f64> = idx[idx.len().saturating_sub(5)..]
            .iter()
            .map(|&i| highs[i])
            .collect();
        median(&vals)?
    };
    if resistance <= 0.0 {
        return None;
    }
    let shadow = last.upper_shadow_frac();
    let vr = mean_by(&bars[n - 21..n - 1], |b| b.volume).and_then(|m| ratio(last.volume, m))?;
    let fires = last.high >= resistance * UT_BREAK
        && last.close <= resistance / UT_CLOSE_BACK
        && shadow >= UT_SHADOW
        && vr >= UT_VOL
        && bias_200_pct(bars).is_some_and(|b| b >= UT_BIAS_PCT);
    if !fires {
        return None;
    }
    let over = (last.high / resistance - 1.0) * 100.0;
    Some(ExitSignal {
        signal: ExitKind::UpthrustWarning,
        trigger_price: Some(resistance),
        reason: format!(
            "检测到 Upthrust/UTAD 假突破：盘中越过阻力 {over:.1}% 后收回，上影占振幅 {:.0}%，量比 {vr:.2}",
            shadow * 100.0
        ),
        dates: vec![last.date],
    })
}

fn distribution(bars: &[Bar]) -> Option<ExitSignal> {
    let n = bars.len();
    if n < 60 || bias_200_pct(bars).is_none_or(|b| b < DIST_BIAS_PCT) {
        return None;
    }
    let r = ratio(
        mean_by(&bars[n - 3..], |b| b.volume)?,
        mean_by(&bars[n - 60..], |b| b.volume)?,
    )?;
    (r <= DIST_VOL).then(|| ExitSignal {
        signal: ExitKind::DistributionWarning,
        trigger_price: None,
        reason: "检测到高位 Distribution 阶段迹象（放量不涨/高位缩量），主力疑似派发".to_string(),
        dates: bars[n - 3..].iter().rev().map(|b| b.date).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indicators::test_support::{bar, from_closes};

    fn cfg() -> ExitConfig {
        ExitConfig::default()
    }

    /// 70 bars at 10, then the last bar closes at `last_close` (a Tue after a normal Mon).
    fn breach(last_close: f64, prev_close: f64, volume: f64) -> Vec<Bar> {
        let mut bars = from_closes(&[10.0; 70], 1000.0);
        let n = bars.len();
        bars[n - 2] = bar(bars[n - 2].date, prev_close, volume);
        bars[n - 1] = bar(bars[n - 1].date, last_close, volume);
        bars
    }

    #[test]
    fn deep_breach_exits_at_once() {
        // stop = max(10.1×0.9, MA50×0.98) ≈ 9.8; 9.0 is > 5 % under it.
        let s = exit_signal(&breach(9.0, 10.0, 1000.0), None, &cfg()).expect("exit");
        assert_eq!(s.signal, ExitKind::StopLoss);
        assert!(s.reason.ends_with("(深度破位)"), "{}", s.reason);
        assert!(s.reason.starts_with("主升趋势破位"));
    }

    #[test]
    fn shallow_breach_needs_two_closes_and_volume() {
        assert!(exit_signal(&breach(9.6, 10.0, 1000.0), None, &cfg()).is_none());
        let s = exit_signal(&breach(9.6, 9.6, 1000.0), None, &cfg()).expect("exit");
        assert!(!s.reason.contains("深度"));
        // Two closes under but on thin volume (0.5× the prior 20): not confirmed.
        assert!(exit_signal(&breach(9.6, 9.6, 500.0), None, &cfg()).is_none());
    }

    #[test]
    fn weekend_gap_gives_no_grace_but_a_holiday_does() {
        let mut bars = breach(9.0, 10.0, 1000.0);
        let n = bars.len();
        // Fri → Mon: still exits (the fixed Monday quirk).
        bars[n - 2].date = 20200612;
        bars[n - 1].date = 20200615;
        assert!(!in_holiday_grace(&bars, 1));
        assert!(exit_signal(&bars, None, &cfg()).is_some());
        // Wed → Mon across the Dragon Boat holiday: stop-loss suppressed for the day.
        bars[n - 2].date = 20200624;
        bars[n - 1].date = 20200629;
        assert!(in_holiday_grace(&bars, 1));
        assert!(exit_signal(&bars, None, &cfg()).is_none());
    }

    #[test]
    fn grace_extends_only_in_a_calm_known_market() {
        use crate::regime::Regime;
        assert_eq!(holiday_grace_days(Some(Regime::RiskOn), Some(false)), 2);
        assert_eq!(holiday_grace_days(Some(Regime::RiskOn), None), 1);
        assert_eq!(holiday_grace_days(Some(Regime::Crash), Some(false)), 1);
        assert_eq!(holiday_grace_days(None, Some(false)), 1);
        // Two recent gaps checked: a holiday one bar back still counts.
        let mut bars = breach(9.0, 10.0, 1000.0);
        let n = bars.len();
        bars[n - 3].date = 20200624;
        bars[n - 2].date = 20200629;
        bars[n - 1].date = 20200630;
        assert!(!in_holiday_grace(&bars, 1));
        assert!(in_holiday_grace(&bars, 2));
    }

    #[test]
    fn accumulation_stage_uses_the_base_stop() {
        // In the base (close < low×1.15): stop = 250-day low × 0.93.
        let bars = breach(9.0, 10.0, 1000.0);
        let (stop, reason) = structural_stop(&bars, Some(Stage::AccumB)).unwrap();
        assert!((stop - 9.0 * 0.99 * 0.93).abs() < 1e-9, "{stop}");
        assert_eq!(reason, "破位防守(跌破 Accum_B 吸筹底线)");
        assert!(exit_signal(&bars, Some(Stage::AccumB), &cfg()).is_none());
    }

    /// 230 rising bars (bias_200 well above 15 %) then a probe above the recent highs.
    fn upthrust_case(volume: f64, close_back: bool) -> Vec<Bar> {
        // Rise for 170 bars, then a flat top oscillating around the same level.
        let closes: Vec<f64> = (0..229)
            .map(|i| 10.0 * 1.006f64.powi(i.min(170)) + 0.3 * ((i as f64) / 4.0).sin())
            .collect();
        let mut bars = from_closes(&closes, 1000.0);
        let top = bars[bars.len() - 61..]
            .iter()
            .map(|b| b.high)
            .fold(0.0, f64::max);
        let d = bars[bars.len() - 1].date + 1;
        let close = if close_back { top * 0.98 } else { top * 1.02 };
        bars.push(Bar {
            date: d,
            open: top * 0.99,
            high: top * 1.05,
            low: top * 0.97,
            close,
            volume,
            amount: 0.0,
            turnover: None,
        });
        bars
    }

    #[test]
    fn upthrust_fires_on_a_failed_breakout_with_volume() {
        let s = exit_signal(&upthrust_case(2000.0, true), None, &cfg()).expect("ut");
        assert_eq!(s.signal, ExitKind::UpthrustWarning);
        assert!(s.reason.starts_with("检测到 Upthrust/UTAD 假突破"));
        assert!(exit_signal(&upthrust_case(1200.0, true), None, &cfg()).is_none());
        assert!(exit_signal(&upthrust_case(2000.0, false), None, &cfg()).is_none());
    }

    #[test]
    fn distribution_on_quiet_tape_far_above_ma200() {
        let closes: Vec<f64> = (0..240).map(|i| 10.0 * 1.005f64.powi(i)).collect();
        let mut bars = from_closes(&closes, 1000.0);
        let n = bars.len();
        for b in &mut bars[n - 3..] {
            b.volume = 300.0;
        }
        let s = exit_signal(&bars, None, &cfg()).expect("dist");
        assert_eq!(s.signal, ExitKind::DistributionWarning);
        for b in &mut bars[n - 3..] {
            b.volume = 700.0;
        }
        assert!(exit_signal(&bars, None, &cfg()).is_none());
        // Not checked on a short history (a recent holding).
        assert!(exit_signal(&bars[n - 200..], None, &cfg()).is_none());
    }
}
