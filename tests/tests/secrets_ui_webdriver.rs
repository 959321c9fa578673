//! Secrets through the UI: a canary key typed into Settings → API keys
//! of the real app is saved to the real keychain (Secret Service), used for the vendor's
//! requests, and appears nowhere else — not in the DOM after saving nor after a 401 whose
//! body echoes it back (the error the user sees does not repeat it), not in any file under
//! the data home (database, WAL, logs, settings), not in any request body, and never in a
//! request to another host (the light model on a second server, with its own key, gets a
//! short turn). `scripts/test`
//! runs it inside `dbus-run-session` with gnome-keyring, under Xvfb.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use thirtyfour::prelude::*;
use wyckoff_config::Secrets;
use wyckoff_config::secrets::{KeyringBackend, SecretId};
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, send, shot, wait_attr, wait_for,
    wait_for_answer,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Response, Route};

/// Deliberately not shaped like any vendor key: pattern-based masking alone would miss it.
fn canary() -> String {
    format!("wyckoffuicanary{}z3", std::process::id())
}

/// The light model's own key (from the environment).
const OTHER_KEY: &str = "sk-other-host-key-0000";

/// The key of the settings' custom OpenAI-compatible model `mock`.
fn mock_key_id() -> SecretId {
    SecretId::Custom { id: "mock".into() }
}

fn keychain() -> Secrets {
    Secrets::with_backend(Box::new(KeyringBackend::default()), Box::new(|_| None))
}

/// Every file under `dir` whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if std::fs::read(&p)
                .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
            {
                hits.push(p);
            }
        }
    }
    hits
}

async fn assert_not_in_dom(d: &WebDriver, key: &str, when: &str) {
    let source = d.source().await.unwrap();
    assert!(!source.contains(key), "the key is in the DOM {when}");
}

async fn key_typed_in_settings_then_used(d: WebDriver, key: String) {
    let d = &d;
    click(d, By::Id("nav-settings")).await;
    let input = wait_for(d, By::Id("key-input-custom-mock")).await;
    input.send_keys(&key).await.unwrap();
    click(d, By::Id("key-save-custom-mock")).await;
    wait_attr(d, By::Id("key-status-custom-mock"), "data-set", "true").await;
    assert_eq!(
        wait_for(d, By::Id("key-input-custom-mock"))
            .await
            .value()
            .await
            .unwrap()
            .as_deref(),
        Some(""),
        "the input is cleared after saving"
    );
    assert_not_in_dom(d, &key, "after saving").await;
    shot(d, "82-secrets-ui-key-saved.png").await;

    // A turn with a tool, answered with the key from the keychain.
    click(d, By::Id("nav-chat")).await;
    send(d, "分析 000001").await;
    wait_for_answer(d, "000001 诊断完成").await;
    assert_not_in_dom(d, &key, "after a turn").await;
    // A short chat turn goes to the light model on the other host.
    send(d, "你好").await;
    wait_for_answer(d, "你好，我是轻量模型").await;

    // The vendor rejects the key and echoes it in its 401 body: the failure is shown,
    // the key is not.
    send(d, "再分析一次").await;
    let failed = wait_for(d, By::Css(".error.turn-end")).await;
    let shown = failed.text().await.unwrap();
    assert!(
        !shown.contains(&key),
        "the error shown echoes the key: {shown}"
    );
    assert_not_in_dom(d, &key, "after a 401 that echoes it").await;
    shot(d, "83-secrets-ui-401-shown.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a Secret Service"]
async fn a_key_typed_in_settings_leaks_nowhere() {
    let key = canary();
    let server = Arc::new(MockServer::start().await.unwrap());
    server.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .tool_call(0, "call_a", "analyze_stock", &[r#"{"code": "000001"}"#])
            .finish("tool_calls")
            .done()
            .response(),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["000001 诊断完成。"]),
    );
    server.push(
        Route::Openai,
        Response::error(
            401,
            json!({"error": {
                "message": format!("Incorrect API key provided: {key}. You can find your API key at ..."),
                "type": "invalid_request_error", "code": "invalid_api_key"}}),
        ),
    );
    // The light model lives on another host and has its own key.
    let other = MockServer::start().await.unwrap();
    other.push(
        Route::Openai,
        OpenAiStream::text_response(&["你好，我是轻量模型。"]),
    );
    let home = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let settings_file = home.path().join("settings.json");
    let mut settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings_file).unwrap()).unwrap();
    settings["models"].as_array_mut().unwrap().push(json!({
        "id": "other", "provider": "openai_compatible", "model": "light-model",
        "base_url": format!("{}/v1", other.url()), "context_window": null,
        "input_price_per_mtok": 0.5, "output_price_per_mtok": 1.0
    }));
    settings["light_model"] = json!("other");
    std::fs::write(&settings_file, settings.to_string()).unwrap();
    let xdg = tempfile::tempdir().unwrap();
    // No key from the environment: the one typed in the app must come from the keychain.
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        &[
            ("WYCKOFF_OFFLINE", "1"),
            ("WYCKOFF_KEY_MOCK", ""),
            ("WYCKOFF_KEY_OTHER", OTHER_KEY),
        ],
    );
    let k = key.clone();
    run_scenario(&driver, "secrets-ui", move |d| {
        key_typed_in_settings_then_used(d, k)
    })
    .await;

    // The key went where it belongs: the keychain, and the vendor's auth header only.
    assert_eq!(
        keychain()
            .get(&mock_key_id())
            .map(|(v, _)| v.expose().to_owned()),
        Some(key.clone())
    );
    let requests = server.requests_to(Route::Openai);
    assert_eq!(
        requests.len(),
        3,
        "tool call, answer, 401 (the short turn went elsewhere)"
    );
    for r in &requests {
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {key}").as_str())
        );
        assert!(!r.raw_body.contains(&key), "the key is in a request body");
    }
    // The other host got its own key and nothing of this one, in no header and no body.
    let elsewhere = other.requests_to(Route::Openai);
    assert_eq!(elsewhere.len(), 1, "the short turn went to the light model");
    for r in &elsewhere {
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {OTHER_KEY}").as_str())
        );
        assert!(
            r.headers.values().all(|v| !v.contains(&key)) && !r.raw_body.contains(&key),
            "the key went to another host: {r:?}"
        );
    }
    // …and nowhere under the data home: database, WAL, logs, settings, scratchpads.
    assert!(home.path().join("wyckoff.db").is_file());
    let logs: Vec<_> = std::fs::read_dir(home.path().join("logs"))
        .unwrap()
        .flatten()
        .filter(|e| e.metadata().is_ok_and(|m| m.len() > 0))
        .collect();
    assert!(!logs.is_empty(), "the app wrote no log to search");
    assert_eq!(files_containing(home.path(), &key), Vec::<PathBuf>::new());
    keychain().delete(&mock_key_id()).unwrap();
}
