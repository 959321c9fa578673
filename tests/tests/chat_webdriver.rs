//! WebDriver test of the chat in the real app, with `wyckoff-mock-vendor` serving a
//! recorded script as the model (OpenAI wire format): a tool turn shows a tool card; a
//! Markdown answer is rendered by the backend and anything active in it (`<script>`,
//! `onerror`) is inert.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, send, shot, wait_for, wait_for_answer,
};
use wyckoff_mock_vendor::{MockServer, Script};

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

    // From chat to chart: the diagnosis card draws its chart inline, and its code — like
    // the code in the answer — opens the stock page.
    click(d, By::Css(".tool-card .diagnosis .chart-toggle")).await;
    wait_for(d, By::Css(".inline-chart[data-code='000001'] canvas")).await;
    shot(d, "12-chat-inline-chart.png").await;
    for link in [
        ".tool-card .diagnosis .stock-link[data-code='000001']",
        ".msg.final .markdown .stock-link[data-code='000001']",
    ] {
        // the answer may sit under the composer after the chart grew the card above it
        let el = wait_for(d, By::Css(link)).await;
        el.scroll_into_view().await.unwrap();
        el.click().await.unwrap();
        wait_for(
            d,
            By::XPath("//*[@id='stock-title' and contains(., '平安银行')]"),
        )
        .await;
        click(d, By::Id("nav-chat")).await;
    }

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
    let script: Script = serde_json::from_str(&std::fs::read_to_string(script).unwrap()).unwrap();
    let server = MockServer::start_with(script, 0).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
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
