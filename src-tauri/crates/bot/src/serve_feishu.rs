//! Serving a Feishu bot over its long connection, once this process holds the bot's
//! lease: ask for an endpoint, open the WebSocket, ping at the server's `PingInterval`,
//! answer every data frame at once with `{"code":200}` (so Feishu does not deliver it
//! again while the desk works) and hand each message to one worker that answers them in
//! order through the desk's gate; the worker also tells the chats of decisions made
//! elsewhere. After a dropped connection another is opened with a doubling wait that
//! grows to the server's `ReconnectInterval` at most. A
//! message Feishu delivers again (the same `message_id`) is a duplicate at the desk's
//! gate and gets no second answer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;
use wyckoff_session::Desk;
use wyckoff_session::bot_store::BotInfo;
use wyckoff_session::desk_bots::Inbound;

use crate::dingtalk::update_id;
use crate::feishu::{
    FeishuClient, FeishuError, Frame, Incoming, MessageEvent, Parts, message_event,
};
use crate::serve::{Attempts, ConnectionEnded as Ended, reconnecting};
use crate::serve::{
    Chat, FOLLOW_UP_EVERY, FollowUps, Reply, ServeError, ServeOptions, respond, send_follow_ups,
    while_serving,
};

/// A Feishu client for the bot, with its app credentials from the desk and the
/// settings' proxy.
pub fn client(desk: &Desk, bot: &BotInfo) -> Result<FeishuClient, ServeError> {
    let secret = desk
        .bot_token(&bot.name)
        .ok_or_else(|| ServeError::NoToken(bot.name.clone()))?;
    let proxy = desk.settings().proxy;
    FeishuClient::new(bot.api_url.as_deref(), &secret, proxy.as_deref()).map_err(|source| {
        ServeError::Feishu {
            bot: bot.name.clone(),
            source,
        }
    })
}

/// `wyckoff bot test`: a tenant token, a long-connection endpoint (both check the app's
/// credentials), and the bot's name as Feishu shows it.
pub async fn test(desk: &Desk, bot: &BotInfo) -> Result<String, ServeError> {
    let client = client(desk, bot)?;
    let wrap = |source| ServeError::Feishu {
        bot: bot.name.clone(),
        source,
    };
    client.tenant_token().await.map_err(wrap)?;
    client.endpoint().await.map_err(wrap)?;
    client.bot_name().await.map_err(wrap)
}

/// One Feishu bot, served by this process once it holds the bot's lease (another
/// process serving it, this one stands by until it stops), until `stop`.
pub async fn serve_feishu(
    desk: Arc<Desk>,
    name: String,
    client: FeishuClient,
    options: ServeOptions,
    stop: CancellationToken,
) {
    let front = options.front;
    while_serving(
        &desk,
        &name,
        front,
        &stop,
        serve(&desk, &name, &client, &options, &stop),
    )
    .await;
}

async fn serve(
    desk: &Arc<Desk>,
    name: &str,
    client: &FeishuClient,
    options: &ServeOptions,
    stop: &CancellationToken,
) {
    tracing::info!(bot = %name, app = client.app_id(), "serving (Feishu long connection)");
    let (tx, rx) = mpsc::unbounded_channel::<(String, Box<MessageEvent>)>();
    let worker = tokio::spawn(work(desk.clone(), name.to_owned(), client.clone(), rx));
    listen(client, options, stop, &tx).await;
    worker.abort();
}

/// The long connection, the desk aside: connection after connection until `stop` (or an
/// error that will not pass), each message to the bot handed to `events` with its
/// frame's id as it arrives. The server's `PingInterval` paces the pings and its
/// `ReconnectInterval` is the longest wait between attempts
/// ([`ClientConfig::reconnect_interval`](crate::feishu::ClientConfig::reconnect_interval)).
pub async fn listen(
    client: &FeishuClient,
    options: &ServeOptions,
    stop: &CancellationToken,
    events: &mpsc::UnboundedSender<(String, Box<MessageEvent>)>,
) {
    let attempts = Attempts::default();
    reconnecting(
        client.app_id(),
        options,
        stop,
        &attempts,
        FeishuError::is_transient,
        || connection(client, events, &attempts),
    )
    .await;
}

/// One connection: opened, pinged, read until it ends; a frame arriving says it works.
async fn connection(
    client: &FeishuClient,
    tx: &mpsc::UnboundedSender<(String, Box<MessageEvent>)>,
    attempts: &Attempts,
) -> Result<Ended, FeishuError> {
    let endpoint = client.endpoint().await?;
    attempts.wait_at_most(endpoint.config.reconnect_interval());
    let mut socket = client.connect(&endpoint).await?;
    let mut ping_every = endpoint.config.ping_every();
    let mut parts = Parts::default();
    let mut heard = Instant::now();
    // The SDKs ping at once, then every interval.
    let mut next_ping = tokio::time::Instant::now();
    loop {
        let next = tokio::select! {
            next = socket.next() => next,
            () = tokio::time::sleep_until(next_ping) => {
                // Feishu answers every ping: two intervals of silence is a dead socket.
                if heard.elapsed() > ping_every * 2 + Duration::from_secs(5) {
                    return Ok(Ended::Dropped("no answer to pings".into()));
                }
                let ping = Frame::ping(endpoint.service).to_bytes();
                if let Err(e) = socket.send(Message::Binary(ping.into())).await {
                    return Ok(Ended::Dropped(e.to_string()));
                }
                next_ping = tokio::time::Instant::now() + ping_every;
                continue;
            }
        };
        let bytes = match next {
            None => return Ok(Ended::Dropped("closed".into())),
            Some(Err(e)) => return Ok(Ended::Dropped(e.to_string())),
            Some(Ok(Message::Close(_))) => return Ok(Ended::Dropped("closed by Feishu".into())),
            Some(Ok(Message::Binary(bytes))) => bytes,
            // WebSocket pings are answered by the socket itself; text says nothing here.
            Some(Ok(_)) => continue,
        };
        heard = Instant::now();
        attempts.connected();
        let frame = match Frame::decode_bytes(&bytes) {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!("a frame was not understood: {e}");
                continue;
            }
        };
        let started = Instant::now();
        let incoming = parts.read(&frame, Instant::now());
        match incoming {
            Incoming::Ping => continue,
            Incoming::Pong(config) => {
                if let Some(config) = config {
                    ping_every = config.ping_interval().unwrap_or(ping_every);
                    attempts.wait_at_most(config.reconnect_interval());
                }
                continue;
            }
            Incoming::Event {
                message_id,
                payload,
            } => match message_event(&payload) {
                Ok(Some(event)) => {
                    // The worker lives as long as the bot is served.
                    let _ = tx.send((message_id, Box::new(event)));
                }
                Ok(None) => {}
                Err(e) => tracing::warn!("an event was not understood: {e}"),
            },
            Incoming::Part | Incoming::Other => {}
        }
        let answer = frame.response(started.elapsed().as_millis()).to_bytes();
        if let Err(e) = socket.send(Message::Binary(answer.into())).await {
            return Ok(Ended::Dropped(e.to_string()));
        }
    }
}

/// Answers the messages in order; between them, and every few seconds, tells the chats
/// of decisions made elsewhere (each once: marked told only after the send went through).
async fn work(
    desk: Arc<Desk>,
    name: String,
    client: FeishuClient,
    mut rx: mpsc::UnboundedReceiver<(String, Box<MessageEvent>)>,
) {
    let mut tick = tokio::time::interval(FOLLOW_UP_EVERY);
    loop {
        tokio::select! {
            next = rx.recv() => {
                let Some((frame_id, event)) = next else { return };
                if let Err(e) = handle(&desk, &name, &client, &frame_id, &event).await {
                    tracing::warn!(bot = %name, "a message was not answered: {e}");
                }
            }
            _ = tick.tick() => {}
        }
        let to = FeishuFollowUps {
            bot: &name,
            client: &client,
        };
        send_follow_ups(&desk, &name, &to).await;
    }
}

/// A Feishu bot's follow-ups, to its chats by their `chat_id` (any chat the bot is in
/// can be written to at any time).
struct FeishuFollowUps<'a> {
    bot: &'a str,
    client: &'a FeishuClient,
}

impl FollowUps for FeishuFollowUps<'_> {
    async fn tell(&self, chat_id: &str, text: &str) -> Result<bool, ServeError> {
        let chat = FeishuChat {
            bot: self.bot,
            client: self.client,
            chat_id,
        };
        chat.send(&Reply::Markdown(text.to_owned()))
            .await
            .map(|()| true)
    }
}

/// A Feishu chat: answers go to its `chat_id` through the IM API.
struct FeishuChat<'a> {
    bot: &'a str,
    client: &'a FeishuClient,
    chat_id: &'a str,
}

impl Chat for FeishuChat<'_> {
    // Feishu bots have no typing indicator.
    async fn typing(&self) {}

    async fn send(&self, reply: &Reply) -> Result<(), ServeError> {
        self.client
            .reply(self.chat_id, reply)
            .await
            .map_err(|source| ServeError::Feishu {
                bot: self.bot.to_owned(),
                source,
            })
    }

    fn takes_images(&self) -> bool {
        true
    }

    async fn send_image(
        &self,
        png: &[u8],
        file_name: &str,
        caption: &str,
    ) -> Result<(), ServeError> {
        self.client
            .send_image(self.chat_id, png, file_name, caption)
            .await
            .map_err(|source| ServeError::Feishu {
                bot: self.bot.to_owned(),
                source,
            })
    }
}

async fn handle(
    desk: &Desk,
    bot: &str,
    client: &FeishuClient,
    frame_id: &str,
    event: &MessageEvent,
) -> Result<(), ServeError> {
    // The chat message's id, the same however often it is delivered.
    let key = if event.message.message_id.is_empty() {
        frame_id
    } else {
        &event.message.message_id
    };
    let sender = event.sender();
    let inbound = Inbound {
        bot: bot.to_owned(),
        update_id: update_id(key),
        chat_id: event.message.chat_id.clone(),
        group: event.is_group(),
        sender_id: sender.to_owned(),
        sender_label: sender.to_owned(),
        text: event.text(),
    };
    if sender.is_empty() || event.message.chat_id.is_empty() || event.sender.sender_type == "app" {
        // No one to pair or answer (or an app's own message): seen, nothing more.
        desk.bot_skip_update(bot, inbound.update_id).await?;
        return Ok(());
    }
    let chat = FeishuChat {
        bot,
        client,
        chat_id: &event.message.chat_id,
    };
    respond(desk, &inbound, &chat).await
}
