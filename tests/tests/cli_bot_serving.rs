//! End-to-end: who serves a chat bot, and what its chat hears of decisions made
//! elsewhere, through the real `wyckoff` binary against a local fake Telegram Bot API
//! and the mock model vendor. Two `wyckoff bot run` on one data home never poll the bot
//! at once (the real API answers the second poller 409 Conflict): the first serves, the
//! second stands by and takes over when the first is killed. A write a bot's turn queued
//! and the owner allowed with `wyckoff approvals allow` (or denied) is told to the chat
//! once, with the call's result in one line and the conversation's follow-up answer; a
//! decision from the chat is recorded as the bot's sender's, not as a policy.
//! Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use wyckoff_e2e::approvals::{free_cash, set_cash_call};
use wyckoff_e2e::wyckoff_cli;
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

const KEY: (&str, &str) = ("WYCKOFF_KEY_MOCK", "sk-bot-e2e-123456");
const TOKEN: &str = "987654321:AAE-bot-e2e-SECRET-token";
const TOKEN_VAR: &str = "WYCKOFF_BOT_TOKEN_TG";
/// The app's tools that write: a bot's model must not be offered them.

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

// ---------------------------------------------------------------- the binary

async fn wyckoff(home: &Path, args: &[&str]) -> Output {
    let mut cmd = wyckoff_cli(home);
    cmd.args(args).env(KEY.0, KEY.1).env(TOKEN_VAR, TOKEN);
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

async fn ok(home: &Path, args: &[&str]) -> String {
    let out = wyckoff(home, args).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        wyckoff_e2e::show(&out)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `wyckoff bot run` in the background, short polls and a 200 ms first retry.
struct Running(Child);

impl Running {
    fn start(home: &Path) -> Running {
        let child = wyckoff_cli(home)
            .args(["bot", "run", "--poll-timeout", "1", "--retry-ms", "200"])
            .env(KEY.0, KEY.1)
            .env(TOKEN_VAR, TOKEN)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Running(child)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn setup(bot_args: &[&str]) -> (tempfile::TempDir, MockServer, FakeTelegram) {
    let server = MockServer::start().await.unwrap();
    let tg = FakeTelegram::start().await;
    let home = tempfile::tempdir().unwrap();
    wyckoff_e2e::webdriver::mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let mut args = vec![
        "bot",
        "add",
        "tg",
        "--kind",
        "telegram",
        "--api-url",
        &tg.url,
    ];
    args.extend_from_slice(bot_args);
    ok(home.path(), &args).await;
    (home, server, tg)
}

/// The pairing code in the bot's answer to an unknown sender.
fn code_in(text: &str) -> String {
    let after = text
        .split("配对码：")
        .nth(1)
        .unwrap_or_else(|| panic!("no code: {text}"));
    after.chars().take(8).collect()
}

/// Pairs sender `from` (chat `chat`): a message, the code, `wyckoff bot pair CODE`.
async fn pair(home: &Path, tg: &FakeTelegram, from: i64, chat: i64, kind: &str) {
    let before = tg.sent_to(chat).len();
    tg.message(from, chat, kind, "你好");
    let sent = tg.wait_sent(chat, before + 1).await;
    let code = code_in(sent.last().unwrap());
    ok(home, &["bot", "pair", &code]).await;
}

/// The approval request's id and one-time code in the bot's ask.
fn request_in(ask: &str) -> (String, String) {
    let after = ask
        .split("/approve ")
        .nth(1)
        .unwrap_or_else(|| panic!("no approval request: {ask}"));
    let mut words = after.split_whitespace();
    let id = words.next().unwrap().to_owned();
    let code: String = words.next().unwrap().chars().take(6).collect();
    (id, code)
}

/// A paired sender asks for a write; the bot answers with the request waiting. Its id
/// and code.
async fn queue_write(
    server: &MockServer,
    tg: &FakeTelegram,
    chat: i64,
    call: &str,
) -> (String, String) {
    let before = tg.sent_to(chat).len();
    server.push(Route::Openai, set_cash_call(call, 5000));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["调仓在等待主人批准。"]),
    );
    tg.message(chat, chat, "private", "把现金设为 5000");
    let sent = tg.wait_sent(chat, before + 1).await;
    request_in(sent.last().unwrap())
}

/// No message reaches `chat` for a few polls more.
async fn quiet(tg: &FakeTelegram, chat: i64, had: usize) {
    let polls = tg.state.lock().unwrap().polls;
    let deadline = Instant::now() + Duration::from_secs(20);
    while tg.state.lock().unwrap().polls < polls + 4 {
        assert!(Instant::now() < deadline, "the bot stopped polling");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(tg.sent_to(chat).len(), had, "{:?}", tg.sent_to(chat));
}

// ---------------------------------------------------------------- the tests

#[tokio::test(flavor = "multi_thread")]
async fn one_process_serves_a_bot_and_the_one_standing_by_takes_over_when_it_dies() {
    let (home, server, tg) = setup(&[]).await;
    let h = home.path();
    let mut first = Running::start(h);
    pair(h, &tg, 7, 7, "private").await;

    // A second server on the same data home stands by: it never polls beside the first.
    let _second = Running::start(h);
    tokio::time::sleep(Duration::from_secs(3)).await;
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["第一个进程的回答。"]),
    );
    tg.message(7, 7, "private", "在吗");
    let sent = tg.wait_sent(7, 2).await;
    assert!(sent[1].contains("第一个进程的回答。"), "{sent:?}");
    assert_eq!(
        tg.state.lock().unwrap().max_in_flight,
        1,
        "two processes polled at once"
    );
    assert_eq!(server.requests_to(Route::Openai).len(), 1);

    // The first dies without a word: the second takes the bot over and answers.
    let _ = first.0.kill();
    let _ = first.0.wait();
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["接手后的回答。"]),
    );
    tg.message(7, 7, "private", "还在吗");
    let sent = tg.wait_sent(7, 3).await;
    assert!(sent[2].contains("接手后的回答。"), "{sent:?}");
    assert_eq!(sent.len(), 3, "answered twice: {sent:?}");
    assert_eq!(
        tg.state.lock().unwrap().max_in_flight,
        1,
        "two processes polled at once"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decision_made_outside_the_chat_is_told_there_once_with_the_conversations_answer() {
    let (home, server, tg) = setup(&[]).await;
    let h = home.path();
    let _bot = Running::start(h);
    pair(h, &tg, 7, 7, "private").await;

    // Allowed with the CLI: the call runs, the conversation answers, the chat hears both.
    let (id, _) = queue_write(&server, &tg, 7, "call_cash_1").await;
    assert_eq!(free_cash(h).await, None);
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["已按你的批准调整好现金，接下来看什么？"]),
    );
    ok(h, &["approvals", "allow", &id]).await;
    assert_eq!(free_cash(h).await, Some(5000.0));
    let sent = tg.wait_sent(7, 3).await;
    let told = &sent[2];
    // The verdict with the call's result in one line, then the conversation's answer.
    assert_eq!(
        told.lines().next().unwrap(),
        format!("✅ 已批准并执行 调仓操作（{id}）：可用资金已设为 5000"),
        "{told}"
    );
    assert!(
        told.contains("已按你的批准调整好现金，接下来看什么？"),
        "{told}"
    );
    quiet(&tg, 7, 3).await;

    // The conversation goes on in the chat after it.
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["好的，继续。"]),
    );
    tg.message(7, 7, "private", "继续");
    let sent = tg.wait_sent(7, 4).await;
    assert!(sent[3].contains("好的，继续。"), "{sent:?}");
    let last = server
        .requests_to(Route::Openai)
        .into_iter()
        .last()
        .unwrap();
    assert!(
        last.body
            .to_string()
            .contains("已按你的批准调整好现金，接下来看什么？"),
        "the follow-up answer is not in the conversation the chat continues"
    );

    // Denied with the CLI: said so, nothing ran.
    let (id, _) = queue_write(&server, &tg, 7, "call_cash_2").await;
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["好的，不调。"]),
    );
    ok(h, &["approvals", "deny", &id, "--reason", "先不动"]).await;
    let sent = tg.wait_sent(7, 6).await;
    assert!(
        sent[5].contains(&format!("已拒绝 调仓操作（{id}）")),
        "{}",
        sent[5]
    );
    assert!(sent[5].contains("好的，不调。"), "{}", sent[5]);
    quiet(&tg, 7, 6).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decision_from_the_chat_is_the_senders_and_is_not_told_twice() {
    let (home, server, tg) = setup(&[]).await;
    let h = home.path();
    let _bot = Running::start(h);
    pair(h, &tg, 7, 7, "private").await;
    // Decided from the chat by an approver: answered there once, recorded as the bot's
    // sender's decision.
    ok(h, &["bot", "approver", "tg", "7"]).await;
    let (id, code) = queue_write(&server, &tg, 7, "call_cash_3").await;
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["已按批准执行。"]),
    );
    tg.message(7, 7, "private", &format!("/approve {id} {code}"));
    let sent = tg.wait_sent(7, 3).await;
    assert!(sent[2].contains(&format!("已批准 {id}")), "{}", sent[2]);
    quiet(&tg, 7, 3).await;
    let log: Value = serde_json::from_str(&ok(h, &["approvals", "log", "--json"]).await).unwrap();
    let by: Vec<&Value> = log
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["decision"] == "allowed" || e["decision"] == "denied")
        .map(|e| &e["decided_by"])
        .collect();
    assert_eq!(by.len(), 1, "{log}");
    assert_eq!(
        by[0],
        &json!({"type": "bot", "bot": "tg", "sender": "7", "label": "user7"})
    );
    let text = ok(h, &["approvals", "log"]).await;
    assert!(text.contains("bot tg: user7 (7)"), "{text}");
}
