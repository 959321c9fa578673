//! WebDriver test of long-term memory in the real app, with the model served in-process
//! by `wyckoff-mock-vendor`: a preference added and edited on the Memory page is recalled
//! for a chat turn (in the request's system prompt, and in the reply's "remembered this
//! turn" disclosure); search finds Chinese two-character words; delete removes it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, send, shot, wait_for, wait_for_answer,
    wait_gone,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

const PREFERENCE: &str = "不碰创业板和科创板，只做主板";

async fn search(d: &WebDriver, text: &str) {
    let input = wait_for(d, By::Id("memory-search")).await;
    // Keystrokes, not clear(): React only sees input events.
    input.send_keys(Key::Control + "a").await.unwrap();
    input.send_keys(Key::Backspace).await.unwrap();
    if !text.is_empty() {
        input.send_keys(text).await.unwrap();
    }
}

async fn memory_scenario(d: WebDriver, server: Arc<MockServer>) {
    click(&d, By::Id("nav-memory")).await;
    wait_for(&d, By::Id("memory-empty")).await;

    // Add a preference.
    click(&d, By::Css("#memory-add-type option[value='preference']")).await;
    wait_for(&d, By::Id("memory-add-text"))
        .await
        .send_keys("不碰创业板，只做主板")
        .await
        .unwrap();
    click(&d, By::Id("memory-add-submit")).await;
    let item = wait_for(&d, By::Css(".memory-item[data-type='preference']")).await;
    assert!(item.text().await.unwrap().contains("不碰创业板，只做主板"));
    let count = wait_for(&d, By::Css(".memory-count[data-type='preference']")).await;
    assert!(count.text().await.unwrap().contains('1'));

    // Chinese two-character search: a hit, then a miss.
    search(&d, "创业").await;
    wait_for(&d, By::Css(".memory-item[data-type='preference']")).await;
    search(&d, "白酒").await;
    wait_for(&d, By::Id("memory-no-match")).await;
    search(&d, "").await;

    // Edit it.
    click(&d, By::Css(".memory-item .memory-edit")).await;
    let editor = wait_for(&d, By::Css(".memory-editor")).await;
    editor.clear().await.unwrap();
    editor.send_keys(PREFERENCE).await.unwrap();
    click(&d, By::Css(".memory-save")).await;
    wait_for(
        &d,
        By::XPath(format!(
            "//*[contains(@class,'memory-item') and contains(., '{PREFERENCE}')]"
        )),
    )
    .await;

    // A chat turn about 创业板 recalls it.
    click(&d, By::Id("nav-chat")).await;
    send(&d, "创业板的宁德时代能买吗？").await;
    let disclosure = wait_for(&d, By::Css("details.recall-disclosure")).await;
    wait_for_answer(&d, "按你的偏好").await;
    disclosure
        .find(By::Tag("summary"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let listed = disclosure.text().await.unwrap();
    assert!(listed.contains(PREFERENCE), "{listed}");
    shot(&d, "30-recall-disclosure.png").await;
    let request = &server.requests_to(Route::Openai)[0];
    let system = request.body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains(&format!("# 用户偏好\n- {PREFERENCE}")),
        "{system}"
    );

    // Delete it, with the in-page confirmation.
    click(&d, By::Id("nav-memory")).await;
    wait_for(&d, By::Css(".memory-item[data-type='preference']")).await;
    shot(&d, "31-memory-page.png").await;
    click(&d, By::Css(".memory-item .memory-delete")).await;
    click(&d, By::Css(".memory-delete-confirm")).await;
    wait_gone(&d, By::Css(".memory-item")).await;
    wait_for(&d, By::Id("memory-empty")).await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn memories_are_managed_on_their_page_and_recalled_in_chat() {
    let server = Arc::new(MockServer::start().await.unwrap());
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["按你的偏好，", "创业板不在考虑范围内。"]),
    );
    let home = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    let s = server.clone();
    run_scenario(&driver, "memory", move |d| memory_scenario(d, s)).await;
}
