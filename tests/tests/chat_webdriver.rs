//! WebDriver test of the chat in the real app, with `wyckoff-mock-vendor` as the model
//! (OpenAI wire format): a tool turn shows a tool card; a Markdown answer is rendered by
//! the backend and anything active in it (`<script>`, `onerror`) is inert.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use thirtyfour::prelude::*;
use wyckoff_e2e::binary;
use wyckoff_e2e::webdriver::{
    TauriDriver, mock_model_settings, run_scenario, send, shot, wait_for, wait_for_answer,
};

/// The mock vendor process, stopped with SIGTERM.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        #[allow(unsafe_code)]
        // SAFETY: signalling our own child process by pid.
        unsafe {
            libc::kill(self.0.id() as libc::pid_t, libc::SIGTERM);
        }
        let _ = self.0.wait();
    }
}

/// Starts the mock vendor and returns it with its base URL.
fn mock_vendor(script: &Path) -> (Killed, String) {
    let mut child = Command::new(binary("wyckoff-mock-vendor"))
        .arg("--script")
        .arg(script)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening ")
        .expect("mock vendor prints its address")
        .to_owned();
    (Killed(child), url)
}

async fn chat_scenario(d: WebDriver) {
    let d = &d;

    // A tool turn: the model calls analyze_stock on 000001 (bundled data), then answers.
    send(d, "帮我看看 000001").await;
    let card = wait_for(
        d,
        By::Css(".tool-card[data-tool='analyze_stock'][data-status='ok']"),
    )
    .await;
    assert!(card.text().await.unwrap().contains("000001"));
    wait_for_answer(d, "的分析见上").await;
    shot(d, "10-chat-tool-card.png").await;

    // A Markdown answer: rendered (table, strikethrough) and sanitised.
    send(d, "总结一下").await;
    let table = wait_for(d, By::Css(".msg.final .markdown table")).await;
    assert!(table.text().await.unwrap().contains("000001"));
    wait_for(d, By::Css(".msg.final .markdown del")).await;
    let html = wait_for(
        d,
        By::XPath("(//*[contains(@class,'final')]//*[contains(@class,'markdown')])[last()]"),
    )
    .await
    .inner_html()
    .await
    .unwrap();
    assert!(
        !html.contains("<script") && !html.contains("onerror"),
        "unsanitised markdown: {html}"
    );
    let pwned = d
        .execute(
            "return window.__pwned === undefined ? null : window.__pwned;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        pwned.json(),
        &serde_json::Value::Null,
        "script in the answer ran"
    );
    shot(d, "11-chat-markdown.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn chat_streams_tool_cards_and_sanitised_markdown() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/chat_tool_then_markdown.json");
    let (_mock, url) = mock_vendor(&script);
    let home = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{url}/v1"));
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        &[
            ("WYCKOFF_OFFLINE", "1"),
            ("WYCKOFF_KEY_MOCK", "sk-chat-e2e-canary-123456"),
        ],
    );
    run_scenario(&driver, "chat", chat_scenario).await;
}
