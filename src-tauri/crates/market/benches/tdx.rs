//! A whole market imported from a TDX install (a bench binary: `cargo bench -p
//! wyckoff-market --bench tdx`).
//!
//! A synthetic 5,640-stock market (wyckoff-engine feature `synthetic`: made-up test data,
//! never shipped) is written as a TDX `vipdoc` (one `.day` file per stock, the documented
//! 32-byte records), imported through `MarketData::import_tdx` into a fresh data home, then
//! imported again (nothing new: every series is read and compared, none written).
//! `WYCKOFF_BENCH_BARS=N` makes each stock's history N bars deep (default 500; a real
//! install holds up to ~6,000 a stock).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::Instant;

use wyckoff_engine::synthetic::{MarketShape, market};
use wyckoff_market::{MarketConfig, MarketData};

fn record(b: &wyckoff_engine::Bar) -> [u8; 32] {
    let fen = |p: f64| (p * 100.0).round() as u32;
    let mut r = [0u8; 32];
    let (o, h, l, c) = (fen(b.open), fen(b.high), fen(b.low), fen(b.close));
    // rounding to fen must not make a bar impossible
    let (h, l) = (h.max(o).max(c), l.min(o).min(c));
    for (i, v) in [b.date, o, h, l, c].into_iter().enumerate() {
        r[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
    }
    r[20..24].copy_from_slice(&(b.amount as f32).to_le_bytes());
    r[24..28].copy_from_slice(&(b.volume as u32).to_le_bytes());
    r
}

fn main() {
    let mut shape = MarketShape::full_market();
    if let Some(bars) = std::env::var("WYCKOFF_BENCH_BARS")
        .ok()
        .and_then(|b| b.parse::<usize>().ok())
        .filter(|b| *b > shape.bars)
    {
        let years_earlier = (bars - shape.bars).div_ceil(250) as u32;
        shape.start -= years_earlier * 10_000;
        shape.bars = bars;
    }
    let install = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let synthetic = market(shape);
    let mut written = 0;
    for s in &synthetic.stocks {
        let m = if s.code.starts_with('6') {
            "sh"
        } else if s.code.starts_with(['4', '8', '9']) {
            "bj"
        } else {
            "sz"
        };
        let dir = install.path().join("vipdoc").join(m).join("lday");
        std::fs::create_dir_all(&dir).unwrap();
        let bytes: Vec<u8> = s.bars.iter().flat_map(record).collect();
        written += s.bars.len();
        std::fs::write(dir.join(format!("{m}{}.day", s.code)), bytes).unwrap();
    }
    drop(synthetic);
    println!(
        "setup: {} stocks × {} bars = {written} bars written as .day files in {:.2?}",
        shape.stocks,
        shape.bars,
        t.elapsed()
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let md = MarketData::open_with(MarketConfig::offline(home.path()))
            .await
            .unwrap();
        for pass in ["import", "re-import"] {
            let t = Instant::now();
            let r = md.import_tdx(install.path(), &mut |_| {}).await.unwrap();
            let took = t.elapsed();
            assert!(r.rejected.is_empty(), "{:?}", r.rejected.first());
            println!(
                "{pass}: {} files, {} stocks written, {} bars new, {} already stored in {took:.2?} ({:.0} bars/s)",
                r.files,
                r.stocks_written,
                r.bars_added,
                r.bars_unchanged,
                f64::from(r.bars_added + r.bars_unchanged) / took.as_secs_f64()
            );
        }
    });
}
