//! A local fake Feishu for the Feishu bot end-to-end tests: `POST /open-apis/auth/v3/
//! tenant_access_token/internal` and `POST /callback/ws/endpoint` check the app id and
//! secret, the endpoint hands out a WebSocket URL (with `device_id`/`service_id`) and a
//! `ClientConfig`; the socket speaks protobuf `pbbp2.Frame`s, encoded and decoded by the
//! official Python SDK's generated module (lark-oapi, tests/feishu/frames.py in
//! target/lark-venv, installed by scripts/setup), so the desk's frames are checked against
//! Feishu's own definition: events (`im.message.receive_v1`, split in parts when asked) go
//! out as data frames and their answers are recorded as the SDK reads them, pings are
//! recorded and answered with a pong. Answers are `POST /open-apis/im/v1/messages?
//! receive_id_type=chat_id` with the tenant token, images `POST /open-apis/im/v1/images`.
//! Included with `#[path]` beside `support/bots.rs` (as `bots`).
#![allow(dead_code)]

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;

use crate::bots::{read_http, respond};

pub const APP_ID: &str = "cli_e2e0feishu7";
pub const APP_SECRET: &str = "FS-SECRET-e2e-0123456789abcdef";
pub const TOKEN_VAR: &str = "WYCKOFF_BOT_TOKEN_FS";
/// The bot's secret as `wyckoff bot secret` takes it: `APP_ID:APP_SECRET`.
pub const TOKEN: &str = "cli_e2e0feishu7:FS-SECRET-e2e-0123456789abcdef";
/// The environment of every `wyckoff` the tests run: the model's key and the secret.
pub const ENV: [(&str, &str); 2] = [crate::bots::KEY, (TOKEN_VAR, TOKEN)];
/// The service id the endpoint's URL names: every ping must carry it.
pub const SERVICE: i64 = 7_733;

// ---------------------------------------------------------------- the SDK's frames

/// tests/feishu/frames.py under the venv's Python: lark-oapi's own `pbbp2_pb2`.
pub struct Codec {
    child: Child,
    io: Mutex<(ChildStdin, BufReader<ChildStdout>)>,
}

impl Codec {
    pub fn start() -> Codec {
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

    pub fn encode(&self, frame: &Value) -> Vec<u8> {
        let answer = self.ask(&json!({"op": "encode", "frame": frame}));
        unhex(answer["hex"].as_str().unwrap_or_else(|| panic!("{answer}")))
    }

    /// The frame the SDK reads from `bytes`, or why it cannot.
    pub fn decode(&self, bytes: &[u8]) -> Result<Value, String> {
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

pub fn header<'a>(frame: &'a Value, key: &str) -> Option<&'a str> {
    frame["headers"]
        .as_array()?
        .iter()
        .find(|h| h[0] == key)
        .and_then(|h| h[1].as_str())
}

// ---------------------------------------------------------------- the fake Feishu

/// A message as it reaches the chat.
#[derive(Debug, Clone)]
pub struct Sent {
    pub msg_type: String,
    /// The text of a `text` message, the markdown of a card's element.
    pub text: String,
    pub content: Value,
}

#[derive(Default)]
pub struct FsState {
    /// Data frames to send (each one or more parts), with whether all were answered.
    pub frames: Vec<(Vec<Value>, bool)>,
    /// Every data frame answer the client sent, as the SDK read it.
    pub acks: Vec<Value>,
    /// Pings the client sent, as the SDK read them, and when.
    pub pings: Vec<(Instant, Value)>,
    /// Frames the SDK could not read.
    pub unreadable: Vec<String>,
    /// Endpoint calls: when, and whether they were refused as busy.
    pub endpoints: Vec<(Instant, bool)>,
    /// The next endpoint calls to refuse as busy.
    pub fail_endpoints: usize,
    /// Tickets handed out and not yet used; sockets opened with another.
    pub tickets: HashSet<String>,
    pub bad_tickets: usize,
    pub sockets: usize,
    /// The socket with this number goes away (no close frame).
    pub drop_socket: Option<usize>,
    pub dropped_at: Option<Instant>,
    /// A new socket sends every frame again, answered or not.
    pub redeliver: bool,
    /// Tenant tokens handed out.
    pub tokens: Vec<String>,
    /// Images uploaded: (image key, form size).
    pub images: Vec<(String, usize)>,
    /// Messages sent: (chat id, message).
    pub sent: Vec<(String, Sent)>,
    /// Requests with a wrong app id or secret, or a wrong tenant token.
    pub bad_secret: usize,
    pub bad_token: usize,
}

#[derive(Clone)]
pub struct FakeFeishu {
    pub url: String,
    pub ws_url: String,
    pub state: Arc<Mutex<FsState>>,
    pub codec: Arc<Codec>,
}

impl FakeFeishu {
    pub async fn start() -> FakeFeishu {
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
    pub fn message(
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

    pub fn sent_to(&self, chat: &str) -> Vec<Sent> {
        let s = self.state.lock().unwrap();
        s.sent
            .iter()
            .filter(|(c, _)| c == chat)
            .map(|(_, m)| m.clone())
            .collect()
    }

    pub async fn wait_sent(&self, chat: &str, n: usize) -> Vec<Sent> {
        let what = format!("{chat}'s messages");
        wyckoff_e2e::wait_for_count(
            &what,
            n,
            Duration::from_secs(60),
            Duration::from_millis(50),
            || self.sent_to(chat),
        )
        .await
    }

    /// The answers to the frame of chat message number `n` (the `frame-NNNN` header).
    pub fn acks_of(&self, n: usize) -> Vec<Value> {
        let id = format!("frame-{n:04}");
        let s = self.state.lock().unwrap();
        s.acks
            .iter()
            .filter(|a| header(a, "message_id") == Some(id.as_str()))
            .cloned()
            .collect()
    }

    pub async fn wait_acks(&self, n: usize, count: usize) -> Vec<Value> {
        let what = format!("frame {n}'s answers");
        wyckoff_e2e::wait_for_count(
            &what,
            count,
            Duration::from_secs(30),
            Duration::from_millis(30),
            || self.acks_of(n),
        )
        .await
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

    async fn serve_socket(&self, socket: TcpStream) {
        let Some((ws, uri)) = crate::bots::accept_websocket(socket).await else {
            return;
        };
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
