//! The portfolio store on a real SQLite file.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use chrono::{TimeZone, Utc};
use wyckoff_market::portfolio::*;
use wyckoff_market::{PortfolioError, PortfolioOp, PortfolioStore};

async fn store() -> (tempfile::TempDir, PortfolioStore) {
    let dir = tempfile::tempdir().unwrap();
    let pool = wyckoff_market::cache::open_db(&dir.path().join("wyckoff.db"))
        .await
        .unwrap();
    (dir, PortfolioStore::new(pool))
}

fn now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, 8, 0, 0).unwrap()
}

fn add(code: &str, shares: i64, cost: f64, buy_dt: Option<&str>) -> PortfolioOp {
    PortfolioOp::Add {
        code: code.into(),
        name: "平安银行".into(),
        shares,
        cost_price: cost,
        buy_dt: buy_dt.map(str::to_string),
    }
}

fn msg(e: PortfolioError) -> String {
    e.to_string()
}

#[tokio::test]
async fn empty_view() {
    let (_d, s) = store().await;
    let v = s.view().await.unwrap();
    assert_eq!(v.portfolio_id, "USER_LIVE:local");
    assert_eq!(v.free_cash, 0.0);
    assert_eq!(v.position_count, 0);
}

#[tokio::test]
async fn add_update_remove_set_cash() {
    let (_d, s) = store().await;
    let out = s
        .apply(add("sz000001", 1000, 12.32, Some("20240102")), now())
        .await
        .unwrap();
    assert_eq!(out.view.position_count, 1);
    let p = &out.view.positions[0];
    assert_eq!(
        (p.code.as_str(), p.shares, p.cost_price),
        ("000001", 1000, 12.32)
    );
    assert_eq!(p.buy_dt, "2024-01-02");
    assert_eq!(p.stop_loss, None);

    let up = PortfolioOp::Update {
        code: "000001.SZ".into(),
        name: None,
        shares: Some(1500),
        cost_price: None,
        buy_dt: None,
    };
    let v = s.apply(up, now()).await.unwrap().view;
    assert_eq!(v.positions[0].shares, 1500);
    assert_eq!(v.positions[0].cost_price, 12.32, "unchanged fields kept");
    assert_eq!(v.positions[0].name, "平安银行");

    s.set_stop_loss("000001", Some(11.46), now()).await.unwrap();
    assert_eq!(s.view().await.unwrap().positions[0].stop_loss, Some(11.46));

    // stop and target together; a target at or under the stop, a zero or a missing
    // holding is refused and changes nothing
    s.set_levels("000001", Some(11.46), Some(14.0), now())
        .await
        .unwrap();
    let p = &s.view().await.unwrap().positions[0];
    assert_eq!((p.stop_loss, p.target_price), (Some(11.46), Some(14.0)));
    for (stop, target) in [
        (Some(11.46), Some(11.46)),
        (None, Some(0.0)),
        (Some(-1.0), None),
    ] {
        assert!(s.set_levels("000001", stop, target, now()).await.is_err());
    }
    assert!(
        s.set_levels("600000", None, Some(9.0), now())
            .await
            .is_err()
    );
    let p = &s.view().await.unwrap().positions[0];
    assert_eq!((p.stop_loss, p.target_price), (Some(11.46), Some(14.0)));
    // clearing the stop keeps nothing of it; the target stays as given
    s.set_levels("000001", None, Some(14.0), now())
        .await
        .unwrap();
    let p = &s.view().await.unwrap().positions[0];
    assert_eq!((p.stop_loss, p.target_price), (None, Some(14.0)));
    s.set_stop_loss("000001", Some(11.46), now()).await.unwrap();

    let v = s
        .apply(PortfolioOp::SetCash { free_cash: 5000.5 }, now())
        .await
        .unwrap()
        .view;
    assert_eq!(v.free_cash, 5000.5);
    let v = s
        .apply(
            PortfolioOp::Remove {
                code: "000001".into(),
            },
            now(),
        )
        .await
        .unwrap()
        .view;
    assert_eq!(v.position_count, 0);
    assert_eq!(v.free_cash, 5000.5);
}

#[tokio::test]
async fn validation_messages_are_exact_and_write_nothing() {
    let (_d, s) = store().await;
    s.apply(add("000001", 100, 10.0, Some("2024-01-02")), now())
        .await
        .unwrap();
    let cases: Vec<(PortfolioOp, &str)> = vec![
        (add("600519", 0, 10.0, Some("20240102")), ERR_SHARES),
        (add("600519", -5, 10.0, Some("20240102")), ERR_SHARES),
        (add("600519", 100, 0.0, Some("20240102")), ERR_COST),
        (add("600519", 100, f64::NAN, Some("20240102")), ERR_COST),
        (add("600519", 100, 10.0, None), ERR_BUY_DT_MISSING),
        (add("600519", 100, 10.0, Some("  ")), ERR_BUY_DT_MISSING),
        (
            add("600519", 100, 10.0, Some("20230230")),
            ERR_BUY_DT_INVALID,
        ),
        (
            add("600519", 100, 10.0, Some("2024/01/02")),
            ERR_BUY_DT_INVALID,
        ),
        (add("000001", 100, 10.0, Some("20240102")), ERR_ADD_EXISTS),
        (add("12345", 100, 10.0, Some("20240102")), ERR_BAD_CODE),
        (
            PortfolioOp::Update {
                code: "600519".into(),
                name: None,
                shares: Some(10),
                cost_price: None,
                buy_dt: None,
            },
            ERR_UPDATE_MISSING,
        ),
        (PortfolioOp::SetCash { free_cash: -1.0 }, ERR_CASH),
    ];
    for (op, want) in cases {
        let got = msg(s.apply(op.clone(), now()).await.unwrap_err());
        assert_eq!(got, want, "{op:?}");
    }
    assert_eq!(ERR_SHARES, "shares 必须大于 0");
    assert_eq!(ERR_COST, "cost_price 必须大于 0");
    assert_eq!(ERR_CASH, "free_cash 不能为负数");
    assert_eq!(ERR_BUY_DT_MISSING, "缺少建仓日 buy_dt，请询问用户后再写入");
    assert_eq!(
        ERR_BUY_DT_INVALID,
        "buy_dt 必须是合法日期 YYYYMMDD 或 YYYY-MM-DD"
    );
    assert_eq!(
        ERR_UPDATE_MISSING,
        "持仓不存在，无法 update；请改用 add 并提供建仓日 buy_dt"
    );
    assert_eq!(ERR_ADD_EXISTS, "持仓已存在，无法 add；请改用 update");
    let v = s.view().await.unwrap();
    assert_eq!(v.position_count, 1);
    assert_eq!(v.positions[0].shares, 100);
    assert_eq!(v.free_cash, 0.0);
}

#[tokio::test]
async fn batch_is_all_or_nothing() {
    let (_d, s) = store().await;
    let good = vec![
        add("000001", 100, 10.0, Some("20240102")),
        PortfolioOp::Add {
            code: "600519".into(),
            name: "贵州茅台".into(),
            shares: 10,
            cost_price: 1700.0,
            buy_dt: Some("2024-01-03".into()),
        },
    ];
    let out = s.batch(good, now()).await.unwrap();
    assert_eq!(out.view.position_count, 2);

    // third item invalid: the first two (an update and a new add) must not be written
    let mixed = vec![
        PortfolioOp::Update {
            code: "000001".into(),
            name: None,
            shares: Some(999),
            cost_price: None,
            buy_dt: None,
        },
        add("601318", 100, 50.0, Some("20240104")),
        add("300027", 100, 5.0, None),
        PortfolioOp::Remove {
            code: "000338".into(),
        },
    ];
    let err = s.batch(mixed, now()).await.unwrap_err();
    match &err {
        PortfolioError::Batch { failures } => {
            assert_eq!(failures.len(), 2);
            assert_eq!(failures[0].index, 2);
            assert_eq!(failures[0].message, ERR_BUY_DT_MISSING);
            assert_eq!(failures[1].index, 3);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.to_string(), ERR_BUY_DT_MISSING);
    let v = s.view().await.unwrap();
    assert_eq!(v.position_count, 2);
    assert_eq!(
        v.positions
            .iter()
            .find(|p| p.code == "000001")
            .unwrap()
            .shares,
        100
    );
    assert!(v.positions.iter().all(|p| p.code != "601318"));

    // a duplicate add inside one batch fails on the second item
    let dup = vec![
        add("002572", 100, 5.0, Some("20240102")),
        add("002572", 100, 5.0, Some("20240102")),
    ];
    let err = s.batch(dup, now()).await.unwrap_err();
    assert_eq!(err.to_string(), ERR_ADD_EXISTS);
    assert_eq!(s.view().await.unwrap().position_count, 2);
}

#[tokio::test]
async fn batch_limits() {
    let (_d, s) = store().await;
    assert_eq!(
        msg(s.batch(vec![], now()).await.unwrap_err()),
        "items 必须是非空数组"
    );
    let many: Vec<PortfolioOp> = (0..31)
        .map(|i| add(&format!("600{:03}", i), 100, 10.0, Some("20240102")))
        .collect();
    assert_eq!(
        msg(s.batch(many, now()).await.unwrap_err()),
        "单次最多 30 条，请拆分后重试"
    );
    let cash = vec![PortfolioOp::SetCash { free_cash: 1.0 }];
    assert_eq!(
        msg(s.batch(cash, now()).await.unwrap_err()),
        ERR_BATCH_ACTION
    );
    let thirty: Vec<PortfolioOp> = (0..30)
        .map(|i| add(&format!("600{:03}", i), 100, 10.0, Some("20240102")))
        .collect();
    assert_eq!(
        s.batch(thirty, now()).await.unwrap().view.position_count,
        30
    );
}
