//! The sub-agent mini loop over real HTTP: the OpenAI-compatible provider against the
//! mock vendor, one test per way a delegation ends — completed after a refused tool, max
//! rounds, context and result budgets, the parent's cancel, a stall inside, a model error,
//! and the deadline — each with its status and policy. (`subagents_run.rs` covers the same
//! on a scripted model, where time can be paused.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wyckoff_agent::subagents::{
    CONTEXT_TRUNCATED_MARKER, RESULT_TRUNCATED_MARKER, SubAgentDeps, SubAgentParent, role,
    run_sub_agent,
};
use wyckoff_agent::{
    ApprovalGate, CollectingSink, HeadlessApprover, SystemClock, ToolRegistry, ToolSpec,
};
use wyckoff_llm::{HttpClient, HttpSettings, OpenAiProvider, ProviderConfig};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Response, Route, openai_error};
use wyckoff_protocol::{RuntimeEvent, SubAgentResult, SubAgentStatus};

fn tool_call(id: &str, name: &str, code: &str) -> Response {
    OpenAiStream::new()
        .role()
        .tool_call(0, id, name, &[json!({"code": code}).to_string()])
        .finish("tool_calls")
        .usage(40, 8, 0)
        .done()
        .response()
}

struct Run {
    result: SubAgentResult,
    server: MockServer,
    updates: usize,
    /// Times the registry ran analyze_stock.
    analyses: usize,
    events: Vec<RuntimeEvent>,
}

async fn run(
    agent: &str,
    responses: Vec<Response>,
    context: &str,
    idle: Duration,
    cancel: CancellationToken,
) -> Run {
    let server = MockServer::start().await.unwrap();
    for r in responses {
        server.push(Route::Openai, r);
    }
    let provider = Arc::new(OpenAiProvider::new(
        ProviderConfig {
            name: "openai".into(),
            model: "gpt-4o".into(),
            base_url: format!("{}/v1", server.url()),
            api_key: Some("sk-test-0000000000".into()),
            context_window: 128_000,
            idle_timeout: idle,
        },
        // A connect timeout past every deadline here: with tokio's clock paused (the
        // deadline test), a pending connect must not be what times out first.
        HttpClient::new(&HttpSettings {
            connect_timeout: Duration::from_secs(3_600),
            ..HttpSettings::default()
        })
        .unwrap(),
    ));
    let updates = Arc::new(AtomicUsize::new(0));
    let mut reg = ToolRegistry::new();
    let u = updates.clone();
    reg.register(tool(
        ToolSpec::new("update_portfolio", "调仓操作"),
        obj(json!({"code": {"type": "string"}}), &[]),
        move |_, _| {
            let u = u.clone();
            async move {
                u.fetch_add(1, Ordering::SeqCst);
                Ok(json!({"success": true}))
            }
        },
    ));
    let analyses = Arc::new(AtomicUsize::new(0));
    let a = analyses.clone();
    reg.register(tool(
        ToolSpec::new("analyze_stock", "个股分析"),
        obj(json!({"code": {"type": "string"}}), &["code"]),
        move |args, _| {
            let a = a.clone();
            async move {
                a.fetch_add(1, Ordering::SeqCst);
                Ok(json!({"code": args["code"], "phase": "吸筹"}))
            }
        },
    ));
    let deps = SubAgentDeps {
        provider,
        registry: Arc::new(reg),
        gate: Arc::new(ApprovalGate::new(
            Arc::new(HeadlessApprover::Never),
            Duration::from_secs(60),
            Arc::new(SystemClock),
        )),
        background: None,
        clock: Arc::new(SystemClock),
        session_id: "s-sub-http".into(),
    };
    let sink = CollectingSink::new();
    let parent = SubAgentParent {
        sink: sink.clone(),
        call_id: "parent-call".into(),
        cancel,
    };
    // Past every deadline here (the roles' are 120–240 s); a bound, not a timing.
    let result = tokio::time::timeout(
        Duration::from_secs(300),
        run_sub_agent(role(agent).unwrap(), "诊断 600519", context, deps, parent),
    )
    .await
    .expect("the sub-agent never hangs the parent");
    let updates = updates.load(Ordering::SeqCst);
    Run {
        result,
        server,
        updates,
        analyses: analyses.load(Ordering::SeqCst),
        events: sink.events(),
    }
}

#[tokio::test]
async fn a_refused_tool_then_an_allowed_one_then_the_answer_completes() {
    let r = run(
        "analysis",
        vec![
            tool_call("c1", "update_portfolio", "600519"),
            tool_call("c2", "analyze_stock", "600519"),
            OpenAiStream::text_response(&["600519 处于吸筹阶段。"]),
        ],
        "",
        Duration::from_secs(10),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(r.updates, 0, "the registry never ran the refused tool");
    let requests = r.server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 3);
    assert!(
        requests[1]
            .raw_body
            .contains("sub-agent 无权调用工具: update_portfolio")
    );
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["analyze_stock"]);
    assert_eq!(r.result.status, SubAgentStatus::Completed);
    assert_eq!(r.result.policy.next_action, "use_result");
    assert_eq!(r.result.result, "600519 处于吸筹阶段。");
    assert_eq!(r.result.usage.input_tokens, 40 + 40 + 10);
}

fn analyze_rounds(n: u32) -> Vec<Response> {
    // a different code each round, so the doom-loop guard stays out of the way
    (1..=n)
        .map(|i| tool_call(&format!("c{i}"), "analyze_stock", &format!("6000{i:02}")))
        .collect()
}

/// The pane's live tool-round count, in the order the events came.
fn tool_round_events(events: &[RuntimeEvent]) -> Vec<u32> {
    events
        .iter()
        .filter_map(|e| match e {
            RuntimeEvent::SubAgent { kind, text, .. } if kind == "tool_round" => text.parse().ok(),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn each_role_runs_exactly_its_max_tool_rounds_and_then_answers() {
    // (role, seed 11_07's max tool rounds)
    for (agent, max) in [("research", 8), ("analysis", 8), ("trading", 6)] {
        let mut responses = analyze_rounds(max);
        responses.push(OpenAiStream::text_response(&["结论：吸筹阶段。"]));
        let r = run(
            agent,
            responses,
            "",
            Duration::from_secs(10),
            CancellationToken::new(),
        )
        .await;
        assert_eq!(r.analyses, max as usize, "{agent}");
        assert_eq!(
            r.result.status,
            SubAgentStatus::Completed,
            "{agent} {:?}",
            r.result
        );
        assert_eq!(r.result.result, "结论：吸筹阶段。");
        assert_eq!(
            r.result.rounds,
            max + 1,
            "{agent}: the tool rounds and the answer"
        );
        // What the pane shows against the role's limit: its tool rounds, every one.
        assert_eq!(r.result.tool_rounds, max, "{agent}");
        assert_eq!(tool_round_events(&r.events), (1..=max).collect::<Vec<_>>());
        assert_eq!(r.server.requests_to(Route::Openai).len(), max as usize + 1);
    }
}

#[tokio::test]
async fn a_round_past_the_max_is_refused_and_ends_as_timeout() {
    for (agent, max) in [("research", 8), ("analysis", 8), ("trading", 6)] {
        let r = run(
            agent,
            analyze_rounds(max + 2),
            "",
            Duration::from_secs(10),
            CancellationToken::new(),
        )
        .await;
        // N rounds ran, the N+1th was asked for and refused without running.
        assert_eq!(r.analyses, max as usize, "{agent}");
        assert_eq!(
            r.server.requests_to(Route::Openai).len(),
            max as usize + 1,
            "{agent}"
        );
        let refused: Vec<&str> = r
            .events
            .iter()
            .filter_map(|e| match e {
                RuntimeEvent::SubAgent { kind, text, .. } if kind == "tool_error" => {
                    Some(text.as_str())
                }
                _ => None,
            })
            .collect();
        assert_eq!(refused.len(), 1, "{agent} {refused:?}");
        assert!(
            refused[0].contains(&format!("已用完 {max} 轮工具调用")),
            "{refused:?}"
        );
        assert_eq!(
            r.result.status,
            SubAgentStatus::Timeout,
            "{agent} {:?}",
            r.result
        );
        assert_eq!(r.result.policy.next_action, "fallback_to_direct_tools");
        assert!(
            r.result.error.contains(&format!("{max} 轮")),
            "{}",
            r.result.error
        );
        assert_eq!(r.result.rounds, max + 1);
        // The refused round is not one the sub-agent ran: the pane reads max/max.
        assert_eq!(r.result.tool_rounds, max, "{agent}");
        assert_eq!(tool_round_events(&r.events), (1..=max).collect::<Vec<_>>());
        assert_eq!(r.result.usage.input_tokens, 40 * (max + 1));
    }
}

#[tokio::test]
async fn the_same_call_again_and_again_is_an_error_with_the_fallbacks() {
    let same = || tool_call("c", "analyze_stock", "600519");
    let r = run(
        "trading",
        vec![same(), same(), same(), same()],
        "",
        Duration::from_secs(10),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(r.result.status, SubAgentStatus::Error, "{:?}", r.result);
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
    assert!(
        r.result.error.contains("analyze_stock"),
        "{}",
        r.result.error
    );
    assert!(r.result.error.contains("死循环"), "{}", r.result.error);
    assert_eq!(r.result.result, "", "the abort text is no conclusion");
    assert_eq!(r.server.requests_to(Route::Openai).len(), 3);
}

#[tokio::test]
async fn the_context_and_the_result_are_cut_to_their_budgets() {
    let context: String = (0..6_000)
        .map(|i| format!("第{i}日 放量上涨。\n"))
        .collect();
    let long = "量价".repeat(2_000);
    let r = run(
        "trading",
        vec![OpenAiStream::text_response(&[long.as_str()])],
        &context,
        Duration::from_secs(10),
        CancellationToken::new(),
    )
    .await;
    assert!(r.result.context_truncated);
    let first = &r.server.requests_to(Route::Openai)[0].raw_body;
    assert!(first.contains(CONTEXT_TRUNCATED_MARKER));
    assert!(first.contains("第5999日") && !first.contains("第0日 "));
    assert!(r.result.result_truncated);
    assert!(r.result.result.ends_with(RESULT_TRUNCATED_MARKER));
    assert_eq!(r.result.result.chars().count(), 1_600);
    assert_eq!(r.result.status, SubAgentStatus::Completed);
}

#[tokio::test]
async fn the_parents_cancel_ends_it_as_cancelled() {
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let r = run(
        "research",
        vec![OpenAiStream::text_response(&["晚了"]).gated("never")],
        "",
        Duration::from_secs(10),
        cancel,
    )
    .await;
    assert_eq!(r.result.status, SubAgentStatus::Cancelled);
    assert_eq!(r.result.policy.next_action, "stop_and_report_cancelled");
    assert!(!r.result.policy.retryable);
}

#[tokio::test]
async fn a_stall_inside_is_a_timeout_with_the_message() {
    let r = run(
        "research",
        vec![
            OpenAiStream::new()
                .role()
                .text(&["正在"])
                .response()
                .stall_after(2),
        ],
        "",
        Duration::from_millis(400),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(r.result.status, SubAgentStatus::Timeout, "{:?}", r.result);
    assert!(
        r.result.error.contains("超时") || r.result.error.contains("timeout"),
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
async fn a_model_error_is_error_with_the_role_fallbacks() {
    let r = run(
        "analysis",
        vec![Response::error(
            401,
            openai_error("Incorrect API key provided", "invalid_request_error", None),
        )],
        "",
        Duration::from_secs(10),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(r.result.status, SubAgentStatus::Error, "{:?}", r.result);
    assert!(r.result.policy.retryable);
    assert_eq!(
        r.result.policy.fallback_tools,
        ["analyze_stock", "portfolio", "get_market_overview"]
    );
}

#[tokio::test(start_paused = true)]
async fn the_deadline_ends_a_held_model_as_timeout() {
    // The answer is held at the mock past the trading role's 120 s deadline (tokio's
    // clock is paused and runs ahead while everything waits on the socket).
    let r = run(
        "trading",
        vec![OpenAiStream::text_response(&["晚了"]).gated("never")],
        "",
        Duration::from_secs(600),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(r.result.status, SubAgentStatus::Timeout, "{:?}", r.result);
    assert_eq!(r.result.policy.next_action, "fallback_to_direct_tools");
    assert!(
        (120.0..125.0).contains(&r.result.elapsed),
        "{}",
        r.result.elapsed
    );
}

#[tokio::test]
async fn a_failed_run_reports_the_tokens_and_rounds_it_spent() {
    let spent = |r: &Run| {
        (
            r.result.usage.input_tokens,
            r.result.usage.output_tokens,
            r.result.rounds,
        )
    };
    // error: a tool round, then the vendor refuses the key
    let r = run(
        "analysis",
        vec![
            tool_call("c1", "analyze_stock", "600519"),
            Response::error(
                401,
                openai_error("Incorrect API key provided", "invalid_request_error", None),
            ),
        ],
        "",
        Duration::from_secs(10),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(r.result.status, SubAgentStatus::Error, "{:?}", r.result);
    assert_eq!(spent(&r), (40, 8, 2));

    // timeout: a tool round, then the stream stalls
    let r = run(
        "research",
        vec![
            tool_call("c1", "analyze_stock", "600519"),
            OpenAiStream::new()
                .role()
                .text(&["正在"])
                .response()
                .stall_after(2),
        ],
        "",
        Duration::from_millis(400),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(r.result.status, SubAgentStatus::Timeout, "{:?}", r.result);
    assert_eq!(spent(&r), (40, 8, 2));

    // cancelled: a tool round, then the parent stops while the answer is held
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let r = run(
        "trading",
        vec![
            tool_call("c1", "analyze_stock", "600519"),
            OpenAiStream::text_response(&["晚了"]).gated("never"),
        ],
        "",
        Duration::from_secs(10),
        cancel,
    )
    .await;
    assert_eq!(r.result.status, SubAgentStatus::Cancelled, "{:?}", r.result);
    assert_eq!(spent(&r), (40, 8, 2));
}
