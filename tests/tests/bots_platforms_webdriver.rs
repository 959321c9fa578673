//! WebDriver test of Settings → Chat bots in the real app for the two long-connection
//! platforms beside Telegram: a Feishu bot and a WeCom 智能机器人 added in the panel
//! (their `ID:SECRET` through the page to the keychain, against the local fakes of
//! support/feishu.rs and support/wecom.rs) are served by the app itself — the panel says
//! so; on each, an unknown sender gets a pairing code from the app's loop and nothing
//! reaches the model, the owner approves it in the panel's dialog, the sender is listed,
//! and its next message is answered through the mock model (a Markdown card on Feishu, a
//! finished stream on WeCom); both bots' conversations are in the app's list, and neither
//! secret is on the page nor anywhere but the keychain.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/bots.rs"]
mod bots;
#[path = "support/feishu.rs"]
mod feishu;
#[path = "support/wecom.rs"]
mod wecom;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bots::code_in;
use feishu::FakeFeishu;
use thirtyfour::prelude::*;
use wecom::FakeWecom;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, shot, wait_for, wait_layout_settled,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

/// The Feishu sender and its private chat; the WeCom sender (its single chat is itself).
const FS_SENDER: &str = "ou_wd_owner";
const FS_CHAT: &str = "oc_wd_p2p";
const WC_SENDER: &str = "wangxiaoer";

async fn type_into(d: &WebDriver, id: &str, value: &str) {
    let el = wait_for(d, By::Id(id)).await;
    el.send_keys(Key::Control + "a").await.unwrap();
    el.send_keys(Key::Backspace).await.unwrap();
    if !value.is_empty() {
        el.send_keys(value).await.unwrap();
    }
}

/// Adds bot `name` of `kind` in the panel, and waits until the panel says the app serves it.
async fn add_bot(d: &WebDriver, name: &str, kind: &str, token: &str, api_url: &str) {
    wait_layout_settled(d).await;
    type_into(d, "bot-add-name", name).await;
    click(d, By::Css(format!("#bot-add-kind option[value='{kind}']"))).await;
    type_into(d, "bot-add-token", token).await;
    type_into(d, "bot-add-api-url", api_url).await;
    wait_layout_settled(d).await;
    click(d, By::Id("bot-add")).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let note = wait_for(d, By::Id("bots-message")).await;
        if note.text().await.unwrap() == format!("已添加 {name}。") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not added: {}",
            note.text().await.unwrap()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let heading = wait_for(d, By::Css(format!(".bot[data-bot='{name}'] h3"))).await;
    let heading = heading.text().await.unwrap();
    assert!(
        heading.contains(kind) && heading.contains("令牌已设置"),
        "{heading}"
    );
    let status = wait_for(
        d,
        By::Css(format!(
            ".bot[data-bot='{name}'] .bot-server[data-serving='here']"
        )),
    )
    .await;
    assert!(status.text().await.unwrap().starts_with("本应用正在服务"));
    // The secret field is empty again; the secret never comes back to the page.
    let field = d.find(By::Id("bot-add-token")).await.unwrap();
    assert_eq!(field.prop("value").await.unwrap().as_deref(), Some(""));
    assert!(!d.source().await.unwrap().contains(token));
}

/// Approves `code` in the panel's dialog, which names `sender` and `bot`; waits until
/// the sender is listed under the bot and the code is gone.
async fn pair_in_dialog(d: &WebDriver, code: &str, sender: &str, bot: &str) {
    // The code shows up at the panel's next refresh.
    let row = By::Css(format!("li[data-code='{code}'] button"));
    wait_for(d, row.clone()).await;
    wait_layout_settled(d).await;
    click(d, row).await;
    let dialog = wait_for(d, By::Id("bot-pair-confirm")).await;
    let said = dialog.text().await.unwrap();
    assert!(
        said.contains(&format!("{sender}（{sender}）将可以通过 {bot} 向桌面提问")),
        "{said}"
    );
    click(d, By::Id("bot-pair-confirm-ok")).await;
    let listed = wait_for(
        d,
        By::Css(format!(".bot[data-bot='{bot}'] li[data-sender='{sender}']")),
    )
    .await;
    assert!(listed.text().await.unwrap().contains(sender));
    assert!(
        d.find(By::Css(format!("li[data-code='{code}']")))
            .await
            .is_err()
    );
}

async fn scenario(d: WebDriver, fs: FakeFeishu, wc: FakeWecom, server: Arc<MockServer>) {
    click(&d, By::Id("nav-settings")).await;
    wait_for(&d, By::Id("bots-panel")).await;

    // Feishu: added in the panel, served by the app's loop at once.
    add_bot(&d, "fs", "feishu", feishu::TOKEN, &fs.url).await;
    // A stranger writes: the answer is a code, and only that.
    fs.message(FS_SENDER, FS_CHAT, "p2p", "你好", 1);
    let sent = fs.wait_sent(FS_CHAT, 1).await;
    assert_eq!(sent[0].msg_type, "text", "{sent:?}");
    let code = code_in(&sent[0].text);
    assert!(
        server.requests_to(Route::Openai).is_empty(),
        "the model heard a stranger"
    );
    pair_in_dialog(&d, &code, FS_SENDER, "fs").await;
    // Paired: its message reaches the model through the app, the answer comes back as
    // a Markdown card.
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["飞书这边，桌面在线。"]),
    );
    fs.message(FS_SENDER, FS_CHAT, "p2p", "在吗", 1);
    let sent = fs.wait_sent(FS_CHAT, 2).await;
    assert_eq!(sent[1].msg_type, "interactive", "{sent:?}");
    assert!(sent[1].text.contains("飞书这边，桌面在线。"), "{sent:?}");

    // WeCom: its long connection's ws:// address as the bot's address.
    add_bot(&d, "wc", "wecom", wecom::TOKEN, &wc.url).await;
    wc.message(WC_SENDER, None, "你好");
    let said = wc.wait_said(WC_SENDER, 1).await;
    let code = code_in(&said[0]);
    assert_eq!(
        server.requests_to(Route::Openai).len(),
        1,
        "the model heard a stranger"
    );
    pair_in_dialog(&d, &code, WC_SENDER, "wc").await;
    shot(&d, "97-bots-feishu-wecom.png").await;
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["企业微信这边，桌面在线。"]),
    );
    wc.message(WC_SENDER, None, "在吗");
    let said = wc.wait_said(WC_SENDER, 2).await;
    assert!(said[1].contains("企业微信这边，桌面在线。"), "{said:?}");

    // Both bots' conversations are in the app's list.
    click(&d, By::Id("nav-chat")).await;
    for title in [
        format!("feishu · fs · {FS_SENDER}"),
        format!("wecom · wc · {WC_SENDER}"),
    ] {
        let listed = By::XPath(format!(
            "//*[@id='chat-conversations']//li[contains(., '{title}')]"
        ));
        let deadline = Instant::now() + Duration::from_secs(20);
        while d.find(listed.clone()).await.is_err() {
            assert!(Instant::now() < deadline, "{title} is not listed");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver, a session bus and target/lark-venv"]
async fn feishu_and_wecom_bots_added_in_settings_are_served_by_the_app_and_paired_in_its_dialog() {
    let server = Arc::new(MockServer::start().await.unwrap());
    let fs = FakeFeishu::start().await;
    let wc = FakeWecom::start().await;
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        &[
            ("WYCKOFF_OFFLINE", "1"),
            ("WYCKOFF_KEY_MOCK", "sk-bots-platforms-webdriver"),
        ],
    );
    let (f, w, s) = (fs.clone(), wc.clone(), server.clone());
    run_scenario(&driver, "bots_platforms", move |d| scenario(d, f, w, s)).await;
    drop(driver);

    // The secrets are in the keychain, as typed.
    for (bot, token) in [("fs", feishu::TOKEN), ("wc", wecom::TOKEN)] {
        let stored = wyckoff_config::Secrets::system()
            .get_bot(&wyckoff_config::BotSecret(bot.into()))
            .map(|(v, _)| v.expose().to_owned());
        assert_eq!(stored.as_deref(), Some(token), "{bot}'s secret");
    }
    // In no file of the data home.
    for entry in std::fs::read_dir(home.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            for secret in [feishu::APP_SECRET, wecom::SECRET] {
                assert!(
                    !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                    "a secret is stored in {}",
                    path.display()
                );
            }
        }
    }
    assert_eq!(
        server.requests_to(Route::Openai).len(),
        2,
        "a stranger reached the model"
    );
    // Each platform was reached with its secret, and only with it.
    let s = fs.state.lock().unwrap();
    assert_eq!((s.bad_secret, s.bad_token, s.bad_tickets), (0, 0, 0));
    assert!(s.unreadable.is_empty(), "{:?}", s.unreadable);
    assert_eq!(wc.state.lock().unwrap().bad_secret, 0);
}
