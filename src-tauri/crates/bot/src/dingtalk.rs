//! DingTalk Stream: the robot's outbound long connection. `POST
//! /v1.0/gateway/connections/open` with the app's client id and secret gives a WebSocket
//! endpoint and a one-time ticket; frames come as JSON `{specVersion, type, headers{topic,
//! messageId, ...}, data}` and each is answered with an ACK frame `{code, headers{
//! contentType, messageId}, message, data}`. A robot message (topic
//! `/v1.0/im/bot/messages/get`) carries its chat's `sessionWebhook`, where the answer is
//! POSTed as Markdown. The secret is in the request body only, so no error of this client
//! carries it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::format::{DINGTALK_LIMIT, split_bytes};
use crate::open_api::{HttpError, TokenCache, http_client, send, send_json};
use crate::ws_connect::WsConnectError;

pub const PUBLIC_API: &str = "https://api.dingtalk.com";
/// The topic of a message sent to the robot.
pub const ROBOT_TOPIC: &str = "/v1.0/im/bot/messages/get";

pub use crate::ws_connect::Socket;

#[derive(Debug, thiserror::Error)]
pub enum DingtalkError {
    /// The connection failed or dropped: try again after a while.
    #[error("cannot reach DingTalk: {0}")]
    Network(String),
    /// The client id or secret was refused: nothing works until it is fixed.
    #[error(
        "DingTalk refused the app's client id or secret ({0}): set them again with `wyckoff bot secret NAME` as CLIENT_ID:CLIENT_SECRET"
    )]
    Unauthorized(String),
    #[error(
        "the bot's secret is not CLIENT_ID:CLIENT_SECRET (the app's AppKey and AppSecret, joined by a colon)"
    )]
    BadSecret,
    #[error("DingTalk API error (HTTP {status}) {code}: {message}")]
    Api {
        status: u16,
        code: String,
        message: String,
    },
    #[error("DingTalk's answer was not understood: {0}")]
    Decode(String),
    /// The proxy in Settings cannot carry the Stream's WebSocket.
    #[error("{0}")]
    Proxy(String),
}

impl From<WsConnectError> for DingtalkError {
    fn from(e: WsConnectError) -> Self {
        match e {
            WsConnectError::Network(m) => DingtalkError::Network(m),
            WsConnectError::BadUrl(m) => DingtalkError::Decode(format!("endpoint: {m}")),
            e @ WsConnectError::UnsupportedProxy(_) => DingtalkError::Proxy(e.to_string()),
        }
    }
}

impl From<HttpError> for DingtalkError {
    fn from(e: HttpError) -> Self {
        match e {
            HttpError::Network(m) => DingtalkError::Network(m),
            HttpError::Decode(m) => DingtalkError::Decode(m),
        }
    }
}

impl DingtalkError {
    /// Worth another try after a backoff (the bot keeps serving); a refused request is
    /// not (it would be refused again).
    pub fn is_transient(&self) -> bool {
        matches!(self, DingtalkError::Network(_) | DingtalkError::Decode(_))
            || matches!(self, DingtalkError::Api { status, .. } if *status >= 500 || *status == 429)
    }
}

pub use crate::open_api::AppCredentials;

/// Where the WebSocket goes, with its ticket.
#[derive(Debug, Clone, Deserialize)]
pub struct Endpoint {
    pub endpoint: String,
    pub ticket: String,
}

/// One frame from the stream.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Frame {
    #[serde(default)]
    pub spec_version: String,
    /// SYSTEM, EVENT or CALLBACK.
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub headers: HashMap<String, String>,
    /// The payload, itself JSON in a string.
    #[serde(default)]
    pub data: String,
}

impl Frame {
    pub fn topic(&self) -> &str {
        self.headers.get("topic").map_or("", String::as_str)
    }

    pub fn message_id(&self) -> &str {
        self.headers.get("messageId").map_or("", String::as_str)
    }
}

/// What a frame asks of the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    /// A keep-alive: answered with its data.
    Ping,
    /// The server is about to close this connection: open another.
    Disconnect,
    /// A message to the robot.
    Robot(Box<RobotMessage>),
    /// Anything else (an event nobody subscribed to): acknowledged, nothing more.
    Other,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct RobotText {
    #[serde(default)]
    pub content: String,
}

/// A message to the robot (the `data` of a robot frame).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RobotMessage {
    pub conversation_id: String,
    /// `1` a one-to-one chat, `2` a group.
    pub conversation_type: String,
    pub msg_id: String,
    pub msgtype: String,
    pub sender_id: String,
    pub sender_staff_id: String,
    pub sender_nick: String,
    /// Where the answer goes (valid for a while after the message).
    pub session_webhook: String,
    /// Until when the webhook takes messages (milliseconds since the epoch; 0 unsaid).
    pub session_webhook_expired_time: i64,
    /// The robot that was written to (its code for the robot API; the app's client id
    /// for an organisation's own app).
    pub robot_code: String,
    pub text: Option<RobotText>,
}

impl RobotMessage {
    /// The sender as the organisation knows it (its staff id), else DingTalk's own id.
    pub fn sender(&self) -> &str {
        if self.sender_staff_id.is_empty() {
            &self.sender_id
        } else {
            &self.sender_staff_id
        }
    }

    pub fn is_group(&self) -> bool {
        self.conversation_type == "2"
    }

    /// The text typed (a group's `@robot` is not in it); empty for a picture or a file.
    pub fn content(&self) -> &str {
        if self.msgtype != "text" {
            return "";
        }
        self.text.as_ref().map_or("", |t| t.content.trim())
    }
}

/// Reads a frame and what it asks for.
pub fn parse_frame(text: &str) -> Result<(Frame, Incoming), DingtalkError> {
    let frame: Frame =
        serde_json::from_str(text).map_err(|e| DingtalkError::Decode(format!("frame: {e}")))?;
    let incoming = match (frame.kind.as_str(), frame.topic()) {
        ("SYSTEM", "ping") => Incoming::Ping,
        ("SYSTEM", "disconnect") => Incoming::Disconnect,
        ("CALLBACK", ROBOT_TOPIC) => {
            let message: RobotMessage = serde_json::from_str(&frame.data)
                .map_err(|e| DingtalkError::Decode(format!("robot message: {e}")))?;
            Incoming::Robot(Box::new(message))
        }
        _ => Incoming::Other,
    };
    Ok((frame, incoming))
}

/// The ACK of a frame: a ping's data goes back as it came; a robot message is answered
/// on its webhook, so its ACK carries no response.
pub fn ack(frame: &Frame, incoming: &Incoming) -> String {
    let data = match incoming {
        Incoming::Ping => frame.data.clone(),
        _ => json!({"response": null}).to_string(),
    };
    json!({
        "code": 200,
        "headers": {"contentType": "application/json", "messageId": frame.message_id()},
        "message": "OK",
        "data": data,
    })
    .to_string()
}

/// The answer's title, shown in the chat list: its first line without Markdown marks.
pub fn title(text: &str) -> String {
    let first = text
        .lines()
        .map(|l| l.trim().trim_start_matches('#').replace("**", ""))
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    let title: String = first.trim().chars().take(24).collect();
    if title.is_empty() {
        "Wyckoff Desk".to_owned()
    } else {
        title
    }
}

#[derive(Clone)]
pub struct DingtalkClient {
    http: reqwest::Client,
    base: String,
    app: AppCredentials,
    /// The proxy from Settings, for the WebSocket (the HTTP client has its own).
    proxy: Option<String>,
    /// The app access token of the robot API.
    token: Arc<TokenCache>,
}

/// Where the robot API sends a message when the chat's session webhook is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RobotTarget {
    /// A one-to-one chat: to the user by staff id (`oToMessages/batchSend`).
    User {
        robot_code: String,
        staff_id: String,
    },
    /// A group: to its open conversation id (`groupMessages/send`).
    Group {
        robot_code: String,
        conversation_id: String,
    },
}

impl RobotTarget {
    /// Where the robot API reaches `message`'s chat: `None` for a one-to-one chat whose
    /// sender has no staff id (the API names users by it). `robot_code` stands in when
    /// the message names no robot.
    pub fn of(message: &RobotMessage, robot_code: &str) -> Option<RobotTarget> {
        let robot_code = if message.robot_code.is_empty() {
            robot_code
        } else {
            &message.robot_code
        }
        .to_owned();
        if message.is_group() {
            (!message.conversation_id.is_empty()).then(|| RobotTarget::Group {
                robot_code,
                conversation_id: message.conversation_id.clone(),
            })
        } else {
            (!message.sender_staff_id.is_empty()).then(|| RobotTarget::User {
                robot_code,
                staff_id: message.sender_staff_id.clone(),
            })
        }
    }

    /// The request's path and body for one Markdown message (`sampleMarkdown`, its
    /// `msgParam` itself JSON in a string).
    pub fn request(&self, text: &str) -> (&'static str, Value) {
        let param = json!({"title": title(text), "text": text}).to_string();
        match self {
            RobotTarget::User {
                robot_code,
                staff_id,
            } => (
                "/v1.0/robot/oToMessages/batchSend",
                json!({"robotCode": robot_code, "userIds": [staff_id],
                       "msgKey": "sampleMarkdown", "msgParam": param}),
            ),
            RobotTarget::Group {
                robot_code,
                conversation_id,
            } => (
                "/v1.0/robot/groupMessages/send",
                json!({"robotCode": robot_code, "openConversationId": conversation_id,
                       "msgKey": "sampleMarkdown", "msgParam": param}),
            ),
        }
    }
}

impl DingtalkClient {
    /// A client for the app whose `token` is `CLIENT_ID:CLIENT_SECRET`, at `api_url` (the
    /// public API when `None`), its HTTP calls through `proxy` when one is set.
    pub fn new(
        api_url: Option<&str>,
        token: &str,
        proxy: Option<&str>,
    ) -> Result<DingtalkClient, DingtalkError> {
        let app = AppCredentials::parse(token).ok_or(DingtalkError::BadSecret)?;
        let http = http_client(proxy)?;
        Ok(DingtalkClient {
            http,
            base: api_url
                .unwrap_or(PUBLIC_API)
                .trim_end_matches('/')
                .to_owned(),
            app,
            proxy: proxy.filter(|p| !p.trim().is_empty()).map(str::to_owned),
            token: Arc::default(),
        })
    }

    /// The app access token (`POST /v1.0/oauth2/accessToken`), asked for again 5 minutes
    /// before it expires.
    pub async fn app_token(&self) -> Result<String, DingtalkError> {
        self.token.get(|| self.new_app_token()).await
    }

    async fn new_app_token(&self) -> Result<(String, Duration), DingtalkError> {
        let request = self
            .http
            .post(format!("{}/v1.0/oauth2/accessToken", self.base))
            .json(&json!({"appKey": self.app.id, "appSecret": self.app.secret}));
        let (status, value) = send_json(request, "oauth2/accessToken").await?;
        let token = value["accessToken"].as_str().filter(|t| !t.is_empty());
        match token {
            Some(token) if (200..300).contains(&status) => {
                let lasts = Duration::from_secs(value["expireIn"].as_u64().unwrap_or(7200));
                Ok((token.to_owned(), lasts))
            }
            _ if (400..500).contains(&status) && status != 429 => {
                Err(DingtalkError::Unauthorized(api_said(status, &value)))
            }
            _ => Err(api_error(status, &value)),
        }
    }

    /// Sends `text` as Markdown through the robot API to `to`, split to DingTalk's limit:
    /// the way to a chat whose session webhook expired. A token DingTalk refuses is
    /// forgotten (the next call asks for a new one); a user the API says it cannot
    /// reach, or holds back for flow control, is an error.
    pub async fn send_robot(&self, to: &RobotTarget, text: &str) -> Result<(), DingtalkError> {
        for part in split_bytes(text, DINGTALK_LIMIT) {
            let token = self.app_token().await?;
            let (path, body) = to.request(&part);
            let request = self
                .http
                .post(format!("{}{path}", self.base))
                .header("x-acs-dingtalk-access-token", &token)
                .json(&body);
            let (status, value) = send_json(request, path).await?;
            if status == 401 || status == 403 {
                self.token.forget().await;
            }
            if !(200..300).contains(&status) {
                return Err(api_error(status, &value));
            }
            for list in ["invalidStaffIdList", "flowControlledStaffIdList"] {
                if value[list].as_array().is_some_and(|l| !l.is_empty()) {
                    return Err(DingtalkError::Api {
                        status,
                        code: list.to_owned(),
                        message: value[list].to_string(),
                    });
                }
            }
        }
        Ok(())
    }

    pub fn client_id(&self) -> &str {
        &self.app.id
    }

    /// Asks for a connection: the endpoint and its ticket (checks the credentials).
    pub async fn open(&self) -> Result<Endpoint, DingtalkError> {
        let request = self
            .http
            .post(format!("{}/v1.0/gateway/connections/open", self.base))
            .json(&json!({
                "clientId": self.app.id,
                "clientSecret": self.app.secret,
                "subscriptions": [
                    {"type": "CALLBACK", "topic": ROBOT_TOPIC},
                ],
                "ua": concat!("wyckoff-desk/", env!("CARGO_PKG_VERSION")),
            }));
        let (status, value) = send_json(request, "connections/open").await?;
        if status == 401 || status == 403 {
            return Err(DingtalkError::Unauthorized(format!("HTTP {status}")));
        }
        if !(200..300).contains(&status) {
            return Err(DingtalkError::Api {
                status,
                code: value["code"].as_str().unwrap_or_default().to_owned(),
                message: value["message"].as_str().unwrap_or("no message").to_owned(),
            });
        }
        serde_json::from_value(value).map_err(|e| DingtalkError::Decode(e.to_string()))
    }

    /// Opens the WebSocket of `endpoint` with its ticket (through the proxy from
    /// Settings when one is set, as the HTTP calls go).
    pub async fn connect(&self, endpoint: &Endpoint) -> Result<Socket, DingtalkError> {
        let mut url = reqwest::Url::parse(&endpoint.endpoint)
            .map_err(|e| DingtalkError::Decode(format!("endpoint: {e}")))?;
        url.query_pairs_mut()
            .append_pair("ticket", &endpoint.ticket);
        Ok(crate::ws_connect::connect(url.as_str(), self.proxy.as_deref()).await?)
    }

    /// Sends `reply` to the chat behind `webhook`: Markdown split to DingTalk's limit,
    /// plain text as a text message.
    pub async fn reply(
        &self,
        webhook: &str,
        reply: &crate::serve::Reply,
    ) -> Result<(), DingtalkError> {
        match reply {
            crate::serve::Reply::Plain(text) => {
                for part in split_bytes(text, DINGTALK_LIMIT) {
                    self.post_webhook(
                        webhook,
                        &json!({"msgtype": "text", "text": {"content": part}}),
                    )
                    .await?;
                }
            }
            crate::serve::Reply::Markdown(text) => {
                for part in split_bytes(text, DINGTALK_LIMIT) {
                    let body = json!({
                        "msgtype": "markdown",
                        "markdown": {"title": title(&part), "text": part},
                    });
                    self.post_webhook(webhook, &body).await?;
                }
            }
        }
        Ok(())
    }

    async fn post_webhook(&self, webhook: &str, body: &Value) -> Result<(), DingtalkError> {
        // The webhook carries the chat's session in its query: errors leave it out.
        let (status, text) = send(self.http.post(webhook).json(body)).await?;
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let errcode = value["errcode"].as_i64().unwrap_or(0);
        if !(200..300).contains(&status) || errcode != 0 {
            return Err(DingtalkError::Api {
                status,
                code: errcode.to_string(),
                message: value["errmsg"].as_str().unwrap_or("no message").to_owned(),
            });
        }
        Ok(())
    }
}

/// What the v1.0 API said of a refused call: `code: message`.
fn api_said(status: u16, value: &Value) -> String {
    let code = value["code"].as_str().unwrap_or_default();
    let message = value["message"].as_str().unwrap_or("no message");
    format!("HTTP {status} {code}: {message}")
}

fn api_error(status: u16, value: &Value) -> DingtalkError {
    DingtalkError::Api {
        status,
        code: value["code"].as_str().unwrap_or_default().to_owned(),
        message: value["message"].as_str().unwrap_or("no message").to_owned(),
    }
}

/// The desk keeps updates by a number; DingTalk names a message by a string. Its 63-bit
/// FNV-1a hash stands for it (the same message always gets the same number, and two of a
/// bot's messages share one with odds near 2⁻⁶³ a pair).
pub fn update_id(message_id: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in message_id.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    i64::try_from(hash >> 1).unwrap_or(i64::MAX)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn frame(kind: &str, topic: &str, data: &str) -> String {
        json!({
            "specVersion": "1.0",
            "type": kind,
            "headers": {"topic": topic, "messageId": "m-1", "contentType": "application/json", "time": "1765000000000"},
            "data": data,
        })
        .to_string()
    }

    #[test]
    fn frames_say_what_they_ask() {
        let robot = json!({
            "conversationId": "cid1", "conversationType": "2", "msgId": "msg1",
            "msgtype": "text", "senderId": "$:LWCP:abc", "senderStaffId": "manager7",
            "senderNick": "张三", "sessionWebhook": "https://oapi/x?session=s",
            "text": {"content": " 分析 000001 "},
        })
        .to_string();
        let cases = [
            (frame("SYSTEM", "ping", "{\"opaque\":\"1\"}"), "ping"),
            (frame("SYSTEM", "disconnect", "{}"), "disconnect"),
            (frame("EVENT", "chat_update_title", "{}"), "other"),
            (frame("CALLBACK", ROBOT_TOPIC, &robot), "robot"),
        ];
        for (text, want) in cases {
            let (_, incoming) = parse_frame(&text).unwrap();
            let got = match &incoming {
                Incoming::Ping => "ping",
                Incoming::Disconnect => "disconnect",
                Incoming::Robot(m) => {
                    assert_eq!(m.sender(), "manager7");
                    assert!(m.is_group());
                    assert_eq!(m.content(), "分析 000001");
                    "robot"
                }
                Incoming::Other => "other",
            };
            assert_eq!(got, want, "{text}");
        }
        assert!(parse_frame("not json").is_err());
        assert!(parse_frame(&frame("CALLBACK", ROBOT_TOPIC, "{oops")).is_err());
    }

    #[test]
    fn a_ping_is_acked_with_its_data_and_a_message_with_no_response() {
        let (f, i) = parse_frame(&frame("SYSTEM", "ping", "{\"opaque\":\"7\"}")).unwrap();
        let a: Value = serde_json::from_str(&ack(&f, &i)).unwrap();
        assert_eq!(a["code"], 200);
        assert_eq!(a["message"], "OK");
        assert_eq!(a["headers"]["messageId"], "m-1");
        assert_eq!(a["headers"]["contentType"], "application/json");
        assert_eq!(a["data"], "{\"opaque\":\"7\"}");
        let (f, i) = parse_frame(&frame("EVENT", "x", "{}")).unwrap();
        let a: Value = serde_json::from_str(&ack(&f, &i)).unwrap();
        assert_eq!(a["data"], "{\"response\":null}");
    }

    #[test]
    fn a_sender_without_a_staff_id_is_its_dingtalk_id_and_pictures_have_no_text() {
        let m = RobotMessage {
            sender_id: "$:LWCP:abc".into(),
            msgtype: "picture".into(),
            text: Some(RobotText {
                content: "x".into(),
            }),
            conversation_type: "1".into(),
            ..RobotMessage::default()
        };
        assert_eq!(m.sender(), "$:LWCP:abc");
        assert!(!m.is_group());
        assert_eq!(m.content(), "");
    }

    #[test]
    fn the_robot_api_reaches_a_group_by_its_id_and_a_person_by_staff_id() {
        let message = |kind: &str, staff: &str, robot: &str| RobotMessage {
            conversation_id: "cid9".into(),
            conversation_type: kind.into(),
            sender_staff_id: staff.into(),
            robot_code: robot.into(),
            ..RobotMessage::default()
        };
        let group = RobotTarget::of(&message("2", "", "ding_r"), "ding_app").unwrap();
        let (path, body) = group.request("**平安银行** 已批准\n详情");
        assert_eq!(path, "/v1.0/robot/groupMessages/send");
        assert_eq!(body["robotCode"], "ding_r");
        assert_eq!(body["openConversationId"], "cid9");
        assert_eq!(body["msgKey"], "sampleMarkdown");
        let param: Value = serde_json::from_str(body["msgParam"].as_str().unwrap()).unwrap();
        assert_eq!(param["title"], "平安银行 已批准");
        assert_eq!(param["text"], "**平安银行** 已批准\n详情");

        let one = RobotTarget::of(&message("1", "manager7", ""), "ding_app").unwrap();
        let (path, body) = one.request("x");
        assert_eq!(path, "/v1.0/robot/oToMessages/batchSend");
        assert_eq!(body["robotCode"], "ding_app");
        assert_eq!(body["userIds"], json!(["manager7"]));
        // No staff id, no way to name the person.
        assert_eq!(
            RobotTarget::of(&message("1", "", "ding_r"), "ding_app"),
            None
        );
    }

    #[test]
    fn credentials_are_id_colon_secret() {
        let cases = [
            ("dingabc:s3cr:et", Some(("dingabc", "s3cr:et"))),
            (" dingabc : sec \n", Some(("dingabc", "sec"))),
            ("dingabc", None),
            (":sec", None),
            ("dingabc:", None),
        ];
        for (token, want) in cases {
            let got = AppCredentials::parse(token);
            assert_eq!(
                got.as_ref().map(|c| (c.id.as_str(), c.secret.as_str())),
                want,
                "{token}"
            );
        }
    }

    #[test]
    fn titles_are_the_first_line_plain() {
        let cases = [
            ("## **平安银行** 结论\n正文", "平安银行 结论"),
            ("\n\n吸筹", "吸筹"),
            ("", "Wyckoff Desk"),
        ];
        for (text, want) in cases {
            assert_eq!(title(text), want, "{text}");
        }
        assert_eq!(title(&"长".repeat(40)).chars().count(), 24);
    }

    #[test]
    fn a_message_id_maps_to_one_stable_non_negative_number() {
        let a = update_id("msgA1b2");
        assert_eq!(a, update_id("msgA1b2"));
        assert_ne!(a, update_id("msgA1b3"));
        assert!(a >= 0 && update_id("") >= 0);
    }
}
