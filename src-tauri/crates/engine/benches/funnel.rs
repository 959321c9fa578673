//! Funnel benches over the synthetic 5,640 × 500 market. A one-off screen is
//! `prepare_and_screen` (target < 300 ms on 2 cores). A backtest prepares once with daily
//! features and screens each day (`screen_newest_day`, `screen_day_300`; budget ~26 ms a day
//! for 750 days in < 20 s).
#![allow(clippy::expect_used, clippy::unwrap_used)]
#![allow(clippy::print_stderr)] // a bench binary reports what it measured

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use wyckoff_engine::synthetic::{MarketShape, market};
use wyckoff_engine::{BoardFilter, Funnel, FunnelConfig, ScreenArgs};

fn funnel(c: &mut Criterion) {
    let universe = market(MarketShape::full_market());
    let cfg = FunnelConfig::default();
    let mut g = c.benchmark_group("funnel_5640x500");
    g.sample_size(10);
    g.bench_function("prepare", |b| {
        b.iter(|| black_box(Funnel::prepare(&universe, &cfg)))
    });
    g.bench_function("prepare_with_daily_features", |b| {
        b.iter(|| black_box(Funnel::prepare(&universe, &cfg).with_daily_features()))
    });
    let light = Funnel::prepare(&universe, &cfg);
    let newest = ScreenArgs::default();
    g.bench_function("screen_newest_day_light", |b| {
        b.iter(|| black_box(light.screen(&newest).unwrap()))
    });
    let prepared = Funnel::prepare(&universe, &cfg).with_daily_features();
    g.bench_function("screen_newest_day", |b| {
        b.iter(|| black_box(prepared.screen(&newest).unwrap()))
    });
    let mid = ScreenArgs {
        board: BoardFilter::All,
        limit: 0,
        as_of: Some(prepared.calendar()[300]),
    };
    g.bench_function("screen_day_300", |b| {
        b.iter(|| black_box(prepared.screen(&mid).unwrap()))
    });
    g.bench_function("prepare_and_screen", |b| {
        b.iter(|| black_box(wyckoff_engine::screen(&universe, &newest).unwrap()))
    });
    g.finish();
    let r = prepared.screen(&newest).unwrap();
    let counts: Vec<String> = r
        .layers
        .iter()
        .map(|l| format!("{} {}→{}", l.layer, l.input, l.passed))
        .collect();
    eprintln!(
        "newest day {:?}: {} | regime {} | candidates {}",
        r.as_of,
        counts.join(", "),
        r.regime.regime.regime.as_str(),
        r.candidates.len()
    );
}

criterion_group!(benches, funnel);
criterion_main!(benches);
