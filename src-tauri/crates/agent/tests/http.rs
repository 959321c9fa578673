//! The runtime over real HTTP: the OpenAI-compatible provider talking to the local
//! vendor-format server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::{
    CollectingSink, HeadlessApprover, Runtime, RuntimeConfig, SystemClock, ToolRegistry, ToolSpec,
    TurnOutcome,
};
use wyckoff_llm::{HttpClient, HttpSettings, OpenAiProvider, ProviderConfig};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};
use wyckoff_protocol::{Message, RuntimeEvent};

fn provider(server: &MockServer, idle: Duration) -> Arc<OpenAiProvider> {
    let http = HttpClient::new(&HttpSettings::default()).unwrap();
    Arc::new(OpenAiProvider::new(
        ProviderConfig {
            name: "openai".into(),
            model: "gpt-4o".into(),
            base_url: format!("{}/v1", server.url()),
            api_key: Some("sk-test-0000000000".into()),
            context_window: 128_000,
            idle_timeout: idle,
        },
        http,
    ))
}

fn registry(seen: Arc<Mutex<Vec<Value>>>) -> ToolRegistry {
    let mut reg = ToolRegistry::new();
    reg.register(tool(
        ToolSpec::new("analyze_stock", "个股分析").concurrency_safe(),
        obj(
            json!({"code": {"type": "string"}, "days": {"type": "integer"}}),
            &["code"],
        ),
        move |args, _| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(args.clone());
                Ok(json!({"code": args["code"], "phase": "吸筹", "close": 1688.0}))
            }
        },
    ));
    reg
}

fn runtime(server: &MockServer, idle: Duration, seen: Arc<Mutex<Vec<Value>>>) -> Runtime {
    Runtime::new(
        provider(server, idle),
        Arc::new(registry(seen)),
        RuntimeConfig::default(),
        Arc::new(HeadlessApprover::Never),
        None,
        Arc::new(SystemClock),
    )
}

#[tokio::test]
async fn two_round_tool_turn_over_http() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .text(&["我先", "查一下。"])
            .tool_call(
                0,
                "call_1",
                "analyze_stock",
                &["{\"code\":", " \"600519\",", " \"days\": \"30\"}"],
            )
            .finish("tool_calls")
            .usage(100, 20, 0)
            .done()
            .response(),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["600519 ", "处于吸筹阶段。"]),
    );

    let seen = Arc::new(Mutex::new(Vec::new()));
    let rt = runtime(&server, Duration::from_secs(10), seen.clone());
    let sink = CollectingSink::new();
    let mut messages = Vec::new();
    let out = rt
        .run_turn(
            &mut messages,
            "你是威科夫分析助手。",
            "分析 600519",
            sink.clone(),
            CancellationToken::new(),
        )
        .await;
    assert!(
        matches!(&out, TurnOutcome::Done { text, rounds: 2, .. } if text == "600519 处于吸筹阶段。"),
        "{out:?}"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        vec![json!({"code": "600519", "days": 30})]
    );

    let events = sink.events();
    assert_one_terminal(&events);
    assert!(events.iter().any(|e| matches!(e, RuntimeEvent::ToolCalls { discard_text: true, calls } if calls[0].id == "call_1")));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RuntimeEvent::ToolResult { id, .. } if id == "call_1"))
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RuntimeEvent::Usage { usage, .. } if usage.input_tokens == 100))
    );
    assert_valid_conversation(&messages);

    // The second HTTP request carried the assistant call and its result, in vendor format.
    let reqs = server.requests_to(Route::Openai);
    assert_eq!(reqs.len(), 2);
    let body = &reqs[1].body;
    let msgs = body["messages"].as_array().unwrap();
    let tool_msg = msgs
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("tool message sent");
    assert_eq!(tool_msg["tool_call_id"], "call_1");
    assert!(tool_msg["content"].as_str().unwrap().contains("吸筹"));
    let assistant = msgs.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(assistant["tool_calls"][0]["id"], "call_1");
    assert!(
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["function"]["name"] == "analyze_stock")
    );
    assert_eq!(
        messages.last().unwrap(),
        &Message::assistant("600519 处于吸筹阶段。")
    );
}

#[tokio::test]
async fn stalled_stream_over_http_is_retried() {
    let server = MockServer::start().await.unwrap();
    // Sends the role and one text chunk, then nothing while keeping the socket open.
    server.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .text(&["半截"])
            .finish("stop")
            .done()
            .response()
            .stall_after(2),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["你好，", "有什么可以帮你？"]),
    );
    let rt = runtime(
        &server,
        Duration::from_millis(500),
        Arc::new(Mutex::new(Vec::new())),
    );
    let sink = CollectingSink::new();
    let mut messages = Vec::new();
    let out = tokio::time::timeout(
        Duration::from_secs(20),
        rt.run_turn(
            &mut messages,
            "sys",
            "你好",
            sink.clone(),
            CancellationToken::new(),
        ),
    )
    .await
    .expect("the idle timeout must end the stall");
    assert!(
        matches!(&out, TurnOutcome::Done { text, .. } if text == "你好，有什么可以帮你？"),
        "{out:?}"
    );
    let events = sink.events();
    assert_one_terminal(&events);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RuntimeEvent::Retry { attempt: 1, .. }))
    );
    assert!(!messages.iter().any(|m| m.text().contains("半截")));
    assert_eq!(server.requests_to(Route::Openai).len(), 2);
}

#[tokio::test]
async fn malformed_tool_arguments_over_http_reach_the_model_as_an_error() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .tool_call(0, "call_bad", "analyze_stock", &["{\"code\": \"600519\""])
            .finish("tool_calls")
            .done()
            .response(),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["参数有误，已停止。"]),
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let rt = runtime(&server, Duration::from_secs(10), seen.clone());
    let mut messages = Vec::new();
    let out = rt
        .run_turn(
            &mut messages,
            "sys",
            "你好",
            CollectingSink::new(),
            CancellationToken::new(),
        )
        .await;
    assert!(matches!(out, TurnOutcome::Done { .. }));
    assert!(
        seen.lock().unwrap().is_empty(),
        "the tool must not run with broken arguments"
    );
    let (content, is_error) = tool_message(&messages, "call_bad");
    assert!(is_error && content.contains("不是合法的 JSON"), "{content}");
    let second = &server.requests_to(Route::Openai)[1].body;
    let sent = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        sent["content"]
            .as_str()
            .unwrap()
            .contains("不是合法的 JSON")
    );
}

/// A refused connection fails the turn; its scratchpad names the transport's causes
/// (reqwest → hyper → the OS), not only the classified message.
#[tokio::test]
async fn a_refused_connection_leaves_its_cause_chain_in_the_scratchpad() {
    // A port nothing listens on: bind, note the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let http = HttpClient::new(&HttpSettings::default()).unwrap();
    let provider = Arc::new(OpenAiProvider::new(
        ProviderConfig {
            name: "openai".into(),
            model: "gpt-4o".into(),
            base_url: format!("http://127.0.0.1:{port}/v1"),
            api_key: Some("sk-CANARYREFUSED000000".into()),
            context_window: 128_000,
            idle_timeout: Duration::from_secs(5),
        },
        http,
    ));
    let dir = tempfile::tempdir().unwrap();
    let runtime = Runtime::new(
        provider,
        Arc::new(ToolRegistry::new()),
        RuntimeConfig::default(),
        Arc::new(HeadlessApprover::Never),
        Some(dir.path().to_path_buf()),
        Arc::new(SystemClock),
    );
    let mut messages = Vec::new();
    let out = runtime
        .run_turn(
            &mut messages,
            "sys",
            "你好",
            CollectingSink::new(),
            CancellationToken::new(),
        )
        .await;
    assert!(matches!(out, TurnOutcome::Failed { .. }), "{out:?}");
    let file = std::fs::read_dir(dir.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(file).unwrap();
    assert!(!text.contains("CANARY"), "{text}");
    let error: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(error["type"], "error");
    let causes: Vec<String> = error["causes"]
        .as_array()
        .unwrap_or_else(|| panic!("no causes: {error}"))
        .iter()
        .map(|c| c.as_str().unwrap().to_lowercase())
        .collect();
    assert!(causes.len() >= 2, "{causes:?}");
    assert!(
        causes.last().unwrap().contains("refused"),
        "the OS's reason comes last: {causes:?}"
    );
}

/// OpenAI's strict mode makes optional arguments nullable; the model then sends `null`
/// for one it leaves out, and the tool must see it absent, as with any other provider.
#[tokio::test]
async fn a_null_for_an_optional_argument_under_strict_mode_reaches_the_tool_absent() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .tool_call(
                0,
                "call_s",
                "analyze_stock",
                &["{\"code\": \"600519\", \"days\": null}"],
            )
            .finish("tool_calls")
            .done()
            .response(),
    );
    server.push(Route::Openai, OpenAiStream::text_response(&["好。"]));
    let http = HttpClient::new(&HttpSettings::default()).unwrap();
    let provider = OpenAiProvider::new(
        ProviderConfig {
            name: "openai".into(),
            model: "gpt-4o".into(),
            base_url: format!("{}/v1", server.url()),
            api_key: Some("sk-test-0000000000".into()),
            context_window: 128_000,
            idle_timeout: Duration::from_secs(10),
        },
        http,
    )
    .with_strict_tools(true);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let rt = Runtime::new(
        Arc::new(provider),
        Arc::new(registry(seen.clone())),
        RuntimeConfig::default(),
        Arc::new(HeadlessApprover::Never),
        None,
        Arc::new(SystemClock),
    );
    let mut messages = Vec::new();
    let out = rt
        .run_turn(
            &mut messages,
            "sys",
            "分析 600519",
            CollectingSink::new(),
            CancellationToken::new(),
        )
        .await;
    assert!(
        matches!(out, TurnOutcome::Done { rounds: 2, .. }),
        "{out:?}"
    );
    assert_eq!(*seen.lock().unwrap(), vec![json!({"code": "600519"})]);
    let first = &server.requests_to(Route::Openai)[0].body;
    let f = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["function"])
        .find(|f| f["name"] == "analyze_stock")
        .unwrap();
    assert_eq!(f["strict"], true);
    assert_eq!(f["parameters"]["required"], json!(["code", "days"]));
    // The call as recorded in the conversation carries no null either.
    let second = &server.requests_to(Route::Openai)[1].body;
    let call = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(
        call["tool_calls"][0]["function"]["arguments"],
        "{\"code\":\"600519\"}"
    );
}
