//! Broker statements into the journal over a real `wyckoff.db`: importing the same file
//! twice adds nothing the second time.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use wyckoff_journal::JournalStore;
use wyckoff_market::{ManualClock, MarketConfig, MarketData};

fn now() -> DateTime<Utc> {
    "2024-03-08T02:00:00Z".parse().unwrap()
}

async fn open(home: &std::path::Path) -> MarketData {
    let mut cfg = MarketConfig::offline(home);
    cfg.clock = Arc::new(ManualClock::at_beijing(
        NaiveDate::from_ymd_opt(2024, 3, 8)
            .unwrap()
            .and_hms_opt(10, 0, 0)
            .unwrap(),
    ));
    MarketData::open_with(cfg).await.unwrap()
}

#[tokio::test]
async fn the_same_file_twice_does_not_double_the_position() {
    let dir = tempfile::tempdir().unwrap();
    let md = open(dir.path()).await;
    let store = JournalStore::new(md.pool().clone(), now()).await.unwrap();
    let file = "成交日期,证券代码,证券名称,操作,成交数量,成交价格,成交金额,手续费,印花税,过户费\n\
20240102,000001,平安银行,证券买入,600,9.35,5610.00,5.00,0.00,0.06\n";
    store.import(file.as_bytes(), now()).await.unwrap();
    store.import(file.as_bytes(), now()).await.unwrap();
    let view = md.portfolio().view().await.unwrap();
    assert_eq!(view.positions.len(), 1);
    assert_eq!(
        view.positions[0].shares, 600,
        "re-importing doubled the fill"
    );
    assert_eq!(store.summary(now()).await.unwrap().fills.len(), 1);
}

const STATEMENT: &[u8] = include_bytes!("fixtures/broker/statement_2023.csv");

#[tokio::test]
async fn a_year_imports_once_and_its_balances_stay_reconcilable() {
    let dir = tempfile::tempdir().unwrap();
    let md = open(dir.path()).await;
    let store = JournalStore::new(md.pool().clone(), now()).await.unwrap();
    let out = store.import(STATEMENT, now()).await.unwrap();
    assert_eq!((out.imported, out.duplicates), (20, 0));
    assert!(out.reconciliation.matches(), "{:?}", out.reconciliation);
    assert!(out.reconciliation.checked >= 20);
    let again = store.import(STATEMENT, now()).await.unwrap();
    assert_eq!((again.imported, again.duplicates), (0, 20));
    assert!(again.message.contains("20 条已在账中"), "{}", again.message);
    // only the ETF is held at the end, as the statement's last 股份余额 says
    let summary = store.summary(now()).await.unwrap();
    let held: Vec<(&str, i64)> = summary
        .positions
        .iter()
        .map(|p| (p.code.as_str(), p.shares))
        .collect();
    assert_eq!(held, [("510300", 5000)]);
    // the stated balances are kept: the reconciliation holds later, and names a change
    assert!(store.reconciliation(now()).await.unwrap().matches());
    store
        .record(
            &wyckoff_journal::NewFill {
                code: "600036".into(),
                name: String::new(),
                side: wyckoff_journal::Side::Buy,
                date: 20231215,
                price_e6: 30_000_000,
                shares: 100,
                fees: None,
            },
            wyckoff_journal::Source::Cli,
            now(),
        )
        .await
        .unwrap();
    let r = store.reconciliation(now()).await.unwrap();
    let d = &r.differences[0];
    // 2023-12-21's 利息归本 row states the cash; the buy recorded by hand took
    // 3,000.00 + commission 5.00 + transfer 0.03 out of it
    assert_eq!(
        (d.code.as_deref(), d.date.as_str(), d.line),
        (None, "2023-12-21", 19)
    );
    assert_eq!(d.statement - d.derived, 300_503);
    assert_eq!(r.differences.len(), 2, "that day and the last: {r:?}");
}
