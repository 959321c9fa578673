use serde_json::json;
use wyckoff_llm::{FinishReason, ProviderKind, StreamChunk};
use wyckoff_mock_vendor::{GeminiStream, Response, Route, gemini_error};
use wyckoff_protocol::{ErrorKind, Message, Usage};

use crate::common::*;

#[tokio::test]
async fn thoughts_text_function_call_and_usage() {
    let s = server().await;
    s.push(
        Route::Gemini,
        GeminiStream::new()
            .thought("Considering volume")
            .text(&["Looking ", "up"])
            .function_call("analyze_stock", json!({"code": "600519"}), Some("c2lnLTE="))
            .finish("STOP", 80, 12, 30)
            .response(),
    );
    let p = provider(ProviderKind::Gemini, &s, Some("AIza-test-key"));
    let (chunks, err) = collect(p.as_ref(), &req("诊断")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(thinking(&chunks), "Considering volume");
    assert_eq!(text(&chunks), "Looking up");
    let c = calls(&chunks);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].name, "analyze_stock");
    assert_eq!(c[0].args, json!({"code": "600519"}));
    assert_eq!(c[0].thought_signature.as_deref(), Some("c2lnLTE="));
    assert!(!c[0].id.is_empty());
    assert_eq!(
        chunks[chunks.len() - 2..],
        [
            StreamChunk::Usage(Usage {
                input_tokens: 80,
                output_tokens: 42,
                cache_read_tokens: 0,
                cache_write_tokens: 0
            }),
            StreamChunk::Finish(FinishReason::ToolCalls)
        ]
    );
    let r = &s.requests_to(Route::Gemini)[0];
    assert_eq!(
        r.path,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    );
    assert_eq!(
        r.query.as_deref(),
        Some("alt=sse"),
        "the key never goes in the URL"
    );
    assert_eq!(r.header("x-goog-api-key"), Some("AIza-test-key"));
    assert_eq!(
        r.body["systemInstruction"]["parts"][0]["text"],
        "You are a Wyckoff analyst."
    );
    assert_eq!(
        r.body["tools"][0]["functionDeclarations"][0]["name"],
        "analyze_stock"
    );
    assert_eq!(
        r.body["generationConfig"]["thinkingConfig"]["includeThoughts"],
        true
    );
    assert_eq!(
        r.body["contents"][0],
        json!({"role": "user", "parts": [{"text": "诊断"}]})
    );
}

#[tokio::test]
async fn thought_signature_round_trip() {
    let s = server().await;
    s.push(
        Route::Gemini,
        GeminiStream::new()
            .function_call(
                "analyze_stock",
                json!({"code": "000001"}),
                Some("sig-gemini-42"),
            )
            .function_call("portfolio", json!({}), None)
            .finish("STOP", 10, 5, 0)
            .response(),
    );
    s.push(Route::Gemini, GeminiStream::text_response(&["结论"]));
    let p = provider(ProviderKind::Gemini, &s, Some("k"));
    let mut request = req("分析");
    let first = p.complete(&request).await.unwrap();
    assert_eq!(first.tool_calls.len(), 2);
    request.messages.push(Message::Assistant {
        content: first.text.clone(),
        tool_calls: first.tool_calls.clone(),
        reasoning: None,
        reasoning_signature: None,
    });
    for c in &first.tool_calls {
        request
            .messages
            .push(Message::tool_result(c, "{\"ok\": true}", false));
    }
    assert_eq!(p.complete(&request).await.unwrap().text, "结论");

    let second = &s.requests_to(Route::Gemini)[1].body;
    let model = &second["contents"][1];
    assert_eq!(model["role"], "model");
    assert_eq!(model["parts"][0]["thoughtSignature"], "sig-gemini-42");
    assert_eq!(model["parts"][0]["functionCall"]["name"], "analyze_stock");
    assert!(model["parts"][1].get("thoughtSignature").is_none());
    let results = &second["contents"][2];
    assert_eq!(results["role"], "user");
    assert_eq!(results["parts"].as_array().unwrap().len(), 2);
    assert_eq!(
        results["parts"][0]["functionResponse"]["response"],
        json!({"ok": true})
    );
}

#[tokio::test]
async fn resource_exhausted_is_rate_limit_with_delay() {
    let s = server().await;
    let mut body = gemini_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded");
    body["error"]["details"] =
        json!([{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12s"}]);
    s.push(Route::Gemini, Response::error(429, body));
    let p = provider(ProviderKind::Gemini, &s, Some("k"));
    let e = p.stream(&req("a")).await.err().unwrap();
    assert_eq!(e.kind, ErrorKind::RateLimit);
    assert_eq!(e.retry_after, Some(std::time::Duration::from_secs(12)));
    assert!(e.message.contains("Quota exceeded"));
}

#[tokio::test]
async fn ending_without_finish_reason_is_a_protocol_error() {
    let s = server().await;
    s.push(
        Route::Gemini,
        GeminiStream::new().text(&["half"]).response(),
    );
    let p = provider(ProviderKind::Gemini, &s, Some("k"));
    let (chunks, err) = collect(p.as_ref(), &req("a")).await;
    assert_eq!(text(&chunks), "half");
    assert_eq!(err.unwrap().kind, ErrorKind::Protocol);
}
