//! The sub-agent mini loop on the real runtime with a scripted model: statuses,
//! policies, budgets and progress events for each way a delegation can end.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wyckoff_agent::scripted::{self, ScriptedProvider, Step};
use wyckoff_agent::subagents::{
    CONTEXT_TRUNCATED_MARKER, RESULT_TRUNCATED_MARKER, SubAgentDeps, SubAgentParent, role,
    run_sub_agent,
};
use wyckoff_agent::{
    ApprovalGate, CollectingSink, HeadlessApprover, SystemClock, ToolRegistry, ToolSpec,
};
use wyckoff_llm::LlmError;
use wyckoff_protocol::{ErrorKind, RuntimeEvent, SubAgentResult, SubAgentStatus};

fn registry(updates: Arc<AtomicUsize>) -> ToolRegistry {
    let mut reg = ToolRegistry::new();
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
    reg.register(tool(
        ToolSpec::new("analyze_stock", "个股分析"),
        obj(json!({"code": {"type": "string"}}), &["code"]),
        |args, _| async move { Ok(json!({"code": args["code"], "phase": "吸筹"})) },
    ));
    reg
}

struct Run {
    result: SubAgentResult,
    provider: Arc<ScriptedProvider>,
    events: Vec<RuntimeEvent>,
    updates: usize,
}

async fn run(agent: &str, script: Vec<Vec<Step>>, context: &str, cancel: CancellationToken) -> Run {
    let updates = Arc::new(AtomicUsize::new(0));
    let provider = Arc::new(ScriptedProvider::new(script));
    let sink = CollectingSink::new();
    let deps = SubAgentDeps {
        provider: provider.clone(),
        registry: Arc::new(registry(updates.clone())),
        gate: Arc::new(ApprovalGate::new(
            Arc::new(HeadlessApprover::Never),
            Duration::from_secs(60),
            Arc::new(SystemClock),
        )),
        background: None,
        clock: Arc::new(SystemClock),
        session_id: "s-sub".into(),
    };
    let parent = SubAgentParent {
        sink: sink.clone(),
        call_id: "parent-call-1".into(),
        cancel,
    };
    let result = run_sub_agent(
        role(agent).unwrap_or_else(|| panic!("no role {agent}")),
        "诊断 600519",
        context,
        deps,
        parent,
    )
    .await;
    Run {
        result,
        provider,
        events: sink.events(),
        updates: updates.load(Ordering::SeqCst),
    }
}

fn analyze(id: &str) -> Vec<Step> {
    scripted::tool_calls(
        "",
        // a different code each round, so the doom-loop guard stays out of the way
        vec![call(id, "analyze_stock", json!({"code": id}))],
    )
}

#[tokio::test]
async fn forbidden_then_allowed_then_answer_completes_with_use_result() {
    let r = run(
        "analysis",
        vec![
            scripted::tool_calls(
                "",
                vec![call("c1", "update_portfolio", json!({"code": "600519"}))],
            ),
            analyze("c2"),
            scripted::text("600519 处于吸筹阶段。"),
        ],
        "",
        CancellationToken::new(),
    )
    .await;
    assert_eq!(r.updates, 0, "the registry never ran update_portfolio");
    let requests = r.provider.requests();
    assert_eq!(requests.len(), 3);
    let offered: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(offered, ["analyze_stock"]);
    let second = serde_json::to_string(&requests[1].messages).unwrap();
    assert!(
        second.contains("sub-agent 无权调用工具: update_portfolio"),
        "{second}"
    );
    assert!(requests[0].system.contains("首席分析师"));

    assert_eq!(r.result.status, SubAgentStatus::Completed);
    assert_eq!(r.result.result, "600519 处于吸筹阶段。");
    assert_eq!(r.result.policy.next_action, "use_result");
    // What ran, and apart from it what was refused without running.
    assert_eq!(r.result.tool_calls, ["analyze_stock"]);
    assert_eq!(r.result.refused_calls, ["update_portfolio"]);
    assert_eq!(r.result.rounds, 3);
    // Two rounds asked for tools (a refused call uses its round too); the third answered.
    assert_eq!(r.result.tool_rounds, 2);
    assert!(r.result.usage.input_tokens > 0);

    let progress: Vec<(String, String, String)> = r
        .events
        .iter()
        .filter_map(|e| match e {
            RuntimeEvent::SubAgent {
                agent,
                call_id,
                kind,
                ..
            } => Some((agent.clone(), call_id.clone(), kind.clone())),
            _ => None,
        })
        .collect();
    assert!(
        progress
            .iter()
            .all(|(a, c, _)| a == "analysis" && c == "parent-call-1")
    );
    let kinds: Vec<&str> = progress.iter().map(|(_, _, k)| k.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "tool_round",
            // the refused call: no start, only the error that says why
            "tool_error",
            "tool_round",
            "tool_start",
            "tool_result",
            "text",
            "done"
        ]
    );
    assert!(
        r.events
            .iter()
            .all(|e| matches!(e, RuntimeEvent::SubAgent { .. })),
        "nothing of the mini loop leaks into the parent stream untagged"
    );
}

#[tokio::test(start_paused = true)]
async fn the_deadline_ends_a_slow_model_as_timeout() {
    let r = run(
        "trading",
        vec![
            vec![Step::Sleep(Duration::from_secs(600))],
            scripted::text("晚了"),
        ],
        "",
        CancellationToken::new(),
    )
    .await;
    assert_eq!(r.result.status, SubAgentStatus::Timeout);
    assert_eq!(r.result.policy.next_action, "fallback_to_direct_tools");
    assert!(r.result.policy.retryable);
    assert_eq!(
        r.result.policy.fallback_tools,
        [
            "portfolio",
            "generate_strategy_decision",
            "get_market_overview"
        ]
    );
    assert_eq!(r.result.result, "");
    assert!(
        (120.0..121.0).contains(&r.result.elapsed),
        "{}",
        r.result.elapsed
    );
}

#[tokio::test]
async fn max_rounds_end_as_timeout() {
    let trading = role("trading").unwrap();
    let script: Vec<Vec<Step>> = (0..=trading.max_tool_rounds + 2)
        .map(|i| analyze(&format!("c{i}")))
        .collect();
    let r = run("trading", script, "", CancellationToken::new()).await;
    assert_eq!(r.result.status, SubAgentStatus::Timeout, "{:?}", r.result);
    // six rounds ran; the seventh was asked for and refused, and the model not asked again
    let max = trading.max_tool_rounds;
    assert_eq!(max, 6);
    assert_eq!(r.provider.requests().len(), max as usize + 1);
    assert_eq!(r.result.rounds, max + 1);
    let ran = r
        .events
        .iter()
        .filter(|e| matches!(e, RuntimeEvent::SubAgent { kind, .. } if kind == "tool_result"))
        .count();
    assert_eq!(ran, max as usize);
    assert!(r.result.error.contains("6 轮"), "{}", r.result.error);
}

#[tokio::test]
async fn an_oversized_context_is_cut_to_its_newest_part() {
    let context: String = (0..6_000)
        .map(|i| format!("第{i}日 放量上涨。\n"))
        .collect();
    let r = run(
        "trading",
        vec![scripted::text("结论")],
        &context,
        CancellationToken::new(),
    )
    .await;
    assert_eq!(r.result.status, SubAgentStatus::Completed, "{:?}", r.result);
    assert!(r.result.context_truncated);
    let first = r.provider.requests()[0].messages[0].text().to_owned();
    assert!(first.starts_with("诊断 600519\n\n上下文:\n"));
    assert!(first.contains(CONTEXT_TRUNCATED_MARKER));
    assert!(first.contains("第5999日"));
    assert!(!first.contains("第0日 "));
    assert_eq!(r.result.status, SubAgentStatus::Completed);
}

#[tokio::test]
async fn a_long_answer_is_cut_to_the_result_budget() {
    let long = "量价".repeat(2_000);
    let r = run(
        "trading",
        vec![scripted::text(&long)],
        "",
        CancellationToken::new(),
    )
    .await;
    assert!(r.result.result_truncated, "{:?}", r.result);
    assert!(r.result.result.ends_with(RESULT_TRUNCATED_MARKER));
    assert_eq!(r.result.result.chars().count(), 1_600);
    assert_eq!(r.result.policy.next_action, "use_result");
}

#[tokio::test(start_paused = true)]
async fn the_parents_cancel_ends_it_as_cancelled() {
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        trigger.cancel();
    });
    let r = run(
        "research",
        vec![vec![Step::Sleep(Duration::from_secs(100))]],
        "",
        cancel,
    )
    .await;
    assert_eq!(r.result.status, SubAgentStatus::Cancelled);
    assert_eq!(r.result.policy.next_action, "stop_and_report_cancelled");
    assert!(r.result.policy.fallback_tools.is_empty());
    assert!(!r.result.policy.retryable);
}

#[tokio::test]
async fn a_stall_inside_is_a_timeout_with_the_message() {
    let r = run(
        "research",
        vec![vec![Step::Error(scripted::stall("scripted"))]],
        "",
        CancellationToken::new(),
    )
    .await;
    assert_eq!(r.result.status, SubAgentStatus::Timeout);
    assert!(
        r.result.error.contains("模型响应超时"),
        "{}",
        r.result.error
    );
    assert_eq!(
        r.result.policy.fallback_tools,
        [
            "get_market_overview",
            "query_history",
            "check_background_tasks"
        ]
    );
}

#[tokio::test]
async fn a_model_error_is_error_and_no_text_is_empty() {
    let r = run(
        "analysis",
        vec![vec![Step::FailStart(LlmError::new(
            ErrorKind::Authentication,
            "scripted",
            "API key 无效",
        ))]],
        "",
        CancellationToken::new(),
    )
    .await;
    assert_eq!(r.result.status, SubAgentStatus::Error);
    assert!(
        r.result.error.contains("API key 无效"),
        "{}",
        r.result.error
    );
    assert!(r.result.policy.retryable);

    let r = run(
        "analysis",
        vec![scripted::text("")],
        "",
        CancellationToken::new(),
    )
    .await;
    assert_eq!(r.result.status, SubAgentStatus::Empty);
    assert!(!r.result.policy.retryable);
    assert_eq!(
        r.result.policy.fallback_tools,
        ["analyze_stock", "portfolio", "get_market_overview"]
    );
}
