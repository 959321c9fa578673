#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A delegation inside a parent turn, on the real runtime with a scripted model: a
//! background task of the conversation that finishes while the sub-agent runs is told to
//! the main agent (not swallowed by the sub-agent), and the sub-agent's tool calls land in
//! the turn's scratchpad with their exact arguments and results.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::scripted::{self, ScriptedProvider};
use wyckoff_agent::subagents::delegate_tools;
use wyckoff_agent::{
    BackgroundTaskManager, CollectingSink, HeadlessApprover, Runtime, RuntimeConfig, SystemClock,
    ToolRegistry, ToolSpec,
};

#[tokio::test]
async fn a_task_finishing_during_a_delegation_is_told_to_the_main_agent_afterwards() {
    let dir = tempfile::tempdir().unwrap();
    let manager = BackgroundTaskManager::open(&dir.path().join("db"), Arc::new(SystemClock), None)
        .await
        .unwrap();
    let release = Arc::new(tokio::sync::Notify::new());
    let mut reg = ToolRegistry::new();
    for t in delegate_tools() {
        reg.register(t);
    }
    // The main agent's scan: runs in the background until released.
    let r = release.clone();
    reg.register(tool(
        ToolSpec::new("screen_stocks", "全市场扫描").background(),
        obj(json!({}), &[]),
        move |_, _| {
            let r = r.clone();
            async move {
                r.notified().await;
                Ok(json!({"candidates": ["600519"]}))
            }
        },
    ));
    // The sub-agent's tool: lets the scan finish and returns once it has, so the scan's
    // completion is waiting while the sub-agent still has a round to go.
    let (r, m) = (release.clone(), manager.clone());
    reg.register(tool(
        ToolSpec::new("analyze_stock", "个股分析"),
        obj(json!({"code": {"type": "string"}}), &["code"]),
        move |args, _| {
            let (r, m) = (r.clone(), m.clone());
            async move {
                r.notify_one();
                let scan = m.list()[0].task_id.clone();
                let done = m.wait_for(&scan, Duration::from_secs(10)).await;
                assert!(done.is_some_and(|t| t.status.is_finished()));
                Ok(json!({"code": args["code"], "phase": "吸筹"}))
            }
        },
    ));
    let provider = Arc::new(ScriptedProvider::new(vec![
        // main: start the scan, then delegate
        scripted::tool_calls("", vec![call("c1", "screen_stocks", json!({}))]),
        scripted::tool_calls(
            "",
            vec![call(
                "call_d",
                "delegate_to_research",
                json!({"task": "诊断 600519"}),
            )],
        ),
        // sub-agent: one tool round, then its answer
        scripted::tool_calls(
            "",
            vec![call("a1", "analyze_stock", json!({"code": "600519"}))],
        ),
        scripted::text("600519 吸筹。"),
        // main: its answer
        scripted::text("扫描已完成，600519 吸筹。"),
    ]));
    let runtime = Runtime::new(
        provider.clone(),
        Arc::new(reg),
        RuntimeConfig {
            session_id: "s-main".into(),
            ..RuntimeConfig::default()
        },
        Arc::new(HeadlessApprover::Never),
        None,
        Arc::new(SystemClock),
    )
    .with_background(manager.clone())
    .with_delegation();
    let mut messages = Vec::new();
    runtime
        .run_turn(
            &mut messages,
            "sys",
            "扫描全市场，再让研究员看看 600519",
            CollectingSink::new(),
            CancellationToken::new(),
        )
        .await;

    let scan = manager.list()[0].clone();
    assert!(scan.status.is_finished());
    let note = format!("<task-id>{}</task-id>", scan.task_id);
    let requests = provider.requests();
    assert_eq!(requests.len(), 5);
    let sent = |i: usize| serde_json::to_string(&requests[i].messages).unwrap();
    assert!(
        !sent(3).contains(&note),
        "the sub-agent took the conversation's completion: {}",
        sent(3)
    );
    assert!(
        sent(4).contains(&note),
        "the main agent was never told: {}",
        sent(4)
    );
    assert!(!manager.has_notifications("s-main"), "delivered once");
    manager.shutdown().await;
}

#[tokio::test]
async fn the_sub_agents_tool_calls_are_in_the_turns_scratchpad_with_arguments_and_results() {
    let dir = tempfile::tempdir().unwrap();
    let mut reg = ToolRegistry::new();
    for t in delegate_tools() {
        reg.register(t);
    }
    reg.register(tool(
        ToolSpec::new("analyze_stock", "个股分析"),
        obj(json!({"code": {"type": "string"}}), &["code"]),
        |args, _| async move {
            Ok(json!({"code": args["code"], "candidate_lane": "trend_breakout", "candidate_score": 86.5}))
        },
    ));
    reg.register(tool(
        ToolSpec::new("update_portfolio", "调仓操作"),
        obj(json!({}), &[]),
        |_, _| async move { Ok(json!({"success": true})) },
    ));
    let provider = Arc::new(ScriptedProvider::new(vec![
        scripted::tool_calls(
            "",
            vec![call(
                "call_d",
                "delegate_to_analysis",
                json!({"task": "诊断 600519"}),
            )],
        ),
        scripted::tool_calls(
            "",
            vec![
                call("a1", "analyze_stock", json!({"code": "600519"})),
                call("a2", "update_portfolio", json!({})),
            ],
        ),
        scripted::text("600519 趋势突破。"),
        scripted::text("分析师说 600519 趋势突破。"),
    ]));
    let runtime = Runtime::new(
        provider,
        Arc::new(reg),
        RuntimeConfig::default(),
        Arc::new(HeadlessApprover::Never),
        Some(dir.path().to_path_buf()),
        Arc::new(SystemClock),
    )
    .with_delegation();
    let mut messages = Vec::new();
    runtime
        .run_turn(
            &mut messages,
            "sys",
            "让分析师诊断 600519",
            CollectingSink::new(),
            CancellationToken::new(),
        )
        .await;
    let file = std::fs::read_dir(dir.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let records: Vec<Value> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let calls: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] == "sub_agent_tool_result")
        .collect();
    assert_eq!(calls.len(), 2, "{records:?}");
    let ran = calls[0];
    assert_eq!(
        (
            &ran["agent"],
            &ran["call_id"],
            &ran["id"],
            &ran["tool_name"]
        ),
        (
            &json!("analysis"),
            &json!("call_d"),
            &json!("a1"),
            &json!("analyze_stock")
        )
    );
    assert_eq!(ran["args"], json!({"code": "600519"}));
    assert_eq!(ran["result"]["candidate_lane"], "trend_breakout");
    assert_eq!(ran["result"]["candidate_score"], 86.5);
    assert_eq!(ran["status"], "ok");
    let refused = calls[1];
    assert_eq!(refused["tool_name"], "update_portfolio");
    assert_eq!(refused["status"], "error");
    assert_eq!(refused["result"]["code"], "forbidden");
    // The delegate call itself is the parent's own tool_result, after its sub-agent's.
    let delegate = records
        .iter()
        .position(|r| r["type"] == "tool_result" && r["id"] == "call_d")
        .unwrap();
    assert!(
        records
            .iter()
            .position(|r| r["type"] == "sub_agent_tool_result")
            .unwrap()
            < delegate
    );
}

#[tokio::test]
async fn a_failed_delegations_tokens_count_in_the_turns_cost() {
    let mut reg = ToolRegistry::new();
    for t in delegate_tools() {
        reg.register(t);
    }
    reg.register(tool(
        ToolSpec::new("analyze_stock", "个股分析"),
        obj(json!({"code": {"type": "string"}}), &["code"]),
        |args, _| async move { Ok(json!({"code": args["code"]})) },
    ));
    let provider = Arc::new(ScriptedProvider::new(vec![
        scripted::tool_calls(
            "",
            vec![call(
                "call_d",
                "delegate_to_analysis",
                json!({"task": "诊断 600519"}),
            )],
        ),
        // the sub-agent: one tool round (10 in / 5 out), then its model fails
        scripted::tool_calls(
            "",
            vec![call("a1", "analyze_stock", json!({"code": "600519"}))],
        ),
        vec![wyckoff_agent::scripted::Step::FailStart(
            wyckoff_llm::LlmError::new(
                wyckoff_protocol::ErrorKind::Server,
                "scripted",
                "服务器错误",
            ),
        )],
        scripted::text("分析师出错，改用直接工具。"),
    ]));
    let runtime = Runtime::new(
        provider,
        Arc::new(reg),
        RuntimeConfig::default(),
        Arc::new(HeadlessApprover::Never),
        None,
        Arc::new(SystemClock),
    )
    .with_delegation();
    let sink = CollectingSink::new();
    let mut messages = Vec::new();
    let outcome = runtime
        .run_turn(
            &mut messages,
            "sys",
            "让分析师诊断 600519",
            sink.clone(),
            CancellationToken::new(),
        )
        .await;
    let result = sink
        .events()
        .into_iter()
        .find_map(|e| match e {
            wyckoff_protocol::RuntimeEvent::ToolResult { id, result, .. } if id == "call_d" => {
                Some(result)
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(result["status"], "error", "{result}");
    assert_eq!(result["rounds"], 2);
    assert_eq!(result["usage"]["input_tokens"], 10);
    // the parent's two rounds and the sub-agent's one
    let wyckoff_agent::TurnOutcome::Done { usage, .. } = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!((usage.input_tokens, usage.output_tokens), (30, 15));
}
