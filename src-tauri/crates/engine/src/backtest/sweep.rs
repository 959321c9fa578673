//! Parameter sweeps: every combination of lists or ranges of the sweepable
//! backtest parameters — hold days, stop-loss, take-profit, top-n, the entry price and the
//! set of L4 triggers — run over one preparation of the funnel.
//!
//! The funnel is prepared once (detecting the union of the grid's trigger sets) and every
//! trading day of the period is screened once; each combination then replays those screens
//! ([`ScreenedDay::ranked`] limits a day's candidates to its trigger set) through the same
//! simulation as [`super::run_backtest`], the combinations in parallel. A combination's
//! result is therefore exactly the single backtest with its parameters (tested cell by
//! cell): the single run screens only the days it asks about, and a screen depends only on
//! its day.
//!
//! Values: a comma list (`5,10,20`), a range `FROM..TO:STEP` (both ends inclusive when the
//! steps land on TO, values rounded to 6 decimals), or both (`5..20:5,30`). With one value a
//! parameter behaves as in a single backtest (clamped to its range); with several, a value
//! outside the range is an error (a clamp would make two cells the same run), and so is a
//! repeated value. Numeric axes are sorted ascending; entry modes and trigger sets keep the
//! order given. At most [`MAX_COMBINATIONS`] combinations.
//!
//! The best combination is the one with the best value of the chosen [`SweepMetric`]
//! (highest; lowest for the drawdown); cells without a value (no Sharpe on a flat curve, no
//! profit factor without a loss) never win; ties go to the first cell in grid order.
//!
//! **Stability** says whether the best is a plateau or a lucky spike. The best's neighbours
//! are the cells one step away along exactly one swept axis (the next value up or down of
//! one parameter, every other parameter equal). With g the metric oriented so that higher is
//! better (the drawdown negated), B the best's g, W the worst g of the grid's cells with a
//! value, and N the mean g of the neighbours (a neighbour without a value counts as W):
//!
//! ```text
//! stability = (N − W) / (B − W)      (1 when every cell has the same value)
//! ```
//!
//! — where the neighbours sit between the grid's worst (0) and the best (1): 1 means they do
//! as well as the best (a plateau), 0 that they do as badly as the worst cell (a lone
//! spike). The report also gives N, the worst neighbour and W in the metric's own units.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{
    BacktestArgs, BacktestError, BacktestResult, BenchmarkReturn, EntryMode, Metrics,
    RawBacktestArgs, ScreenedDay, SignalSource, Tape, TriggerSet, as_loss, prepare_for_days,
    screen_day, simulate,
};
use crate::Universe;
use crate::as_of::AsOfNotes;
use crate::cancel::{Cancel, check};
use crate::funnel::BoardFilter;
use crate::sizing::PositionSizing;

/// The most combinations one sweep runs.
pub const MAX_COMBINATIONS: usize = 1_000;
/// Axes of a grid, in [`Param::ALL`] order.
pub const AXES: usize = 6;

/// A sweepable parameter (an axis of the grid).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Param {
    HoldDays,
    StopLossPct,
    TakeProfitPct,
    TopN,
    EntryPriceMode,
    Triggers,
}

impl Param {
    /// The grid's axis order (the first varies slowest).
    pub const ALL: [Param; AXES] = [
        Param::HoldDays,
        Param::StopLossPct,
        Param::TakeProfitPct,
        Param::TopN,
        Param::EntryPriceMode,
        Param::Triggers,
    ];

    /// The tool's argument name.
    pub fn key(self) -> &'static str {
        match self {
            Param::HoldDays => "hold_days",
            Param::StopLossPct => "stop_loss_pct",
            Param::TakeProfitPct => "take_profit_pct",
            Param::TopN => "top_n",
            Param::EntryPriceMode => "entry_price_mode",
            Param::Triggers => "triggers",
        }
    }

    /// The CLI's flag.
    pub fn flag(self) -> &'static str {
        match self {
            Param::HoldDays => "--hold-days",
            Param::StopLossPct => "--stop-loss",
            Param::TakeProfitPct => "--take-profit",
            Param::TopN => "--top-n",
            Param::EntryPriceMode => "--entry",
            Param::Triggers => "--triggers",
        }
    }
}

impl std::fmt::Display for Param {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.key(), self.flag())
    }
}

#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum SweepError {
    #[error("{param} 的值 '{value}' 不是数字")]
    NotANumber { param: Param, value: String },
    #[error("{param} 的值 '{value}' 不是整数")]
    NotAnInteger { param: Param, value: String },
    #[error("{param} 的范围 '{spec}' 无效：应写成 FROM..TO:STEP，如 5..20:5")]
    BadRange { param: Param, spec: String },
    #[error("{param} 的范围 '{spec}' 无效：起点 {from} 大于终点 {to}")]
    RangeBackwards {
        param: Param,
        spec: String,
        from: f64,
        to: f64,
    },
    #[error("{param} 的范围 '{spec}' 无效：步长必须大于 0")]
    StepNotPositive { param: Param, spec: String },
    #[error("{param} 的范围 '{spec}' 只能用于数值参数，{param} 请逐个列出取值，如 open,close")]
    RangeOfNames { param: Param, spec: String },
    #[error("{param} 有空值: '{spec}'（取值用逗号分隔，如 5,10,20）")]
    EmptyValue { param: Param, spec: String },
    #[error("{param} 的取值 {value} 超出范围（多个取值时每个都须在 {allowed} 内）")]
    OutOfRange {
        param: Param,
        value: String,
        allowed: &'static str,
    },
    #[error("{param} 的取值 {value} 重复")]
    Duplicate { param: Param, value: String },
    #[error("参数组合共 {count} 个，超过上限 {max}：减少取值或加大步长")]
    TooManyCombinations { count: usize, max: usize },
    #[error(
        "best_by 无效: '{0}'，可选: return / annualized / max_drawdown / sharpe / win_rate / profit_factor"
    )]
    UnknownMetric(String),
    #[error("{0}")]
    Backtest(#[from] BacktestError),
}

/// The sweep's arguments as a tool or the CLI spells them: each sweepable parameter a value
/// spec (`10`, `5,10,20`, `5..20:5`); absent = its single default.
#[derive(Debug, Clone, Default)]
pub struct RawSweepArgs<'a> {
    pub start: Option<&'a str>,
    pub end: Option<&'a str>,
    pub board: Option<&'a str>,
    pub hold_days: Option<&'a str>,
    pub stop_loss_pct: Option<&'a str>,
    pub take_profit_pct: Option<&'a str>,
    pub top_n: Option<&'a str>,
    pub entry_price_mode: Option<&'a str>,
    pub triggers: Option<&'a str>,
}

/// Every combination of the listed values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepGrid {
    pub start: u32,
    pub end: u32,
    pub board: BoardFilter,
    pub hold_days: Vec<usize>,
    pub stop_loss_pct: Vec<f64>,
    pub take_profit_pct: Vec<f64>,
    pub top_n: Vec<usize>,
    pub entry_price_mode: Vec<EntryMode>,
    pub triggers: Vec<TriggerSet>,
    /// How every cell sizes its buys (not an axis: one sizing for the whole grid). Risk
    /// sizing needs a stop-loss in every cell ([`SweepGrid::with_sizing`]).
    #[serde(default, skip_serializing_if = "PositionSizing::is_equal_slots")]
    pub sizing: PositionSizing,
}

/// Position of a cell along each axis, in [`Param::ALL`] order.
pub type Coords = [usize; AXES];

/// Values rounded to 6 decimals, so `-8..-7:0.1` gives −7.9, not −7.8999999.
fn round6(x: f64) -> f64 {
    let r = (x * 1e6).round() / 1e6;
    if r == 0.0 { 0.0 } else { r }
}

fn number(param: Param, text: &str, integer: bool) -> Result<f64, SweepError> {
    let t = text.trim();
    let x: f64 = t
        .parse()
        .ok()
        .filter(|x: &f64| x.is_finite())
        .ok_or_else(|| SweepError::NotANumber {
            param,
            value: t.to_owned(),
        })?;
    if integer && x.fract() != 0.0 {
        return Err(SweepError::NotAnInteger {
            param,
            value: t.to_owned(),
        });
    }
    Ok(x)
}

/// The values of a numeric spec, in the order written.
pub fn parse_numbers(param: Param, spec: &str, integer: bool) -> Result<Vec<f64>, SweepError> {
    let mut out = Vec::new();
    for item in spec.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(SweepError::EmptyValue {
                param,
                spec: spec.to_owned(),
            });
        }
        let Some((from, rest)) = item.split_once("..") else {
            out.push(number(param, item, integer)?);
            continue;
        };
        let bad = || SweepError::BadRange {
            param,
            spec: item.to_owned(),
        };
        let (to, step) = rest.split_once(':').ok_or_else(bad)?;
        if from.trim().is_empty() || to.trim().is_empty() || step.trim().is_empty() {
            return Err(bad());
        }
        let (from, to, step) = (
            number(param, from, integer)?,
            number(param, to, integer)?,
            number(param, step, integer)?,
        );
        if step <= 0.0 {
            return Err(SweepError::StepNotPositive {
                param,
                spec: item.to_owned(),
            });
        }
        if from > to {
            return Err(SweepError::RangeBackwards {
                param,
                spec: item.to_owned(),
                from,
                to,
            });
        }
        // The tolerance keeps a TO that the steps land on (0.1 steps are inexact).
        let steps = ((to - from) / step + 1e-9).floor();
        if steps >= MAX_COMBINATIONS as f64 {
            return Err(SweepError::TooManyCombinations {
                count: (steps as usize).saturating_add(1),
                max: MAX_COMBINATIONS,
            });
        }
        out.extend((0..=steps as usize).map(|k| round6(from + k as f64 * step)));
    }
    Ok(out)
}

/// The names of a list spec (`open,close`, `spring+evr,spring+evr+sos`).
fn names(param: Param, spec: &str) -> Result<Vec<&str>, SweepError> {
    spec.split(',')
        .map(str::trim)
        .map(|item| {
            if item.is_empty() {
                Err(SweepError::EmptyValue {
                    param,
                    spec: spec.to_owned(),
                })
            } else if item.contains("..") {
                Err(SweepError::RangeOfNames {
                    param,
                    spec: item.to_owned(),
                })
            } else {
                Ok(item)
            }
        })
        .collect()
}

fn no_repeats<T: PartialEq>(
    param: Param,
    values: &[T],
    show: impl Fn(&T) -> String,
) -> Result<(), SweepError> {
    for (i, v) in values.iter().enumerate() {
        if values[..i].contains(v) {
            return Err(SweepError::Duplicate {
                param,
                value: show(v),
            });
        }
    }
    Ok(())
}

/// A numeric axis: one value is clamped like a single backtest's; several must each lie
/// in `allowed` (checked by `ok`), differ, and are sorted ascending.
fn numeric_axis(
    param: Param,
    spec: Option<&str>,
    integer: bool,
    default: f64,
    single: impl Fn(f64) -> f64,
    ok: impl Fn(f64) -> bool,
    allowed: &'static str,
) -> Result<Vec<f64>, SweepError> {
    let Some(spec) = spec else {
        return Ok(vec![default]);
    };
    let values = parse_numbers(param, spec, integer)?;
    if let [one] = values[..] {
        return Ok(vec![single(one)]);
    }
    if let Some(v) = values.iter().find(|v| !ok(**v)) {
        return Err(SweepError::OutOfRange {
            param,
            value: format!("{v}"),
            allowed,
        });
    }
    let mut values: Vec<f64> = values.into_iter().map(&single).collect();
    no_repeats(param, &values, |v| format!("{v}"))?;
    values.sort_by(f64::total_cmp);
    Ok(values)
}

impl SweepGrid {
    /// Validates every spec; `today` is the caller's (the date defaults).
    pub fn parse(raw: &RawSweepArgs<'_>, today: u32) -> Result<Self, SweepError> {
        let base = BacktestArgs::parse(
            &RawBacktestArgs {
                start: raw.start,
                end: raw.end,
                board: raw.board,
                ..RawBacktestArgs::default()
            },
            today,
        )?;
        let hold_days = numeric_axis(
            Param::HoldDays,
            raw.hold_days,
            true,
            base.hold_days as f64,
            |x| super::clamp_hold_days(x as i64) as f64,
            |x| (1.0..=60.0).contains(&x),
            "1–60",
        )?;
        let stop_loss_pct = numeric_axis(
            Param::StopLossPct,
            raw.stop_loss_pct,
            false,
            base.stop_loss_pct,
            as_loss,
            |_| true,
            "任意有限数",
        )?;
        let take_profit_pct = numeric_axis(
            Param::TakeProfitPct,
            raw.take_profit_pct,
            false,
            base.take_profit_pct,
            |x| x.max(0.0),
            |x| x >= 0.0,
            "≥ 0",
        )?;
        let top_n = numeric_axis(
            Param::TopN,
            raw.top_n,
            true,
            base.top_n as f64,
            |x| super::clamp_top_n(x as i64) as f64,
            |x| (0.0..=20.0).contains(&x),
            "0–20",
        )?;
        let entry_price_mode = match raw.entry_price_mode {
            None => vec![base.entry_price_mode],
            Some(spec) => names(Param::EntryPriceMode, spec)?
                .into_iter()
                .map(EntryMode::parse)
                .collect::<Result<Vec<_>, _>>()?,
        };
        no_repeats(Param::EntryPriceMode, &entry_price_mode, |m| {
            format!("{m:?}").to_lowercase()
        })?;
        let triggers = match raw.triggers {
            None => vec![base.triggers],
            Some(spec) => names(Param::Triggers, spec)?
                .into_iter()
                .map(TriggerSet::parse)
                .collect::<Result<Vec<_>, _>>()?,
        };
        no_repeats(Param::Triggers, &triggers, |t| t.label())?;
        let grid = SweepGrid {
            start: base.start,
            end: base.end,
            board: base.board,
            hold_days: hold_days.into_iter().map(|x| x as usize).collect(),
            stop_loss_pct,
            take_profit_pct,
            top_n: top_n.into_iter().map(|x| x as usize).collect(),
            entry_price_mode,
            triggers,
            sizing: PositionSizing::EqualSlots,
        };
        let count = grid.dims().iter().fold(1usize, |n, d| n.saturating_mul(*d));
        if count > MAX_COMBINATIONS {
            return Err(SweepError::TooManyCombinations {
                count,
                max: MAX_COMBINATIONS,
            });
        }
        Ok(grid)
    }

    /// Values per axis, in [`Param::ALL`] order.
    pub fn dims(&self) -> Coords {
        [
            self.hold_days.len(),
            self.stop_loss_pct.len(),
            self.take_profit_pct.len(),
            self.top_n.len(),
            self.entry_price_mode.len(),
            self.triggers.len(),
        ]
    }

    /// Combinations in the grid.
    pub fn len(&self) -> usize {
        self.dims().iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// One value everywhere: a plain backtest.
    pub fn is_single(&self) -> bool {
        self.len() == 1
    }

    /// The axes with more than one value.
    pub fn swept(&self) -> Vec<Param> {
        Param::ALL
            .into_iter()
            .zip(self.dims())
            .filter(|(_, n)| *n > 1)
            .map(|(p, _)| p)
            .collect()
    }

    /// Every cell, the first axis varying slowest.
    pub fn cells(&self) -> Vec<Coords> {
        let dims = self.dims();
        (0..self.len())
            .map(|mut k| {
                let mut c = [0; AXES];
                for axis in (0..AXES).rev() {
                    c[axis] = k % dims[axis];
                    k /= dims[axis];
                }
                c
            })
            .collect()
    }

    /// The single backtest's arguments of a cell.
    pub fn args(&self, c: Coords) -> BacktestArgs {
        BacktestArgs {
            start: self.start,
            end: self.end,
            board: self.board,
            hold_days: self.hold_days[c[0]],
            stop_loss_pct: self.stop_loss_pct[c[1]],
            take_profit_pct: self.take_profit_pct[c[2]],
            top_n: self.top_n[c[3]],
            entry_price_mode: self.entry_price_mode[c[4]],
            triggers: self.triggers[c[5]],
            sizing: self.sizing,
        }
    }

    /// The grid with every cell sized by `sizing`; risk sizing is refused when a cell
    /// has no stop-loss (0 %), since its risk to the stop is unknown.
    pub fn with_sizing(self, sizing: PositionSizing) -> Result<Self, BacktestError> {
        if !sizing.is_equal_slots() && self.stop_loss_pct.contains(&0.0) {
            return Err(BacktestError::RiskSizingNeedsStop);
        }
        Ok(SweepGrid { sizing, ..self })
    }

    /// Every trigger any cell uses: what the shared funnel must detect.
    pub fn trigger_union(&self) -> TriggerSet {
        self.triggers
            .iter()
            .fold(TriggerSet::of(&[]), |all, t| all.union(*t))
    }
}

/// How far a sweep is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum SweepProgress {
    /// Trading days screened (once each, shared by every combination).
    Signals { done: usize, total: usize },
    /// Combinations simulated.
    Combinations { done: usize, total: usize },
}

/// One combination and its full result.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepCell {
    pub coords: Coords,
    pub result: BacktestResult,
    /// Screened days on which the regime gate would have blocked new buys.
    pub regime_gated_days: usize,
}

/// The shared screens, replayed for one combination's trigger set.
pub(super) struct Replay<'a> {
    pub(super) days: &'a [u32],
    pub(super) screened: &'a [Option<ScreenedDay>],
    pub(super) triggers: TriggerSet,
    pub(super) gated_days: usize,
}

impl SignalSource for Replay<'_> {
    fn picks(&mut self, day: u32) -> Vec<String> {
        let Some(screened) = self
            .days
            .binary_search(&day)
            .ok()
            .and_then(|i| self.screened[i].as_ref())
        else {
            return Vec::new();
        };
        if !screened.new_buy_allowed() {
            self.gated_days += 1;
        }
        screened.ranked(self.triggers)
    }
}

/// Screens each of `days` once, in parallel, for every trigger of `grid` (the shared
/// preparation); `progress(done, total)` after each day.
pub(super) fn screen_days(
    universe: &Universe,
    grid: &SweepGrid,
    days: &[u32],
    cancel: &dyn Cancel,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<Option<ScreenedDay>>, BacktestError> {
    let funnel = prepare_for_days(universe, grid.trigger_union(), cancel)?;
    let total = days.len();
    let done = AtomicUsize::new(0);
    let screened: Vec<Option<ScreenedDay>> = days
        .par_iter()
        .map(|&day| {
            if cancel.is_cancelled() {
                return None;
            }
            let s = screen_day(&funnel, grid.board, day, cancel);
            let done = done.fetch_add(1, Ordering::Relaxed) + 1;
            progress(done, total);
            s
        })
        .collect();
    // A cancelled screen looks like a day without picks: never keep one.
    check(cancel)?;
    Ok(screened)
}

/// Runs every combination of `grid` over `universe` (see the module doc). `cancel` is asked
/// between days and combinations; `progress` is told from the worker threads.
pub fn run_sweep(
    universe: &Universe,
    grid: &SweepGrid,
    cancel: &dyn Cancel,
    progress: &(dyn Fn(SweepProgress) + Sync),
) -> Result<Vec<SweepCell>, BacktestError> {
    let tape = Tape::new(universe)?;
    // Bad ranges fail before the expensive preparation.
    let days = tape.in_range(grid.start, grid.end)?;
    let screened = screen_days(universe, grid, &days, cancel, &|done, total| {
        progress(SweepProgress::Signals { done, total })
    })?;
    let cells = grid.cells();
    let total = cells.len();
    let done = AtomicUsize::new(0);
    cells
        .par_iter()
        .map(|&coords| {
            check(cancel)?;
            let args = grid.args(coords);
            let mut source = Replay {
                days: &days,
                screened: &screened,
                triggers: args.triggers,
                gated_days: 0,
            };
            let result = simulate(&tape, &args, &mut source, cancel)?;
            let done = done.fetch_add(1, Ordering::Relaxed) + 1;
            progress(SweepProgress::Combinations { done, total });
            Ok(SweepCell {
                coords,
                result,
                regime_gated_days: source.gated_days,
            })
        })
        .collect()
}

/// The metric that picks the best combination.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepMetric {
    Return,
    Annualized,
    MaxDrawdown,
    #[default]
    Sharpe,
    WinRate,
    ProfitFactor,
}

impl SweepMetric {
    pub fn parse(text: &str) -> Result<Self, SweepError> {
        Ok(
            match text.trim().to_ascii_lowercase().replace('-', "_").as_str() {
                "return" | "total_return" | "total_return_pct" => SweepMetric::Return,
                "annualized" | "annualised" | "annualized_return_pct" => SweepMetric::Annualized,
                "max_drawdown" | "drawdown" | "max_drawdown_pct" => SweepMetric::MaxDrawdown,
                "sharpe" => SweepMetric::Sharpe,
                "win_rate" | "win_rate_pct" => SweepMetric::WinRate,
                "profit_factor" => SweepMetric::ProfitFactor,
                _ => return Err(SweepError::UnknownMetric(text.to_owned())),
            },
        )
    }

    /// The metric's value, when it has one.
    pub fn value(self, m: &Metrics) -> Option<f64> {
        match self {
            SweepMetric::Return => Some(m.total_return_pct),
            SweepMetric::Annualized => Some(m.annualized_return_pct),
            SweepMetric::MaxDrawdown => Some(m.max_drawdown_pct),
            SweepMetric::Sharpe => m.sharpe,
            SweepMetric::WinRate => m.win_rate_pct,
            SweepMetric::ProfitFactor => m.profit_factor,
        }
        .filter(|x| x.is_finite())
    }

    /// Only the drawdown is better lower.
    pub fn higher_is_better(self) -> bool {
        self != SweepMetric::MaxDrawdown
    }
}

/// How the best combination's neighbours do (module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stability {
    /// 0 (the neighbours do as badly as the worst cell) … 1 (as well as the best).
    pub score: f64,
    /// Rows of the neighbours.
    pub neighbours: Vec<usize>,
    /// In the metric's units; a neighbour without a value counts as the grid's worst.
    pub neighbour_mean: f64,
    pub neighbour_worst: f64,
    pub grid_worst: f64,
}

/// The best cell and its stability, from each cell's coordinates and metric value.
pub fn best_and_stability(
    coords: &[Coords],
    values: &[Option<f64>],
    higher_is_better: bool,
) -> (Option<usize>, Option<Stability>) {
    let sign = if higher_is_better { 1.0 } else { -1.0 };
    let good: Vec<Option<f64>> = values.iter().map(|v| v.map(|x| x * sign)).collect();
    let mut best: Option<(usize, f64)> = None;
    for (i, g) in good.iter().enumerate() {
        if let Some(g) = *g
            && best.is_none_or(|(_, b)| g > b)
        {
            best = Some((i, g));
        }
    }
    let Some((b, best_g)) = best else {
        return (None, None);
    };
    let worst = good.iter().flatten().copied().fold(f64::INFINITY, f64::min);
    let neighbours: Vec<usize> = coords
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            let steps: Vec<usize> = (0..AXES).map(|a| c[a].abs_diff(coords[b][a])).collect();
            steps.iter().sum::<usize>() == 1
        })
        .map(|(i, _)| i)
        .collect();
    if neighbours.is_empty() {
        return (Some(b), None);
    }
    let g_of: Vec<f64> = neighbours
        .iter()
        .map(|&i| good[i].unwrap_or(worst))
        .collect();
    let mean = g_of.iter().sum::<f64>() / g_of.len() as f64;
    let lowest = g_of.iter().copied().fold(f64::INFINITY, f64::min);
    let score = if best_g > worst {
        ((mean - worst) / (best_g - worst)).clamp(0.0, 1.0)
    } else {
        1.0
    };
    (
        Some(b),
        Some(Stability {
            score,
            neighbours,
            neighbour_mean: mean * sign,
            neighbour_worst: lowest * sign,
            grid_worst: worst * sign,
        }),
    )
}

/// One row of the sweep's table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    pub hold_days: usize,
    pub stop_loss_pct: f64,
    pub take_profit_pct: f64,
    pub top_n: usize,
    pub entry_price_mode: EntryMode,
    pub triggers: TriggerSet,
    pub metrics: Metrics,
    pub signal_days: usize,
    pub regime_gated_days: usize,
    /// Picks not bought, by reason (with risk sizing: the account limits that held them
    /// back, and buys the risk budget could not pay a lot for).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub skipped_entries: std::collections::BTreeMap<String, usize>,
}

/// The sweep's report: a row per combination (grid order), the best by a metric and its
/// stability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename = "sweep")]
pub struct SweepReport {
    pub grid: SweepGrid,
    /// The axes with more than one value.
    pub swept: Vec<Param>,
    pub combinations: usize,
    pub first_day: u32,
    pub last_day: u32,
    pub trading_days: usize,
    pub best_by: SweepMetric,
    pub rows: Vec<SweepRow>,
    /// Row of the best combination; `None` when no cell has a value of the metric.
    pub best: Option<usize>,
    pub stability: Option<Stability>,
    pub benchmark: BenchmarkReturn,
    /// The period's point-in-time fallbacks (the same for every combination: one range,
    /// one board) and their data-note lines.
    #[serde(default)]
    pub as_of_notes: AsOfNotes,
    #[serde(default)]
    pub notes: Vec<String>,
}

impl SweepReport {
    pub fn new(grid: &SweepGrid, cells: &[SweepCell], best_by: SweepMetric) -> Self {
        let coords: Vec<Coords> = cells.iter().map(|c| c.coords).collect();
        let values: Vec<Option<f64>> = cells
            .iter()
            .map(|c| best_by.value(&c.result.metrics))
            .collect();
        let (best, stability) = best_and_stability(&coords, &values, best_by.higher_is_better());
        let first = cells.first().map(|c| &c.result);
        let as_of_notes = first.map(|r| r.as_of_notes.clone()).unwrap_or_default();
        SweepReport {
            grid: grid.clone(),
            swept: grid.swept(),
            combinations: cells.len(),
            first_day: first.map_or(grid.start, |r| r.first_day),
            last_day: first.map_or(grid.end, |r| r.last_day),
            trading_days: first.map_or(0, |r| r.trading_days),
            best_by,
            rows: cells
                .iter()
                .map(|c| {
                    let a = &c.result.args;
                    SweepRow {
                        hold_days: a.hold_days,
                        stop_loss_pct: a.stop_loss_pct,
                        take_profit_pct: a.take_profit_pct,
                        top_n: a.top_n,
                        entry_price_mode: a.entry_price_mode,
                        triggers: a.triggers,
                        metrics: c.result.metrics.clone(),
                        signal_days: c.result.signal_days,
                        regime_gated_days: c.regime_gated_days,
                        skipped_entries: if grid.sizing.is_equal_slots() {
                            Default::default()
                        } else {
                            c.result.skipped_entries.clone()
                        },
                    }
                })
                .collect(),
            best,
            stability,
            benchmark: first.map_or_else(
                || BenchmarkReturn {
                    code: String::new(),
                    return_pct: None,
                    note: None,
                },
                |r| r.benchmark.clone(),
            ),
            notes: super::grid_sizing_notes(&grid.sizing)
                .into_iter()
                .chain(as_of_notes.lines())
                .collect(),
            as_of_notes,
        }
    }
}

#[cfg(test)]
mod tests;
