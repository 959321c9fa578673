#![allow(clippy::unwrap_used, clippy::expect_used)]

use wyckoff_session::domain::market::portfolio::{
    ERR_ADD_EXISTS, ERR_BUY_DT_INVALID, ERR_COST, ERR_SHARES,
};

use super::*;
use crate::commands::error::CommandErrorKind;
use crate::commands::test_desk::offline;

fn add(code: &str, shares: i64, cost_price: f64, buy_dt: &str) -> PortfolioEdit {
    PortfolioEdit::Add {
        code: code.into(),
        shares,
        cost_price,
        buy_dt: buy_dt.into(),
    }
}

#[test]
fn edits_become_update_portfolio_arguments() {
    let cases = [
        (
            add("000001", 1000, 12.5, "2020-01-02"),
            json!({"action": "add", "code": "000001", "shares": 1000, "cost_price": 12.5, "buy_dt": "2020-01-02"}),
        ),
        (
            PortfolioEdit::Update {
                code: "000001".into(),
                shares: Some(500),
                cost_price: None,
            },
            json!({"action": "update", "code": "000001", "shares": 500}),
        ),
        (
            PortfolioEdit::Remove {
                code: "000001".into(),
            },
            json!({"action": "remove", "code": "000001"}),
        ),
        (
            PortfolioEdit::SetCash { free_cash: 5000.0 },
            json!({"action": "set_cash", "free_cash": 5000.0}),
        ),
    ];
    for (edit, want) in cases {
        assert_eq!(edit_args(&edit), want, "{edit:?}");
    }
}

#[tokio::test]
async fn a_position_shows_its_last_bar_pnl_weight_and_diagnosis() {
    let tmp = tempfile::tempdir().unwrap();
    let desk = offline(tmp.path()).await;
    let md = desk.market();
    let empty = load(&desk).await.unwrap();
    assert!(empty.positions.is_empty());
    assert_eq!(empty.without_quotes, 0);

    let page = apply(&desk, &add("000001", 1000, 12.5, "2020-01-02"))
        .await
        .unwrap();
    let page = apply(&desk, &PortfolioEdit::SetCash { free_cash: 8000.0 })
        .await
        .unwrap_or(page);
    assert_eq!(page.positions.len(), 1);
    assert_eq!(page.free_cash, 8000.0);
    let row = &page.positions[0];
    let bars = md.daily_bars("000001", None).await.unwrap().bars;
    let last = bars.last().unwrap();
    assert_eq!(row.name, "平安银行");
    assert_eq!(row.shares, 1000);
    assert_eq!(row.last_date.as_deref(), Some("2020-06-16"));
    assert_eq!(row.data_status, "stale", "2020 bars are not today's");
    assert!((row.last.unwrap() - last.close).abs() < 0.01);
    let pnl = (last.close - 12.5) * 1000.0;
    assert!((row.pnl_amount.unwrap() - pnl).abs() < 0.01, "{row:?}");
    let pct = (last.close / 12.5 - 1.0) * 100.0;
    assert!((row.pnl_pct.unwrap() - pct).abs() < 0.01, "{row:?}");
    assert_eq!(row.weight_pct, Some(100.0));
    assert!(row.health.is_some());
    assert!(row.verdict.is_some());
    let mv = last.close * 1000.0;
    assert!((page.total_assets.unwrap() - (mv + 8000.0)).abs() < 0.01);
}

#[tokio::test]
async fn refused_edits_say_why_and_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let desk = offline(tmp.path()).await;
    let md = desk.market();
    apply(&desk, &add("000001", 1000, 12.5, "2020-01-02"))
        .await
        .unwrap();
    let unknown = ["688999", "600999", "300999", "002999"]
        .into_iter()
        .find(|c| md.stock_info(&StockCode::parse(c).unwrap()).is_none())
        .unwrap();
    let refused = |e: CommandError| {
        assert_eq!(e.kind, CommandErrorKind::InvalidInput, "{e:?}");
        e.message
    };
    let cases = [
        (add("000338", 1000, -1.0, "2020-01-02"), ERR_COST),
        (add("000338", 0, 10.0, "2020-01-02"), ERR_SHARES),
        (add("000338", 100, 10.0, "2020-02-30"), ERR_BUY_DT_INVALID),
        (add("000001", 100, 10.0, "2020-01-02"), ERR_ADD_EXISTS),
        (
            PortfolioEdit::Update {
                code: "000001".into(),
                shares: Some(-100),
                cost_price: None,
            },
            ERR_SHARES,
        ),
    ];
    for (edit, want) in cases {
        let e = apply(&desk, &edit).await.unwrap_err();
        assert_eq!(refused(e), want, "{edit:?}");
    }
    let e = apply(&desk, &add(unknown, 100, 10.0, "2020-01-02"))
        .await
        .unwrap_err();
    assert!(
        e.kind == CommandErrorKind::NotFound && e.code.as_deref() == Some(unknown),
        "{e:?}"
    );
    let view = md.portfolio().view().await.unwrap();
    assert_eq!(view.positions.len(), 1);
    assert_eq!(view.positions[0].shares, 1000);
    assert_eq!(view.positions[0].cost_price, 12.5);
}

#[tokio::test]
async fn update_and_remove_go_through_the_same_path() {
    let tmp = tempfile::tempdir().unwrap();
    let desk = offline(tmp.path()).await;
    let md = desk.market();
    apply(&desk, &add("000001", 1000, 12.5, "2020-01-02"))
        .await
        .unwrap();
    let page = apply(
        &desk,
        &PortfolioEdit::Update {
            code: "000001".into(),
            shares: Some(1500),
            cost_price: Some(11.0),
        },
    )
    .await
    .unwrap();
    assert_eq!(page.positions[0].shares, 1500);
    assert_eq!(page.positions[0].cost, 11.0);
    let page = apply(
        &desk,
        &PortfolioEdit::Remove {
            code: "000001".into(),
        },
    )
    .await
    .unwrap();
    assert!(page.positions.is_empty());
    assert!(md.portfolio().view().await.unwrap().positions.is_empty());
}

#[tokio::test]
async fn a_holding_without_bars_is_counted_not_priced() {
    let tmp = tempfile::tempdir().unwrap();
    let desk = offline(tmp.path()).await;
    apply(&desk, &add("000001", 1000, 12.5, "2020-01-02"))
        .await
        .unwrap();
    // 600519 is in the stock list but has no bars offline.
    let page = apply(&desk, &add("600519", 100, 1500.0, "2020-01-02"))
        .await
        .unwrap();
    assert_eq!(page.positions.len(), 2);
    assert_eq!(page.without_quotes, 1);
    let unpriced = page.positions.iter().find(|p| p.code == "600519").unwrap();
    assert_eq!(unpriced.last, None);
}

#[tokio::test]
async fn a_holdings_stop_and_target_are_set_from_the_page_and_a_bad_pair_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let desk = offline(tmp.path()).await;
    apply(&desk, &add("002572", 100, 20.0, "2020-01-02"))
        .await
        .unwrap();
    let page = set_levels(&desk, "002572", Some(21.0), Some(23.0))
        .await
        .unwrap();
    let row = &page.positions[0];
    assert_eq!((row.stop_loss, row.target_price), (Some(21.0), Some(23.0)));
    // A target at or under the stop, or no such holding: refused, nothing changed.
    for (code, stop, target) in [
        ("002572", Some(21.0), Some(21.0)),
        ("600519", None, Some(9.0)),
    ] {
        let e = set_levels(&desk, code, stop, target).await.unwrap_err();
        assert_eq!(e.kind, CommandErrorKind::InvalidInput, "{e:?}");
    }
    let row = &load(&desk).await.unwrap().positions[0];
    assert_eq!((row.stop_loss, row.target_price), (Some(21.0), Some(23.0)));
    let cleared = set_levels(&desk, "002572", Some(21.0), None).await.unwrap();
    assert_eq!(cleared.positions[0].target_price, None);
}
