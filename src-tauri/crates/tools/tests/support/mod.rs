//! The account the sizing tests share: a real SQLite data home over the bundled bars on
//! 2026-12-01 (offline), two stopped positions and the ledger's cash, and the approval
//! preview a registry's gate raises for a call (the call denied).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chrono::NaiveDate;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use wyckoff_agent::scripted::ScriptedProvider;
use wyckoff_agent::{Approver, CollectingSink, Runtime, RuntimeConfig, SystemClock, ToolRegistry};
use wyckoff_engine::risk_limits::RiskLimits;
use wyckoff_journal::{EntryKind, JournalStore, NewEntry, Source};
use wyckoff_market::{MarketConfig, MarketData, PortfolioOp};
use wyckoff_protocol::{ApprovalDecision, ApprovalPreview, ApprovalRequest, BuyPreview, ToolCall};
use wyckoff_tools::risk::{RiskRules, register_buy_previews};

/// Denies every call and keeps the requests it was asked.
#[derive(Default)]
pub struct Recorder(pub Mutex<Vec<ApprovalRequest>>);

#[async_trait]
impl Approver for Recorder {
    async fn request(&self, request: ApprovalRequest) -> Option<ApprovalDecision> {
        self.0.lock().unwrap().push(request);
        Some(ApprovalDecision::Deny { reason: None })
    }
}

/// A data home on 2026-12-01 16:00 Beijing, offline over the bundled bars.
pub async fn open() -> (Arc<MarketData>, tempfile::TempDir) {
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
pub async fn account(md: &MarketData) {
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
pub async fn preview_of(
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

/// The buy's sizing of a preview; anything else fails the test.
pub fn buy(p: Option<ApprovalPreview>) -> BuyPreview {
    match p {
        Some(ApprovalPreview::BuySizing(b)) => b,
        other => panic!("expected a buy's sizing, got {other:?}"),
    }
}

/// 1 % risk a trade, 20 % the largest position, under `limits`.
pub fn rules(limits: RiskLimits) -> RiskRules {
    RiskRules {
        risk_bp: 100,
        max_position_bp: 2_000,
        limits,
    }
}

/// A code's last cached close.
pub async fn close_of(md: &MarketData, code: &str) -> f64 {
    md.daily_bars(code, None)
        .await
        .unwrap()
        .bars
        .last()
        .unwrap()
        .close
}
