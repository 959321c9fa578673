//! WebDriver test of Settings → Chat bots in the real app: a Telegram bot added in the
//! panel (its token to the keychain, against a local fake Bot API) is served by the app
//! itself — the panel says so; an unknown sender gets a pairing code from the app's loop,
//! the owner approves it in the panel's dialog, the sender is listed, its next message is
//! answered through the mock model, and the bot's conversation is in the app's
//! conversation list.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/bots.rs"]
mod bots;

use std::time::{Duration, Instant};

use bots::{FakeTelegram, code_in};
use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, shot, wait_for, wait_layout_settled,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

const TOKEN: &str = "987654321:AAE-webdriver-bot-token";

async fn type_into(d: &WebDriver, id: &str, value: &str) {
    let el = wait_for(d, By::Id(id)).await;
    el.send_keys(Key::Control + "a").await.unwrap();
    el.send_keys(Key::Backspace).await.unwrap();
    if !value.is_empty() {
        el.send_keys(value).await.unwrap();
    }
}

async fn scenario(d: WebDriver, tg: FakeTelegram) {
    click(&d, By::Id("nav-settings")).await;
    wait_for(&d, By::Id("bots-panel")).await;
    wait_layout_settled(&d).await;

    // Added in the panel: the app serves it at once, and says so.
    type_into(&d, "bot-add-name", "tg").await;
    type_into(&d, "bot-add-token", TOKEN).await;
    type_into(&d, "bot-add-api-url", &tg.url).await;
    click(&d, By::Id("bot-add")).await;
    let note = wait_for(&d, By::Id("bots-message")).await;
    assert_eq!(note.text().await.unwrap(), "已添加 tg。");
    let status = wait_for(
        &d,
        By::Css(".bot[data-bot='tg'] .bot-server[data-serving='here']"),
    )
    .await;
    assert!(status.text().await.unwrap().starts_with("本应用正在服务"));
    assert!(
        d.find(By::Css(".bot[data-bot='tg'] h3"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
            .contains("令牌已设置")
    );
    // The token field is empty again; the token never comes back to the page.
    let token = d.find(By::Id("bot-add-token")).await.unwrap();
    assert_eq!(token.prop("value").await.unwrap().as_deref(), Some(""));
    assert!(!d.source().await.unwrap().contains(TOKEN));

    // A stranger writes: the app's loop answers with a code, and only that.
    tg.message(7, 7, "private", "你好");
    let sent = tg.wait_sent(7, 1).await;
    let code = code_in(&sent[0]);

    // The code waits in the panel; pairing goes through a dialog naming who gets in.
    let row = By::Css(format!("li[data-code='{code}'] button"));
    click(&d, row).await;
    let dialog = wait_for(&d, By::Id("bot-pair-confirm")).await;
    let said = dialog.text().await.unwrap();
    assert!(
        said.contains("user7（7）将可以通过 tg 向桌面提问"),
        "{said}"
    );
    shot(&d, "95-bots-pair-dialog.png").await;
    click(&d, By::Id("bot-pair-confirm-ok")).await;
    let sender = wait_for(&d, By::Css(".bot[data-bot='tg'] li[data-sender='7']")).await;
    assert!(sender.text().await.unwrap().contains("user7 (7)"));
    assert!(
        d.find(By::Css(format!("li[data-code='{code}']")))
            .await
            .is_err()
    );
    shot(&d, "96-bots-panel.png").await;

    // Paired: its message reaches the model through the app, the answer the chat.
    tg.message(7, 7, "private", "在吗");
    let sent = tg.wait_sent(7, 2).await;
    assert!(sent[1].contains("在的，桌面在线。"), "{sent:?}");

    // The bot's conversation is in the app's list.
    click(&d, By::Id("nav-chat")).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let listed = By::XPath(
        "//*[@id='chat-conversations']//li[contains(., 'telegram · tg · user7')]".to_owned(),
    );
    while d.find(listed.clone()).await.is_err() {
        assert!(
            Instant::now() < deadline,
            "the bot's conversation is not listed"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn a_bot_added_in_settings_is_served_by_the_app_and_paired_in_its_dialog() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["在的，桌面在线。"]),
    );
    let tg = FakeTelegram::start(TOKEN).await;
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        &[
            ("WYCKOFF_OFFLINE", "1"),
            ("WYCKOFF_KEY_MOCK", "sk-bots-webdriver"),
        ],
    );
    let fake = tg.clone();
    run_scenario(&driver, "bots", move |d| scenario(d, fake)).await;
    drop(driver);
    // The token is in the keychain, in no file of the data home.
    let key = wyckoff_config::Secrets::system()
        .get_bot(&wyckoff_config::BotSecret("tg".into()))
        .map(|(v, _)| v.expose().to_owned());
    assert_eq!(key.as_deref(), Some(TOKEN));
    assert_eq!(
        server.requests_to(Route::Openai).len(),
        1,
        "the stranger reached the model"
    );
    let s = tg.state.lock().unwrap();
    assert!(s.answered > 0);
    assert_eq!(s.max_in_flight, 1, "the bot was polled twice at once");
}
