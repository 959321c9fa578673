//! A screen candidate's suggested size is the approval's own sizing: for the same code
//! and price on the same account, `suggest_sizes` gives the shares, stop, risk and caps the
//! approval of a buy of those shares shows, and the limits that buy would break; a
//! candidate no lot fits says why; an account with no equity says so. Real SQLite data
//! home with the bundled bars, offline.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use wyckoff_engine::risk_limits::RiskLimits;
use wyckoff_tools::risk::suggest_sizes;

use support::{account, buy, close_of, open, preview_of, rules};

#[tokio::test]
async fn a_suggested_size_is_the_approvals_sizing_of_the_same_buy() {
    let (md, _dir) = open().await;
    account(&md).await;
    let limits = RiskLimits {
        max_positions: 2,
        drawdown_brake_bp: 0,
        ..RiskLimits::default()
    };
    let codes = ["000001", "300027", "000338"];
    let mut picks = Vec::new();
    for c in codes {
        picks.push((c.to_owned(), close_of(&md, c).await));
    }
    let sizes = suggest_sizes(&md, &rules(limits), &picks).await;
    assert_eq!(sizes.len(), 3);
    let mut sized = 0;
    for (size, (code, price)) in sizes.iter().zip(&picks) {
        assert_eq!(&size.code, code);
        let s = size.sizing.as_ref().expect("sized");
        // The approval of a buy of exactly the suggested shares shows the same sizing.
        let args = json!({"action": "add", "code": code, "shares": s.shares.max(100), "cost_price": price, "buy_dt": "2026-12-01"});
        let b = buy(preview_of(&md, rules(limits), "update_portfolio", args).await);
        let a = b.sizing.unwrap();
        assert_eq!(
            (a.shares, a.stop_e6, a.risk_fen, &a.bound, &a.why_none),
            (s.shares, s.stop_e6, s.risk_fen, &s.bound, &s.why_none),
            "{code}"
        );
        if s.shares > 0 {
            sized += 1;
            assert_eq!(b.breaches, size.breaches, "{code}");
            assert_eq!(
                s.proposed_risk_fen, s.risk_fen,
                "{code}: the suggestion is the buy"
            );
        } else {
            assert!(s.why_none.is_some(), "{code}: no lot fits, said");
        }
    }
    assert!(sized >= 2, "{sizes:?}");
    // A third code is a third position: the 2-position limit is named; a held code is not.
    let new = sizes.iter().find(|z| z.code == "000001").unwrap();
    assert!(
        new.breaches.iter().any(|b| b.name() == "positions"),
        "{new:?}"
    );
    let held = sizes.iter().find(|z| z.code == "000338").unwrap();
    assert!(
        held.breaches.iter().all(|b| b.name() != "positions"),
        "{held:?}"
    );
}

#[tokio::test]
async fn no_equity_no_suggested_size() {
    let (md, _dir) = open().await;
    let price = close_of(&md, "000001").await;
    let sizes = suggest_sizes(
        &md,
        &rules(RiskLimits::default()),
        &[("000001".into(), price)],
    )
    .await;
    assert!(sizes[0].sizing.is_none());
    assert!(
        sizes[0]
            .unavailable
            .as_deref()
            .unwrap()
            .contains("账户没有权益"),
        "{:?}",
        sizes[0]
    );
}
