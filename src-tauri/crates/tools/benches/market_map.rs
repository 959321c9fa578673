//! The whole market map as the app and the CLI compute it (a bench binary:
//! `cargo bench -p wyckoff-tools --bench market_map`): `market_map::market_map` (the
//! universe, the raw closes of the stocks near a limit read from the cache, the limit
//! statistics, the sector table with its rotation, the notes) and `market_map::market_series`
//! over 250 trading days (the limit statistics of each day and the industries' rotation
//! trails), from a warm cache: the universe the app holds, the tail cache in step.
//!
//! The market is the synthetic 5,640 × 500 one (wyckoff-engine feature `synthetic`: made-up
//! test data, never shipped) with 30 industries imported from a `code,industry` file, names
//! (ST ones among them) in the stock list, and every bar's raw close stored, as a TDX import
//! leaves them. Its random walk never reaches a limit, so every tenth day a tenth of the
//! stocks (a different tenth each time) close at their limit up, and the last day is a
//! rally in which a quarter of the market does: then a 250-day series reads the raw closes
//! of nearly every stock, and the one day those of some 1,400. Targets: one day < 50 ms,
//! 250 days < 1 s. Figures are printed, never asserted.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

use chrono::Utc;
use wyckoff_engine::FunnelConfig;
use wyckoff_engine::board::{limit_prices_fen, yuan_to_fen};
use wyckoff_engine::limits::{RawCloseMap, limit_series, needs_raw};
use wyckoff_engine::sectors::{SectorConfig, sector_day};
use wyckoff_engine::synthetic::{MarketShape, market};
use wyckoff_engine::{Bar, StockSeries};
use wyckoff_market::cache::BarTable;
use wyckoff_market::series::Series;
use wyckoff_market::{MarketConfig, MarketData, StockCode, StockInfo};
use wyckoff_tools::market_map::{market_map, market_series};

const INDUSTRIES: usize = 30;
const ONE_DAY_RUNS: usize = 11;
const SERIES_RUNS: usize = 5;
const SERIES_DAYS: usize = 250;

/// Closes stock `s` at its limit up on bar `i`: the bars from `i` on are scaled so the
/// close lands on the limit price and the walk carries on from there.
fn limit_up(s: &mut StockSeries, i: usize) {
    let prev = s.bars[i - 1].close;
    let pct = s.board.limit_percent(s.name.contains("ST"), s.bars[i].date);
    let Some(base) = yuan_to_fen(prev) else {
        return;
    };
    let limit = limit_prices_fen(base, pct).0 as f64 / 100.0;
    let scale = limit / s.bars[i].close;
    let round2 = |x: f64| (x * 100.0).round() / 100.0;
    for b in &mut s.bars[i..] {
        b.open = round2(b.open * scale);
        b.high = round2(b.high * scale);
        b.low = round2(b.low * scale);
        b.close = round2(b.close * scale);
        b.amount = (b.volume * b.close).round();
    }
    let b = &mut s.bars[i];
    b.close = limit;
    b.high = limit;
    b.open = b.open.min(limit);
    b.low = b.low.min(limit);
}

fn figures(mut times: Vec<Duration>) -> String {
    times.sort();
    format!(
        "low {:.2?}, median {:.2?}, high {:.2?} over {} runs",
        times[0],
        times[times.len() / 2],
        times[times.len() - 1],
        times.len()
    )
}

fn main() {
    let shape = MarketShape::full_market();
    let home = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let t = Instant::now();
        let mut synthetic = market(shape);
        let n = shape.bars;
        for (k, s) in synthetic.stocks.iter_mut().enumerate() {
            for i in (n - SERIES_DAYS..n - 1).filter(|i| i % 10 == 0) {
                if (k + i / 10) % 10 == 0 {
                    limit_up(s, i);
                }
            }
            if k % 4 == 0 {
                limit_up(s, n - 1);
            }
        }
        let md = MarketData::open_with(MarketConfig::offline(home.path()))
            .await
            .unwrap();
        let list: Vec<StockInfo> = synthetic
            .stocks
            .iter()
            .map(|s| {
                let mut info = StockInfo::new(StockCode::parse(&s.code).unwrap(), &s.name);
                info.list_date = s.list_date;
                info
            })
            .collect();
        md.store()
            .upsert_stocks(&list, "synthetic", Utc::now())
            .await
            .unwrap();
        // every bar with its raw close, as a TDX import stores them
        let keys: Vec<String> = synthetic
            .stocks
            .iter()
            .map(|s| StockCode::parse(&s.code).unwrap().symbol().key())
            .collect();
        let stocks = &synthetic.stocks;
        md.store()
            .rewrite_many(
                BarTable::Stocks,
                &keys,
                "synthetic",
                Utc::now(),
                &mut |i, _| {
                    let bars: &[Bar] = &stocks[i].bars;
                    let raw: Vec<(u32, f64)> = bars.iter().map(|b| (b.date, b.close)).collect();
                    let mut series = Series::default();
                    series.merge_with_raw(bars, &raw, "synthetic", true).ok()?;
                    Some((series, bars[0].date, bars[bars.len() - 1].date))
                },
            )
            .await
            .unwrap();
        md.refresh_tail_cache().await;
        let mut csv = String::from("code,industry\n");
        for (k, s) in synthetic.stocks.iter().enumerate() {
            let _ = writeln!(csv, "{},合成行业{}", s.code, k % INDUSTRIES);
        }
        let file = home.path().join("industries.csv");
        std::fs::write(&file, csv).unwrap();
        md.import_industries(&file).await.unwrap();
        println!(
            "setup: {} stocks × {} bars with raw closes, {INDUSTRIES} industries, in {:.2?}",
            shape.stocks,
            shape.bars,
            t.elapsed()
        );
        drop(synthetic);

        let t = Instant::now();
        let first = market_map(&md, None).await.unwrap();
        println!(
            "market map, first (reads the universe): {:.2?}; {} limit-up, {} failed, {} limit-down, highest board {}, {} industries, notes {:?}",
            t.elapsed(),
            first.limits.limit_up,
            first.limits.failed,
            first.limits.limit_down,
            first.limits.highest_board,
            first.sectors.as_ref().map_or(0, |s| s.rows.len()),
            first.notes
        );
        let mut times = Vec::with_capacity(ONE_DAY_RUNS);
        for _ in 0..ONE_DAY_RUNS {
            let t = Instant::now();
            let again = market_map(&md, None).await.unwrap();
            times.push(t.elapsed());
            assert_eq!(again, first);
        }
        println!("market map, one day (warm): {}", figures(times));

        // the part the map reads beyond the warm universe: the raw closes of the stocks near
        // a limit, one query a stock (as the map first read them) and batched
        let universe = md
            .universe(None, Some(FunnelConfig::default().screen_bars()))
            .await
            .unwrap();
        let day = universe.report.last_date.unwrap();
        let stocks = &universe.universe.stocks;
        let dates: Vec<u32> = stocks[0].bars.iter().map(|b| b.date).collect();
        let year_from = dates[dates.len() - SERIES_DAYS];
        for (what, from) in [("one day", day), ("250 days", year_from)] {
            let codes: Vec<String> = needs_raw(stocks, from, day)
                .into_iter()
                .map(str::to_string)
                .collect();
            let t = Instant::now();
            for code in &codes {
                md.raw_closes(code, dates[0]..=day).await.unwrap();
            }
            let one_by_one = t.elapsed();
            let t = Instant::now();
            let batched = md.raw_closes_many(&codes, dates[0]..=day).await.unwrap();
            println!(
                "raw closes near a limit, {what}: {} stocks, one query a stock {one_by_one:.2?}, batched {:.2?}",
                batched.len(),
                t.elapsed()
            );
        }
        // the engine's parts of one day's map, on the raw closes it reads
        let codes: Vec<String> = needs_raw(stocks, day, day)
            .into_iter()
            .map(str::to_string)
            .collect();
        let raw: RawCloseMap = md
            .raw_closes_many(&codes, dates[0]..=day)
            .await
            .unwrap()
            .into_iter()
            .map(|c| {
                let closes = c
                    .closes
                    .iter()
                    .filter(|r| r.exact)
                    .map(|r| (r.date, r.close_e6 as f64 / 1e6))
                    .collect();
                (c.code, closes)
            })
            .collect();
        let time = |f: &dyn Fn()| {
            let mut times = Vec::with_capacity(ONE_DAY_RUNS);
            for _ in 0..ONE_DAY_RUNS {
                let t = Instant::now();
                f();
                times.push(t.elapsed());
            }
            figures(times)
        };
        println!(
            "  needs_raw, one day: {}",
            time(&|| drop(black_box(needs_raw(stocks, day, day))))
        );
        println!(
            "  limit_series, one day: {}",
            time(&|| drop(black_box(limit_series(stocks, &raw, day, day))))
        );
        let series = limit_series(stocks, &raw, day, day);
        println!(
            "  sector_day: {}",
            time(&|| {
                drop(black_box(sector_day(
                    stocks,
                    day,
                    Some(&series),
                    &SectorConfig::default(),
                )))
            })
        );
        drop(universe);

        let mut times = Vec::with_capacity(SERIES_RUNS);
        let mut last = None;
        for _ in 0..SERIES_RUNS {
            let t = Instant::now();
            let series = market_series(&md, None, SERIES_DAYS).await.unwrap();
            times.push(t.elapsed());
            last = Some(series);
        }
        let series = last.unwrap();
        let adjusted: u32 = series.limits.iter().map(|d| d.adjusted_days).sum();
        println!(
            "market map, {SERIES_DAYS}-day series (warm): {}; {} days, {} limit-ups in all, {adjusted} stock-days near a limit without raw closes, {} rotation trails",
            figures(times),
            series.limits.len(),
            series.limits.iter().map(|d| d.limit_up).sum::<u32>(),
            series.trails.len()
        );
    });
}
