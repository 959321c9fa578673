//! Cancellation: the long loops ask their caller's [`Cancel`] between
//! units of work — each simulated day, each funnel layer, each chunk of stocks — and stop at
//! the first yes: no further question is asked, no further work is done, and the outcome is
//! `Cancelled`, never a partial result.
#![allow(clippy::expect_used, clippy::unwrap_used)] // test helpers outside #[test] fns

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};

use common::real_universe;
use wyckoff_engine::backtest::{
    BacktestArgs, BacktestError, FunnelSignals, RawBacktestArgs, SignalSource, run_backtest,
    run_backtest_cancellable,
};
use wyckoff_engine::{
    BoardFilter, Cancel, Cancelled, Funnel, FunnelConfig, FunnelError, ScreenArgs, StockSeries,
    Universe,
};

/// Says yes from its `flip_at`-th question on, and counts the questions.
struct FlipAt {
    flip_at: usize,
    asked: AtomicUsize,
}

impl FlipAt {
    fn new(flip_at: usize) -> Self {
        FlipAt {
            flip_at,
            asked: AtomicUsize::new(0),
        }
    }

    fn never() -> Self {
        Self::new(usize::MAX)
    }

    fn asked(&self) -> usize {
        self.asked.load(Ordering::SeqCst)
    }
}

impl Cancel for FlipAt {
    fn is_cancelled(&self) -> bool {
        self.asked.fetch_add(1, Ordering::SeqCst) + 1 >= self.flip_at
    }
}

/// The real stocks' last 120 bars copied under new codes until there are `n` (several
/// chunks of stocks, quick to prepare).
fn wide_universe(n: usize) -> Universe {
    let real = real_universe();
    let stocks: Vec<StockSeries> = (0..n)
        .map(|i| {
            let mut s = real.stocks[i % real.stocks.len()].clone();
            s.code = format!("{:06}", 600_000 + i);
            s.bars.drain(..s.bars.len().saturating_sub(120));
            s
        })
        .collect();
    Universe {
        stocks,
        benchmarks: real.benchmarks.clone(),
        trading_days: None,
    }
}

#[test]
fn a_screen_stops_at_the_first_layer_check_that_says_cancel() {
    let u = real_universe();
    let f = Funnel::prepare(&u, &FunnelConfig::default());
    let args = ScreenArgs::default();
    let full = f.screen(&args).unwrap();
    let never = FlipAt::never();
    assert_eq!(f.screen_cancellable(&args, &never).unwrap(), full);
    let checks = never.asked();
    assert!(checks >= 7, "a check before every layer, got {checks}");
    for k in 1..=checks {
        let cancel = FlipAt::new(k);
        assert_eq!(
            f.screen_cancellable(&args, &cancel),
            Err(FunnelError::Cancelled),
            "cancel at check {k}"
        );
        assert_eq!(cancel.asked(), k, "nothing after check {k} asked again");
    }
}

#[test]
fn preparing_stops_at_the_next_chunk_of_stocks() {
    let u = wide_universe(3 * 256);
    let cfg = FunnelConfig::default();
    let never = FlipAt::never();
    let prepared = Funnel::prepare_cancellable(&u, &cfg, &never)
        .unwrap()
        .with_daily_features_cancellable(&never)
        .unwrap();
    let checks = never.asked();
    assert!(checks >= 3 * 3, "three chunks per phase: {checks}");
    // Prepared with checks, it screens as the plain preparation does.
    let plain = Funnel::prepare(&u, &cfg).with_daily_features();
    assert_eq!(
        prepared.screen(&ScreenArgs::default()).unwrap(),
        plain.screen(&ScreenArgs::default()).unwrap()
    );
    for k in 1..=checks {
        let cancel = FlipAt::new(k);
        let r = Funnel::prepare_cancellable(&u, &cfg, &cancel)
            .and_then(|f| f.with_daily_features_cancellable(&cancel));
        assert!(matches!(r, Err(Cancelled)), "cancel at check {k}");
        assert_eq!(cancel.asked(), k, "nothing after check {k} asked again");
    }
}

/// The first codes every day, recording the days it was asked.
struct Recording<'u> {
    universe: &'u Universe,
    days: Vec<u32>,
}

impl SignalSource for Recording<'_> {
    fn picks(&mut self, day: u32) -> Vec<String> {
        self.days.push(day);
        self.universe
            .stocks
            .iter()
            .take(3)
            .map(|s| s.code.clone())
            .collect()
    }
}

fn args(start: &str, end: &str, top_n: i64) -> BacktestArgs {
    let raw = RawBacktestArgs {
        start: Some(start),
        end: Some(end),
        top_n: Some(top_n),
        ..RawBacktestArgs::default()
    };
    BacktestArgs::parse(&raw, 20210101).unwrap()
}

#[test]
fn a_backtest_stops_at_the_next_day() {
    let u = real_universe();
    let a = args("2019-01-01", "2019-12-31", 20);
    let plain = run_backtest(
        &u,
        &a,
        &mut Recording {
            universe: &u,
            days: Vec::new(),
        },
    )
    .unwrap();
    let never = FlipAt::never();
    let mut signals = Recording {
        universe: &u,
        days: Vec::new(),
    };
    assert_eq!(
        run_backtest_cancellable(&u, &a, &mut signals, &never).unwrap(),
        plain
    );
    // One check a day (the period's, then any after it that sell what T+1 or a limit-down
    // held), and one after the last.
    let days: Vec<u32> = plain.equity_curve.iter().map(|p| p.date).collect();
    let walked = never.asked() - 1;
    assert!(walked >= days.len());
    for k in [1, 2, 10, days.len() / 2, days.len(), walked + 1] {
        let cancel = FlipAt::new(k);
        let mut signals = Recording {
            universe: &u,
            days: Vec::new(),
        };
        let r = run_backtest_cancellable(&u, &a, &mut signals, &cancel);
        assert_eq!(r, Err(BacktestError::Cancelled), "cancel at check {k}");
        assert_eq!(cancel.asked(), k, "no day after check {k} asked again");
        // No day from the one whose check said cancel was simulated.
        let asked = &signals.days;
        if let Some(stop_day) = days.get(k - 1) {
            assert!(
                asked.iter().all(|d| d < stop_day),
                "cancel before {stop_day}, yet asked for {asked:?}"
            );
        }
        // Every day before it was (the period's last close has no next open to buy at).
        assert_eq!(asked.len(), (k - 1).min(days.len() - 1));
    }
}

#[test]
fn a_cancel_inside_a_days_screen_ends_the_backtest_at_the_next_day() {
    let u = real_universe();
    let a = args("2019-06-01", "2019-12-31", 20);
    let never = FlipAt::never();
    let mut signals = FunnelSignals::cancellable(&u, BoardFilter::All, &never).unwrap();
    let plain = run_backtest(&u, &a, &mut FunnelSignals::new(&u, BoardFilter::All)).unwrap();
    assert_eq!(
        run_backtest_cancellable(&u, &a, &mut signals, &never).unwrap(),
        plain
    );
    let checks = never.asked();
    // In the preparation, in the first day's screen, its day check, later days, the end.
    for k in [1, 2, 3, 4, 5, 9, 10, checks / 2, checks - 1, checks] {
        let cancel = FlipAt::new(k);
        let r = FunnelSignals::cancellable(&u, BoardFilter::All, &cancel)
            .map_err(BacktestError::from)
            .and_then(|mut s| run_backtest_cancellable(&u, &a, &mut s, &cancel));
        assert_eq!(r, Err(BacktestError::Cancelled), "cancel at check {k}");
        // A screen cut short gives no picks; the day's own check comes next and stops it.
        assert!(
            cancel.asked() <= k + 1,
            "cancel at {k}, asked {}",
            cancel.asked()
        );
    }
}
