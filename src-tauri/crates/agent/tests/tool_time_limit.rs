#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A tool's own declared time limit governs its foreground call: the
//! session's tool timeout is only the default. exec_command declares its `timeout`
//! argument (up to 120 s) and used to be cut at the 60 s default.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::json;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use wyckoff_agent::scripted::{self, ScriptedProvider};
use wyckoff_agent::{
    CollectingSink, EventSink, FnTool, HeadlessApprover, ManualClock, Runtime, RuntimeConfig,
    ToolRegistry, ToolSpec,
};
use wyckoff_protocol::{Message, RuntimeEvent};

const SESSION_DEFAULT: Duration = Duration::from_secs(60);
const DECLARED: Duration = Duration::from_secs(100);

/// A tool that declares a 100 s limit and answers when `release` is notified.
fn long_tool(release: Arc<Notify>) -> FnTool {
    FnTool::new(
        ToolSpec::new("long", "长任务"),
        "test tool",
        obj(json!({}), &[]),
        move |_, _| {
            let release = release.clone();
            async move {
                release.notified().await;
                Ok(json!({"out": "done"}))
            }
        },
    )
    .with_time_limit(|_| DECLARED)
}

/// Runs one turn calling `long` (session default 60 s, manual clock); `drive` moves the
/// clock once the call has started. Returns the conversation.
async fn turn_with<F, Fut>(release: Arc<Notify>, drive: F) -> Vec<Message>
where
    F: FnOnce(Arc<ManualClock>, Arc<CollectingSink>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let clock = Arc::new(ManualClock::default());
    let mut reg = ToolRegistry::new();
    reg.register(Arc::new(long_tool(release)));
    let provider = Arc::new(ScriptedProvider::new(vec![
        scripted::tool_calls("", vec![call("l1", "long", json!({}))]),
        scripted::text("ok"),
    ]));
    let config = RuntimeConfig {
        tool_timeout: Some(SESSION_DEFAULT),
        ..RuntimeConfig::default()
    };
    let runtime = Runtime::new(
        provider,
        Arc::new(reg),
        config,
        Arc::new(HeadlessApprover::Never),
        None,
        clock.clone(),
    );
    let sink = CollectingSink::new();
    let s: Arc<dyn EventSink> = sink.clone();
    let turn = async {
        let mut messages = Vec::new();
        runtime
            .run_turn(&mut messages, "sys", "试试", s, CancellationToken::new())
            .await;
        messages
    };
    let driver = async {
        while !started(&sink) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        drive(clock.clone(), sink.clone()).await;
    };
    let (messages, ()) = tokio::join!(turn, driver);
    messages
}

fn started(sink: &CollectingSink) -> bool {
    sink.events()
        .iter()
        .any(|e| matches!(e, RuntimeEvent::ToolStart { id, .. } if id == "l1"))
}

fn ended(sink: &CollectingSink) -> bool {
    sink.events().iter().any(|e| {
        matches!(e, RuntimeEvent::ToolResult { id, .. } | RuntimeEvent::ToolError { id, .. } if id == "l1")
    })
}

/// Lets the turn run whatever the clock's move woke (the registry's timeout included).
async fn settle() {
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

#[tokio::test]
async fn a_call_past_the_session_default_runs_on_to_its_declared_limit() {
    let release = Arc::new(Notify::new());
    let r = release.clone();
    let messages = turn_with(release, |clock, sink| async move {
        clock.advance(SESSION_DEFAULT + Duration::from_secs(5));
        settle().await;
        assert!(!ended(&sink), "cut at the session default");
        r.notify_one();
    })
    .await;
    let (content, is_error) = tool_message(&messages, "l1");
    assert!(!is_error && content.contains("done"), "{content}");
}

#[tokio::test]
async fn a_call_is_cut_exactly_at_its_declared_limit() {
    let release = Arc::new(Notify::new());
    let messages = turn_with(release, |clock, sink| async move {
        clock.advance(DECLARED - Duration::from_millis(1));
        settle().await;
        assert!(!ended(&sink), "cut before the declared limit");
        clock.advance(Duration::from_millis(1));
    })
    .await;
    let (content, is_error) = tool_message(&messages, "l1");
    assert!(
        is_error && content.contains("timed out after 100s"),
        "{content}"
    );
}
