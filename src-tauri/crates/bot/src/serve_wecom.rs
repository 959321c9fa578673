//! Serving a WeCom 智能机器人 over its long connection: open the WebSocket, subscribe
//! with the bot's id and secret, keep it with a ping every 30 s (two unanswered, it is
//! taken as dropped), hand each message to one worker that answers them in order through
//! the desk's gate, and after a dropped connection open another with a doubling wait. A
//! message WeCom delivers again (the same `msgid`) is a duplicate at the gate and gets no
//! second answer. Answers go back on the same connection under the callback's `req_id`
//! (a stream message: "thinking" first, the answer replacing it); what does not fit in
//! one stream message, and decisions made outside the chat, go as Markdown messages to
//! the chat. Every request waits for WeCom's answer under its `req_id`, one at a time.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::SplitSink;
use futures::{SinkExt, StreamExt};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;
use wyckoff_session::Desk;
use wyckoff_session::bot_store::{BotInfo, BotKind};
use wyckoff_session::desk_bots::Inbound;

use crate::dingtalk::update_id;
use crate::format::split_bytes;
use crate::serve::{Attempts, ConnectionEnded as Ended, reconnecting};
use crate::serve::{
    Chat, FOLLOW_UP_EVERY, FollowUps, Reply, ServeError, ServeOptions, respond, send_follow_ups,
    while_serving,
};
use crate::wecom::{
    CMD_PING, CMD_SEND, CMD_SUBSCRIBE, Credentials, EVENT_REPLACED, Incoming, PUBLIC_WS,
    WECOM_LIMIT, WecomError, WecomMessage, parse_frame, ping, respond_stream, send_markdown,
    subscribe,
};
use crate::ws_connect::Socket;

/// How often the connection is pinged (WeCom's SDKs use 30 s).
const HEARTBEAT: Duration = Duration::from_secs(30);
/// Milliseconds between pings instead, for tests that watch a connection go silent
/// without waiting out three real heartbeats.
const HEARTBEAT_VAR: &str = "WYCKOFF_WECOM_HEARTBEAT_MS";

fn heartbeat() -> Duration {
    std::env::var(HEARTBEAT_VAR)
        .ok()
        .and_then(|ms| ms.parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map_or(HEARTBEAT, Duration::from_millis)
}
/// Pings in a row without an answer before the connection is taken as dropped.
const MISSED_PINGS: u32 = 2;
/// How long a request waits for WeCom's answer.
const ANSWER_WAIT: Duration = Duration::from_secs(10);
/// What the chat shows while the desk works on an answer.
const THINKING: &str = "⏳ 正在分析…";

/// A WeCom bot's connection settings, with its credentials from the desk.
#[derive(Clone)]
pub struct WecomClient {
    url: String,
    credentials: Credentials,
    proxy: Option<String>,
}

impl WecomClient {
    /// A client for the bot whose `token` is `BOT_ID:SECRET`, at `api_url` (WeCom's
    /// public address when `None`; an http(s) address means its ws(s)), through `proxy`
    /// when one is set.
    pub fn new(
        api_url: Option<&str>,
        token: &str,
        proxy: Option<&str>,
    ) -> Result<WecomClient, WecomError> {
        let credentials = Credentials::parse(token).ok_or(WecomError::BadSecret)?;
        Ok(WecomClient {
            url: websocket_url(api_url.unwrap_or(PUBLIC_WS)),
            credentials,
            proxy: proxy.filter(|p| !p.trim().is_empty()).map(str::to_owned),
        })
    }

    pub fn bot_id(&self) -> &str {
        &self.credentials.bot_id
    }
}

/// The WebSocket address of an `--api-url`: `http(s)://` becomes `ws(s)://`.
fn websocket_url(api_url: &str) -> String {
    let url = api_url.trim_end_matches('/');
    if let Some(rest) = url.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = url.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        url.to_owned()
    }
}

/// A client for the bot (a WeCom bot, its token set).
pub fn client(desk: &Desk, bot: &BotInfo) -> Result<WecomClient, ServeError> {
    if bot.kind != BotKind::Wecom {
        return Err(ServeError::Unsupported {
            bot: bot.name.clone(),
            kind: bot.kind.as_str(),
        });
    }
    let token = desk
        .bot_token(&bot.name)
        .ok_or_else(|| ServeError::NoToken(bot.name.clone()))?;
    let proxy = desk.settings().proxy;
    WecomClient::new(bot.api_url.as_deref(), &token, proxy.as_deref()).map_err(|source| {
        ServeError::Wecom {
            bot: bot.name.clone(),
            source,
        }
    })
}

/// Checks the bot's id and secret: opens a connection and subscribes. The bot id.
pub async fn test(desk: &Desk, bot: &BotInfo) -> Result<String, ServeError> {
    let client = client(desk, bot)?;
    let link = Link::default();
    let wrap = |source| ServeError::Wecom {
        bot: bot.name.clone(),
        source,
    };
    let (mut sink, _stream) = open(&client, &link).await.map_err(wrap)?;
    let _ = sink.close().await;
    Ok(client.bot_id().to_owned())
}

type Sink = SplitSink<Socket, Message>;
type Source = futures::stream::SplitStream<Socket>;

/// The connection as the worker sees it: where frames are sent, and the requests
/// waiting for WeCom's answer by `req_id`.
#[derive(Default)]
struct Link {
    sink: tokio::sync::Mutex<Option<Sink>>,
    waiting: Mutex<HashMap<String, oneshot::Sender<(i64, String)>>>,
    sent: AtomicU64,
}

impl Link {
    /// A fresh request id (`prefix_<process>_<n>`).
    fn req_id(&self, prefix: &str) -> String {
        let n = self.sent.fetch_add(1, Ordering::Relaxed);
        format!("{prefix}_{}_{n}", std::process::id())
    }

    /// Sends `frame` (a request under `req_id`) and waits for WeCom's answer to it.
    async fn request(&self, req_id: &str, frame: String) -> Result<(), WecomError> {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.insert(req_id.to_owned(), tx);
        }
        let sent = {
            let mut sink = self.sink.lock().await;
            match sink.as_mut() {
                Some(sink) => sink
                    .send(Message::text(frame))
                    .await
                    .map_err(|e| WecomError::Network(e.to_string())),
                None => Err(WecomError::Network("not connected".into())),
            }
        };
        if let Err(e) = sent {
            self.forget(req_id);
            return Err(e);
        }
        match tokio::time::timeout(ANSWER_WAIT, rx).await {
            Ok(Ok((0, _))) => Ok(()),
            Ok(Ok((errcode, errmsg))) => Err(WecomError::Refused { errcode, errmsg }),
            Ok(Err(_)) => Err(WecomError::Network(
                "the connection dropped before WeCom answered".into(),
            )),
            Err(_) => {
                self.forget(req_id);
                Err(WecomError::Network("WeCom did not answer in time".into()))
            }
        }
    }

    fn forget(&self, req_id: &str) {
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.remove(req_id);
        }
    }

    /// WeCom answered `req_id`: true when a request was waiting for it.
    fn answered(&self, req_id: &str, errcode: i64, errmsg: String) -> bool {
        let waiting = self.waiting.lock().ok().and_then(|mut w| w.remove(req_id));
        match waiting {
            Some(tx) => {
                // The request may have stopped waiting (timed out) just now.
                let _ = tx.send((errcode, errmsg));
                true
            }
            None => false,
        }
    }

    /// The connection is gone: no request waits on it any more.
    async fn close(&self) {
        if let Some(mut sink) = self.sink.lock().await.take() {
            let _ = sink.close().await;
        }
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.clear();
        }
    }
}

/// One WeCom bot, served by this process once it holds the bot's lease, until `stop`.
pub async fn serve_wecom(
    desk: Arc<Desk>,
    name: String,
    client: WecomClient,
    options: ServeOptions,
    stop: CancellationToken,
) {
    let front = options.front;
    while_serving(
        &desk,
        &name,
        front,
        &stop,
        run(desk.clone(), name.clone(), client, &options, &stop),
    )
    .await;
}

async fn run(
    desk: Arc<Desk>,
    name: String,
    client: WecomClient,
    options: &ServeOptions,
    stop: &CancellationToken,
) {
    tracing::info!(bot = %name, "serving (WeCom long connection)");
    let link = Arc::new(Link::default());
    let (tx, mut rx) = mpsc::unbounded_channel::<(String, Box<WecomMessage>)>();
    let worker = {
        let (desk, name, link) = (desk.clone(), name.clone(), link.clone());
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(FOLLOW_UP_EVERY);
            loop {
                tokio::select! {
                    next = rx.recv() => {
                        let Some((req_id, message)) = next else { break };
                        if let Err(e) = handle(&desk, &name, &link, &req_id, &message).await {
                            tracing::warn!(bot = %name, "a message was not answered: {e}");
                        }
                    }
                    _ = tick.tick() => {}
                }
                send_follow_ups(
                    &desk,
                    &name,
                    &WecomFollowUps {
                        bot: &name,
                        link: &link,
                    },
                )
                .await;
            }
        })
    };
    let attempts = Attempts::default();
    reconnecting(
        &name,
        options,
        stop,
        &attempts,
        WecomError::is_transient,
        || async {
            let ended = connection(&client, &link, &tx, &attempts).await;
            link.close().await;
            ended
        },
    )
    .await;
    link.close().await;
    worker.abort();
}

/// Opens the WebSocket and subscribes: the halves once WeCom took the subscription.
async fn open(client: &WecomClient, link: &Link) -> Result<(Sink, Source), WecomError> {
    let socket = crate::ws_connect::connect(&client.url, client.proxy.as_deref()).await?;
    let (mut sink, mut source) = socket.split();
    let req_id = link.req_id(CMD_SUBSCRIBE);
    sink.send(Message::text(subscribe(&req_id, &client.credentials)))
        .await
        .map_err(|e| WecomError::Network(e.to_string()))?;
    let answer = async {
        while let Some(next) = source.next().await {
            let text = match next {
                Ok(Message::Text(text)) => text,
                Ok(Message::Close(_)) => break,
                Ok(_) => continue,
                Err(e) => return Err(WecomError::Network(e.to_string())),
            };
            match parse_frame(&text)? {
                Incoming::Answer {
                    req_id: answered,
                    errcode,
                    errmsg,
                } if answered == req_id => {
                    return if errcode == 0 {
                        Ok(())
                    } else {
                        Err(WecomError::Unauthorized { errcode, errmsg })
                    };
                }
                _ => {}
            }
        }
        Err(WecomError::Network(
            "the connection closed before the subscription was answered".into(),
        ))
    };
    tokio::time::timeout(ANSWER_WAIT, answer)
        .await
        .map_err(|_| {
            WecomError::Network("WeCom did not answer the subscription in time".into())
        })??;
    Ok((sink, source))
}

/// One connection: opened, subscribed, read until it ends; WeCom taking the
/// subscription says it works.
async fn connection(
    client: &WecomClient,
    link: &Link,
    tx: &mpsc::UnboundedSender<(String, Box<WecomMessage>)>,
    attempts: &Attempts,
) -> Result<Ended, WecomError> {
    let (sink, mut source) = open(client, link).await?;
    *link.sink.lock().await = Some(sink);
    attempts.connected();
    let every = heartbeat();
    let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    let mut unanswered: u32 = 0;
    loop {
        let next = tokio::select! {
            next = source.next() => next,
            _ = heartbeat.tick() => {
                if unanswered >= MISSED_PINGS {
                    return Ok(Ended::Dropped(format!("{unanswered} pings unanswered")));
                }
                unanswered += 1;
                let frame = ping(&link.req_id(CMD_PING));
                let mut sink = link.sink.lock().await;
                if let Some(sink) = sink.as_mut()
                    && let Err(e) = sink.send(Message::text(frame)).await
                {
                    return Ok(Ended::Dropped(e.to_string()));
                }
                continue;
            }
        };
        let text = match next {
            None => return Ok(Ended::Dropped("closed".into())),
            Some(Err(e)) => return Ok(Ended::Dropped(e.to_string())),
            Some(Ok(Message::Close(_))) => return Ok(Ended::Dropped("closed by WeCom".into())),
            Some(Ok(Message::Text(text))) => text,
            // Protocol pings are answered by the socket itself.
            Some(Ok(_)) => continue,
        };
        let incoming = match parse_frame(&text) {
            Ok(i) => i,
            Err(e) => {
                tracing::warn!("a frame was not understood: {e}");
                continue;
            }
        };
        match incoming {
            Incoming::Message { req_id, message } => {
                // The worker lives as long as the bot is served.
                let _ = tx.send((req_id, message));
            }
            Incoming::Event { eventtype, .. } if eventtype == EVENT_REPLACED => {
                return Err(WecomError::Replaced);
            }
            Incoming::Answer {
                req_id,
                errcode,
                errmsg,
            } => {
                if req_id.starts_with(CMD_PING) {
                    unanswered = 0;
                } else if !link.answered(&req_id, errcode, errmsg) {
                    tracing::debug!(req_id, "an answer no request waits for");
                }
            }
            Incoming::Event { .. } | Incoming::Other => {}
        }
    }
}

/// A WeCom chat, answering one callback.
struct WecomChat<'a> {
    bot: &'a str,
    link: &'a Link,
    req_id: &'a str,
    stream_id: String,
    chat_id: &'a str,
}

impl WecomChat<'_> {
    fn wrap(&self, source: WecomError) -> ServeError {
        ServeError::Wecom {
            bot: self.bot.to_owned(),
            source,
        }
    }
}

impl Chat for WecomChat<'_> {
    async fn typing(&self) {
        let frame = respond_stream(self.req_id, &self.stream_id, THINKING, false);
        if let Err(e) = self.link.request(self.req_id, frame).await {
            tracing::debug!(bot = self.bot, "the thinking line was not shown: {e}");
        }
    }

    async fn send(&self, reply: &Reply) -> Result<(), ServeError> {
        let text = match reply {
            Reply::Plain(text) | Reply::Markdown(text) => text,
        };
        let mut parts = split_bytes(text, WECOM_LIMIT).into_iter();
        let first = parts.next().unwrap_or_default();
        let frame = respond_stream(self.req_id, &self.stream_id, &first, true);
        self.link
            .request(self.req_id, frame)
            .await
            .map_err(|e| self.wrap(e))?;
        for part in parts {
            send_to(self.link, self.chat_id, &part)
                .await
                .map_err(|e| self.wrap(e))?;
        }
        Ok(())
    }
}

/// A Markdown message to a chat, no callback asking.
async fn send_to(link: &Link, chat_id: &str, text: &str) -> Result<(), WecomError> {
    for part in split_bytes(text, WECOM_LIMIT) {
        let req_id = link.req_id(CMD_SEND);
        link.request(&req_id, send_markdown(&req_id, chat_id, &part))
            .await?;
    }
    Ok(())
}

/// A WeCom bot's follow-ups, pushed to their chats on the connection.
struct WecomFollowUps<'a> {
    bot: &'a str,
    link: &'a Link,
}

impl FollowUps for WecomFollowUps<'_> {
    async fn tell(&self, chat_id: &str, text: &str) -> Result<bool, ServeError> {
        if self.link.sink.lock().await.is_none() {
            return Ok(false);
        }
        send_to(self.link, chat_id, text)
            .await
            .map(|()| true)
            .map_err(|source| ServeError::Wecom {
                bot: self.bot.to_owned(),
                source,
            })
    }
}

async fn handle(
    desk: &Desk,
    bot: &str,
    link: &Link,
    req_id: &str,
    message: &WecomMessage,
) -> Result<(), ServeError> {
    // The message's id, the same however often it is delivered.
    let key = if message.msgid.is_empty() {
        req_id
    } else {
        &message.msgid
    };
    let sender = message.from.userid.as_str();
    let inbound = Inbound {
        bot: bot.to_owned(),
        update_id: update_id(key),
        chat_id: message.chat_id().to_owned(),
        group: message.is_group(),
        sender_id: sender.to_owned(),
        sender_label: sender.to_owned(),
        text: message.content(),
    };
    if sender.is_empty() {
        // No one to pair or answer: seen, nothing more.
        desk.bot_skip_update(bot, inbound.update_id).await?;
        return Ok(());
    }
    let chat = WecomChat {
        bot,
        link,
        req_id,
        stream_id: link.req_id("stream"),
        chat_id: message.chat_id(),
    };
    respond(desk, &inbound, &chat).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_address_is_its_websocket() {
        let cases = [
            ("https://relay.example/wecom/", "wss://relay.example/wecom"),
            ("http://127.0.0.1:9000", "ws://127.0.0.1:9000"),
            (
                "wss://openws.work.weixin.qq.com",
                "wss://openws.work.weixin.qq.com",
            ),
            ("ws://127.0.0.1:9/x", "ws://127.0.0.1:9/x"),
        ];
        for (api_url, want) in cases {
            assert_eq!(websocket_url(api_url), want, "{api_url}");
        }
    }
}
