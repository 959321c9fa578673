//! A batch `update_portfolio` (several positions in one call) raises one approval that
//! previews every line: each add sized and checked as the approval of that one buy would
//! be, on the account with the batch's earlier lines applied, so the line that crosses a
//! limit is the one flagged; then the batch's total effect on heat and the number of
//! positions, and the limits the whole batch breaks. Through the registry's approval gate,
//! against a real SQLite data home with the bundled bars, offline.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use wyckoff_engine::risk_limits::RiskLimits;
use wyckoff_protocol::{ApprovalPreview, BatchPreview};

use support::{account, buy, close_of, open, preview_of, rules};

fn batch(p: Option<ApprovalPreview>) -> BatchPreview {
    match p {
        Some(ApprovalPreview::BatchSizing(b)) => b,
        other => panic!("expected a batch's preview, got {other:?}"),
    }
}

#[tokio::test]
async fn each_line_of_a_batch_buy_is_sized_and_the_batch_sums_up() {
    let (md, _dir) = open().await;
    account(&md).await;
    // Two positions held: a limit of three lets the first new one in, not the second.
    let limits = RiskLimits {
        max_positions: 3,
        drawdown_brake_bp: 0,
        ..RiskLimits::default()
    };
    let (p1, p2) = (close_of(&md, "000001").await, close_of(&md, "300027").await);
    let items = json!([
        {"code": "000001", "shares": 100, "cost_price": p1, "buy_dt": "2026-12-01"},
        {"code": "300027", "shares": 100, "cost_price": p2, "buy_dt": "2026-12-01"}
    ]);
    let b = batch(
        preview_of(
            &md,
            rules(limits),
            "update_portfolio",
            json!({"action": "add", "items": items}),
        )
        .await,
    );
    assert_eq!(b.unavailable, None);
    assert_eq!(b.lines.len(), 2);
    assert_eq!(
        b.lines.iter().map(|l| l.code.as_str()).collect::<Vec<_>>(),
        ["000001", "300027"]
    );

    // The first line is exactly the approval of that one buy.
    let one = buy(
        preview_of(
            &md,
            rules(limits),
            "update_portfolio",
            json!({"action": "add", "code": "000001", "shares": 100, "cost_price": p1, "buy_dt": "2026-12-01"}),
        )
        .await,
    );
    let first = b.lines[0].buy.as_ref().expect("the add is sized");
    assert_eq!(first.sizing, one.sizing);
    assert_eq!(first.breaches, one.breaches);
    assert_eq!(b.lines[0].held_shares, 0);
    assert_eq!(b.lines[0].shares, Some(100));
    assert!(
        first.breaches.iter().all(|x| x.name() != "positions"),
        "the third position is allowed: {first:?}"
    );

    // The second line sees the first applied: the fourth position breaks the limit.
    let second = b.lines[1].buy.as_ref().expect("the add is sized");
    assert!(
        second.breaches.iter().any(|x| matches!(
            x,
            wyckoff_protocol::RiskBreach::Positions { count: 4, limit: 3 }
        )),
        "{second:?}"
    );
    assert!(second.sizing.is_some(), "{second:?}");

    // The batch's total: two positions more, the heat up by the two buys' open risk.
    assert_eq!((b.positions_before, b.positions_after), (2, 4));
    assert_eq!(b.max_positions, 3);
    assert!(b.heat_after_pct > b.heat_before_pct, "{b:?}");
    assert!(
        b.breaches.iter().any(|x| x.name() == "positions"),
        "{:?}",
        b.breaches
    );
}

#[tokio::test]
async fn a_batch_that_removes_lowers_the_heat_and_breaks_nothing() {
    let (md, _dir) = open().await;
    account(&md).await;
    // Over the positions limit already: removing one still leaves it over, but lowers it.
    let limits = RiskLimits {
        max_positions: 1,
        max_heat_bp: 1,
        drawdown_brake_bp: 0,
        ..RiskLimits::default()
    };
    let b = batch(
        preview_of(
            &md,
            rules(limits),
            "update_portfolio",
            json!({"action": "remove", "items": [{"code": "000338"}, {"code": "000001"}]}),
        )
        .await,
    );
    assert_eq!((b.positions_before, b.positions_after), (2, 1));
    assert!(b.heat_after_pct < b.heat_before_pct, "{b:?}");
    assert!(b.breaches.is_empty(), "{:?}", b.breaches);
    assert_eq!(b.lines[0].held_shares, 500);
    assert_eq!(b.lines[0].shares, None);
    assert!(b.lines.iter().all(|l| l.buy.is_none()));
    // A code not held is said as held 0 and changes nothing.
    assert_eq!(b.lines[1].held_shares, 0);

    // An update to more shares raises the heat; over a heat limit it is flagged.
    let b = batch(
        preview_of(
            &md,
            rules(limits),
            "update_portfolio",
            json!({"action": "update", "items": [{"code": "000338", "shares": 1500}]}),
        )
        .await,
    );
    assert_eq!(b.lines[0].held_shares, 500);
    assert_eq!(b.lines[0].shares, Some(1500));
    assert!(b.heat_after_pct > b.heat_before_pct, "{b:?}");
    assert!(
        b.breaches.iter().any(|x| x.name() == "heat"),
        "{:?}",
        b.breaches
    );
    assert!(
        b.breaches.iter().all(|x| x.name() != "positions"),
        "no position added: {:?}",
        b.breaches
    );
}
