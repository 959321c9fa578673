//! Walk-forward: rolling in-sample / out-of-sample windows over a sweep grid.
//! In each window every combination of the grid runs over the in-sample days, the best by
//! the chosen [`SweepMetric`] is picked, and that one combination runs over the following
//! out-of-sample days. The report lists every window's choice beside its out-of-sample
//! result, chains the out-of-sample runs into one equity curve (and the chosen in-sample
//! runs into another), and says plainly whether out-of-sample held up.
//!
//! Windows are counted in trading days of the grid's [start, end]: window k's in-sample is
//! days `[k·step, k·step + in_sample)`, its out-of-sample the next `out_of_sample` days, cut
//! short at the end of the period (the last window may be partial; a window needs at least
//! one out-of-sample day). `step` defaults to `out_of_sample` and may not be smaller (the
//! out-of-sample runs would overlap and could not be chained); a larger step leaves gaps.
//!
//! As the sweep, the funnel is prepared once and every day of the period screened once;
//! each window replays those screens. The in-sample choice never reads a bar after the
//! in-sample end: the screens only read bars known at their day, and the in-sample runs
//! stop at their last day (what limit-downs still held is valued at that close, not sold
//! later) — tested by perturbing every later bar.
//!
//! Each window's runs start from the initial cash with nothing held; the chained curves
//! compound them (window k's segment starts where window k−1's ended). In-sample windows
//! overlap when `step < in_sample`, so the chained in-sample curve's dates repeat across
//! windows: each point carries its window.

use serde::{Deserialize, Serialize};

use super::sweep::{Replay, SweepGrid, SweepMetric, best_and_stability, screen_days};
use super::{
    BacktestError, EntryMode, INITIAL_CASH, Metrics, ScreenedDay, TRADING_DAYS_PER_YEAR, Tape,
    TriggerSet, fen, simulate, simulate_seeing,
};
use crate::Universe;
use crate::as_of::AsOfNotes;
use crate::cancel::{Cancel, check};

/// The most windows one walk-forward runs.
pub const MAX_WINDOWS: usize = 200;

#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum WalkForwardError {
    #[error("walk-forward 参数无效: '{0}'，应写成 IS,OOS[,STEP]（交易日数，如 250,60,60）")]
    BadSpec(String),
    #[error("walk-forward 的{what}必须至少 1 个交易日")]
    Zero { what: &'static str },
    #[error("walk-forward 的步长 {step} 小于样本外长度 {out_of_sample}：样本外窗口会重叠")]
    StepBelowOutOfSample { step: usize, out_of_sample: usize },
    #[error(
        "区间只有 {days} 个交易日，walk-forward 至少需要 {needed} 个（样本内 {in_sample} + 样本外 {out_of_sample}）：提前 start 或缩短窗口"
    )]
    TooShort {
        days: usize,
        needed: usize,
        in_sample: usize,
        out_of_sample: usize,
    },
    #[error("walk-forward 共 {count} 个窗口，超过上限 {max}：加大步长或缩短区间")]
    TooManyWindows { count: usize, max: usize },
    #[error("{0}")]
    Backtest(#[from] BacktestError),
}

/// Window lengths in trading days.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WalkForwardSpec {
    pub in_sample: usize,
    pub out_of_sample: usize,
    pub step: usize,
}

impl WalkForwardSpec {
    /// `IS,OOS[,STEP]`; STEP defaults to OOS. Lengths are checked by [`windows`].
    pub fn parse(text: &str) -> Result<Self, WalkForwardError> {
        let bad = || WalkForwardError::BadSpec(text.to_owned());
        let parts: Vec<usize> = text
            .split(',')
            .map(|p| p.trim().parse::<usize>().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        match parts[..] {
            [in_sample, out_of_sample] => Ok(Self {
                in_sample,
                out_of_sample,
                step: out_of_sample,
            }),
            [in_sample, out_of_sample, step] => Ok(Self {
                in_sample,
                out_of_sample,
                step,
            }),
            _ => Err(bad()),
        }
    }
}

impl WalkForwardSpec {
    /// The lengths and step alone (the period's length is checked by [`windows`]).
    pub fn check(self) -> Result<(), WalkForwardError> {
        if self.in_sample == 0 {
            return Err(WalkForwardError::Zero {
                what: "样本内长度"
            });
        }
        if self.out_of_sample == 0 {
            return Err(WalkForwardError::Zero {
                what: "样本外长度"
            });
        }
        if self.step < self.out_of_sample {
            return Err(WalkForwardError::StepBelowOutOfSample {
                step: self.step,
                out_of_sample: self.out_of_sample,
            });
        }
        Ok(())
    }
}

/// One window as positions in the period's trading days (ends exclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowSpan {
    pub in_sample: (usize, usize),
    pub out_of_sample: (usize, usize),
    /// Fewer out-of-sample days than asked: the period ended.
    pub partial: bool,
}

/// The windows over `days` trading days (module doc), or why there are none.
pub fn windows(days: usize, spec: WalkForwardSpec) -> Result<Vec<WindowSpan>, WalkForwardError> {
    spec.check()?;
    let needed = spec.in_sample + spec.out_of_sample;
    if days < needed {
        return Err(WalkForwardError::TooShort {
            days,
            needed,
            in_sample: spec.in_sample,
            out_of_sample: spec.out_of_sample,
        });
    }
    // Windows start at 0, step, 2·step, … while an out-of-sample day is left.
    let count = (days - spec.in_sample - 1) / spec.step + 1;
    if count > MAX_WINDOWS {
        return Err(WalkForwardError::TooManyWindows {
            count,
            max: MAX_WINDOWS,
        });
    }
    Ok((0..count)
        .map(|k| {
            let is_start = k * spec.step;
            let is_end = is_start + spec.in_sample;
            let oos_end = (is_end + spec.out_of_sample).min(days);
            WindowSpan {
                in_sample: (is_start, is_end),
                out_of_sample: (is_end, oos_end),
                partial: oos_end - is_end < spec.out_of_sample,
            }
        })
        .collect())
}

/// How far a walk-forward is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum WalkForwardProgress {
    /// Trading days screened (once each, shared by every window and combination).
    Signals { done: usize, total: usize },
    /// Window `index` (1-based) of `total` started.
    Window { index: usize, total: usize },
}

/// A combination's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Combination {
    pub hold_days: usize,
    pub stop_loss_pct: f64,
    pub take_profit_pct: f64,
    pub top_n: usize,
    pub entry_price_mode: EntryMode,
    pub triggers: TriggerSet,
}

/// One window of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowReport {
    /// 1-based.
    pub index: usize,
    pub in_sample_start: u32,
    pub in_sample_end: u32,
    pub out_of_sample_start: u32,
    pub out_of_sample_end: u32,
    pub out_of_sample_days: usize,
    pub partial: bool,
    /// The in-sample best; `None` when no combination had a value of the metric (nothing
    /// then runs out of sample and the chained curve stays flat over the window).
    pub chosen: Option<Combination>,
    /// Row of the choice in the grid's order.
    pub chosen_row: Option<usize>,
    /// The choice's value of the metric in sample.
    pub in_sample_metric: Option<f64>,
    /// The choice's in-sample stability (the sweep's score, 0–1).
    pub in_sample_stability: Option<f64>,
    pub in_sample: Option<Metrics>,
    pub out_of_sample: Option<Metrics>,
    /// Out-of-sample picks not bought, by reason (risk sizing only: the account limits
    /// that held them back, buys the risk budget could not pay a lot for).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub out_of_sample_skipped: std::collections::BTreeMap<String, usize>,
}

/// A point of a chained curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ChainedPoint {
    pub date: u32,
    pub equity: f64,
    /// 1-based window the point comes from.
    pub window: usize,
}

/// The plain verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Windows that ran out of sample (had a choice).
    pub windows_run: usize,
    /// Windows where no combination had a value of the metric in sample (not run).
    pub windows_without_choice: usize,
    /// Of those, windows whose out-of-sample return was above zero.
    pub positive_windows: usize,
    /// The chained out-of-sample return and its annualised rate.
    pub out_of_sample_return_pct: f64,
    pub out_of_sample_annualized_pct: f64,
    /// The mean annualised in-sample return of the choices (what the optimiser saw).
    pub in_sample_annualized_pct: Option<f64>,
    /// Out-of-sample annualised / in-sample annualised, when in-sample was positive.
    pub efficiency: Option<f64>,
    /// Fewer than half the windows positive, or out-of-sample annualised below half of
    /// in-sample.
    pub falls_apart: bool,
    pub text: String,
}

/// The verdict from each run window's out-of-sample return, the count of windows without
/// a choice, the chained out-of-sample figures and the choices' in-sample annualised
/// returns. Pure.
pub fn verdict(
    out_of_sample_returns: &[f64],
    without_choice: usize,
    chained_return_pct: f64,
    chained_annualized_pct: f64,
    in_sample_annualized: &[f64],
) -> Verdict {
    let n = out_of_sample_returns.len();
    let positive = out_of_sample_returns.iter().filter(|r| **r > 0.0).count();
    let is_ann = (!in_sample_annualized.is_empty())
        .then(|| in_sample_annualized.iter().sum::<f64>() / in_sample_annualized.len() as f64);
    let efficiency = is_ann
        .filter(|x| *x > 0.0)
        .map(|x| chained_annualized_pct / x);
    let few_positive = n > 0 && positive * 2 < n;
    let far_below = efficiency.is_some_and(|e| e < 0.5);
    let falls_apart = few_positive || far_below;
    let text = if n == 0 {
        "没有任何窗口选出参数组合（样本内各组合都没有该指标的值），无法做样本外检验".to_owned()
    } else {
        let is_txt = is_ann.map_or_else(|| "--".to_owned(), |x| format!("{x:.1}%"));
        let mut parts = Vec::new();
        if few_positive {
            parts.push(format!("walk-forward 仅 {positive}/{n} 个测试窗口为正"));
        } else {
            parts.push(format!("walk-forward {positive}/{n} 个测试窗口为正"));
        }
        if far_below {
            parts.push(format!(
                "样本外年化 {chained_annualized_pct:.1}% 远低于样本内 {is_txt}"
            ));
        } else {
            parts.push(format!(
                "样本外年化 {chained_annualized_pct:.1}%，样本内 {is_txt}"
            ));
        }
        let head = if falls_apart {
            "样本外失效：样本内最优的参数到了样本外站不住，疑似过拟合"
        } else {
            "样本外大体成立"
        };
        let skipped = if without_choice > 0 {
            format!("；另有 {without_choice} 个窗口样本内没有可选组合，未做样本外检验")
        } else {
            String::new()
        };
        format!(
            "{head}。{}（样本外累计 {chained_return_pct:.1}%）{skipped}",
            parts.join("；")
        )
    };
    Verdict {
        windows_run: n,
        windows_without_choice: without_choice,
        positive_windows: positive,
        out_of_sample_return_pct: chained_return_pct,
        out_of_sample_annualized_pct: chained_annualized_pct,
        in_sample_annualized_pct: is_ann,
        efficiency,
        falls_apart,
        text,
    }
}

/// The walk-forward's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename = "walk_forward")]
pub struct WalkForwardReport {
    pub grid: SweepGrid,
    pub spec: WalkForwardSpec,
    pub best_by: SweepMetric,
    pub combinations: usize,
    pub first_day: u32,
    pub last_day: u32,
    pub trading_days: usize,
    pub windows: Vec<WindowReport>,
    pub out_of_sample_curve: Vec<ChainedPoint>,
    pub in_sample_curve: Vec<ChainedPoint>,
    pub verdict: Verdict,
    /// The whole period's point-in-time fallbacks and their data-note lines.
    #[serde(default)]
    pub as_of_notes: AsOfNotes,
    #[serde(default)]
    pub notes: Vec<String>,
}

fn annualized(total_pct: f64, days: usize) -> f64 {
    ((1.0 + total_pct / 100.0).powf(TRADING_DAYS_PER_YEAR / days.max(1) as f64) - 1.0) * 100.0
}

/// Appends `curve` to `chain`, scaled so it starts where the chain ended.
fn chain_onto(
    chain: &mut Vec<ChainedPoint>,
    curve: impl Iterator<Item = (u32, f64)>,
    window: usize,
) {
    let scale = chain.last().map_or(1.0, |p| p.equity / INITIAL_CASH);
    chain.extend(curve.map(|(date, equity)| ChainedPoint {
        date,
        // To the fen, as every curve of the backtest.
        equity: fen(equity * scale),
        window,
    }));
}

/// The combination of `grid`'s cell `coords`.
fn combination(grid: &SweepGrid, coords: super::sweep::Coords) -> Combination {
    let a = grid.args(coords);
    Combination {
        hold_days: a.hold_days,
        stop_loss_pct: a.stop_loss_pct,
        take_profit_pct: a.take_profit_pct,
        top_n: a.top_n,
        entry_price_mode: a.entry_price_mode,
        triggers: a.triggers,
    }
}

/// Runs the walk-forward of `grid` over `universe` (module doc). `cancel` is asked between
/// days, combinations and windows.
pub fn run_walk_forward(
    universe: &Universe,
    grid: &SweepGrid,
    spec: WalkForwardSpec,
    best_by: SweepMetric,
    cancel: &dyn Cancel,
    progress: &(dyn Fn(WalkForwardProgress) + Sync),
) -> Result<WalkForwardReport, WalkForwardError> {
    use rayon::prelude::*;

    let tape = Tape::new(universe)?;
    let days = tape.in_range(grid.start, grid.end)?;
    // Bad windows fail before the expensive preparation.
    let spans = windows(days.len(), spec)?;
    let screened: Vec<Option<ScreenedDay>> =
        screen_days(universe, grid, &days, cancel, &|done, total| {
            progress(WalkForwardProgress::Signals { done, total })
        })?;
    let cells = grid.cells();
    let total = spans.len();
    let mut reports = Vec::with_capacity(total);
    let mut oos_chain: Vec<ChainedPoint> = Vec::new();
    let mut is_chain: Vec<ChainedPoint> = Vec::new();
    let mut oos_returns = Vec::new();
    let mut is_annualized = Vec::new();
    for (k, span) in spans.iter().enumerate() {
        check(cancel).map_err(BacktestError::from)?;
        let index = k + 1;
        progress(WalkForwardProgress::Window { index, total });
        let (is_first, is_last) = (days[span.in_sample.0], days[span.in_sample.1 - 1]);
        let (oos_first, oos_last) = (days[span.out_of_sample.0], days[span.out_of_sample.1 - 1]);
        // Every combination in sample, blind to every bar after `is_last`.
        let in_sample: Vec<_> = cells
            .par_iter()
            .map(|&coords| {
                check(cancel)?;
                let mut args = grid.args(coords);
                (args.start, args.end) = (is_first, is_last);
                let mut source = Replay {
                    days: &days,
                    screened: &screened,
                    triggers: args.triggers,
                    gated_days: 0,
                };
                simulate_seeing(&tape, &args, &mut source, cancel, is_last)
            })
            .collect::<Result<_, BacktestError>>()?;
        let values: Vec<Option<f64>> = in_sample
            .iter()
            .map(|r| best_by.value(&r.metrics))
            .collect();
        let (best, stability) = best_and_stability(&cells, &values, best_by.higher_is_better());
        let mut window = WindowReport {
            index,
            in_sample_start: is_first,
            in_sample_end: is_last,
            out_of_sample_start: oos_first,
            out_of_sample_end: oos_last,
            out_of_sample_days: span.out_of_sample.1 - span.out_of_sample.0,
            partial: span.partial,
            chosen: None,
            chosen_row: best,
            in_sample_metric: best.and_then(|b| values[b]),
            in_sample_stability: stability.map(|s| s.score),
            in_sample: None,
            out_of_sample: None,
            out_of_sample_skipped: Default::default(),
        };
        let Some(b) = best else {
            // Nothing chosen: no trade, the chain stays flat over the window.
            let flat = oos_chain.last().map_or(INITIAL_CASH, |p| p.equity);
            oos_chain.extend(days[span.out_of_sample.0..span.out_of_sample.1].iter().map(
                |&date| ChainedPoint {
                    date,
                    equity: flat,
                    window: index,
                },
            ));
            reports.push(window);
            continue;
        };
        let chosen_is = &in_sample[b];
        let mut args = grid.args(cells[b]);
        (args.start, args.end) = (oos_first, oos_last);
        let mut source = Replay {
            days: &days,
            screened: &screened,
            triggers: args.triggers,
            gated_days: 0,
        };
        let oos = simulate(&tape, &args, &mut source, cancel)?;
        chain_onto(
            &mut is_chain,
            chosen_is.equity_curve.iter().map(|p| (p.date, p.equity)),
            index,
        );
        chain_onto(
            &mut oos_chain,
            oos.equity_curve.iter().map(|p| (p.date, p.equity)),
            index,
        );
        oos_returns.push(oos.metrics.total_return_pct);
        is_annualized.push(chosen_is.metrics.annualized_return_pct);
        window.chosen = Some(combination(grid, cells[b]));
        window.in_sample = Some(chosen_is.metrics.clone());
        if !grid.sizing.is_equal_slots() {
            window.out_of_sample_skipped = oos.skipped_entries;
        }
        window.out_of_sample = Some(oos.metrics);
        reports.push(window);
    }
    let chained_return = oos_chain
        .last()
        .map_or(0.0, |p| (p.equity / INITIAL_CASH - 1.0) * 100.0);
    let verdict = verdict(
        &oos_returns,
        reports.len() - oos_returns.len(),
        chained_return,
        annualized(chained_return, oos_chain.len()),
        &is_annualized,
    );
    let as_of_notes = tape.as_of_notes(grid.board, days[0], days[days.len() - 1]);
    Ok(WalkForwardReport {
        notes: super::grid_sizing_notes(&grid.sizing)
            .into_iter()
            .chain(as_of_notes.lines())
            .collect(),
        as_of_notes,
        grid: grid.clone(),
        spec,
        best_by,
        combinations: cells.len(),
        first_day: days[0],
        last_day: days[days.len() - 1],
        trading_days: days.len(),
        windows: reports,
        out_of_sample_curve: oos_chain,
        in_sample_curve: is_chain,
        verdict,
    })
}

#[cfg(test)]
mod tests;
