//! The journal over a real `wyckoff.db`: existing positions migrate to opening fills
//! without changing any figure; a recorded fill re-derives the position; a broker CSV with
//! one bad row imports nothing and names the line; an oversold history is refused.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use wyckoff_journal::{JournalStore, NewFill, Side, Source};
use wyckoff_market::{ManualClock, MarketConfig, MarketData, PortfolioOp};

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

async fn seed(md: &MarketData) {
    let p = md.portfolio();
    for (code, name, shares, cost, dt) in [
        ("600519", "贵州茅台", 300, 1688.123456, "2023-05-04"),
        ("000001", "平安银行", 1500, 10.35, "2024-01-02"),
    ] {
        p.apply(
            PortfolioOp::Add {
                code: code.into(),
                name: name.into(),
                shares,
                cost_price: cost,
                buy_dt: Some(dt.into()),
            },
            now(),
        )
        .await
        .unwrap();
    }
    p.apply(
        PortfolioOp::SetCash {
            free_cash: 12345.67,
        },
        now(),
    )
    .await
    .unwrap();
    p.set_stop_loss("600519", Some(1500.0), now())
        .await
        .unwrap();
}

#[tokio::test]
async fn migration_keeps_every_figure_the_user_sees() {
    let dir = tempfile::tempdir().unwrap();
    let md = open(dir.path()).await;
    seed(&md).await;
    let before = md.portfolio().view().await.unwrap();
    let store = JournalStore::new(md.pool().clone(), now()).await.unwrap();
    let after = md.portfolio().view().await.unwrap();
    // every field of every position (shares, cost, buy date, stop, name) and the cash
    assert_eq!(before, after);
    let s = store.summary(now()).await.unwrap();
    assert_eq!(s.fills.len(), 2);
    assert!(
        s.fills
            .iter()
            .all(|f| f.side == Side::Opening && f.fees_total_fen == 0)
    );
    assert_eq!(s.realised_fen, 0);
    for p in &before.positions {
        let d = s.positions.iter().find(|d| d.code == p.code).unwrap();
        assert_eq!(
            (d.shares, d.avg_cost, d.since.as_str()),
            (p.shares, p.cost_price, p.buy_dt.as_str())
        );
    }
    // opening twice adds nothing
    JournalStore::new(md.pool().clone(), now()).await.unwrap();
    assert_eq!(store.summary(now()).await.unwrap().fills.len(), 2);
}

#[tokio::test]
async fn recorded_fills_derive_the_position() {
    let dir = tempfile::tempdir().unwrap();
    let md = open(dir.path()).await;
    seed(&md).await;
    let store = JournalStore::new(md.pool().clone(), now()).await.unwrap();
    // 1500 @ 10.35 (basis 15,525.00) + buy 500 @ 11.00 = 5,500.00 + 5.00 + 0.06 (0.055)
    // → basis 21,030.06 over 2000 shares = 10.51503
    let out = store
        .record(
            &NewFill {
                code: "000001".into(),
                name: String::new(),
                side: Side::Buy,
                date: 20240304,
                price_e6: 11_000_000,
                shares: 500,
                fees: None,
            },
            Source::Cli,
            now(),
        )
        .await
        .unwrap();
    assert_eq!(out.fill.fees_total_fen, 506);
    let p = out.position.unwrap();
    assert_eq!(
        (p.shares, p.avg_cost, p.cost_basis_fen),
        (2000, 10.51503, 2_103_006)
    );
    let view = md.portfolio().view().await.unwrap();
    let row = view.positions.iter().find(|p| p.code == "000001").unwrap();
    assert_eq!(
        (row.shares, row.cost_price, row.buy_dt.as_str()),
        (2000, 10.51503, "2024-01-02")
    );
    // sell all 2000 @ 12.00 = 24,000.00 on 2024-03-05: commission 6.00, stamp 12.00,
    // transfer 0.24 → 18.24; P/L 24,000 − 18.24 − 21,030.06 = 2,951.70
    let out = store
        .record(
            &NewFill {
                code: "000001".into(),
                name: String::new(),
                side: Side::Sell,
                date: 20240305,
                price_e6: 12_000_000,
                shares: 2000,
                fees: None,
            },
            Source::Manual,
            now(),
        )
        .await
        .unwrap();
    assert_eq!(out.fill.realised_fen, Some(295_170));
    assert!(out.position.is_none());
    let view = md.portfolio().view().await.unwrap();
    assert!(view.positions.iter().all(|p| p.code != "000001"));
    // the stop-loss and cash of the other holding are untouched
    assert_eq!(view.free_cash, 12345.67);
    // selling what is not held writes nothing
    let err = store
        .record(
            &NewFill {
                code: "600519".into(),
                name: String::new(),
                side: Side::Sell,
                date: 20240306,
                price_e6: 1_700_000_000,
                shares: 400,
                fees: None,
            },
            Source::Agent,
            now(),
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("卖出 400 股超过当时持仓 300 股"),
        "{err}"
    );
    assert_eq!(store.summary(now()).await.unwrap().fills.len(), 4);
    // a fill before a position's opening is refused with the reason
    let err = store
        .record(
            &NewFill {
                code: "600519".into(),
                name: String::new(),
                side: Side::Buy,
                date: 20230101,
                price_e6: 1_700_000_000,
                shares: 100,
                fees: None,
            },
            Source::Cli,
            now(),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("期初"), "{err}");
}

#[tokio::test]
async fn a_csv_with_one_bad_row_imports_nothing_and_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let md = open(dir.path()).await;
    let store = JournalStore::new(md.pool().clone(), now()).await.unwrap();
    let good = "成交日期,证券代码,证券名称,操作,成交数量,成交价格,成交金额,手续费,印花税,过户费\n\
20240102,000001,平安银行,证券买入,1000,9.35,9350.00,5.00,0.00,0.09\n\
20240305,000001,平安银行,证券卖出,400,10.00,4000.00,5.00,2.00,0.04\n";
    let bad = format!("{good}20240306,000001,平安银行,证券卖出,一百,10.00,,5.00,0.50,0.01\n");
    let (gbk, _, _) = encoding_rs::GBK.encode(&bad);
    let err = store.import(&gbk, now()).await.unwrap_err();
    let rows = err.bad_rows().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].line, 4);
    assert!(err.to_string().contains("第 4 行"), "{err}");
    assert!(store.summary(now()).await.unwrap().fills.is_empty());
    assert!(md.portfolio().view().await.unwrap().positions.is_empty());

    // selling more than the file bought is a bad row too, named by its line
    let oversold = good.replace("证券卖出,400,10.00,4000.00", "证券卖出,4000,1.00,4000.00");
    let err = store.import(oversold.as_bytes(), now()).await.unwrap_err();
    assert_eq!(err.bad_rows().unwrap()[0].line, 3, "{err}");
    assert!(store.summary(now()).await.unwrap().fills.is_empty());

    // the good file: bought 9,355.09; sold 400 of 1000: cost 3,742.036, proceeds
    // 4,000 − 7.04 → P/L 250.924 → 250.92
    let out = store.import(good.as_bytes(), now()).await.unwrap();
    assert_eq!(out.imported, 2);
    assert_eq!(out.realised_fen, 25_092);
    let view = md.portfolio().view().await.unwrap();
    assert_eq!(view.positions.len(), 1);
    // 600 shares, basis 5,613.054 → 9.35509
    assert_eq!(
        (view.positions[0].shares, view.positions[0].cost_price),
        (600, 9.35509)
    );
}
