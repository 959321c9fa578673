//! What the chat-bot end-to-end tests share: a small HTTP/1.1 reader and writer for local
//! fake platforms (with multipart/form-data parts), a fake Telegram Bot API speaking its
//! documented JSON (`getUpdates` with `update_id`/`message{message_id, from{id},
//! chat{id,type}, text}`, `sendMessage`, `sendPhoto` as a form, `getMe`), the `wyckoff`
//! binary with a bot's environment, and the pairing steps every platform takes. Included with `#[path]` by the tests that need it; each uses a part.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use wyckoff_e2e::wyckoff_cli;
use wyckoff_mock_vendor::MockServer;

/// The mock model vendor's key, as `mock_model_settings` names it.
pub const KEY: (&str, &str) = ("WYCKOFF_KEY_MOCK", "sk-bot-e2e-123456");
/// The app's tools that write, asking or not (chart notes): a bot's model must not be
/// offered them.
pub const WRITERS: [&str; 5] = [
    "update_portfolio",
    "record_fill",
    "write_file",
    "exec_command",
    "annotate_chart",
];

// ---------------------------------------------------------------- HTTP

/// One request read off a socket: its target (path and query), head and body.
pub struct HttpRequest {
    pub path: String,
    pub head: String,
    pub raw: Vec<u8>,
    /// The body as JSON, or `Null` when it is not JSON.
    pub body: Value,
}

impl HttpRequest {
    /// A header's value, by a case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

pub async fn read_http(socket: &mut TcpStream) -> Option<HttpRequest> {
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
    let raw = buf[header_end..header_end + length].to_vec();
    let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    Some(HttpRequest {
        path,
        head,
        raw,
        body,
    })
}

/// A request's target and JSON body.
pub async fn read_request(socket: &mut TcpStream) -> Option<(String, Value)> {
    read_http(socket).await.map(|r| (r.path, r.body))
}

/// The parts of a multipart/form-data body: (name, filename, content type, bytes).
pub fn form_parts(content_type: &str, body: &[u8]) -> Vec<(String, String, String, Vec<u8>)> {
    let boundary = content_type
        .split("boundary=")
        .nth(1)
        .unwrap_or_else(|| panic!("no boundary in {content_type}"))
        .trim_matches('"');
    let delimiter = format!("--{boundary}");
    let d = delimiter.as_bytes();
    let mut starts: Vec<usize> = body
        .windows(d.len())
        .enumerate()
        .filter(|(_, w)| *w == d)
        .map(|(i, _)| i)
        .collect();
    assert!(starts.len() >= 2, "no parts in the form");
    let mut parts = Vec::new();
    let last = starts.pop().unwrap();
    assert_eq!(
        &body[last + d.len()..last + d.len() + 2],
        b"--",
        "unclosed form"
    );
    starts.push(last);
    for w in starts.windows(2) {
        let part = &body[w[0] + d.len()..w[1]];
        let part = part
            .strip_prefix(b"\r\n")
            .expect("a part starts on a new line");
        let part = part.strip_suffix(b"\r\n").expect("a part ends with CRLF");
        let split = part.windows(4).position(|x| x == b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&part[..split]).into_owned();
        let field = |key: &str| {
            head.split(';')
                .find_map(|p| p.trim().strip_prefix(&format!("{key}=\"")))
                .and_then(|v| v.split('"').next())
                .unwrap_or_default()
                .to_owned()
        };
        let ctype = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Type: "))
            .unwrap_or_default()
            .to_owned();
        parts.push((
            field("name"),
            field("filename"),
            ctype,
            part[split + 4..].to_vec(),
        ));
    }
    parts
}

pub async fn respond(socket: &mut TcpStream, status: u16, body: &Value) {
    let body = body.to_string();
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = socket.write_all(head.as_bytes()).await;
    let _ = socket.write_all(body.as_bytes()).await;
    let _ = socket.shutdown().await;
}

// ---------------------------------------------------------------- the fake Bot API

/// One `sendPhoto` as received: the form's parts by name.
#[derive(Debug, Clone)]
pub struct Photo {
    pub chat_id: String,
    pub caption: String,
    pub file_name: String,
    pub content_type: String,
    pub bytes: Vec<u8>,
}

#[derive(Default)]
pub struct TgState {
    /// Every update ever queued, in order (Telegram keeps them until an offset confirms).
    pub updates: Vec<Value>,
    /// sendMessage calls: (chat id, text).
    pub sent: Vec<(i64, String)>,
    /// sendPhoto calls.
    pub photos: Vec<Photo>,
    /// Every method called with the bot's token, in order.
    pub calls: Vec<String>,
    /// When each getUpdates arrived, and whether it was dropped.
    pub polls: Vec<(Instant, bool)>,
    /// getUpdates calls answered.
    pub answered: usize,
    /// getUpdates calls being answered now, and the most there ever were at once.
    pub in_flight: usize,
    pub max_in_flight: usize,
    /// The next getUpdates calls to drop without an answer.
    pub drop_next: usize,
    /// The next getUpdates answers every update again, ignoring its offset.
    pub redeliver: bool,
    /// Requests whose path did not carry the right token.
    pub bad_token: usize,
    /// Refuse a Markdown `sendMessage` with an odd number of `_` as Telegram does (400,
    /// "can't parse entities"); how many were refused.
    pub strict_markdown: bool,
    pub refused_markdown: usize,
}

#[derive(Clone)]
pub struct FakeTelegram {
    pub url: String,
    pub token: String,
    pub state: Arc<Mutex<TgState>>,
}

impl FakeTelegram {
    /// A Bot API that knows one bot, `token`.
    pub async fn start(token: &str) -> FakeTelegram {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let fake = FakeTelegram {
            url,
            token: token.to_owned(),
            state: Arc::new(Mutex::new(TgState::default())),
        };
        let f = fake.clone();
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let f = f.clone();
                tokio::spawn(async move { f.serve(socket).await });
            }
        });
        fake
    }

    pub fn message(&self, from: i64, chat: i64, kind: &str, text: &str) -> i64 {
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

    pub fn sent_to(&self, chat: i64) -> Vec<String> {
        let s = self.state.lock().unwrap();
        s.sent
            .iter()
            .filter(|(c, _)| *c == chat)
            .map(|(_, t)| t.clone())
            .collect()
    }

    /// Waits until `chat` has received `n` messages; they all.
    pub async fn wait_sent(&self, chat: i64, n: usize) -> Vec<String> {
        let what = format!("chat {chat}'s messages");
        wyckoff_e2e::wait_for_count(
            &what,
            n,
            Duration::from_secs(60),
            Duration::from_millis(50),
            || self.sent_to(chat),
        )
        .await
    }

    /// Waits until `n` photos have been sent (to any chat); they all.
    pub async fn wait_photos(&self, n: usize) -> Vec<Photo> {
        wyckoff_e2e::wait_for_count(
            "photos",
            n,
            Duration::from_secs(60),
            Duration::from_millis(50),
            || self.state.lock().unwrap().photos.clone(),
        )
        .await
    }

    /// Pairs sender `from` (chat `chat`): a message, the code, `wyckoff bot pair CODE`.
    pub async fn pair(&self, home: &Path, env: &[(&str, &str)], from: i64, chat: i64, kind: &str) {
        let before = self.sent_to(chat).len();
        self.message(from, chat, kind, "你好");
        let sent = self.wait_sent(chat, before + 1).await;
        let code = code_in(sent.last().unwrap());
        ok(home, env, &["bot", "pair", &code]).await;
    }

    async fn serve(&self, mut socket: TcpStream) {
        let Some(request) = read_http(&mut socket).await else {
            return;
        };
        let body = &request.body;
        let state = &self.state;
        let prefix = format!("/bot{}/", self.token);
        let Some(method) = request.path.strip_prefix(&prefix) else {
            state.lock().unwrap().bad_token += 1;
            let body = json!({"ok": false, "error_code": 401, "description": "Unauthorized"});
            respond(&mut socket, 401, &body).await;
            return;
        };
        state.lock().unwrap().calls.push(method.to_owned());
        let answer = match method {
            "getUpdates" => {
                let offset = body["offset"].as_i64().unwrap_or(0);
                let dropped = {
                    let mut s = state.lock().unwrap();
                    let drop = s.drop_next > 0;
                    if drop {
                        s.drop_next -= 1;
                    } else {
                        s.in_flight += 1;
                        s.max_in_flight = s.max_in_flight.max(s.in_flight);
                    }
                    s.polls.push((Instant::now(), drop));
                    drop
                };
                if dropped {
                    // The connection goes away with no answer at all.
                    return;
                }
                // A long poll: hold an empty answer a little, as the real API holds it.
                let deadline = Instant::now() + Duration::from_millis(300);
                loop {
                    let ready: Vec<Value> = {
                        let mut s = state.lock().unwrap();
                        let all = std::mem::take(&mut s.redeliver);
                        s.updates
                            .iter()
                            .filter(|u| all || u["update_id"].as_i64().unwrap() >= offset)
                            .cloned()
                            .collect()
                    };
                    if !ready.is_empty() || Instant::now() >= deadline {
                        let mut s = state.lock().unwrap();
                        s.in_flight -= 1;
                        s.answered += 1;
                        break json!({"ok": true, "result": ready});
                    }
                    tokio::time::sleep(Duration::from_millis(30)).await;
                }
            }
            "sendMessage" => {
                let chat = body["chat_id"].as_i64().unwrap();
                let text = body["text"].as_str().unwrap().to_owned();
                let refused = {
                    let mut s = state.lock().unwrap();
                    let refuse = s.strict_markdown
                        && body["parse_mode"] == "Markdown"
                        && !text.matches('_').count().is_multiple_of(2);
                    s.refused_markdown += usize::from(refuse);
                    refuse
                };
                if refused {
                    let refusal = json!({"ok": false, "error_code": 400, "description": "Bad Request: can't parse entities: Can't find end of the entity"});
                    respond(&mut socket, 400, &refusal).await;
                    return;
                }
                let mut s = state.lock().unwrap();
                s.sent.push((chat, text.clone()));
                json!({"ok": true, "result": {"message_id": s.sent.len(), "chat": {"id": chat, "type": "private"}, "date": 0, "text": text}})
            }
            "sendPhoto" => {
                let content_type = request.header("content-type").unwrap_or_default();
                assert!(
                    content_type.starts_with("multipart/form-data"),
                    "sendPhoto as {content_type}"
                );
                let parts = form_parts(content_type, &request.raw);
                let text = |name: &str| {
                    parts
                        .iter()
                        .find(|p| p.0 == name)
                        .map(|p| String::from_utf8(p.3.clone()).unwrap())
                        .unwrap_or_default()
                };
                let file = parts.iter().find(|p| p.0 == "photo").expect("a photo part");
                let photo = Photo {
                    chat_id: text("chat_id"),
                    caption: text("caption"),
                    file_name: file.1.clone(),
                    content_type: file.2.clone(),
                    bytes: file.3.clone(),
                };
                state.lock().unwrap().photos.push(photo);
                json!({"ok": true, "result": {"message_id": 2, "chat": {"id": 0, "type": "private"}, "date": 0, "photo": []}})
            }
            "sendChatAction" => json!({"ok": true, "result": true}),
            "getMe" => {
                json!({"ok": true, "result": {"id": 987_654_321, "is_bot": true, "first_name": "Desk", "username": "wyckoff_desk_bot"}})
            }
            _ => json!({"ok": false, "error_code": 404, "description": "Not Found"}),
        };
        respond(&mut socket, 200, &answer).await;
    }
}

// ---------------------------------------------------------------- the binary

/// `wyckoff ARGS` over `home` with `env` set (the model key, the bot's secret).
pub async fn wyckoff(home: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = wyckoff_cli(home);
    cmd.args(args).envs(env.iter().copied());
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

/// As [`wyckoff`], asserting success; its standard output.
pub async fn ok(home: &Path, env: &[(&str, &str)], args: &[&str]) -> String {
    let out = wyckoff(home, env, args).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        wyckoff_e2e::show(&out)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `wyckoff bot run` in the background, short polls and a 200 ms first retry; killed
/// when dropped.
pub struct Running(pub Child);

impl Running {
    pub fn start(home: &Path, env: &[(&str, &str)]) -> Running {
        Running::start_logging(home, env, None)
    }

    /// As [`Running::start`], its standard error written to `log` when given.
    pub fn start_logging(home: &Path, env: &[(&str, &str)], log: Option<&Path>) -> Running {
        let stderr = match log {
            Some(path) => Stdio::from(std::fs::File::create(path).unwrap()),
            None => Stdio::null(),
        };
        let child = wyckoff_cli(home)
            .args(["bot", "run", "--poll-timeout", "1", "--retry-ms", "200"])
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(stderr)
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

/// A data home using the mock model vendor, with the bot `name` of `kind` added against
/// `api_url` (and `extra` arguments to `bot add`).
pub async fn setup_bot(
    env: &[(&str, &str)],
    name: &str,
    kind: &str,
    api_url: &str,
    extra: &[&str],
) -> (tempfile::TempDir, MockServer) {
    let server = MockServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    wyckoff_e2e::webdriver::mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let mut args = vec!["bot", "add", name, "--kind", kind, "--api-url", api_url];
    args.extend_from_slice(extra);
    ok(home.path(), env, &args).await;
    (home, server)
}

/// The pairing code in the bot's answer to an unknown sender.
pub fn code_in(text: &str) -> String {
    let after = text
        .split("配对码：")
        .nth(1)
        .unwrap_or_else(|| panic!("no code: {text}"));
    after.chars().take(8).collect()
}

/// The approval request's id and one-time code in the bot's ask.
pub fn request_in(ask: &str) -> (String, String) {
    let after = ask
        .split("/approve ")
        .nth(1)
        .unwrap_or_else(|| panic!("no approval request: {ask}"));
    let mut words = after.split_whitespace();
    let id = words.next().unwrap().to_owned();
    let code: String = words.next().unwrap().chars().take(6).collect();
    (id, code)
}

/// The tools a model request offered.
pub fn offered(request: &wyckoff_mock_vendor::RecordedRequest) -> BTreeSet<String> {
    request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
        .collect()
}

/// `secret` is in no database file of the data home nor in the bot and approval logs;
/// nor is `part`, a distinctive piece of it.
pub async fn assert_no_secret(home: &Path, env: &[(&str, &str)], secret: &str, part: &str) {
    for entry in std::fs::read_dir(home).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("wyckoff.db") {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "the bot's secret is stored in {name}"
            );
        }
    }
    for args in [["bot", "log", "--json"], ["approvals", "log", "--json"]] {
        let out = ok(home, env, &args).await;
        assert!(!out.contains(secret), "{args:?} shows the secret");
        assert!(!out.contains(part), "{args:?} shows part of the secret");
    }
}

/// Accepts a WebSocket on `socket` with the request target the client asked for (the fake
/// servers read their connection ticket from it); `None` when the handshake fails.
// The handshake callback's error type is tungstenite's own (an HTTP response).
#[allow(clippy::result_large_err)]
pub async fn accept_websocket(
    socket: tokio::net::TcpStream,
) -> Option<(
    tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>,
    String,
)> {
    use std::sync::{Arc, Mutex};
    use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
    let uri = Arc::new(Mutex::new(String::new()));
    let seen = uri.clone();
    let callback = move |req: &Request, resp: Response| {
        *seen.lock().unwrap() = req.uri().to_string();
        Ok(resp)
    };
    let ws = tokio_tungstenite::accept_hdr_async(socket, callback)
        .await
        .ok()?;
    let uri = uri.lock().unwrap().clone();
    Some((ws, uri))
}
