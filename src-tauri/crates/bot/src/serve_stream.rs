//! Serving a DingTalk Stream bot: open a connection, acknowledge every frame as it comes
//! (so DingTalk does not send it again while the desk works), hand each robot message to
//! one worker that answers them in order through the desk's gate, and after a dropped
//! connection open another with a doubling wait. A message DingTalk delivers again (the
//! same `msgId`) is a duplicate at the desk's gate and gets no second answer.
//!
//! One process serves the bot (its lease, [`while_serving`]). A decision made outside
//! the chat is told to it through the chat's latest session webhook while DingTalk says
//! it takes messages; a chat with none (this process has not heard from it since it
//! started, or its webhook expired) is told once it writes again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;
use wyckoff_session::Desk;
use wyckoff_session::desk_bots::Inbound;

use crate::dingtalk::{
    DingtalkClient, DingtalkError, Incoming, RobotMessage, ack, parse_frame, update_id,
};
use crate::serve::{Attempts, ConnectionEnded as Ended, reconnecting};
use crate::serve::{
    Chat, FOLLOW_UP_EVERY, FollowUps, Reply, ServeError, ServeOptions, respond, send_follow_ups,
    while_serving,
};

/// Each chat's latest session webhook and until when it takes messages (ms; 0 unsaid).
type Webhooks = Arc<Mutex<HashMap<String, (String, i64)>>>;

/// A connection with no frame this long is asked for a pong; with none after another
/// such wait it is taken as dropped.
const IDLE: Duration = Duration::from_secs(90);

/// One DingTalk Stream bot, served by this process once it holds the bot's lease,
/// until `stop`.
pub async fn serve_dingtalk(
    desk: Arc<Desk>,
    name: String,
    client: DingtalkClient,
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
    client: DingtalkClient,
    options: &ServeOptions,
    stop: &CancellationToken,
) {
    tracing::info!(bot = %name, "serving (DingTalk Stream)");
    let (tx, mut rx) = mpsc::unbounded_channel::<(String, Box<RobotMessage>)>();
    let worker = {
        let (desk, name, client) = (desk.clone(), name.clone(), client.clone());
        tokio::spawn(async move {
            let webhooks = Webhooks::default();
            let mut tick = tokio::time::interval(FOLLOW_UP_EVERY);
            loop {
                tokio::select! {
                    next = rx.recv() => {
                        let Some((frame_id, message)) = next else { break };
                        remember(&webhooks, &message);
                        if let Err(e) = handle(&desk, &name, &client, &frame_id, &message).await {
                            tracing::warn!(bot = %name, "a message was not answered: {e}");
                        }
                    }
                    _ = tick.tick() => {}
                }
                let to = DingtalkFollowUps {
                    desk: &desk,
                    bot: &name,
                    client: &client,
                    webhooks: &webhooks,
                };
                send_follow_ups(&desk, &name, &to).await;
            }
        })
    };
    let attempts = Attempts::default();
    reconnecting(
        &name,
        options,
        stop,
        &attempts,
        DingtalkError::is_transient,
        || connection(&client, &tx, &attempts),
    )
    .await;
    worker.abort();
}

/// One connection: opened, read until it ends; a frame arriving says it works.
async fn connection(
    client: &DingtalkClient,
    tx: &mpsc::UnboundedSender<(String, Box<RobotMessage>)>,
    attempts: &Attempts,
) -> Result<Ended, DingtalkError> {
    let endpoint = client.open().await?;
    let mut socket = client.connect(&endpoint).await?;
    let mut pinged = false;
    loop {
        let next = match tokio::time::timeout(IDLE, socket.next()).await {
            Ok(next) => next,
            Err(_) if pinged => return Ok(Ended::Dropped("no answer to a ping".into())),
            Err(_) => {
                pinged = true;
                if let Err(e) = socket.send(Message::Ping(Vec::new().into())).await {
                    return Ok(Ended::Dropped(e.to_string()));
                }
                continue;
            }
        };
        pinged = false;
        let text = match next {
            None => return Ok(Ended::Dropped("closed".into())),
            Some(Err(e)) => return Ok(Ended::Dropped(e.to_string())),
            Some(Ok(Message::Close(_))) => return Ok(Ended::Dropped("closed by DingTalk".into())),
            Some(Ok(Message::Text(text))) => text,
            // Pings are answered by the socket itself; pongs and binary frames say nothing.
            Some(Ok(_)) => continue,
        };
        attempts.connected();
        let (frame, incoming) = match parse_frame(&text) {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!("a frame was not understood: {e}");
                continue;
            }
        };
        if let Err(e) = socket.send(Message::text(ack(&frame, &incoming))).await {
            return Ok(Ended::Dropped(e.to_string()));
        }
        match incoming {
            Incoming::Disconnect => {
                let _ = socket.close(None).await;
                return Ok(Ended::Disconnect);
            }
            Incoming::Robot(message) => {
                // The worker lives as long as the bot is served.
                let _ = tx.send((frame.message_id().to_owned(), message));
            }
            Incoming::Ping | Incoming::Other => {}
        }
    }
}

/// A DingTalk chat: answers go to the message's session webhook.
struct DingtalkChat<'a> {
    bot: &'a str,
    client: &'a DingtalkClient,
    webhook: &'a str,
}

impl Chat for DingtalkChat<'_> {
    async fn typing(&self) {}

    async fn send(&self, reply: &Reply) -> Result<(), ServeError> {
        self.client
            .reply(self.webhook, reply)
            .await
            .map_err(|source| ServeError::Dingtalk {
                bot: self.bot.to_owned(),
                source,
            })
    }
}

async fn handle(
    desk: &Desk,
    bot: &str,
    client: &DingtalkClient,
    frame_id: &str,
    message: &RobotMessage,
) -> Result<(), ServeError> {
    // The chat message's id, the same however often it is delivered.
    let key = if message.msg_id.is_empty() {
        frame_id
    } else {
        &message.msg_id
    };
    let sender = message.sender();
    let inbound = Inbound {
        bot: bot.to_owned(),
        update_id: update_id(key),
        chat_id: message.conversation_id.clone(),
        group: message.is_group(),
        sender_id: sender.to_owned(),
        sender_label: if message.sender_nick.is_empty() {
            sender.to_owned()
        } else {
            message.sender_nick.clone()
        },
        text: message.content().to_owned(),
    };
    if sender.is_empty() || message.session_webhook.is_empty() {
        // No one to pair or answer: seen, nothing more.
        desk.bot_skip_update(bot, inbound.update_id).await?;
        return Ok(());
    }
    let chat = DingtalkChat {
        bot,
        client,
        webhook: &message.session_webhook,
    };
    respond(desk, &inbound, &chat).await
}

/// Keeps the chat's latest session webhook for the decisions it is owed.
fn remember(webhooks: &Webhooks, message: &RobotMessage) {
    if message.session_webhook.is_empty() || message.conversation_id.is_empty() {
        return;
    }
    if let Ok(mut map) = webhooks.lock() {
        map.insert(
            message.conversation_id.clone(),
            (
                message.session_webhook.clone(),
                message.session_webhook_expired_time,
            ),
        );
    }
}

/// A DingTalk bot's follow-ups, through each chat's latest session webhook.
struct DingtalkFollowUps<'a> {
    desk: &'a Desk,
    bot: &'a str,
    client: &'a DingtalkClient,
    webhooks: &'a Webhooks,
}

impl FollowUps for DingtalkFollowUps<'_> {
    async fn tell(&self, chat_id: &str, text: &str) -> Result<bool, ServeError> {
        let known = self
            .webhooks
            .lock()
            .ok()
            .and_then(|map| map.get(chat_id).cloned());
        let Some((webhook, expires_ms)) = known else {
            return Ok(false);
        };
        if expires_ms > 0 && expires_ms <= self.desk.clock().now().timestamp_millis() {
            return Ok(false);
        }
        let chat = DingtalkChat {
            bot: self.bot,
            client: self.client,
            webhook: &webhook,
        };
        chat.send(&Reply::Markdown(text.to_owned()))
            .await
            .map(|()| true)
    }
}
