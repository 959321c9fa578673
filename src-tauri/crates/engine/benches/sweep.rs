//! Sweep bench: 100 combinations (hold 5/10/15/20/30 × take-profit 0/10/20/30/50
//! × stop −5/−8 × top 2/4) over the last 750 trading days (three years) of the synthetic
//! 5,640-stock market with 1,000 bars, beside one single funnel backtest in the same run.
//! The target: the sweep costs far less than 100 single runs. A plain bench binary (one run
//! takes seconds; criterion's sampling would only repeat it); it prints what it measured,
//! and checks that the sweep's cell with the single run's parameters is that run.
#![allow(clippy::expect_used, clippy::unwrap_used)]
#![allow(clippy::print_stderr)] // a bench binary reports what it measured

use std::time::Instant;

use wyckoff_engine::backtest::sweep::{
    RawSweepArgs, SweepGrid, SweepMetric, SweepProgress, SweepReport, run_sweep,
};
use wyckoff_engine::backtest::{BacktestArgs, FunnelSignals, RawBacktestArgs, run_backtest};
use wyckoff_engine::synthetic::{MarketShape, market};
use wyckoff_engine::{BoardFilter, Never};

const BACKTEST_DAYS: usize = 750;

fn main() {
    let shape = MarketShape {
        bars: 1_000,
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
    let today = days[days.len() - 1];

    // One single run: §14.11 defaults (hold 10, top 4, stop −8 %, open entry).
    let single_args = BacktestArgs::parse(
        &RawBacktestArgs {
            start: Some(&start),
            end: Some(&end),
            ..RawBacktestArgs::default()
        },
        today,
    )
    .unwrap();
    let t = Instant::now();
    let mut signals = FunnelSignals::new(&universe, BoardFilter::All);
    let prepared = t.elapsed();
    let single = run_backtest(&universe, &single_args, &mut signals).unwrap();
    let single_time = t.elapsed();
    eprintln!(
        "single run: {single_time:.2?} (prepare {prepared:.2?}) | {} days, {} signal days, {} trades, return {:.2} %",
        single.trading_days,
        single.signal_days,
        single.trades.len(),
        single.metrics.total_return_pct
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
        today,
    )
    .unwrap();
    assert_eq!(grid.len(), 100);
    let t = Instant::now();
    let screens_done = std::sync::Mutex::new(None);
    let cells = run_sweep(&universe, &grid, &Never, &|p| {
        if let SweepProgress::Signals { done, total } = p
            && done == total
        {
            *screens_done.lock().unwrap() = Some(t.elapsed());
        }
    })
    .unwrap();
    let sweep_time = t.elapsed();
    let screens = screens_done.into_inner().unwrap().unwrap_or_default();
    let report = SweepReport::new(&grid, &cells, SweepMetric::Sharpe);
    let same = cells
        .iter()
        .find(|c| c.result.args == single_args)
        .map(|c| c.result == single);
    eprintln!(
        "sweep: {} combinations in {sweep_time:.2?} (preparation and {} daily screens {screens:.2?}, simulations {:.2?}) | {:.2} s a combination",
        cells.len(),
        single.trading_days,
        sweep_time - screens,
        sweep_time.as_secs_f64() / cells.len() as f64
    );
    eprintln!(
        "sweep / single = {:.1}x (100 single runs would be ~{:.0} s); the cell with the single run's parameters equals it: {:?}",
        sweep_time.as_secs_f64() / single_time.as_secs_f64(),
        100.0 * single_time.as_secs_f64(),
        same
    );
    if let (Some(b), Some(s)) = (report.best, &report.stability) {
        let row = &report.rows[b];
        eprintln!(
            "best by Sharpe: hold {} take {} stop {} top {} — Sharpe {:?}, return {:.2} %; stability {:.2} over {} neighbours",
            row.hold_days,
            row.take_profit_pct,
            row.stop_loss_pct,
            row.top_n,
            row.metrics.sharpe,
            row.metrics.total_return_pct,
            s.score,
            s.neighbours.len()
        );
    }
}
