//! End-to-end: a DingTalk Stream bot through the real `wyckoff` binary (`wyckoff bot run`)
//! against a local fake DingTalk: `POST /v1.0/gateway/connections/open` checks the client
//! id and secret and hands out a WebSocket endpoint with a one-time ticket; the socket
//! sends frames `{specVersion, type, headers{topic, messageId, ...}, data}` and expects an
//! ACK `{code, headers{contentType, messageId}, message, data}` for each; a robot message
//! (`/v1.0/im/bot/messages/get`) carries its chat's `sessionWebhook`, where the answer is
//! POSTed. An unknown sender gets a pairing code and the model hears nothing; once the
//! owner pairs it, "分析 000001" goes through the pipeline with no writer offered; a
//! dropped socket is reopened with a doubling wait, and a message delivered again on the
//! new socket is not answered twice. The app secret is in neither the database nor the
//! logs. Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use wyckoff_e2e::approvals::tool_call;
use wyckoff_e2e::wyckoff_cli;
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

const KEY: (&str, &str) = ("WYCKOFF_KEY_MOCK", "sk-bot-e2e-123456");
const CLIENT_ID: &str = "dingbote2e7";
const CLIENT_SECRET: &str = "Ding-SECRET-e2e-0123456789abcdef";
const TOKEN_VAR: &str = "WYCKOFF_BOT_TOKEN_DT";
const ROBOT_TOPIC: &str = "/v1.0/im/bot/messages/get";
const WRITERS: [&str; 4] = [
    "update_portfolio",
    "record_fill",
    "write_file",
    "exec_command",
];

fn token() -> String {
    format!("{CLIENT_ID}:{CLIENT_SECRET}")
}

// ---------------------------------------------------------------- the fake DingTalk

#[derive(Default)]
struct DtState {
    /// Frames the server has to send, with whether the client acknowledged each.
    frames: Vec<(Value, bool)>,
    /// Every ACK the client sent.
    acks: Vec<Value>,
    /// connections/open calls: when, and whether they were refused with a 503.
    opens: Vec<(Instant, bool)>,
    /// The next connections/open calls to refuse with a 503.
    fail_opens: usize,
    /// Tickets handed out and not yet used.
    tickets: HashSet<String>,
    /// Sockets opened with a ticket the server never gave (or gave and saw used).
    bad_tickets: usize,
    /// Sockets accepted.
    sockets: usize,
    /// The socket with this number goes away (no close frame).
    drop_socket: Option<usize>,
    dropped_at: Option<Instant>,
    /// A new socket sends every frame again, acknowledged or not.
    redeliver: bool,
    /// Webhook posts: (conversation id, body).
    posts: Vec<(String, Value)>,
    /// Requests with the wrong client id or secret.
    bad_secret: usize,
}

#[derive(Clone)]
struct FakeDingtalk {
    url: String,
    ws_url: String,
    state: Arc<Mutex<DtState>>,
}

impl FakeDingtalk {
    async fn start() -> FakeDingtalk {
        let http = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let ws = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", http.local_addr().unwrap());
        let ws_url = format!("ws://{}/connect", ws.local_addr().unwrap());
        let state = Arc::new(Mutex::new(DtState::default()));
        let fake = FakeDingtalk { url, ws_url, state };
        let f = fake.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = http.accept().await {
                let f = f.clone();
                tokio::spawn(async move { f.serve_http(socket).await });
            }
        });
        let f = fake.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = ws.accept().await {
                let f = f.clone();
                tokio::spawn(async move { f.serve_socket(socket).await });
            }
        });
        fake
    }

    /// Queues a robot message from `staff` in conversation `cid` (`1` private, `2` group);
    /// its frame's message id.
    fn message(&self, staff: &str, cid: &str, kind: &str, text: &str) -> String {
        let mut s = self.state.lock().unwrap();
        let n = s.frames.len();
        let data = json!({
            "conversationId": cid,
            "conversationType": kind,
            "chatbotCorpId": "corp1",
            "chatbotUserId": "$:LWCP_v1:$bot",
            "msgId": format!("msg{n:04}"),
            "senderNick": format!("员工{staff}"),
            "isAdmin": false,
            "senderStaffId": staff,
            "senderId": format!("$:LWCP_v1:${staff}"),
            "sessionWebhookExpiredTime": 1_765_005_400_000_i64,
            "createAt": 1_765_000_000_000_i64,
            "senderCorpId": "corp1",
            "sessionWebhook": format!("{}/robot/sendBySession/{cid}?session=s{n}", self.url),
            "msgtype": "text",
            "text": {"content": text},
        });
        let id = format!("frame-{n:04}");
        s.frames.push((
            json!({
                "specVersion": "1.0",
                "type": "CALLBACK",
                "headers": {
                    "appId": "app1", "connectionId": "c1", "contentType": "application/json",
                    "messageId": id, "time": "1765000000000", "topic": ROBOT_TOPIC,
                },
                "data": data.to_string(),
            }),
            false,
        ));
        id
    }

    fn system(&self, topic: &str, data: &str) -> String {
        let mut s = self.state.lock().unwrap();
        let id = format!("sys-{:04}", s.frames.len());
        s.frames.push((
            json!({
                "specVersion": "1.0",
                "type": "SYSTEM",
                "headers": {"contentType": "application/json", "messageId": id, "time": "1765000000000", "topic": topic},
                "data": data,
            }),
            false,
        ));
        id
    }

    fn posts_to(&self, cid: &str) -> Vec<Value> {
        let s = self.state.lock().unwrap();
        s.posts
            .iter()
            .filter(|(c, _)| c == cid)
            .map(|(_, b)| b.clone())
            .collect()
    }

    async fn wait_posts(&self, cid: &str, n: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let posts = self.posts_to(cid);
            if posts.len() >= n {
                return posts;
            }
            assert!(
                Instant::now() < deadline,
                "{cid} got {} of {n} posts: {posts:?}",
                posts.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn ack_of(&self, message_id: &str) -> Option<Value> {
        let s = self.state.lock().unwrap();
        s.acks
            .iter()
            .find(|a| a["headers"]["messageId"] == message_id)
            .cloned()
    }

    async fn wait_acks(&self, message_id: &str, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let count = {
                let s = self.state.lock().unwrap();
                s.acks
                    .iter()
                    .filter(|a| a["headers"]["messageId"] == message_id)
                    .count()
            };
            if count >= n {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{message_id}: {count} of {n} acks"
            );
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
    }

    async fn serve_http(&self, mut socket: TcpStream) {
        let Some((path, body)) = read_request(&mut socket).await else {
            return;
        };
        let (status, answer) = if path == "/v1.0/gateway/connections/open" {
            let mut s = self.state.lock().unwrap();
            if body["clientId"] != CLIENT_ID || body["clientSecret"] != CLIENT_SECRET {
                s.bad_secret += 1;
                (
                    401,
                    json!({"code": "InvalidAuthentication", "message": "clientId or clientSecret is wrong"}),
                )
            } else if s.fail_opens > 0 {
                s.fail_opens -= 1;
                s.opens.push((Instant::now(), true));
                (
                    503,
                    json!({"code": "ServiceUnavailable", "message": "busy"}),
                )
            } else {
                assert!(
                    body["subscriptions"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|t| t["type"] == "CALLBACK" && t["topic"] == ROBOT_TOPIC),
                    "{body}"
                );
                s.opens.push((Instant::now(), false));
                let ticket = format!("tk-{}+/{}", s.opens.len(), s.tickets.len());
                s.tickets.insert(ticket.clone());
                (200, json!({"endpoint": self.ws_url, "ticket": ticket}))
            }
        } else if let Some(rest) = path.strip_prefix("/robot/sendBySession/") {
            let cid = rest.split('?').next().unwrap().to_owned();
            self.state.lock().unwrap().posts.push((cid, body));
            (200, json!({"errcode": 0, "errmsg": "ok"}))
        } else {
            (404, json!({"code": "NotFound", "message": path}))
        };
        respond(&mut socket, status, &answer).await;
    }

    // The handshake callback's error type is tungstenite's own (an HTTP response).
    #[allow(clippy::result_large_err)]
    async fn serve_socket(&self, socket: TcpStream) {
        let uri = Arc::new(Mutex::new(String::new()));
        let seen = uri.clone();
        let callback = move |req: &Request, resp: Response| {
            *seen.lock().unwrap() = req.uri().to_string();
            Ok(resp)
        };
        let Ok(ws) = tokio_tungstenite::accept_hdr_async(socket, callback).await else {
            return;
        };
        let uri = uri.lock().unwrap().clone();
        let ticket = uri
            .split_once("ticket=")
            .map(|(_, t)| decode(t))
            .unwrap_or_default();
        let (number, redeliver) = {
            let mut s = self.state.lock().unwrap();
            if !s.tickets.remove(&ticket) {
                s.bad_tickets += 1;
                return;
            }
            s.sockets += 1;
            (s.sockets, std::mem::take(&mut s.redeliver))
        };
        let (mut sink, mut stream) = ws.split();
        let mut sent: HashSet<usize> = HashSet::new();
        loop {
            tokio::select! {
                msg = stream.next() => match msg {
                    Some(Ok(Message::Text(text))) => {
                        let ack: Value = serde_json::from_str(&text).unwrap();
                        let mut s = self.state.lock().unwrap();
                        let id = ack["headers"]["messageId"].clone();
                        for (frame, acked) in &mut s.frames {
                            if frame["headers"]["messageId"] == id {
                                *acked = true;
                            }
                        }
                        s.acks.push(ack);
                    }
                    Some(Ok(_)) => {}
                    _ => return,
                },
                () = tokio::time::sleep(Duration::from_millis(20)) => {
                    let due: Vec<(usize, String)> = {
                        let mut s = self.state.lock().unwrap();
                        if s.drop_socket == Some(number) {
                            // Gone without a close frame, as a network drop is.
                            s.dropped_at = Some(Instant::now());
                            return;
                        }
                        s.frames
                            .iter()
                            .enumerate()
                            .filter(|(i, (_, acked))| !sent.contains(i) && (!acked || redeliver))
                            .map(|(i, (f, _))| (i, f.to_string()))
                            .collect()
                    };
                    for (i, frame) in due {
                        sent.insert(i);
                        if sink.send(Message::text(frame)).await.is_err() {
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// Percent-decoding of a query value.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 3 <= bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else if bytes[i] == b'+' {
            out.push(b' ');
            i += 1;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
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
    cmd.args(args).env(KEY.0, KEY.1).env(TOKEN_VAR, token());
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

/// `wyckoff bot run` in the background, a 200 ms first retry.
struct Running(Child);

impl Running {
    fn start(home: &Path) -> Running {
        let child = wyckoff_cli(home)
            .args(["bot", "run", "--retry-ms", "200"])
            .env(KEY.0, KEY.1)
            .env(TOKEN_VAR, token())
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

async fn setup() -> (tempfile::TempDir, MockServer, FakeDingtalk) {
    let server = MockServer::start().await.unwrap();
    let dt = FakeDingtalk::start().await;
    let home = tempfile::tempdir().unwrap();
    wyckoff_e2e::webdriver::mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    ok(
        home.path(),
        &[
            "bot",
            "add",
            "dt",
            "--kind",
            "dingtalk",
            "--api-url",
            &dt.url,
        ],
    )
    .await;
    (home, server, dt)
}

/// The text of a webhook post (a text or a Markdown message).
fn text_of(post: &Value) -> String {
    match post["msgtype"].as_str().unwrap() {
        "text" => post["text"]["content"].as_str().unwrap().to_owned(),
        "markdown" => {
            assert!(
                !post["markdown"]["title"].as_str().unwrap().is_empty(),
                "{post}"
            );
            post["markdown"]["text"].as_str().unwrap().to_owned()
        }
        other => panic!("unexpected msgtype {other}"),
    }
}

fn code_in(text: &str) -> String {
    let after = text
        .split("配对码：")
        .nth(1)
        .unwrap_or_else(|| panic!("no code: {text}"));
    after.chars().take(8).collect()
}

fn offered(request: &wyckoff_mock_vendor::RecordedRequest) -> BTreeSet<String> {
    request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
        .collect()
}

/// The app secret is nowhere in the database files nor the audit logs.
async fn assert_no_secret(home: &Path) {
    for entry in std::fs::read_dir(home).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("wyckoff.db") {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !bytes
                    .windows(CLIENT_SECRET.len())
                    .any(|w| w == CLIENT_SECRET.as_bytes()),
                "the app secret is stored in {name}"
            );
        }
    }
    for args in [["bot", "log", "--json"], ["approvals", "log", "--json"]] {
        let out = ok(home, &args).await;
        assert!(!out.contains(CLIENT_SECRET), "{args:?} shows the secret");
    }
}

// ---------------------------------------------------------------- the tests

#[tokio::test(flavor = "multi_thread")]
async fn an_unpaired_dingtalk_sender_gets_a_code_and_a_paired_one_is_answered_through_the_pipeline()
{
    let (home, server, dt) = setup().await;
    let h = home.path();
    let _bot = Running::start(h);

    // DingTalk's keep-alive: the ACK carries the ping's data back.
    let ping = dt.system("ping", "{\"opaque\":\"p-1\"}");
    dt.wait_acks(&ping, 1).await;
    let ack = dt.ack_of(&ping).unwrap();
    assert_eq!(ack["code"], 200, "{ack}");
    assert_eq!(ack["headers"]["contentType"], "application/json");
    assert_eq!(ack["data"], "{\"opaque\":\"p-1\"}");

    // A stranger, whose message even carries the app secret.
    let first = dt.message(
        "u42",
        "cidP42",
        "1",
        &format!("分析 000001 {CLIENT_SECRET}"),
    );
    let posts = dt.wait_posts("cidP42", 1).await;
    let code = code_in(&text_of(&posts[0]));
    assert_eq!(code.len(), 8);
    assert!(text_of(&posts[0]).contains(&format!("wyckoff bot pair {code}")));
    dt.wait_acks(&first, 1).await;
    assert_eq!(dt.ack_of(&first).unwrap()["code"], 200);
    assert!(
        server.requests_to(Route::Openai).is_empty(),
        "the model heard a stranger"
    );
    let listed: Value = serde_json::from_str(&ok(h, &["bot", "list", "--json"]).await).unwrap();
    assert_eq!(listed["pending_pairings"][0]["code"], code.as_str());
    assert_eq!(listed["pending_pairings"][0]["sender_id"], "u42");
    assert_eq!(listed["bots"][0]["kind"], "dingtalk");
    assert_eq!(listed["bots"][0]["token_set"], true);

    ok(h, &["bot", "pair", &code]).await;
    server.push(
        Route::Openai,
        tool_call("call_dt_1", "analyze_stock", json!({"code": "000001"})),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["## 结论\n**平安银行**：处于吸筹阶段。"]),
    );
    dt.message("u42", "cidP42", "1", " 分析 000001 ");
    let posts = dt.wait_posts("cidP42", 2).await;
    assert_eq!(posts[1]["msgtype"], "markdown", "{}", posts[1]);
    let answer = text_of(&posts[1]);
    assert!(answer.contains("**平安银行**：处于吸筹阶段。"), "{answer}");
    assert!(answer.contains("analyze_stock"), "no tool line: {answer}");
    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 2, "one tool round and the answer");
    // The text as typed, trimmed (the desk adds the time on a line of its own).
    let asked = requests[0].last_user_text().unwrap();
    assert_eq!(asked.lines().next(), Some("分析 000001"), "{asked}");
    let tools = offered(&requests[0]);
    assert!(tools.contains("analyze_stock"), "{tools:?}");
    for writer in WRITERS {
        assert!(
            !tools.contains(writer),
            "a bot's model was offered {writer}"
        );
    }

    let conversations: Value =
        serde_json::from_str(&ok(h, &["conversations", "list", "--json"]).await).unwrap();
    assert!(
        conversations.as_array().unwrap().iter().any(|c| c["title"]
            .as_str()
            .unwrap_or_default()
            .starts_with("dingtalk · dt · 员工u42")),
        "{conversations}"
    );
    let log: Value = serde_json::from_str(&ok(h, &["bot", "log", "--json"]).await).unwrap();
    let kinds: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.iter().filter(|k| **k == "inbound").count(), 2);
    for kind in ["pairing_code", "paired"] {
        assert!(kinds.contains(&kind), "{kinds:?}");
    }
    assert_no_secret(h).await;
    let s = dt.state.lock().unwrap();
    assert_eq!((s.bad_secret, s.bad_tickets), (0, 0));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_stream_reconnects_with_backoff_and_no_message_is_answered_twice() {
    let (home, _server, dt) = setup().await;
    let h = home.path();
    let _bot = Running::start(h);
    let first = dt.message("u5", "cid5", "1", "hello");
    dt.wait_posts("cid5", 1).await;
    dt.wait_acks(&first, 1).await;

    // The socket goes away; the next two connection requests are refused.
    {
        let mut s = dt.state.lock().unwrap();
        s.fail_opens = 2;
        s.redeliver = true;
        s.drop_socket = Some(s.sockets);
    }
    // On the new socket DingTalk sends the first message again, and a new one.
    let second = dt.message("u5", "cid5", "1", "again");
    dt.wait_posts("cid5", 2).await;
    dt.wait_acks(&first, 2).await;
    dt.wait_acks(&second, 1).await;

    let (opens, dropped_at, sockets) = {
        let s = dt.state.lock().unwrap();
        (s.opens.clone(), s.dropped_at.unwrap(), s.sockets)
    };
    assert_eq!(sockets, 2);
    assert_eq!(opens.len(), 4, "{opens:?}");
    assert!(opens[1].1 && opens[2].1 && !opens[3].1, "{opens:?}");
    // 200 ms after the drop, then 400 ms, then 800 ms between the attempts.
    let gaps = [
        opens[1].0 - dropped_at,
        opens[2].0 - opens[1].0,
        opens[3].0 - opens[2].0,
    ];
    for (gap, least) in gaps.iter().zip([200, 400, 800]) {
        assert!(*gap >= Duration::from_millis(least), "{gaps:?}");
    }

    // A while later still: the redelivered message got no second answer.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let posts = dt.posts_to("cid5");
    assert_eq!(posts.len(), 2, "{posts:?}");
    let log: Value = serde_json::from_str(&ok(h, &["bot", "log", "--json"]).await).unwrap();
    let inbound = log
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["kind"] == "inbound")
        .count();
    assert_eq!(inbound, 2);

    // DingTalk announcing a disconnect: a new connection at once, with no wait.
    let bye = dt.system("disconnect", "{\"reason\":\"upgrade\"}");
    dt.wait_acks(&bye, 1).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while dt.state.lock().unwrap().sockets < 3 {
        assert!(
            Instant::now() < deadline,
            "no new socket after a disconnect"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(dt.state.lock().unwrap().bad_tickets, 0);
    assert_no_secret(h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bot_test_opens_a_connection_and_a_wrong_secret_is_refused_without_showing_it() {
    let (home, _server, dt) = setup().await;
    let h = home.path();
    let out = ok(h, &["bot", "test", "dt"]).await;
    assert!(out.contains(CLIENT_ID), "{out}");

    let mut cmd = wyckoff_cli(h);
    cmd.args(["bot", "test", "dt"])
        .env(TOKEN_VAR, format!("{CLIENT_ID}:wrong-secret-value"));
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", wyckoff_e2e::show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refused") && !err.contains("wrong-secret-value"),
        "{err}"
    );
    assert_eq!(dt.state.lock().unwrap().bad_secret, 1);

    // A secret that is not CLIENT_ID:CLIENT_SECRET says how it should look.
    let mut cmd = wyckoff_cli(h);
    cmd.args(["bot", "test", "dt"])
        .env(TOKEN_VAR, "only-a-secret");
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", wyckoff_e2e::show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("CLIENT_ID:CLIENT_SECRET"), "{err}");
}
