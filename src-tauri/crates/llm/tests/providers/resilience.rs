use std::sync::Arc;

use wyckoff_llm::{
    FallbackPolicy, FallbackProvider, Provider, ProviderKind, RoutingProvider, StreamChunk,
};
use wyckoff_mock_vendor::{OpenAiStream, Response, Route, openai_error};
use wyckoff_protocol::{ErrorKind, Message, Tier};

use crate::common::*;

fn fallback(
    primary: Arc<dyn Provider>,
    secondary: Arc<dyn Provider>,
    resend: bool,
) -> Arc<dyn Provider> {
    FallbackProvider::wrap(
        vec![primary, secondary],
        FallbackPolicy {
            resend_possibly_billed: resend,
        },
    )
    .unwrap()
}

#[tokio::test]
async fn rate_limited_primary_falls_back_before_content() {
    let a = server().await;
    let b = server().await;
    a.push(
        Route::Openai,
        Response::error(429, openai_error("slow down", "rate_limit_error", None)),
    );
    b.push(
        Route::Claude,
        wyckoff_mock_vendor::ClaudeStream::text_response(&["from ", "claude"]),
    );
    let p = fallback(
        provider(ProviderKind::Deepseek, &a, Some("k1")),
        provider(ProviderKind::Claude, &b, Some("k2")),
        false,
    );
    let (chunks, err) = collect(p.as_ref(), &req("hi")).await;
    assert!(err.is_none(), "{err:?}");
    match &chunks[0] {
        StreamChunk::Fallback {
            from,
            to,
            reason,
            discard_text,
        } => {
            assert_eq!((from.as_str(), to.as_str()), ("deepseek", "claude"));
            assert!(reason.contains("slow down"), "{reason}");
            assert!(!discard_text);
        }
        other => panic!("expected a fallback notice first, got {other:?}"),
    }
    assert_eq!(text(&chunks), "from claude");
    assert_eq!(p.name(), "claude");
    assert_eq!(a.requests().len(), 1);
    assert_eq!(b.requests().len(), 1);
}

#[tokio::test]
async fn overload_mid_stream_after_text_is_not_resent_by_default() {
    let a = server().await;
    let b = server().await;
    a.push(
        Route::Openai,
        OpenAiStream::new()
            .text(&["partial "])
            .event(wyckoff_mock_vendor::Event::json(
                serde_json::json!({"error": {"message": "overloaded", "type": "overloaded_error"}}),
            ))
            .response(),
    );
    let p = fallback(
        provider(ProviderKind::Deepseek, &a, Some("k1")),
        provider(ProviderKind::Ollama, &b, None),
        false,
    );
    let (chunks, err) = collect(p.as_ref(), &req("hi")).await;
    assert_eq!(text(&chunks), "partial ");
    let err = err.unwrap();
    assert_eq!(err.kind, ErrorKind::Overloaded);
    assert!(err.after_content);
    assert!(
        b.requests().is_empty(),
        "must not resend a possibly billed request"
    );
}

#[tokio::test]
async fn with_resend_policy_partial_text_is_discarded_explicitly() {
    let a = server().await;
    let b = server().await;
    a.push(
        Route::Openai,
        OpenAiStream::new()
            .text(&["partial "])
            .response()
            .cut_after(1),
    );
    b.push(
        Route::Openai,
        OpenAiStream::text_response(&["whole answer"]),
    );
    let p = fallback(
        provider(ProviderKind::Deepseek, &a, Some("k1")),
        provider(ProviderKind::Ollama, &b, None),
        true,
    );
    let (chunks, err) = collect(p.as_ref(), &req("hi")).await;
    assert!(err.is_none(), "{err:?}");
    let notice = chunks
        .iter()
        .position(|c| {
            matches!(
                c,
                StreamChunk::Fallback {
                    discard_text: true,
                    ..
                }
            )
        })
        .expect("a discard notice");
    assert_eq!(text(&chunks[..notice]), "partial ");
    assert_eq!(text(&chunks[notice..]), "whole answer");
    // complete() honours the discard: no duplicated text.
    a.push(
        Route::Openai,
        OpenAiStream::new()
            .text(&["partial "])
            .response()
            .cut_after(1),
    );
    b.push(
        Route::Openai,
        OpenAiStream::text_response(&["whole answer"]),
    );
    assert_eq!(p.complete(&req("hi")).await.unwrap().text, "whole answer");
}

#[tokio::test]
async fn non_retryable_errors_do_not_fall_back() {
    let a = server().await;
    let b = server().await;
    a.push(
        Route::Openai,
        Response::error(401, openai_error("bad key", "invalid_request_error", None)),
    );
    let p = fallback(
        provider(ProviderKind::Openai, &a, Some("k1")),
        provider(ProviderKind::Ollama, &b, None),
        true,
    );
    let e = p.stream(&req("hi")).await.err().unwrap();
    assert_eq!(e.kind, ErrorKind::Authentication);
    assert!(b.requests().is_empty());
}

#[tokio::test]
async fn last_provider_error_is_returned_when_all_fail() {
    let a = server().await;
    let b = server().await;
    a.push(
        Route::Openai,
        Response::error(503, serde_json::json!("busy")),
    );
    b.push(
        Route::Openai,
        Response::error(500, openai_error("boom", "server_error", None)),
    );
    let p = fallback(
        provider(ProviderKind::Qwen, &a, Some("k1")),
        provider(ProviderKind::Ollama, &b, None),
        false,
    );
    let e = p.stream(&req("hi")).await.err().unwrap();
    assert_eq!((e.kind, e.provider.as_str()), (ErrorKind::Server, "ollama"));
}

#[tokio::test]
async fn router_sends_simple_turns_to_the_light_model() {
    let heavy_srv = server().await;
    let light_srv = server().await;
    heavy_srv.push(
        Route::Claude,
        wyckoff_mock_vendor::ClaudeStream::text_response(&["deep"]),
    );
    light_srv.push(Route::Openai, OpenAiStream::text_response(&["quick"]));
    let heavy = provider(ProviderKind::Claude, &heavy_srv, Some("k"));
    let light = provider(ProviderKind::Ollama, &light_srv, None);
    let router = RoutingProvider::route(heavy.clone(), Some(light));
    assert_eq!(router.last_tier(), None);

    // Who will serve a request is known before it is sent (model_start carries it).
    let light_model = router.serving(&req("好的"));
    assert_eq!(light_model.tier, Some(Tier::Light));
    assert_eq!(light_model.provider, "ollama");
    assert_eq!(router.last_tier(), None, "asking does not route");

    assert_eq!(router.complete(&req("好的")).await.unwrap().text, "quick");
    assert_eq!(router.last_tier(), Some(Tier::Light));
    assert_eq!(router.name(), "ollama");

    let mut r = req("帮我分析一下 600519 的吸筹阶段");
    r.messages.insert(0, Message::assistant("hello"));
    let heavy_model = router.serving(&r);
    assert_eq!(
        (heavy_model.provider.as_str(), heavy_model.tier),
        ("claude", Some(Tier::Heavy))
    );
    assert_eq!(
        router.last_tier(),
        Some(Tier::Light),
        "still the last routed"
    );
    assert_eq!(router.complete(&r).await.unwrap().text, "deep");
    assert_eq!(router.last_tier(), Some(Tier::Heavy));
    assert_eq!(router.name(), "claude");
    assert_eq!(
        router.context_window(),
        128_000,
        "smaller of the two windows"
    );

    let no_router = RoutingProvider::route(heavy, None);
    assert_eq!(no_router.name(), "claude");
    assert_eq!(no_router.last_tier(), None);
}

#[tokio::test]
async fn unreachable_primary_is_a_network_error_and_falls_back() {
    // A port nobody listens on: connection refused.
    let dead = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead_url = format!("http://{}/v1", dead.local_addr().unwrap());
    drop(dead);
    let spec = wyckoff_llm::ProviderSpec::new(ProviderKind::Ollama).base_url(dead_url);
    let down = wyckoff_llm::build(&spec, &http()).unwrap();

    let e = down.stream(&req("hi")).await.err().unwrap();
    assert_eq!(e.kind, ErrorKind::Network);
    assert!(e.is_retryable() && !e.after_content);
    assert!(
        e.to_string().starts_with("ollama: could not connect"),
        "{e}"
    );

    let b = server().await;
    b.push(Route::Openai, OpenAiStream::text_response(&["cloud"]));
    let p = fallback(down, provider(ProviderKind::Deepseek, &b, Some("k")), false);
    let done = p.complete(&req("hi")).await.unwrap();
    assert_eq!(done.text, "cloud");
    assert_eq!(p.name(), "deepseek");
}
