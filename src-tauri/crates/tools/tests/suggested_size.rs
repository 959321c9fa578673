//! A screen candidate's suggested size is the approval's own sizing: for the same code
//! and price on the same account, `suggest_sizes` gives the shares, stop, risk and caps the
//! approval of a buy of those shares shows, and the limits that buy would break; a
//! candidate no lot fits says why; an account with no equity says so. Real SQLite data
//! home with the bundled bars, offline.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chrono::NaiveDate;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::scripted::ScriptedProvider;
use wyckoff_agent::{Approver, CollectingSink, Runtime, RuntimeConfig, SystemClock, ToolRegistry};
use wyckoff_engine::risk_limits::RiskLimits;
use wyckoff_journal::{EntryKind, JournalStore, NewEntry, Source};
use wyckoff_market::{MarketConfig, MarketData, PortfolioOp};
use wyckoff_protocol::{ApprovalDecision, ApprovalPreview, ApprovalRequest, BuyPreview, ToolCall};
use wyckoff_tools::risk::{RiskRules, register_buy_previews, suggest_sizes};

/// Denies every call and keeps the requests it was asked.
#[derive(Default)]
struct Recorder(Mutex<Vec<ApprovalRequest>>);

#[async_trait]
impl Approver for Recorder {
    async fn request(&self, request: ApprovalRequest) -> Option<ApprovalDecision> {
        self.0.lock().unwrap().push(request);
        Some(ApprovalDecision::Deny { reason: None })
    }
}

async fn open() -> (Arc<MarketData>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = MarketConfig::offline(dir.path());
    cfg.clock = Arc::new(wyckoff_market::ManualClock::at_beijing(
        NaiveDate::from_ymd_opt(2026, 12, 1)
            .unwrap()
            .and_hms_opt(16, 0, 0)
            .unwrap(),
    ));
    (Arc::new(MarketData::open_with(cfg).await.unwrap()), dir)
}

/// 100,000 yuan cash, 000338 500 × 10 (stop 9) and 000778 1,000 × 5 (stop 4.5), bought
/// 2020-01-02.
async fn account(md: &MarketData) {
    let p = md.portfolio();
    let now = md.clock().now();
    p.apply(
        PortfolioOp::SetCash {
            free_cash: 100_000.0,
        },
        now,
    )
    .await
    .unwrap();
    for (code, name, shares, cost, stop) in [
        ("000338", "潍柴动力", 500, 10.0, 9.0),
        ("000778", "新兴铸管", 1000, 5.0, 4.5),
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
        p.set_stop_loss(code, Some(stop), now).await.unwrap();
    }
    // The ledger: the positions enter as openings; the cash as a transfer in.
    JournalStore::new(md.pool().clone(), now)
        .await
        .unwrap()
        .record_entry(
            &NewEntry {
                date: 20_200_102,
                name: String::new(),
                kind: EntryKind::CashIn {
                    amount_fen: 10_000_000,
                },
            },
            Source::Manual,
            now,
        )
        .await
        .unwrap();
}

/// The preview the approval of `tool(args)` shows, under `rules`; the call is denied.
async fn preview_of(
    md: &Arc<MarketData>,
    rules: RiskRules,
    tool: &str,
    args: Value,
) -> Option<ApprovalPreview> {
    let mut reg = ToolRegistry::empty();
    wyckoff_tools::register_market_tools(&mut reg, md.clone());
    register_buy_previews(&mut reg, md.clone(), rules);
    let reg = Arc::new(reg);
    let recorder = Arc::new(Recorder::default());
    let runtime = Runtime::new(
        Arc::new(ScriptedProvider::new(Vec::new())),
        reg.clone(),
        RuntimeConfig::default(),
        recorder.clone(),
        None,
        Arc::new(SystemClock),
    );
    let env = runtime.exec_env(CollectingSink::new(), CancellationToken::new());
    let outcome = reg.execute(&ToolCall::new("c1", tool, args), &env).await;
    assert!(outcome.is_error, "denied: {}", outcome.content);
    let asked = recorder.0.lock().unwrap();
    assert_eq!(asked.len(), 1, "one approval asked");
    asked[0].preview.clone()
}

fn buy(p: Option<ApprovalPreview>) -> BuyPreview {
    match p {
        Some(ApprovalPreview::BuySizing(b)) => b,
        other => panic!("expected a buy's sizing, got {other:?}"),
    }
}

fn rules(limits: RiskLimits) -> RiskRules {
    RiskRules {
        risk_bp: 100,
        max_position_bp: 2_000,
        limits,
    }
}

async fn close_of(md: &MarketData, code: &str) -> f64 {
    md.daily_bars(code, None)
        .await
        .unwrap()
        .bars
        .last()
        .unwrap()
        .close
}

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
