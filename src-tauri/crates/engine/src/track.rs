//! Forward tracking of screen candidates (issue 27 item 3): each candidate of a screen run
//! on day D is followed 1, 5, 10 and 20 trading days on, from its own cached bars.
//!
//! * Entry at the open of the stock's first bar after D — the backtest's default entry
//!   rule ([`crate::backtest::EntryMode::Open`]); exit at the close of the N-th bar after D
//!   (N = 1 is the entry day's own close). A suspended stock's days are its own bars.
//! * One position of a backtest slot ([`POSITION_CNY`], the whole portfolio over the
//!   default four slots) in whole 100-share lots, at least one lot; fees are the
//!   backtest's ([`fees`]: commission with its minimum, stamp duty on the sell by date,
//!   transfer fee), each to the fen, so a return is what the backtest would have booked.
//! * Max favourable / adverse excursion: the net return had the position been sold at the
//!   highest high / lowest low between entry and exit (on that bar's date).
//! * A horizon whose bars do not exist yet is [`Outcome::Pending`]; nothing is invented.
//! * An entry open at the limit-up is [`Outcome::NoEntry`], as the backtest does not buy
//!   there; such a signal is neither a hit nor a miss.
//! * A hit is a net return above zero (a fen of profit after fees).
//!
//! [`hit_rates`] counts hits per trigger, per L2 track, per regime (水温, when known) and
//! over all signals, for each horizon. Pure: no I/O, no clock.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::backtest::{INITIAL_CASH, fees, fen, limit_fraction, limit_prices};
use crate::funnel::{BoardFilter, Funnel, FunnelConfig, FunnelResult, ScreenArgs};
use crate::{Bar, Board, Universe};

/// Trading days a candidate is followed for.
pub const HORIZONS: [u32; 4] = [1, 5, 10, 20];
/// One slot of the backtest's portfolio at its default four picks.
pub const POSITION_CNY: f64 = INITIAL_CASH / 4.0;
const LOT: f64 = 100.0;

/// A candidate's figures at one horizon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// The exit bar does not exist yet: `bars_after` of the `horizon` bars are cached.
    Pending { horizon: u32, bars_after: u32 },
    /// The next open was at the limit-up: the backtest would not have bought.
    NoEntry { horizon: u32, entry_date: u32 },
    Done {
        horizon: u32,
        /// `YYYYMMDD` of the entry bar (the first bar after the screen day).
        entry_date: u32,
        entry_price: f64,
        exit_date: u32,
        exit_price: f64,
        shares: u32,
        /// Buy and sell fees together, CNY.
        fees: f64,
        /// Profit after fees, CNY (to the fen).
        pnl: f64,
        /// `pnl` over the cost with the buy fees, percent.
        net_return_pct: f64,
        /// Net return had it been sold at the highest high up to the exit, percent.
        mfe_pct: f64,
        /// Net return had it been sold at the lowest low up to the exit, percent.
        mae_pct: f64,
        hit: bool,
    },
}

impl Outcome {
    pub fn horizon(&self) -> u32 {
        match self {
            Outcome::Pending { horizon, .. }
            | Outcome::NoEntry { horizon, .. }
            | Outcome::Done { horizon, .. } => *horizon,
        }
    }

    /// `Some(hit)` once done.
    pub fn hit(&self) -> Option<bool> {
        match self {
            Outcome::Pending { .. } | Outcome::NoEntry { .. } => None,
            Outcome::Done { hit, .. } => Some(*hit),
        }
    }

    pub fn net_return_pct(&self) -> Option<f64> {
        match self {
            Outcome::Pending { .. } | Outcome::NoEntry { .. } => None,
            Outcome::Done { net_return_pct, .. } => Some(*net_return_pct),
        }
    }
}

/// Shares one slot buys at `price`: whole lots, at least one.
pub fn position_shares(price: f64) -> u32 {
    let lots = (POSITION_CNY / (price * LOT)).floor();
    if lots.is_finite() && lots >= 1.0 {
        (lots as u32).saturating_mul(LOT as u32)
    } else {
        LOT as u32
    }
}

/// (fees of both sides, pnl, net return %) of `shares` bought at `buy` on `buy_date` and
/// sold at `sell` on `sell_date`, as the backtest books a trade.
fn round_trip(shares: u32, buy: f64, buy_date: u32, sell: f64, sell_date: u32) -> (f64, f64, f64) {
    let n = f64::from(shares);
    let cost = buy * n;
    let (bc, _, bt) = fees(cost, false, buy_date);
    let proceeds = sell * n;
    let (sc, ss, st) = fees(proceeds, true, sell_date);
    let buy_fees = bc + bt;
    let sell_fees = sc + ss + st;
    let pnl = fen(proceeds - sell_fees - cost - buy_fees);
    let base = cost + buy_fees;
    let pct = if base > 0.0 { pnl / base * 100.0 } else { 0.0 };
    (fen(buy_fees + sell_fees), pnl, pct)
}

/// ST / *ST / delisting names, as the backtest and the funnel tell them (5 % limit).
pub fn is_st_name(name: &str) -> bool {
    name.to_uppercase().contains("ST") || name.contains("退")
}

/// The figures of a candidate screened on `as_of`, at each of `horizons`, from the stock's
/// bars (ascending; bars after `as_of` are the future being measured); `board` and `is_st`
/// give its price limit.
pub fn follow(
    bars: &[Bar],
    as_of: u32,
    horizons: &[u32],
    board: Board,
    is_st: bool,
) -> Vec<Outcome> {
    let entry = bars.partition_point(|b| b.date <= as_of);
    let after = &bars[entry..];
    if let (Some(prev), Some(first)) = (entry.checked_sub(1).map(|i| bars[i]), after.first()) {
        let (up, _) = limit_prices(prev.close, limit_fraction(board, is_st, first.date));
        if first.open >= up {
            return horizons
                .iter()
                .map(|&h| Outcome::NoEntry {
                    horizon: h,
                    entry_date: first.date,
                })
                .collect();
        }
    }
    horizons.iter().map(|&h| follow_one(after, h)).collect()
}

fn follow_one(after: &[Bar], horizon: u32) -> Outcome {
    let n = horizon.max(1) as usize;
    let (Some(first), Some(exit)) = (after.first(), after.get(n - 1)) else {
        return Outcome::Pending {
            horizon,
            bars_after: u32::try_from(after.len().min(n)).unwrap_or(u32::MAX),
        };
    };
    let held = &after[..n];
    let price = first.open;
    let shares = position_shares(price);
    let (fees, pnl, net) = round_trip(shares, price, first.date, exit.close, exit.date);
    let best = held
        .iter()
        .fold(first, |a, b| if b.high > a.high { b } else { a });
    let worst = held
        .iter()
        .fold(first, |a, b| if b.low < a.low { b } else { a });
    let (_, _, mfe) = round_trip(shares, price, first.date, best.high, best.date);
    let (_, _, mae) = round_trip(shares, price, first.date, worst.low, worst.date);
    Outcome::Done {
        horizon,
        entry_date: first.date,
        entry_price: price,
        exit_date: exit.date,
        exit_price: exit.close,
        shares,
        fees,
        pnl,
        net_return_pct: net,
        mfe_pct: mfe,
        mae_pct: mae,
        hit: pnl > 0.0,
    }
}

/// What a tracked signal is grouped by, and its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackedSignal {
    /// L4 trigger kinds (`Spring`, `SOS`, `LPS`, `EVR`, …) — Spring, SOS and LPS are the
    /// Wyckoff event types of the chart's marks.
    pub triggers: Vec<String>,
    /// L2 track (`Trend`, `Accum`, `Unknown`).
    pub track: String,
    /// 水温; `None` (or `UNKNOWN`) when it was not known.
    pub regime: Option<String>,
    pub outcomes: Vec<Outcome>,
}

/// Which grouping a hit rate belongs to.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum GroupBy {
    All,
    Trigger,
    Track,
    Regime,
}

/// Hit rate of one group at one horizon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct HitRate {
    pub group: GroupBy,
    /// The trigger, track or regime (`all` for every signal).
    pub key: String,
    pub horizon: u32,
    /// Signals with figures at this horizon.
    pub signals: u32,
    pub hits: u32,
    /// Signals still waiting for their bars.
    pub pending: u32,
    /// `hits / signals` in percent; `None` with no signal done.
    pub hit_rate_pct: Option<f64>,
    pub mean_net_return_pct: Option<f64>,
}

#[derive(Default)]
struct Tally {
    signals: u32,
    hits: u32,
    pending: u32,
    sum: f64,
}

/// Hit rates by group and horizon, in the order all, triggers, tracks, regimes (each by
/// key), then horizon.
pub fn hit_rates(signals: &[TrackedSignal]) -> Vec<HitRate> {
    let mut tallies: BTreeMap<(GroupBy, String, u32), Tally> = BTreeMap::new();
    for s in signals {
        let mut keys = vec![(GroupBy::All, "all".to_owned())];
        let mut seen = Vec::new();
        for t in &s.triggers {
            if !seen.contains(&t) {
                seen.push(t);
                keys.push((GroupBy::Trigger, t.clone()));
            }
        }
        keys.push((GroupBy::Track, s.track.clone()));
        if let Some(r) = s
            .regime
            .as_ref()
            .filter(|r| !r.is_empty() && *r != "UNKNOWN")
        {
            keys.push((GroupBy::Regime, r.clone()));
        }
        for o in &s.outcomes {
            for (g, k) in &keys {
                let t = tallies.entry((*g, k.clone(), o.horizon())).or_default();
                match o {
                    Outcome::Pending { .. } => t.pending += 1,
                    Outcome::NoEntry { .. } => {}
                    Outcome::Done {
                        hit,
                        net_return_pct,
                        ..
                    } => {
                        t.signals += 1;
                        t.hits += u32::from(*hit);
                        t.sum += net_return_pct;
                    }
                }
            }
        }
    }
    tallies
        .into_iter()
        .map(|((group, key, horizon), t)| HitRate {
            group,
            key,
            horizon,
            signals: t.signals,
            hits: t.hits,
            pending: t.pending,
            hit_rate_pct: (t.signals > 0).then(|| f64::from(t.hits) / f64::from(t.signals) * 100.0),
            mean_net_return_pct: (t.signals > 0).then(|| t.sum / f64::from(t.signals)),
        })
        .collect()
}

/// The funnel as of every trading day of the universe's calendar in [from, to] (the
/// backfill of past screens): prepared once for all days, as the backtest does, then
/// screened day by day from the bars up to that day. `on_day(done, total, result)` gets
/// each day's result; a day that fails to screen is skipped (and counted as done).
pub fn replay_screens(
    universe: &Universe,
    from: u32,
    to: u32,
    on_day: &mut dyn FnMut(usize, usize, u32, Option<FunnelResult>),
) {
    let funnel = Funnel::prepare(universe, &FunnelConfig::default()).with_daily_features();
    let days: Vec<u32> = funnel
        .calendar()
        .iter()
        .copied()
        .filter(|d| (from..=to).contains(d))
        .collect();
    for (i, &day) in days.iter().enumerate() {
        let args = ScreenArgs {
            board: BoardFilter::All,
            limit: 0,
            as_of: Some(day),
        };
        let result = funnel.screen(&args).ok().filter(|r| r.as_of == Some(day));
        on_day(i + 1, days.len(), day, result);
    }
}

#[cfg(test)]
#[path = "track/tests.rs"]
mod tests;
