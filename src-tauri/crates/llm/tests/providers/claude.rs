use serde_json::json;
use wyckoff_llm::{FinishReason, ProviderKind, StreamChunk};
use wyckoff_mock_vendor::{ClaudeStream, Response, Route, claude_error, fragments};
use wyckoff_protocol::{ErrorKind, Message, Usage};

use crate::common::*;

#[tokio::test]
async fn thinking_text_and_tool_use_with_cache_usage() {
    let s = server().await;
    let input = r#"{"code": "600519", "days": 60}"#;
    s.push(
        Route::Claude,
        ClaudeStream::new(100, 2000, 300)
            .ping()
            .thinking(&["量价", "背离"], "sig-claude-1")
            .text(&["先看", "日线。"])
            .tool_use("toolu_01", "analyze_stock", &fragments(input, 4))
            .stop("tool_use", 42)
            .message_stop()
            .response(),
    );
    let p = provider(ProviderKind::Claude, &s, Some("sk-ant-test"));
    let (chunks, err) = collect(p.as_ref(), &req("诊断茅台")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(thinking(&chunks), "量价背离");
    assert!(chunks.contains(&StreamChunk::ThinkingSignature("sig-claude-1".into())));
    assert_eq!(text(&chunks), "先看日线。");
    let c = calls(&chunks);
    assert_eq!(c.len(), 1);
    assert_eq!(
        (c[0].id.as_str(), c[0].name.as_str()),
        ("toolu_01", "analyze_stock")
    );
    assert_eq!(c[0].args, json!({"code": "600519", "days": 60}));
    assert_eq!(
        chunks[chunks.len() - 2..],
        [
            StreamChunk::Usage(Usage {
                input_tokens: 2400,
                output_tokens: 42,
                cache_read_tokens: 2000,
                cache_write_tokens: 300
            }),
            StreamChunk::Finish(FinishReason::ToolCalls)
        ]
    );

    let r = &s.requests_to(Route::Claude)[0];
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("authorization"), None);
    assert_eq!(r.body["model"], "claude-sonnet-4-5");
    assert_eq!(r.body["max_tokens"], 8192);
    assert_eq!(r.body["stream"], true);
    assert_eq!(r.body["system"][0]["text"], "You are a Wyckoff analyst.");
    assert_eq!(
        r.body["tools"][0]["input_schema"]["required"],
        json!(["code"])
    );
    assert_eq!(r.body["messages"][0]["role"], "user");
}

#[tokio::test]
async fn thinking_signature_and_tool_results_go_back() {
    let s = server().await;
    s.push(
        Route::Claude,
        ClaudeStream::default()
            .thinking(&["hmm"], "sig-9")
            .tool_use("toolu_9", "portfolio", &["{\"mode\"", ":\"view\"}"])
            .stop("tool_use", 5)
            .message_stop()
            .response(),
    );
    s.push(Route::Claude, ClaudeStream::text_response(&["done"]));
    let p = provider(ProviderKind::Claude, &s, Some("k"));
    let mut request = req("持仓");
    let first = p.complete(&request).await.unwrap();
    request.messages.push(Message::Assistant {
        content: first.text.clone(),
        tool_calls: first.tool_calls.clone(),
        reasoning: Some(first.thinking.clone()),
        reasoning_signature: first.thinking_signature.clone(),
    });
    request
        .messages
        .push(Message::tool_result(&first.tool_calls[0], "[]", false));
    assert_eq!(p.complete(&request).await.unwrap().text, "done");
    let second = &s.requests_to(Route::Claude)[1].body;
    assert_eq!(
        second["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "hmm", "signature": "sig-9"})
    );
    assert_eq!(second["messages"][1]["content"][1]["type"], "tool_use");
    assert_eq!(
        second["messages"][1]["content"][1]["input"],
        json!({"mode": "view"})
    );
    assert_eq!(second["messages"][2]["content"][0]["type"], "tool_result");
    assert_eq!(
        second["messages"][2]["content"][0]["tool_use_id"],
        "toolu_9"
    );
}

#[tokio::test]
async fn max_tokens_maps_to_length() {
    let s = server().await;
    s.push(
        Route::Claude,
        ClaudeStream::default()
            .text(&["cut"])
            .stop("max_tokens", 8192)
            .message_stop()
            .response(),
    );
    let p = provider(ProviderKind::Claude, &s, Some("k"));
    let (chunks, _) = collect(p.as_ref(), &req("a")).await;
    assert_eq!(
        chunks.last(),
        Some(&StreamChunk::Finish(FinishReason::Length))
    );
}

#[tokio::test]
async fn overloaded_529_and_in_stream_error() {
    let s = server().await;
    s.push(
        Route::Claude,
        Response::error(529, claude_error("overloaded_error", "Overloaded")),
    );
    s.push(
        Route::Claude,
        ClaudeStream::default()
            .text(&["par"])
            .error("overloaded_error", "Overloaded")
            .response(),
    );
    let p = provider(ProviderKind::Claude, &s, Some("k"));
    let e = p.stream(&req("a")).await.err().unwrap();
    assert_eq!(e.kind, ErrorKind::Overloaded);
    assert_eq!(e.status, Some(529));
    assert!(e.message.contains("overloaded"), "{}", e.message);

    let (chunks, err) = collect(p.as_ref(), &req("a")).await;
    assert_eq!(text(&chunks), "par");
    let err = err.unwrap();
    assert_eq!(err.kind, ErrorKind::Overloaded);
    assert!(err.after_content);
}

#[tokio::test]
async fn cut_before_message_stop_is_a_protocol_error() {
    let s = server().await;
    s.push(
        Route::Claude,
        ClaudeStream::default()
            .text(&["a"])
            .stop("end_turn", 1)
            .response(),
    );
    let p = provider(ProviderKind::Claude, &s, Some("k"));
    let (_, err) = collect(p.as_ref(), &req("a")).await;
    let err = err.unwrap();
    assert_eq!(err.kind, ErrorKind::Protocol);
    assert!(err.message.contains("message_stop"), "{}", err.message);
}

#[tokio::test]
async fn prompt_too_long_is_context_too_long() {
    let s = server().await;
    s.push(
        Route::Claude,
        Response::error(
            400,
            claude_error(
                "invalid_request_error",
                "prompt is too long: 210000 tokens > 200000 maximum",
            ),
        ),
    );
    let p = provider(ProviderKind::Claude, &s, Some("k"));
    let e = p.stream(&req("a")).await.err().unwrap();
    assert_eq!(e.kind, ErrorKind::ContextTooLong);
    assert!(e.message.starts_with("HTTP 400"), "{}", e.message);
    assert_eq!(e.provider, "claude");
}
