//! End-to-end: a Feishu bot over its long connection through the real `wyckoff` binary
//! (`wyckoff bot run`) against a local fake Feishu: `POST /open-apis/auth/v3/
//! tenant_access_token/internal` and `POST /callback/ws/endpoint` check the app id and
//! secret, the endpoint hands out a WebSocket URL (with `device_id`/`service_id`) and a
//! `ClientConfig`; the socket speaks protobuf `pbbp2.Frame`s, encoded and decoded here by
//! the official Python SDK's generated module (lark-oapi, tests/feishu/frames.py in
//! target/lark-venv, installed by scripts/setup), so the desk's frames are checked against
//! Feishu's own definition: events (`im.message.receive_v1`, one of them split in two
//! parts) go out as data frames, each must come back with `{"code":200}` and `biz_rt`,
//! and pings must come at the `PingInterval` with the endpoint's service id. Answers are
//! `POST /open-apis/im/v1/messages?receive_id_type=chat_id` with the tenant token.
//! An unknown sender gets a pairing code and the model hears nothing; once the owner
//! pairs it, "分析 000001" goes through the pipeline with no writer offered and comes
//! back as a Markdown card; a write waits in the inbox; a dropped socket is reopened with
//! a doubling wait and a message delivered again is answered once. The app secret is in
//! neither the database, the audit logs nor the bot's own log. Needs
//! `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/bots.rs"]
mod bots;

use std::collections::{BTreeSet, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bots::{KEY, Running, WRITERS, code_in, offered, read_http, request_in, respond};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;
use wyckoff_e2e::approvals::{free_cash, set_cash_call, tool_call};
use wyckoff_e2e::wyckoff_cli;
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

const APP_ID: &str = "cli_e2e0feishu7";
const APP_SECRET: &str = "FS-SECRET-e2e-0123456789abcdef";
const TOKEN_VAR: &str = "WYCKOFF_BOT_TOKEN_FS";
/// The service id the endpoint's URL names: every ping must carry it.
const SERVICE: i64 = 7_733;

fn secret() -> String {
    format!("{APP_ID}:{APP_SECRET}")
}

fn env() -> Vec<(&'static str, String)> {
    vec![(KEY.0, KEY.1.to_owned()), (TOKEN_VAR, secret())]
}

async fn ok(home: &Path, args: &[&str]) -> String {
    let env = env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    bots::ok(home, &env, args).await
}

// ---------------------------------------------------------------- the SDK's frames

/// tests/feishu/frames.py under the venv's Python: lark-oapi's own `pbbp2_pb2`.
struct Codec {
    child: Child,
    io: Mutex<(ChildStdin, BufReader<ChildStdout>)>,
}

impl Codec {
    fn start() -> Codec {
        let python = wyckoff_e2e::target_dir().join("lark-venv/bin/python");
        assert!(
            python.is_file(),
            "{} is missing: run scripts/setup (it installs lark-oapi)",
            python.display()
        );
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("feishu/frames.py");
        let mut child = Command::new(python)
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let codec = Codec {
            child,
            io: Mutex::new((stdin, stdout)),
        };
        // Python and the SDK loaded before any socket waits on them (on a busy machine
        // that takes seconds, and the desk would take a silent socket for a dead one).
        codec.encode(&json!({"headers": [["type", "ping"]]}));
        codec
    }

    fn ask(&self, request: &Value) -> Value {
        let mut io = self.io.lock().unwrap();
        writeln!(io.0, "{request}").unwrap();
        io.0.flush().unwrap();
        let mut line = String::new();
        io.1.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }

    fn encode(&self, frame: &Value) -> Vec<u8> {
        let answer = self.ask(&json!({"op": "encode", "frame": frame}));
        unhex(answer["hex"].as_str().unwrap_or_else(|| panic!("{answer}")))
    }

    /// The frame the SDK reads from `bytes`, or why it cannot.
    fn decode(&self, bytes: &[u8]) -> Result<Value, String> {
        let answer = self.ask(&json!({"op": "decode", "hex": hex(bytes)}));
        match answer.get("frame") {
            Some(frame) => Ok(frame.clone()),
            None => Err(answer["error"].to_string()),
        }
    }
}

impl Drop for Codec {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn header<'a>(frame: &'a Value, key: &str) -> Option<&'a str> {
    frame["headers"]
        .as_array()?
        .iter()
        .find(|h| h[0] == key)
        .and_then(|h| h[1].as_str())
}

// ---------------------------------------------------------------- the fake Feishu

/// A message as it reaches the chat.
#[derive(Debug, Clone)]
struct Sent {
    msg_type: String,
    /// The text of a `text` message, the markdown of a card's element.
    text: String,
    content: Value,
}

#[derive(Default)]
struct FsState {
    /// Data frames to send (each one or more parts), with whether all were answered.
    frames: Vec<(Vec<Value>, bool)>,
    /// Every data frame answer the client sent, as the SDK read it.
    acks: Vec<Value>,
    /// Pings the client sent, as the SDK read them, and when.
    pings: Vec<(Instant, Value)>,
    /// Frames the SDK could not read.
    unreadable: Vec<String>,
    /// Endpoint calls: when, and whether they were refused as busy.
    endpoints: Vec<(Instant, bool)>,
    /// The next endpoint calls to refuse as busy.
    fail_endpoints: usize,
    /// Tickets handed out and not yet used; sockets opened with another.
    tickets: HashSet<String>,
    bad_tickets: usize,
    sockets: usize,
    /// The socket with this number goes away (no close frame).
    drop_socket: Option<usize>,
    dropped_at: Option<Instant>,
    /// A new socket sends every frame again, answered or not.
    redeliver: bool,
    /// Tenant tokens handed out.
    tokens: Vec<String>,
    /// Images uploaded: (image key, form size).
    images: Vec<(String, usize)>,
    /// Messages sent: (chat id, message).
    sent: Vec<(String, Sent)>,
    /// Requests with a wrong app id or secret, or a wrong tenant token.
    bad_secret: usize,
    bad_token: usize,
}

#[derive(Clone)]
struct FakeFeishu {
    url: String,
    ws_url: String,
    state: Arc<Mutex<FsState>>,
    codec: Arc<Codec>,
}

impl FakeFeishu {
    async fn start() -> FakeFeishu {
        let http = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let ws = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let fake = FakeFeishu {
            url: format!("http://{}", http.local_addr().unwrap()),
            ws_url: format!("ws://{}/ws/v2", ws.local_addr().unwrap()),
            state: Arc::new(Mutex::new(FsState::default())),
            codec: Arc::new(Codec::start()),
        };
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

    /// Queues `im.message.receive_v1` from `open_id` in `chat` (`p2p` or `group`), in
    /// `parts` data frames; its chat message id.
    fn message(
        &self,
        open_id: &str,
        chat: &str,
        chat_type: &str,
        text: &str,
        parts: usize,
    ) -> String {
        let n = self.state.lock().unwrap().frames.len();
        let message_id = format!("om_e2e{n:04}");
        let mentions = if chat_type == "group" {
            json!([{"key": "@_user_1", "name": "Wyckoff Desk", "tenant_key": "t1",
                    "id": {"open_id": "ou_bot", "union_id": "on_bot", "user_id": null}}])
        } else {
            Value::Null
        };
        let text = if chat_type == "group" {
            format!("@_user_1 {text}")
        } else {
            text.to_owned()
        };
        let event = json!({
            "schema": "2.0",
            "header": {
                "event_id": format!("ev{n:04}"), "event_type": "im.message.receive_v1",
                "create_time": "1765000000000", "token": "", "app_id": APP_ID, "tenant_key": "t1",
            },
            "event": {
                "sender": {
                    "sender_id": {"open_id": open_id, "union_id": format!("on_{open_id}"), "user_id": null},
                    "sender_type": "user", "tenant_key": "t1",
                },
                "message": {
                    "message_id": message_id, "root_id": "", "parent_id": "",
                    "create_time": "1765000000000", "update_time": "1765000000000",
                    "chat_id": chat, "chat_type": chat_type, "message_type": "text",
                    "content": json!({"text": text}).to_string(), "mentions": mentions,
                },
            },
        })
        .to_string();
        // Split by characters, as a payload can be split anywhere; joined it is whole again.
        let chars: Vec<char> = event.chars().collect();
        let size = chars.len().div_ceil(parts);
        let frame_id = format!("frame-{n:04}");
        let frames: Vec<Value> = chars
            .chunks(size)
            .enumerate()
            .map(|(seq, chunk)| {
                json!({
                    "SeqID": n + 1, "LogID": 1000 + n, "service": SERVICE, "method": 1,
                    "headers": [["type", "event"], ["message_id", frame_id], ["sum", parts.to_string()],
                                ["seq", seq.to_string()], ["trace_id", format!("trace-{n}")]],
                    "payload": chunk.iter().collect::<String>(),
                    "payload_type": "", "payload_encoding": "",
                })
            })
            .collect();
        assert_eq!(frames.len(), parts);
        self.state.lock().unwrap().frames.push((frames, false));
        message_id
    }

    fn sent_to(&self, chat: &str) -> Vec<Sent> {
        let s = self.state.lock().unwrap();
        s.sent
            .iter()
            .filter(|(c, _)| c == chat)
            .map(|(_, m)| m.clone())
            .collect()
    }

    async fn wait_sent(&self, chat: &str, n: usize) -> Vec<Sent> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let sent = self.sent_to(chat);
            if sent.len() >= n {
                return sent;
            }
            assert!(
                Instant::now() < deadline,
                "{chat} got {} of {n} messages: {sent:?}",
                sent.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The answers to the frame of chat message number `n` (the `frame-NNNN` header).
    fn acks_of(&self, n: usize) -> Vec<Value> {
        let id = format!("frame-{n:04}");
        let s = self.state.lock().unwrap();
        s.acks
            .iter()
            .filter(|a| header(a, "message_id") == Some(id.as_str()))
            .cloned()
            .collect()
    }

    async fn wait_acks(&self, n: usize, count: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let acks = self.acks_of(n);
            if acks.len() >= count {
                return acks;
            }
            assert!(
                Instant::now() < deadline,
                "frame {n}: {} of {count} answers",
                acks.len()
            );
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
    }

    async fn serve_http(&self, mut socket: TcpStream) {
        let Some(request) = read_http(&mut socket).await else {
            return;
        };
        let body = &request.body;
        let path = request.path.as_str();
        let (status, answer) = match path {
            "/open-apis/auth/v3/tenant_access_token/internal" => {
                let mut s = self.state.lock().unwrap();
                if body["app_id"] != APP_ID || body["app_secret"] != APP_SECRET {
                    s.bad_secret += 1;
                    (400, json!({"code": 10014, "msg": "app secret invalid"}))
                } else {
                    let token = format!("t-e2e-{}", s.tokens.len());
                    s.tokens.push(token.clone());
                    (
                        200,
                        json!({"code": 0, "msg": "ok", "tenant_access_token": token, "expire": 7200}),
                    )
                }
            }
            "/callback/ws/endpoint" => {
                let mut s = self.state.lock().unwrap();
                if body["AppID"] != APP_ID || body["AppSecret"] != APP_SECRET {
                    s.bad_secret += 1;
                    (200, json!({"code": 514, "msg": "auth failed"}))
                } else if s.fail_endpoints > 0 {
                    s.fail_endpoints -= 1;
                    s.endpoints.push((Instant::now(), true));
                    (200, json!({"code": 1, "msg": "system busy"}))
                } else {
                    s.endpoints.push((Instant::now(), false));
                    let ticket = format!("tk{}x{}", s.endpoints.len(), s.tickets.len());
                    s.tickets.insert(ticket.clone());
                    let url = format!(
                        "{}?device_id=dev-{}&access_key=ak&service_id={SERVICE}&ticket={ticket}",
                        self.ws_url,
                        s.endpoints.len()
                    );
                    (
                        200,
                        json!({"code": 0, "msg": "ok", "data": {"URL": url, "ClientConfig": {
                            "ReconnectCount": -1, "ReconnectInterval": 120, "ReconnectNonce": 30, "PingInterval": 1,
                        }}}),
                    )
                }
            }
            "/open-apis/im/v1/messages?receive_id_type=chat_id" => {
                let mut s = self.state.lock().unwrap();
                let auth = request
                    .header("authorization")
                    .unwrap_or_default()
                    .to_owned();
                if !s.tokens.iter().any(|t| auth == format!("Bearer {t}")) {
                    s.bad_token += 1;
                    (
                        401,
                        json!({"code": 99_991_661, "msg": "Missing access token for authorization."}),
                    )
                } else {
                    let msg_type = body["msg_type"].as_str().unwrap().to_owned();
                    let content: Value =
                        serde_json::from_str(body["content"].as_str().unwrap()).unwrap();
                    let text = match msg_type.as_str() {
                        "text" => content["text"].as_str().unwrap().to_owned(),
                        "image" => content["image_key"].as_str().unwrap().to_owned(),
                        "interactive" => content["elements"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .filter(|e| e["tag"] == "markdown")
                            .map(|e| e["content"].as_str().unwrap())
                            .collect::<Vec<_>>()
                            .join("\n"),
                        other => panic!("unexpected msg_type {other}"),
                    };
                    let chat = body["receive_id"].as_str().unwrap().to_owned();
                    s.sent.push((
                        chat,
                        Sent {
                            msg_type,
                            text,
                            content,
                        },
                    ));
                    let id = format!("om_reply{}", s.sent.len());
                    (
                        200,
                        json!({"code": 0, "msg": "success", "data": {"message_id": id}}),
                    )
                }
            }
            "/open-apis/im/v1/images" => {
                let mut s = self.state.lock().unwrap();
                let auth = request
                    .header("authorization")
                    .unwrap_or_default()
                    .to_owned();
                let form = String::from_utf8_lossy(&request.raw).into_owned();
                let png_at = request
                    .raw
                    .windows(8)
                    .position(|w| w == b"\x89PNG\r\n\x1a\n");
                let multipart = request
                    .header("content-type")
                    .is_some_and(|t| t.starts_with("multipart/form-data; boundary="));
                if !s.tokens.iter().any(|t| auth == format!("Bearer {t}")) {
                    s.bad_token += 1;
                    (
                        401,
                        json!({"code": 99_991_661, "msg": "Missing access token"}),
                    )
                } else if !multipart
                    || !form.contains("name=\"image_type\"\r\n\r\nmessage\r\n")
                    || !form.contains("name=\"image\"; filename=")
                    || png_at.is_none()
                {
                    (
                        400,
                        json!({"code": 234_001, "msg": "Invalid request param."}),
                    )
                } else {
                    let key = format!("img_v3_e2e_{}", s.images.len());
                    s.images.push((key.clone(), request.raw.len()));
                    (
                        200,
                        json!({"code": 0, "msg": "success", "data": {"image_key": key}}),
                    )
                }
            }
            "/open-apis/bot/v3/info" => {
                let auth = request
                    .header("authorization")
                    .unwrap_or_default()
                    .to_owned();
                let s = self.state.lock().unwrap();
                if s.tokens.iter().any(|t| auth == format!("Bearer {t}")) {
                    (
                        200,
                        json!({"code": 0, "msg": "ok", "bot": {"activate_status": 2,
                        "app_name": "威科夫桌面", "avatar_url": "", "ip_white_list": [], "open_id": "ou_bot"}}),
                    )
                } else {
                    (
                        401,
                        json!({"code": 99_991_661, "msg": "Missing access token"}),
                    )
                }
            }
            _ => (404, json!({"code": 404, "msg": path})),
        };
        respond(&mut socket, status, &answer).await;
    }

    // The handshake callback's error type is tungstenite's own (an HTTP response).
    #[allow(clippy::result_large_err)]
    async fn serve_socket(&self, socket: TcpStream) {
        use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
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
            .map(|(_, t)| t.to_owned())
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
                    Some(Ok(Message::Binary(bytes))) => {
                        let frame = match self.codec.decode(&bytes) {
                            Ok(f) => f,
                            Err(why) => {
                                self.state.lock().unwrap().unreadable.push(why);
                                continue;
                            }
                        };
                        if frame["method"] == 0 && header(&frame, "type") == Some("ping") {
                            self.state.lock().unwrap().pings.push((Instant::now(), frame.clone()));
                            let pong = self.codec.encode(&json!({
                                "SeqID": 0, "LogID": 0, "service": SERVICE, "method": 0,
                                "headers": [["type", "pong"]],
                                "payload": json!({"ReconnectCount": -1, "ReconnectInterval": 120,
                                                  "ReconnectNonce": 30, "PingInterval": 1}).to_string(),
                            }));
                            if sink.send(Message::Binary(pong.into())).await.is_err() {
                                return;
                            }
                            continue;
                        }
                        let mut s = self.state.lock().unwrap();
                        let id = header(&frame, "message_id").unwrap_or_default().to_owned();
                        let code_200 = frame["payload"]
                            .as_str()
                            .and_then(|p| serde_json::from_str::<Value>(p).ok())
                            .is_some_and(|p| p["code"] == 200);
                        if code_200 {
                            for (parts, acked) in &mut s.frames {
                                if header(&parts[0], "message_id") == Some(id.as_str()) {
                                    *acked = true;
                                }
                            }
                        }
                        s.acks.push(frame);
                    }
                    Some(Ok(Message::Text(text))) => {
                        self.state.lock().unwrap().unreadable.push(format!("text: {text}"));
                    }
                    Some(Ok(_)) => {}
                    _ => return,
                },
                () = tokio::time::sleep(Duration::from_millis(20)) => {
                    let due: Vec<(usize, Vec<Value>)> = {
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
                            .map(|(i, (f, _))| (i, f.clone()))
                            .collect()
                    };
                    for (i, parts) in due {
                        sent.insert(i);
                        // A split payload's parts arrive last part first.
                        for part in parts.iter().rev() {
                            let bytes = self.codec.encode(part);
                            if sink.send(Message::Binary(bytes.into())).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------- the binary

struct Bot {
    _running: Running,
    log: tempfile::NamedTempFile,
}

fn run_bot(home: &Path) -> Bot {
    let log = tempfile::NamedTempFile::new().unwrap();
    let env = env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let running = Running::start_logging(home, &env, Some(log.path()));
    Bot {
        _running: running,
        log,
    }
}

async fn setup() -> (tempfile::TempDir, MockServer, FakeFeishu) {
    let fs = FakeFeishu::start().await;
    let env = env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (home, server) = bots::setup_bot(&env, "fs", "feishu", &fs.url, &[]).await;
    (home, server, fs)
}

/// The secret is in no database file, audit log, nor the bot's own log.
async fn assert_no_secret(home: &Path, bot: &Bot) {
    let env = env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    bots::assert_no_secret(home, &env, &secret(), APP_SECRET).await;
    let log = std::fs::read_to_string(bot.log.path()).unwrap();
    assert!(!log.contains(APP_SECRET), "the bot's log shows the secret");
}

// ---------------------------------------------------------------- the tests

#[tokio::test(flavor = "multi_thread")]
async fn an_unpaired_feishu_sender_gets_a_code_and_a_paired_one_is_answered_through_the_pipeline() {
    let (home, server, fs) = setup().await;
    let h = home.path();

    // What the app's model is offered: a plain turn's tools.
    server.push(Route::Openai, OpenAiStream::text_response(&["好的。"]));
    ok(h, &["run", "--json", "你好"]).await;
    let app_tools = offered(&server.requests_to(Route::Openai)[0]);
    server.clear_requests();

    let bot = run_bot(h);
    // A stranger, whose message even carries the app secret.
    fs.message(
        "ou_stranger",
        "oc_p2p1",
        "p2p",
        &format!("分析 000001 {APP_SECRET}"),
        1,
    );
    let sent = fs.wait_sent("oc_p2p1", 1).await;
    assert_eq!(sent[0].msg_type, "text", "{sent:?}");
    let code = code_in(&sent[0].text);
    assert!(
        sent[0].text.contains(&format!("wyckoff bot pair {code}")),
        "{sent:?}"
    );
    assert!(
        server.requests_to(Route::Openai).is_empty(),
        "the model heard a stranger"
    );
    // The frame was answered as the SDK answers one: itself, `biz_rt`, {"code":200}.
    let acks = fs.wait_acks(0, 1).await;
    let ack = &acks[0];
    assert_eq!(ack["method"], 1);
    assert_eq!(ack["service"], SERVICE);
    assert_eq!(
        (ack["SeqID"].as_u64(), ack["LogID"].as_u64()),
        (Some(1), Some(1000))
    );
    assert_eq!(header(ack, "type"), Some("event"));
    assert_eq!(header(ack, "trace_id"), Some("trace-0"));
    assert!(
        header(ack, "biz_rt").unwrap().parse::<u64>().is_ok(),
        "{ack}"
    );
    let payload: Value = serde_json::from_str(ack["payload"].as_str().unwrap()).unwrap();
    assert_eq!(payload, json!({"code": 200}));

    ok(h, &["bot", "pair", &code]).await;
    server.push(
        Route::Openai,
        tool_call("call_an_1", "analyze_stock", json!({"code": "000001"})),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["**平安银行**：处于吸筹阶段。\n\n- 量能收缩"]),
    );
    // Split in two frames, the last part first: joined, it is one message.
    fs.message("ou_stranger", "oc_p2p1", "p2p", "分析 000001", 2);
    // The answer, then the stock's daily chart: uploaded for an image key (a PNG in a
    // multipart form), sent as an image message, its caption as text after it.
    let sent = fs.wait_sent("oc_p2p1", 4).await;
    let images = fs.state.lock().unwrap().images.clone();
    assert_eq!(images.len(), 1, "{images:?}");
    assert_eq!(sent[2].msg_type, "image", "{sent:?}");
    assert_eq!(sent[2].text, images[0].0);
    assert_eq!(sent[3].msg_type, "text", "{sent:?}");
    assert!(sent[3].text.contains("000001"), "{sent:?}");
    let answer = &sent[1];
    assert_eq!(answer.msg_type, "interactive", "{answer:?}");
    assert_eq!(answer.content["elements"][0]["tag"], "markdown");
    assert!(
        answer.text.contains("**平安银行**：处于吸筹阶段。"),
        "{answer:?}"
    );
    assert!(answer.text.contains("- 量能收缩"), "{answer:?}");
    assert!(
        answer.text.contains("analyze_stock"),
        "no tool line: {answer:?}"
    );
    assert_eq!(fs.wait_acks(1, 2).await.len(), 2, "each part is answered");
    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 2, "one tool round and the answer");
    assert!(
        requests[0]
            .last_user_text()
            .unwrap()
            .contains("分析 000001")
    );
    let expected: BTreeSet<String> = app_tools
        .iter()
        .filter(|t| !WRITERS.contains(&t.as_str()))
        .cloned()
        .collect();
    assert_eq!(offered(&requests[0]), expected);

    // A write waits in the inbox, and the chat is told how an approver decides it.
    server.push(Route::Openai, set_cash_call("call_cash_1", 5000));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["调仓在等待主人批准。"]),
    );
    fs.message("ou_stranger", "oc_p2p1", "p2p", "把现金设为 5000", 1);
    let sent = fs.wait_sent("oc_p2p1", 5).await;
    let (id, _) = request_in(&sent[4].text);
    assert_eq!(
        free_cash(h).await,
        None,
        "the portfolio changed before approval"
    );
    let inbox: Value =
        serde_json::from_str(&ok(h, &["approvals", "list", "--json"]).await).unwrap();
    let requests = inbox.as_array().unwrap();
    assert_eq!(requests.len(), 1, "{inbox}");
    assert_eq!(requests[0]["id"], id.as_str());
    assert_eq!(requests[0]["tool"], "update_portfolio");
    assert_eq!(requests[0]["status"], "pending");
    assert_eq!(requests[0]["requested_by"], "bot:fs");

    // In a group the bot's @mention is left out, and a member who is not paired gets a
    // code of their own: the group is never paired as a whole.
    fs.message("ou_member", "oc_group1", "group", "我也要问", 1);
    let sent = fs.wait_sent("oc_group1", 1).await;
    assert!(sent[0].text.contains("配对码"), "{sent:?}");
    assert_eq!(server.requests_to(Route::Openai).len(), 4);

    // Pings come at the interval the endpoint set (1 s), on the endpoint's service.
    let deadline = Instant::now() + Duration::from_secs(20);
    while fs.state.lock().unwrap().pings.len() < 3 {
        assert!(Instant::now() < deadline, "the desk stopped pinging");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (pings, unreadable) = {
        let s = fs.state.lock().unwrap();
        (s.pings.clone(), s.unreadable.clone())
    };
    assert!(
        unreadable.is_empty(),
        "frames the SDK could not read: {unreadable:?}"
    );
    for (_, ping) in &pings {
        assert_eq!(ping["service"], SERVICE);
        assert_eq!(ping["method"], 0);
    }
    for pair in pings.windows(2) {
        let gap = pair[1].0 - pair[0].0;
        assert!(gap >= Duration::from_millis(900), "pinged after {gap:?}");
    }
    let log: Value = serde_json::from_str(&ok(h, &["bot", "log", "--json"]).await).unwrap();
    let kinds: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    for kind in ["inbound", "pairing_code", "paired"] {
        assert!(kinds.contains(&kind), "{kinds:?}");
    }
    assert_eq!(kinds.iter().filter(|k| **k == "inbound").count(), 4);
    let conversations: Value =
        serde_json::from_str(&ok(h, &["conversations", "list", "--json"]).await).unwrap();
    assert!(
        conversations.as_array().unwrap().iter().any(|c| c["title"]
            .as_str()
            .unwrap_or_default()
            .starts_with("feishu · fs")),
        "{conversations}"
    );
    assert_no_secret(h, &bot).await;
    let s = fs.state.lock().unwrap();
    assert_eq!((s.bad_secret, s.bad_token, s.bad_tickets), (0, 0, 0));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_connection_reconnects_with_backoff_and_a_redelivered_message_is_answered_once() {
    let (home, _server, fs) = setup().await;
    let h = home.path();
    let bot = run_bot(h);
    fs.message("ou_u5", "oc_5", "p2p", "hello", 1);
    fs.wait_sent("oc_5", 1).await;
    fs.wait_acks(0, 1).await;

    // The socket goes away; the next two endpoint requests are refused as busy.
    {
        let mut s = fs.state.lock().unwrap();
        s.fail_endpoints = 2;
        s.redeliver = true;
        s.drop_socket = Some(s.sockets);
    }
    // On the new socket Feishu sends the first message again, and a new one.
    fs.message("ou_u5", "oc_5", "p2p", "again", 1);
    fs.wait_sent("oc_5", 2).await;
    fs.wait_acks(0, 2).await;
    fs.wait_acks(1, 1).await;

    let (endpoints, dropped_at, sockets) = {
        let s = fs.state.lock().unwrap();
        (s.endpoints.clone(), s.dropped_at.unwrap(), s.sockets)
    };
    assert_eq!(
        sockets,
        2,
        "{}",
        std::fs::read_to_string(bot.log.path()).unwrap()
    );
    assert_eq!(endpoints.len(), 4, "{endpoints:?}");
    assert!(
        endpoints[1].1 && endpoints[2].1 && !endpoints[3].1,
        "{endpoints:?}"
    );
    // 200 ms after the drop, then 400 ms, then 800 ms between the attempts.
    let gaps = [
        endpoints[1].0 - dropped_at,
        endpoints[2].0 - endpoints[1].0,
        endpoints[3].0 - endpoints[2].0,
    ];
    for (gap, least) in gaps.iter().zip([200, 400, 800]) {
        assert!(*gap >= Duration::from_millis(least), "{gaps:?}");
    }

    // A while later still: the redelivered message got no second answer.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let sent = fs.sent_to("oc_5");
    assert_eq!(sent.len(), 2, "{sent:?}");
    let log: Value = serde_json::from_str(&ok(h, &["bot", "log", "--json"]).await).unwrap();
    let inbound = log
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["kind"] == "inbound")
        .count();
    assert_eq!(inbound, 2);
    assert_no_secret(h, &bot).await;
    let s = fs.state.lock().unwrap();
    assert_eq!((s.bad_secret, s.bad_tickets), (0, 0));
    assert!(s.unreadable.is_empty(), "{:?}", s.unreadable);
}

#[tokio::test(flavor = "multi_thread")]
async fn bot_test_names_the_app_and_a_wrong_secret_is_refused_without_showing_it() {
    let (home, _server, fs) = setup().await;
    let h = home.path();
    let out = ok(h, &["bot", "test", "fs"]).await;
    assert!(out.contains("威科夫桌面"), "{out}");

    let mut cmd = wyckoff_cli(h);
    cmd.args(["bot", "test", "fs"])
        .env(TOKEN_VAR, format!("{APP_ID}:wrong-secret-value"));
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", wyckoff_e2e::show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refused") && err.contains("10014") && !err.contains("wrong-secret-value"),
        "{err}"
    );
    assert_eq!(fs.state.lock().unwrap().bad_secret, 1);

    // A secret that is not APP_ID:APP_SECRET says how it should look.
    let mut cmd = wyckoff_cli(h);
    cmd.args(["bot", "test", "fs"])
        .env(TOKEN_VAR, "only-a-secret");
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", wyckoff_e2e::show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("APP_ID:APP_SECRET"), "{err}");
}
