//! The WeCom 智能机器人 (AI bot) long connection. The client opens a WebSocket to
//! `wss://openws.work.weixin.qq.com` and subscribes with `{"cmd":"aibot_subscribe",
//! "headers":{"req_id"},"body":{"bot_id","secret"}}`; WeCom answers every request with
//! `{"headers":{"req_id"},"errcode","errmsg"}` under the same `req_id`. A user's message
//! comes as `{"cmd":"aibot_msg_callback","headers":{"req_id"},"body":{msgid, chatid (groups
//! only), chattype single|group, from{userid}, msgtype, text{content}, ...}}` and is answered
//! with `aibot_respond_msg` under the callback's `req_id`: a `stream` message `{id, finish,
//! content}` whose later frames replace its content (at most 20,480 bytes). Messages no
//! callback asked for go with `aibot_send_msg` `{chatid, msgtype: markdown}` (a single
//! chat's chatid is its user's userid). The client keeps the connection with `{"cmd":
//! "ping"}` every 30 s; an `aibot_event_callback` with `disconnected_event` says another
//! connection of the bot replaced this one. The secret goes in the subscribe frame only,
//! and no error of this module carries a frame.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::ws_connect::WsConnectError;

pub const PUBLIC_WS: &str = "wss://openws.work.weixin.qq.com";
pub const CMD_SUBSCRIBE: &str = "aibot_subscribe";
pub const CMD_PING: &str = "ping";
pub const CMD_CALLBACK: &str = "aibot_msg_callback";
pub const CMD_EVENT: &str = "aibot_event_callback";
pub const CMD_RESPOND: &str = "aibot_respond_msg";
pub const CMD_SEND: &str = "aibot_send_msg";
/// The event saying a newer connection of the bot took over.
pub const EVENT_REPLACED: &str = "disconnected_event";
/// A stream message's (and a markdown message's) content is at most 20,480 bytes; parts
/// are cut a little shorter.
pub const WECOM_LIMIT: usize = 20_000;

#[derive(Debug, thiserror::Error)]
pub enum WecomError {
    /// The connection failed or dropped: try again after a while.
    #[error("cannot reach WeCom: {0}")]
    Network(String),
    /// The subscription was refused: nothing works until the bot id or secret is fixed.
    #[error(
        "WeCom refused the bot's id or secret (errcode {errcode}: {errmsg}): set them again with `wyckoff bot secret NAME` as BOT_ID:SECRET"
    )]
    Unauthorized { errcode: i64, errmsg: String },
    #[error(
        "the bot's secret is not BOT_ID:SECRET (the 智能机器人's Bot ID and Secret, joined by a colon)"
    )]
    BadSecret,
    /// WeCom refused a message (errcode from its answer).
    #[error("WeCom refused the message (errcode {errcode}: {errmsg})")]
    Refused { errcode: i64, errmsg: String },
    #[error("WeCom's frame was not understood: {0}")]
    Decode(String),
    /// Another connection of the same bot took over (WeCom keeps one a bot).
    #[error(
        "another connection of this bot took over (WeCom keeps one connection a bot): is it served somewhere else?"
    )]
    Replaced,
    /// The proxy in Settings cannot carry the WebSocket.
    #[error("{0}")]
    Proxy(String),
}

impl WecomError {
    /// Worth another try after a backoff.
    pub fn is_transient(&self) -> bool {
        matches!(self, WecomError::Network(_) | WecomError::Decode(_))
    }
}

impl From<WsConnectError> for WecomError {
    fn from(e: WsConnectError) -> Self {
        match e {
            WsConnectError::Network(m) => WecomError::Network(m),
            WsConnectError::BadUrl(m) => WecomError::Decode(format!("address: {m}")),
            e @ WsConnectError::UnsupportedProxy(_) => WecomError::Proxy(e.to_string()),
        }
    }
}

/// The bot's id and secret, kept as one bot secret `BOT_ID:SECRET`.
#[derive(Clone)]
pub struct Credentials {
    pub bot_id: String,
    pub secret: String,
}

impl Credentials {
    pub fn parse(token: &str) -> Option<Credentials> {
        let (id, secret) = token.trim().split_once(':')?;
        let (id, secret) = (id.trim(), secret.trim());
        (!id.is_empty() && !secret.is_empty()).then(|| Credentials {
            bot_id: id.to_owned(),
            secret: secret.to_owned(),
        })
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Headers {
    pub req_id: String,
}

/// One frame from WeCom: a callback (with `cmd`) or the answer to a request (without).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Frame {
    pub cmd: Option<String>,
    pub headers: Headers,
    pub body: Value,
    pub errcode: Option<i64>,
    pub errmsg: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Sender {
    pub userid: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Content {
    pub content: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct MixedItem {
    pub msgtype: String,
    pub text: Option<Content>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Mixed {
    pub msg_item: Vec<MixedItem>,
}

/// A user's message to the bot (the body of a callback).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct WecomMessage {
    /// Unique to the message: the same when WeCom delivers it again.
    pub msgid: String,
    pub aibotid: String,
    /// The group's id; WeCom sends it for group chats only.
    pub chatid: String,
    /// `single` or `group`.
    pub chattype: String,
    pub from: Sender,
    pub msgtype: String,
    pub text: Option<Content>,
    /// A voice message as WeCom's speech-to-text heard it.
    pub voice: Option<Content>,
    pub mixed: Option<Mixed>,
}

impl WecomMessage {
    pub fn is_group(&self) -> bool {
        self.chattype == "group"
    }

    /// Where answers and decisions go: a group by its chatid, a single chat by its
    /// user's userid (what `aibot_send_msg` takes as `chatid`).
    pub fn chat_id(&self) -> &str {
        if self.is_group() && !self.chatid.is_empty() {
            &self.chatid
        } else {
            &self.from.userid
        }
    }

    /// The text typed (a voice message's transcript; a mixed message's text parts),
    /// without the @mentions a group message starts with; empty for a picture or a file.
    pub fn content(&self) -> String {
        let text = match self.msgtype.as_str() {
            "text" => self.text.as_ref().map(|t| t.content.clone()),
            "voice" => self.voice.as_ref().map(|t| t.content.clone()),
            "mixed" => self.mixed.as_ref().map(|m| {
                m.msg_item
                    .iter()
                    .filter(|i| i.msgtype == "text")
                    .filter_map(|i| i.text.as_ref().map(|t| t.content.trim().to_owned()))
                    .collect::<Vec<_>>()
                    .join("\n")
            }),
            _ => None,
        }
        .unwrap_or_default();
        let mut rest = text.trim();
        if self.is_group() {
            while let Some(after) = rest.strip_prefix('@') {
                rest = after
                    .split_once(char::is_whitespace)
                    .map_or("", |(_, r)| r)
                    .trim_start();
            }
        }
        rest.trim().to_owned()
    }
}

/// What a frame is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    /// A user's message, to be answered under `req_id`.
    Message {
        req_id: String,
        message: Box<WecomMessage>,
    },
    /// An event (entering a chat, a card click, ...): its type.
    Event { req_id: String, eventtype: String },
    /// WeCom's answer to one of the client's requests.
    Answer {
        req_id: String,
        errcode: i64,
        errmsg: String,
    },
    /// Anything else.
    Other,
}

/// Reads a frame.
pub fn parse_frame(text: &str) -> Result<Incoming, WecomError> {
    let frame: Frame =
        serde_json::from_str(text).map_err(|e| WecomError::Decode(format!("frame: {e}")))?;
    let req_id = frame.headers.req_id;
    Ok(match frame.cmd.as_deref() {
        Some(CMD_CALLBACK) => {
            let message: WecomMessage = serde_json::from_value(frame.body)
                .map_err(|e| WecomError::Decode(format!("message: {e}")))?;
            Incoming::Message {
                req_id,
                message: Box::new(message),
            }
        }
        Some(CMD_EVENT) => Incoming::Event {
            req_id,
            eventtype: frame.body["event"]["eventtype"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        },
        None if frame.errcode.is_some() => Incoming::Answer {
            req_id,
            errcode: frame.errcode.unwrap_or_default(),
            errmsg: frame.errmsg.unwrap_or_default(),
        },
        _ => Incoming::Other,
    })
}

/// The subscription request.
pub fn subscribe(req_id: &str, credentials: &Credentials) -> String {
    json!({
        "cmd": CMD_SUBSCRIBE,
        "headers": {"req_id": req_id},
        "body": {"bot_id": credentials.bot_id, "secret": credentials.secret},
    })
    .to_string()
}

/// The keep-alive.
pub fn ping(req_id: &str) -> String {
    json!({"cmd": CMD_PING, "headers": {"req_id": req_id}}).to_string()
}

/// An answer to the callback `req_id`: the stream `stream_id`'s content so far (it
/// replaces what the stream showed), finished or not.
pub fn respond_stream(req_id: &str, stream_id: &str, content: &str, finish: bool) -> String {
    json!({
        "cmd": CMD_RESPOND,
        "headers": {"req_id": req_id},
        "body": {
            "msgtype": "stream",
            "stream": {"id": stream_id, "finish": finish, "content": content},
        },
    })
    .to_string()
}

/// A Markdown message no callback asked for, to a chat (a group's chatid or a user's
/// userid).
pub fn send_markdown(req_id: &str, chat_id: &str, content: &str) -> String {
    json!({
        "cmd": CMD_SEND,
        "headers": {"req_id": req_id},
        "body": {"chatid": chat_id, "msgtype": "markdown", "markdown": {"content": content}},
    })
    .to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn callback(body: Value) -> String {
        json!({"cmd": CMD_CALLBACK, "headers": {"req_id": "r-1"}, "body": body}).to_string()
    }

    #[test]
    fn frames_say_what_they_are() {
        let single = callback(json!({
            "msgid": "m1", "aibotid": "aib1", "chattype": "single",
            "from": {"userid": "zhangsan"}, "msgtype": "text", "text": {"content": " 分析 000001 "},
        }));
        let Incoming::Message { req_id, message } = parse_frame(&single).unwrap() else {
            panic!("not a message");
        };
        assert_eq!(req_id, "r-1");
        assert!(!message.is_group());
        assert_eq!(message.chat_id(), "zhangsan");
        assert_eq!(message.content(), "分析 000001");

        let group = callback(json!({
            "msgid": "m2", "chatid": "wrgroup9", "chattype": "group",
            "from": {"userid": "lisi"}, "msgtype": "text", "text": {"content": "@Wyckoff 分析 600519"},
        }));
        let Incoming::Message { message, .. } = parse_frame(&group).unwrap() else {
            panic!("not a message");
        };
        assert!(message.is_group());
        assert_eq!(message.chat_id(), "wrgroup9");
        assert_eq!(message.content(), "分析 600519");

        let event = json!({"cmd": CMD_EVENT, "headers": {"req_id": "r-2"},
            "body": {"msgid": "e1", "msgtype": "event", "event": {"eventtype": EVENT_REPLACED}}})
        .to_string();
        assert_eq!(
            parse_frame(&event).unwrap(),
            Incoming::Event {
                req_id: "r-2".into(),
                eventtype: EVENT_REPLACED.into()
            }
        );
        let answer = json!({"headers": {"req_id": "aibot_subscribe_1"}, "errcode": 40001, "errmsg": "invalid secret"}).to_string();
        assert_eq!(
            parse_frame(&answer).unwrap(),
            Incoming::Answer {
                req_id: "aibot_subscribe_1".into(),
                errcode: 40001,
                errmsg: "invalid secret".into()
            }
        );
        assert_eq!(parse_frame("{\"cmd\":\"later\"}").unwrap(), Incoming::Other);
        assert!(parse_frame("not json").is_err());
    }

    #[test]
    fn contents_by_message_type() {
        let base = WecomMessage {
            chattype: "single".into(),
            from: Sender { userid: "u".into() },
            ..WecomMessage::default()
        };
        let cases = [
            (
                WecomMessage {
                    msgtype: "voice".into(),
                    voice: Some(Content {
                        content: "我的持仓".into(),
                    }),
                    ..base.clone()
                },
                "我的持仓",
            ),
            (
                WecomMessage {
                    msgtype: "mixed".into(),
                    mixed: Some(Mixed {
                        msg_item: vec![
                            MixedItem {
                                msgtype: "text".into(),
                                text: Some(Content {
                                    content: "看这张图".into(),
                                }),
                            },
                            MixedItem {
                                msgtype: "image".into(),
                                text: None,
                            },
                        ],
                    }),
                    ..base.clone()
                },
                "看这张图",
            ),
            (
                WecomMessage {
                    msgtype: "image".into(),
                    ..base.clone()
                },
                "",
            ),
            // A single chat keeps a leading @ (nothing to strip there).
            (
                WecomMessage {
                    msgtype: "text".into(),
                    text: Some(Content {
                        content: "@all 你好".into(),
                    }),
                    ..base.clone()
                },
                "@all 你好",
            ),
        ];
        for (message, want) in cases {
            assert_eq!(message.content(), want, "{message:?}");
        }
    }

    #[test]
    fn requests_have_the_documented_shape() {
        let creds = Credentials::parse(" aibABC : s3cr:et ").unwrap();
        assert_eq!(
            (creds.bot_id.as_str(), creds.secret.as_str()),
            ("aibABC", "s3cr:et")
        );
        assert!(Credentials::parse("aibABC").is_none());
        assert!(Credentials::parse(":x").is_none());
        let sub: Value = serde_json::from_str(&subscribe("aibot_subscribe_1", &creds)).unwrap();
        assert_eq!(
            sub,
            json!({"cmd": "aibot_subscribe", "headers": {"req_id": "aibot_subscribe_1"},
                "body": {"bot_id": "aibABC", "secret": "s3cr:et"}})
        );
        let p: Value = serde_json::from_str(&ping("ping_2")).unwrap();
        assert_eq!(p, json!({"cmd": "ping", "headers": {"req_id": "ping_2"}}));
        let r: Value = serde_json::from_str(&respond_stream("r-1", "s1", "**好**", true)).unwrap();
        assert_eq!(
            r,
            json!({"cmd": "aibot_respond_msg", "headers": {"req_id": "r-1"},
                "body": {"msgtype": "stream", "stream": {"id": "s1", "finish": true, "content": "**好**"}}})
        );
        let s: Value = serde_json::from_str(&send_markdown("send_3", "zhangsan", "x")).unwrap();
        assert_eq!(
            s,
            json!({"cmd": "aibot_send_msg", "headers": {"req_id": "send_3"},
                "body": {"chatid": "zhangsan", "msgtype": "markdown", "markdown": {"content": "x"}}})
        );
    }
}
