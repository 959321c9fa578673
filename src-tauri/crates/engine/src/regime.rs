//! Market regime from a benchmark index, with optional breadth (REFERENCE §15.7).
//!
//! Breadth and money-flow inputs come from a market-wide snapshot the caller may not have
//! (offline there are no index or breadth data): every rule that needs one is skipped when it is
//! absent, and `breadth_used` says whether any was applied.

use serde::{Deserialize, Serialize};

use crate::Bar;
use crate::indicators::{ma, ma_at, ratio, volume_ratio};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Regime {
    RiskOn,
    Neutral,
    Caution,
    RiskOff,
    Crash,
    PanicRepair,
    PanicRepairConfirmed,
    BearRebound,
    /// Fewer than 60 benchmark bars.
    Unknown,
}

impl Regime {
    /// The reference's name (`RISK_ON`, `PANIC_REPAIR_CONFIRMED`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Regime::RiskOn => "RISK_ON",
            Regime::Neutral => "NEUTRAL",
            Regime::Caution => "CAUTION",
            Regime::RiskOff => "RISK_OFF",
            Regime::Crash => "CRASH",
            Regime::PanicRepair => "PANIC_REPAIR",
            Regime::PanicRepairConfirmed => "PANIC_REPAIR_CONFIRMED",
            Regime::BearRebound => "BEAR_REBOUND",
            Regime::Unknown => "UNKNOWN",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Structure {
    Bull,
    Bear,
    Neutral,
}

/// Market-wide snapshot for the as-of day; every field optional.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Breadth {
    /// Percent of stocks closing above their MA20.
    pub pct_above_ma20: Option<f64>,
    /// Change of that percentage vs the previous day, percentage points.
    pub pct_above_ma20_delta: Option<f64>,
    /// Percent of stocks up on the day.
    pub up_ratio_pct: Option<f64>,
    pub median_pct_chg: Option<f64>,
    /// Money-flow retreat score (negative = money leaving).
    pub money_flow_score: Option<f64>,
    /// Amount traded in rising stocks / in falling stocks.
    pub up_down_amount_ratio: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MarketRegime {
    pub regime: Regime,
    pub structure: Structure,
    pub as_of: Option<u32>,
    pub close: Option<f64>,
    pub ma50: Option<f64>,
    pub ma200: Option<f64>,
    /// MA50 change over 5 bars, percent.
    pub ma50_slope_5d_pct: Option<f64>,
    /// Day changes of the last 3 bars, percent, oldest first.
    pub last3_pct: Vec<f64>,
    pub cum3_pct: Option<f64>,
    pub today_pct: Option<f64>,
    pub prev_pct: Option<f64>,
    pub vol_ratio_5_20: Option<f64>,
    pub small_cap_today_pct: Option<f64>,
    pub breadth_used: bool,
    pub reasons: Vec<RegimeReason>,
}

/// Why the regime is what it is: each step of the decision with its figures. Displayed
/// in the reference's Chinese wording (what the model reads); the app words it itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RegimeReason {
    /// No benchmark (SSE Composite) bars at all.
    NoBenchmarkBars,
    /// No stock bars at all (the funnel had nothing to read).
    NoBars,
    TooFewBenchmarkBars {
        need: u32,
    },
    BearStructure,
    BullStructure,
    NeutralStructure,
    BreadthWeak {
        pct_above_ma20: f64,
        threshold: f64,
    },
    BreadthStrong {
        pct_above_ma20: f64,
        threshold: f64,
    },
    BreadthCollapsed,
    IndexStrongBreadthThin,
    FewStocksUp {
        up_ratio_pct: f64,
        threshold: f64,
    },
    PanicConfirmed,
    PanicPriceOnly,
    PanicRepair,
    PanicRepairConfirmed,
    BearRebound,
}

impl std::fmt::Display for RegimeReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RegimeReason::NoBenchmarkBars => f.write_str("缺少上证指数(000001.SH)K线"),
            RegimeReason::NoBars => f.write_str("本地没有任何K线，请先同步或导入行情"),
            RegimeReason::TooFewBenchmarkBars { need } => write!(f, "基准K线不足{need}根"),
            RegimeReason::BearStructure => {
                f.write_str("空头结构：收盘<MA200，MA50<MA200且MA50下行")
            }
            RegimeReason::BullStructure => {
                f.write_str("多头结构：收盘>MA50>MA200且MA50上行，近3日累计不跌")
            }
            RegimeReason::NeutralStructure => f.write_str("结构中性"),
            RegimeReason::BreadthWeak {
                pct_above_ma20,
                threshold,
            } => write!(f, "站上MA20比例{pct_above_ma20:.0}%≤{threshold:.0}%"),
            RegimeReason::BreadthStrong {
                pct_above_ma20,
                threshold,
            } => write!(f, "站上MA20比例{pct_above_ma20:.0}%≥{threshold:.0}%"),
            RegimeReason::BreadthCollapsed => f.write_str("站上MA20比例单日骤降"),
            RegimeReason::IndexStrongBreadthThin => f.write_str("指数偏强但广度不足"),
            RegimeReason::FewStocksUp {
                up_ratio_pct,
                threshold,
            } => write!(f, "上涨家数占比{up_ratio_pct:.0}%≤{threshold:.0}%"),
            RegimeReason::PanicConfirmed => f.write_str("恐慌下跌且广度/资金确认"),
            RegimeReason::PanicPriceOnly => f.write_str("指数恐慌下跌（价格信号）"),
            RegimeReason::PanicRepair => f.write_str("前日恐慌后今日放量修复"),
            RegimeReason::PanicRepairConfirmed => f.write_str("恐慌修复次日确认"),
            RegimeReason::BearRebound => f.write_str("广度转强但指数未成多头结构"),
        }
    }
}

/// Benchmark history needed (§15.7).
pub const REGIME_MIN_BARS: usize = 60;
/// Panic day: main index ≤ −1.3 % or small-cap ≤ −2.5 % (§15.7).
const PANIC_MAIN: f64 = -1.3;
const PANIC_SMALL: f64 = -2.5;
/// Rebound day: main ≥ 0.8 % or small-cap ≥ 1.5 %.
const REBOUND_MAIN: f64 = 0.8;
const REBOUND_SMALL: f64 = 1.5;
/// Breadth thresholds (percent of stocks above MA20, and daily up-ratio).
const BREADTH_OFF: f64 = 20.0;
const BREADTH_ON: f64 = 60.0;
const BREADTH_DROP: f64 = -10.0;
const UP_RATIO_CAUTION: f64 = 35.0;
const CRASH_BREADTH: f64 = 15.0;
const CRASH_BREADTH_DROP: f64 = -20.0;
const CRASH_FLOW: f64 = -20.0;
const CRASH_UD_RATIO: f64 = 0.55;
const CRASH_UD_FLOW: f64 = -12.0;
const REPAIR_UP_RATIO: f64 = 60.0;
const CONFIRM_UP_RATIO: f64 = 50.0;

/// Day change of bar `i` (from the end: 0 = last) in percent.
fn day_pct(bars: &[Bar], back: usize) -> Option<f64> {
    let n = bars.len();
    if n < back + 2 {
        return None;
    }
    bars[n - 1 - back].pct_change(bars[n - 2 - back].close)
}

/// Regime as of the benchmark's last bar. `small_cap` (e.g. 创业板指) should end on the same day.
pub fn market_regime(
    bench: &[Bar],
    small_cap: Option<&[Bar]>,
    breadth: Option<&Breadth>,
) -> MarketRegime {
    let n = bench.len();
    let mut r = MarketRegime {
        regime: Regime::Unknown,
        structure: Structure::Neutral,
        as_of: bench.last().map(|b| b.date),
        close: bench.last().map(|b| b.close),
        ma50: ma(bench, 50),
        ma200: ma(bench, 200),
        ma50_slope_5d_pct: None,
        last3_pct: (0..3).rev().filter_map(|k| day_pct(bench, k)).collect(),
        cum3_pct: None,
        today_pct: day_pct(bench, 0),
        prev_pct: day_pct(bench, 1),
        vol_ratio_5_20: volume_ratio(bench, 5, 20),
        small_cap_today_pct: small_cap.and_then(|s| day_pct(s, 0)),
        breadth_used: false,
        reasons: Vec::new(),
    };
    if n < REGIME_MIN_BARS {
        r.reasons.push(RegimeReason::TooFewBenchmarkBars {
            need: REGIME_MIN_BARS as u32,
        });
        return r;
    }
    let close = bench[n - 1].close;
    r.ma50_slope_5d_pct = match (r.ma50, ma_at(bench, n - 6, 50)) {
        (Some(now), Some(then)) => ratio(now - then, then).map(|x| x * 100.0),
        _ => None,
    };
    r.cum3_pct = ratio(close, bench[n - 4].close).map(|x| (x - 1.0) * 100.0);
    let slope = r.ma50_slope_5d_pct.unwrap_or(0.0);
    r.structure = match (r.ma50, r.ma200) {
        (Some(m50), Some(m200)) if close < m200 && m50 < m200 && slope < 0.0 => Structure::Bear,
        (Some(m50), Some(m200)) if close > m50 && m50 > m200 && slope > 0.0 => Structure::Bull,
        _ => Structure::Neutral,
    };
    r.regime = match r.structure {
        Structure::Bear => {
            r.reasons.push(RegimeReason::BearStructure);
            Regime::RiskOff
        }
        Structure::Bull if r.cum3_pct.is_some_and(|c| c >= 0.0) => {
            r.reasons.push(RegimeReason::BullStructure);
            Regime::RiskOn
        }
        _ => {
            r.reasons.push(RegimeReason::NeutralStructure);
            Regime::Neutral
        }
    };

    let b = breadth.copied().unwrap_or_default();
    if let Some(p) = b.pct_above_ma20 {
        r.breadth_used = true;
        let delta = b.pct_above_ma20_delta;
        if p <= BREADTH_OFF {
            r.regime = Regime::RiskOff;
            r.reasons.push(RegimeReason::BreadthWeak {
                pct_above_ma20: p,
                threshold: BREADTH_OFF,
            });
        } else if p >= BREADTH_ON && delta.is_none_or(|d| d >= 0.0) {
            r.regime = Regime::RiskOn;
            r.reasons.push(RegimeReason::BreadthStrong {
                pct_above_ma20: p,
                threshold: BREADTH_ON,
            });
        } else if delta.is_some_and(|d| d <= BREADTH_DROP) {
            r.regime = Regime::RiskOff;
            r.reasons.push(RegimeReason::BreadthCollapsed);
        }
        if r.regime == Regime::RiskOn && p < BREADTH_ON {
            r.regime = Regime::Caution;
            r.reasons.push(RegimeReason::IndexStrongBreadthThin);
        }
    }
    if let Some(u) = b.up_ratio_pct {
        r.breadth_used = true;
        if u <= UP_RATIO_CAUTION && matches!(r.regime, Regime::RiskOn | Regime::Neutral) {
            r.regime = Regime::Caution;
            r.reasons.push(RegimeReason::FewStocksUp {
                up_ratio_pct: u,
                threshold: UP_RATIO_CAUTION,
            });
        }
    }

    let small_today = r.small_cap_today_pct;
    let small_prev = small_cap.and_then(|s| day_pct(s, 1));
    let small_prev2 = small_cap.and_then(|s| day_pct(s, 2));
    let panic = |main: Option<f64>, small: Option<f64>| {
        main.is_some_and(|p| p <= PANIC_MAIN) || small.is_some_and(|p| p <= PANIC_SMALL)
    };
    let rebound = |main: Option<f64>, small: Option<f64>| {
        main.is_some_and(|p| p >= REBOUND_MAIN) || small.is_some_and(|p| p >= REBOUND_SMALL)
    };
    if panic(r.today_pct, small_today) {
        let confirmed = b.pct_above_ma20.is_some_and(|p| p <= CRASH_BREADTH)
            || b.pct_above_ma20_delta
                .is_some_and(|d| d <= CRASH_BREADTH_DROP)
            || b.money_flow_score.is_some_and(|s| s <= CRASH_FLOW)
            || (b.up_down_amount_ratio.is_some_and(|x| x <= CRASH_UD_RATIO)
                && b.money_flow_score.is_some_and(|s| s <= CRASH_UD_FLOW));
        if confirmed {
            r.regime = Regime::Crash;
            r.reasons.push(RegimeReason::PanicConfirmed);
        } else {
            r.regime = Regime::RiskOff;
            r.reasons.push(RegimeReason::PanicPriceOnly);
        }
        return r;
    }
    let breadth_ok = |up: f64, med_ok: bool| b.up_ratio_pct.is_some_and(|u| u >= up) && med_ok;
    let prev_panic = panic(r.prev_pct, small_prev);
    if prev_panic
        && rebound(r.today_pct, small_today)
        && breadth_ok(REPAIR_UP_RATIO, b.median_pct_chg.is_some_and(|m| m > 0.0))
    {
        r.regime = Regime::PanicRepair;
        r.reasons.push(RegimeReason::PanicRepair);
        return r;
    }
    // Yesterday was a repair candidate (panic two days ago, rebound yesterday), confirmed today.
    let prev_repair = panic(day_pct(bench, 2), small_prev2) && rebound(r.prev_pct, small_prev);
    if prev_repair
        && r.today_pct.is_some_and(|p| p >= 0.0)
        && breadth_ok(CONFIRM_UP_RATIO, b.median_pct_chg.is_some_and(|m| m >= 0.0))
    {
        r.regime = Regime::PanicRepairConfirmed;
        r.reasons.push(RegimeReason::PanicRepairConfirmed);
        return r;
    }
    if r.regime == Regime::RiskOn && r.structure != Structure::Bull {
        r.regime = Regime::BearRebound;
        r.reasons.push(RegimeReason::BearRebound);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indicators::test_support::from_closes;

    fn series(daily: f64, n: i32) -> Vec<Bar> {
        let closes: Vec<f64> = (0..n).map(|i| 3000.0 * (1.0 + daily).powi(i)).collect();
        from_closes(&closes, 1e9)
    }

    fn with_last(mut bars: Vec<Bar>, pcts: &[f64]) -> Vec<Bar> {
        let n = bars.len();
        let k = pcts.len();
        for (j, p) in pcts.iter().enumerate() {
            let i = n - k + j;
            let c = bars[i - 1].close * (1.0 + p / 100.0);
            bars[i].close = c;
            bars[i].open = c;
            bars[i].high = c * 1.01;
            bars[i].low = c * 0.99;
        }
        bars
    }

    #[test]
    fn structure_regimes() {
        assert_eq!(
            market_regime(&series(0.002, 260), None, None).regime,
            Regime::RiskOn
        );
        assert_eq!(
            market_regime(&series(-0.002, 260), None, None).regime,
            Regime::RiskOff
        );
        assert_eq!(
            market_regime(&series(0.0, 260), None, None).regime,
            Regime::Neutral
        );
        let r = market_regime(&series(0.002, 30), None, None);
        assert_eq!(r.regime, Regime::Unknown);
        assert!(!r.breadth_used);
    }

    #[test]
    fn panic_is_risk_off_on_price_and_crash_when_confirmed() {
        let bars = with_last(series(0.0, 260), &[-1.5]);
        assert_eq!(market_regime(&bars, None, None).regime, Regime::RiskOff);
        let b = Breadth {
            pct_above_ma20: Some(10.0),
            ..Breadth::default()
        };
        assert_eq!(market_regime(&bars, None, Some(&b)).regime, Regime::Crash);
        // Near miss: −1.2 % in an uptrend is not a panic (just not RISK_ON: 3-day sum < 0).
        let bars = with_last(series(0.002, 260), &[-1.2]);
        assert_eq!(market_regime(&bars, None, None).regime, Regime::Neutral);
        // The small-cap index alone can signal it.
        let small = with_last(series(0.0, 260), &[-3.0]);
        assert_eq!(
            market_regime(&bars, Some(&small), None).regime,
            Regime::RiskOff
        );
    }

    #[test]
    fn repair_needs_breadth() {
        let bars = with_last(series(0.0, 260), &[-2.0, 1.0]);
        let b = Breadth {
            up_ratio_pct: Some(70.0),
            median_pct_chg: Some(0.8),
            ..Breadth::default()
        };
        assert_eq!(
            market_regime(&bars, None, Some(&b)).regime,
            Regime::PanicRepair
        );
        assert_ne!(market_regime(&bars, None, None).regime, Regime::PanicRepair);
        let bars = with_last(series(0.0, 260), &[-2.0, 1.0, 0.2]);
        let b = Breadth {
            up_ratio_pct: Some(55.0),
            median_pct_chg: Some(0.1),
            ..Breadth::default()
        };
        assert_eq!(
            market_regime(&bars, None, Some(&b)).regime,
            Regime::PanicRepairConfirmed
        );
    }

    #[test]
    fn breadth_overrides() {
        let bear = series(-0.002, 260);
        let b = Breadth {
            pct_above_ma20: Some(70.0),
            pct_above_ma20_delta: Some(5.0),
            ..Breadth::default()
        };
        assert_eq!(
            market_regime(&bear, None, Some(&b)).regime,
            Regime::BearRebound
        );
        let bull = series(0.002, 260);
        let b = Breadth {
            pct_above_ma20: Some(40.0),
            ..Breadth::default()
        };
        assert_eq!(market_regime(&bull, None, Some(&b)).regime, Regime::Caution);
        let b = Breadth {
            pct_above_ma20: Some(18.0),
            ..Breadth::default()
        };
        assert_eq!(market_regime(&bull, None, Some(&b)).regime, Regime::RiskOff);
        let b = Breadth {
            up_ratio_pct: Some(30.0),
            ..Breadth::default()
        };
        assert_eq!(market_regime(&bull, None, Some(&b)).regime, Regime::Caution);
    }

    #[test]
    fn serialises_as_reference_names() {
        assert_eq!(
            serde_json::to_value(Regime::PanicRepairConfirmed).unwrap(),
            "PANIC_REPAIR_CONFIRMED"
        );
        assert_eq!(serde_json::to_value(Regime::RiskOff).unwrap(), "RISK_OFF");
    }
}
