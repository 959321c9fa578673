use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wyckoff_llm::{FinishReason, ProviderKind, StreamChunk};
use wyckoff_mock_vendor::{Event, OpenAiStream, Response, Route, fragments, openai_error};
use wyckoff_protocol::{ErrorKind, Message, Usage};

use crate::common::*;

#[tokio::test]
async fn text_streams_in_pieces_with_usage_and_headers() {
    let s = server().await;
    s.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .text(&["Wyckoff ", "积累", "阶段"])
            .finish("stop")
            .usage(120, 7, 100)
            .done()
            .response(),
    );
    let p = provider(ProviderKind::Openai, &s, Some("sk-test-key"));
    let (chunks, err) = collect(p.as_ref(), &req("hi")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text(&chunks), "Wyckoff 积累阶段");
    assert_eq!(text_deltas(&chunks), 3, "deltas are passed on as they come");
    assert_eq!(
        chunks[chunks.len() - 2..],
        [
            StreamChunk::Usage(Usage {
                input_tokens: 120,
                output_tokens: 7,
                cache_read_tokens: 100,
                cache_write_tokens: 0
            }),
            StreamChunk::Finish(FinishReason::Stop)
        ]
    );

    let sent = s.requests_to(Route::Openai);
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some("Bearer sk-test-key"));
    assert_eq!(r.header("accept-encoding"), Some("identity"));
    assert_eq!(r.body["model"], "gpt-4o");
    assert_eq!(r.body["stream"], true);
    assert_eq!(r.body["stream_options"], json!({"include_usage": true}));
    assert_eq!(r.body["tool_choice"], "auto");
    assert_eq!(
        r.body["messages"][0],
        json!({"role": "system", "content": "You are a Wyckoff analyst."})
    );
    assert_eq!(r.body["tools"][0]["type"], "function");
    assert_eq!(r.body["tools"][0]["function"]["name"], "analyze_stock");
}

#[tokio::test]
async fn tool_call_arguments_in_many_fragments() {
    let s = server().await;
    let args = r#"{"code": "600519", "days": 30}"#;
    let pieces = fragments(args, 3);
    assert!(pieces.len() > 8);
    s.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .tool_call(0, "call_abc", "analyze_stock", &pieces)
            .finish("tool_calls")
            .usage(50, 20, 0)
            .done()
            .response(),
    );
    let p = provider(ProviderKind::Deepseek, &s, Some("k"));
    let (chunks, err) = collect(p.as_ref(), &req("诊断 600519")).await;
    assert!(err.is_none(), "{err:?}");
    let c = calls(&chunks);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].id, "call_abc");
    assert_eq!(c[0].name, "analyze_stock");
    assert_eq!(c[0].args, json!({"code": "600519", "days": 30}));
    assert_eq!(c[0].args_error, None);
    assert_eq!(
        chunks.last(),
        Some(&StreamChunk::Finish(FinishReason::ToolCalls))
    );
    assert_eq!(text(&chunks), "");
}

#[tokio::test]
async fn two_parallel_tool_calls_interleaved_by_index() {
    let s = server().await;
    s.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .tool_fragment(0, Some("call_1"), Some("analyze_stock"), "")
            .tool_fragment(1, Some("call_2"), Some("portfolio"), "")
            .tool_fragment(0, None, None, "{\"code\":")
            .tool_fragment(1, None, None, "{\"mode\":")
            .tool_fragment(1, None, None, " \"view\"}")
            .tool_fragment(0, None, None, " \"000001\"}")
            .finish("tool_calls")
            .done()
            .response(),
    );
    let p = provider(ProviderKind::Qwen, &s, Some("k"));
    let (chunks, err) = collect(p.as_ref(), &req("看看")).await;
    assert!(err.is_none(), "{err:?}");
    let c = calls(&chunks);
    assert_eq!(c.len(), 2);
    assert_eq!(
        (c[0].id.as_str(), c[0].name.as_str()),
        ("call_1", "analyze_stock")
    );
    assert_eq!(c[0].args, json!({"code": "000001"}));
    assert_eq!(
        (c[1].id.as_str(), c[1].name.as_str()),
        ("call_2", "portfolio")
    );
    assert_eq!(c[1].args, json!({"mode": "view"}));
    assert_eq!(s.requests()[0].body["parallel_tool_calls"], true);
}

#[tokio::test]
async fn three_parallel_calls_from_the_helper() {
    let s = server().await;
    s.push(
        Route::Openai,
        OpenAiStream::new()
            .parallel_tool_calls(
                &[
                    ("c1", "analyze_stock", r#"{"code":"600519","days":30}"#),
                    ("c2", "analyze_stock", r#"{"code":"000001"}"#),
                    ("c3", "portfolio", "{}"),
                ],
                2,
            )
            .finish("tool_calls")
            .done()
            .response(),
    );
    let p = provider(ProviderKind::OpenaiCompatible, &s, None);
    let (chunks, err) = collect(p.as_ref(), &req("x")).await;
    assert!(err.is_none());
    let c = calls(&chunks);
    let got: Vec<(&str, Value)> = c.iter().map(|c| (c.id.as_str(), c.args.clone())).collect();
    assert_eq!(
        got,
        vec![
            ("c1", json!({"code": "600519", "days": 30})),
            ("c2", json!({"code": "000001"})),
            ("c3", json!({}))
        ]
    );
}

#[tokio::test]
async fn malformed_tool_arguments_are_reported_not_emptied() {
    let s = server().await;
    s.push(
        Route::Openai,
        OpenAiStream::new()
            .tool_call(0, "call_x", "analyze_stock", &["{\"code\": ", "\"600519\""])
            .finish("tool_calls")
            .done()
            .response(),
    );
    let p = provider(ProviderKind::Openai, &s, Some("k"));
    let (chunks, err) = collect(p.as_ref(), &req("x")).await;
    assert!(err.is_none());
    let c = calls(&chunks);
    assert_eq!(c[0].args, Value::Null);
    let e = c[0].args_error.as_deref().unwrap();
    assert!(
        e.contains("not valid JSON") && e.contains("{\"code\": \"600519\""),
        "{e}"
    );
}

#[tokio::test]
async fn deepseek_reasoning_content_round_trip() {
    let s = server().await;
    s.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .reasoning(&["先看", "量价"])
            .tool_call(0, "call_r1", "analyze_stock", &["{\"code\":\"600519\"}"])
            .finish("tool_calls")
            .usage(30, 10, 0)
            .done()
            .response(),
    );
    s.push(Route::Openai, OpenAiStream::text_response(&["结论"]));
    let p = provider(ProviderKind::Deepseek, &s, Some("k"));

    let mut request = req("分析 600519");
    let first = p.complete(&request).await.unwrap();
    assert_eq!(first.thinking, "先看量价");
    assert_eq!(first.tool_calls.len(), 1);

    let call = first.tool_calls[0].clone();
    request.messages.push(Message::Assistant {
        content: first.text.clone(),
        tool_calls: first.tool_calls.clone(),
        reasoning: Some(first.thinking.clone()),
        reasoning_signature: None,
    });
    request
        .messages
        .push(Message::tool_result(&call, "{\"phase\":\"B\"}", false));
    let second = p.complete(&request).await.unwrap();
    assert_eq!(second.text, "结论");

    let sent = s.requests_to(Route::Openai);
    assert_eq!(sent.len(), 2);
    let assistant = &sent[1].body["messages"][2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["reasoning_content"], "先看量价");
    assert_eq!(assistant["tool_calls"][0]["id"], "call_r1");
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"],
        "{\"code\":\"600519\"}"
    );
    assert_eq!(
        sent[1].body["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_r1", "content": "{\"phase\":\"B\"}"})
    );
}

#[tokio::test]
async fn reasoning_and_thinking_field_variants() {
    let s = server().await;
    s.push(
        Route::Openai,
        OpenAiStream::new()
            .delta(json!({"reasoning": "a"}))
            .delta(json!({"thinking": {"content": "b"}}))
            .text(&["<think>c</think>d"])
            .finish("stop")
            .done()
            .response(),
    );
    let p = provider(ProviderKind::Ollama, &s, None);
    let (chunks, err) = collect(p.as_ref(), &req("x")).await;
    assert!(err.is_none());
    assert_eq!(thinking(&chunks), "abc");
    assert_eq!(text(&chunks), "d");
}

#[tokio::test]
async fn xml_tool_calls_in_text_become_real_calls() {
    let s = server().await;
    let body = "我来查一下。<tool_call>\n{\"name\": \"analyze_stock\", \"arguments\": {\"code\": \"600519\"}}\n</tool_call>";
    s.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .text(&fragments(body, 4))
            .finish("stop")
            .done()
            .response(),
    );
    let p = provider(ProviderKind::OpenaiCompatible, &s, None);
    let (chunks, err) = collect(p.as_ref(), &req("x")).await;
    assert!(err.is_none());
    for c in &chunks {
        if let StreamChunk::TextDelta(t) = c {
            assert!(
                !t.contains('<') && !t.contains("tool_call"),
                "tag text leaked: {t:?}"
            );
        }
    }
    assert_eq!(text(&chunks), "我来查一下。");
    let c = calls(&chunks);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].name, "analyze_stock");
    assert_eq!(c[0].args, json!({"code": "600519"}));
    assert_eq!(
        chunks.last(),
        Some(&StreamChunk::Finish(FinishReason::ToolCalls))
    );
}

#[tokio::test]
async fn keyless_local_server_gets_no_authorization_header() {
    let s = server().await;
    s.push(Route::Openai, OpenAiStream::text_response(&["ok"]));
    let p = provider(ProviderKind::Ollama, &s, None);
    assert_eq!(p.name(), "ollama");
    let done = p.complete(&req("hi")).await.unwrap();
    assert_eq!(done.text, "ok");
    assert_eq!(s.requests()[0].header("authorization"), None);
}

#[tokio::test]
async fn rejected_stream_options_are_dropped_and_remembered() {
    let s = server().await;
    s.push(
        Route::Openai,
        Response::error(
            400,
            openai_error(
                "Unrecognized request argument supplied: stream_options",
                "invalid_request_error",
                Some("stream_options"),
            ),
        ),
    );
    s.push(Route::Openai, OpenAiStream::text_response(&["one"]));
    s.push(Route::Openai, OpenAiStream::text_response(&["two"]));
    let http = http();
    let p = provider_with(
        ProviderKind::OpenaiCompatible,
        &s,
        None,
        Duration::from_secs(5),
        &http,
    );
    assert_eq!(p.complete(&req("a")).await.unwrap().text, "one");
    // A new provider for the same endpoint (same shared client) still remembers.
    let p2 = provider_with(
        ProviderKind::OpenaiCompatible,
        &s,
        None,
        Duration::from_secs(5),
        &http,
    );
    assert_eq!(p2.complete(&req("b")).await.unwrap().text, "two");

    let sent = s.requests_to(Route::Openai);
    assert_eq!(sent.len(), 3);
    assert!(sent[0].body.get("stream_options").is_some());
    assert!(sent[1].body.get("stream_options").is_none());
    assert_eq!(
        sent[1].body["tool_choice"], "auto",
        "only the named parameter is dropped"
    );
    assert!(
        sent[2].body.get("stream_options").is_none(),
        "third request skips it from the start"
    );
}

#[tokio::test]
async fn generic_422_degrades_step_by_step_then_gives_up() {
    let s = server().await;
    for _ in 0..3 {
        s.push(
            Route::Openai,
            Response::error(422, json!({"detail": "Unprocessable Entity"})),
        );
    }
    let p = provider(ProviderKind::OpenaiCompatible, &s, None);
    let err = p.stream(&req("a")).await.err().unwrap();
    assert_eq!(err.kind, ErrorKind::InvalidRequest);
    assert_eq!(err.status, Some(422));
    let sent = s.requests_to(Route::Openai);
    assert_eq!(sent.len(), 3);
    assert!(sent[1].body.get("stream_options").is_none());
    assert!(sent[1].body.get("tool_choice").is_some());
    for k in [
        "stream_options",
        "tool_choice",
        "parallel_tool_calls",
        "frequency_penalty",
    ] {
        assert!(sent[2].body.get(k).is_none(), "{k} still sent");
    }
}

#[tokio::test]
async fn rate_limit_with_retry_after() {
    let s = server().await;
    s.push(
        Route::Openai,
        Response::error(
            429,
            openai_error("Rate limit reached", "rate_limit_error", None),
        )
        .header("retry-after", "3"),
    );
    let p = provider(ProviderKind::Kimi, &s, Some("k"));
    let err = p.stream(&req("a")).await.err().unwrap();
    assert_eq!(err.kind, ErrorKind::RateLimit);
    assert_eq!(err.status, Some(429));
    assert_eq!(err.retry_after, Some(Duration::from_secs(3)));
    assert_eq!(err.provider, "kimi");
    assert!(
        err.message.contains("Rate limit reached") && err.message.contains("3 s"),
        "{}",
        err.message
    );
    assert!(!err.after_content);
}

#[tokio::test]
async fn server_errors_and_auth() {
    let s = server().await;
    s.push(
        Route::Openai,
        Response::error(500, openai_error("internal", "server_error", None)),
    );
    s.push(
        Route::Openai,
        Response::error(503, json!("Service Unavailable")),
    );
    s.push(
        Route::Openai,
        Response::error(
            401,
            openai_error(
                "Incorrect API key provided: sk-abc*********xyz",
                "invalid_request_error",
                None,
            ),
        ),
    );
    let p = provider(ProviderKind::Openai, &s, Some("sk-abcdefghijklmxyz"));
    let e = p.stream(&req("a")).await.err().unwrap();
    assert_eq!(e.kind, ErrorKind::Server);
    assert!(e.is_retryable());
    let e = p.stream(&req("a")).await.err().unwrap();
    assert_eq!(e.kind, ErrorKind::Overloaded);
    let e = p.stream(&req("a")).await.err().unwrap();
    assert_eq!(e.kind, ErrorKind::Authentication);
    assert!(!e.is_retryable());
    assert!(!e.message.contains("sk-abc"), "{}", e.message);
}

#[tokio::test]
async fn malformed_json_chunk_is_a_protocol_error_after_content() {
    let s = server().await;
    s.push(
        Route::Openai,
        OpenAiStream::new()
            .text(&["partial"])
            .event(Event::text("{\"choices\": [ broken"))
            .finish("stop")
            .done()
            .response(),
    );
    let p = provider(ProviderKind::Openai, &s, Some("k"));
    let (chunks, err) = collect(p.as_ref(), &req("a")).await;
    assert_eq!(text(&chunks), "partial");
    let err = err.unwrap();
    assert_eq!(err.kind, ErrorKind::Protocol);
    assert!(err.after_content);
    assert!(err.message.contains("malformed JSON"), "{}", err.message);
}

#[tokio::test]
async fn stream_ending_without_final_event_is_an_error() {
    let s = server().await;
    // Closed cleanly, but neither a finish reason nor [DONE].
    s.push(
        Route::Openai,
        OpenAiStream::new().text(&["a", "b"]).response(),
    );
    // Connection aborted mid-body.
    s.push(
        Route::Openai,
        OpenAiStream::new()
            .text(&["a", "b"])
            .finish("stop")
            .done()
            .response()
            .cut_after(1),
    );
    let p = provider(ProviderKind::Openai, &s, Some("k"));
    let (chunks, err) = collect(p.as_ref(), &req("a")).await;
    assert_eq!(text(&chunks), "ab");
    let err = err.unwrap();
    assert_eq!(err.kind, ErrorKind::Protocol);
    assert!(err.after_content);
    assert!(err.is_retryable());

    let (chunks, err) = collect(p.as_ref(), &req("a")).await;
    assert_eq!(text(&chunks), "a");
    let err = err.unwrap();
    assert_eq!(err.kind, ErrorKind::Network, "{err:?}");
    assert!(err.after_content);
}

#[tokio::test]
async fn finish_without_done_is_accepted() {
    let s = server().await;
    s.push(
        Route::Openai,
        OpenAiStream::new()
            .text(&["ok"])
            .finish("length")
            .response(),
    );
    let p = provider(ProviderKind::OpenaiCompatible, &s, None);
    let (chunks, err) = collect(p.as_ref(), &req("a")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(
        chunks.last(),
        Some(&StreamChunk::Finish(FinishReason::Length))
    );
}

#[tokio::test]
async fn in_stream_error_object_is_classified() {
    let s = server().await;
    s.push(
        Route::Openai,
        OpenAiStream::new()
            .event(Event::json(
                json!({"error": {"message": "Rate limit exceeded", "type": "rate_limit_exceeded"}}),
            ))
            .response(),
    );
    let p = provider(ProviderKind::OpenaiCompatible, &s, None);
    let (chunks, err) = collect(p.as_ref(), &req("a")).await;
    assert!(chunks.is_empty());
    let err = err.unwrap();
    assert_eq!(err.kind, ErrorKind::RateLimit);
    assert!(!err.after_content);
}

#[tokio::test]
async fn stall_mid_stream_hits_the_idle_timeout() {
    let s = server().await;
    s.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .text(&["still ", "here"])
            .finish("stop")
            .done()
            .response()
            .stall_after(3),
    );
    let p = provider_with(
        ProviderKind::OpenaiCompatible,
        &s,
        None,
        Duration::from_millis(300),
        &http(),
    );
    let started = Instant::now();
    let (chunks, err) = collect(p.as_ref(), &req("a")).await;
    let elapsed = started.elapsed();
    // The chunks before the stall arrived (the stream is not buffered) …
    assert_eq!(text(&chunks), "still here");
    // … then the half-open connection was detected.
    let err = err.unwrap();
    assert_eq!(err.kind, ErrorKind::Timeout);
    assert!(err.after_content);
    assert!(err.message.contains("300 ms"), "{}", err.message);
    assert!(elapsed >= Duration::from_millis(300), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
}

#[tokio::test]
async fn idle_timer_restarts_after_every_chunk() {
    let s = server().await;
    let events: Vec<Event> = OpenAiStream::new()
        .text(&["a", "b", "c", "d"])
        .finish("stop")
        .done()
        .events()
        .into_iter()
        .map(|e| e.delayed(120))
        .collect();
    s.push(Route::Openai, Response::stream(events));
    let p = provider_with(
        ProviderKind::OpenaiCompatible,
        &s,
        None,
        Duration::from_millis(500),
        &http(),
    );
    let started = Instant::now();
    let (chunks, err) = collect(p.as_ref(), &req("a")).await;
    // The whole stream took longer than the timeout, but no gap did.
    assert!(started.elapsed() > Duration::from_millis(500));
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text(&chunks), "abcd");
}

#[tokio::test]
async fn stall_before_any_event_times_out_too() {
    let s = server().await;
    s.push(
        Route::Openai,
        OpenAiStream::text_response(&["x"]).stall_after(0),
    );
    let p = provider_with(
        ProviderKind::OpenaiCompatible,
        &s,
        None,
        Duration::from_millis(300),
        &http(),
    );
    let started = Instant::now();
    let (chunks, err) = collect(p.as_ref(), &req("a")).await;
    assert!(chunks.is_empty());
    assert_eq!(err.unwrap().kind, ErrorKind::Timeout);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn crlf_framing_comments_and_split_events() {
    let s = server().await;
    let c1 = json!({"choices": [{"index": 0, "delta": {"content": "A"}, "finish_reason": null}]})
        .to_string();
    let c2 = json!({"choices": [{"index": 0, "delta": {"content": "B"}, "finish_reason": "stop"}]})
        .to_string();
    let (h1, h2) = c2.split_at(10);
    s.push(
        Route::Openai,
        Response::stream(vec![
            Event::raw(": keep-alive\r\n\r\n"),
            Event::raw(&format!("data: {c1}\r\n\r\n")),
            Event::raw(&format!("data: {h1}")),
            Event::raw(&format!("{h2}\r\n\r\ndata: [DO")),
            Event::raw("NE]\r\n\r\n"),
        ]),
    );
    let p = provider(ProviderKind::OpenaiCompatible, &s, None);
    let (chunks, err) = collect(p.as_ref(), &req("a")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text(&chunks), "AB");
    assert_eq!(
        chunks.last(),
        Some(&StreamChunk::Finish(FinishReason::Stop))
    );
}

/// The request's tools plus one whose open object strict mode cannot express.
fn strict_req() -> wyckoff_llm::ChatRequest {
    let mut r = req("诊断 600519");
    r.tools.push(wyckoff_protocol::ToolSchema {
        name: "mcp__kv__put".into(),
        description: "[MCP server kv] store any object".into(),
        parameters: json!({"type": "object",
            "properties": {"value": {"type": "object", "additionalProperties": true}},
            "required": ["value"]}),
    });
    r
}

fn strict_provider(
    kind: ProviderKind,
    s: &wyckoff_mock_vendor::MockServer,
    strict: Option<bool>,
) -> std::sync::Arc<dyn wyckoff_llm::Provider> {
    let mut spec = wyckoff_llm::ProviderSpec::new(kind)
        .base_url(format!("{}/v1", s.url()))
        .api_key("k");
    if let Some(on) = strict {
        spec = spec.strict_tools(on);
    }
    wyckoff_llm::build(&spec, &http()).unwrap()
}

fn null_days_call() -> Response {
    OpenAiStream::new()
        .role()
        .tool_call(
            0,
            "call_n",
            "analyze_stock",
            &[r#"{"code": "600519", "days": null}"#],
        )
        .finish("tool_calls")
        .done()
        .response()
}

#[tokio::test]
async fn openai_gets_strict_tools_and_its_nulls_for_optional_arguments_go() {
    let s = server().await;
    s.push(Route::Openai, null_days_call());
    // The mock's URL is not api.openai.com, so strict is asked for here; which endpoints
    // get it by default is `strict_by_default`'s table test.
    let p = strict_provider(ProviderKind::Openai, &s, Some(true));
    let (chunks, err) = collect(p.as_ref(), &strict_req()).await;
    assert!(err.is_none(), "{err:?}");
    let c = calls(&chunks);
    assert_eq!(
        c[0].args,
        json!({"code": "600519"}),
        "the null the strict form made possible is gone"
    );

    let body = &s.requests_to(Route::Openai)[0].body;
    let f = |i: usize| body["tools"][i]["function"].clone();
    assert_eq!(f(0)["strict"], true);
    assert_eq!(
        f(0)["parameters"],
        json!({"type": "object",
            "properties": {"code": {"type": "string"}, "days": {"type": ["integer", "null"]}},
            "required": ["code", "days"], "additionalProperties": false})
    );
    assert_eq!(f(1)["strict"], true);
    assert_eq!(f(1)["parameters"]["required"], json!(["mode"]));
    // The open object goes as it is, without strict.
    assert!(f(2).get("strict").is_none(), "{}", f(2));
    assert_eq!(f(2)["parameters"], strict_req().tools[2].parameters);
}

#[tokio::test]
async fn compatible_vendors_get_the_schema_as_it_is() {
    for kind in [ProviderKind::Deepseek, ProviderKind::Openai] {
        let s = server().await;
        s.push(Route::Openai, null_days_call());
        // No override: neither DeepSeek nor OpenAI-format at a non-OpenAI URL is strict.
        let p = strict_provider(kind, &s, None);
        let (chunks, err) = collect(p.as_ref(), &strict_req()).await;
        assert!(err.is_none(), "{err:?}");
        assert_eq!(
            calls(&chunks)[0].args,
            json!({"code": "600519", "days": null})
        );
        let body = &s.requests_to(Route::Openai)[0].body;
        let tools = strict_req().tools;
        for (i, t) in tools.iter().enumerate() {
            let f = &body["tools"][i]["function"];
            assert!(f.get("strict").is_none(), "{kind:?}: {f}");
            assert_eq!(f["parameters"], t.parameters, "{kind:?}");
        }
    }
}

#[tokio::test]
async fn a_refused_strict_schema_is_sent_again_without_strict() {
    let s = server().await;
    s.push(
        Route::Openai,
        Response::error(
            400,
            openai_error(
                "Invalid schema for function 'analyze_stock': In context=(), 'minimum' is not permitted.",
                "invalid_request_error",
                Some("tools[0].function.parameters"),
            ),
        ),
    );
    s.push(Route::Openai, null_days_call());
    let p = strict_provider(ProviderKind::Openai, &s, Some(true));
    let (chunks, err) = collect(p.as_ref(), &strict_req()).await;
    assert!(err.is_none(), "{err:?}");
    let sent = s.requests_to(Route::Openai);
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].body["tools"][0]["function"]["strict"], true);
    assert!(sent[1].body["tools"][0]["function"].get("strict").is_none());
    assert_eq!(
        sent[1].body["stream_options"],
        json!({"include_usage": true}),
        "only strict was dropped"
    );
    // Sent non-strict, the null is the model's own and stays for the registry to judge.
    assert_eq!(
        calls(&chunks)[0].args,
        json!({"code": "600519", "days": null})
    );
}
