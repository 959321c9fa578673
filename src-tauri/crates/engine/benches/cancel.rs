//! Cancel latency: how long a full-market backtest's thread runs on after
//! its caller cancels. The synthetic 5,640-stock market with 1,000 bars and a 750-day
//! funnel backtest (the `backtest` bench's run) is started on a thread as the
//! `run_backtest` tool does; after a seeded random delay — inside the preparation (the
//! funnel's checks and per-bar features, seconds) or the day loop — the flag is set, and
//! the time until the thread has returned is the latency. A one-off whole-market screen
//! (`screen_stocks`: light preparation and one screen) is cancelled the same way. A plain
//! bench binary: it prints every figure, the median and the max.
#![allow(clippy::expect_used, clippy::unwrap_used)]
#![allow(clippy::print_stderr)] // a bench binary reports what it measured

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use wyckoff_engine::backtest::{
    BacktestArgs, BacktestError, FunnelSignals, RawBacktestArgs, SignalSource,
    run_backtest_cancellable,
};
use wyckoff_engine::synthetic::{MarketShape, Rng, market};
use wyckoff_engine::{BoardFilter, Funnel, FunnelConfig, FunnelError, ScreenArgs, Universe};

const BACKTEST_DAYS: usize = 750;
const BACKTEST_CANCELS: usize = 10;
const SCREEN_CANCELS: usize = 10;

/// Counts the days screened, so each figure says where the cancel landed.
struct Counted<'u>(FunnelSignals<'u>, &'u AtomicUsize);

impl SignalSource for Counted<'_> {
    fn picks(&mut self, day: u32) -> Vec<String> {
        self.1.fetch_add(1, Ordering::Relaxed);
        self.0.picks(day)
    }
}

fn backtest(
    universe: &Universe,
    args: &BacktestArgs,
    cancel: &AtomicBool,
    screened: &AtomicUsize,
) -> bool {
    let r = FunnelSignals::cancellable(universe, BoardFilter::All, cancel)
        .map_err(BacktestError::from)
        .and_then(|signals| {
            run_backtest_cancellable(universe, args, &mut Counted(signals, screened), cancel)
        });
    matches!(r, Err(BacktestError::Cancelled))
}

fn screen(universe: &Universe, cancel: &AtomicBool) -> bool {
    let r = Funnel::prepare_cancellable(universe, &FunnelConfig::default(), cancel)
        .map_err(FunnelError::from)
        .and_then(|f| f.screen_cancellable(&ScreenArgs::default(), cancel));
    matches!(r, Err(FunnelError::Cancelled))
}

/// Runs `work` on its own thread, cancels it after `delay`, and returns the time from the
/// cancel to the thread's return, and whether it ended cancelled.
fn cancel_after<F>(delay: Duration, work: F) -> (Duration, bool)
where
    F: FnOnce(&AtomicBool) -> bool + Send + 'static,
{
    let flag = Arc::new(AtomicBool::new(false));
    let worker_flag = flag.clone();
    let worker = std::thread::spawn(move || work(&worker_flag));
    std::thread::sleep(delay);
    let cancelled_at = Instant::now();
    flag.store(true, Ordering::Relaxed);
    let cancelled = worker.join().unwrap();
    (cancelled_at.elapsed(), cancelled)
}

fn summary(what: &str, mut latencies: Vec<Duration>) {
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    eprintln!(
        "{what}: median {:.1} ms, max {:.1} ms over {} cancels",
        ms(latencies[latencies.len() / 2]),
        ms(latencies[latencies.len() - 1]),
        latencies.len()
    );
}

fn main() {
    let shape = MarketShape {
        bars: 1_000,
        ..MarketShape::full_market()
    };
    let universe = Arc::new(market(shape));
    let days: Vec<u32> = universe.stocks[0].bars.iter().map(|b| b.date).collect();
    let args = Arc::new(BacktestArgs {
        start: days[days.len() - BACKTEST_DAYS],
        end: days[days.len() - 1],
        ..BacktestArgs::parse(&RawBacktestArgs::default(), days[days.len() - 1]).unwrap()
    });
    eprintln!(
        "market: {} stocks x {} bars; backtest of {BACKTEST_DAYS} days",
        universe.stocks.len(),
        shape.bars
    );

    // How long an uncancelled run takes, to spread the cancels over it.
    let t = Instant::now();
    let screened = AtomicUsize::new(0);
    assert!(!backtest(
        &universe,
        &args,
        &AtomicBool::new(false),
        &screened
    ));
    let full = t.elapsed();
    eprintln!(
        "uncancelled backtest: {full:.2?} ({} days screened)",
        screened.load(Ordering::Relaxed)
    );

    let mut rng = Rng::new(29);
    let mut latencies = Vec::new();
    for _ in 0..BACKTEST_CANCELS {
        let delay = full.mul_f64(0.9 * rng.unit());
        let (u, a) = (universe.clone(), args.clone());
        let screened = Arc::new(AtomicUsize::new(0));
        let seen = screened.clone();
        let (latency, cancelled) =
            cancel_after(delay, move |cancel| backtest(&u, &a, cancel, &seen));
        assert!(cancelled, "cancelled after {delay:.2?}, yet it finished");
        let at = match screened.load(Ordering::Relaxed) {
            0 => "preparing".to_owned(),
            n => format!("after {n} screened days"),
        };
        eprintln!("  backtest cancelled at {delay:.2?} ({at}): thread returned in {latency:.2?}");
        latencies.push(latency);
    }
    summary("backtest cancel latency", latencies);

    let t = Instant::now();
    assert!(!screen(&universe, &AtomicBool::new(false)));
    let full = t.elapsed();
    eprintln!("uncancelled whole-market screen: {full:.2?}");
    let mut latencies = Vec::new();
    for _ in 0..SCREEN_CANCELS {
        let delay = full.mul_f64(0.9 * rng.unit());
        let u = universe.clone();
        let (latency, cancelled) = cancel_after(delay, move |cancel| screen(&u, cancel));
        eprintln!(
            "  screen cancelled at {delay:.2?}: thread returned in {latency:.2?}{}",
            if cancelled { "" } else { " (had finished)" }
        );
        latencies.push(latency);
    }
    summary("screen cancel latency", latencies);
}
