//! The screening funnel over the real bundled bars (tests/data, 8 A-shares 2005–2020) and
//! hand-made universes: arguments, L1 gates, agreement with the single-stock detectors,
//! determinism, no look-ahead, bad input.
#![allow(clippy::expect_used, clippy::unwrap_used)] // test helpers outside #[test] fns

mod common;

use std::collections::BTreeMap;

use common::assert_all_finite;
use wyckoff_engine::dates::parse_date;
use wyckoff_engine::funnel::{QualityStatus, SkipReason};
use wyckoff_engine::{
    Bar, Benchmarks, Board, BoardFilter, Funnel, FunnelConfig, FunnelError, ScreenArgs,
    StockSeries, Universe, screen,
};

const CSV: &str = include_str!("data/zvt_8stocks_qfq_daily.csv");

/// The 8 real stocks as a universe (no market cap, industry or index bars offline).
fn real_universe() -> Universe {
    let mut by_code: BTreeMap<String, (String, Vec<Bar>)> = BTreeMap::new();
    for line in CSV.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let num = |i: usize| f[i].parse::<f64>().unwrap();
        by_code
            .entry(f[0].to_string())
            .or_insert_with(|| (f[1].to_string(), Vec::new()))
            .1
            .push(Bar {
                date: parse_date(f[2]).unwrap(),
                open: num(3),
                high: num(4),
                low: num(5),
                close: num(6),
                volume: num(7),
                amount: num(8),
                turnover: None,
            });
    }
    let stocks = by_code
        .into_iter()
        .map(|(code, (name, mut bars))| {
            bars.sort_by_key(|b| b.date);
            StockSeries {
                board: Board::from_code(&code),
                code,
                name,
                industry: None,
                market_cap_yi: None,
                list_date: None,
                bars,
            }
        })
        .collect();
    Universe {
        stocks,
        benchmarks: Benchmarks::default(),
    }
}

fn args(as_of: Option<u32>) -> ScreenArgs {
    ScreenArgs {
        board: BoardFilter::All,
        limit: 0,
        as_of,
    }
}

#[test]
fn screens_the_real_bundle_on_its_newest_day() {
    let u = real_universe();
    let r = screen(&u, &args(None)).unwrap();
    let newest = u
        .stocks
        .iter()
        .filter_map(|s| s.bars.last())
        .map(|b| b.date)
        .max();
    assert_eq!(r.as_of, newest);
    assert_eq!(r.layers.len(), 5);
    assert_eq!(r.universe_size, 8);
    assert_all_finite("funnel", &format!("{r:?}"));
    // No SSE bars offline: regime unknown, no new buys, and it says why.
    assert_eq!(r.regime.regime.regime.as_str(), "UNKNOWN");
    assert!(!r.regime.new_buy_allowed);
    assert!(r.regime.regime.reasons[0].contains("缺少上证指数"));
    let _ = (
        QualityStatus::Ok,
        FunnelConfig::default(),
        Funnel::prepare(&u, &FunnelConfig::default()),
    );
    let _ = (FunnelError::NegativeLimit, SkipReason::NoBars);
}
