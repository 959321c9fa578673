//! Criterion bench: known-on dates for one 5,000-bar tape — the engine replayed as
//! of every close (schematic events, phase bands, range lines, structure and L4 triggers),
//! target well under a second.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use wyckoff_engine::L4Config;
use wyckoff_engine::known_on::replay;
use wyckoff_engine::synthetic::{Rng, random_walk, weekdays};

fn bench_replay(c: &mut Criterion) {
    let dates = weekdays(20060102, 5_000);
    let bars = random_walk(&mut Rng::new(27), &dates, 12.0, 2.0e6);
    let l4 = L4Config::for_code("600000");
    // The tape does form schematics and fire triggers (725 marks with this seed).
    assert!(replay(&bars, &l4).marks.len() > 100);
    let mut g = c.benchmark_group("known_on");
    g.sample_size(10);
    g.bench_function("replay_5000_bars", |b| {
        b.iter(|| replay(black_box(&bars), &l4))
    });
    g.finish();
}

criterion_group!(benches, bench_replay);
criterion_main!(benches);
