//! The XSS corpus (tests/support/xss-corpus.json) as a model's answer in the real app: it
//! goes through the app's one Markdown path (rendered and sanitised in Rust, assigned to
//! the DOM by the chat view) and nothing in it runs — every payload sets
//! `window.__xss` if it executes, and it stays unset.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{
    TauriDriver, mock_model_settings, run_scenario, send, shot, wait_for, wait_for_answer,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Script};

fn corpus() -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("support/xss-corpus.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

async fn xss_scenario(d: WebDriver) {
    let d = &d;
    send(d, "把这些原样展示").await;
    wait_for_answer(d, "XSS-END").await;
    // Give load/error handlers (images, SVG, iframes) time to fire if anything survived.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let ran = d
        .execute(
            "return window.__xss === undefined ? null : window.__xss;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(ran.json(), &serde_json::Value::Null, "a payload ran");
    wait_for(d, By::Css(".msg.final .markdown")).await;
    // What survived as live DOM (escaped text is fine: it is text): no active element, no
    // handler attribute, no script-bearing URL.
    let found = d
        .execute(
            r#"const bad = [];
               for (const el of document.querySelectorAll('.msg.final .markdown *')) {
                 const tag = el.tagName.toLowerCase();
                 if (['script','iframe','svg','math','object','embed','style','link','meta','form','base','template','video','source'].includes(tag)) bad.push(tag);
                 for (const a of el.attributes) {
                   const v = a.value.toLowerCase().replace(/\s/g, '');
                   if (a.name.startsWith('on') || a.name === 'style' || a.name === 'srcdoc') bad.push(tag + '@' + a.name);
                   if ((a.name === 'href' || a.name === 'src') && /^(javascript|vbscript|data):/.test(v)) bad.push(tag + '@' + a.name + '=' + v);
                 }
               }
               return bad;"#,
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        found.json(),
        &serde_json::json!([]),
        "active markup survived"
    );
    shot(d, "60-xss-corpus-inert.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn the_xss_corpus_stays_inert_in_the_real_webview() {
    let mut answer: Vec<String> = Vec::new();
    for (i, p) in corpus().iter().enumerate() {
        answer.push(format!("payload {i}:\n\n{p}\n\n"));
    }
    answer.push("XSS-END".into());
    let script = Script {
        openai: vec![OpenAiStream::text_response(&answer)],
        ..Script::default()
    };
    let server = MockServer::start_with(script, 0).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        &[
            ("WYCKOFF_OFFLINE", "1"),
            ("WYCKOFF_KEY_MOCK", "sk-xss-e2e-123456"),
        ],
    );
    run_scenario(&driver, "xss", xss_scenario).await;
}
