//! Limit statistics over the synthetic 5,640 × 500 market: one day (what `market map`
//! computes once the universe is warm; target < 50 ms) and a 250-day series (target < 1 s).
//! Raw closes are given for every stock `needs_raw` names, so near-limit days take the
//! real-price path. Figures are reported, never asserted.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use wyckoff_engine::limits::{RawCloseMap, limit_series, needs_raw};
use wyckoff_engine::synthetic::{MarketShape, market};

fn limits(c: &mut Criterion) {
    let universe = market(MarketShape::full_market());
    let stocks = &universe.stocks;
    let dates: Vec<u32> = stocks[0].bars.iter().map(|b| b.date).collect();
    let (first, last) = (dates[dates.len() - 250], *dates.last().unwrap());
    let raw: RawCloseMap = needs_raw(stocks, first, last)
        .into_iter()
        .map(|code| {
            let s = stocks.iter().find(|s| s.code == code).unwrap();
            (
                code.to_string(),
                s.bars.iter().map(|b| (b.date, b.close)).collect(),
            )
        })
        .collect();
    let mut g = c.benchmark_group("limits_5640x500");
    g.sample_size(10);
    g.bench_function("needs_raw_one_day", |b| {
        b.iter(|| black_box(needs_raw(stocks, last, last)))
    });
    g.bench_function("one_day", |b| {
        b.iter(|| black_box(limit_series(stocks, &raw, last, last)))
    });
    g.bench_function("series_250_days", |b| {
        b.iter(|| black_box(limit_series(stocks, &raw, first, last)))
    });
    g.finish();
}

criterion_group!(benches, limits);
criterion_main!(benches);
