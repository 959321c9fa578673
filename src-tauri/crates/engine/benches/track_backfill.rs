//! Backfill bench: the funnel replayed as of each of the 750 trading
//! days of the synthetic 5,640-stock market — what `wyckoff track backfill` spends its
//! time on (the cache load and the saves are measured by the CLI over real data). A plain
//! bench binary: one run takes a while, so it prints the figures it measured.
#![allow(clippy::expect_used, clippy::unwrap_used)]
#![allow(clippy::print_stderr)] // a bench binary reports what it measured

use std::time::Instant;

use wyckoff_engine::synthetic::{MarketShape, market};
use wyckoff_engine::track::replay_screens;

fn main() {
    let shape = MarketShape {
        bars: 750,
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
    let first = universe.stocks[0].bars[0].date;
    let last = universe.stocks[0].bars[shape.bars - 1].date;
    let t = Instant::now();
    let mut prepared = None;
    let (mut days, mut candidates) = (0usize, 0usize);
    replay_screens(&universe, first, last, &mut |_, _, _, r| {
        prepared.get_or_insert_with(|| t.elapsed());
        days += 1;
        candidates += r.map_or(0, |r| r.candidates.len());
    });
    let total = t.elapsed();
    eprintln!(
        "backfill replay: {days} days, {candidates} candidates in {total:.2?} \
         (first day after {:.2?}: preparation; {:.1} ms a day)",
        prepared.unwrap_or_default(),
        total.as_secs_f64() * 1000.0 / days.max(1) as f64
    );
}
