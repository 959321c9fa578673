//! A buy's approval carries the sizing rules' answer and the account limits it breaks,
//! worked out by the core when the request is raised: through the agent's registry and
//! approval gate, against a real SQLite data home with the bundled bars, offline.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use wyckoff_engine::risk_limits::RiskLimits;
use wyckoff_engine::sizing::risk_fen;
use wyckoff_journal::review::daily_values;
use wyckoff_journal::valuation::closes_of;
use wyckoff_journal::{Closes, JournalStore};
use wyckoff_market::MarketData;
use wyckoff_protocol::RiskBreach;

use support::{account, buy, open, preview_of, rules};

/// The ledger's own last valued day: its NAV and drawdown (percent, ≤ 0).
async fn ledger_last(md: &MarketData) -> (i64, f64) {
    let now = md.clock().now();
    let entries = JournalStore::new(md.pool().clone(), now)
        .await
        .unwrap()
        .entries(now)
        .await
        .unwrap();
    let mut closes = Closes::new();
    for code in ["000338", "000778"] {
        let raw = md.raw_closes(code, 0..=u32::MAX).await.unwrap();
        closes.insert(code.to_owned(), closes_of(&raw));
    }
    let (days, _) = daily_values(&entries, &closes).unwrap();
    let last = days.last().unwrap();
    (last.nav_fen, last.drawdown_pct)
}

#[tokio::test]
async fn a_buy_shows_the_rules_size_its_risk_and_the_limits_it_breaks() {
    let (md, _dir) = open().await;
    account(&md).await;
    let last = md
        .daily_bars("000001", None)
        .await
        .unwrap()
        .bars
        .last()
        .copied()
        .unwrap();
    let (nav, drawdown) = ledger_last(&md).await;
    let limits = RiskLimits {
        max_positions: 2,
        drawdown_brake_bp: 0,
        ..RiskLimits::default()
    };
    let args = json!({"action": "add", "code": "000001", "shares": 300, "cost_price": last.close, "buy_dt": "2026-12-01"});
    let b = buy(preview_of(&md, rules(limits), "update_portfolio", args).await);
    assert_eq!(
        (b.code.as_str(), b.name.as_str(), b.proposed_shares),
        ("000001", "平安银行", 300)
    );
    let s = b.sizing.expect("sized");
    assert_eq!(s.equity_fen, nav, "the ledger's NAV");
    assert_eq!(s.risk_budget_fen, nav / 100, "1 % of equity");
    // The rules' shares: a whole lot, the risk at the stop within the budget, one more lot not.
    assert!(s.shares > 0 && s.shares.is_multiple_of(100), "{}", s.shares);
    assert!(s.stop_e6 < b.entry_e6);
    assert!(
        s.risk_fen <= s.risk_budget_fen,
        "{} > {}",
        s.risk_fen,
        s.risk_budget_fen
    );
    let date = 20_261_201;
    assert_eq!(
        risk_fen(s.shares, b.entry_e6, s.stop_e6, date),
        Some(s.risk_fen)
    );
    assert_eq!(
        risk_fen(300, b.entry_e6, s.stop_e6, date),
        Some(s.proposed_risk_fen)
    );
    let more = risk_fen(s.shares + 100, b.entry_e6, s.stop_e6, date).unwrap();
    assert!(more > s.risk_budget_fen || !s.bound.is_empty(), "{more}");
    // A third position with two allowed.
    assert_eq!(
        b.breaches,
        vec![RiskBreach::Positions { count: 3, limit: 2 }]
    );
    // What the figures rest on is said: the ledger valued at adjusted closes here.
    assert!(
        b.notes.iter().any(|n| n.starts_with("账户净值：")),
        "{:?}",
        b.notes
    );

    // The drawdown brake reads the ledger's drawdown: a limit at it holds, one past it not.
    let at = (-drawdown * 100.0).round() as u32;
    assert!(at > 0, "the ledger has a drawdown here: {drawdown}");
    for (limit, holds) in [(at, true), (at + 1, false)] {
        let brake = RiskLimits {
            drawdown_brake_bp: limit,
            ..RiskLimits::default()
        };
        let args = json!({"side": "buy", "code": "000338", "shares": 100, "price": 10.0});
        let b = buy(preview_of(&md, rules(brake), "record_fill", args).await);
        assert_eq!(
            b.breaches.iter().any(|x| x.name() == "drawdown"),
            holds,
            "{limit}: {:?}",
            b.breaches
        );
    }

    // Adding to a held code is no new position.
    let args = json!({"side": "buy", "code": "000338", "shares": 100, "price": 10.0});
    let b = buy(preview_of(&md, rules(limits), "record_fill", args).await);
    assert!(b.breaches.is_empty(), "{:?}", b.breaches);

    // Heat: 500 × (close − 9) + 1000 × (close − 4.5) held; a cap of 0.01 % leaves no room.
    let heat = RiskLimits {
        max_heat_bp: 1,
        drawdown_brake_bp: 0,
        ..RiskLimits::default()
    };
    let args = json!({"side": "buy", "code": "000338", "shares": 100, "price": 10.0});
    let b = buy(preview_of(&md, rules(heat), "record_fill", args).await);
    assert_eq!(
        b.breaches.iter().map(RiskBreach::name).collect::<Vec<_>>(),
        ["heat"]
    );
}

#[tokio::test]
async fn a_call_that_is_not_one_buy_has_no_sizing() {
    let (md, _dir) = open().await;
    account(&md).await;
    let limits = RiskLimits::default();
    for (tool, args) in [
        (
            "record_fill",
            json!({"side": "sell", "code": "000338", "shares": 100, "price": 10.0}),
        ),
        (
            "update_portfolio",
            json!({"action": "remove", "code": "000338"}),
        ),
        (
            "update_portfolio",
            json!({"action": "set_cash", "free_cash": 5.0}),
        ),
    ] {
        assert_eq!(
            preview_of(&md, rules(limits), tool, args.clone()).await,
            None,
            "{tool} {args}"
        );
    }
}

#[tokio::test]
async fn a_stock_without_bars_is_said_not_sized_and_still_checked() {
    let (md, _dir) = open().await;
    account(&md).await;
    let limits = RiskLimits {
        max_positions: 2,
        drawdown_brake_bp: 0,
        ..RiskLimits::default()
    };
    let args = json!({"side": "buy", "code": "600519", "shares": 100, "price": 1500.0});
    let b = buy(preview_of(&md, rules(limits), "record_fill", args).await);
    assert!(b.sizing.is_none());
    assert!(
        b.unavailable.as_deref().unwrap_or("").contains("600519"),
        "{:?}",
        b.unavailable
    );
    assert!(
        !b.notes.iter().any(|n| n.starts_with("没有止损的持仓")),
        "both holdings have stops: {:?}",
        b.notes
    );
    // No stop known: all of it (150,000 yuan, more than the equity) is at risk; a third position.
    assert_eq!(
        b.breaches.iter().map(RiskBreach::name).collect::<Vec<_>>(),
        ["heat", "positions"]
    );
}
