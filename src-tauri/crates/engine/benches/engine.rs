//! Criterion benches with their targets: one 500-bar diagnosis (< 190 µs), and all triggers +
//! trading range + accumulation stage over 5,640 synthetic stocks × 500 bars on both cores
//! (< 0.5 s).
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use rayon::prelude::*;
use wyckoff_engine::board::Board;
use wyckoff_engine::dates::parse_date;
use wyckoff_engine::{
    Bar, Holding, L4Config, accum_stage, diagnose, identify_trading_range, l4_triggers,
    structure_triggers,
};

const CSV: &str = include_str!("../tests/data/zvt_8stocks_qfq_daily.csv");

fn pingan_last_500() -> Vec<Bar> {
    let bars: Vec<Bar> = CSV
        .lines()
        .skip(1)
        .filter(|l| l.starts_with("000001,"))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let n = |i: usize| f[i].parse::<f64>().unwrap();
            Bar {
                date: parse_date(f[2]).unwrap(),
                open: n(3),
                high: n(4),
                low: n(5),
                close: n(6),
                volume: n(7),
                amount: n(8),
                turnover: None,
            }
        })
        .collect();
    bars[bars.len() - 500..].to_vec()
}

/// Deterministic random-walk stock (xorshift), 500 bars.
fn synthetic(seed: u64, len: usize) -> Vec<Bar> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut close = 5.0 + 50.0 * next();
    let mut date = 20180102u32;
    (0..len)
        .map(|_| {
            let open = close;
            close = (close * (1.0 + (next() - 0.5) * 0.08)).max(0.5);
            let high = open.max(close) * (1.0 + next() * 0.03);
            let low = open.min(close) * (1.0 - next() * 0.03);
            let volume = 1e6 * (0.3 + 2.0 * next() * next());
            date += 1;
            Bar {
                date,
                open,
                high,
                low,
                close,
                volume,
                amount: volume * close,
                turnover: None,
            }
        })
        .collect()
}

fn bench_diagnose(c: &mut Criterion) {
    let bars = pingan_last_500();
    let h = Holding {
        cost: Some(bars[bars.len() - 30].close),
        buy_dt: Some(bars[bars.len() - 30].date),
    };
    c.bench_function("diagnose_one_stock_500_bars", |b| {
        b.iter(|| diagnose("000001", "平安银行", black_box(&bars), black_box(&h), None))
    });
    let bench = synthetic(7, 500);
    c.bench_function("diagnose_one_stock_500_bars_with_benchmark", |b| {
        b.iter(|| {
            diagnose(
                "000001",
                "平安银行",
                black_box(&bars),
                black_box(&h),
                Some(&bench),
            )
        })
    });
}

/// Where the diagnosis time goes.
fn bench_components(c: &mut Criterion) {
    use wyckoff_engine::{
        ChannelConfig, ExitConfig, exit_signal, l2_channels, wyckoff_diagnose, wyckoff_structure,
    };
    let bars = pingan_last_500();
    let mut g = c.benchmark_group("components");
    g.bench_function("l2_channels", |b| {
        b.iter(|| {
            l2_channels(
                black_box(&bars),
                None,
                Board::Main,
                &ChannelConfig::default(),
            )
        })
    });
    g.bench_function("l4_triggers_default", |b| {
        b.iter(|| l4_triggers(black_box(&bars), &L4Config::default()))
    });
    g.bench_function("accum_stage", |b| b.iter(|| accum_stage(black_box(&bars))));
    g.bench_function("wyckoff_diagnose", |b| {
        b.iter(|| wyckoff_diagnose(black_box(&bars), "未入选", None))
    });
    g.bench_function("wyckoff_structure", |b| {
        b.iter(|| wyckoff_structure(black_box(&bars)))
    });
    g.bench_function("exit_signal", |b| {
        b.iter(|| exit_signal(black_box(&bars), None, &ExitConfig::default()))
    });
    g.finish();
}

fn bench_universe(c: &mut Criterion) {
    let universe: Vec<Vec<Bar>> = (0..5_640u64).map(|i| synthetic(i + 1, 500)).collect();
    let cfg = L4Config::all_enabled(Board::Main);
    let mut group = c.benchmark_group("universe");
    group.sample_size(10);
    group.bench_function("triggers_range_stage_5640x500_rayon", |b| {
        b.iter(|| {
            universe
                .par_iter()
                .map(|bars| {
                    let t = l4_triggers(bars, &cfg).len();
                    let s = structure_triggers(bars).triggers.len();
                    let r = identify_trading_range(bars).is_some() as usize;
                    let a = accum_stage(bars).is_some() as usize;
                    t + s + r + a
                })
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench_diagnose, bench_components, bench_universe);
criterion_main!(benches);
