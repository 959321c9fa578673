//! A local fake of WeCom 智能机器人's long connection for the WeCom bot end-to-end tests,
//! speaking the frames of WeCom's documentation and official SDK: the client subscribes
//! with `{"cmd":"aibot_subscribe","headers":{"req_id"},"body":{"bot_id","secret"}}` and
//! every request (pings too, unless muted) is answered with `{"headers":{"req_id"},"errcode","errmsg"}`;
//! a message goes out as `aibot_msg_callback` (`msgid`, `chattype`, `from.userid`,
//! `text.content`); every frame the client sends is recorded, with when. Included with
//! `#[path]` beside `support/bots.rs` (as `bots`).
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;

pub const BOT_ID: &str = "aibWecomE2E01";
pub const SECRET: &str = "WeCom-SECRET-e2e-fedcba9876543210";
/// The bot's secret as `wyckoff bot secret` takes it: `BOT_ID:SECRET`.
pub const TOKEN: &str = "aibWecomE2E01:WeCom-SECRET-e2e-fedcba9876543210";
pub const TOKEN_VAR: &str = "WYCKOFF_BOT_TOKEN_WC";
/// The environment of every `wyckoff` the tests run: the model's key and the secret.
pub const ENV: [(&str, &str); 2] = [crate::bots::KEY, (TOKEN_VAR, TOKEN)];

// ---------------------------------------------------------------- the fake WeCom

#[derive(Default)]
pub struct WcState {
    /// Callbacks to send: the frame, and whether some connection sent it.
    pub callbacks: Vec<(Value, bool)>,
    /// Every frame the client sent, in order.
    pub received: Vec<Value>,
    /// Connections accepted (a subscription asked), with when.
    pub connections: Vec<Instant>,
    /// Subscriptions refused for a wrong bot id or secret.
    pub bad_secret: usize,
    /// The next connections to refuse at the WebSocket handshake.
    pub refuse: usize,
    /// Refused handshakes, with when.
    pub refused: Vec<Instant>,
    /// The connection with this number goes away (no close frame).
    pub drop_connection: Option<usize>,
    pub dropped_at: Option<Instant>,
    /// The next connection sends every callback again, sent before or not.
    pub redeliver: bool,
    /// Pings the client sent: the connection's number (from 1), when, the frame.
    pub pings: Vec<(usize, Instant, Value)>,
    /// Pings go unanswered (recorded all the same), as on a connection gone silent.
    pub mute_pings: bool,
}

#[derive(Clone)]
pub struct FakeWecom {
    pub url: String,
    pub state: Arc<Mutex<WcState>>,
}

impl FakeWecom {
    pub async fn start() -> FakeWecom {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}", listener.local_addr().unwrap());
        let fake = FakeWecom {
            url,
            state: Arc::new(Mutex::new(WcState::default())),
        };
        let f = fake.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let f = f.clone();
                tokio::spawn(async move { f.serve(socket).await });
            }
        });
        fake
    }

    /// Queues a text message from `user` (a group's `chatid` for a group message); the
    /// callback's req_id.
    pub fn message(&self, user: &str, group: Option<&str>, text: &str) -> String {
        let n = self.state.lock().unwrap().callbacks.len();
        self.message_with_id(user, group, text, &format!("msg{n:04}"))
    }

    pub fn message_with_id(
        &self,
        user: &str,
        group: Option<&str>,
        text: &str,
        msgid: &str,
    ) -> String {
        let mut s = self.state.lock().unwrap();
        let req_id = format!("cb-{:04}", s.callbacks.len());
        let mut body = json!({
            "msgid": msgid,
            "aibotid": BOT_ID,
            "chattype": if group.is_some() { "group" } else { "single" },
            "from": {"userid": user},
            "create_time": 1_765_000_000,
            "msgtype": "text",
            "text": {"content": text},
        });
        if let Some(group) = group {
            body["chatid"] = json!(group);
        }
        s.callbacks.push((
            json!({"cmd": "aibot_msg_callback", "headers": {"req_id": req_id}, "body": body}),
            false,
        ));
        req_id
    }

    /// The chat's callbacks' req_ids (a group by its chatid, a single chat by its user).
    pub fn callbacks_of(&self, chat: &str) -> Vec<String> {
        let s = self.state.lock().unwrap();
        s.callbacks
            .iter()
            .filter(|(f, _)| {
                let b = &f["body"];
                b["chatid"] == chat || (b["chattype"] == "single" && b["from"]["userid"] == chat)
            })
            .map(|(f, _)| f["headers"]["req_id"].as_str().unwrap().to_owned())
            .collect()
    }

    /// What the chat was shown, in order: each answer's finished stream content and each
    /// message pushed to the chat.
    pub fn said_to(&self, chat: &str) -> Vec<String> {
        let callbacks = self.callbacks_of(chat);
        let s = self.state.lock().unwrap();
        s.received
            .iter()
            .filter_map(|f| match f["cmd"].as_str()? {
                "aibot_respond_msg"
                    if callbacks
                        .iter()
                        .any(|c| f["headers"]["req_id"] == c.as_str())
                        && f["body"]["stream"]["finish"] == true =>
                {
                    Some(f["body"]["stream"]["content"].as_str()?.to_owned())
                }
                "aibot_send_msg" if f["body"]["chatid"] == chat => {
                    assert_eq!(f["body"]["msgtype"], "markdown", "{f}");
                    Some(f["body"]["markdown"]["content"].as_str()?.to_owned())
                }
                _ => None,
            })
            .collect()
    }

    pub async fn wait_said(&self, chat: &str, n: usize) -> Vec<String> {
        let what = format!("what {chat} was told");
        wyckoff_e2e::wait_for_count(
            &what,
            n,
            Duration::from_secs(60),
            Duration::from_millis(50),
            || self.said_to(chat),
        )
        .await
    }

    pub fn received(&self, cmd: &str) -> Vec<Value> {
        let s = self.state.lock().unwrap();
        s.received
            .iter()
            .filter(|f| f["cmd"] == cmd)
            .cloned()
            .collect()
    }

    async fn serve(&self, socket: TcpStream) {
        {
            let mut s = self.state.lock().unwrap();
            if s.refuse > 0 {
                // Down: the connection is closed before any handshake.
                s.refuse -= 1;
                s.refused.push(Instant::now());
                return;
            }
        }
        let Ok(ws) = tokio_tungstenite::accept_async(socket).await else {
            return;
        };
        let (mut sink, mut stream) = ws.split();
        // The subscription first.
        let Some(Ok(Message::Text(first))) = stream.next().await else {
            return;
        };
        let first: Value = serde_json::from_str(&first).unwrap();
        assert_eq!(first["cmd"], "aibot_subscribe", "{first}");
        let req_id = first["headers"]["req_id"].clone();
        assert!(req_id.as_str().is_some_and(|r| !r.is_empty()), "{first}");
        let good = first["body"]["bot_id"] == BOT_ID && first["body"]["secret"] == SECRET;
        let (number, redeliver) = {
            let mut s = self.state.lock().unwrap();
            s.received.push(first.clone());
            if !good {
                s.bad_secret += 1;
            } else {
                s.connections.push(Instant::now());
            }
            (s.connections.len(), std::mem::take(&mut s.redeliver))
        };
        let answer = if good {
            json!({"headers": {"req_id": req_id}, "errcode": 0, "errmsg": "ok"})
        } else {
            json!({"headers": {"req_id": req_id}, "errcode": 40058, "errmsg": "invalid bot_id or secret"})
        };
        if sink.send(Message::text(answer.to_string())).await.is_err() || !good {
            return;
        }
        let mut sent: Vec<usize> = Vec::new();
        loop {
            tokio::select! {
                msg = stream.next() => match msg {
                    Some(Ok(Message::Text(text))) => {
                        let frame: Value = serde_json::from_str(&text).unwrap();
                        let req_id = frame["headers"]["req_id"].clone();
                        assert!(req_id.as_str().is_some_and(|r| !r.is_empty()), "{frame}");
                        let answer = {
                            let mut s = self.state.lock().unwrap();
                            let ping = frame["cmd"] == "ping";
                            if ping {
                                s.pings.push((number, Instant::now(), frame.clone()));
                            }
                            s.received.push(frame);
                            !(ping && s.mute_pings)
                        };
                        if !answer {
                            continue;
                        }
                        let ack = json!({"headers": {"req_id": req_id}, "errcode": 0, "errmsg": "ok"});
                        if sink.send(Message::text(ack.to_string())).await.is_err() {
                            return;
                        }
                    }
                    Some(Ok(_)) => {}
                    _ => return,
                },
                () = tokio::time::sleep(Duration::from_millis(20)) => {
                    let due: Vec<(usize, String)> = {
                        let mut s = self.state.lock().unwrap();
                        if s.drop_connection == Some(number) {
                            // Gone without a close frame, as a network drop is.
                            s.dropped_at = Some(Instant::now());
                            return;
                        }
                        let due: Vec<(usize, String)> = s
                            .callbacks
                            .iter()
                            .enumerate()
                            .filter(|(i, (_, was_sent))| !sent.contains(i) && (!was_sent || redeliver))
                            .map(|(i, (f, _))| (i, f.to_string()))
                            .collect();
                        for (i, _) in &due {
                            s.callbacks[*i].1 = true;
                        }
                        due
                    };
                    for (i, frame) in due {
                        sent.push(i);
                        if sink.send(Message::text(frame)).await.is_err() {
                            return;
                        }
                    }
                }
            }
        }
    }
}
