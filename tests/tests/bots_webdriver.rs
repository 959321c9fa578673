//! WebDriver test of Settings → Chat bots in the real app: a Telegram bot added in the
//! panel (its token to the keychain, against a local fake Bot API) is served by the app
//! itself — the panel says so; an unknown sender gets a pairing code from the app's loop,
//! the owner approves it in the panel's dialog, the sender is listed, its next message is
//! answered through the mock model. A portfolio change asked from the chat waits in the
//! app's inbox; the owner allows it there and the chat is told once, with the call's
//! result and the conversation's answer. The bot's conversation opens in the app's chat
//! with its messages. Hidden to the tray (its Show/Hide, as a panel clicks it, through
//! tests/support/fake-tray-host.py), the app still answers the chat.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/bots.rs"]
mod bots;
#[path = "support/tray.rs"]
mod tray;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bots::{FakeTelegram, code_in, request_in};
use thirtyfour::prelude::*;
use tray::{Daemon, show_hide, wait_tray_label};
use wyckoff_e2e::approvals::{free_cash, set_cash_call};
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, shot, wait_for, wait_for_answer,
    wait_layout_settled,
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

/// The first element matching `by` within `within` (the inbox page may wait for the
/// app's watcher, which passes every 15 s).
async fn wait_for_within(d: &WebDriver, by: By, within: Duration) -> WebElement {
    let deadline = Instant::now() + within;
    loop {
        if let Ok(e) = d.find(by.clone()).await {
            return e;
        }
        assert!(Instant::now() < deadline, "{by:?} never appeared");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// No message reaches `chat` for a few polls more.
async fn quiet(tg: &FakeTelegram, chat: i64, had: usize) {
    let polls = tg.state.lock().unwrap().answered;
    let deadline = Instant::now() + Duration::from_secs(20);
    while tg.state.lock().unwrap().answered < polls + 4 {
        assert!(Instant::now() < deadline, "the bot stopped polling");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(tg.sent_to(chat).len(), had, "{:?}", tg.sent_to(chat));
}

async fn scenario(
    d: WebDriver,
    tg: FakeTelegram,
    server: Arc<MockServer>,
    home: PathBuf,
    items: PathBuf,
) {
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
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["在的，桌面在线。"]),
    );
    tg.message(7, 7, "private", "在吗");
    let sent = tg.wait_sent(7, 2).await;
    assert!(sent[1].contains("在的，桌面在线。"), "{sent:?}");

    // A portfolio change asked from the chat waits in the inbox, not run.
    server.push(Route::Openai, set_cash_call("call_cash_app", 5000));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["调仓在等待主人批准。"]),
    );
    tg.message(7, 7, "private", "把现金设为 5000");
    let sent = tg.wait_sent(7, 3).await;
    assert!(
        sent[2].starts_with("⏳ update_portfolio: 等待审批"),
        "{}",
        sent[2]
    );
    let (id, _) = request_in(&sent[2]);
    assert_eq!(free_cash(&home).await, None, "run before it was allowed");

    // The owner allows it in the app's inbox.
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["已按你的批准调整好现金。"]),
    );
    click(&d, By::Id("nav-inbox")).await;
    wait_for(&d, By::Id("inbox-page")).await;
    let card = wait_for_within(
        &d,
        By::Css(format!(
            ".inbox-request[data-request-id='{id}'][data-status='pending'][data-tool='update_portfolio']"
        )),
        Duration::from_secs(40),
    )
    .await;
    assert_eq!(
        card.find(By::Css(".inbox-requested-by"))
            .await
            .unwrap()
            .attr("data-requested-by")
            .await
            .unwrap()
            .as_deref(),
        Some("bot:tg")
    );
    wait_layout_settled(&d).await;
    card.find(By::Css(".inbox-allow"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let decided = wait_for(
        &d,
        By::Css(format!(
            ".inbox-request[data-request-id='{id}'][data-status='allowed'] .inbox-decided"
        )),
    )
    .await;
    assert_eq!(
        decided.attr("data-decided-by").await.unwrap().as_deref(),
        Some("app")
    );
    // The chat is told once: the verdict with the call's result, then the conversation's
    // answer to it.
    let sent = tg.wait_sent(7, 4).await;
    let told = &sent[3];
    assert_eq!(
        told.lines().next().unwrap(),
        format!("✅ 已批准并执行 调仓操作（{id}）：可用资金已设为 5000"),
        "{told}"
    );
    assert!(told.contains("已按你的批准调整好现金。"), "{told}");
    assert_eq!(free_cash(&home).await, Some(5000.0));
    quiet(&tg, 7, 4).await;
    shot(&d, "97-bots-request-allowed-in-the-app.png").await;

    // The bot's conversation is in the app's list, and opens with its messages.
    click(&d, By::Id("nav-chat")).await;
    let open = By::XPath(
        "//*[@id='chat-conversations']//li[contains(., 'telegram · tg · user7')]//button[contains(@class, 'conv-open')]"
            .to_owned(),
    );
    wait_for(&d, open.clone()).await;
    wait_layout_settled(&d).await;
    click(&d, open).await;
    for asked in ["在吗", "把现金设为 5000"] {
        wait_for(
            &d,
            By::XPath(format!(
                "//*[@id='transcript']//div[contains(@class, 'msg') and contains(@class, 'user') and contains(., '{asked}')]"
            )),
        )
        .await;
    }
    for answered in [
        "在的，桌面在线。",
        "调仓在等待主人批准。",
        "已按你的批准调整好现金。",
    ] {
        wait_for_answer(&d, answered).await;
    }
    shot(&d, "98-bots-conversation-in-the-app.png").await;

    // Hidden to the tray, the app still answers the chat.
    wait_tray_label(&items, "显示/隐藏").await;
    show_hide(&d, &items, true).await;
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["窗口收起来了，也在。"]),
    );
    tg.message(7, 7, "private", "窗口关了还在吗");
    let sent = tg.wait_sent(7, 5).await;
    assert!(sent[4].contains("窗口收起来了，也在。"), "{sent:?}");
    show_hide(&d, &items, false).await;
    // Its conversation, opened again, holds what was answered while hidden.
    click(&d, By::Id("nav-settings")).await;
    wait_for(&d, By::Id("bots-panel")).await;
    click(&d, By::Id("nav-chat")).await;
    let open = By::XPath(
        "//*[@id='chat-conversations']//li[contains(., 'telegram · tg · user7')]//button[contains(@class, 'conv-open')]"
            .to_owned(),
    );
    wait_for(&d, open.clone()).await;
    wait_layout_settled(&d).await;
    click(&d, open).await;
    wait_for_answer(&d, "窗口收起来了，也在。").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn a_bot_added_in_settings_is_served_by_the_app_and_paired_in_its_dialog() {
    assert!(
        std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some(),
        "run under dbus-run-session (scripts/test does)"
    );
    let server = Arc::new(MockServer::start().await.unwrap());
    let tg = FakeTelegram::start(TOKEN).await;
    let dir = tempfile::tempdir().unwrap();
    let items = dir.path().join("tray-items.jsonl");
    // The panel's tray host is on the bus before the app starts, as on a desktop.
    let _tray_host = Daemon::start("fake-tray-host.py", &["watch", items.to_str().unwrap()]);
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
    let (fake, s, h) = (tg.clone(), server.clone(), home.path().to_path_buf());
    run_scenario(&driver, "bots", move |d| scenario(d, fake, s, h, items)).await;
    drop(driver);
    // The token is in the keychain, in no file of the data home.
    let key = wyckoff_config::Secrets::system()
        .get_bot(&wyckoff_config::BotSecret("tg".into()))
        .map(|(v, _)| v.expose().to_owned());
    assert_eq!(key.as_deref(), Some(TOKEN));
    let requests = server.requests_to(Route::Openai);
    assert_eq!(
        requests.len(),
        5,
        "two answers, the tool round, the follow-up and the answer while hidden"
    );
    assert!(
        requests.iter().all(|r| r.last_user_text() != Some("你好")),
        "the stranger reached the model"
    );
    let s = tg.state.lock().unwrap();
    assert!(s.answered > 0);
    assert_eq!(s.max_in_flight, 1, "the bot was polled twice at once");
}
