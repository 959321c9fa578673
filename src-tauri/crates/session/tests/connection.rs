#![allow(clippy::unwrap_used, clippy::expect_used)]
//! "Test connection" over real HTTP against the mock vendor: success, a classified
//! vendor error, and a missing key found before any request.

use wyckoff_config::Secrets;
use wyckoff_config::secrets::MemoryBackend;
use wyckoff_config::settings::{ModelEntry, ProviderKind, Settings};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Response, Route, openai_error};
use wyckoff_protocol::ErrorKind;
use wyckoff_session::connection::{ConnectionError, test_entry};

fn entry(provider: ProviderKind, base_url: Option<String>) -> ModelEntry {
    ModelEntry {
        id: "test".into(),
        provider,
        model: "mock-model".into(),
        base_url,
        context_window: None,
        input_price_per_mtok: None,
        output_price_per_mtok: None,
    }
}

fn no_keys() -> Secrets {
    Secrets::with_backend(Box::new(MemoryBackend::default()), Box::new(|_| None))
}

#[tokio::test]
async fn a_working_endpoint_answers_the_ping() {
    let server = MockServer::start().await.unwrap();
    server.push(Route::Openai, OpenAiStream::text_response(&["pong"]));
    let e = entry(
        ProviderKind::OpenaiCompatible,
        Some(format!("{}/v1", server.url())),
    );
    let check = test_entry(&Settings::default(), &no_keys(), &e)
        .await
        .unwrap();
    assert_eq!(check.reply, "pong");
    assert_eq!(check.model, "mock-model");
    let body = &server.requests_to(Route::Openai)[0].body;
    assert_eq!(body["max_tokens"], 16);
    assert_eq!(body["messages"][0]["content"], "ping");
}

#[tokio::test]
async fn a_rejected_key_is_classified() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        Response::error(
            401,
            openai_error("Incorrect API key provided", "invalid_request_error", None),
        ),
    );
    let e = entry(
        ProviderKind::OpenaiCompatible,
        Some(format!("{}/v1", server.url())),
    );
    match test_entry(&Settings::default(), &no_keys(), &e).await {
        Err(ConnectionError::Vendor(err)) => {
            assert_eq!(err.kind, ErrorKind::Authentication);
            assert!(!err.message.is_empty());
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_missing_key_fails_before_any_request() {
    let e = entry(ProviderKind::Deepseek, None);
    match test_entry(&Settings::default(), &no_keys(), &e).await {
        Err(ConnectionError::Setup(err)) => {
            let text = err.to_string();
            assert!(text.contains("DEEPSEEK_API_KEY"), "{text}");
        }
        other => panic!("{other:?}"),
    }
}
