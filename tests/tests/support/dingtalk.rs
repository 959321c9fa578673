//! A local fake DingTalk Stream for the DingTalk bot end-to-end tests: `POST
//! /v1.0/gateway/connections/open` checks the client id and secret and hands out a
//! WebSocket endpoint with a one-time ticket; the socket sends frames `{specVersion, type,
//! headers{topic, messageId, ...}, data}` and records the ACK `{code, headers{contentType,
//! messageId}, message, data}` the client sends for each; a robot message
//! (`/v1.0/im/bot/messages/get`) carries its chat's `sessionWebhook`, where answers are
//! POSTed and recorded. Included with `#[path]` beside `support/bots.rs` (as `bots`).
#![allow(dead_code)]

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;

use crate::bots::{read_request, respond};

pub const CLIENT_ID: &str = "dingbote2e7";
pub const CLIENT_SECRET: &str = "Ding-SECRET-e2e-0123456789abcdef";
pub const TOKEN_VAR: &str = "WYCKOFF_BOT_TOKEN_DT";
pub const ROBOT_TOPIC: &str = "/v1.0/im/bot/messages/get";

/// The bot's secret as `wyckoff bot secret` takes it.
pub const TOKEN: &str = "dingbote2e7:Ding-SECRET-e2e-0123456789abcdef";
/// The environment of every `wyckoff` the tests run: the model's key and the secret.
pub const ENV: [(&str, &str); 2] = [crate::bots::KEY, (TOKEN_VAR, TOKEN)];

#[derive(Default)]
pub struct DtState {
    /// Frames the server has to send, with whether the client acknowledged each.
    pub frames: Vec<(Value, bool)>,
    /// Every ACK the client sent.
    pub acks: Vec<Value>,
    /// connections/open calls: when, and whether they were refused with a 503.
    pub opens: Vec<(Instant, bool)>,
    /// The next connections/open calls to refuse with a 503.
    pub fail_opens: usize,
    /// Tickets handed out and not yet used.
    pub tickets: HashSet<String>,
    /// Sockets opened with a ticket the server never gave (or gave and saw used).
    pub bad_tickets: usize,
    /// Sockets accepted.
    pub sockets: usize,
    /// The socket with this number goes away (no close frame).
    pub drop_socket: Option<usize>,
    pub dropped_at: Option<Instant>,
    /// A new socket sends every frame again, acknowledged or not.
    pub redeliver: bool,
    /// Webhook posts: (conversation id, body).
    pub posts: Vec<(String, Value)>,
    /// Requests with the wrong client id or secret.
    pub bad_secret: usize,
}

#[derive(Clone)]
pub struct FakeDingtalk {
    pub url: String,
    pub ws_url: String,
    pub state: Arc<Mutex<DtState>>,
}

impl FakeDingtalk {
    pub async fn start() -> FakeDingtalk {
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
    pub fn message(&self, staff: &str, cid: &str, kind: &str, text: &str) -> String {
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
            // Valid long after any test runs: the desk skips an expired webhook.
            "sessionWebhookExpiredTime": 4_102_444_800_000_i64,
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

    pub fn system(&self, topic: &str, data: &str) -> String {
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

    pub fn posts_to(&self, cid: &str) -> Vec<Value> {
        let s = self.state.lock().unwrap();
        s.posts
            .iter()
            .filter(|(c, _)| c == cid)
            .map(|(_, b)| b.clone())
            .collect()
    }

    pub async fn wait_posts(&self, cid: &str, n: usize) -> Vec<Value> {
        let what = format!("{cid}'s posts");
        wyckoff_e2e::wait_for_count(
            &what,
            n,
            Duration::from_secs(60),
            Duration::from_millis(50),
            || self.posts_to(cid),
        )
        .await
    }

    pub fn ack_of(&self, message_id: &str) -> Option<Value> {
        let s = self.state.lock().unwrap();
        s.acks
            .iter()
            .find(|a| a["headers"]["messageId"] == message_id)
            .cloned()
    }

    pub async fn wait_acks(&self, message_id: &str, n: usize) {
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

    async fn serve_socket(&self, socket: TcpStream) {
        let Some((ws, uri)) = crate::bots::accept_websocket(socket).await else {
            return;
        };
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
