//! Backtest bench: the synthetic 5,640-stock market with 1,000 bars, a backtest
//! over its last 750 trading days with the funnel deciding every day's picks (target < 20 s
//! on 2 cores). A plain bench binary: one run takes seconds, so criterion's sampling would
//! only repeat it; it prints the figures it measured. The backtest screens only on days
//! with a free slot, so the time depends on how often the book is full; the count of
//! screens is printed (every day screened costs about 750 × the per-screen figure).
#![allow(clippy::expect_used, clippy::unwrap_used)]
#![allow(clippy::print_stderr)] // a bench binary reports what it measured

use std::time::Instant;

use wyckoff_engine::backtest::{
    BacktestArgs, FunnelSignals, RawBacktestArgs, SignalSource, run_backtest,
};
use wyckoff_engine::synthetic::{MarketShape, market};
use wyckoff_engine::{BoardFilter, Universe};

const BACKTEST_DAYS: usize = 750;

/// The cheapest possible signal: the first four codes every day (measures the simulation).
struct FirstCodes<'u>(&'u Universe);

impl SignalSource for FirstCodes<'_> {
    fn picks(&mut self, _day: u32) -> Vec<String> {
        self.0
            .stocks
            .iter()
            .take(4)
            .map(|s| s.code.clone())
            .collect()
    }
}

/// Counts how often the backtest asks for a screen (it asks only when a slot is free).
struct Counted<S>(S, usize);

impl<S: SignalSource> SignalSource for Counted<S> {
    fn picks(&mut self, day: u32) -> Vec<String> {
        self.1 += 1;
        self.0.picks(day)
    }
}

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
    let args = BacktestArgs {
        start: days[days.len() - BACKTEST_DAYS],
        end: days[days.len() - 1],
        // §14.11 defaults for everything else (hold 10, top 4, stop −8 %, open entry).
        ..BacktestArgs::parse(&RawBacktestArgs::default(), days[days.len() - 1]).unwrap()
    };

    let t = Instant::now();
    let r = run_backtest(&universe, &args, &mut FirstCodes(&universe)).unwrap();
    eprintln!(
        "simulation only (fixed picks): {} days, {} trades in {:.2?}",
        r.trading_days,
        r.trades.len(),
        t.elapsed()
    );

    let t = Instant::now();
    let mut signals = Counted(FunnelSignals::new(&universe, BoardFilter::All), 0);
    let prepared = t.elapsed();
    let r = run_backtest(&universe, &args, &mut signals).unwrap();
    let screens = signals.1;
    let total = t.elapsed();
    eprintln!(
        "funnel backtest: prepare {prepared:.2?}, total {total:.2?} ({screens} screens, {:.1} ms each) | {} days, {} signal days, {} trades, total return {:.2} %, max drawdown {:.2} %, regime-gated days {}",
        (total - prepared).as_secs_f64() * 1e3 / screens.max(1) as f64,
        r.trading_days,
        r.signal_days,
        r.trades.len(),
        r.metrics.total_return_pct,
        r.metrics.max_drawdown_pct,
        signals.0.gated_days
    );
}
