//! Full-market storage benchmarks (a bench binary: `cargo bench -p wyckoff-market`).
//!
//! A synthetic 5,640-stock × 500-bar market (wyckoff-engine feature `synthetic`: made-up
//! test data, never shipped) is written as one CSV file per stock, imported through the
//! same path a user's CSV takes, then read back whole into a Universe several times.
//! `WYCKOFF_BENCH_BARS=N` makes each stock's history N bars deep instead.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "../tests/common/synthetic_csv.rs"]
mod synthetic_csv;

use std::time::{Duration, Instant};

use wyckoff_engine::FunnelConfig;
use wyckoff_engine::synthetic::{MarketShape, market};
use wyckoff_market::{MarketConfig, MarketData};

const READS: usize = 7;

fn main() {
    let mut shape = MarketShape::full_market();
    // WYCKOFF_BENCH_BARS: a deeper history (ending no later), as a real home holds years
    if let Some(bars) = std::env::var("WYCKOFF_BENCH_BARS")
        .ok()
        .and_then(|b| b.parse::<usize>().ok())
        .filter(|b| *b > shape.bars)
    {
        let years_earlier = (bars - shape.bars).div_ceil(250) as u32;
        shape.start -= years_earlier * 10_000;
        shape.bars = bars;
    }
    let csv = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // WYCKOFF_BENCH_HOME keeps the imported market for timing the CLI on it (hyperfine)
    let kept = std::env::var_os("WYCKOFF_BENCH_HOME").map(std::path::PathBuf::from);
    let home_path = kept.clone().unwrap_or_else(|| home.path().to_path_buf());
    let t = Instant::now();
    let synthetic = market(shape);
    let written = synthetic_csv::write_market_csv(&synthetic, csv.path()).unwrap();
    drop(synthetic);
    println!(
        "setup: {} stocks × {} bars = {written} bars written as CSV in {:.2?}",
        shape.stocks,
        shape.bars,
        t.elapsed()
    );

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let t = Instant::now();
        let md = MarketData::open_with(MarketConfig::offline(&home_path))
            .await
            .unwrap();
        println!("open a fresh data home: {:.2?}", t.elapsed());
        let t = Instant::now();
        let r = md.import_csv(csv.path(), &mut |_| {}).await.unwrap();
        let import = t.elapsed();
        assert_eq!(r.files_rejected, 0);
        println!(
            "import: {} files, {} stocks, {} bars in {import:.2?} ({:.0} bars/s)",
            r.files,
            r.stocks,
            r.bars,
            r.bars as f64 / import.as_secs_f64()
        );

        let mut times: Vec<Duration> = Vec::with_capacity(READS);
        let mut stocks = 0;
        let mut bars = 0;
        for _ in 0..READS {
            let t = Instant::now();
            let u = md.load_universe(None).await.unwrap();
            times.push(t.elapsed());
            stocks = u.report.stocks;
            bars = u.report.bars;
            assert!(u.report.skipped.is_empty());
        }
        times.sort();
        println!(
            "load_universe: {stocks} stocks, {bars} bars: min {:.2?}, median {:.2?}, max {:.2?} over {READS} reads",
            times[0],
            times[READS / 2],
            times[READS - 1]
        );
        // a one-day screen's read: each stock's last bars only
        let screen_bars = FunnelConfig::default().screen_bars();
        let mut times: Vec<Duration> = Vec::with_capacity(READS);
        for _ in 0..READS {
            let t = Instant::now();
            let u = wyckoff_market::load_universe(md.store(), None, Some(screen_bars))
                .await
                .unwrap();
            times.push(t.elapsed());
            assert_eq!(u.report.bars, bars);
        }
        times.sort();
        println!(
            "load_universe, the last {} bars of each: min {:.2?}, median {:.2?}, max {:.2?} over {READS} reads",
            screen_bars,
            times[0],
            times[READS / 2],
            times[READS - 1]
        );
        // what a long-lived process (the app) pays for the second screen's read: the
        // universe it holds, checked against the store's write generation
        let t = Instant::now();
        let first = md.universe(None, Some(screen_bars)).await.unwrap();
        let cold = t.elapsed();
        let t = Instant::now();
        let again = md.universe(None, Some(screen_bars)).await.unwrap();
        let warm = t.elapsed();
        assert!(std::sync::Arc::ptr_eq(&first, &again));
        println!("universe (kept warm): first {cold:.2?}, again {warm:.2?}");
        drop((first, again));
        let t = Instant::now();
        drop(MarketData::open_with(MarketConfig::offline(&home_path)).await.unwrap());
        println!("open a seeded data home: {:.2?}", t.elapsed());
        let db = home_path.join("wyckoff.db");
        let size = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
        println!(
            "database: {:.1} MB, {:.1} bytes a bar",
            size as f64 / 1e6,
            size as f64 / bars.max(1) as f64
        );
    });
}
