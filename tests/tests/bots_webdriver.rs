//! WebDriver test of Settings → Chat bots in the real app: a Telegram bot added in the
//! panel (its token to the keychain, against a local fake Bot API) is served by the app
//! itself — the panel says so; an unknown sender gets a pairing code from the app's loop,
//! the owner approves it in the panel's dialog, the sender is listed, its next message is
//! answered through the mock model, and the bot's conversation is in the app's
//! conversation list.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use thirtyfour::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, shot, wait_for, wait_layout_settled,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

const TOKEN: &str = "987654321:AAE-webdriver-bot-token";

// ---------------------------------------------------------------- the fake Bot API

#[derive(Default)]
struct TgState {
    /// Every update ever queued, in order (Telegram keeps them until an offset confirms).
    updates: Vec<Value>,
    /// sendMessage calls: (chat id, text).
    sent: Vec<(i64, String)>,
    /// getUpdates calls being answered now, and the most there ever were at once.
    in_flight: usize,
    max_in_flight: usize,
    /// getUpdates calls answered.
    polls: usize,
}

#[derive(Clone)]
struct FakeTelegram {
    url: String,
    state: Arc<Mutex<TgState>>,
}

impl FakeTelegram {
    async fn start() -> FakeTelegram {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(TgState::default()));
        let shared = state.clone();
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let state = shared.clone();
                tokio::spawn(async move { serve(socket, state).await });
            }
        });
        FakeTelegram { url, state }
    }

    fn message(&self, from: i64, chat: i64, kind: &str, text: &str) -> i64 {
        let mut s = self.state.lock().unwrap();
        let id = 1000 + i64::try_from(s.updates.len()).unwrap();
        s.updates.push(json!({
            "update_id": id,
            "message": {
                "message_id": id * 10,
                "from": {"id": from, "is_bot": false, "first_name": format!("user{from}")},
                "chat": {"id": chat, "type": kind},
                "date": 1_765_000_000,
                "text": text,
            }
        }));
        id
    }

    fn sent_to(&self, chat: i64) -> Vec<String> {
        let s = self.state.lock().unwrap();
        s.sent
            .iter()
            .filter(|(c, _)| *c == chat)
            .map(|(_, t)| t.clone())
            .collect()
    }

    /// Waits until `chat` has received `n` messages; they all.
    async fn wait_sent(&self, chat: i64, n: usize) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let sent = self.sent_to(chat);
            if sent.len() >= n {
                return sent;
            }
            assert!(
                Instant::now() < deadline,
                "chat {chat} got {} of {n} messages: {sent:?}",
                sent.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn read_request(socket: &mut TcpStream) -> Option<(String, Value)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let header_end = loop {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).into_owned();
    let path = head.split_whitespace().nth(1)?.to_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())
                .flatten()
        })
        .unwrap_or(0);
    while buf.len() < header_end + length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&buf[header_end..header_end + length]).unwrap_or(Value::Null);
    Some((path, body))
}

async fn serve(mut socket: TcpStream, state: Arc<Mutex<TgState>>) {
    let Some((path, body)) = read_request(&mut socket).await else {
        return;
    };
    let prefix = format!("/bot{TOKEN}/");
    let Some(method) = path.strip_prefix(&prefix) else {
        let body = json!({"ok": false, "error_code": 401, "description": "Unauthorized"});
        respond(&mut socket, 401, &body).await;
        return;
    };
    let answer = match method {
        "getUpdates" => {
            let offset = body["offset"].as_i64().unwrap_or(0);
            {
                let mut s = state.lock().unwrap();
                s.in_flight += 1;
                s.max_in_flight = s.max_in_flight.max(s.in_flight);
            }
            // A long poll: hold an empty answer a little, as the real API holds it.
            let deadline = Instant::now() + Duration::from_millis(300);
            loop {
                let ready: Vec<Value> = {
                    let s = state.lock().unwrap();
                    s.updates
                        .iter()
                        .filter(|u| u["update_id"].as_i64().unwrap() >= offset)
                        .cloned()
                        .collect()
                };
                if !ready.is_empty() || Instant::now() >= deadline {
                    let mut s = state.lock().unwrap();
                    s.in_flight -= 1;
                    s.polls += 1;
                    break json!({"ok": true, "result": ready});
                }
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
        }
        "sendMessage" => {
            let chat = body["chat_id"].as_i64().unwrap();
            let text = body["text"].as_str().unwrap().to_owned();
            let mut s = state.lock().unwrap();
            s.sent.push((chat, text.clone()));
            json!({"ok": true, "result": {"message_id": s.sent.len(), "chat": {"id": chat, "type": "private"}, "date": 0, "text": text}})
        }
        "sendChatAction" => json!({"ok": true, "result": true}),
        "getMe" => {
            json!({"ok": true, "result": {"id": 987_654_321, "is_bot": true, "first_name": "Desk", "username": "wyckoff_desk_bot"}})
        }
        _ => json!({"ok": false, "error_code": 404, "description": "Not Found"}),
    };
    respond(&mut socket, 200, &answer).await;
}

async fn respond(socket: &mut TcpStream, status: u16, body: &Value) {
    let body = body.to_string();
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = socket.write_all(head.as_bytes()).await;
    let _ = socket.write_all(body.as_bytes()).await;
    let _ = socket.shutdown().await;
}

async fn type_into(d: &WebDriver, id: &str, value: &str) {
    let el = wait_for(d, By::Id(id)).await;
    el.send_keys(Key::Control + "a").await.unwrap();
    el.send_keys(Key::Backspace).await.unwrap();
    if !value.is_empty() {
        el.send_keys(value).await.unwrap();
    }
}

/// The pairing code in the bot's answer to an unknown sender.
fn code_in(text: &str) -> String {
    let after = text
        .split("配对码：")
        .nth(1)
        .unwrap_or_else(|| panic!("no code: {text}"));
    after.chars().take(8).collect()
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
    let tg = FakeTelegram::start().await;
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
    assert!(s.polls > 0);
    assert_eq!(s.max_in_flight, 1, "the bot was polled twice at once");
}
