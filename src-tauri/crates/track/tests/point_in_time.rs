//! `track backfill` replays each past day with the facts of that day — a stock's ST
//! status from the name it carried then — and its report says which facts fell back to
//! today's, over a real `wyckoff.db` seeded with the bundled real bars.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use chrono::NaiveDate;
use wyckoff_market::{ManualClock, MarketConfig, MarketData};
use wyckoff_track::TrackStore;

async fn open(home: &std::path::Path) -> (MarketData, TrackStore) {
    let mut cfg = MarketConfig::offline(home);
    cfg.clock = Arc::new(ManualClock::at_beijing(
        NaiveDate::from_ymd_opt(2020, 6, 17)
            .unwrap()
            .and_hms_opt(9, 0, 0)
            .unwrap(),
    ));
    let md = MarketData::open_with(cfg).await.unwrap();
    let store = TrackStore::new(md.pool().clone()).await.unwrap();
    (md, store)
}

/// Days of the backfilled screens whose candidates include `code`.
async fn days_listing(md: &MarketData, store: &TrackStore, code: &str) -> Vec<String> {
    wyckoff_track::tracked(md, store)
        .await
        .unwrap()
        .into_iter()
        .filter(|s| s.candidates.iter().any(|c| c.code == code))
        .map(|s| s.as_of)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backfill_reads_each_days_names_and_says_what_fell_back() {
    let home = tempfile::tempdir().unwrap();
    let (md, store) = open(home.path()).await;
    let report = wyckoff_track::backfill(&md, &store, 20190102, 20190131, |_, _, _| {})
        .await
        .unwrap();
    // No name history: every stock's ST status came from today's name, and it says so.
    let n = &report.as_of_notes;
    assert_eq!((n.stocks, n.st_from_today), (8, 8), "{n:?}");
    assert!(n.no_delisting_records);
    assert_eq!(report.notes, n.lines());
    assert!(
        report
            .notes
            .iter()
            .any(|l| l.contains("8 只股票中 8 只的 ST 状态取自今日名称")),
        "{:?}",
        report.notes
    );
    let listed = days_listing(&md, &store, "000001").await;
    assert!(listed.contains(&"2019-01-16".to_owned()), "{listed:?}");

    // A name history (test data) with 000001 under ST through January 2019: the same
    // backfill turns it away on those days, and the other seven still fall back.
    let names = home.path().join("names.csv");
    std::fs::write(
        &names,
        "date,code,name\n1991-04-03,000001,深发展A\n2018-12-03,000001,ST测试\n2019-02-01,000001,平安银行\n",
    )
    .unwrap();
    assert!(!md.import_names(&names).await.unwrap().rejected());
    let report = wyckoff_track::backfill(&md, &store, 20190102, 20190131, |_, _, _| {})
        .await
        .unwrap();
    assert_eq!(
        report.as_of_notes.st_from_today, 7,
        "{:?}",
        report.as_of_notes
    );
    assert_eq!(
        days_listing(&md, &store, "000001").await,
        Vec::<String>::new()
    );
}
