use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use wyckoff_llm::{
    ChatRequest, HttpClient, LlmError, Provider, ProviderKind, ProviderSpec, StreamChunk, build,
};
use wyckoff_mock_vendor::MockServer;
use wyckoff_protocol::{Message, ToolCall, ToolSchema};

pub async fn server() -> MockServer {
    MockServer::start().await.unwrap()
}

pub fn http() -> HttpClient {
    HttpClient::from_env().unwrap()
}

/// A provider of `kind` pointed at the mock server (keyed unless `key` is None).
pub fn provider(kind: ProviderKind, server: &MockServer, key: Option<&str>) -> Arc<dyn Provider> {
    provider_with(kind, server, key, Duration::from_secs(5), &http())
}

pub fn provider_with(
    kind: ProviderKind,
    server: &MockServer,
    key: Option<&str>,
    idle: Duration,
    http: &HttpClient,
) -> Arc<dyn Provider> {
    let base = match kind {
        ProviderKind::Claude | ProviderKind::Gemini => server.url(),
        _ => format!("{}/v1", server.url()),
    };
    let mut spec = ProviderSpec::new(kind).base_url(base).idle_timeout(idle);
    if kind == ProviderKind::OpenaiCompatible {
        spec = spec.model("mock-model");
    }
    if let Some(k) = key {
        spec = spec.api_key(k);
    }
    build(&spec, http).unwrap()
}

pub fn req(user: &str) -> ChatRequest {
    ChatRequest {
        system: "You are a Wyckoff analyst.".into(),
        messages: vec![Message::user(user)],
        tools: tools(),
        max_tokens: None,
    }
}

pub fn tools() -> Vec<ToolSchema> {
    vec![
        ToolSchema {
            name: "analyze_stock".into(),
            description: "Diagnose one stock".into(),
            parameters: json!({"type": "object",
                "properties": {"code": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["code"]}),
        },
        ToolSchema {
            name: "portfolio".into(),
            description: "Show the portfolio".into(),
            parameters: json!({"type": "object", "properties": {"mode": {"type": "string"}}}),
        },
    ]
}

/// Every item of a stream: the chunks, then the error that ended it, if any.
pub async fn collect(p: &dyn Provider, r: &ChatRequest) -> (Vec<StreamChunk>, Option<LlmError>) {
    let mut stream = match p.stream(r).await {
        Ok(s) => s,
        Err(e) => return (Vec::new(), Some(e)),
    };
    let mut chunks = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(c) => chunks.push(c),
            Err(e) => {
                // Nothing may follow an error.
                assert!(stream.next().await.is_none(), "items after an error");
                return (chunks, Some(e));
            }
        }
    }
    (chunks, None)
}

pub fn text(chunks: &[StreamChunk]) -> String {
    chunks
        .iter()
        .filter_map(|c| match c {
            StreamChunk::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

pub fn thinking(chunks: &[StreamChunk]) -> String {
    chunks
        .iter()
        .filter_map(|c| match c {
            StreamChunk::ThinkingDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

pub fn calls(chunks: &[StreamChunk]) -> Vec<ToolCall> {
    let all: Vec<&Vec<ToolCall>> = chunks
        .iter()
        .filter_map(|c| match c {
            StreamChunk::ToolCalls(v) => Some(v),
            _ => None,
        })
        .collect();
    assert!(all.len() <= 1, "tool calls must be emitted once");
    all.first().map(|v| (*v).clone()).unwrap_or_default()
}

pub fn text_deltas(chunks: &[StreamChunk]) -> usize {
    chunks
        .iter()
        .filter(|c| matches!(c, StreamChunk::TextDelta(_)))
        .count()
}
