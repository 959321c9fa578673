//! Position sizing by risk: how many shares a buy may take so that a stop-out costs at most
//! a set share of equity. Pure and integer: money in fen, prices in millionths of a yuan
//! (callers convert at their boundary, [`price_e6`] / [`fen_of`]).
//!
//! * The risk at the stop of `n` shares is what selling them at the stop loses, both
//!   sides' fees included ([`crate::fees::fees_for`]): `n × (entry − stop)` plus the buy's
//!   fees at the entry and the sale's at the stop (stamp duty by date).
//! * Shares: the most whose risk stays within `equity × risk %`, rounded down to a buy the
//!   board accepts ([`crate::Board::lot_rule`]).
//! * Caps, each allowing at most some shares: the market's 水温 (the risk budget scaled to
//!   a half when the funnel's gate says probe or review, to nothing when it allows no new
//!   buy, [`regime_scale_pct`]), the cash (amount and buy fees ≤ cash) and a per-position
//!   budget (amount and buy fees ≤ `equity × max position %`). The buy is the smallest of
//!   them; [`Sizing::bound`] names every cap that allowed less than the risk budget alone.
//! * The stop ([`choose_stop`]): a price given, the structure's (the latest Spring or LPS
//!   low under the entry, else the range's support), or `entry − k × ATR14`; by default the
//!   tighter (higher) of the structure and ATR stops. Levels from bars are rounded down to
//!   the fen, so an order can carry them.
//!
//! Every cost is monotone in the share count, so the largest count within a limit is found
//! by bisection, and the largest valid buy below it is the board's rounding of it.

use serde::{Deserialize, Serialize};

use crate::Bar;
use crate::board::{Board, LotRule};
use crate::diagnosis::ATR_PERIOD;
use crate::fees::{div_round, fees_for};
use crate::funnel::{BuyGate, buy_gate};
use crate::indicators::atr;
use crate::phases::{EventCode, wyckoff_structure};
use crate::regime::Regime;
use crate::trading_range::identify_trading_range;

/// Millionths of a yuan in a fen.
pub const E6_PER_FEN: i64 = 10_000;
/// Basis points in the whole (1 % = 100 bp).
pub const BP: i64 = 10_000;
/// The ATR multiple of the stop when none is given.
pub const DEFAULT_ATR_K: f64 = 2.0;
/// The risk per trade when none is given: 1 % of equity.
pub const DEFAULT_RISK_BP: u32 = 100;
/// The largest position when none is given: 20 % of equity.
pub const DEFAULT_MAX_POSITION_BP: u32 = 2_000;
/// No share count searched beyond this (far above any real account's).
const MAX_SHARES: u64 = 1_000_000_000_000;

/// Why a size cannot be given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SizingError {
    #[error("买入价必须大于 0（收到 {}）", yuan(*entry_e6))]
    BadEntry { entry_e6: i64 },
    #[error(
        "止损价 {} 不低于买入价 {}：做多的止损必须低于买入价",
        yuan(*stop_e6),
        yuan(*entry_e6)
    )]
    StopNotBelowEntry { entry_e6: i64, stop_e6: i64 },
    #[error("止损价必须大于 0（收到 {}）", yuan(*stop_e6))]
    BadStop { stop_e6: i64 },
    #[error("权益必须大于 0（收到 {} 元）", yuan_fen(*equity_fen))]
    NoEquity { equity_fen: i64 },
    #[error("现金不能为负（收到 {} 元）", yuan_fen(*cash_fen))]
    NegativeCash { cash_fen: i64 },
    #[error("已持有市值不能为负（收到 {} 元）", yuan_fen(*held_value_fen))]
    NegativeHeld { held_value_fen: i64 },
    #[error("{what} 必须在 0.01%–100% 之间（收到 {value}）")]
    BadPercent { what: &'static str, value: String },
    #[error("ATR 倍数必须是大于 0 的有限数（收到 {0}）")]
    BadAtrK(String),
    #[error("没有结构止损：买入价 {} 之下找不到 Spring / LPS 低点或区间支撑", yuan(*entry_e6))]
    NoStructureStop { entry_e6: i64 },
    #[error(
        "没有 ATR 止损：需要至少 {need} 根K线（有 {have} 根），或 {k}×ATR 已超过买入价",
        need = ATR_PERIOD
    )]
    NoAtrStop { have: usize, k: f64 },
    #[error(
        "算不出止损：买入价 {} 之下既无结构支撑，K线也不足以计算 ATR；请用 --stop 给出止损价",
        yuan(*entry_e6)
    )]
    NoStop { entry_e6: i64 },
}

/// `12.345678` from millionths.
fn yuan(e6: i64) -> String {
    let s = format!("{:.6}", e6 as f64 / 1e6);
    let s = s.trim_end_matches('0');
    let s = s.strip_suffix('.').unwrap_or(s);
    // at least the fen
    match s.split_once('.') {
        Some((_, d)) if d.len() >= 2 => s.to_owned(),
        Some((_, d)) => format!("{s}{}", "0".repeat(2 - d.len())),
        None => format!("{s}.00"),
    }
}

fn yuan_fen(fen: i64) -> String {
    let sign = if fen < 0 { "-" } else { "" };
    let a = fen.unsigned_abs();
    format!("{sign}{}.{:02}", a / 100, a % 100)
}

/// A price in yuan as millionths (to the nearest); `None` unless finite and positive.
pub fn price_e6(yuan: f64) -> Option<i64> {
    let e6 = (yuan * 1e6).round();
    (yuan.is_finite() && (1.0..9e15).contains(&e6)).then_some(e6 as i64)
}

/// An amount in yuan as fen (to the nearest); `None` unless finite.
pub fn fen_of(yuan: f64) -> Option<i64> {
    let fen = (yuan * 100.0).round();
    (yuan.is_finite() && fen.abs() < 9e15).then_some(fen as i64)
}

/// A percent as basis points (0.8 → 80), to the nearest; `None` outside (0, 100] %.
pub fn pct_to_bp(pct: f64) -> Option<u32> {
    let bp = (pct * 100.0).round();
    (pct.is_finite() && (1.0..=BP as f64).contains(&bp)).then_some(bp as u32)
}

/// The share of the risk budget the market's 水温 leaves a new buy, percent: all of it
/// when the funnel's gate opens normally (NEUTRAL) or shadows only overheated names
/// (RISK_ON); half when it asks for a probe (CAUTION, PANIC_REPAIR_CONFIRMED) or a review
/// (BEAR_REBOUND, PANIC_REPAIR); none when it allows no new buy (RISK_OFF, CRASH,
/// UNKNOWN). The gate is the funnel's own ([`buy_gate`]).
pub fn regime_scale_pct(regime: Regime) -> u32 {
    match buy_gate(regime).0 {
        BuyGate::Normal | BuyGate::OverheatShadow => 100,
        BuyGate::Probe | BuyGate::RepairReview => 50,
        BuyGate::NoNewBuy => 0,
    }
}

/// What one buy is sized from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizingInput {
    pub board: Board,
    /// The trade day, `YYYYMMDD` (the fee schedule's stamp duty goes by date).
    pub date: u32,
    pub entry_e6: i64,
    pub stop_e6: i64,
    pub equity_fen: i64,
    pub cash_fen: i64,
    /// Equity at risk to the stop, basis points (1 % = 100).
    pub risk_bp: u32,
    /// The most a position may cost, basis points of equity: the shares already held
    /// count against it, so an add may take only what the position has left.
    pub max_position_bp: u32,
    /// The market value of the shares of this stock already held (0 for a new position).
    #[serde(default)]
    pub held_value_fen: i64,
    /// The market's 水温; `None`: not applied.
    pub regime: Option<Regime>,
}

/// A limit that allowed fewer shares than the risk budget alone; each with the most
/// shares it allows (a valid buy of the board, 0 when not even the smallest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Cap {
    /// The 水温 scaled the risk budget to `scale_pct` % (0: no new buy).
    Regime {
        regime: Regime,
        scale_pct: u32,
        budget_fen: i64,
        shares: u64,
    },
    /// The cash pays for no more (amount and buy fees).
    Cash { cash_fen: i64, shares: u64 },
    /// The per-position budget: amount and buy fees at most `max_position_bp` of equity
    /// less the value already held (`budget_fen`, never below 0).
    PositionBudget {
        max_position_bp: u32,
        held_value_fen: i64,
        budget_fen: i64,
        shares: u64,
    },
}

impl Cap {
    pub fn shares(&self) -> u64 {
        match self {
            Cap::Regime { shares, .. }
            | Cap::Cash { shares, .. }
            | Cap::PositionBudget { shares, .. } => *shares,
        }
    }
}

/// A buy sized by its risk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sizing {
    pub board: Board,
    pub lot: LotRule,
    /// The buy: a valid quantity for the board, or 0.
    pub shares: u64,
    pub entry_e6: i64,
    pub stop_e6: i64,
    pub equity_fen: i64,
    pub cash_fen: i64,
    pub risk_bp: u32,
    pub max_position_bp: u32,
    /// The value of the stock already held, counted against the position budget.
    pub held_value_fen: i64,
    pub regime: Option<Regime>,
    /// `equity × risk %`, before the 水温.
    pub risk_budget_fen: i64,
    /// What the risk budget alone allows.
    pub risk_shares: u64,
    /// Price × shares, and the buy's fees; their sum is the cost.
    pub amount_fen: i64,
    pub buy_fees_fen: i64,
    pub cost_fen: i64,
    /// Lost if sold at the stop: the price difference and both sides' fees.
    pub risk_fen: i64,
    /// `risk_fen` as a percent of equity.
    pub risk_pct: f64,
    /// Every cap that allowed fewer shares than the risk budget alone, in the order
    /// 水温, cash, position budget.
    pub bound: Vec<Cap>,
}

impl Sizing {
    /// Why no share is bought, when none is.
    pub fn why_none(&self) -> Option<String> {
        if self.shares > 0 {
            return None;
        }
        if self.risk_shares == 0 {
            return Some(format!(
                "风险预算 {} 元不够买最小的 {} 股（含双边费用）",
                yuan_fen(self.risk_budget_fen),
                self.lot.minimum
            ));
        }
        let cap = self.bound.iter().find(|c| c.shares() == 0)?;
        Some(match cap {
            Cap::Regime { regime, .. } => format!("水温 {}，不开新仓", regime.as_str()),
            Cap::Cash { cash_fen, .. } => format!(
                "现金 {} 元不够买最小的 {} 股（含费用）",
                yuan_fen(*cash_fen),
                self.lot.minimum
            ),
            Cap::PositionBudget {
                budget_fen,
                held_value_fen,
                ..
            } if *held_value_fen > 0 => format!(
                "单只仓位上限已用去 {} 元（已持有），剩余 {} 元不够买最小的 {} 股（含费用）",
                yuan_fen(*held_value_fen),
                yuan_fen(*budget_fen),
                self.lot.minimum
            ),
            Cap::PositionBudget { budget_fen, .. } => format!(
                "单只仓位上限 {} 元不够买最小的 {} 股（含费用）",
                yuan_fen(*budget_fen),
                self.lot.minimum
            ),
        })
    }
}

/// `n × price` in fen, to the nearest fen; `None` past what a fee computation takes.
fn amount_fen(n: u64, price_e6: i64) -> Option<i64> {
    let a = div_round(i128::from(n) * i128::from(price_e6), i128::from(E6_PER_FEN));
    i64::try_from(a).ok().filter(|a| *a < i64::MAX / 4)
}

/// What buying `n` shares at `entry_e6` on `date` costs, fees included (0 for no shares):
/// the figure the cash and position caps hold a buy to.
pub fn buy_cost_fen(n: u64, entry_e6: i64, date: u32) -> Option<i64> {
    cost_fen(n, entry_e6, date)
}

/// What buying `n` shares at `entry_e6` costs, fees included (0 for no shares).
fn cost_fen(n: u64, entry_e6: i64, date: u32) -> Option<i64> {
    if n == 0 {
        return Some(0);
    }
    let a = amount_fen(n, entry_e6)?;
    Some(a + fees_for(a, false, date).total_fen())
}

/// What `n` shares bought at `entry_e6` lose if sold at `stop_e6`, in millionths (both
/// sides' fees included; 0 for no shares).
fn risk_e6(n: u64, entry_e6: i64, stop_e6: i64, date: u32) -> Option<i128> {
    if n == 0 {
        return Some(0);
    }
    let buy = fees_for(amount_fen(n, entry_e6)?, false, date).total_fen();
    let sell = fees_for(amount_fen(n, stop_e6)?, true, date).total_fen();
    Some(
        i128::from(n) * i128::from(entry_e6 - stop_e6)
            + i128::from(buy + sell) * i128::from(E6_PER_FEN),
    )
}

/// The risk at the stop of `n` shares in fen, rounded up (a loss is never understated).
pub fn risk_fen(n: u64, entry_e6: i64, stop_e6: i64, date: u32) -> Option<i64> {
    let e6 = risk_e6(n, entry_e6, stop_e6, date)?;
    i64::try_from((e6 + i128::from(E6_PER_FEN) - 1).div_euclid(i128::from(E6_PER_FEN))).ok()
}

/// The largest `n` in `[0, hi]` for which `ok` holds, `ok` being true at 0 and, once
/// false, false for every larger `n`.
fn largest(hi: u64, ok: impl Fn(u64) -> bool) -> u64 {
    let (mut lo, mut hi) = (0u64, hi.min(MAX_SHARES));
    if ok(hi) {
        return hi;
    }
    // ok(lo) and !ok(hi)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// `x × bp / 10,000`, rounded down.
fn part_bp(x: i64, bp: u32) -> i64 {
    i64::try_from(i128::from(x) * i128::from(bp) / i128::from(BP)).unwrap_or(i64::MAX)
}

/// The most shares (a valid buy of `lot`) whose risk at the stop is within `budget_fen`.
fn risk_limit(input: &SizingInput, lot: LotRule, budget_fen: i64) -> u64 {
    let per_share = i128::from(input.entry_e6 - input.stop_e6);
    let budget_e6 = i128::from(budget_fen) * i128::from(E6_PER_FEN);
    let hi = u64::try_from(budget_e6 / per_share.max(1) + 1).unwrap_or(MAX_SHARES);
    lot.round_down(largest(hi, |n| {
        risk_e6(n, input.entry_e6, input.stop_e6, input.date).is_some_and(|r| r <= budget_e6)
    }))
}

/// The most shares (a valid buy of `lot`) whose cost is within `limit_fen`.
fn cost_limit(input: &SizingInput, lot: LotRule, limit_fen: i64) -> u64 {
    let hi = u64::try_from(
        (i128::from(limit_fen) + 1) * i128::from(E6_PER_FEN) / i128::from(input.entry_e6) + 1,
    )
    .unwrap_or(MAX_SHARES);
    lot.round_down(largest(hi, |n| {
        cost_fen(n, input.entry_e6, input.date).is_some_and(|c| c <= limit_fen)
    }))
}

fn check_bp(what: &'static str, bp: u32) -> Result<(), SizingError> {
    if (1..=BP as u32).contains(&bp) {
        Ok(())
    } else {
        Err(SizingError::BadPercent {
            what,
            value: format!("{}%", f64::from(bp) / 100.0),
        })
    }
}

/// Sizes one buy: the most shares of a valid lot whose risk at the stop is within
/// `equity × risk %`, under the 水温, cash and position caps.
pub fn size(input: &SizingInput) -> Result<Sizing, SizingError> {
    let SizingInput {
        entry_e6, stop_e6, ..
    } = *input;
    if entry_e6 <= 0 {
        return Err(SizingError::BadEntry { entry_e6 });
    }
    if stop_e6 <= 0 {
        return Err(SizingError::BadStop { stop_e6 });
    }
    if stop_e6 >= entry_e6 {
        return Err(SizingError::StopNotBelowEntry { entry_e6, stop_e6 });
    }
    if input.equity_fen <= 0 {
        return Err(SizingError::NoEquity {
            equity_fen: input.equity_fen,
        });
    }
    if input.cash_fen < 0 {
        return Err(SizingError::NegativeCash {
            cash_fen: input.cash_fen,
        });
    }
    if input.held_value_fen < 0 {
        return Err(SizingError::NegativeHeld {
            held_value_fen: input.held_value_fen,
        });
    }
    check_bp("risk_pct", input.risk_bp)?;
    check_bp("max_position_pct", input.max_position_bp)?;

    let lot = input.board.lot_rule();
    let risk_budget_fen = part_bp(input.equity_fen, input.risk_bp);
    let risk_shares = risk_limit(input, lot, risk_budget_fen);
    let mut caps = Vec::new();
    if let Some(regime) = input.regime {
        let scale_pct = regime_scale_pct(regime);
        if scale_pct < 100 {
            let budget_fen = risk_budget_fen * i64::from(scale_pct) / 100;
            caps.push(Cap::Regime {
                regime,
                scale_pct,
                budget_fen,
                shares: risk_limit(input, lot, budget_fen),
            });
        }
    }
    caps.push(Cap::Cash {
        cash_fen: input.cash_fen,
        shares: cost_limit(input, lot, input.cash_fen),
    });
    let position_budget_fen =
        (part_bp(input.equity_fen, input.max_position_bp) - input.held_value_fen).max(0);
    caps.push(Cap::PositionBudget {
        max_position_bp: input.max_position_bp,
        held_value_fen: input.held_value_fen,
        budget_fen: position_budget_fen,
        shares: cost_limit(input, lot, position_budget_fen),
    });
    let shares = caps.iter().map(Cap::shares).fold(risk_shares, u64::min);
    let bound: Vec<Cap> = caps
        .into_iter()
        .filter(|c| c.shares() < risk_shares)
        .collect();
    let amount = if shares == 0 {
        0
    } else {
        amount_fen(shares, entry_e6).unwrap_or(0)
    };
    let buy_fees_fen = if shares == 0 {
        0
    } else {
        fees_for(amount, false, input.date).total_fen()
    };
    let risk = risk_fen(shares, entry_e6, stop_e6, input.date).unwrap_or(0);
    Ok(Sizing {
        board: input.board,
        lot,
        shares,
        entry_e6,
        stop_e6,
        equity_fen: input.equity_fen,
        cash_fen: input.cash_fen,
        risk_bp: input.risk_bp,
        max_position_bp: input.max_position_bp,
        held_value_fen: input.held_value_fen,
        regime: input.regime,
        risk_budget_fen,
        risk_shares,
        amount_fen: amount,
        buy_fees_fen,
        cost_fen: amount + buy_fees_fen,
        risk_fen: risk,
        risk_pct: (risk as f64 * 100.0 / input.equity_fen as f64 * 1e4).round() / 1e4,
        bound,
    })
}

/// How the stop is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StopRule {
    /// The tighter (higher) of the structure stop and `entry − k × ATR14` (the default);
    /// whichever exists when only one does.
    Tighter { atr_k: f64 },
    /// The structure's only.
    Structure,
    /// `entry − k × ATR14` only.
    Atr { atr_k: f64 },
    /// A price given.
    Price { stop_e6: i64 },
}

impl Default for StopRule {
    fn default() -> Self {
        StopRule::Tighter {
            atr_k: DEFAULT_ATR_K,
        }
    }
}

/// Where a stop comes from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StopSource {
    Given,
    /// The low of the latest Spring under the entry.
    Spring {
        date: u32,
    },
    /// The low of the latest last point of support under the entry.
    Lps {
        date: u32,
    },
    /// The accumulation range's support (its selling-climax low).
    Support,
    /// The support of the trading range the bars form.
    TradingRange,
    /// `entry − k × ATR14`.
    Atr {
        atr_e6: i64,
        k: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stop {
    pub stop_e6: i64,
    pub source: StopSource,
}

/// The stop chosen and the candidates it was chosen from (structure first, then ATR).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StopChoice {
    pub chosen: Stop,
    pub considered: Vec<Stop>,
}

/// Down to the fen.
fn floor_fen_e6(e6: i64) -> i64 {
    e6.div_euclid(E6_PER_FEN) * E6_PER_FEN
}

/// A level from the bars as a stop under `entry_e6`: rounded down to the fen, positive.
fn level_stop(level: f64, entry_e6: i64, source: StopSource) -> Option<Stop> {
    let e6 = floor_fen_e6(price_e6(level)?);
    (e6 > 0 && e6 < entry_e6).then_some(Stop {
        stop_e6: e6,
        source,
    })
}

/// The structure's stop under `entry_e6`: the low of the latest Spring or LPS of the
/// accumulation schematic under it, else the schematic's support, else the support of
/// the trading range the bars form.
pub fn structure_stop(bars: &[Bar], entry_e6: i64) -> Option<Stop> {
    if bars.is_empty() {
        return None;
    }
    let structure = wyckoff_structure(bars);
    if let Some(acc) = &structure.accumulation {
        let mut events: Vec<_> = acc
            .events
            .iter()
            .filter(|e| matches!(e.event, EventCode::Spring | EventCode::LPS))
            .collect();
        events.sort_by_key(|e| std::cmp::Reverse(e.date));
        for e in events {
            let source = match e.event {
                EventCode::Spring => StopSource::Spring { date: e.date },
                _ => StopSource::Lps { date: e.date },
            };
            if let Some(stop) = level_stop(e.price, entry_e6, source) {
                return Some(stop);
            }
        }
        if let Some(stop) = acc
            .support
            .and_then(|s| level_stop(s, entry_e6, StopSource::Support))
        {
            return Some(stop);
        }
    }
    identify_trading_range(bars)
        .and_then(|tr| level_stop(tr.support, entry_e6, StopSource::TradingRange))
}

/// `entry − k × ATR14` rounded down to the fen, when the bars give an ATR and the stop
/// stays above zero.
pub fn atr_stop(bars: &[Bar], entry_e6: i64, k: f64) -> Option<Stop> {
    let a = atr(bars, ATR_PERIOD)?;
    let atr_e6 = price_e6(a)?;
    let e6 = floor_fen_e6(entry_e6 - (k * atr_e6 as f64).round() as i64);
    (e6 > 0 && e6 < entry_e6).then_some(Stop {
        stop_e6: e6,
        source: StopSource::Atr { atr_e6, k },
    })
}

/// The stop for a buy at `entry_e6` after `bars` (ascending, the last the as-of bar).
pub fn choose_stop(bars: &[Bar], entry_e6: i64, rule: StopRule) -> Result<StopChoice, SizingError> {
    if entry_e6 <= 0 {
        return Err(SizingError::BadEntry { entry_e6 });
    }
    let k_ok = |k: f64| {
        if k.is_finite() && k > 0.0 {
            Ok(k)
        } else {
            Err(SizingError::BadAtrK(k.to_string()))
        }
    };
    match rule {
        StopRule::Price { stop_e6 } => {
            if stop_e6 <= 0 {
                return Err(SizingError::BadStop { stop_e6 });
            }
            if stop_e6 >= entry_e6 {
                return Err(SizingError::StopNotBelowEntry { entry_e6, stop_e6 });
            }
            let chosen = Stop {
                stop_e6,
                source: StopSource::Given,
            };
            Ok(StopChoice {
                chosen,
                considered: vec![chosen],
            })
        }
        StopRule::Structure => {
            let chosen =
                structure_stop(bars, entry_e6).ok_or(SizingError::NoStructureStop { entry_e6 })?;
            Ok(StopChoice {
                chosen,
                considered: vec![chosen],
            })
        }
        StopRule::Atr { atr_k } => {
            let k = k_ok(atr_k)?;
            let chosen = atr_stop(bars, entry_e6, k).ok_or(SizingError::NoAtrStop {
                have: bars.len(),
                k,
            })?;
            Ok(StopChoice {
                chosen,
                considered: vec![chosen],
            })
        }
        StopRule::Tighter { atr_k } => {
            let k = k_ok(atr_k)?;
            let considered: Vec<Stop> =
                [structure_stop(bars, entry_e6), atr_stop(bars, entry_e6, k)]
                    .into_iter()
                    .flatten()
                    .collect();
            let chosen = considered
                .iter()
                .copied()
                .max_by_key(|s| s.stop_e6)
                .ok_or(SizingError::NoStop { entry_e6 })?;
            Ok(StopChoice { chosen, considered })
        }
    }
}

/// Which account limits a risk-sized backtest ran under.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum LimitsSource {
    /// The engine's defaults ([`crate::risk_limits::RiskLimits::default`]): no Settings
    /// were given (a caller outside the desk).
    #[default]
    EngineDefault,
    /// The risk section of the user's Settings.
    Settings,
}

/// How the backtest sizes its buys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PositionSizing {
    /// Equity split into `top_n` equal slots (the default). The account limits are not
    /// applied: this tests the picks, not an account.
    #[default]
    EqualSlots,
    /// `risk_bp` of equity at risk to the backtest's stop-loss ([`backtest_sizing`]),
    /// under the account limits of [`crate::risk_limits`] (`limits`, from `limits_from`):
    /// no buy that takes the open risk to the stops past the heat limit, none past the
    /// positions limit, none while the brake holds (equity far enough below its high, or
    /// enough losing sales within the window). A limit of 0 is off.
    Risk {
        risk_bp: u32,
        limits: crate::risk_limits::RiskLimits,
        limits_from: LimitsSource,
    },
}

impl PositionSizing {
    pub fn is_equal_slots(&self) -> bool {
        *self == PositionSizing::EqualSlots
    }

    /// `equal` (or nothing) or `risk`, with the risk percent (`risk` only; 1 % when not
    /// given), under the engine's default limits ([`PositionSizing::under`] sets others).
    pub fn parse(mode: Option<&str>, risk_pct: Option<f64>) -> Result<Self, String> {
        match mode.map(str::trim).filter(|m| !m.is_empty()) {
            None | Some("equal" | "equal_slots") => match risk_pct {
                None => Ok(PositionSizing::EqualSlots),
                Some(_) => Err("risk_pct 只用于 sizing=risk（按风险定仓）".to_owned()),
            },
            Some("risk") => {
                let risk_bp = match risk_pct {
                    None => DEFAULT_RISK_BP,
                    Some(p) => pct_to_bp(p)
                        .ok_or_else(|| format!("risk_pct 必须在 0.01–100 之间（收到 {p}）"))?,
                };
                Ok(PositionSizing::Risk {
                    risk_bp,
                    limits: crate::risk_limits::RiskLimits::default(),
                    limits_from: LimitsSource::EngineDefault,
                })
            }
            Some(other) => Err(format!(
                "sizing 无效: '{other}'，可选: equal（等分仓位，默认）/ risk（按风险定仓）"
            )),
        }
    }

    /// The same sizing under `limits` from `from` (equal slots stay as they are).
    pub fn under(self, limits: crate::risk_limits::RiskLimits, from: LimitsSource) -> Self {
        match self {
            PositionSizing::EqualSlots => self,
            PositionSizing::Risk { risk_bp, .. } => PositionSizing::Risk {
                risk_bp,
                limits,
                limits_from: from,
            },
        }
    }
}

/// A backtest buy at `price` sized by risk: `risk_bp` of `equity` at risk to the stop
/// the backtest sells at (`stop_loss_pct` under the entry, < 0), each position at most one
/// slot (`equity / top_n`), within `cash`. The 水温 is not
/// applied: the backtest reports the regime gate's days, it does not enforce them, with
/// either sizing. `None` when the figures cannot be sized (no stop, a price of zero).
#[allow(clippy::too_many_arguments)]
pub fn backtest_sizing(
    board: Board,
    date: u32,
    price: f64,
    stop_loss_pct: f64,
    equity: f64,
    cash: f64,
    risk_bp: u32,
    top_n: usize,
) -> Option<Sizing> {
    let entry_e6 = price_e6(price)?;
    let stop = (entry_e6 as f64 * (1.0 + stop_loss_pct / 100.0)).floor();
    if !(stop_loss_pct < 0.0 && stop.is_finite() && stop >= 1.0) {
        return None;
    }
    let slots = u32::try_from(top_n.max(1)).unwrap_or(u32::MAX);
    size(&SizingInput {
        board,
        date,
        entry_e6,
        stop_e6: stop as i64,
        equity_fen: fen_of(equity)?,
        cash_fen: fen_of(cash)?.max(0),
        risk_bp,
        max_position_bp: (BP as u32 / slots).max(1),
        held_value_fen: 0,
        regime: None,
    })
    .ok()
}

#[cfg(test)]
mod tests;
