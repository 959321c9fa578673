#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A delegation inside a turn: the sub-agent's progress reaches the listeners and the
//! turn's scratchpad as `sub_agent` records, tagged with the role and the delegate call.

mod common;

use std::sync::Arc;

use common::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::scripted::{self, ScriptedProvider};
use wyckoff_agent::subagents::delegate_tools;
use wyckoff_agent::{
    CollectingSink, HeadlessApprover, Runtime, RuntimeConfig, SystemClock, ToolRegistry,
};
use wyckoff_protocol::RuntimeEvent;

#[tokio::test]
async fn sub_agent_progress_is_in_the_stream_and_the_scratchpad() {
    let dir = tempfile::tempdir().unwrap();
    let mut reg = ToolRegistry::new();
    for t in delegate_tools() {
        reg.register(t);
    }
    let provider = Arc::new(ScriptedProvider::new(vec![
        scripted::tool_calls(
            "",
            vec![call(
                "call_d",
                "delegate_to_research",
                json!({"task": "看看大盘"}),
            )],
        ),
        scripted::text("大盘数据暂缺。"),
        scripted::text("研究员说大盘数据暂缺。"),
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
    let sink = CollectingSink::new();
    let mut messages = Vec::new();
    runtime
        .run_turn(
            &mut messages,
            "sys",
            "让研究员看看大盘",
            sink.clone(),
            CancellationToken::new(),
        )
        .await;
    let streamed = sink
        .events()
        .iter()
        .filter(|e| matches!(e, RuntimeEvent::SubAgent { agent, call_id, .. } if agent == "research" && call_id == "call_d"))
        .count();
    assert!(streamed > 0);
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
    let subs: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] == "sub_agent")
        .collect();
    assert_eq!(subs.len(), streamed, "{records:?}");
    assert!(
        subs.iter()
            .all(|r| r["agent"] == "research" && r["call_id"] == "call_d")
    );
    assert!(
        subs.iter()
            .any(|r| r["kind"] == "done" && r["text"] == "大盘数据暂缺。")
    );
}

#[tokio::test]
async fn background_tasks_started_inside_come_back_as_ids_without_waiting() {
    use std::time::Duration;
    use wyckoff_agent::subagents::{SubAgentDeps, SubAgentParent, role, run_sub_agent};
    use wyckoff_agent::{ApprovalGate, BackgroundTaskManager, ToolSpec};

    let dir = tempfile::tempdir().unwrap();
    let manager = BackgroundTaskManager::open(&dir.path().join("db"), Arc::new(SystemClock), None)
        .await
        .unwrap();
    // A scan that never finishes on its own: the sub-agent must not wait for it.
    let release = Arc::new(tokio::sync::Notify::new());
    let r2 = release.clone();
    let mut reg = ToolRegistry::new();
    reg.register(tool(
        ToolSpec::new("screen_stocks", "全市场扫描").background(),
        obj(json!({}), &[]),
        move |_, _| {
            let r = r2.clone();
            async move {
                r.notified().await;
                Ok(json!({"candidates": []}))
            }
        },
    ));
    let provider = Arc::new(ScriptedProvider::new(vec![
        scripted::tool_calls("", vec![call("c1", "screen_stocks", json!({}))]),
        scripted::text("已发起扫描，task_id 见结果。"),
    ]));
    let deps = SubAgentDeps {
        provider,
        registry: Arc::new(reg),
        gate: Arc::new(ApprovalGate::new(
            Arc::new(HeadlessApprover::Never),
            Duration::from_secs(60),
            Arc::new(SystemClock),
        )),
        background: Some(manager.clone()),
        clock: Arc::new(SystemClock),
        session_id: "s-bg".into(),
    };
    let parent = SubAgentParent {
        sink: CollectingSink::new(),
        call_id: "call_d".into(),
        cancel: CancellationToken::new(),
    };
    let result = tokio::time::timeout(
        Duration::from_secs(10),
        run_sub_agent(
            role("research").unwrap(),
            "发起全市场扫描",
            "",
            deps,
            parent,
        ),
    )
    .await
    .expect("the sub-agent did not wait for its background task");
    let tasks = manager.list();
    assert_eq!(tasks.len(), 1);
    assert_eq!(result.background_task_ids, vec![tasks[0].task_id.clone()]);
    assert!(
        !tasks[0].status.is_finished(),
        "still running when the sub-agent returned"
    );
    release.notify_one();
    manager.shutdown().await;
}
