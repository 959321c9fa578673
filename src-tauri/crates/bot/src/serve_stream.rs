//! Serving a DingTalk Stream bot: open a connection, acknowledge every frame as it comes
//! (so DingTalk does not send it again while the desk works), hand each robot message to
//! one worker that answers them in order through the desk's gate, and after a dropped
//! connection open another with a doubling wait. A message DingTalk delivers again (the
//! same `msgId`) is a duplicate at the desk's gate and gets no second answer.
//!
//! One process serves the bot (its lease, [`while_serving`]). A decision made outside
//! the chat is told to it through the chat's latest session webhook while DingTalk says
//! it takes messages, and through the robot API (`oToMessages/batchSend` to the person,
//! `groupMessages/send` to the group, with the app access token) once it expired; a chat
//! this process has not heard from since it started is told once it writes again.

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
    DingtalkClient, DingtalkError, Incoming, RobotMessage, RobotTarget, ack, parse_frame, update_id,
};
use crate::serve::{Attempts, ConnectionEnded as Ended, reconnecting};
use crate::serve::{
    Chat, FOLLOW_UP_EVERY, FollowUps, Reply, ServeError, ServeOptions, respond, send_follow_ups,
    while_serving,
};

/// How each chat this process heard from is reached, by its conversation id.
type Webhooks = Arc<Mutex<HashMap<String, Route>>>;

/// A chat's latest session webhook, until when it takes messages (ms; 0 unsaid), and
/// where the robot API reaches the chat after that.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Route {
    webhook: String,
    expires_ms: i64,
    robot: Option<RobotTarget>,
}

/// How a decision is told to a chat now.
#[derive(Debug, PartialEq, Eq)]
enum Via<'a> {
    Webhook(&'a str),
    Robot(&'a RobotTarget),
    /// Not now: told once the chat writes again.
    Later,
}

/// The webhook while it takes messages, then the robot API where it reaches the chat.
fn via(route: &Route, now_ms: i64) -> Via<'_> {
    if route.expires_ms <= 0 || now_ms < route.expires_ms {
        return Via::Webhook(&route.webhook);
    }
    match &route.robot {
        Some(target) => Via::Robot(target),
        None => Via::Later,
    }
}

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
                        remember(&webhooks, &message, client.client_id());
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

/// Keeps how the chat is reached for the decisions it is owed (`robot_code`, the app's,
/// where the message names no robot).
fn remember(webhooks: &Webhooks, message: &RobotMessage, robot_code: &str) {
    if message.session_webhook.is_empty() || message.conversation_id.is_empty() {
        return;
    }
    if let Ok(mut map) = webhooks.lock() {
        map.insert(
            message.conversation_id.clone(),
            Route {
                webhook: message.session_webhook.clone(),
                expires_ms: message.session_webhook_expired_time,
                robot: RobotTarget::of(message, robot_code),
            },
        );
    }
}

/// A DingTalk bot's follow-ups, through each chat's latest session webhook or, once it
/// expired, the robot API.
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
        let Some(route) = known else {
            return Ok(false);
        };
        match via(&route, self.desk.clock().now().timestamp_millis()) {
            Via::Webhook(webhook) => {
                let chat = DingtalkChat {
                    bot: self.bot,
                    client: self.client,
                    webhook,
                };
                chat.send(&Reply::Markdown(text.to_owned()))
                    .await
                    .map(|()| true)
            }
            Via::Robot(target) => self
                .client
                .send_robot(target, text)
                .await
                .map(|()| true)
                .map_err(|source| ServeError::Dingtalk {
                    bot: self.bot.to_owned(),
                    source,
                }),
            Via::Later => Ok(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_goes_by_the_webhook_while_it_lasts_then_by_the_robot_api() {
        let robot = RobotTarget::Group {
            robot_code: "ding_r".into(),
            conversation_id: "cid1".into(),
        };
        let route = |expires_ms: i64, robot: Option<RobotTarget>| Route {
            webhook: "https://oapi/x?session=s".into(),
            expires_ms,
            robot,
        };
        let now = 1_765_000_000_000;
        let webhook = Via::Webhook("https://oapi/x?session=s");
        let cases = [
            (route(now + 1, Some(robot.clone())), webhook),
            (
                route(0, Some(robot.clone())),
                Via::Webhook("https://oapi/x?session=s"),
            ),
            (route(now, Some(robot.clone())), Via::Robot(&robot)),
            (route(now - 60_000, Some(robot.clone())), Via::Robot(&robot)),
            (route(now - 60_000, None), Via::Later),
        ];
        for (i, (route, want)) in cases.iter().enumerate() {
            assert_eq!(via(route, now), *want, "case {i}");
        }
    }
}
