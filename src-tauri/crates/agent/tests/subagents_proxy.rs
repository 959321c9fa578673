//! The sub-agent tool proxy over the session's real registry: whitelist (the registry
//! is never reached for a refused tool), visible schemas, per-tool timeout and deadline
//! as tool errors rather than hangs, and approval still gated.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use wyckoff_agent::scripted::ScriptedProvider;
use wyckoff_agent::subagents::{SubAgentToolProxy, role};
use wyckoff_agent::{
    CollectingSink, ExecEnv, HeadlessApprover, Runtime, RuntimeConfig, SystemClock, ToolRegistry,
    ToolSpec,
};
use wyckoff_protocol::RuntimeEvent;

struct Counters {
    portfolio_updates: Arc<AtomicUsize>,
    analyses: Arc<AtomicUsize>,
}

fn registry() -> (ToolRegistry, Counters) {
    let counters = Counters {
        portfolio_updates: Arc::default(),
        analyses: Arc::default(),
    };
    let mut reg = ToolRegistry::new();
    let updates = counters.portfolio_updates.clone();
    reg.register(tool(
        ToolSpec::new("update_portfolio", "调仓操作"),
        obj(json!({"code": {"type": "string"}}), &[]),
        move |_, _| {
            let updates = updates.clone();
            async move {
                updates.fetch_add(1, Ordering::SeqCst);
                Ok(json!({"success": true}))
            }
        },
    ));
    let analyses = counters.analyses.clone();
    reg.register(tool(
        ToolSpec::new("analyze_stock", "个股分析"),
        obj(json!({"code": {"type": "string"}}), &["code"]),
        move |args, _| {
            let analyses = analyses.clone();
            async move {
                analyses.fetch_add(1, Ordering::SeqCst);
                Ok(json!({"code": args["code"], "phase": "吸筹"}))
            }
        },
    ));
    reg.register(tool(
        ToolSpec::new("get_market_history", "历史行情"),
        obj(json!({}), &[]),
        |_, _| async move {
            tokio::time::sleep(Duration::from_secs(3_600)).await;
            Ok(json!({"never": true}))
        },
    ));
    reg.register(tool(
        ToolSpec::new("portfolio", "持仓").requires_approval(),
        obj(json!({}), &[]),
        |_, _| async move { Ok(json!({"holdings": []})) },
    ));
    (reg, counters)
}

fn env(registry: Arc<ToolRegistry>, sink: Arc<CollectingSink>) -> ExecEnv {
    let runtime = Runtime::new(
        Arc::new(ScriptedProvider::new(vec![])),
        registry,
        RuntimeConfig {
            tool_timeout: None,
            ..RuntimeConfig::default()
        },
        Arc::new(HeadlessApprover::Never),
        None,
        Arc::new(SystemClock),
    );
    runtime.exec_env(sink, CancellationToken::new())
}

#[tokio::test]
async fn refused_tool_never_reaches_the_registry_and_allowed_tool_runs() {
    let (reg, counters) = registry();
    let reg = Arc::new(reg);
    let sink = CollectingSink::new();
    let env = env(reg.clone(), sink.clone());
    let trading = role("trading").unwrap();
    let proxy = SubAgentToolProxy::new(reg, trading, Instant::now() + trading.timeout);

    let refused = proxy
        .execute(
            &call("c1", "update_portfolio", json!({"code": "600519"})),
            &env,
        )
        .await;
    assert!(refused.is_error);
    assert_eq!(
        refused.error_text(),
        "sub-agent 无权调用工具: update_portfolio"
    );
    assert_eq!(counters.portfolio_updates.load(Ordering::SeqCst), 0);

    let ok = proxy
        .execute(
            &call("c2", "analyze_stock", json!({"code": "600519"})),
            &env,
        )
        .await;
    assert!(!ok.is_error, "{}", ok.content);
    assert_eq!(ok.result["phase"], json!("吸筹"));
    assert_eq!(counters.analyses.load(Ordering::SeqCst), 1);

    let errors: Vec<String> = sink
        .events()
        .into_iter()
        .filter_map(|e| match e {
            RuntimeEvent::ToolError { id, error, .. } => Some(format!("{id}:{error}")),
            _ => None,
        })
        .collect();
    assert_eq!(errors, ["c1:sub-agent 无权调用工具: update_portfolio"]);
}

#[tokio::test]
async fn model_sees_only_the_role_tools_the_session_has() {
    let (reg, _) = registry();
    let reg = Arc::new(reg);
    let research = role("research").unwrap();
    let proxy = SubAgentToolProxy::new(reg.clone(), research, Instant::now() + research.timeout);
    let names: Vec<String> = proxy.schemas().into_iter().map(|s| s.name).collect();
    // registration order; portfolio and update_portfolio are not research tools
    assert_eq!(
        names,
        [
            "check_background_tasks",
            "analyze_stock",
            "get_market_history"
        ]
    );
    let trading = role("trading").unwrap();
    let proxy = SubAgentToolProxy::new(reg, trading, Instant::now() + trading.timeout);
    let names: Vec<String> = proxy.schemas().into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["analyze_stock", "get_market_history", "portfolio"]);
}

#[tokio::test(start_paused = true)]
async fn a_slow_tool_is_a_tool_error_after_the_per_tool_timeout() {
    let (reg, _) = registry();
    let reg = Arc::new(reg);
    let env = env(reg.clone(), CollectingSink::new());
    let trading = role("trading").unwrap();
    let started = Instant::now();
    let proxy = SubAgentToolProxy::new(reg, trading, started + trading.timeout);
    let outcome = proxy
        .execute(&call("c1", "get_market_history", json!({})), &env)
        .await;
    assert!(outcome.is_error);
    assert_eq!(
        outcome.error_text(),
        "sub-agent 工具调用超时: get_market_history > 45s"
    );
    assert_eq!(Instant::now() - started, Duration::from_secs(45));
}

#[tokio::test(start_paused = true)]
async fn the_deadline_bounds_a_call_more_tightly_than_the_tool_timeout() {
    let (reg, _) = registry();
    let reg = Arc::new(reg);
    let env = env(reg.clone(), CollectingSink::new());
    let research = role("research").unwrap();
    let started = Instant::now();
    let proxy = SubAgentToolProxy::new(reg.clone(), research, started + Duration::from_secs(7));
    let outcome = proxy
        .execute(&call("c1", "get_market_history", json!({})), &env)
        .await;
    assert_eq!(
        outcome.error_text(),
        "sub-agent 工具调用超时: get_market_history > 7s"
    );
    assert_eq!(Instant::now() - started, Duration::from_secs(7));

    // past the deadline nothing runs
    let late = proxy
        .execute(
            &call("c2", "analyze_stock", json!({"code": "600519"})),
            &env,
        )
        .await;
    assert_eq!(late.error_text(), "sub-agent 工具调用超时: analyze_stock");
}

#[tokio::test]
async fn a_tool_needing_approval_still_passes_the_session_gate() {
    let (reg, _) = registry();
    let reg = Arc::new(reg);
    // HeadlessApprover::Never denies: the proxy must not bypass the gate.
    let env = env(reg.clone(), CollectingSink::new());
    let trading = role("trading").unwrap();
    let proxy = SubAgentToolProxy::new(reg, trading, Instant::now() + trading.timeout);
    let outcome = proxy
        .execute(&call("c1", "portfolio", json!({})), &env)
        .await;
    assert!(outcome.is_error, "{}", outcome.content);
    assert!(
        !outcome.error_text().contains("无权调用"),
        "{}",
        outcome.error_text()
    );
}
