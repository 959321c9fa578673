//! Serving the bots: each Telegram bot long-polls from the offset the desk keeps, each
//! DingTalk bot holds a Stream connection ([`crate::serve_stream`]), each WeCom bot its
//! long connection ([`crate::serve_wecom`]); every message goes through one gate and
//! command path ([`respond`]: a redelivered one is a duplicate there), and after a
//! dropped connection each tries again with a doubling wait. All serve under one lease
//! ([`while_serving`]) and tell their chats of decisions made elsewhere the same way
//! ([`send_follow_ups`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use wyckoff_session::Desk;
use wyckoff_session::bot_store::{BotInfo, BotKind};
use wyckoff_session::desk_bots::{Admission, BotAnswer, Inbound};

use crate::chart_image::{chart_code, daily_chart_png};
use crate::command::{BotCommand, HELP, parse, prompt};
use crate::dingtalk::{DingtalkClient, DingtalkError};
use crate::format::{answer_text, backoff, pairing_text};
use crate::telegram::{TelegramClient, TelegramError, Update};

/// How the bots are served.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// How long one `getUpdates` waits for a message.
    pub poll: Duration,
    /// The first wait after a failure (doubling after each failure in a row).
    pub retry_base: Duration,
    pub retry_max: Duration,
    /// Which front end serves (`app`, `daemon`, or `cli` for `wyckoff bot run`): the
    /// settings panel names it beside each bot.
    pub front: &'static str,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            poll: Duration::from_secs(25),
            retry_base: Duration::from_secs(1),
            retry_max: Duration::from_secs(60),
            front: "cli",
        }
    }
}

/// How a long connection (DingTalk Stream, Feishu, WeCom) ended when nothing failed on the way.
pub(crate) enum ConnectionEnded {
    /// The platform said it would close it: open another at once.
    Disconnect,
    /// It dropped (closed, failed, went silent).
    Dropped(String),
}

/// What the reconnect loop knows across one bot's connections: how many ended badly in a
/// row, and the longest wait the platform asked for between attempts. The connection
/// updates it while it runs (shared, hence atomics).
#[derive(Debug, Default)]
pub(crate) struct Attempts {
    /// Drops and refused connects in a row: each doubles the next wait.
    failures: AtomicU32,
    /// The platform's own reconnect interval in ms (Feishu's `ReconnectInterval`; 0
    /// unsaid): the doubling stops there instead of at [`ServeOptions::retry_max`].
    ceiling_ms: AtomicU64,
}

impl Attempts {
    /// The connection works (a frame came, a subscription was taken): the next drop
    /// waits the first wait again.
    pub(crate) fn connected(&self) {
        self.failures.store(0, Ordering::Relaxed);
    }

    /// The platform says how long to wait between attempts (`None`: it said nothing
    /// usable, what it said before, or the desk's own longest wait, holds).
    pub(crate) fn wait_at_most(&self, ceiling: Option<Duration>) {
        if let Some(ceiling) = ceiling {
            let ms = u64::try_from(ceiling.as_millis())
                .unwrap_or(u64::MAX)
                .max(1);
            self.ceiling_ms.store(ms, Ordering::Relaxed);
        }
    }

    /// The wait before the next attempt after one more failure, and the failures so far.
    fn next_wait(&self, options: &ServeOptions) -> (Duration, u32) {
        let failures = self.failures.load(Ordering::Relaxed).saturating_add(1);
        self.failures.store(failures, Ordering::Relaxed);
        let ceiling = match self.ceiling_ms.load(Ordering::Relaxed) {
            0 => options.retry_max,
            ms => Duration::from_millis(ms),
        };
        (backoff(failures, options.retry_base, ceiling), failures)
    }
}

/// After a long connection ended, how long to wait before opening the next one (drops
/// and refused connects in a row double the wait, up to the platform's interval or the
/// desk's), or `None` when the error will not pass by itself and the bot stops serving.
pub(crate) fn reconnect_wait<E: std::fmt::Display>(
    bot: &str,
    ended: Result<ConnectionEnded, E>,
    transient: impl Fn(&E) -> bool,
    attempts: &Attempts,
    options: &ServeOptions,
) -> Option<Duration> {
    let next = |what: std::fmt::Arguments<'_>| {
        let (wait, failures) = attempts.next_wait(options);
        tracing::warn!(bot, failures, ?wait, "{what}");
        Some(wait)
    };
    match ended {
        Ok(ConnectionEnded::Disconnect) => {
            tracing::info!(bot, "the platform closes the connection: opening another");
            Some(Duration::ZERO)
        }
        Ok(ConnectionEnded::Dropped(why)) => {
            next(format_args!("the connection dropped ({why}), reconnecting"))
        }
        Err(e) if transient(&e) => next(format_args!("cannot connect, trying again: {e}")),
        Err(e) => {
            tracing::error!(bot, "stopped: {e}");
            None
        }
    }
}

/// A long connection's loop (DingTalk Stream, Feishu, WeCom): `connection` opens one and
/// reads it until it ends (telling `attempts` when it works), then [`reconnect_wait`]
/// says when to open the next; ends on `stop` (in the middle of a connection or a wait
/// too) or on an error that will not pass.
pub(crate) async fn reconnecting<E, F>(
    bot: &str,
    options: &ServeOptions,
    stop: &CancellationToken,
    attempts: &Attempts,
    transient: impl Fn(&E) -> bool,
    mut connection: impl FnMut() -> F,
) where
    E: std::fmt::Display,
    F: Future<Output = Result<ConnectionEnded, E>>,
{
    loop {
        let ended = tokio::select! {
            () = stop.cancelled() => return,
            r = connection() => r,
        };
        let Some(wait) = reconnect_wait(bot, ended, &transient, attempts, options) else {
            return;
        };
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(wait) => {}
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{0}")]
    Desk(Box<wyckoff_session::SessionError>),
    #[error("bot '{0}' has no token: `wyckoff bot secret {0}` (or WYCKOFF_BOT_TOKEN_<NAME>)")]
    NoToken(String),
    #[error(
        "bot '{bot}': {kind} bots cannot be served yet (Telegram, DingTalk, Feishu and WeCom can)"
    )]
    Unsupported { bot: String, kind: &'static str },
    #[error("bot '{bot}': {source}")]
    Telegram {
        bot: String,
        #[source]
        source: TelegramError,
    },
    #[error("bot '{bot}': {source}")]
    Dingtalk {
        bot: String,
        #[source]
        source: DingtalkError,
    },
    #[error("bot '{bot}': {source}")]
    Feishu {
        bot: String,
        #[source]
        source: crate::feishu::FeishuError,
    },
    #[error("bot '{bot}': {source}")]
    Wecom {
        bot: String,
        #[source]
        source: crate::wecom::WecomError,
    },
}

impl From<wyckoff_session::SessionError> for ServeError {
    fn from(e: wyckoff_session::SessionError) -> Self {
        ServeError::Desk(Box::new(e))
    }
}

/// The bot's token (or app credentials) from the desk.
fn token(desk: &Desk, bot: &BotInfo) -> Result<String, ServeError> {
    desk.bot_token(&bot.name)
        .ok_or_else(|| ServeError::NoToken(bot.name.clone()))
}

/// A client for the bot, with its token from the desk.
pub fn telegram_client(
    desk: &Desk,
    bot: &BotInfo,
    poll: Duration,
) -> Result<TelegramClient, ServeError> {
    if bot.kind != BotKind::Telegram {
        return Err(ServeError::Unsupported {
            bot: bot.name.clone(),
            kind: bot.kind.as_str(),
        });
    }
    let token = token(desk, bot)?;
    let proxy = desk.settings().proxy;
    TelegramClient::new(bot.api_url.as_deref(), &token, proxy.as_deref(), poll).map_err(|source| {
        ServeError::Telegram {
            bot: bot.name.clone(),
            source,
        }
    })
}

/// A DingTalk Stream client for the bot, with its app credentials from the desk.
pub fn dingtalk_client(desk: &Desk, bot: &BotInfo) -> Result<DingtalkClient, ServeError> {
    let token = token(desk, bot)?;
    let proxy = desk.settings().proxy;
    DingtalkClient::new(bot.api_url.as_deref(), &token, proxy.as_deref()).map_err(|source| {
        ServeError::Dingtalk {
            bot: bot.name.clone(),
            source,
        }
    })
}

/// Checks the bot's token with its platform: the name the platform knows the bot by
/// (Telegram's username; DingTalk's client id once a connection was granted).
pub async fn test(desk: &Desk, name: &str) -> Result<String, ServeError> {
    let bot = desk.bot(name).await?;
    if bot.kind == BotKind::Feishu {
        return crate::serve_feishu::test(desk, &bot).await;
    }
    if bot.kind == BotKind::Wecom {
        return crate::serve_wecom::test(desk, &bot).await;
    }
    if bot.kind == BotKind::Dingtalk {
        let client = dingtalk_client(desk, &bot)?;
        client.open().await.map_err(|source| ServeError::Dingtalk {
            bot: name.to_owned(),
            source,
        })?;
        return Ok(client.client_id().to_owned());
    }
    let client = telegram_client(desk, &bot, Duration::from_secs(5))?;
    let me = client
        .get_me()
        .await
        .map_err(|source| ServeError::Telegram {
            bot: name.to_owned(),
            source,
        })?;
    Ok(me
        .username
        .or(me.first_name)
        .unwrap_or_else(|| me.id.to_string()))
}

/// Serves every bot with a token (or the `only` ones) until `stop`; a bot that cannot be
/// served is said in the log and the rest go on. Ends when all have ended.
pub async fn serve_all(
    desk: Arc<Desk>,
    only: &[String],
    options: ServeOptions,
    stop: CancellationToken,
) -> Result<usize, ServeError> {
    let mut set = tokio::task::JoinSet::new();
    for summary in desk.bot_list().await? {
        let bot = summary.bot;
        if !only.is_empty() && !only.contains(&bot.name) {
            continue;
        }
        let (desk, options, stop) = (desk.clone(), options.clone(), stop.clone());
        let spawned = match bot.kind {
            BotKind::Dingtalk => dingtalk_client(&desk, &bot).map(|client| {
                set.spawn(crate::serve_stream::serve_dingtalk(
                    desk, bot.name, client, options, stop,
                ));
            }),
            BotKind::Wecom => crate::serve_wecom::client(&desk, &bot).map(|client| {
                set.spawn(crate::serve_wecom::serve_wecom(
                    desk, bot.name, client, options, stop,
                ));
            }),
            BotKind::Feishu => crate::serve_feishu::client(&desk, &bot).map(|client| {
                set.spawn(crate::serve_feishu::serve_feishu(
                    desk, bot.name, client, options, stop,
                ));
            }),
            _ => telegram_client(&desk, &bot, options.poll).map(|client| {
                set.spawn(serve_telegram(desk, bot.name, client, options, stop));
            }),
        };
        if let Err(e) = spawned {
            if only.is_empty() {
                tracing::warn!("{e}");
                continue;
            }
            return Err(e);
        }
    }
    let served = set.len();
    while set.join_next().await.is_some() {}
    Ok(served)
}

/// One Telegram bot, served by this process once it holds the bot's lease (another
/// process serving it, this one stands by until it stops), until `stop`.
pub async fn serve_telegram(
    desk: Arc<Desk>,
    name: String,
    client: TelegramClient,
    options: ServeOptions,
    stop: CancellationToken,
) {
    let front = options.front;
    while_serving(&desk, &name, front, &stop, async {
        poll_telegram(&desk, &name, &client, &options, &stop).await;
    })
    .await;
}

/// Runs `serve` once this process holds `bot`'s lease (waiting, standing by, while
/// another process holds it) and gives the lease back when it ends. Nothing runs when
/// `stop` comes first. Every platform's loop serves through this: one process a bot.
pub(crate) async fn while_serving(
    desk: &Desk,
    bot: &str,
    front: &str,
    stop: &CancellationToken,
    serve: impl Future<Output = ()>,
) {
    if !desk.bot_hold_serving(bot, front, stop).await {
        return;
    }
    serve.await;
    if let Err(e) = desk.bot_release_serving(bot).await {
        tracing::warn!(bot, "the bot's lease was not given back: {e}");
    }
}

/// The long poll: updates handed to the desk, then what the chats are owed of
/// decisions made elsewhere.
async fn poll_telegram(
    desk: &Desk,
    name: &str,
    client: &TelegramClient,
    options: &ServeOptions,
    stop: &CancellationToken,
) {
    tracing::info!(bot = %name, "serving");
    let mut failures: u32 = 0;
    loop {
        let offset = match desk.bot_next_update(name).await {
            Ok(o) => o,
            Err(e) => {
                tracing::error!(bot = %name, "stopped: {e}");
                return;
            }
        };
        let polled = tokio::select! {
            () = stop.cancelled() => return,
            r = client.get_updates(offset, options.poll) => r,
        };
        let wait = match polled {
            Ok(updates) => {
                if failures > 0 {
                    tracing::info!(bot = %name, failures, "reconnected");
                }
                failures = 0;
                for update in updates {
                    if stop.is_cancelled() {
                        return;
                    }
                    if let Err(e) = handle(desk, name, client, update).await {
                        tracing::warn!(bot = %name, "an update was not answered: {e}");
                    }
                }
                send_follow_ups(desk, name, &TelegramFollowUps { bot: name, client }).await;
                continue;
            }
            Err(TelegramError::Unauthorized) => {
                tracing::error!(bot = %name, "{}", TelegramError::Unauthorized);
                return;
            }
            Err(TelegramError::RetryAfter(secs)) => Duration::from_secs(secs),
            Err(e) => {
                failures = failures.saturating_add(1);
                let wait = backoff(failures, options.retry_base, options.retry_max);
                tracing::warn!(bot = %name, failures, ?wait, "polling failed, trying again: {e}");
                wait
            }
        };
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(wait) => {}
        }
    }
}

/// Where a bot's decisions made elsewhere and finished tasks are told: a chat by the id
/// the desk keeps for it (the `chat_id` of its inbound messages).
pub(crate) trait FollowUps {
    /// Sends `text` to the chat: `Ok(false)` when the chat cannot be reached now (the
    /// decision stays untold and is tried again later).
    fn tell(
        &self,
        chat_id: &str,
        text: &str,
    ) -> impl Future<Output = Result<bool, ServeError>> + Send;
}

/// Decisions on the bot's requests made in the app, the CLI or by expiry, and the
/// background tasks its turns started once answered, each told to its chat once: marked
/// told only after a send went through, so a failed one is tried again on the next call.
/// Every platform's loop calls this now and then.
pub(crate) async fn send_follow_ups(desk: &Desk, bot: &str, to: &impl FollowUps) {
    let follow_ups = match desk.bot_follow_ups(bot).await {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!(bot, "decisions for the chats not read: {e}");
            return;
        }
    };
    for f in follow_ups {
        match to.tell(&f.chat_id, &f.text).await {
            Ok(true) => {
                if let Err(e) = desk.bot_follow_up_told(&f.about).await {
                    tracing::warn!(bot, about = %f.about, "sent, not marked: {e}");
                }
            }
            Ok(false) => {
                tracing::debug!(bot, about = %f.about, "the chat cannot be reached yet");
            }
            Err(e) => tracing::warn!(bot, about = %f.about, "a follow-up was not sent: {e}"),
        }
    }
}

/// How often a loop that is not woken by polling (a WebSocket's) looks for decisions to
/// tell its chats.
pub(crate) const FOLLOW_UP_EVERY: Duration = Duration::from_secs(2);

/// A Telegram bot's follow-ups, to its chats by their numeric ids.
struct TelegramFollowUps<'a> {
    bot: &'a str,
    client: &'a TelegramClient,
}

impl FollowUps for TelegramFollowUps<'_> {
    async fn tell(&self, chat_id: &str, text: &str) -> Result<bool, ServeError> {
        let Ok(chat_id) = chat_id.parse::<i64>() else {
            tracing::warn!(bot = self.bot, chat = %chat_id, "not a Telegram chat id");
            return Ok(false);
        };
        self.client
            .send_text(chat_id, text)
            .await
            .map(|()| true)
            .map_err(|source| ServeError::Telegram {
                bot: self.bot.to_owned(),
                source,
            })
    }
}

/// What a chat is sent back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Said as it is (a pairing code, a limit).
    Plain(String),
    /// The model's Markdown, in the platform's dialect.
    Markdown(String),
}

/// One chat on a platform: where the desk's reply goes. Each platform's client gives
/// one per inbound message; the gate and the commands ([`respond`]) are the same for all.
pub(crate) trait Chat {
    /// Shows the chat that an answer is coming (where the platform can).
    fn typing(&self) -> impl Future<Output = ()> + Send;
    fn send(&self, reply: &Reply) -> impl Future<Output = Result<(), ServeError>> + Send;
    /// Whether the platform takes a picture in this chat ([`crate::chart_image`] says
    /// which do and why the others get text only).
    fn takes_images(&self) -> bool {
        false
    }
    /// Sends a PNG with its caption; only called where [`Chat::takes_images`].
    fn send_image(
        &self,
        _png: &[u8],
        _file_name: &str,
        _caption: &str,
    ) -> impl Future<Output = Result<(), ServeError>> + Send {
        async { Ok(()) }
    }
}

/// One inbound message: through the desk's gate, then the command, and the reply sent
/// to its chat. A duplicate or a sender refused a code gets nothing.
pub(crate) async fn respond(
    desk: &Desk,
    inbound: &Inbound,
    chat: &impl Chat,
) -> Result<(), ServeError> {
    match desk.bot_admit(inbound).await? {
        Admission::Duplicate | Admission::PairingFull => return Ok(()),
        Admission::Pairing(pairing) => {
            return chat.send(&Reply::Plain(pairing_text(&pairing))).await;
        }
        Admission::Paired(_) => {}
    }
    let command = parse(&inbound.text);
    let reply = match &command {
        BotCommand::Help => HELP.to_owned(),
        BotCommand::Usage(usage) => usage.clone(),
        BotCommand::New => {
            desk.bot_new_conversation(inbound).await?;
            "好的，下一条消息开始新的对话。".to_owned()
        }
        BotCommand::Approve { id, code } => {
            desk.bot_decide(inbound, id, code.as_deref(), true).await?
        }
        BotCommand::Deny { id, code } => {
            desk.bot_decide(inbound, id, code.as_deref(), false).await?
        }
        other => match prompt(other) {
            Some(prompt) => {
                chat.typing().await;
                let answer = desk.bot_ask(inbound, &prompt).await?;
                chat.send(&Reply::Markdown(answer_text(&answer))).await?;
                // The chart comes after an answered analysis of one stock, never in place
                // of a limit's or a failure's message.
                if let (BotAnswer::Answer { .. }, Some(code)) = (&answer, chart_code(&command))
                    && chat.takes_images()
                {
                    send_chart(desk, code, chat).await;
                }
                return Ok(());
            }
            None => "只支持文字消息。".to_owned(),
        },
    };
    chat.send(&Reply::Markdown(reply)).await
}

/// `code`'s daily chart to the chat, or why there is none. The answer is already sent: a
/// chart that fails to go is said in the log only.
async fn send_chart(desk: &Desk, code: &str, chat: &impl Chat) {
    let sent = match daily_chart_png(desk, code).await {
        Ok(image) => {
            let file_name = format!("{}-{}.png", image.code, image.last_date);
            chat.send_image(&image.png, &file_name, &image.caption)
                .await
        }
        Err(why) => chat.send(&Reply::Plain(why)).await,
    };
    if let Err(e) = sent {
        tracing::warn!(code, "the chart was not sent: {e}");
    }
}

/// A Telegram chat.
struct TelegramChat<'a> {
    bot: &'a str,
    client: &'a TelegramClient,
    chat_id: i64,
}

impl Chat for TelegramChat<'_> {
    async fn typing(&self) {
        let _ = self.client.send_typing(self.chat_id).await;
    }

    async fn send(&self, reply: &Reply) -> Result<(), ServeError> {
        let sent = match reply {
            Reply::Plain(text) => self.client.send_plain(self.chat_id, text).await,
            Reply::Markdown(text) => self.client.send_text(self.chat_id, text).await,
        };
        sent.map_err(|source| ServeError::Telegram {
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
            .send_photo_png(self.chat_id, png, file_name, caption)
            .await
            .map_err(|source| ServeError::Telegram {
                bot: self.bot.to_owned(),
                source,
            })
    }
}

/// One Telegram update: an update without a message from someone is only seen.
async fn handle(
    desk: &Desk,
    bot: &str,
    client: &TelegramClient,
    update: Update,
) -> Result<(), ServeError> {
    let Some(message) = update.message else {
        // Nothing to answer; the offset still moves past it.
        desk.bot_skip_update(bot, update.update_id).await?;
        return Ok(());
    };
    let Some(from) = message.from.as_ref() else {
        desk.bot_skip_update(bot, update.update_id).await?;
        return Ok(());
    };
    let chat_id = message.chat.id;
    let inbound = Inbound {
        bot: bot.to_owned(),
        update_id: update.update_id,
        chat_id: chat_id.to_string(),
        group: message.chat.kind != "private",
        sender_id: from.id.to_string(),
        sender_label: from
            .username
            .clone()
            .or_else(|| from.first_name.clone())
            .unwrap_or_else(|| from.id.to_string()),
        text: message.text.clone().unwrap_or_default(),
    };
    let chat = TelegramChat {
        bot,
        client,
        chat_id,
    };
    respond(desk, &inbound, &chat).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One step of a bot's connections: how one ended (or that one started to work).
    enum Step {
        Works,
        Ends(Result<ConnectionEnded, &'static str>),
    }

    #[test]
    fn drops_and_refusals_double_the_wait_and_a_working_connection_starts_again() {
        use ConnectionEnded::{Disconnect, Dropped};
        use Step::{Ends, Works};
        let options = ServeOptions {
            retry_base: Duration::from_millis(100),
            retry_max: Duration::from_millis(800),
            ..ServeOptions::default()
        };
        let dropped = || Ends(Ok(Dropped("closed".into())));
        let cases: Vec<(Step, Option<u64>)> = vec![
            (dropped(), Some(100)),
            (Ends(Err("busy")), Some(200)),
            (dropped(), Some(400)),
            (dropped(), Some(800)),
            (dropped(), Some(800)),
            // The platform closing a connection on purpose: another at once, no failure.
            (Ends(Ok(Disconnect)), Some(0)),
            (dropped(), Some(800)),
            (Works, None),
            (dropped(), Some(100)),
            (Ends(Err("refused")), None),
        ];
        let attempts = Attempts::default();
        for (i, (step, want)) in cases.into_iter().enumerate() {
            let ended = match step {
                Works => {
                    attempts.connected();
                    continue;
                }
                Ends(ended) => ended,
            };
            let got = reconnect_wait("b", ended, |e| *e != "refused", &attempts, &options);
            assert_eq!(got, want.map(Duration::from_millis), "step {i}");
        }
    }

    #[test]
    fn the_platforms_interval_is_the_longest_wait_once_it_names_one() {
        let options = ServeOptions {
            retry_base: Duration::from_millis(100),
            retry_max: Duration::from_millis(800),
            ..ServeOptions::default()
        };
        let attempts = Attempts::default();
        let dropped = || {
            reconnect_wait(
                "b",
                Ok::<_, &str>(ConnectionEnded::Dropped("closed".into())),
                |_| true,
                &attempts,
                &options,
            )
            .map(|d| d.as_millis())
        };
        assert_eq!(dropped(), Some(100));
        attempts.wait_at_most(Some(Duration::from_millis(300)));
        assert_eq!(dropped(), Some(200));
        assert_eq!(dropped(), Some(300));
        // Saying nothing keeps what the platform said before.
        attempts.wait_at_most(None);
        assert_eq!(dropped(), Some(300));
        // Longer than the desk's own longest wait: the platform's holds.
        attempts.wait_at_most(Some(Duration::from_secs(2)));
        assert_eq!(dropped(), Some(1600));
        assert_eq!(dropped(), Some(2000));
    }
}
