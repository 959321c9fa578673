//! A synthetic market (test data from wyckoff-engine's `synthetic` feature) written as CSV,
//! imported through the user's path and read back whole: every bar survives exactly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/synthetic_csv.rs"]
mod synthetic_csv;

use wyckoff_engine::synthetic::{MarketShape, market};
use wyckoff_market::{MarketConfig, MarketData};

#[tokio::test]
async fn a_csv_market_round_trips_exactly_into_the_universe() {
    let shape = MarketShape {
        stocks: 300,
        bars: 120,
        start: 20240102,
        seed: 11,
    };
    let synthetic = market(shape);
    let csv = tempfile::tempdir().unwrap();
    let written = synthetic_csv::write_market_csv(&synthetic, csv.path()).unwrap();
    assert_eq!(written, 300 * 120);

    let home = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(home.path()))
        .await
        .unwrap();
    let r = md.import_csv(csv.path(), &mut |_| {}).await.unwrap();
    assert_eq!(
        (r.files, r.files_rejected, r.stocks, r.bars),
        (300, 0, 300, 36_000),
        "{:?}",
        r.outcomes
            .iter()
            .find(|o| matches!(o.status, wyckoff_market::FileStatus::Rejected { .. }))
    );

    let loaded = md.load_universe(None).await.unwrap();
    assert!(
        loaded.report.skipped.is_empty(),
        "{:?}",
        loaded.report.skipped
    );
    for s in &synthetic.stocks {
        let got = loaded
            .universe
            .stocks
            .iter()
            .find(|g| g.code == s.code)
            .unwrap_or_else(|| panic!("{} missing", s.code));
        if BUNDLED.contains(&s.code.as_str()) {
            // merged after the bundled 2005–2020 history of the same code
            assert!(got.bars.ends_with(&s.bars), "{}", s.code);
            assert!(got.bars.len() > s.bars.len());
        } else {
            assert_eq!(got.bars, s.bars, "{}", s.code);
        }
    }
    // the 8 bundled stocks are there too, all in code order
    assert_eq!(loaded.universe.stocks.len(), 300 + 8 - overlap(&synthetic));
    assert!(
        loaded
            .universe
            .stocks
            .windows(2)
            .all(|w| w[0].code < w[1].code)
    );
}

const BUNDLED: [&str; 8] = [
    "000001", "000338", "000778", "000783", "002572", "300027", "601318", "603220",
];

fn overlap(u: &wyckoff_engine::Universe) -> usize {
    u.stocks
        .iter()
        .filter(|s| BUNDLED.contains(&s.code.as_str()))
        .count()
}
