//! A buy's approval carries the sizing rules' answer and the account limits it breaks,
//! worked out by the core when the request is raised: through the agent's registry and
//! approval gate, against a real SQLite data home with the bundled bars, offline.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use wyckoff_engine::risk_limits::RiskLimits;
use wyckoff_engine::sizing::{buy_cost_fen, risk_fen};
use wyckoff_journal::review::daily_values;
use wyckoff_journal::valuation::closes_of;
use wyckoff_journal::{Closes, EntryKind, JournalStore, NewEntry, Source};
use wyckoff_market::{MarketData, PortfolioOp};
use wyckoff_protocol::RiskBreach;
use wyckoff_tools::risk::RiskRules;

use support::{account, buy, close_of, open, preview_of, rules};

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

/// Every account limit off: only the rules a proposal is sized by can be broken.
fn all_off() -> RiskLimits {
    RiskLimits {
        max_heat_bp: 0,
        max_industry_bp: 0,
        max_positions: 0,
        drawdown_brake_bp: 0,
        max_stop_outs: 0,
        ..RiskLimits::default()
    }
}

/// The portfolio's cash, in fen (no ledger: the equity is the cash and the holdings).
async fn set_cash(md: &MarketData, fen: i64) {
    md.portfolio()
        .apply(
            PortfolioOp::SetCash {
                free_cash: fen as f64 / 100.0,
            },
            md.clock().now(),
        )
        .await
        .unwrap();
}

/// Holds `shares` of `code` bought at `price` (no stop).
async fn hold(md: &MarketData, code: &str, shares: i64, price: f64) {
    md.portfolio()
        .apply(
            PortfolioOp::Add {
                code: code.into(),
                name: format!("股票{code}"),
                shares,
                cost_price: price,
                buy_dt: Some("2020-01-02".into()),
            },
            md.clock().now(),
        )
        .await
        .unwrap();
}

/// Pays `fen` into the account ledger (on the holdings' opening day).
async fn cash_in(md: &MarketData, fen: i64) {
    let now = md.clock().now();
    JournalStore::new(md.pool().clone(), now)
        .await
        .unwrap()
        .record_entry(
            &NewEntry {
                date: 20_200_102,
                name: String::new(),
                kind: EntryKind::CashIn { amount_fen: fen },
            },
            Source::Manual,
            now,
        )
        .await
        .unwrap();
}

fn sized_by(risk_bp: u32, max_position_bp: u32) -> RiskRules {
    RiskRules {
        risk_bp,
        max_position_bp,
        limits: all_off(),
    }
}

fn pct_of(fen: i64, equity_fen: i64) -> f64 {
    (fen as f64 * 1e4 / equity_fen as f64).round() / 100.0
}

#[tokio::test]
async fn a_proposal_over_its_trade_risk_position_or_cash_is_flagged() {
    let (md, _dir) = open().await;
    let date = 20_261_201;
    let entry = close_of(&md, "000001").await;
    let fill = |n: u64| json!({"side": "buy", "code": "000001", "shares": n, "price": entry});
    // The stop the rules take at the close (it does not depend on the account).
    set_cash(&md, 100_000_000).await;
    let first = buy(preview_of(&md, sized_by(100, 10_000), "record_fill", fill(100)).await);
    let entry_e6 = first.entry_e6;
    let stop_e6 = first.sizing.unwrap().stop_e6;
    let n = 1_000u64;

    // The risk per trade: 1 % of the equity is exactly what n shares lose at the stop.
    let risk_n = risk_fen(n, entry_e6, stop_e6, date).unwrap();
    let equity = risk_n * 100;
    set_cash(&md, equity).await;
    let at = buy(preview_of(&md, sized_by(100, 10_000), "record_fill", fill(n)).await);
    let s = at.sizing.unwrap();
    assert_eq!(
        (
            s.equity_fen,
            s.risk_budget_fen,
            s.proposed_risk_fen,
            s.shares
        ),
        (equity, risk_n, risk_n, n),
        "exactly on the budget"
    );
    assert!(at.breaches.is_empty(), "{:?}", at.breaches);
    let over = buy(preview_of(&md, sized_by(100, 10_000), "record_fill", fill(n + 100)).await);
    let risk_more = risk_fen(n + 100, entry_e6, stop_e6, date).unwrap();
    assert_eq!(
        over.breaches,
        vec![RiskBreach::TradeRisk {
            risk_pct: pct_of(risk_more, equity),
            limit_pct: 1.0
        }]
    );

    // The largest position: 50 % of the equity is exactly the cost of n shares.
    let cost_n = buy_cost_fen(n, entry_e6, date).unwrap();
    set_cash(&md, cost_n * 2).await;
    let at = buy(preview_of(&md, sized_by(10_000, 5_000), "record_fill", fill(n)).await);
    assert_eq!(at.sizing.unwrap().shares, n, "the position cap allows n");
    assert!(at.breaches.is_empty(), "{:?}", at.breaches);
    let over = buy(preview_of(&md, sized_by(10_000, 5_000), "record_fill", fill(n + 100)).await);
    let cost_more = buy_cost_fen(n + 100, entry_e6, date).unwrap();
    assert_eq!(
        over.breaches,
        vec![RiskBreach::PositionSize {
            cost_pct: pct_of(cost_more, cost_n * 2),
            limit_pct: 50.0
        }]
    );

    // The cash: exactly the cost of n shares, the rest of the equity in another stock.
    // (with a holding the ledger has valued days: its cash is what was paid in)
    hold(&md, "000338", 10_000, 10.0).await;
    cash_in(&md, cost_n).await;
    let at = buy(preview_of(&md, sized_by(10_000, 10_000), "record_fill", fill(n)).await);
    assert_eq!(at.sizing.unwrap().shares, n, "the cash allows n");
    assert!(at.breaches.is_empty(), "{:?}", at.breaches);
    let over = buy(preview_of(&md, sized_by(10_000, 10_000), "record_fill", fill(n + 100)).await);
    assert_eq!(
        over.breaches,
        vec![RiskBreach::Cash {
            cost_fen: cost_more,
            cash_fen: cost_n
        }]
    );

    // A suggested size (the rules' own shares) is never flagged by them: the same three
    // accounts give no own breach to the decision's or the screen's sizes.
    let picks = [("000001".to_owned(), entry)];
    let suggested = wyckoff_tools::risk::suggest_sizes(&md, &sized_by(100, 1_000), &picks).await;
    assert!(suggested[0].breaches.is_empty(), "{:?}", suggested[0]);
}

#[tokio::test]
async fn an_add_counts_the_shares_already_held_against_the_position_cap() {
    let (md, _dir) = open().await;
    let date = 20_261_201;
    let entry = close_of(&md, "000001").await;
    let entry_e6 = wyckoff_engine::sizing::price_e6(entry).unwrap();
    // 1,500 shares held beside 8,500 shares' worth of cash: about 15 % of the equity, so
    // a 20 % cap leaves about 5 % for an add.
    hold(&md, "000001", 1_500, entry).await;
    cash_in(&md, 8_500 * entry_e6 / 10_000).await;
    let held_fen = 1_500 * entry_e6 / 10_000;
    let fill = |n: u64| json!({"side": "buy", "code": "000001", "shares": n, "price": entry});
    let first = buy(preview_of(&md, sized_by(10_000, 2_000), "record_fill", fill(100)).await);
    let s = first.sizing.unwrap();
    let equity = s.equity_fen;
    let held_pct = held_fen as f64 * 100.0 / equity as f64;
    assert!((14.0..16.0).contains(&held_pct), "{held_pct}");
    // The rules' add: the most whole lots whose cost fits what the cap leaves.
    let room = equity / 5 - held_fen;
    let fits = |n: u64| buy_cost_fen(n, entry_e6, date).unwrap() <= room;
    let n = s.shares;
    assert!(
        n > 0 && n.is_multiple_of(100) && fits(n) && !fits(n + 100),
        "{s:?}"
    );
    assert!(
        buy_cost_fen(n, entry_e6, date).unwrap() * 100 / equity <= 6,
        "about 5 % added, not 20 %: {s:?}"
    );
    assert!(
        s.bound.iter().any(|b| b.contains("已持有")),
        "the held value is named: {:?}",
        s.bound
    );
    let at = buy(preview_of(&md, sized_by(10_000, 2_000), "record_fill", fill(n)).await);
    assert!(at.breaches.is_empty(), "{:?}", at.breaches);
    let over = buy(preview_of(&md, sized_by(10_000, 2_000), "record_fill", fill(n + 100)).await);
    let cost = buy_cost_fen(n + 100, entry_e6, date).unwrap();
    assert_eq!(
        over.breaches,
        vec![RiskBreach::PositionSize {
            cost_pct: pct_of(cost + held_fen, equity),
            limit_pct: 20.0
        }]
    );
    // A code not held on the same account keeps the whole 20 %.
    let other = close_of(&md, "000778").await;
    let per = wyckoff_engine::sizing::price_e6(other).unwrap();
    let args = json!({"side": "buy", "code": "000778", "shares": 100, "price": other});
    let fresh = buy(preview_of(&md, sized_by(10_000, 2_000), "record_fill", args).await);
    let s = fresh.sizing.unwrap();
    let cap = equity / 5;
    assert!(
        buy_cost_fen(s.shares, per, date).unwrap() <= cap
            && buy_cost_fen(s.shares + 100, per, date).unwrap() > cap,
        "{s:?}"
    );
}
