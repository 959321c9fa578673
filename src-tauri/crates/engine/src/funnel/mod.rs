//! The screening funnel over the whole market (REFERENCE §15.1, §14.8, §15.7).
//!
//! [`Funnel::prepare`] checks every series once (date order, corrupt bars, traded value with
//! the `close × volume` fallback) and indexes each bar in the trading calendar the data
//! implies; then [`Funnel::screen`] evaluates one day: L1 gates → L2 channels with the
//! cross-sectional RPS → L3 industry resonance → L4 triggers → L5 exit flags, plus the market
//! regime (水温, from the SSE and ChiNext bars and the breadth of the universe's own bars) and
//! its gate on new buys. A one-off screen uses the light prepare; a backtest adds
//! [`Funnel::with_daily_features`] once (per-bar L2 inputs, exact) and screens each day. Both
//! give the same results (tested).
//!
//! Scope: the board filter, then with `limit > 0` the most liquid stocks (20-day mean traded
//! value as of the day; stocks without usable bars last). RPS ranks the scored stocks of the
//! scope. Candidates are the L4 hits, sorted by score (sum of trigger scores) then code; L5
//! flags them, it does not remove them.
//!
//! No look-ahead: a screen for day D reads only bars dated ≤ D (stocks, benchmarks and the
//! breadth). Point in time: L1's ST gate reads the name in force on D (the stock's name
//! history), a stock delisted before D is not in the market that day (out of scope), and a
//! candidate carries the name it had on D. The market cap and industry are the universe's
//! current snapshot, not dated; where a past day's screen reads today's cap or today's name
//! (no history covering D) the result counts it ([`AsOfNotes`]) and says so in its warnings.
//!
//! Choices the reference leaves open are documented on [`FunnelConfig`]: the new-listing
//! minimum, when a stock counts as stale, when L3 has enough industry data to run, and the
//! breadth sample.

mod args;
mod gates;
mod intraday;
mod sector;
mod strength;

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub use args::{BoardFilter, FunnelError, MAX_SCREEN_LIMIT, ScreenArgs};
pub use gates::{
    BuyGate, L1Input, L1Reject, QualityStatus, amount_spike, buy_gate, l1_gate, quality_status,
    sample_skew,
};
pub use intraday::{HourBars, IntradayCheck, L4Reading, l4_reading};
pub use sector::{L3Outcome, SectorInput, SectorStat, sector_resonance};
pub use strength::{
    L2Pre, Rps, RpsFlags, Strength, StrengthConfig, dry_volume_series, l2_strength,
    percentile_ranks, rps_flags, rps_slope,
};

use crate::accumulation::{Stage, accum_stage, volume_contraction};
use crate::as_of::{AsOfNotes, fallbacks, records_delistings};
use crate::cancel::{Cancel, Cancelled, Never, STOCK_CHUNK, check};
use crate::channels::Track;
use crate::dates::days_from_civil;
use crate::exits::{ExitConfig, ExitSignal, exit_signal, holiday_grace_days};
use crate::indicators::{ma, ret_pct};
use crate::regime::{Breadth, MarketRegime, RegimeReason, market_regime};
use crate::triggers::{
    BIAS_CAP_BASE_PCT, BIAS_CAP_STAR_PCT, BIAS_CAP_TREND_PCT, L4Config, Trigger, l4_triggers,
};
use crate::{Bar, Board, StockSeries, Universe, bars_as_of};

/// Thresholds and switches; `Default` is 0.9.467's (§15 version note 2) plus our documented
/// choices where the reference has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunnelConfig {
    /// L1: market cap ≥ 25 亿, or a 20-day mean amount ≥ `cap_bypass_amount_wan`.
    pub min_market_cap_yi: f64,
    /// L1: hard floor 10 亿 (delisting risk).
    pub delist_risk_cap_floor_yi: f64,
    pub cap_bypass_amount_wan: f64,
    /// L1: 20-day mean traded value ≥ 4 000 万.
    pub min_avg_amount_wan: f64,
    pub min_close_price: f64,
    pub amount_avg_window: usize,
    pub amount_skew_max: f64,
    pub amount_median_min_ratio: f64,
    pub amount_pass_days_min_ratio: f64,
    pub include_bse_board: bool,
    /// Ours: listed at least 90 calendar days (about 60 trading days, enough for the short
    /// detectors; L2 needs 200 bars anyway). Applies only when the listing date is known.
    pub min_listed_days: i64,
    /// Ours: a stock whose newest bar is more than 5 trading days older than the as-of day is
    /// stale (skipped); within that it is scored on its own last bar (a short suspension).
    pub stale_after_trading_days: usize,
    /// Bars the layers see, as the reference loads 320 trading days (every detector needs ≤ 260).
    pub history_window: usize,
    pub strength: StrengthConfig,
    /// Ours: L3 runs when at least half of the L2 survivors have an industry.
    pub l3_min_industry_coverage: f64,
    /// Off by default in 0.9.467.
    pub enable_sos_trigger: bool,
    pub enable_lps_trigger: bool,
    pub enable_compression_trigger: bool,
    /// Ours: breadth (share above MA20, up ratio) feeds the regime only over ≥ 100 stocks.
    pub breadth_min_stocks: usize,
}

impl FunnelConfig {
    /// The bars up to the screened day that a screen looks at: a read for one day's screen
    /// needs no more of each stock (see [`Universe::trading_days`]).
    pub fn screen_bars(&self) -> usize {
        self.history_window.max(MIN_HISTORY_WINDOW)
    }
}

impl Default for FunnelConfig {
    fn default() -> Self {
        FunnelConfig {
            min_market_cap_yi: 25.0,
            delist_risk_cap_floor_yi: 10.0,
            cap_bypass_amount_wan: 8000.0,
            min_avg_amount_wan: 4000.0,
            min_close_price: 2.0,
            amount_avg_window: 20,
            amount_skew_max: 3.0,
            amount_median_min_ratio: 0.45,
            amount_pass_days_min_ratio: 0.35,
            include_bse_board: true,
            min_listed_days: 90,
            stale_after_trading_days: 5,
            history_window: 320,
            strength: StrengthConfig::default(),
            l3_min_industry_coverage: 0.5,
            enable_sos_trigger: false,
            enable_lps_trigger: false,
            enable_compression_trigger: false,
            breadth_min_stocks: 100,
        }
    }
}

/// Why a stock in scope was not scored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SkipReason {
    /// No bar dated on or before the as-of day.
    NoBars,
    Stale {
        last_date: u32,
        lag_trading_days: usize,
    },
    Corrupt {
        date: u32,
        problem: String,
    },
    InsufficientHistory {
        bars: usize,
        needed: usize,
    },
}

impl SkipReason {
    pub fn key(&self) -> &'static str {
        match self {
            SkipReason::NoBars => "no_bars",
            SkipReason::Stale { .. } => "stale",
            SkipReason::Corrupt { .. } => "corrupt",
            SkipReason::InsufficientHistory { .. } => "insufficient_history",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedStock {
    pub code: String,
    pub name: String,
    pub reason: SkipReason,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerCount {
    /// `L1` … `L5`.
    pub layer: String,
    pub input: usize,
    pub passed: usize,
    /// Why stocks dropped out (L1 gates, L2 reasons, L5 exit kinds), by count.
    pub reasons: BTreeMap<String, usize>,
    pub skipped: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Told about each funnel layer as soon as it is counted (L1 … L5, in order), so a caller
/// can show a long screen moving. Called on the screening thread between layers, never
/// from the parallel workers; `number` is 1 for L1 … 5 for L5.
pub trait LayerObserver {
    fn layer_done(&self, number: u8, layer: &LayerCount);
}

impl<F: Fn(u8, &LayerCount)> LayerObserver for F {
    fn layer_done(&self, number: u8, layer: &LayerCount) {
        self(number, layer)
    }
}

/// Observes nothing: the plain entry points.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unobserved;

impl LayerObserver for Unobserved {
    fn layer_done(&self, _number: u8, _layer: &LayerCount) {}
}

/// Counts a layer: tells `observer`, then keeps it in `layers`.
fn count_layer(layers: &mut Vec<LayerCount>, observer: &dyn LayerObserver, layer: LayerCount) {
    observer.layer_done(layers.len() as u8 + 1, &layer);
    layers.push(layer);
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub code: String,
    pub name: String,
    pub board: Board,
    pub industry: Option<String>,
    /// L2 channel label (`主升通道+点火破局` …).
    pub channel: String,
    pub track: Track,
    pub triggers: Vec<Trigger>,
    /// Sum of the trigger scores.
    pub score: f64,
    /// Accumulation stage; `None` = not in a base (exits use the Markup rules).
    pub stage: Option<Stage>,
    pub last_close: f64,
    /// Date of the stock's last bar used (earlier than the screen's as-of when suspended).
    pub bars_as_of: u32,
    /// L5: the first exit / risk signal, if any.
    pub exit: Option<ExitSignal>,
    pub rps: Option<Rps>,
    pub rs_10d: Option<f64>,
    pub rs_3d: Option<f64>,
    /// L4's second timeframe: the trigger day (`bars_as_of`) on its 60-minute bars.
    /// Reported, never a filter.
    #[serde(default)]
    pub intraday_60m: IntradayCheck,
    /// L4's weekly context: the weekly trend and the last quarter's range the trigger day
    /// sits in, as of its close (`None` with too few weeks). Reported, never a filter.
    #[serde(default)]
    pub weekly: Option<crate::timeframes::WeeklyContext>,
    /// What each timeframe said of the candidate (daily trigger, weekly, 60-minute), each
    /// line naming its timeframe.
    #[serde(default)]
    pub timeframes: Vec<crate::timeframes::TimeframeLine>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegimeBlock {
    pub regime: MarketRegime,
    pub gate: BuyGate,
    pub new_buy_allowed: bool,
    pub reason: String,
    /// Breadth derived from the universe's bars of the day, when enough stocks have them.
    pub breadth: Option<Breadth>,
    pub breadth_stocks: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataQuality {
    pub status: QualityStatus,
    /// Scored / in scope, percent.
    pub coverage_pct: f64,
    pub in_scope: usize,
    pub scored: usize,
    /// Scored on bars older than the as-of day (short suspensions).
    pub lagging: usize,
    pub date_mismatch: bool,
    pub warnings: Vec<String>,
    pub action: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunnelResult {
    /// The arguments as given.
    pub args: ScreenArgs,
    /// The trading day screened (the latest data day on or before the requested one).
    pub as_of: Option<u32>,
    pub universe_size: usize,
    pub regime: RegimeBlock,
    pub layers: Vec<LayerCount>,
    pub top_sectors: Vec<SectorStat>,
    /// Score descending, then code.
    pub candidates: Vec<Candidate>,
    pub skipped: Vec<SkippedStock>,
    pub skipped_counts: BTreeMap<String, usize>,
    pub data_quality: DataQuality,
    /// Which inputs of a past day's screen were today's (ST from today's names, today's
    /// market caps), and the delisted stocks left out; each also a line of the warnings.
    #[serde(default)]
    pub as_of_notes: AsOfNotes,
}

/// One series, checked once.
#[derive(Debug, Clone)]
struct Prepared {
    /// Dates not strictly ascending: the first offending date.
    order_problem: Option<u32>,
    /// Indices of corrupt bars, ascending, with what is wrong.
    bad: Vec<(usize, &'static str)>,
    /// Traded value per bar; `close × volume` where the source has none (§15.0).
    amounts: Vec<f64>,
    /// Calendar index of each bar (empty when the dates are out of order): finds a day's last
    /// bar in a small contiguous array instead of across the bars.
    cal: Vec<u32>,
    /// Per-bar features, when the funnel was prepared for many days
    /// ([`Funnel::with_daily_features`]).
    daily: Option<Daily>,
}

/// Per-bar features for many-day use. `dry` and `above_ma20` are exact; `ma200` and
/// `low250` feed only a conservative L2 pre-check (a stock it rules out could not pass any
/// channel; one it lets through is evaluated in full).
#[derive(Debug, Clone)]
struct Daily {
    dry: Vec<bool>,
    above_ma20: Vec<Option<bool>>,
    /// Exact: the same in-order sums as [`ma`].
    ma50: Vec<Option<f64>>,
    ma200: Vec<Option<f64>>,
    /// Exact (a minimum); `None` before 250 bars.
    low250: Vec<Option<f64>>,
    /// Exact: [`volume_contraction`] as of each bar.
    vol_contraction: Vec<Option<f64>>,
}

impl Daily {
    fn new(bars: &[Bar]) -> Self {
        let n = bars.len();
        let above_ma20 = (0..n)
            .map(|i| {
                let w = &bars[..=i];
                ma(w, 20).map(|m| w[i].close > m)
            })
            .collect();
        let ma_at = |k: usize| -> Vec<Option<f64>> { (0..n).map(|i| ma(&bars[..=i], k)).collect() };
        let ma50 = ma_at(50);
        let ma200 = ma_at(200);
        // Rolling 250-bar minimum of the lows (monotonic deque).
        let mut low250 = vec![None; n];
        let mut dq: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
        for i in 0..n {
            while dq.back().is_some_and(|&j| bars[j].low >= bars[i].low) {
                dq.pop_back();
            }
            dq.push_back(i);
            while dq.front().is_some_and(|&j| j + 250 <= i) {
                dq.pop_front();
            }
            if i + 1 >= 250
                && let Some(&j) = dq.front()
            {
                low250[i] = Some(bars[j].low);
            }
        }
        Daily {
            dry: dry_volume_series(bars),
            vol_contraction: (0..n).map(|i| volume_contraction(&bars[..=i])).collect(),
            above_ma20,
            ma50,
            ma200,
            low250,
        }
    }
}

impl Prepared {
    /// With the `calendar` known up front, the bars are indexed on it in the same walk
    /// ([`Self::index_calendar`] otherwise).
    fn new(bars: &[Bar], calendar: Option<&[u32]>) -> Self {
        // One walk over the bars (the whole market is millions of them).
        let mut order_problem = None;
        let mut bad = Vec::new();
        let mut amounts = Vec::with_capacity(bars.len());
        let mut cal = Vec::with_capacity(if calendar.is_some() { bars.len() } else { 0 });
        let mut j = 0usize;
        let mut prev = None;
        for (i, b) in bars.iter().enumerate() {
            if let Some(calendar) = calendar {
                j = calendar_index(calendar, j, b.date);
                cal.push(j as u32);
            }
            if order_problem.is_none() && prev.is_some_and(|p| b.date <= p) {
                order_problem = Some(b.date);
            }
            prev = Some(b.date);
            if let Some(p) = bar_problem(b) {
                bad.push((i, p));
            }
            amounts.push(if b.amount.is_finite() && b.amount > 0.0 {
                b.amount
            } else {
                b.close * b.volume
            });
        }
        if order_problem.is_some() {
            cal = Vec::new();
        }
        Prepared {
            order_problem,
            bad,
            amounts,
            cal,
            daily: None,
        }
    }

    /// Calendar index of each bar (dates in order only). Both ascending: one merge walk;
    /// every bar date is in the calendar.
    fn index_calendar(&mut self, bars: &[Bar], calendar: &[u32]) {
        if self.order_problem.is_some() {
            return;
        }
        let mut j = 0usize;
        self.cal = bars
            .iter()
            .map(|b| {
                j = calendar_index(calendar, j, b.date);
                j as u32
            })
            .collect();
    }
}

/// Where `date` is in `calendar`, looking on from `from` (the previous bar's index).
fn calendar_index(calendar: &[u32], mut from: usize, date: u32) -> usize {
    while from < calendar.len() && calendar[from] < date {
        from += 1;
    }
    from
}

/// Runs `f` on every prepared stock and its series, on every core, chunk by chunk, asking
/// `cancel` before each chunk.
fn each_stock(
    stocks: &mut [Prepared],
    universe: &Universe,
    cancel: &dyn Cancel,
    f: impl Fn(&mut Prepared, &StockSeries) + Sync,
) -> Result<(), Cancelled> {
    for (prepared, series) in stocks
        .chunks_mut(STOCK_CHUNK)
        .zip(universe.stocks.chunks(STOCK_CHUNK))
    {
        check(cancel)?;
        prepared
            .par_iter_mut()
            .zip(series)
            .for_each(|(p, s)| f(p, s));
    }
    Ok(())
}

/// The trading calendar, ascending: every date with a bar in the stocks' series (`days`:
/// [`stock_dates`], or a universe of tails' [`Universe::trading_days`]) or the SSE index.
fn with_index_days(days: Vec<u32>, universe: &Universe) -> Vec<u32> {
    // The index comes from elsewhere: not trusted to be in order.
    let mut index: Vec<u32> = universe
        .benchmarks
        .sse
        .iter()
        .flat_map(|b| b.iter().map(|b| b.date))
        .collect();
    index.sort_unstable();
    index.dedup();
    let mut calendar = Vec::new();
    union_ascending(&days, index.into_iter(), &mut calendar);
    calendar
}

/// The dates of the stocks' series, ascending (each already ascending, merged pairwise on
/// every core rather than millions of dates sorted). A series with dates out of order is
/// skipped as corrupt; its dates (perhaps a typo far in the future) must not become trading
/// days either.
fn stock_dates(universe: &Universe, stocks: &[Prepared]) -> Vec<u32> {
    universe
        .stocks
        .par_iter()
        .zip(stocks)
        .filter(|(_, p)| p.order_problem.is_none())
        .fold(
            || (Vec::new(), Vec::new()),
            |(calendar, mut scratch), (s, _)| {
                union_ascending(&calendar, s.bars.iter().map(|b| b.date), &mut scratch);
                (scratch, calendar)
            },
        )
        .map(|(calendar, _)| calendar)
        .reduce(Vec::new, |a, b| {
            let mut out = Vec::new();
            union_ascending(&a, b.into_iter(), &mut out);
            out
        })
}

/// `out` becomes the union of `a` and `b`, both strictly ascending, ascending.
fn union_ascending(a: &[u32], b: impl Iterator<Item = u32>, out: &mut Vec<u32>) {
    out.clear();
    let mut i = 0;
    for d in b {
        while i < a.len() && a[i] < d {
            out.push(a[i]);
            i += 1;
        }
        if i < a.len() && a[i] == d {
            i += 1;
        }
        out.push(d);
    }
    out.extend_from_slice(&a[i..]);
}

fn bar_problem(b: &Bar) -> Option<&'static str> {
    let prices = [b.open, b.high, b.low, b.close];
    if prices.iter().any(|p| !p.is_finite()) {
        Some("价格不是有限数")
    } else if prices.iter().any(|p| *p <= 0.0) {
        Some("价格非正")
    } else if b.high < b.low {
        Some("最高价低于最低价")
    } else if !b.volume.is_finite() || b.volume < 0.0 {
        Some("成交量非法")
    } else {
        None
    }
}

/// The universe, checked and indexed once, ready to screen any day.
#[derive(Debug, Clone)]
pub struct Funnel<'u> {
    universe: &'u Universe,
    cfg: FunnelConfig,
    stocks: Vec<Prepared>,
    /// Every date with a bar (stocks or the SSE index), ascending: the trading calendar.
    calendar: Vec<u32>,
    /// The data's newest day, whose facts today's stock list stands for: a screen of an
    /// earlier day that reads today's names or caps counts them as fallbacks. The calendar's
    /// last day unless told otherwise ([`Self::with_current_day`]).
    current: Option<u32>,
    /// Cached 60-minute bars L4 reads a trigger day on ([`Self::with_hour_bars`]).
    hours: HourBars,
}

/// A stock in scope, usable as of the day.
struct Usable {
    idx: usize,
    end: usize,
    lag: usize,
}

/// Per stock state through the layers.
struct Scored<'a> {
    stock: &'a StockSeries,
    window: &'a [Bar],
    amounts: &'a [f64],
    /// Index one past the window's last bar in the stock's full series.
    end: usize,
    daily: Option<&'a Daily>,
    lag: usize,
    rps: Option<Rps>,
}

impl<'u> Funnel<'u> {
    pub fn prepare(universe: &'u Universe, cfg: &FunnelConfig) -> Self {
        Self::prepare_cancellable(universe, cfg, &Never)
            .unwrap_or_else(|Cancelled| unreachable!("Never does not cancel"))
    }

    /// [`Self::prepare`]: the checks and the calendar index chunk by chunk, asking
    /// `cancel` before each chunk and before the calendar; at the first yes it stops.
    pub fn prepare_cancellable(
        universe: &'u Universe,
        cfg: &FunnelConfig,
        cancel: &dyn Cancel,
    ) -> Result<Self, Cancelled> {
        // A universe of tails brings its calendar: each stock is checked and indexed in one walk.
        let given = universe
            .trading_days
            .as_ref()
            .map(|days| with_index_days(days.clone(), universe));
        let mut stocks: Vec<Prepared> = Vec::with_capacity(universe.stocks.len());
        for chunk in universe.stocks.chunks(STOCK_CHUNK) {
            check(cancel)?;
            stocks.par_extend(
                chunk
                    .par_iter()
                    .map(|s| Prepared::new(&s.bars, given.as_deref())),
            );
        }
        check(cancel)?;
        let calendar = match given {
            Some(calendar) => calendar,
            None => {
                let calendar = with_index_days(stock_dates(universe, &stocks), universe);
                each_stock(&mut stocks, universe, cancel, |p, s| {
                    p.index_calendar(&s.bars, &calendar);
                })?;
                calendar
            }
        };
        let mut cfg = cfg.clone();
        // The dry-volume series and the detectors assume a year of bars in the window.
        cfg.history_window = cfg.screen_bars();
        Ok(Funnel {
            universe,
            cfg,
            stocks,
            calendar,
            current: None,
            hours: HourBars::new(),
        })
    }

    /// Names `day` as the data's newest day: a universe cut at a past day (a one-day
    /// screen's tails) cannot tell it from its own calendar, whose last day is the cut.
    pub fn with_current_day(mut self, day: u32) -> Self {
        self.current = Some(day);
        self
    }

    /// The 60-minute bars L4 confirms a trigger day on; a candidate whose trigger day is
    /// not among them says it has no minute data.
    pub fn with_hour_bars(mut self, hours: HourBars) -> Self {
        self.hours = hours;
        self
    }

    /// The data's newest day (see [`Self::with_current_day`]).
    fn current_day(&self) -> u32 {
        let last = self.calendar.last().copied().unwrap_or(0);
        self.current.map_or(last, |c| c.max(last))
    }

    /// Precompute per-bar features that make each later screen cheaper (the 地量 volume test
    /// for every bar). Worth it when many days are screened, as a backtest does; a single
    /// screen is faster without. Results are identical either way.
    pub fn with_daily_features(self) -> Self {
        self.with_daily_features_cancellable(&Never)
            .unwrap_or_else(|Cancelled| unreachable!("Never does not cancel"))
    }

    /// [`Self::with_daily_features`] that asks `cancel` before each chunk of stocks (the
    /// most expensive step of preparing a backtest).
    pub fn with_daily_features_cancellable(
        mut self,
        cancel: &dyn Cancel,
    ) -> Result<Self, Cancelled> {
        each_stock(&mut self.stocks, self.universe, cancel, |p, s| {
            p.daily = Some(Daily::new(&s.bars));
        })?;
        Ok(self)
    }

    pub fn config(&self) -> &FunnelConfig {
        &self.cfg
    }

    /// Trading days in the data, ascending.
    pub fn calendar(&self) -> &[u32] {
        &self.calendar
    }

    /// Screen one day.
    pub fn screen(&self, args: &ScreenArgs) -> Result<FunnelResult, FunnelError> {
        self.screen_cancellable(args, &Never)
    }

    /// [`Self::screen`] that asks `cancel` before each layer (scope, RPS, regime, L1–L4:
    /// each a fraction of a second on the full market) and returns
    /// [`FunnelError::Cancelled`] at the first yes.
    pub fn screen_cancellable(
        &self,
        args: &ScreenArgs,
        cancel: &dyn Cancel,
    ) -> Result<FunnelResult, FunnelError> {
        self.screen_observed(args, cancel, &Unobserved)
    }

    /// [`Self::screen_cancellable`] that tells `observer` about each layer (L1 … L5) as
    /// soon as it is counted, before the next one runs.
    pub fn screen_observed(
        &self,
        args: &ScreenArgs,
        cancel: &dyn Cancel,
        observer: &dyn LayerObserver,
    ) -> Result<FunnelResult, FunnelError> {
        args.validate()?;
        check(cancel)?;
        let cfg = &self.cfg;
        let mut warnings = Vec::new();
        let Some(&newest) = self.calendar.last() else {
            return Ok(self.empty(args, RegimeReason::NoBars));
        };
        let first = self.calendar[0];
        let requested = args.as_of.unwrap_or(newest);
        if requested < first {
            return Err(FunnelError::AsOfBeforeData {
                as_of: requested,
                first,
            });
        }
        let day_idx = self.calendar.partition_point(|d| *d <= requested) - 1;
        let day = self.calendar[day_idx];
        if day != requested {
            warnings.push(format!(
                "{requested} 没有K线（非交易日或晚于最新数据），按此前最近的交易日 {day} 筛选"
            ));
        }

        // Scope: the board, then the most liquid `limit` (stocks without usable bars last).
        // A stock delisted before the day was not in the market then.
        let universe = &self.universe.stocks;
        let on_board: Vec<usize> = (0..universe.len())
            .filter(|&i| args.board.admits(universe[i].board))
            .collect();
        let (in_board, gone): (Vec<usize>, Vec<usize>) = on_board
            .into_iter()
            .partition(|&i| universe[i].listed_on(day));
        let status: Vec<Result<Usable, SkipReason>> = in_board
            .par_iter()
            .map(|&i| self.status(i, day_idx))
            .collect();
        let mut status: Vec<Option<Result<Usable, SkipReason>>> =
            status.into_iter().map(Some).collect();
        // Positions into `in_board`, in scan order.
        let mut order: Vec<usize> = (0..in_board.len()).collect();
        if args.limit > 0 && args.limit < in_board.len() {
            let liquidity: Vec<Option<f64>> = in_board
                .iter()
                .zip(&status)
                .map(|(&i, st)| {
                    let u = st.as_ref()?.as_ref().ok()?;
                    let w = &self.stocks[i].amounts[..u.end];
                    let w = &w[w.len().saturating_sub(cfg.amount_avg_window)..];
                    Some(w.iter().sum::<f64>() / w.len().max(1) as f64)
                })
                .collect();
            let code = |k: usize| &universe[in_board[k]].code;
            order.sort_by(|&a, &b| match (liquidity[a], liquidity[b]) {
                (Some(x), Some(y)) => y.total_cmp(&x).then(code(a).cmp(code(b))),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => code(a).cmp(code(b)),
            });
            order.truncate(args.limit);
            order.sort_unstable();
        }
        let in_scope = order.len();
        let mut skipped = Vec::new();
        let mut usable: Vec<Usable> = Vec::new();
        for &k in &order {
            let i = in_board[k];
            match status[k].take() {
                Some(Ok(u)) => usable.push(u),
                Some(Err(reason)) => skipped.push(SkippedStock {
                    code: universe[i].code.clone(),
                    name: universe[i].name_on(day).value.to_owned(),
                    reason,
                }),
                None => {}
            }
        }
        check(cancel)?;
        let mut skipped_counts: BTreeMap<String, usize> = BTreeMap::new();
        for s in &skipped {
            *skipped_counts
                .entry(s.reason.key().to_string())
                .or_default() += 1;
        }

        // RPS over every scored stock in scope.
        let scored: Vec<Scored<'_>> = self.scored(&usable);
        let rets50: Vec<Option<f64>> = scored
            .iter()
            .map(|s| ret_pct(s.window, strength::RPS_FAST))
            .collect();
        let rets120: Vec<Option<f64>> = scored
            .iter()
            .map(|s| ret_pct(s.window, strength::RPS_SLOW))
            .collect();
        let (r50, r120) = (percentile_ranks(&rets50), percentile_ranks(&rets120));
        let scored: Vec<Scored<'_>> = scored
            .into_iter()
            .enumerate()
            .map(|(k, mut s)| {
                s.rps = match (r50[k], r120[k]) {
                    (Some(a), Some(b)) => Some(Rps {
                        rps50: a,
                        rps120: b,
                    }),
                    _ => None,
                };
                s
            })
            .collect();

        check(cancel)?;
        // Regime and breadth as of the day.
        let regime = self.regime_block(day, day_idx, &mut warnings);
        let sse = self
            .universe
            .benchmarks
            .sse
            .as_deref()
            .map(|b| bars_as_of(b, day))
            .filter(|b| !b.is_empty());
        let date_mismatch = match sse {
            Some(b) => b.last().is_some_and(|l| l.date != day),
            None => false,
        };
        if date_mismatch {
            warnings.push(format!(
                "上证指数最新K线 {} 早于筛选日 {day}，基准与个股日期不一致",
                sse.and_then(|b| b.last()).map_or(0, |l| l.date)
            ));
        }

        check(cancel)?;
        // L1.
        let l1: Vec<Result<(), L1Reject>> = scored
            .par_iter()
            .map(|s| {
                let last = s.window[s.window.len() - 1];
                let listed_days = s
                    .stock
                    .list_date
                    .and_then(|ld| Some(days_from_civil(day)? - days_from_civil(ld)?));
                let am = &s.amounts[s.amounts.len().saturating_sub(cfg.amount_avg_window)..];
                l1_gate(
                    &L1Input {
                        board: s.stock.board,
                        is_st: s.stock.is_st_on(day).value,
                        market_cap_yi: s.stock.market_cap_on(day).value,
                        listed_days,
                        last_close: last.close,
                        amounts: am,
                    },
                    cfg,
                )
            })
            .collect();
        let mut l1_reasons = BTreeMap::new();
        for r in &l1 {
            if let Err(e) = r {
                *l1_reasons.entry(e.as_str().to_string()).or_default() += 1;
            }
        }
        let as_of_notes = self.as_of_notes(&scored, &l1, day, gone.len());
        warnings.extend(as_of_notes.lines());
        if !gone.is_empty() {
            warnings.push(format!(
                "{} 只股票在 {day} 前已退市，不在当日筛选范围内",
                gone.len()
            ));
        }
        let l1_pass: Vec<&Scored<'_>> = scored
            .iter()
            .zip(&l1)
            .filter(|(_, r)| r.is_ok())
            .map(|(s, _)| s)
            .collect();
        let layer = |name: &str, input: usize, passed: usize, reasons, skipped, note| LayerCount {
            layer: name.to_string(),
            input,
            passed,
            reasons,
            skipped,
            note,
        };
        let mut layers = Vec::with_capacity(5);
        count_layer(
            &mut layers,
            observer,
            layer("L1", scored.len(), l1_pass.len(), l1_reasons, false, None),
        );

        check(cancel)?;
        // L2.
        let l2: Vec<Strength> = l1_pass
            .par_iter()
            .map(|s| {
                if !self.l2_could_pass(s) {
                    return Strength {
                        label: crate::channels::NOT_SELECTED.to_string(),
                        track: Track::Unknown,
                        rs_10d: None,
                        rs_3d: None,
                    };
                }
                let pre = s.daily.map(|d| L2Pre {
                    ma50: d.ma50[s.end - 1],
                    ma200: d.ma200[s.end - 1],
                    low250: d.low250[s.end - 1],
                    dry: d.dry[s.end - 1],
                    vol_contraction: d.vol_contraction[s.end - 1],
                });
                l2_strength(
                    s.window,
                    sse,
                    s.stock.board,
                    s.rps,
                    pre.as_ref(),
                    &cfg.strength,
                )
            })
            .collect();
        let mut l2_reasons = BTreeMap::new();
        for (s, st) in l1_pass.iter().zip(&l2) {
            if !st.passed() {
                let key = if s.window.len() < 200 {
                    "insufficient_history"
                } else {
                    "no_channel"
                };
                *l2_reasons.entry(key.to_string()).or_default() += 1;
            }
        }
        let l2_pass: Vec<(&Scored<'_>, &Strength)> = l1_pass
            .iter()
            .copied()
            .zip(&l2)
            .filter(|(_, st)| st.passed())
            .collect();
        count_layer(
            &mut layers,
            observer,
            layer("L2", l1_pass.len(), l2_pass.len(), l2_reasons, false, None),
        );

        check(cancel)?;
        // L3.
        let mut l1_by_industry: BTreeMap<String, usize> = BTreeMap::new();
        for s in &l1_pass {
            if let Some(ind) = &s.stock.industry {
                *l1_by_industry.entry(ind.clone()).or_default() += 1;
            }
        }
        let sector_inputs: Vec<SectorInput<'_>> = l2_pass
            .iter()
            .map(|(s, _)| SectorInput {
                industry: s.stock.industry.as_deref(),
                ret20: ret_pct(s.window, 20),
                ret5: ret_pct(s.window, 5),
                ret3: ret_pct(s.window, 3),
            })
            .collect();
        let l3 = sector_resonance(
            &sector_inputs,
            &l1_by_industry,
            cfg.l3_min_industry_coverage,
        );
        let l3_pass: Vec<(&Scored<'_>, &Strength)> = l2_pass
            .iter()
            .zip(&l3.keep)
            .filter(|(_, k)| **k)
            .map(|(p, _)| *p)
            .collect();
        count_layer(
            &mut layers,
            observer,
            layer(
                "L3",
                l2_pass.len(),
                l3_pass.len(),
                BTreeMap::new(),
                l3.skipped,
                l3.note.clone(),
            ),
        );

        check(cancel)?;
        // L4 and L5.
        let grace = holiday_grace_days(Some(regime.regime.regime), None);
        let exit_cfg = ExitConfig {
            holiday_grace_days: grace,
            ..ExitConfig::funnel()
        };
        let mut candidates: Vec<Candidate> = l3_pass
            .par_iter()
            .filter_map(|(s, st)| {
                let l4cfg = self.l4_config(s, st);
                let triggers = l4_triggers(s.window, &l4cfg);
                if triggers.is_empty() {
                    return None;
                }
                let stage = accum_stage(s.window);
                let exit = exit_signal(s.window, stage, &exit_cfg);
                let last = s.window[s.window.len() - 1];
                let tf = l4_reading(s.window, &s.stock.code, &triggers, &self.hours);
                Some(Candidate {
                    code: s.stock.code.clone(),
                    name: s.stock.name_on(day).value.to_owned(),
                    board: s.stock.board,
                    industry: s.stock.industry.clone(),
                    channel: st.label.clone(),
                    track: st.track,
                    score: triggers.iter().map(|t| t.score).sum(),
                    triggers,
                    stage,
                    last_close: last.close,
                    bars_as_of: last.date,
                    exit,
                    rps: s.rps,
                    rs_10d: st.rs_10d,
                    rs_3d: st.rs_3d,
                    intraday_60m: tf.intraday,
                    weekly: tf.weekly,
                    timeframes: tf.lines,
                })
            })
            .collect();
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.code.cmp(&b.code)));
        count_layer(
            &mut layers,
            observer,
            layer(
                "L4",
                l3_pass.len(),
                candidates.len(),
                BTreeMap::new(),
                false,
                (!candidates.is_empty()).then(|| {
                    intraday::layer_note(
                        candidates
                            .iter()
                            .map(|c| (c.weekly.map(|w| w.trend), c.intraday_60m)),
                    )
                }),
            ),
        );
        let mut l5_reasons = BTreeMap::new();
        for c in &candidates {
            if let Some(e) = &c.exit {
                *l5_reasons.entry(e.signal.as_str().to_string()).or_default() += 1;
            }
        }
        let flagged: usize = l5_reasons.values().sum();
        count_layer(
            &mut layers,
            observer,
            layer(
                "L5",
                candidates.len(),
                candidates.len() - flagged,
                l5_reasons,
                false,
                Some("L5 只标记退出/风险信号，候选仍列出".to_string()),
            ),
        );

        let lagging = scored.iter().filter(|s| s.lag > 0).count();
        if lagging > 0 {
            warnings.push(format!(
                "{lagging} 只股票最新K线早于 {day}（停牌或未同步），按其最后一根K线评估"
            ));
        }
        if !skipped.is_empty() {
            let parts: Vec<String> = skipped_counts
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            warnings.push(format!(
                "{} 只股票未评分：{}",
                skipped.len(),
                parts.join("，")
            ));
        }
        let coverage_pct = if in_scope == 0 {
            0.0
        } else {
            scored.len() as f64 / in_scope as f64 * 100.0
        };
        let status = quality_status(in_scope, coverage_pct, date_mismatch);
        if in_scope == 0 {
            warnings.push(format!("board={} 范围内没有股票", args.board));
        }
        Ok(FunnelResult {
            args: args.clone(),
            as_of: Some(day),
            universe_size: universe.len(),
            regime,
            layers,
            top_sectors: l3.top_sectors,
            candidates,
            skipped,
            skipped_counts,
            data_quality: DataQuality {
                status,
                coverage_pct,
                in_scope,
                scored: scored.len(),
                lagging,
                date_mismatch,
                warnings,
                action: status.action().to_string(),
            },
            as_of_notes,
        })
    }

    /// The day's point-in-time fallbacks over the stocks L1 looked at: ST status read from
    /// today's name (unless the board gate turned the stock away first) and today's market
    /// cap read by the size gate (reached only past the board and ST gates).
    fn as_of_notes(
        &self,
        scored: &[Scored<'_>],
        l1: &[Result<(), L1Reject>],
        day: u32,
        delisted: usize,
    ) -> AsOfNotes {
        let current = self.current_day();
        let mut notes = AsOfNotes {
            stocks: scored.len(),
            delisted,
            no_delisting_records: day < current && !records_delistings(self.universe),
            ..AsOfNotes::default()
        };
        for (s, r) in scored.iter().zip(l1) {
            let f = fallbacks(s.stock, day, current);
            let read_st = !matches!(r, Err(L1Reject::BoardExcluded));
            let read_cap = read_st && !matches!(r, Err(L1Reject::St));
            notes.st_from_today += usize::from(read_st && f.st);
            notes.cap_from_today += usize::from(read_cap && f.cap);
        }
        notes
    }

    /// Whether stock `i` can be scored as of `day`, and where its bars end.
    fn status(&self, i: usize, day_idx: usize) -> Result<Usable, SkipReason> {
        let stock = &self.universe.stocks[i];
        let prep = &self.stocks[i];
        if let Some(date) = prep.order_problem {
            return Err(SkipReason::Corrupt {
                date,
                problem: "日期未升序或重复".to_string(),
            });
        }
        let end = self.end_of(i, day_idx);
        if end == 0 {
            return Err(SkipReason::NoBars);
        }
        let last_date = stock.bars[end - 1].date;
        let lag = day_idx.saturating_sub(prep.cal[end - 1] as usize);
        if lag > self.cfg.stale_after_trading_days {
            return Err(SkipReason::Stale {
                last_date,
                lag_trading_days: lag,
            });
        }
        let start = end.saturating_sub(self.cfg.history_window);
        // The newest corrupt bar inside the window, if any.
        let k = prep.bad.partition_point(|(j, _)| *j < end);
        if k > 0 && prep.bad[k - 1].0 >= start {
            let (j, problem) = prep.bad[k - 1];
            return Err(SkipReason::Corrupt {
                date: stock.bars[j].date,
                problem: problem.to_string(),
            });
        }
        let needed = self.cfg.amount_avg_window.max(1);
        if end < needed {
            return Err(SkipReason::InsufficientHistory { bars: end, needed });
        }
        Ok(Usable { idx: i, end, lag })
    }

    /// A necessary condition for any L2 channel, from the daily features (true without them,
    /// or when a channel without a pre-check is enabled). Margins absorb the running-sum MA200.
    fn l2_could_pass(&self, s: &Scored<'_>) -> bool {
        const TOL: f64 = 1e-6;
        let st = &self.cfg.strength;
        let Some(d) = s.daily else {
            return true;
        };
        if st.channels.enable_rs_divergence || st.enable_trend_cont || st.enable_breakout_accel {
            return true;
        }
        let w = s.window;
        let n = w.len();
        if n < 200 {
            return false; // L2 needs 200 bars: nothing can pass.
        }
        let close = w[n - 1].close;
        let Some(m200) = d.ma200[s.end - 1].filter(|m| *m > 0.0) else {
            return true;
        };
        let bias = (close - m200) / m200;
        let r = s.rps;
        let momentum = bias <= 0.25 + TOL
            && r.is_none_or(|r| {
                (r.rps50 >= 65.0 && r.rps120 >= 70.0)
                    || (r.rps120 >= 80.0 && r.rps50 >= 50.0)
                    || (r.rps50 >= 50.0 && r.rps120 >= 55.0)
            });
        let ambush = bias.abs() <= 0.08 + TOL
            && r.is_none_or(|r| r.rps50 <= 45.0 && r.rps120 >= 70.0)
            && ret_pct(w, 20).is_none_or(|x| x <= -3.0 + TOL);
        let base =
            n >= 250 && d.low250[s.end - 1].is_none_or(|low| close <= low * 1.45 * (1.0 + TOL));
        let sos = r.is_none_or(|r| r.rps120 >= 30.0)
            && w[n - 1]
                .pct_change(w[n - 2].close)
                .is_none_or(|p| p >= 6.0 - TOL);
        momentum || ambush || base || sos
    }

    /// Bars of stock `i` dated on or before calendar day `day_idx` (dates in order).
    fn end_of(&self, i: usize, day_idx: usize) -> usize {
        self.stocks[i]
            .cal
            .partition_point(|c| (*c as usize) <= day_idx)
    }

    fn scored<'s>(&'s self, usable: &[Usable]) -> Vec<Scored<'s>> {
        usable
            .iter()
            .map(|u| {
                let stock = &self.universe.stocks[u.idx];
                let start = u.end.saturating_sub(self.cfg.history_window);
                Scored {
                    stock,
                    window: &stock.bars[start..u.end],
                    amounts: &self.stocks[u.idx].amounts[start..u.end],
                    end: u.end,
                    daily: self.stocks[u.idx].daily.as_ref(),
                    lag: u.lag,
                    rps: None,
                }
            })
            .collect()
    }

    fn l4_config(&self, s: &Scored<'_>, st: &Strength) -> L4Config {
        l4_config_for(
            s.stock.board,
            &st.label,
            s.rps,
            ret_pct(s.window, 120),
            s.window
                .last()
                .and_then(|b| s.stock.market_cap_on(b.date).value),
            &self.cfg,
        )
    }

    fn regime_block(&self, day: u32, day_idx: usize, warnings: &mut Vec<String>) -> RegimeBlock {
        let b = &self.universe.benchmarks;
        let sse = b.sse.as_deref().map(|s| bars_as_of(s, day)).unwrap_or(&[]);
        let chinext = b.chinext.as_deref().map(|s| bars_as_of(s, day));
        let (breadth, breadth_stocks) = self.breadth(day_idx);
        if breadth.is_none() {
            warnings.push(format!(
                "市场广度样本 {breadth_stocks} 只（需 ≥{}），水温仅按指数判断",
                self.cfg.breadth_min_stocks
            ));
        }
        let mut regime = market_regime(sse, chinext, breadth.as_ref());
        if b.sse.is_none() {
            regime.reasons.insert(0, RegimeReason::NoBenchmarkBars);
            warnings.push("缺少上证指数K线：水温为 UNKNOWN，RS 未校验".to_string());
        }
        let (gate, allowed, reason) = buy_gate(regime.regime);
        RegimeBlock {
            regime,
            gate,
            new_buy_allowed: allowed,
            reason: reason.to_string(),
            breadth,
            breadth_stocks,
        }
    }

    /// Breadth from the universe's own bars: stocks with a bar on the day (and ≥ 21 bars).
    fn breadth(&self, day_idx: usize) -> (Option<Breadth>, usize) {
        // (above MA20 today, above MA20 yesterday if it traded, day change %)
        let rows: Vec<(bool, Option<bool>, Option<f64>)> = self
            .universe
            .stocks
            .par_iter()
            .zip(&self.stocks)
            .enumerate()
            .filter_map(|(i, (s, p))| {
                if p.order_problem.is_some() {
                    return None;
                }
                let n = self.end_of(i, day_idx);
                if n < 21 || p.cal[n - 1] as usize != day_idx {
                    return None;
                }
                let bars = &s.bars[..n];
                let above = |k: usize| match &p.daily {
                    Some(d) => d.above_ma20[k - 1],
                    None => ma(&bars[..k], 20).map(|m| bars[k - 1].close > m),
                };
                let today = above(n)?;
                let prev = (day_idx > 0 && p.cal[n - 2] as usize == day_idx - 1)
                    .then(|| above(n - 1))
                    .flatten();
                Some((today, prev, bars[n - 1].pct_change(bars[n - 2].close)))
            })
            .collect();
        let n = rows.len();
        if n < self.cfg.breadth_min_stocks || n == 0 {
            return (None, n);
        }
        let pct = |k: usize, of: usize| k as f64 / of as f64 * 100.0;
        let above = pct(rows.iter().filter(|r| r.0).count(), n);
        let prev: Vec<bool> = rows.iter().filter_map(|r| r.1).collect();
        let delta = (prev.len() >= self.cfg.breadth_min_stocks)
            .then(|| above - pct(prev.iter().filter(|p| **p).count(), prev.len()));
        let changes: Vec<f64> = rows.iter().filter_map(|r| r.2).collect();
        let up = (!changes.is_empty())
            .then(|| pct(changes.iter().filter(|c| **c > 0.0).count(), changes.len()));
        (
            Some(Breadth {
                pct_above_ma20: Some(above),
                pct_above_ma20_delta: delta,
                up_ratio_pct: up,
                median_pct_chg: crate::indicators::median(&changes),
                money_flow_score: None,
                up_down_amount_ratio: None,
            }),
            n,
        )
    }

    fn empty(&self, args: &ScreenArgs, why: RegimeReason) -> FunnelResult {
        let mut regime = market_regime(&[], None, None);
        regime.reasons.insert(0, why.clone());
        let (gate, allowed, reason) = buy_gate(regime.regime);
        let status = QualityStatus::Empty;
        FunnelResult {
            args: args.clone(),
            as_of: None,
            universe_size: self.universe.stocks.len(),
            regime: RegimeBlock {
                regime,
                gate,
                new_buy_allowed: allowed,
                reason: reason.to_string(),
                breadth: None,
                breadth_stocks: 0,
            },
            layers: ["L1", "L2", "L3", "L4", "L5"]
                .iter()
                .map(|l| LayerCount {
                    layer: (*l).to_string(),
                    input: 0,
                    passed: 0,
                    reasons: BTreeMap::new(),
                    skipped: false,
                    note: None,
                })
                .collect(),
            top_sectors: Vec::new(),
            candidates: Vec::new(),
            skipped: Vec::new(),
            skipped_counts: BTreeMap::new(),
            data_quality: DataQuality {
                status,
                coverage_pct: 0.0,
                in_scope: 0,
                scored: 0,
                lagging: 0,
                date_mismatch: false,
                warnings: vec![why.to_string()],
                action: status.action().to_string(),
            },
            as_of_notes: AsOfNotes::default(),
        }
    }
}

/// The longest look-back of any layer (L2 250-day low + 10, LPS 78, bullish days 260).
const MIN_HISTORY_WINDOW: usize = 260;

/// Market leaders (universe rps120 ≥ 90 and ret120 ≥ 40 %) get a 60 % bias cap, 80 % on STAR.
const LEADER_RPS120: f64 = 90.0;
const LEADER_RET120: f64 = 40.0;
const LEADER_CAP: f64 = 60.0;
const LEADER_CAP_STAR: f64 = 80.0;

/// §15.1 L4 per-symbol config: the bias cap (base 25 %, STAR 40 %; trend channels ≥ 35 %;
/// market leaders — rps120 ≥ 90 and ret120 ≥ 40 % — ≥ 60 %, STAR 80 %) and the trend pullback
/// only for trend channels.
pub fn l4_config_for(
    board: Board,
    channel: &str,
    rps: Option<Rps>,
    ret120_pct: Option<f64>,
    market_cap_yi: Option<f64>,
    cfg: &FunnelConfig,
) -> L4Config {
    let trend = is_trend_channel(channel);
    let mut cap = if board == Board::Star {
        BIAS_CAP_STAR_PCT
    } else {
        BIAS_CAP_BASE_PCT
    };
    if trend {
        cap = cap.max(BIAS_CAP_TREND_PCT);
        let leader = rps.is_some_and(|r| r.rps120 >= LEADER_RPS120)
            && ret120_pct.is_some_and(|r| r >= LEADER_RET120);
        if leader {
            cap = cap.max(if board == Board::Star {
                LEADER_CAP_STAR
            } else {
                LEADER_CAP
            });
        }
    }
    L4Config {
        enable_spring: true,
        enable_evr: true,
        enable_trend_pullback: trend,
        enable_sos: cfg.enable_sos_trigger,
        enable_lps: cfg.enable_lps_trigger,
        enable_compression: cfg.enable_compression_trigger,
        board,
        max_bias_200_pct: Some(cap),
        market_cap_yi,
    }
}

/// The trend channels of §15.1 L4 (bias cap, trend pullback).
pub fn is_trend_channel(label: &str) -> bool {
    ["主升通道", "趋势延续", "点火破局", "加速突破"]
        .iter()
        .any(|c| label.contains(c))
}

/// Prepare with the default config and screen one day.
pub fn screen(universe: &Universe, args: &ScreenArgs) -> Result<FunnelResult, FunnelError> {
    Funnel::prepare(universe, &FunnelConfig::default()).screen(args)
}
