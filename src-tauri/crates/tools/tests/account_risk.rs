//! The account's risk as the portfolio page and the approvals read it
//! (`wyckoff_tools::risk::account_risk`, behind `Desk::portfolio_risk`): the heat to each
//! holding's stop (a holding without a stop at its whole value, and named), the positions,
//! and the live stop-out brake counted from the ledger's losing sales, on a real SQLite
//! data home over the bundled bars, offline.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use wyckoff_engine::risk_limits::RiskLimits;
use wyckoff_journal::ledger::Side;
use wyckoff_journal::{EntryKind, JournalStore, NewEntry, NewFill, Source};
use wyckoff_market::{MarketData, PortfolioOp};
use wyckoff_protocol::RiskBreach;
use wyckoff_tools::risk::{EquitySource, account_risk};

use support::open;

/// Records `kind` on `date` in the ledger.
async fn record(md: &MarketData, date: u32, kind: EntryKind) {
    let now = md.clock().now();
    JournalStore::new(md.pool().clone(), now)
        .await
        .unwrap()
        .record_entry(
            &NewEntry {
                date,
                name: String::new(),
                kind,
            },
            Source::Manual,
            now,
        )
        .await
        .unwrap();
}

/// 100,000 yuan in; 000338 500 × 10 with a stop at 9, 000778 1,000 × 5 with none; and
/// 300 shares of 000001 bought at 5.00 on 2026-11-02, sold 100 at a time at 4.00 (a loss
/// each) on `sales`.
async fn account_with_losses(md: &MarketData, sales: [u32; 3]) {
    let p = md.portfolio();
    let now = md.clock().now();
    for (code, name, shares, cost, stop) in [
        ("000338", "潍柴动力", 500, 10.0, Some(9.0)),
        ("000778", "新兴铸管", 1000, 5.0, None),
    ] {
        p.apply(
            PortfolioOp::Add {
                code: code.into(),
                name: name.into(),
                shares,
                cost_price: cost,
                buy_dt: Some("2020-01-02".into()),
            },
            now,
        )
        .await
        .unwrap();
        p.set_stop_loss(code, stop, now).await.unwrap();
    }
    record(
        md,
        20_200_102,
        EntryKind::CashIn {
            amount_fen: 10_000_000,
        },
    )
    .await;
    let fill = |side: Side, date: u32, price_e6: i64, shares: i64| NewFill {
        code: "000001".into(),
        name: "平安银行".into(),
        side,
        date,
        price_e6,
        shares,
        fees: None,
    };
    let store = JournalStore::new(md.pool().clone(), now).await.unwrap();
    store
        .record(
            &fill(Side::Buy, 20_261_102, 5_000_000, 300),
            Source::Manual,
            now,
        )
        .await
        .unwrap();
    for date in sales {
        store
            .record(&fill(Side::Sell, date, 4_000_000, 100), Source::Manual, now)
            .await
            .unwrap();
    }
}

/// The last raw close of `code`, in millionths.
async fn last_raw(md: &MarketData, code: &str) -> i64 {
    md.raw_closes(code, 0..=u32::MAX)
        .await
        .unwrap()
        .closes
        .last()
        .unwrap()
        .close_e6
}

/// `shares × per_share_e6` in fen, rounded up (as the engine counts a risk).
fn fen_up(shares: i64, per_share_e6: i64) -> i64 {
    (shares * per_share_e6 + 9_999).div_euclid(10_000)
}

#[tokio::test]
async fn heat_positions_and_the_stop_out_brake_from_the_ledger() {
    // Today is 2026-12-01: the window of 10 days holds 2026-11-22 .. 2026-12-01.
    let (md, _dir) = open().await;
    account_with_losses(&md, [20_261_122, 20_261_125, 20_261_201]).await;
    let limits = RiskLimits::default();
    let r = account_risk(&md, &limits).await.unwrap();
    assert!(
        matches!(r.equity_source, EquitySource::Ledger { .. }),
        "{:?}",
        r.equity_source
    );
    let risk = &r.risk;
    assert_eq!(risk.positions, 2);
    // 000338 to its stop; 000778 without one at its whole value, and named.
    let (p338, p778) = (last_raw(&md, "000338").await, last_raw(&md, "000778").await);
    let heat = fen_up(500, (p338 - 9_000_000).max(0)) + fen_up(1000, p778);
    assert_eq!(risk.heat_fen, heat, "{risk:?}");
    assert_eq!(risk.unstopped, vec!["000778".to_owned()]);
    assert!(
        r.notes
            .iter()
            .any(|n| n.starts_with("没有止损的持仓按全部市值计入总风险") && n.contains("000778")),
        "{:?}",
        r.notes
    );
    if let Some(top) = &risk.largest_industry {
        let share = top.value_fen as f64 * 100.0 / risk.equity_fen as f64;
        assert!((share - top.share_pct).abs() < 0.01, "{top:?}");
    }
    // Three losing sales in the window, three allowed: the brake holds.
    assert_eq!(risk.recent_stop_outs, 3);
    assert_eq!(
        risk.brake,
        vec![RiskBreach::StopOuts {
            count: 3,
            days: 10,
            limit: 3
        }]
    );

    // The first sale a day earlier (2026-11-21, ten days back) is out of the window: two
    // left, and the brake lifts.
    let (md, _dir) = open().await;
    account_with_losses(&md, [20_261_121, 20_261_125, 20_261_201]).await;
    let r = account_risk(&md, &limits).await.unwrap();
    assert_eq!(r.risk.recent_stop_outs, 2);
    assert!(r.risk.brake.is_empty(), "{:?}", r.risk.brake);
    // A limit of two holds it again; a limit of zero is off.
    let two = RiskLimits {
        max_stop_outs: 2,
        ..limits
    };
    let r = account_risk(&md, &two).await.unwrap();
    assert_eq!(r.risk.brake.len(), 1, "{:?}", r.risk.brake);
    let off = RiskLimits {
        max_stop_outs: 0,
        ..limits
    };
    assert!(account_risk(&md, &off).await.unwrap().risk.brake.is_empty());
}
