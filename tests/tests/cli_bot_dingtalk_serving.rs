//! End-to-end: a DingTalk Stream bot served as Telegram's is, through the real `wyckoff`
//! binary (`wyckoff bot run`) against the local fake DingTalk (`support/dingtalk.rs`).
//! Two processes on one data home: the first to take the bot's lease opens the Stream,
//! the other never asks for a connection while the first lives and takes the bot over
//! when it dies. A write a paired sender asked for, allowed (or denied) by the owner with
//! `wyckoff approvals allow` (`deny`), is told to the DingTalk chat once — the verdict
//! with the call's result, then the conversation's follow-up answer — through the chat's
//! session webhook. With a proxy in Settings, DingTalk's HTTP calls and its WebSocket
//! (an http:// proxy's CONNECT tunnel) both go through it. Needs `cargo build -p
//! wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/bots.rs"]
mod bots;
#[path = "support/dingtalk.rs"]
mod dingtalk;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bots::{Running, code_in, ok, request_in};
use dingtalk::{ENV, FakeDingtalk};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use wyckoff_e2e::approvals::{free_cash, set_cash_call};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

async fn setup() -> (tempfile::TempDir, MockServer, FakeDingtalk) {
    let dt = FakeDingtalk::start().await;
    let (home, server) = bots::setup_bot(&ENV, "dt", "dingtalk", &dt.url, &[]).await;
    (home, server, dt)
}

/// The text of a webhook post (a text or a Markdown message).
fn text_of(post: &Value) -> String {
    match post["msgtype"].as_str().unwrap() {
        "text" => post["text"]["content"].as_str().unwrap().to_owned(),
        "markdown" => post["markdown"]["text"].as_str().unwrap().to_owned(),
        other => panic!("unexpected msgtype {other}"),
    }
}

/// `staff` writes in its one-to-one chat `cid`, gets a code, and the owner pairs it.
async fn pair(home: &Path, dt: &FakeDingtalk, staff: &str, cid: &str) {
    let before = dt.posts_to(cid).len();
    dt.message(staff, cid, "1", "你好");
    let posts = dt.wait_posts(cid, before + 1).await;
    let code = code_in(&text_of(posts.last().unwrap()));
    ok(home, &ENV, &["bot", "pair", &code]).await;
}

/// A paired sender asks for a write; the bot answers with the request waiting. Its id.
async fn queue_write(
    server: &MockServer,
    dt: &FakeDingtalk,
    staff: &str,
    cid: &str,
    call: &str,
) -> String {
    let before = dt.posts_to(cid).len();
    server.push(Route::Openai, set_cash_call(call, 5000));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["调仓在等待主人批准。"]),
    );
    dt.message(staff, cid, "1", "把现金设为 5000");
    let posts = dt.wait_posts(cid, before + 1).await;
    request_in(&text_of(posts.last().unwrap())).0
}

/// Nothing more reaches `cid` for a while (several of the loop's follow-up rounds).
async fn quiet(dt: &FakeDingtalk, cid: &str, had: usize) {
    tokio::time::sleep(Duration::from_secs(7)).await;
    let posts = dt.posts_to(cid);
    assert_eq!(posts.len(), had, "{posts:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn one_process_holds_the_dingtalk_stream_and_the_one_standing_by_takes_over_when_it_dies() {
    let (home, server, dt) = setup().await;
    let h = home.path();
    let mut first = Running::start(h, &ENV);
    pair(h, &dt, "u7", "cid7").await;

    // A second server on the same data home stands by: it asks for no connection.
    let _second = Running::start(h, &ENV);
    tokio::time::sleep(Duration::from_secs(3)).await;
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["第一个进程的回答。"]),
    );
    dt.message("u7", "cid7", "1", "在吗");
    let posts = dt.wait_posts("cid7", 2).await;
    assert!(
        text_of(&posts[1]).contains("第一个进程的回答。"),
        "{posts:?}"
    );
    {
        let s = dt.state.lock().unwrap();
        assert_eq!(
            (s.opens.len(), s.sockets),
            (1, 1),
            "the one standing by connected"
        );
    }
    assert_eq!(server.requests_to(Route::Openai).len(), 1);

    // The first dies without a word: the second opens the Stream and answers.
    let _ = first.0.kill();
    let _ = first.0.wait();
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["接手后的回答。"]),
    );
    dt.message("u7", "cid7", "1", "还在吗");
    let posts = dt.wait_posts("cid7", 3).await;
    assert!(text_of(&posts[2]).contains("接手后的回答。"), "{posts:?}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(dt.posts_to("cid7").len(), 3, "answered twice");
    let s = dt.state.lock().unwrap();
    assert_eq!((s.opens.len(), s.sockets), (2, 2), "{:?}", s.opens);
    assert_eq!(server.requests_to(Route::Openai).len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decision_made_outside_the_chat_is_told_to_the_dingtalk_chat_once() {
    let (home, server, dt) = setup().await;
    let h = home.path();
    let _bot = Running::start(h, &ENV);
    pair(h, &dt, "u8", "cid8").await;

    // Allowed with the CLI: the call runs, the conversation answers, the chat hears both.
    let id = queue_write(&server, &dt, "u8", "cid8", "call_cash_1").await;
    assert_eq!(
        free_cash(h).await,
        None,
        "a bot's write ran before it was allowed"
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["已按你的批准调整好现金，接下来看什么？"]),
    );
    let started = Instant::now();
    ok(h, &ENV, &["approvals", "allow", &id]).await;
    assert_eq!(free_cash(h).await, Some(5000.0));
    let posts = dt.wait_posts("cid8", 3).await;
    assert!(started.elapsed() < Duration::from_secs(30));
    let told = text_of(&posts[2]);
    assert_eq!(posts[2]["msgtype"], "markdown", "{}", posts[2]);
    assert_eq!(
        told.lines().next().unwrap(),
        format!("✅ 已批准并执行 调仓操作（{id}）：可用资金已设为 5000"),
        "{told}"
    );
    assert!(
        told.contains("已按你的批准调整好现金，接下来看什么？"),
        "{told}"
    );
    quiet(&dt, "cid8", 3).await;

    // Denied with the CLI: said so, nothing ran.
    let id = queue_write(&server, &dt, "u8", "cid8", "call_cash_2").await;
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["好的，不调。"]),
    );
    ok(h, &ENV, &["approvals", "deny", &id, "--reason", "先不动"]).await;
    let posts = dt.wait_posts("cid8", 5).await;
    let told = text_of(&posts[4]);
    assert!(told.contains(&format!("已拒绝 调仓操作（{id}）")), "{told}");
    assert!(told.contains("好的，不调。"), "{told}");
    quiet(&dt, "cid8", 5).await;
    assert_eq!(free_cash(h).await, Some(5000.0));
}

/// A local http:// proxy: `CONNECT host:port` opens a tunnel, an absolute-form request is
/// passed on in origin form. What it was asked, as `CONNECT host:port` or `METHOD path`.
#[derive(Clone, Default)]
struct FakeProxy {
    asked: Arc<Mutex<Vec<String>>>,
}

impl FakeProxy {
    async fn start() -> (String, FakeProxy) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let proxy = FakeProxy::default();
        let p = proxy.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let p = p.clone();
                tokio::spawn(async move { p.serve(socket).await });
            }
        });
        (url, proxy)
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }

    async fn serve(&self, mut client: TcpStream) {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            if client.read(&mut byte).await.unwrap_or(0) == 0 {
                return;
            }
            head.push(byte[0]);
        }
        let text = String::from_utf8_lossy(&head).into_owned();
        let mut words = text.split_whitespace();
        let (method, target) = (
            words.next().unwrap().to_owned(),
            words.next().unwrap().to_owned(),
        );
        if method == "CONNECT" {
            self.asked.lock().unwrap().push(format!("CONNECT {target}"));
            let Ok(mut upstream) = TcpStream::connect(&target).await else {
                let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n").await;
                return;
            };
            let _ = client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await;
            let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            return;
        }
        // http://host:port/path -> /path, to host:port.
        let rest = target.strip_prefix("http://").unwrap();
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let path = if path.is_empty() { "/" } else { path };
        self.asked.lock().unwrap().push(format!("{method} {path}"));
        let Ok(mut upstream) = TcpStream::connect(authority).await else {
            return;
        };
        let rewritten = text.replacen(&target, path, 1);
        if upstream.write_all(rewritten.as_bytes()).await.is_err() {
            return;
        }
        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn dingtalk_goes_through_the_settings_proxy_for_its_calls_and_its_websocket() {
    let (home, server, dt) = setup().await;
    let h = home.path();
    let (proxy_url, proxy) = FakeProxy::start().await;
    let settings_path = h.join("settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings_path).unwrap()).unwrap();
    settings["proxy"] = Value::String(proxy_url);
    std::fs::write(&settings_path, settings.to_string()).unwrap();

    ok(h, &ENV, &["bot", "test", "dt"]).await;
    assert_eq!(proxy.asked(), ["POST /v1.0/gateway/connections/open"]);

    let _bot = Running::start(h, &ENV);
    dt.message("u9", "cid9", "1", "你好");
    let posts = dt.wait_posts("cid9", 1).await;
    code_in(&text_of(&posts[0]));
    let ws_authority = dt
        .ws_url
        .trim_start_matches("ws://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let asked = proxy.asked();
    assert!(
        asked.contains(&format!("CONNECT {ws_authority}")),
        "{asked:?}"
    );
    assert!(
        asked.contains(&"POST /robot/sendBySession/cid9?session=s0".to_owned()),
        "{asked:?}"
    );
    assert_eq!(
        asked
            .iter()
            .filter(|a| a.as_str() == "POST /v1.0/gateway/connections/open")
            .count(),
        2,
        "{asked:?}"
    );
    assert!(server.requests_to(Route::Openai).is_empty());
}
