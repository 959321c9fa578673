//! The funnel's policies as pure functions: the L1 universe gates (REFERENCE §15.1 L1), the
//! regime's gate on new buys (§15.1 post-processing) and the data-quality status (§14.8).

use serde::{Deserialize, Serialize};

use crate::Board;
use crate::indicators::{finite, median};
use crate::regime::Regime;

use super::FunnelConfig;

/// What L1 knows about one stock as of the day.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L1Input<'a> {
    pub board: Board,
    pub is_st: bool,
    pub market_cap_yi: Option<f64>,
    /// Calendar days from the listing date to the as-of day, when the listing date is known.
    pub listed_days: Option<i64>,
    pub last_close: f64,
    /// Traded value (CNY) of the last `amount_avg_window` bars, oldest first.
    pub amounts: &'a [f64],
}

/// Why L1 turned a stock away; serialised names are the keys of the layer's reason counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum L1Reject {
    /// BSE excluded by configuration.
    BoardExcluded,
    St,
    /// Below the hard market-cap floor (退市风险).
    CapBelowFloor,
    /// Small cap and not liquid enough to bypass the cap minimum.
    SmallCap,
    NewListing,
    PriceTooLow,
    Illiquid,
    /// The 20-day mean is carried by one or two spike days.
    AmountSpike,
}

impl L1Reject {
    pub fn as_str(self) -> &'static str {
        match self {
            L1Reject::BoardExcluded => "board_excluded",
            L1Reject::St => "st",
            L1Reject::CapBelowFloor => "cap_below_floor",
            L1Reject::SmallCap => "small_cap",
            L1Reject::NewListing => "new_listing",
            L1Reject::PriceTooLow => "price_too_low",
            L1Reject::Illiquid => "illiquid",
            L1Reject::AmountSpike => "amount_spike",
        }
    }
}

/// L1 in the reference's order: board, ST, market cap, (data present is checked before this),
/// price, liquidity with the spike check. Financial filters are not applied (no financials).
pub fn l1_gate(s: &L1Input<'_>, cfg: &FunnelConfig) -> Result<(), L1Reject> {
    if s.board == Board::Bse && !cfg.include_bse_board {
        return Err(L1Reject::BoardExcluded);
    }
    if s.is_st {
        return Err(L1Reject::St);
    }
    let threshold = cfg.min_avg_amount_wan * 1e4;
    let avg = mean_amount(s.amounts);
    if let Some(cap) = s.market_cap_yi {
        if cap < cfg.delist_risk_cap_floor_yi {
            return Err(L1Reject::CapBelowFloor);
        }
        let bypass = avg.is_some_and(|a| a >= cfg.cap_bypass_amount_wan * 1e4);
        if cap < cfg.min_market_cap_yi && !bypass {
            return Err(L1Reject::SmallCap);
        }
    }
    if s.listed_days.is_some_and(|d| d < cfg.min_listed_days) {
        return Err(L1Reject::NewListing);
    }
    // A NaN close fails too: `partial_cmp` is not `Greater`/`Equal` for it.
    if s.last_close
        .partial_cmp(&cfg.min_close_price)
        .is_none_or(|o| o.is_lt())
    {
        return Err(L1Reject::PriceTooLow);
    }
    if avg.is_none_or(|a| a < threshold) {
        return Err(L1Reject::Illiquid);
    }
    if amount_spike(s.amounts, threshold, cfg) {
        return Err(L1Reject::AmountSpike);
    }
    Ok(())
}

fn mean_amount(amounts: &[f64]) -> Option<f64> {
    if amounts.is_empty() {
        return None;
    }
    finite(amounts.iter().sum::<f64>() / amounts.len() as f64)
}

/// §15.1 L1 step 6: with ≥ 5 positive days, a skew ≥ 3 together with a low median or few days
/// above the threshold means one spike made the mean.
pub fn amount_spike(amounts: &[f64], threshold: f64, cfg: &FunnelConfig) -> bool {
    let positive: Vec<f64> = amounts.iter().copied().filter(|a| *a > 0.0).collect();
    if positive.len() < 5 {
        return false;
    }
    let Some(skew) = sample_skew(&positive) else {
        return false;
    };
    if skew < cfg.amount_skew_max {
        return false;
    }
    let low_median = median(&positive).is_some_and(|m| m < cfg.amount_median_min_ratio * threshold);
    let pass_days = amounts.iter().filter(|a| **a >= threshold).count() as f64;
    let few_days = pass_days / (amounts.len() as f64) < cfg.amount_pass_days_min_ratio;
    low_median || few_days
}

/// Adjusted Fisher–Pearson sample skewness (pandas `Series.skew`); `None` for < 3 values or no
/// spread.
pub fn sample_skew(xs: &[f64]) -> Option<f64> {
    let n = xs.len();
    if n < 3 {
        return None;
    }
    let nf = n as f64;
    let mean = xs.iter().sum::<f64>() / nf;
    let (mut m2, mut m3) = (0.0, 0.0);
    for &x in xs {
        let d = x - mean;
        m2 += d * d;
        m3 += d * d * d;
    }
    m2 /= nf;
    m3 /= nf;
    if m2 <= 0.0 {
        return None;
    }
    finite((nf * (nf - 1.0)).sqrt() / (nf - 2.0) * m3 / m2.powf(1.5))
}

/// How the regime gates new buys (§15.1 post-processing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BuyGate {
    /// UNKNOWN / RISK_OFF / CRASH: candidates are listed for review, nothing new is bought.
    NoNewBuy,
    /// RISK_ON: buys allowed; overheated names are shadowed.
    OverheatShadow,
    /// BEAR_REBOUND / PANIC_REPAIR: buys only after a review.
    RepairReview,
    /// PANIC_REPAIR_CONFIRMED / CAUTION: small probe positions.
    Probe,
    /// NEUTRAL.
    Normal,
}

/// The gate for a regime, whether it allows a new buy, and why.
pub fn buy_gate(regime: Regime) -> (BuyGate, bool, &'static str) {
    match regime {
        Regime::Unknown => (
            BuyGate::NoNewBuy,
            false,
            "水温未知（缺少基准指数K线），不开新仓",
        ),
        Regime::RiskOff => (BuyGate::NoNewBuy, false, "水温 RISK_OFF，不开新仓，只观察"),
        Regime::Crash => (BuyGate::NoNewBuy, false, "水温 CRASH，恐慌下跌，不开新仓"),
        Regime::RiskOn => (
            BuyGate::OverheatShadow,
            true,
            "水温 RISK_ON，可开新仓，过热标的降级观察",
        ),
        Regime::BearRebound => (
            BuyGate::RepairReview,
            true,
            "水温 BEAR_REBOUND，熊市反弹，新仓需复核",
        ),
        Regime::PanicRepair => (
            BuyGate::RepairReview,
            true,
            "水温 PANIC_REPAIR，恐慌修复首日，新仓需复核",
        ),
        Regime::PanicRepairConfirmed => (
            BuyGate::Probe,
            true,
            "水温 PANIC_REPAIR_CONFIRMED，修复确认，可小仓试探",
        ),
        Regime::Caution => (BuyGate::Probe, true, "水温 CAUTION，仅小仓试探"),
        Regime::Neutral => (BuyGate::Normal, true, "水温 NEUTRAL，按常规纪律开仓"),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QualityStatus {
    Ok,
    Partial,
    Degraded,
    Empty,
}

impl QualityStatus {
    /// The action line of §14.8.
    pub fn action(self) -> &'static str {
        match self {
            QualityStatus::Ok => "可正常参考候选排序",
            QualityStatus::Partial => "候选可参考，但需要优先复核缺失数据影响",
            QualityStatus::Degraded => "不要直接据此选股，先重跑或缩小扫描范围",
            QualityStatus::Empty => "无法形成可靠候选，需先修复数据源",
        }
    }
}

/// §14.8: nothing scanned → empty; coverage < 90 % or a date mismatch → degraded; < 98 % →
/// partial; else ok.
pub fn quality_status(total: usize, coverage_pct: f64, date_mismatch: bool) -> QualityStatus {
    if total == 0 {
        QualityStatus::Empty
    } else if coverage_pct < 90.0 || date_mismatch {
        QualityStatus::Degraded
    } else if coverage_pct < 98.0 {
        QualityStatus::Partial
    } else {
        QualityStatus::Ok
    }
}
