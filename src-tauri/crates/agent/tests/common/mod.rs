#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]
//! Helpers shared by the runtime tests.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::scripted::{ScriptedProvider, Step};
use wyckoff_agent::{
    Approver, CollectingSink, EventSink, FnTool, HeadlessApprover, Runtime, RuntimeConfig,
    SystemClock, ToolContext, ToolError, ToolRegistry, ToolSpec, TurnOutcome,
};
use wyckoff_protocol::{Message, RuntimeEvent, ToolCall};

pub fn obj(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

pub fn tool<F, Fut>(spec: ToolSpec, params: Value, f: F) -> Arc<FnTool>
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    Arc::new(FnTool::new(spec, "test tool", params, f))
}

pub fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall::new(id, name, args)
}

pub struct Harness {
    pub provider: Arc<ScriptedProvider>,
    pub runtime: Runtime,
    pub sink: Arc<CollectingSink>,
}

pub fn harness(script: Vec<Vec<Step>>, registry: ToolRegistry) -> Harness {
    harness_with(
        script,
        registry,
        Arc::new(HeadlessApprover::Never),
        RuntimeConfig::default(),
    )
}

pub fn harness_with(
    script: Vec<Vec<Step>>,
    registry: ToolRegistry,
    approver: Arc<dyn Approver>,
    config: RuntimeConfig,
) -> Harness {
    let provider = Arc::new(ScriptedProvider::new(script));
    let runtime = Runtime::new(
        provider.clone(),
        Arc::new(registry),
        config,
        approver,
        None,
        Arc::new(SystemClock),
    );
    Harness {
        provider,
        runtime,
        sink: CollectingSink::new(),
    }
}

impl Harness {
    pub async fn turn(&self, messages: &mut Vec<Message>, input: &str) -> TurnOutcome {
        let sink: Arc<dyn EventSink> = self.sink.clone();
        self.runtime
            .run_turn(
                messages,
                "你是威科夫分析助手。",
                input,
                sink,
                CancellationToken::new(),
            )
            .await
    }

    pub fn events(&self) -> Vec<RuntimeEvent> {
        self.sink.events()
    }
}

/// Exactly one terminal event, and it is the last one.
pub fn assert_one_terminal(events: &[RuntimeEvent]) {
    let terminals: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.is_terminal())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(terminals.len(), 1, "terminal events: {events:#?}");
    assert_eq!(
        terminals[0],
        events.len() - 1,
        "terminal event is not last: {events:#?}"
    );
}

/// Every tool call is answered exactly once, right after its assistant message, and no
/// internal retry prompt is left behind.
pub fn assert_valid_conversation(messages: &[Message]) {
    for (i, m) in messages.iter().enumerate() {
        if let Message::User { origin, .. } = m {
            assert_ne!(
                *origin,
                wyckoff_protocol::UserOrigin::InternalRetry,
                "internal message left: {messages:#?}"
            );
        }
        let calls = m.tool_calls();
        if calls.is_empty() {
            continue;
        }
        let answers: Vec<&str> = messages[i + 1..]
            .iter()
            .take_while(|n| matches!(n, Message::Tool { .. }))
            .filter_map(|n| match n {
                Message::Tool { tool_call_id, .. } => Some(tool_call_id.as_str()),
                _ => None,
            })
            .collect();
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(answers, ids, "calls answered in order: {messages:#?}");
    }
}

pub fn tool_message<'a>(messages: &'a [Message], id: &str) -> (&'a str, bool) {
    messages
        .iter()
        .find_map(|m| match m {
            Message::Tool {
                tool_call_id,
                content,
                is_error,
                ..
            } if tool_call_id == id => Some((content.as_str(), *is_error)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {id}: {messages:#?}"))
}
