//! Walk-forward bench: the sweep bench's 100 combinations (hold 5/10/15/20/30 ×
//! take-profit 0/10/20/30/50 × stop −5/−8 × top 2/4) walked forward 250 / 60 / 60 over the
//! last 750 trading days of the synthetic 5,640-stock market with 1,000 bars (9 windows),
//! beside the plain sweep of the same grid over the same days in the same run. A plain
//! bench binary that prints what it measured. `WF_STOCKS` shrinks the market for a quick look.
#![allow(clippy::expect_used, clippy::unwrap_used)]
#![allow(clippy::print_stderr)] // a bench binary reports what it measured

use std::sync::Mutex;
use std::time::Instant;

use wyckoff_engine::Never;
use wyckoff_engine::backtest::sweep::{RawSweepArgs, SweepGrid, SweepMetric, run_sweep};
use wyckoff_engine::backtest::walk_forward::{
    WalkForwardProgress, WalkForwardSpec, run_walk_forward,
};
use wyckoff_engine::synthetic::{MarketShape, market};

const BACKTEST_DAYS: usize = 750;

fn main() {
    let stocks = std::env::var("WF_STOCKS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(MarketShape::full_market().stocks);
    let shape = MarketShape {
        bars: 1_000,
        stocks,
        ..MarketShape::full_market()
    };
    let t = Instant::now();
    let universe = market(shape);
    eprintln!(
        "market: {} stocks x {} bars, generated in {:.2?}",
        universe.stocks.len(),
        shape.bars,
        t.elapsed()
    );
    let days: Vec<u32> = universe.stocks[0].bars.iter().map(|b| b.date).collect();
    let (start, end) = (
        days[days.len() - BACKTEST_DAYS].to_string(),
        days[days.len() - 1].to_string(),
    );
    let grid = SweepGrid::parse(
        &RawSweepArgs {
            start: Some(&start),
            end: Some(&end),
            hold_days: Some("5,10,15,20,30"),
            take_profit_pct: Some("0..30:10,50"),
            stop_loss_pct: Some("-8,-5"),
            top_n: Some("2,4"),
            ..RawSweepArgs::default()
        },
        days[days.len() - 1],
    )
    .unwrap();
    assert_eq!(grid.len(), 100);

    let t = Instant::now();
    let cells = run_sweep(&universe, &grid, &Never, &|_| {}).unwrap();
    let sweep_time = t.elapsed();
    eprintln!(
        "sweep: {} combinations x {} days in {sweep_time:.2?}",
        cells.len(),
        cells[0].result.trading_days
    );

    let spec = WalkForwardSpec {
        in_sample: 250,
        out_of_sample: 60,
        step: 60,
    };
    let t = Instant::now();
    let screens_done = Mutex::new(None);
    let report = run_walk_forward(&universe, &grid, spec, SweepMetric::Sharpe, &Never, &|p| {
        if let WalkForwardProgress::Signals { done, total } = p
            && done == total
        {
            *screens_done.lock().unwrap() = Some(t.elapsed());
        }
    })
    .unwrap();
    let wf_time = t.elapsed();
    let screens = screens_done.into_inner().unwrap().unwrap_or_default();
    let windows = report.windows.len();
    eprintln!(
        "walk-forward 250/60/60: {windows} windows x {} combinations in sample + 1 out of sample each, in {wf_time:.2?} (preparation and {} daily screens {screens:.2?}, windows {:.2?}, {:.2?} a window)",
        report.combinations,
        report.trading_days,
        wf_time - screens,
        (wf_time - screens) / windows.max(1) as u32,
    );
    eprintln!(
        "walk-forward / sweep = {:.2}x; verdict: {}",
        wf_time.as_secs_f64() / sweep_time.as_secs_f64(),
        report.verdict.text
    );
}
