//! Feishu (Lark) over its long connection (事件订阅 · 长连接), as the official SDKs speak
//! it: `POST {base}/callback/ws/endpoint` with `{AppID, AppSecret}` gives a WebSocket URL
//! (its query names the `service_id` pings carry) and a `ClientConfig` (reconnect count
//! and interval, ping interval, in seconds). On the socket every message is a binary
//! protobuf `pbbp2.Frame`; `method` 0 is control (`type` header `ping`/`pong`, a pong's
//! payload an updated `ClientConfig`), 1 data (`type` `event`, headers `message_id`,
//! `trace_id`, `sum`/`seq` for a payload split in parts). A data frame is answered with
//! the same frame, a `biz_rt` header added and payload `{"code":200}`, or Feishu delivers
//! it again. An event's payload is the event JSON (schema 2.0; `im.message.receive_v1`
//! for a message to the bot). Answers go out through the IM API with a tenant access
//! token (`/open-apis/auth/v3/tenant_access_token/internal`): Markdown as an interactive
//! card with one `markdown` element, plain text as a `text` message. The secret travels in
//! request bodies only, so no error of this client carries it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use prost::Message as _;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::format::{FEISHU_LIMIT, split_bytes};
use crate::open_api::{AppCredentials, HttpError, TokenCache, http_client, send_json};
use crate::serve::Reply;
use crate::ws_connect::WsConnectError;

pub const PUBLIC_API: &str = "https://open.feishu.cn";
/// The event of a message sent to the bot.
pub const MESSAGE_EVENT: &str = "im.message.receive_v1";
/// `method` of a control frame and of a data frame.
pub const CONTROL: i32 = 0;
pub const DATA: i32 = 1;
/// The IM API's answers for a tenant token that expired or is not valid any more.
const TOKEN_EXPIRED: [i64; 2] = [99_991_663, 99_991_661];

pub use crate::ws_connect::Socket;

// ---------------------------------------------------------------- the frame

/// `pbbp2.Header`: both fields required (proto2).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Header {
    #[prost(string, required, tag = "1")]
    pub key: String,
    #[prost(string, required, tag = "2")]
    pub value: String,
}

/// `pbbp2.Frame` (proto2): the four numbers are required, so they are written even when
/// zero (a frame without them does not parse at the other end).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Frame {
    #[prost(uint64, required, tag = "1")]
    pub seq_id: u64,
    #[prost(uint64, required, tag = "2")]
    pub log_id: u64,
    #[prost(int32, required, tag = "3")]
    pub service: i32,
    #[prost(int32, required, tag = "4")]
    pub method: i32,
    #[prost(message, repeated, tag = "5")]
    pub headers: Vec<Header>,
    #[prost(string, optional, tag = "6")]
    pub payload_encoding: Option<String>,
    #[prost(string, optional, tag = "7")]
    pub payload_type: Option<String>,
    #[prost(bytes = "vec", optional, tag = "8")]
    pub payload: Option<Vec<u8>>,
    #[prost(string, optional, tag = "9")]
    pub log_id_new: Option<String>,
}

impl Frame {
    pub fn header(&self, key: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|h| h.key == key)
            .map(|h| h.value.as_str())
    }

    pub fn decode_bytes(bytes: &[u8]) -> Result<Frame, FeishuError> {
        Frame::decode(bytes).map_err(|e| FeishuError::Decode(format!("frame: {e}")))
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        self.encode_to_vec()
    }

    /// The ping a client sends every `PingInterval`, on the connection's service.
    pub fn ping(service: i32) -> Frame {
        Frame {
            service,
            method: CONTROL,
            headers: vec![Header {
                key: "type".into(),
                value: "ping".into(),
            }],
            ..Frame::default()
        }
    }

    /// The answer to a data frame: the frame itself with `biz_rt` (how long handling
    /// took, in ms) and payload `{"code":200}`, so Feishu does not deliver it again.
    pub fn response(&self, biz_rt_ms: u128) -> Frame {
        let mut frame = self.clone();
        frame.headers.push(Header {
            key: "biz_rt".into(),
            value: biz_rt_ms.to_string(),
        });
        frame.payload = Some(json!({"code": 200}).to_string().into_bytes());
        frame
    }
}

/// What the server tells the client about reconnecting and pinging (seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct ClientConfig {
    #[serde(rename = "ReconnectCount", default)]
    pub reconnect_count: Option<i64>,
    #[serde(rename = "ReconnectInterval", default)]
    pub reconnect_interval: Option<u64>,
    #[serde(rename = "ReconnectNonce", default)]
    pub reconnect_nonce: Option<u64>,
    #[serde(rename = "PingInterval", default)]
    pub ping_interval: Option<u64>,
}

/// The ping interval when the server names none (the SDKs' default).
pub const DEFAULT_PING: Duration = Duration::from_secs(120);
/// The least and the most of the server's intervals the desk follows: below, it would
/// hammer Feishu; above, a dead socket or a lost connection would go unnoticed for long.
pub const SHORTEST_INTERVAL: Duration = Duration::from_secs(1);
pub const LONGEST_INTERVAL: Duration = Duration::from_secs(600);

impl ClientConfig {
    /// How often to ping, when the server says (`PingInterval`), within the bounds.
    pub fn ping_interval(&self) -> Option<Duration> {
        bounded(self.ping_interval)
    }

    /// The ping interval, the SDKs' default when the server names none.
    pub fn ping_every(&self) -> Duration {
        self.ping_interval().unwrap_or(DEFAULT_PING)
    }

    /// The wait between reconnect attempts the server asks for (`ReconnectInterval`),
    /// within the bounds: the longest the desk's doubling wait grows to. (The SDKs wait
    /// exactly this long after every failed attempt; the desk tries sooner after a first
    /// drop, then settles at it. `ReconnectNonce`, a random delay that spreads many
    /// clients' first attempts, and `ReconnectCount`, after which the SDKs give up, are not
    /// followed: one desk is no crowd, and a bot that gave up would stay deaf until restarted.)
    pub fn reconnect_interval(&self) -> Option<Duration> {
        bounded(self.reconnect_interval)
    }
}

/// Seconds the server named, within [`SHORTEST_INTERVAL`]..=[`LONGEST_INTERVAL`]; zero or
/// unsaid is `None`.
fn bounded(seconds: Option<u64>) -> Option<Duration> {
    seconds
        .filter(|s| *s > 0)
        .map(|s| Duration::from_secs(s).clamp(SHORTEST_INTERVAL, LONGEST_INTERVAL))
}

/// What a frame asks of the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    /// The server's ping: nothing to do.
    Ping,
    /// The answer to a ping, perhaps with new settings.
    Pong(Option<ClientConfig>),
    /// A whole event (its parts joined): answer the frame, then handle the payload.
    Event {
        message_id: String,
        payload: Vec<u8>,
    },
    /// A part of a split event, kept until the rest arrives: answered all the same.
    Part,
    /// A card action or anything else: answered, nothing more.
    Other,
}

/// The parts of split payloads seen so far, by message id; kept a while, then dropped.
#[derive(Default)]
pub struct Parts {
    pending: HashMap<String, Pending>,
}

/// When a split payload's first part came, and the parts so far (by `seq`).
type Pending = (Instant, Vec<Option<Vec<u8>>>);

/// How long a split payload's parts wait for the rest.
const PARTS_KEPT: Duration = Duration::from_secs(10);

impl Parts {
    /// What `frame` asks for; a part completes its payload when it is the last missing.
    pub fn read(&mut self, frame: &Frame, now: Instant) -> Incoming {
        let kind = frame.header("type").unwrap_or_default();
        if frame.method == CONTROL {
            return match kind {
                "ping" => Incoming::Ping,
                "pong" => Incoming::Pong(
                    frame
                        .payload
                        .as_deref()
                        .filter(|p| !p.is_empty())
                        .and_then(|p| serde_json::from_slice(p).ok()),
                ),
                _ => Incoming::Other,
            };
        }
        if kind != "event" {
            return Incoming::Other;
        }
        let message_id = frame.header("message_id").unwrap_or_default().to_owned();
        let payload = frame.payload.clone().unwrap_or_default();
        let sum: usize = frame
            .header("sum")
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        if sum <= 1 {
            return Incoming::Event {
                message_id,
                payload,
            };
        }
        let seq: usize = frame
            .header("seq")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        self.pending
            .retain(|_, (at, _)| now.duration_since(*at) < PARTS_KEPT);
        if seq >= sum || sum > 1024 {
            return Incoming::Other;
        }
        let entry = self
            .pending
            .entry(message_id.clone())
            .or_insert_with(|| (now, vec![None; sum]));
        if entry.1.len() != sum {
            return Incoming::Other;
        }
        entry.1[seq] = Some(payload);
        if entry.1.iter().any(Option::is_none) {
            return Incoming::Part;
        }
        let parts = self
            .pending
            .remove(&message_id)
            .map(|(_, parts)| parts)
            .unwrap_or_default();
        Incoming::Event {
            message_id,
            payload: parts.into_iter().flatten().flatten().collect(),
        }
    }
}

// ---------------------------------------------------------------- the event

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct EventHeader {
    pub event_id: String,
    pub event_type: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct EventEnvelope {
    pub schema: String,
    pub header: EventHeader,
    pub event: Value,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct UserId {
    pub open_id: String,
    pub user_id: Option<String>,
    pub union_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Sender {
    pub sender_id: UserId,
    /// `user` for a person (an app's own messages are `app`).
    pub sender_type: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Mention {
    /// The placeholder in the text, `@_user_1`.
    pub key: String,
    pub name: String,
    pub id: UserId,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct EventMessage {
    pub message_id: String,
    pub chat_id: String,
    /// `p2p` or `group`.
    pub chat_type: String,
    pub message_type: String,
    /// The content, itself JSON in a string (`{"text":"..."}` for text).
    pub content: String,
    /// Absent (or null) when no one is mentioned.
    pub mentions: Option<Vec<Mention>>,
}

/// `im.message.receive_v1`'s event.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct MessageEvent {
    pub sender: Sender,
    pub message: EventMessage,
}

impl MessageEvent {
    /// The sender's open id (unique to the app).
    pub fn sender(&self) -> &str {
        &self.sender.sender_id.open_id
    }

    pub fn is_group(&self) -> bool {
        self.message.chat_type != "p2p"
    }

    /// The text typed: mentions at its start (the bot's, in a group) left out, others as
    /// `@name`; empty for a picture, a file or a rich post.
    pub fn text(&self) -> String {
        if self.message.message_type != "text" {
            return String::new();
        }
        let content: Value = serde_json::from_str(&self.message.content).unwrap_or(Value::Null);
        let mut text = content["text"]
            .as_str()
            .unwrap_or_default()
            .trim()
            .to_owned();
        let mentions = self.message.mentions.as_deref().unwrap_or_default();
        while let Some(m) = mentions
            .iter()
            .find(|m| !m.key.is_empty() && text.starts_with(&m.key))
        {
            text = text[m.key.len()..].trim_start().to_owned();
        }
        for m in mentions.iter().filter(|m| !m.key.is_empty()) {
            text = text.replace(&m.key, &format!("@{}", m.name));
        }
        text.trim().to_owned()
    }
}

/// A message to the bot in an event payload; `None` for any other event.
pub fn message_event(payload: &[u8]) -> Result<Option<MessageEvent>, FeishuError> {
    let envelope: EventEnvelope =
        serde_json::from_slice(payload).map_err(|e| FeishuError::Decode(format!("event: {e}")))?;
    if envelope.header.event_type != MESSAGE_EVENT {
        return Ok(None);
    }
    serde_json::from_value(envelope.event)
        .map(Some)
        .map_err(|e| FeishuError::Decode(format!("{MESSAGE_EVENT}: {e}")))
}

/// The interactive card an answer is sent as: one `markdown` element, which renders
/// bold, lists, links and code.
pub fn markdown_card(text: &str) -> Value {
    json!({
        "config": {"wide_screen_mode": true},
        "elements": [{"tag": "markdown", "content": text}],
    })
}

// ---------------------------------------------------------------- the client

#[derive(Debug, thiserror::Error)]
pub enum FeishuError {
    /// The connection failed or dropped: try again after a while.
    #[error("cannot reach Feishu: {0}")]
    Network(String),
    /// The app id or secret was refused: nothing works until it is fixed.
    #[error(
        "Feishu refused the app's id or secret ({0}): set them again with `wyckoff bot secret NAME` as APP_ID:APP_SECRET"
    )]
    Unauthorized(String),
    #[error(
        "the bot's secret is not APP_ID:APP_SECRET (the app's App ID and App Secret, joined by a colon)"
    )]
    BadSecret,
    #[error("Feishu API error (HTTP {status}) {code}: {message}")]
    Api {
        status: u16,
        code: i64,
        message: String,
    },
    #[error("Feishu's answer was not understood: {0}")]
    Decode(String),
    /// The proxy in Settings cannot carry the long connection's WebSocket.
    #[error("{0}")]
    Proxy(String),
}

impl From<WsConnectError> for FeishuError {
    fn from(e: WsConnectError) -> Self {
        match e {
            WsConnectError::Network(m) => FeishuError::Network(m),
            WsConnectError::BadUrl(m) => FeishuError::Decode(format!("endpoint URL: {m}")),
            e @ WsConnectError::UnsupportedProxy(_) => FeishuError::Proxy(e.to_string()),
        }
    }
}

impl From<HttpError> for FeishuError {
    fn from(e: HttpError) -> Self {
        match e {
            HttpError::Network(m) => FeishuError::Network(m),
            HttpError::Decode(m) => FeishuError::Decode(m),
        }
    }
}

impl FeishuError {
    /// Worth another try after a backoff (the bot keeps serving).
    pub fn is_transient(&self) -> bool {
        match self {
            FeishuError::Network(_) | FeishuError::Decode(_) => true,
            // 1: system busy; 1000040343: the gateway's internal error; 1000040350: too
            // many connections of the app (one ends in a while).
            FeishuError::Api { status, code, .. } => {
                *status >= 500
                    || *status == 429
                    || matches!(code, 1 | 1_000_040_343 | 1_000_040_350)
            }
            FeishuError::Unauthorized(_) | FeishuError::BadSecret | FeishuError::Proxy(_) => false,
        }
    }
}

/// Where the long connection goes, and how to keep it.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub url: String,
    pub config: ClientConfig,
    /// The `service_id` of the URL's query: the service of every ping.
    pub service: i32,
}

#[derive(Clone)]
pub struct FeishuClient {
    http: reqwest::Client,
    base: String,
    app: AppCredentials,
    /// The tenant access token.
    token: Arc<TokenCache>,
    /// The proxy from Settings, for the WebSocket (the HTTP client has its own).
    proxy: Option<String>,
}

impl FeishuClient {
    /// A client for the app whose `secret` is `APP_ID:APP_SECRET`, at `api_url` (the
    /// public open platform when `None`), its HTTP calls and its WebSocket through
    /// `proxy` when one is set.
    pub fn new(
        api_url: Option<&str>,
        secret: &str,
        proxy: Option<&str>,
    ) -> Result<FeishuClient, FeishuError> {
        let app = AppCredentials::parse(secret).ok_or(FeishuError::BadSecret)?;
        let http = http_client(proxy)?;
        Ok(FeishuClient {
            http,
            base: api_url
                .unwrap_or(PUBLIC_API)
                .trim_end_matches('/')
                .to_owned(),
            app,
            token: Arc::default(),
            proxy: proxy.filter(|p| !p.trim().is_empty()).map(str::to_owned),
        })
    }

    pub fn app_id(&self) -> &str {
        &self.app.id
    }

    async fn post(
        &self,
        path: &str,
        bearer: Option<&str>,
        body: &Value,
    ) -> Result<(u16, Value), FeishuError> {
        let mut request = self
            .http
            .post(format!("{}{path}", self.base))
            .header("locale", "zh")
            .json(body);
        if let Some(token) = bearer {
            request = request.bearer_auth(token);
        }
        Ok(send_json(request, path_only(path)).await?)
    }

    /// The tenant access token, asked for again 5 minutes before it expires.
    pub async fn tenant_token(&self) -> Result<String, FeishuError> {
        self.token.get(|| self.new_tenant_token()).await
    }

    /// `/open-apis/auth/v3/tenant_access_token/internal`: a token and how long it lasts.
    async fn new_tenant_token(&self) -> Result<(String, Duration), FeishuError> {
        let (status, value) = self
            .post(
                "/open-apis/auth/v3/tenant_access_token/internal",
                None,
                &json!({"app_id": self.app.id, "app_secret": self.app.secret}),
            )
            .await?;
        let code = value["code"].as_i64().unwrap_or(-1);
        if code != 0 || !(200..300).contains(&status) {
            let message = value["msg"].as_str().unwrap_or("no message");
            if status >= 500 {
                return Err(FeishuError::Api {
                    status,
                    code,
                    message: message.to_owned(),
                });
            }
            return Err(FeishuError::Unauthorized(format!("{code}: {message}")));
        }
        let token = value["tenant_access_token"]
            .as_str()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| FeishuError::Decode("no tenant_access_token".into()))?
            .to_owned();
        let lasts = Duration::from_secs(value["expire"].as_u64().unwrap_or(7200));
        Ok((token, lasts))
    }

    /// Asks for a long connection: its URL and settings (checks the credentials).
    pub async fn endpoint(&self) -> Result<Endpoint, FeishuError> {
        let (status, value) = self
            .post(
                "/callback/ws/endpoint",
                None,
                &json!({"AppID": self.app.id, "AppSecret": self.app.secret}),
            )
            .await?;
        let code = value["code"].as_i64().unwrap_or(-1);
        let message = value["msg"].as_str().unwrap_or("no message").to_owned();
        if !(200..300).contains(&status) || code != 0 {
            // 403 forbidden and 514 auth failed are the app's credentials.
            if status == 401 || matches!(code, 403 | 514) {
                return Err(FeishuError::Unauthorized(format!("{code}: {message}")));
            }
            return Err(FeishuError::Api {
                status,
                code,
                message,
            });
        }
        let data = &value["data"];
        let url = data["URL"]
            .as_str()
            .filter(|u| !u.is_empty())
            .ok_or_else(|| FeishuError::Decode("the endpoint has no URL".into()))?
            .to_owned();
        let config = if data["ClientConfig"].is_object() {
            serde_json::from_value(data["ClientConfig"].clone())
                .map_err(|e| FeishuError::Decode(format!("ClientConfig: {e}")))?
        } else {
            ClientConfig {
                reconnect_count: None,
                reconnect_interval: None,
                reconnect_nonce: None,
                ping_interval: None,
            }
        };
        let parsed = reqwest::Url::parse(&url)
            .map_err(|e| FeishuError::Decode(format!("endpoint URL: {e}")))?;
        let service = parsed
            .query_pairs()
            .find(|(k, _)| k == "service_id")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        Ok(Endpoint {
            url,
            config,
            service,
        })
    }

    /// Opens the endpoint's WebSocket, through the proxy from Settings when one is set
    /// (as the HTTP calls go). Its URL carries a one-time ticket: errors say what went
    /// wrong, never the URL.
    pub async fn connect(&self, endpoint: &Endpoint) -> Result<Socket, FeishuError> {
        Ok(crate::ws_connect::connect(&endpoint.url, self.proxy.as_deref()).await?)
    }

    /// The bot's name as Feishu shows it (`/open-apis/bot/v3/info`).
    pub async fn bot_name(&self) -> Result<String, FeishuError> {
        let token = self.tenant_token().await?;
        let request = self
            .http
            .get(format!("{}/open-apis/bot/v3/info", self.base))
            .bearer_auth(&token);
        let (status, value) = send_json(request, "bot info").await?;
        let code = value["code"].as_i64().unwrap_or(-1);
        if code != 0 {
            return Err(FeishuError::Api {
                status,
                code,
                message: value["msg"].as_str().unwrap_or("no message").to_owned(),
            });
        }
        Ok(value["bot"]["app_name"]
            .as_str()
            .filter(|n| !n.is_empty())
            .unwrap_or(&self.app.id)
            .to_owned())
    }

    /// Sends `reply` to chat `chat_id`: Markdown as cards, split to Feishu's limit;
    /// plain text as text messages.
    pub async fn reply(&self, chat_id: &str, reply: &Reply) -> Result<(), FeishuError> {
        let (kind, text) = match reply {
            Reply::Plain(text) => ("text", text),
            Reply::Markdown(text) => ("interactive", text),
        };
        for part in split_bytes(text, FEISHU_LIMIT) {
            let content = if kind == "text" {
                json!({"text": part})
            } else {
                markdown_card(&part)
            };
            self.send_message(chat_id, kind, &content).await?;
        }
        Ok(())
    }

    /// Uploads a PNG for messages (`POST /open-apis/im/v1/images`, `image_type`
    /// `message`): its `image_key`.
    pub async fn upload_image(&self, png: &[u8], file_name: &str) -> Result<String, FeishuError> {
        let token = self.tenant_token().await?;
        let (boundary, body) = image_form(png, file_name);
        let request = self
            .http
            .post(format!("{}/open-apis/im/v1/images", self.base))
            .bearer_auth(&token)
            .header(
                reqwest::header::CONTENT_TYPE,
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(body);
        let (status, value) = send_json(request, "images").await?;
        let code = value["code"].as_i64().unwrap_or(-1);
        match value["data"]["image_key"].as_str() {
            Some(key) if code == 0 && !key.is_empty() => Ok(key.to_owned()),
            _ => Err(FeishuError::Api {
                status,
                code,
                message: value["msg"].as_str().unwrap_or("no image_key").to_owned(),
            }),
        }
    }

    /// A PNG to chat `chat_id`: uploaded, sent as an image message, then its caption as
    /// text (an image message has none).
    pub async fn send_image(
        &self,
        chat_id: &str,
        png: &[u8],
        file_name: &str,
        caption: &str,
    ) -> Result<(), FeishuError> {
        let key = self.upload_image(png, file_name).await?;
        self.send_message(chat_id, "image", &json!({"image_key": key}))
            .await?;
        if !caption.trim().is_empty() {
            self.reply(chat_id, &Reply::Plain(caption.to_owned()))
                .await?;
        }
        Ok(())
    }

    /// `POST /open-apis/im/v1/messages?receive_id_type=chat_id`; a token Feishu says
    /// expired is renewed and the message sent once more.
    pub async fn send_message(
        &self,
        chat_id: &str,
        msg_type: &str,
        content: &Value,
    ) -> Result<(), FeishuError> {
        let body = json!({
            "receive_id": chat_id,
            "msg_type": msg_type,
            "content": content.to_string(),
        });
        for attempt in 0..2 {
            let token = self.tenant_token().await?;
            let (status, value) = self
                .post(
                    "/open-apis/im/v1/messages?receive_id_type=chat_id",
                    Some(&token),
                    &body,
                )
                .await?;
            let code = value["code"].as_i64().unwrap_or(-1);
            if code == 0 && (200..300).contains(&status) {
                return Ok(());
            }
            if attempt == 0 && TOKEN_EXPIRED.contains(&code) {
                self.token.forget().await;
                continue;
            }
            return Err(FeishuError::Api {
                status,
                code,
                message: value["msg"].as_str().unwrap_or("no message").to_owned(),
            });
        }
        Ok(())
    }
}

/// `POST /open-apis/im/v1/images`'s form (RFC 7578): `image_type=message`, then the PNG
/// as the `image` file part; its boundary (one that occurs in no part) and body.
pub fn image_form(png: &[u8], file_name: &str) -> (String, Vec<u8>) {
    let mut n: u32 = 0;
    let boundary = loop {
        let b = format!("wyckoff-desk-image-{n:08x}");
        if !png.windows(b.len()).any(|w| w == b.as_bytes()) {
            break b;
        }
        n += 1;
    };
    // A file name is the desk's (code and date); quotes and line ends are kept out anyway.
    let file_name: String = file_name
        .chars()
        .filter(|c| !matches!(c, '"' | '\r' | '\n'))
        .collect();
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"image_type\"\r\n\r\nmessage\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"image\"; filename=\"{file_name}\"\r\n\
         Content-Type: image/png\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(png);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (boundary, body)
}

/// A request path without its query, for an error.
fn path_only(path: &str) -> &str {
    path.split('?').next().unwrap_or(path)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn header(key: &str, value: &str) -> Header {
        Header {
            key: key.into(),
            value: value.into(),
        }
    }

    fn event_frame(message_id: &str, sum: usize, seq: usize, payload: &[u8]) -> Frame {
        Frame {
            seq_id: 7,
            log_id: 9,
            service: 33,
            method: DATA,
            headers: vec![
                header("type", "event"),
                header("message_id", message_id),
                header("sum", &sum.to_string()),
                header("seq", &seq.to_string()),
                header("trace_id", "tr-1"),
            ],
            payload: Some(payload.to_vec()),
            ..Frame::default()
        }
    }

    #[test]
    fn a_ping_writes_its_zero_numbers_as_proto2_requires() {
        // SeqID 0, LogID 0, service 12, method 0, header type=ping: every required
        // field on the wire, zeros included. These are the bytes lark-oapi 1.7.5's
        // generated pbbp2_pb2 writes for the same frame (the e2e test has that module
        // read every frame the desk sends).
        let bytes = Frame::ping(12).to_bytes();
        assert_eq!(
            bytes,
            [
                0x08, 0, 0x10, 0, 0x18, 12, 0x20, 0, 0x2a, 0x0c, 0x0a, 4, b't', b'y', b'p', b'e',
                0x12, 4, b'p', b'i', b'n', b'g'
            ]
        );
        let back = Frame::decode_bytes(&bytes).unwrap();
        assert_eq!(back.header("type"), Some("ping"));
        assert_eq!(back.service, 12);
    }

    #[test]
    fn frames_say_what_they_ask_and_split_payloads_are_joined_in_order() {
        let mut parts = Parts::default();
        let now = Instant::now();
        let whole = event_frame("m1", 1, 0, b"{}");
        assert_eq!(
            parts.read(&whole, now),
            Incoming::Event {
                message_id: "m1".into(),
                payload: b"{}".to_vec()
            }
        );
        // Parts arrive out of order: nothing until the last, then the payload in seq order.
        assert_eq!(
            parts.read(&event_frame("m2", 3, 2, b"C"), now),
            Incoming::Part
        );
        assert_eq!(
            parts.read(&event_frame("m2", 3, 0, b"A"), now),
            Incoming::Part
        );
        assert_eq!(
            parts.read(&event_frame("m2", 3, 1, b"B"), now),
            Incoming::Event {
                message_id: "m2".into(),
                payload: b"ABC".to_vec()
            }
        );
        // A part whose rest never came is forgotten.
        assert_eq!(
            parts.read(&event_frame("m3", 2, 0, b"x"), now),
            Incoming::Part
        );
        let later = now + PARTS_KEPT + Duration::from_secs(1);
        assert_eq!(
            parts.read(&event_frame("m3", 2, 1, b"y"), later),
            Incoming::Part
        );
        // A seq past the sum is not trusted.
        assert_eq!(
            parts.read(&event_frame("m4", 2, 5, b"x"), now),
            Incoming::Other
        );

        let pong = Frame {
            method: CONTROL,
            headers: vec![header("type", "pong")],
            payload: Some(br#"{"ReconnectCount":-1,"ReconnectInterval":120,"ReconnectNonce":30,"PingInterval":90}"#.to_vec()),
            ..Frame::default()
        };
        let Incoming::Pong(Some(config)) = parts.read(&pong, now) else {
            panic!("not a pong with settings");
        };
        assert_eq!(config.ping_every(), Duration::from_secs(90));
        assert_eq!(config.reconnect_interval(), Some(Duration::from_secs(120)));
        assert_eq!(config.reconnect_count, Some(-1));
        let card = Frame {
            method: DATA,
            headers: vec![header("type", "card"), header("message_id", "c1")],
            ..Frame::default()
        };
        assert_eq!(parts.read(&card, now), Incoming::Other);
        assert_eq!(parts.read(&Frame::ping(1), now), Incoming::Ping);
    }

    #[test]
    fn the_servers_intervals_are_followed_within_bounds() {
        let config = |ping: Option<u64>, reconnect: Option<u64>| ClientConfig {
            reconnect_count: Some(-1),
            reconnect_interval: reconnect,
            reconnect_nonce: Some(30),
            ping_interval: ping,
        };
        let secs = |s| Some(Duration::from_secs(s));
        // (PingInterval, ReconnectInterval) → (ping every, reconnect at most every)
        let cases = [
            ((Some(90), Some(120)), (secs(90), secs(120))),
            ((Some(1), Some(1)), (secs(1), secs(1))),
            ((Some(0), Some(0)), (None, None)),
            ((None, None), (None, None)),
            ((Some(86_400), Some(86_400)), (secs(600), secs(600))),
        ];
        for ((ping, reconnect), (want_ping, want_reconnect)) in cases {
            let c = config(ping, reconnect);
            assert_eq!(c.ping_interval(), want_ping, "{ping:?}");
            assert_eq!(c.reconnect_interval(), want_reconnect, "{reconnect:?}");
            assert_eq!(c.ping_every(), want_ping.unwrap_or(DEFAULT_PING));
        }
    }

    #[test]
    fn a_data_frame_is_answered_with_itself_code_200_and_biz_rt() {
        let frame = event_frame("m1", 1, 0, b"{\"schema\":\"2.0\"}");
        let answer = frame.response(12);
        assert_eq!(answer.seq_id, 7);
        assert_eq!(answer.log_id, 9);
        assert_eq!(answer.service, 33);
        assert_eq!(answer.method, DATA);
        assert_eq!(answer.header("message_id"), Some("m1"));
        assert_eq!(answer.header("biz_rt"), Some("12"));
        let payload: Value = serde_json::from_slice(answer.payload.as_deref().unwrap()).unwrap();
        assert_eq!(payload, json!({"code": 200}));
    }

    fn message(chat_type: &str, message_type: &str, content: Value, mentions: Value) -> Vec<u8> {
        json!({
            "schema": "2.0",
            "header": {"event_id": "ev1", "event_type": MESSAGE_EVENT, "create_time": "1765000000000",
                       "token": "", "app_id": "cli_x", "tenant_key": "t1"},
            "event": {
                "sender": {"sender_id": {"open_id": "ou_abc", "union_id": "on_abc", "user_id": null},
                           "sender_type": "user", "tenant_key": "t1"},
                "message": {"message_id": "om_1", "chat_id": "oc_9", "chat_type": chat_type,
                            "message_type": message_type, "content": content.to_string(),
                            "create_time": "1765000000000", "mentions": mentions},
            },
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn a_message_event_says_who_where_and_what_without_the_bots_mention() {
        let cases = [
            (
                "p2p",
                "text",
                json!({"text": " 分析 000001 "}),
                json!(null),
                "分析 000001",
                false,
            ),
            (
                "group",
                "text",
                json!({"text": "@_user_1 分析 000001 和 @_user_2 的看法"}),
                json!([
                    {"key": "@_user_1", "name": "Desk", "id": {"open_id": "ou_bot"}},
                    {"key": "@_user_2", "name": "张三", "id": {"open_id": "ou_z"}},
                ]),
                "分析 000001 和 @张三 的看法",
                true,
            ),
            (
                "p2p",
                "image",
                json!({"image_key": "img_1"}),
                json!(null),
                "",
                false,
            ),
        ];
        for (chat_type, kind, content, mentions, want, group) in cases {
            let m = message_event(&message(chat_type, kind, content, mentions))
                .unwrap()
                .unwrap();
            assert_eq!(m.text(), want);
            assert_eq!(m.is_group(), group);
            assert_eq!(m.sender(), "ou_abc");
            assert_eq!(m.message.chat_id, "oc_9");
            assert_eq!(m.message.message_id, "om_1");
        }
        let other =
            json!({"schema": "2.0", "header": {"event_type": "im.chat.updated_v1"}, "event": {}});
        assert_eq!(message_event(other.to_string().as_bytes()).unwrap(), None);
        assert!(message_event(b"not json").is_err());
    }

    #[test]
    fn an_image_form_has_the_type_then_the_png_under_a_boundary_found_in_neither() {
        let png = b"\x89PNG\r\n\x1a\nwyckoff-desk-image-00000000 data";
        let (boundary, body) = image_form(png, "000001-2026-06-17\".png");
        assert_eq!(boundary, "wyckoff-desk-image-00000001");
        let text = String::from_utf8_lossy(&body);
        let type_at = text.find("name=\"image_type\"\r\n\r\nmessage\r\n").unwrap();
        let file_at = text
            .find("name=\"image\"; filename=\"000001-2026-06-17.png\"\r\nContent-Type: image/png\r\n\r\n")
            .unwrap();
        assert!(type_at < file_at);
        assert!(body.windows(png.len()).any(|w| w == png));
        assert!(text.ends_with(&format!("\r\n--{boundary}--\r\n")));
        assert_eq!(text.matches(&format!("--{boundary}\r\n")).count(), 2);
    }

    #[test]
    fn an_answer_is_a_card_with_one_markdown_element() {
        let card = markdown_card("**平安银行**\n- 吸筹");
        assert_eq!(card["elements"][0]["tag"], "markdown");
        assert_eq!(card["elements"][0]["content"], "**平安银行**\n- 吸筹");
    }

    #[test]
    fn errors_worth_retrying_are_the_networks_and_the_gateways() {
        let api = |status, code| FeishuError::Api {
            status,
            code,
            message: String::new(),
        };
        let cases = [
            (FeishuError::Network("x".into()), true),
            (api(503, 0), true),
            (api(200, 1), true),
            (api(200, 1_000_040_350), true),
            (api(400, 230_001), false),
            (FeishuError::Unauthorized("514".into()), false),
            (FeishuError::BadSecret, false),
        ];
        for (e, want) in cases {
            assert_eq!(e.is_transient(), want, "{e}");
        }
    }
}
