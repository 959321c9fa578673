//! The day's limit statistics, model-free, from the cached bars: how many stocks closed at
//! the daily limit up (涨停) or down (跌停), touched it and failed (炸板), traded the whole
//! day at it (一字板), the consecutive limit-up ladder (连板), how yesterday's limit-ups did
//! today (涨停溢价) and the seal rate — per trading day, over any date range.
//!
//! The limit is the exchange's: the board's percent on the day ([`Board::daily_limit`]: ST
//! as of that day from the name then, none on a listing's first days) applied to the
//! previous close in real (unadjusted) prices, rounded half up to the fen
//! ([`limit_prices_fen`]). The bars are forward-adjusted, so each stock-day is put back on
//! real prices by its scale `raw close ÷ adjusted close`:
//! * the day's raw close is known ([`PriceBasis::Raw`]): the close is that raw close, the
//!   open/high/low the adjusted ones times the scale, and the base the previous raw close —
//!   or, when the scale moved since (an ex-date), the adjusted previous close times today's
//!   scale, which is the exchange's ex-rights reference price;
//! * only the previous day's raw close is known ([`PriceBasis::PreviousScale`]): today is
//!   assumed no ex-date, so yesterday's scale stands;
//! * neither ([`PriceBasis::Adjusted`]): the adjusted prices are used as they are, so a
//!   close within one fen of the limit counts as at it (forward adjustment moves a price's
//!   rounding). Each day counts its stock-days of each basis.
//!
//! Only stock-days whose adjusted move comes within [`NEAR_LIMIT_MARGIN`] of the limit can
//! be at it: [`needs_raw`] names those, so a caller loads raw closes for few stocks.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::board::{is_st_name, limit_prices_fen, yuan_to_fen};
use crate::{Bar, StockSeries};

/// How close (as a fraction of the previous close) the adjusted high or low must come to the
/// limit for the day to need real prices: rounding to the fen moves a limit by at most half
/// a fen, under 1 % of any price above half a yuan; forward adjustment's own rounding adds
/// about as much again.
pub const NEAR_LIMIT_MARGIN: f64 = 0.02;

/// Bars before the range read to count a ladder that began before it.
pub const LADDER_WARMUP_BARS: usize = 60;

/// Two scales within this fraction of each other are the same adjustment (no ex-date).
const SAME_SCALE: f64 = 0.001;

/// Each stock's raw (unadjusted) closes, `(date, close in yuan)` ascending, by six-digit
/// code. A stock or day absent is a raw close not known.
pub type RawCloseMap = HashMap<String, Vec<(u32, f64)>>;

/// Where a stock-day's real prices came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum PriceBasis {
    /// The day's raw close is stored.
    Raw,
    /// Only the previous day's: its scale stands (right unless today is an ex-date).
    PreviousScale,
    /// No raw close on either day: adjusted prices, within a fen.
    Adjusted,
}

/// A stock-day against its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LimitState {
    /// No daily limit applies (a listing's first days).
    Unlimited,
    /// Closed at the limit up; `one_price`: opened, traded and closed there (一字板).
    LimitUp { one_price: bool },
    /// Touched the limit up and closed below it (炸板).
    Failed,
    /// Closed at the limit down; `one_price` as for [`LimitState::LimitUp`].
    LimitDown { one_price: bool },
    /// None of these.
    Open,
}

/// One stock-day's prices: the previous and today's adjusted bar, the raw closes known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DayInput {
    pub prev: Bar,
    pub bar: Bar,
    pub prev_raw: Option<f64>,
    pub raw: Option<f64>,
    /// The daily limit in whole percent; `None`: no limit today.
    pub limit_pct: Option<u32>,
}

/// The limit state of one stock-day and the basis of its prices: a pure function of its
/// prices, table-tested.
pub fn classify(day: &DayInput) -> (LimitState, PriceBasis) {
    let DayInput {
        prev,
        bar,
        prev_raw,
        raw,
        ..
    } = *day;
    let Some(pct) = day.limit_pct else {
        return (LimitState::Unlimited, basis_of(raw, prev_raw));
    };
    if !(prev.close > 0.0 && bar.close > 0.0) {
        return (LimitState::Open, basis_of(raw, prev_raw));
    }
    let scale_prev = prev_raw.map(|r| r / prev.close);
    let scale_today = raw.map(|r| r / bar.close);
    let (scale, basis) = match (scale_today, scale_prev) {
        (Some(s), _) => (s, PriceBasis::Raw),
        (None, Some(s)) => (s, PriceBasis::PreviousScale),
        (None, None) => (1.0, PriceBasis::Adjusted),
    };
    let base_is_real = matches!(scale_prev, Some(sp) if (sp / scale - 1.0).abs() <= SAME_SCALE);
    let base = match prev_raw {
        Some(r) if base_is_real => yuan_to_fen(r),
        _ => yuan_to_fen(prev.close * scale),
    };
    let Some(base) = base else {
        return (LimitState::Open, basis);
    };
    let (up, down) = limit_prices_fen(base, pct);
    // a price "at" a limit: exact in fen on real prices (an adjusted price times the scale
    // may land half a tick off when the adjustment is large), within a fen on adjusted ones
    let slack = match basis {
        PriceBasis::Adjusted => 1,
        _ => (0.5 * scale).floor() as i64,
    };
    let fen = |p: f64| yuan_to_fen(p * scale).unwrap_or(0);
    let close = match (basis, raw) {
        (PriceBasis::Raw, Some(r)) => yuan_to_fen(r).unwrap_or(0),
        _ => fen(bar.close),
    };
    let (open, high, low) = (fen(bar.open), fen(bar.high), fen(bar.low));
    let at = |p: i64, limit: i64| (p - limit).abs() <= slack;
    // A real close against the exchange's own limit (from the previous real close) is at
    // the limit only to the fen: a heavily adjusted history's slack would count a close a
    // fen short as sealed.
    let close_at = |limit: i64| {
        if basis == PriceBasis::Raw && base_is_real {
            close == limit
        } else {
            at(close, limit)
        }
    };
    let one_price = |limit: i64| at(open, limit) && at(high, limit) && at(low, limit);
    let state = if close_at(up) {
        LimitState::LimitUp {
            one_price: one_price(up),
        }
    } else if close_at(down) {
        LimitState::LimitDown {
            one_price: one_price(down),
        }
    } else if at(high, up) || high > up {
        LimitState::Failed
    } else {
        LimitState::Open
    };
    (state, basis)
}

fn basis_of(raw: Option<f64>, prev_raw: Option<f64>) -> PriceBasis {
    match (raw, prev_raw) {
        (Some(_), _) => PriceBasis::Raw,
        (None, Some(_)) => PriceBasis::PreviousScale,
        (None, None) => PriceBasis::Adjusted,
    }
}

/// Whether the adjusted move from `prev` to `bar` comes near a limit of `pct` percent.
fn near_limit(prev: &Bar, bar: &Bar, pct: u32) -> bool {
    if prev.close <= 0.0 {
        return false;
    }
    let f = f64::from(pct) / 100.0;
    bar.high / prev.close >= 1.0 + f - NEAR_LIMIT_MARGIN
        || bar.low / prev.close <= 1.0 - f + NEAR_LIMIT_MARGIN
}

/// A stock on the ladder: closed limit-up for `boards` of its trading days in a row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct LadderStock {
    pub code: String,
    /// The name it carried that day.
    pub name: String,
    /// `false`: no recorded name covers the day, so today's name (and ST status) stands in.
    pub name_known: bool,
    pub boards: u32,
    pub one_price: bool,
}

/// One trading day's limit statistics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct LimitDay {
    /// `YYYYMMDD`.
    pub date: u32,
    /// Stocks with a bar that day and a previous close.
    pub stocks: u32,
    /// 涨停: closed at the limit up.
    pub limit_up: u32,
    /// 跌停: closed at the limit down.
    pub limit_down: u32,
    /// 炸板: touched the limit up and closed below it.
    pub failed: u32,
    /// 一字板 up / down: open = high = low = close at the limit.
    pub one_price_up: u32,
    pub one_price_down: u32,
    /// 封板率: limit-up ÷ (limit-up + failed); `None` when neither happened.
    pub seal_rate: Option<f64>,
    /// 涨停溢价: the mean return in percent today (close over close) of the stocks that
    /// closed limit-up on the previous trading day and traded today; `None` when none did.
    pub premium_pct: Option<f64>,
    /// How many stocks the premium averages.
    pub premium_stocks: u32,
    /// 最高板: the longest limit-up run that closed today (0 when no limit-up).
    pub highest_board: u32,
    /// Every limit-up stock of the day, the longest runs first (then by code).
    pub ladder: Vec<LadderStock>,
    /// Stock-days without a limit (a listing's first days), left out of the counts.
    pub unlimited: u32,
    /// Stocks that came near a limit and were judged with yesterday's scale standing in
    /// for today's raw close ([`PriceBasis::PreviousScale`]) or on adjusted prices
    /// ([`PriceBasis::Adjusted`]); the rest of those near a limit on raw closes.
    pub previous_scale_days: u32,
    pub adjusted_days: u32,
    /// Stocks whose ST status (hence limit) that day came from today's name.
    pub st_from_today: u32,
}

impl LimitDay {
    /// Stocks on the ladder with at least `boards` in a row.
    pub fn at_least(&self, boards: u32) -> usize {
        self.ladder.iter().filter(|s| s.boards >= boards).count()
    }
}

/// The limit statistics of every trading day (a date any stock has a bar) in
/// `from..=to`, ascending.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct LimitSeries {
    pub days: Vec<LimitDay>,
}

/// [`slice::partition_point`] of `bars` (`pred` true of a leading run), found by walking
/// back from the end: the days a map asks about are a stock's last ones, and a walk over
/// the few bars after them reads memory in order, where a binary search over a whole
/// market's histories misses the cache at nearly every probe. Past a few hundred bars it
/// searches what is left.
pub(crate) fn partition_from_end(bars: &[Bar], pred: impl Fn(&Bar) -> bool) -> usize {
    const WALK: usize = 512;
    let stop = bars.len().saturating_sub(WALK);
    let mut i = bars.len();
    while i > stop {
        if pred(&bars[i - 1]) {
            return i;
        }
        i -= 1;
    }
    bars[..stop].partition_point(pred)
}

/// The position of a stock's first bar at or after `from`, less the ladder's warm-up.
fn window_start(bars: &[Bar], from: u32) -> usize {
    partition_from_end(bars, |b| b.date < from)
        .saturating_sub(LADDER_WARMUP_BARS)
        .max(1)
}

/// The first bar of stock `s` whose state bears on the figures of `from` on: its first bar on
/// or after `from` (at least its second, which has a previous close), moved back over the
/// days just before it that came near a limit, at most the ladder's warm-up. Only a day near
/// a limit can close at one, so the run of limit-ups `from` continues is among those days,
/// and the day before them, not near, ends any run (as the start of the walk does).
fn first_bearing(s: &StockSeries, st: &StByDate, from: u32) -> usize {
    let bars = &s.bars;
    let floor = window_start(bars, from);
    let mut i = partition_from_end(bars, |b| b.date < from).max(1);
    while i > floor
        && limit_of(s, st, i - 1)
            .0
            .is_some_and(|p| near_limit(&bars[i - 2], &bars[i - 1], p))
    {
        i -= 1;
    }
    i
}

/// The day of its listing (1 = the listing day) a stock's bar `i` is, counted in its own
/// bars from `list_date`; `None` when the listing is unknown or the bars do not reach it.
fn listing_day(s: &StockSeries, i: usize) -> Option<u32> {
    let listed = s.list_date?;
    // a cache that starts weeks after the listing says nothing: known without a search
    if s.bars.first()?.date > listed.saturating_add(14) {
        return None;
    }
    let first = s.bars.partition_point(|b| b.date < listed);
    // bars from before the listing date, or a cache that starts after it, say nothing
    if first == s.bars.len() || (first == 0 && s.bars[0].date > listed.saturating_add(14)) {
        return None;
    }
    (i >= first).then(|| u32::try_from(i - first + 1).unwrap_or(u32::MAX))
}

/// A stock's ST status by date, read once per name ([`StockSeries::is_st_on`]'s rule).
struct StByDate {
    /// `(from, is ST)` of each recorded name, ascending.
    spans: Vec<(u32, bool)>,
    today: bool,
}

impl StByDate {
    fn of(s: &StockSeries) -> Self {
        Self {
            spans: s
                .name_history
                .iter()
                .map(|n| (n.from, is_st_name(&n.name)))
                .collect(),
            today: s.is_st(),
        }
    }

    /// ST on `date`, and whether a recorded name covers it (else today's stands in).
    fn on(&self, date: u32) -> (bool, bool) {
        let k = self.spans.partition_point(|(from, _)| *from <= date);
        match k.checked_sub(1) {
            Some(k) => (self.spans[k].1, true),
            None => (self.today, false),
        }
    }
}

/// The limit percent of stock `s` on its bar `i`, and whether its ST status was known.
fn limit_of(s: &StockSeries, st: &StByDate, i: usize) -> (Option<u32>, bool) {
    let date = s.bars[i].date;
    let (is_st, known) = st.on(date);
    (
        s.board
            .daily_limit(is_st, date, s.list_date, listing_day(s, i)),
        known,
    )
}

/// The codes of `stocks` with a day in `from..=to` (or in the run of such days just before
/// it, which a ladder may continue) whose adjusted move comes near its limit: the stocks
/// whose raw closes [`limit_series`] reads.
pub fn needs_raw(stocks: &[StockSeries], from: u32, to: u32) -> Vec<&str> {
    use rayon::prelude::*;
    stocks
        .par_iter()
        .filter(|s| {
            let end = partition_from_end(&s.bars, |b| b.date <= to);
            let st = StByDate::of(s);
            (first_bearing(s, &st, from)..end).any(|i| {
                let (pct, _) = limit_of(s, &st, i);
                pct.is_some_and(|p| near_limit(&s.bars[i - 1], &s.bars[i], p))
            })
        })
        .map(|s| s.code.as_str())
        .collect()
}

fn raw_on(raw: Option<&[(u32, f64)]>, date: u32) -> Option<f64> {
    let raw = raw?;
    raw.binary_search_by_key(&date, |(d, _)| *d)
        .ok()
        .map(|i| raw[i].1)
        .filter(|c| c.is_finite() && *c > 0.0)
}

/// What one stock adds to one day.
struct StockDay {
    state: LimitState,
    /// The basis of its real prices, when the day came near a limit and needed them.
    basis: Option<PriceBasis>,
    st_known: bool,
    boards: u32,
    /// The return today in percent when yesterday (the market's previous day) closed limit-up.
    premium: Option<f64>,
}

/// The limit statistics of each trading day in `from..=to` over `stocks` (delisted stocks
/// stop at their delisting day), raw closes from `raw`.
pub fn limit_series(stocks: &[StockSeries], raw: &RawCloseMap, from: u32, to: u32) -> LimitSeries {
    use rayon::prelude::*;
    // the market's trading days: every date a stock has a bar, from the warm-up on
    let mut dates: Vec<u32> = stocks
        .iter()
        .flat_map(|s| {
            let end = partition_from_end(&s.bars, |b| b.date <= to);
            let start = partition_from_end(&s.bars, |b| b.date < from).saturating_sub(1);
            s.bars[start..end].iter().map(|b| b.date)
        })
        .collect();
    dates.sort_unstable();
    dates.dedup();
    let per_stock: Vec<Vec<(u32, StockDay)>> = stocks
        .par_iter()
        .map(|s| stock_days(s, raw.get(&s.code).map(Vec::as_slice), from, to, &dates))
        .collect();
    let mut days: Vec<LimitDay> = dates
        .iter()
        .filter(|&&d| d >= from)
        .map(|&date| LimitDay {
            date,
            ..LimitDay::default()
        })
        .collect();
    let mut premium_sum = vec![0.0f64; days.len()];
    for (s, list) in stocks.iter().zip(&per_stock) {
        for (date, sd) in list {
            let Ok(k) = days.binary_search_by_key(date, |d| d.date) else {
                continue;
            };
            let day = &mut days[k];
            day.stocks += 1;
            match sd.basis {
                Some(PriceBasis::PreviousScale) => day.previous_scale_days += 1,
                Some(PriceBasis::Adjusted) => day.adjusted_days += 1,
                Some(PriceBasis::Raw) | None => {}
            }
            if !sd.st_known {
                day.st_from_today += 1;
            }
            if let Some(r) = sd.premium {
                premium_sum[k] += r;
                day.premium_stocks += 1;
            }
            match sd.state {
                LimitState::Unlimited => day.unlimited += 1,
                LimitState::LimitUp { one_price } => {
                    day.limit_up += 1;
                    day.one_price_up += u32::from(one_price);
                    let name = s.name_on(*date);
                    day.ladder.push(LadderStock {
                        code: s.code.clone(),
                        name: name.value.to_string(),
                        name_known: name.known,
                        boards: sd.boards,
                        one_price,
                    });
                }
                LimitState::LimitDown { one_price } => {
                    day.limit_down += 1;
                    day.one_price_down += u32::from(one_price);
                }
                LimitState::Failed => day.failed += 1,
                LimitState::Open => {}
            }
        }
    }
    for (day, sum) in days.iter_mut().zip(premium_sum) {
        day.ladder
            .sort_by(|a, b| b.boards.cmp(&a.boards).then_with(|| a.code.cmp(&b.code)));
        day.highest_board = day.ladder.first().map_or(0, |s| s.boards);
        let attempts = day.limit_up + day.failed;
        day.seal_rate = (attempts > 0).then(|| f64::from(day.limit_up) / f64::from(attempts));
        day.premium_pct = (day.premium_stocks > 0).then(|| sum / f64::from(day.premium_stocks));
    }
    LimitSeries { days }
}

/// One stock's days in `from..=to`, classified, with its run of limit-ups.
fn stock_days(
    s: &StockSeries,
    raw: Option<&[(u32, f64)]>,
    from: u32,
    to: u32,
    dates: &[u32],
) -> Vec<(u32, StockDay)> {
    let bars = &s.bars;
    let last = s.delist_date.map_or(to, |d| d.min(to));
    let end = partition_from_end(bars, |b| b.date <= last);
    let mut out = Vec::new();
    let mut run = 0u32;
    // the previous bar's state, to tell yesterday's limit-ups
    let mut prev_up = false;
    let st = StByDate::of(s);
    for i in first_bearing(s, &st, from)..end {
        let (prev, bar) = (bars[i - 1], bars[i]);
        let (limit_pct, st_known) = limit_of(s, &st, i);
        let near = limit_pct.is_some_and(|p| near_limit(&prev, &bar, p));
        let (state, basis) = if near || limit_pct.is_none() {
            classify(&DayInput {
                prev,
                bar,
                prev_raw: raw_on(raw, prev.date),
                raw: raw_on(raw, bar.date),
                limit_pct,
            })
        } else {
            // far from both limits: nothing to put on real prices
            (LimitState::Open, PriceBasis::Raw)
        };
        let up = matches!(state, LimitState::LimitUp { .. });
        run = if up { run + 1 } else { 0 };
        if bar.date >= from {
            // yesterday is the market's previous trading day, and the stock traded on it
            let k = dates.partition_point(|&d| d < bar.date);
            let market_prev = k.checked_sub(1).map(|k| dates[k]);
            let premium = (prev_up && market_prev == Some(prev.date) && prev.close > 0.0)
                .then(|| (bar.close / prev.close - 1.0) * 100.0);
            out.push((
                bar.date,
                StockDay {
                    state,
                    basis: (near && limit_pct.is_some()).then_some(basis),
                    st_known,
                    boards: run,
                    premium,
                },
            ));
        }
        prev_up = up;
    }
    out
}

#[cfg(test)]
#[path = "limits/tests.rs"]
mod tests;
