//! Forward tracking of screen candidates: each candidate of a screen run
//! on day D is followed 1, 5, 10 and 20 trading days on, from its own cached bars, as a
//! one-trade backtest of that stock would trade it — through the backtest's own rules
//! ([`crate::backtest::Holding`], [`crate::backtest::at_limit_up`],
//! [`crate::backtest::sale`]), so the two cannot drift apart:
//!
//! * Entry at the open of the market's first trading day after D — the backtest's default
//!   entry rule ([`crate::backtest::EntryMode::Open`]). Not bought
//!   ([`Outcome::NoEntry`]) when that open is at the limit-up or the stock does not trade
//!   that day; such a signal is neither a hit nor a miss.
//! * A horizon of h days sells at the close of the h-th day after the entry day on which
//!   the stock traded: T+1 makes the entry day's close no selling day, a suspension is no
//!   day held, and a limit-down close carries the sale to the next close that is not one.
//! * One position of a backtest slot ([`POSITION_CNY`], the whole portfolio over the
//!   default four slots) in the board's lots ([`Board::lot_rule`]), at least its smallest
//!   buy; fees are the backtest's (commission with its minimum, stamp duty on the sell by
//!   date, transfer fee), each to the fen, so a return is what the backtest would have
//!   booked.
//! * Max favourable / adverse excursion: the net return had the position been sold at the
//!   highest high / lowest low of the days it could have been sold — after the entry day
//!   up to the exit (on that bar's date).
//! * A horizon whose bars do not exist yet is [`Outcome::Pending`]; nothing is invented.
//! * A hit is a net return above zero (a fen of profit after fees).
//!
//! [`hit_rates`] counts hits per trigger, per L2 track, per regime (水温, when known) and
//! over all signals, for each horizon. Pure: no I/O, no clock.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::backtest::{Holding, INITIAL_CASH, at_limit_up, buy_fees, sale};
use crate::funnel::{BoardFilter, Funnel, FunnelConfig, FunnelResult, ScreenArgs};
use crate::{Bar, Board, Universe};

/// Trading days a candidate is followed for.
pub const HORIZONS: [u32; 4] = [1, 5, 10, 20];
/// One slot of the backtest's portfolio at its default four picks.
pub const POSITION_CNY: f64 = INITIAL_CASH / 4.0;

/// A candidate's figures at one horizon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// The exit bar does not exist yet: `bars_after` of the `horizon` bars are cached.
    Pending { horizon: u32, bars_after: u32 },
    /// Not bought at the entry day's open: at the limit-up, or the stock did not trade.
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

/// Shares one slot buys at `price` on `board`: the largest buy of the board's lots
/// ([`Board::lot_rule`]) the slot pays for, at least the board's smallest buy.
pub fn position_shares(board: Board, price: f64) -> u32 {
    let lot = board.lot_rule();
    let want = (POSITION_CNY / price).floor();
    let shares = if want.is_finite() && want >= 0.0 {
        lot.round_down(want as u64)
    } else {
        0
    };
    u32::try_from(shares.max(lot.minimum)).unwrap_or(u32::MAX)
}

/// The figures of a candidate screened on `as_of`, at each of `horizons`, from the stock's
/// bars (ascending; bars after `as_of` are the future being measured). `next_session` is
/// the market's first trading day after `as_of` (`None` when the calendar cannot tell:
/// the stock's own next bar is taken); `board` and `is_st` give its price limit.
pub fn follow(
    bars: &[Bar],
    as_of: u32,
    next_session: Option<u32>,
    horizons: &[u32],
    board: Board,
    is_st: bool,
) -> Vec<Outcome> {
    let entry = bars.partition_point(|b| b.date <= as_of);
    let Some(first) = bars.get(entry) else {
        return horizons
            .iter()
            .map(|&h| Outcome::Pending {
                horizon: h,
                bars_after: 0,
            })
            .collect();
    };
    // The backtest buys on the next trading day or not at all: a stock suspended that day
    // is skipped, not bought at whatever day it trades again. A calendar that misses a
    // day the stock traded is wrong about that day, so the bar wins.
    let entry_date = next_session.map_or(first.date, |d| d.min(first.date));
    if first.date != entry_date || at_limit_up(board, is_st, bars, entry, first.open) {
        return horizons
            .iter()
            .map(|&h| Outcome::NoEntry {
                horizon: h,
                entry_date,
            })
            .collect();
    }
    horizons
        .iter()
        .map(|&h| follow_one(bars, entry, h, board, is_st))
        .collect()
}

/// One horizon of a position bought at the open of `bars[entry]`.
fn follow_one(bars: &[Bar], entry: usize, horizon: u32, board: Board, is_st: bool) -> Outcome {
    let days = horizon.max(1) as usize;
    let first = bars[entry];
    let mut hold = Holding::new(first.date);
    let exit = (entry..bars.len()).find(|&i| {
        hold.count_close(bars[i].date) && hold.expired(days) && hold.sell_at(board, is_st, bars, i)
    });
    let Some(exit) = exit else {
        return Outcome::Pending {
            horizon,
            bars_after: u32::try_from(hold.held.min(days)).unwrap_or(u32::MAX),
        };
    };
    let price = first.open;
    let shares = position_shares(board, price);
    let n = u64::from(shares);
    let paid = buy_fees(price * n as f64, first.date);
    let sell = |b: &Bar, at: f64| sale(price, n, paid, at, b.date);
    let out = bars[exit];
    let sold = sell(&out, out.close);
    // Only the days after the entry day could have been sold on.
    let sellable = &bars[entry + 1..=exit];
    let best = sellable
        .iter()
        .fold(&sellable[0], |a, b| if b.high > a.high { b } else { a });
    let worst = sellable
        .iter()
        .fold(&sellable[0], |a, b| if b.low < a.low { b } else { a });
    Outcome::Done {
        horizon,
        entry_date: first.date,
        entry_price: price,
        exit_date: out.date,
        exit_price: out.close,
        shares,
        fees: sold.fees,
        pnl: sold.pnl,
        net_return_pct: sold.pnl_pct,
        mfe_pct: sell(best, best.high).pnl_pct,
        mae_pct: sell(worst, worst.low).pnl_pct,
        hit: sold.pnl > 0.0,
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
