//! Channels and the outbox in `wyckoff.db`, and the sends.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::SqlitePool;

use wyckoff_config::PushSecret;

use crate::email::{self, EmailSettings};
use crate::events::{self, EventsError, PushEvent};
use crate::policy::{self, Verdict};
use crate::render::{self, Credentials, split};
use crate::secret::{self, SecretIn, mask, split_pasted};
use crate::target::{UrlError, check_url, pinned_client};

/// Outbox rows written by one INSERT (5 bound values a row).
const OUTBOX_ROWS_A_STATEMENT: usize = 1_000;

/// Characters of a channel's answer kept with a row.
const ANSWER_CHARS: usize = 300;
/// Bytes of a channel's answer read at most: enough for any robot's verdict, and a
/// channel answering without end cannot fill the memory.
pub const ANSWER_BYTES: usize = 64 * 1024;
/// The header every HTTP send carries the row's delivery id in.
pub const DELIVERY_HEADER: &str = "X-Wyckoff-Delivery";
/// Room kept in each part of a robot's text for the delivery id's footer.
const FOOTER_ROOM: usize = 64;
/// How long a process holds a row it is sending before another may take it.
const CLAIM: TimeDelta = TimeDelta::seconds(120);

#[derive(Debug, thiserror::Error)]
pub enum PushError {
    #[error(transparent)]
    Url(#[from] UrlError),
    #[error("a channel name is 1–40 letters, digits, '-' or '_': '{0}'")]
    BadName(String),
    #[error("a push channel named '{0}' already exists")]
    Exists(String),
    #[error("no push channel named '{0}' (see `wyckoff push list`)")]
    NotFound(String),
    #[error("{0} channels need --url")]
    NeedsUrl(&'static str),
    #[error("a Telegram channel needs --chat-id")]
    NeedsChatId,
    #[error("e-mail channel: {0}")]
    Email(String),
    #[error(transparent)]
    Events(#[from] EventsError),
    #[error(
        "the URL holds the channel's key: it is kept in the keychain, not in the URL (pass the URL through `split_pasted` first)"
    )]
    KeyInUrl,
    #[error(
        "push channels '{name}' and '{other}' would share the environment variable {var}: choose another name"
    )]
    EnvClash {
        name: String,
        other: String,
        var: String,
    },
    #[error("only a generic webhook has a secret header or query parameter")]
    SecretInNotWebhook,
    #[error("'{0}' is not an HTTP header name")]
    BadHeader(String),
    #[error("stored push {what} is damaged: {why}")]
    Corrupt { what: String, why: String },
    #[error("push store: {0}")]
    Db(#[from] sqlx::Error),
    #[error("push store migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

impl PushError {
    /// The user asked for something that cannot be done (nothing changed).
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            PushError::Url(_)
                | PushError::BadName(_)
                | PushError::Exists(_)
                | PushError::NotFound(_)
                | PushError::NeedsUrl(_)
                | PushError::NeedsChatId
                | PushError::Email(_)
                | PushError::Events(_)
                | PushError::KeyInUrl
                | PushError::EnvClash { .. }
                | PushError::SecretInNotWebhook
                | PushError::BadHeader(_)
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelKind {
    /// A JSON POST of the message to a URL.
    Webhook,
    /// 企业微信 group robot (markdown).
    Wecom,
    /// 钉钉 custom robot (markdown, signed when a secret is set).
    Dingtalk,
    /// 飞书 custom bot (text, signed when a secret is set).
    Feishu,
    /// Telegram bot `sendMessage`.
    Telegram,
    /// E-mail over SMTP with TLS.
    Email,
}

impl ChannelKind {
    pub const ALL: [ChannelKind; 6] = [
        ChannelKind::Webhook,
        ChannelKind::Wecom,
        ChannelKind::Dingtalk,
        ChannelKind::Feishu,
        ChannelKind::Telegram,
        ChannelKind::Email,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ChannelKind::Webhook => "webhook",
            ChannelKind::Wecom => "wecom",
            ChannelKind::Dingtalk => "dingtalk",
            ChannelKind::Feishu => "feishu",
            ChannelKind::Telegram => "telegram",
            ChannelKind::Email => "email",
        }
    }

    pub fn parse(text: &str) -> Option<ChannelKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// Where a channel's secrets come from (the keychain, or the environment headless); the
/// outbox never stores them.
pub trait ChannelSecrets: Send + Sync {
    /// The robot's key / access token / hook token, or the bot token.
    fn token(&self, channel: &str) -> Option<String>;
    /// DingTalk's or Feishu's signing secret, when signing is on.
    fn sign_secret(&self, channel: &str) -> Option<String>;
}

/// No secrets at all (a webhook needs none).
pub struct NoSecrets;

impl ChannelSecrets for NoSecrets {
    fn token(&self, _channel: &str) -> Option<String> {
        None
    }
    fn sign_secret(&self, _channel: &str) -> Option<String> {
        None
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Channel {
    pub name: String,
    pub kind: ChannelKind,
    /// The webhook's URL, or the robot API's base address (the official one unless given).
    pub url: String,
    pub allow_private: bool,
    /// Telegram's chat.
    pub chat_id: Option<String>,
    /// An e-mail channel's sender and recipients.
    pub email: Option<EmailSettings>,
    /// What it is sent (alerts unless the user said otherwise).
    pub events: Vec<PushEvent>,
    /// A generic webhook's secret placement (`None`: `Authorization: Bearer …` when a
    /// secret is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_in: Option<SecretIn>,
    pub created_at: String,
}

/// A stored channel that cannot be read (skipped by every send, named where it shows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DamagedChannel {
    pub name: String,
    pub why: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutboxStatus {
    Pending,
    Sent,
    Failed,
}

impl OutboxStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            OutboxStatus::Pending => "pending",
            OutboxStatus::Sent => "sent",
            OutboxStatus::Failed => "failed",
        }
    }

    fn parse(text: &str) -> Option<OutboxStatus> {
        [
            OutboxStatus::Pending,
            OutboxStatus::Sent,
            OutboxStatus::Failed,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

/// One message for one channel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutboxRow {
    pub id: i64,
    pub channel: String,
    pub alert_id: Option<i64>,
    pub body: Value,
    pub status: OutboxStatus,
    pub attempts: u32,
    pub next_attempt_at: String,
    /// The last failure: the channel's status and answer, or why nothing answered.
    pub last_error: Option<String>,
    pub created_at: String,
    pub sent_at: Option<String>,
    /// The id every attempt carries ([`DELIVERY_HEADER`], `delivery_id` in a webhook's
    /// body, the footer of a robot's text), so a receiver can tell a repeat.
    pub delivery_id: String,
    /// When a send started that has no recorded outcome: in flight, or interrupted (the
    /// message may have arrived; the next attempt repeats it under the same id).
    pub in_flight_since: Option<String>,
}

/// One attempt of [`Outbox::deliver_due`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    pub id: i64,
    pub channel: String,
    pub alert_id: Option<i64>,
    pub status: OutboxStatus,
    pub attempts: u32,
    pub error: Option<String>,
    pub delivery_id: String,
    /// An earlier send of this row was interrupted before its outcome was recorded, so
    /// the channel may now have it twice (under the same delivery id).
    pub repeat: bool,
}

/// What a channel answered to a test message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestOutcome {
    pub channel: String,
    /// The HTTP status; `None` when nothing answered.
    pub http_status: Option<u16>,
    /// The start of the answer, or why nothing answered.
    pub answer: String,
    pub ok: bool,
}

#[derive(Clone)]
pub struct Outbox {
    pool: SqlitePool,
    timeout: Duration,
    secrets: Arc<dyn ChannelSecrets>,
}

type RowTuple = (
    i64,
    String,
    Option<i64>,
    String,
    String,
    i64,
    String,
    Option<String>,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// A query of outbox rows as [`RowTuple`]s: the columns, then `$tail`.
macro_rules! select_rows {
    ($tail:literal) => {
        concat!(
            "SELECT id, channel, alert_id, body_json, status, attempts, next_attempt_at, last_error, created_at, sent_at, delivery_id, sending_since FROM push_outbox ",
            $tail
        )
    };
}

fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// `limit` less the room the delivery id's footer takes in a robot's text.
fn footer_room(limit: render::Limit) -> render::Limit {
    match limit {
        render::Limit::Bytes(n) => render::Limit::Bytes(n.saturating_sub(FOOTER_ROOM)),
        render::Limit::Chars(n) => render::Limit::Chars(n.saturating_sub(FOOTER_ROOM)),
        render::Limit::None => render::Limit::None,
    }
}

fn valid_name(name: &str) -> bool {
    (1..=40).contains(&name.chars().count())
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
}

fn snippet(text: &str) -> String {
    text.trim().chars().take(ANSWER_CHARS).collect()
}

fn row_of(t: RowTuple) -> Result<OutboxRow, PushError> {
    let (
        id,
        channel,
        alert_id,
        body,
        status,
        attempts,
        next,
        last_error,
        created,
        sent,
        delivery_id,
        sending_since,
    ) = t;
    Ok(OutboxRow {
        id,
        channel,
        alert_id,
        body: serde_json::from_str(&body).map_err(|e| PushError::Corrupt {
            what: format!("outbox row {id}"),
            why: e.to_string(),
        })?,
        status: OutboxStatus::parse(&status).ok_or_else(|| PushError::Corrupt {
            what: format!("outbox row {id}"),
            why: format!("status '{status}'"),
        })?,
        attempts: u32::try_from(attempts).unwrap_or(0),
        next_attempt_at: next,
        last_error,
        created_at: created,
        sent_at: sent,
        // Rows queued before delivery ids existed got one in the migration.
        delivery_id: delivery_id.unwrap_or_else(|| format!("row-{id}")),
        in_flight_since: sending_since,
    })
}

/// `message` as `channel` receives it with `delivery_id`: a field of a webhook's JSON, the
/// footer of the text a person reads (robots, e-mail).
fn with_delivery_id(kind: ChannelKind, message: &Value, delivery_id: &str) -> Value {
    let mut out = message.clone();
    if kind == ChannelKind::Webhook {
        if let Some(map) = out.as_object_mut() {
            map.insert("delivery_id".into(), Value::String(delivery_id.to_owned()));
        }
    } else if let Some(text) = out.get("text").and_then(Value::as_str) {
        out["text"] = Value::String(format!("{text}\n\nWyckoff delivery {delivery_id}"));
    }
    out
}

/// The start of a response's body: at most [`ANSWER_BYTES`] are read, the rest is left
/// unread (the connection is dropped).
async fn read_capped(mut resp: reqwest::Response) -> String {
    let mut bytes: Vec<u8> = Vec::new();
    while bytes.len() < ANSWER_BYTES {
        match resp.chunk().await {
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    bytes.truncate(ANSWER_BYTES);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// What one send got: the status and the start of the answer, or why nothing answered
/// (never the URL: it can hold the token), with every secret of the channel masked.
async fn post(
    channel: &Channel,
    creds: &Credentials,
    message: &Value,
    delivery_id: &str,
    now: DateTime<Utc>,
    timeout: Duration,
) -> (Verdict, Option<u16>, String) {
    let (verdict, status, answer) =
        post_unmasked(channel, creds, message, delivery_id, now, timeout).await;
    let secrets: Vec<&str> = [creds.token.as_deref(), creds.sign_secret.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    (verdict, status, mask(&answer, &secrets))
}

async fn post_unmasked(
    channel: &Channel,
    creds: &Credentials,
    message: &Value,
    delivery_id: &str,
    now: DateTime<Utc>,
    timeout: Duration,
) -> (Verdict, Option<u16>, String) {
    let message = with_delivery_id(channel.kind, message, delivery_id);
    if channel.kind == ChannelKind::Email {
        let Some(settings) = &channel.email else {
            return (
                Verdict::Permanent,
                None,
                "no sender or recipient set".into(),
            );
        };
        return email::send(
            &channel.url,
            channel.allow_private,
            settings,
            creds.token.as_deref(),
            &message,
            delivery_id,
            timeout,
        )
        .await;
    }
    let (mut url, body) = match render::request(
        channel.kind,
        &channel.url,
        creds,
        &message,
        now.timestamp_millis(),
    ) {
        Ok(r) => r,
        Err(e) => return (Verdict::Permanent, None, e.to_string()),
    };
    let mut header: Option<(String, String)> = None;
    if channel.kind == ChannelKind::Webhook
        && let Some(token) = &creds.token
    {
        match &channel.secret_in {
            Some(SecretIn::Query(name)) => {
                url.query_pairs_mut().append_pair(name, token);
            }
            Some(SecretIn::Header(name)) => header = Some((name.clone(), token.clone())),
            None => header = Some(("Authorization".into(), format!("Bearer {token}"))),
        }
    }
    let client = match pinned_client(&url, channel.allow_private, timeout).await {
        Ok(c) => c,
        Err(e) => return (Verdict::Retry, None, e.to_string()),
    };
    let mut request = client
        .post(url)
        .header(DELIVERY_HEADER, delivery_id)
        .json(&body);
    if let Some((name, value)) = header {
        request = request.header(name, value);
    }
    match request.send().await {
        Ok(resp) => {
            let status = resp.status().as_u16();
            let text = read_capped(resp).await;
            let verdict = render::verdict(channel.kind, Some(status), &text);
            (verdict, Some(status), snippet(&text))
        }
        Err(e) if e.is_timeout() => (
            Verdict::Retry,
            None,
            format!("no answer within {timeout:?}"),
        ),
        Err(e) if e.is_builder() => (
            Verdict::Permanent,
            None,
            format!("cannot build the request: {}", e.without_url()),
        ),
        Err(e) => (
            Verdict::Retry,
            None,
            format!("cannot reach the channel: {}", e.without_url()),
        ),
    }
}

impl Outbox {
    /// Uses the shared `wyckoff.db` pool (runs this crate's migrations); each send waits
    /// at most `timeout`.
    pub async fn new(pool: SqlitePool, timeout: Duration) -> Result<Outbox, PushError> {
        let mut migrator = sqlx::migrate!("./migrations");
        migrator.set_ignore_missing(true);
        migrator.run(&pool).await?;
        Ok(Outbox {
            pool,
            timeout,
            secrets: Arc::new(NoSecrets),
        })
    }

    /// Reads channel tokens and signing secrets from `secrets`.
    pub fn with_secrets(mut self, secrets: Arc<dyn ChannelSecrets>) -> Outbox {
        self.secrets = secrets;
        self
    }

    fn credentials(&self, channel: &Channel) -> Credentials {
        Credentials {
            token: self.secrets.token(&channel.name),
            sign_secret: self.secrets.sign_secret(&channel.name),
            chat_id: channel.chat_id.clone(),
        }
    }

    /// Adds a channel: `url` is the webhook's address, or for a robot its API base (the
    /// official one when `None`). The user-facing rule that only a generic webhook may
    /// reach a private address is the caller's (the CLI refuses the flag for other kinds);
    /// tests point robots at local servers with it.
    pub async fn add_channel(
        &self,
        name: &str,
        kind: ChannelKind,
        url: Option<&str>,
        allow_private: bool,
        chat_id: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Channel, PushError> {
        let name = name.trim();
        if !valid_name(name) {
            return Err(PushError::BadName(name.to_owned()));
        }
        if kind == ChannelKind::Email {
            return Err(PushError::Email(
                "an e-mail channel needs its sender and recipients (add_email_channel)".into(),
            ));
        }
        let url = match url.or(kind.default_base()) {
            Some(u) => check_url(u, allow_private)?,
            None => return Err(PushError::NeedsUrl(kind.as_str())),
        };
        // The stored URL is shown (`push list`) and is no place for a key.
        if split_pasted(kind, url.as_str(), None).1.is_some() {
            return Err(PushError::KeyInUrl);
        }
        self.refuse_env_clash(name).await?;
        let chat_id = chat_id.map(str::trim).filter(|c| !c.is_empty());
        if kind == ChannelKind::Telegram && chat_id.is_none() {
            return Err(PushError::NeedsChatId);
        }
        let done = sqlx::query(
            "INSERT INTO push_channels (name, kind, url, allow_private, chat_id, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(kind.as_str())
        .bind(url.as_str())
        .bind(i64::from(allow_private))
        .bind(chat_id)
        .bind(stamp(now))
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(PushError::Exists(name.to_owned()));
        }
        self.channel(name).await
    }

    /// Adds an e-mail channel: `url` is `smtps://host[:465]` or `smtp://host[:587]`
    /// (STARTTLS); the SMTP password is the channel's token in the keychain.
    pub async fn add_email_channel(
        &self,
        name: &str,
        url: &str,
        allow_private: bool,
        settings: &EmailSettings,
        now: DateTime<Utc>,
    ) -> Result<Channel, PushError> {
        let name = name.trim();
        if !valid_name(name) {
            return Err(PushError::BadName(name.to_owned()));
        }
        let url = email::check_smtp_url(url, allow_private)?;
        email::check_settings(settings).map_err(PushError::Email)?;
        self.refuse_env_clash(name).await?;
        let done = sqlx::query(
            "INSERT INTO push_channels (name, kind, url, allow_private, email_json, created_at) VALUES (?, 'email', ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(url.as_str())
        .bind(i64::from(allow_private))
        .bind(serde_json::to_string(settings).map_err(|e| PushError::Email(e.to_string()))?)
        .bind(stamp(now))
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(PushError::Exists(name.to_owned()));
        }
        self.channel(name).await
    }

    /// A channel's secrets are found under an environment variable made of its name in
    /// capitals with every other character `_`: two names that make the same one would
    /// read each other's secrets, so the second is refused.
    async fn refuse_env_clash(&self, name: &str) -> Result<(), PushError> {
        let var = |n: &str| {
            PushSecret {
                channel: n.to_owned(),
                sign: false,
            }
            .env_var()
        };
        let mine = var(name);
        let names: Vec<(String,)> = sqlx::query_as("SELECT name FROM push_channels")
            .fetch_all(&self.pool)
            .await?;
        match names
            .into_iter()
            .find(|(other,)| other != name && var(other) == mine)
        {
            Some((other,)) => Err(PushError::EnvClash {
                name: name.to_owned(),
                other,
                var: mine,
            }),
            None => Ok(()),
        }
    }

    /// Sets where a generic webhook sends its secret (`None`: `Authorization: Bearer`).
    pub async fn set_secret_in(
        &self,
        name: &str,
        secret_in: Option<SecretIn>,
    ) -> Result<Channel, PushError> {
        let channel = self.channel(name).await?;
        if let Some(s) = &secret_in {
            if channel.kind != ChannelKind::Webhook {
                return Err(PushError::SecretInNotWebhook);
            }
            if let SecretIn::Header(h) = s
                && !secret::valid_header(h)
            {
                return Err(PushError::BadHeader(h.clone()));
            }
            if let SecretIn::Query(q) = s
                && q.trim().is_empty()
            {
                return Err(PushError::BadHeader(q.clone()));
            }
        }
        sqlx::query("UPDATE push_channels SET secret_in = ? WHERE name = ?")
            .bind(secret_in.as_ref().map(SecretIn::stored))
            .bind(&channel.name)
            .execute(&self.pool)
            .await?;
        self.channel(&channel.name).await
    }

    pub async fn channel(&self, name: &str) -> Result<Channel, PushError> {
        let name = name.trim();
        let (good, damaged) = self.channels_checked().await?;
        if let Some(d) = damaged.into_iter().find(|d| d.name == name) {
            return Err(PushError::Corrupt {
                what: format!("channel {}", d.name),
                why: d.why,
            });
        }
        good.into_iter()
            .find(|c| c.name == name)
            .ok_or_else(|| PushError::NotFound(name.to_owned()))
    }

    /// Every channel that can be read; a damaged row is skipped (and logged by name), so
    /// it stops no other channel. [`Outbox::channels_checked`] names them too.
    pub async fn channels(&self) -> Result<Vec<Channel>, PushError> {
        let (good, damaged) = self.channels_checked().await?;
        for d in &damaged {
            tracing::warn!(channel = %d.name, why = %d.why, "a stored push channel is damaged and skipped");
        }
        Ok(good)
    }

    /// Every channel that can be read, and every stored one that cannot with why.
    pub async fn channels_checked(&self) -> Result<(Vec<Channel>, Vec<DamagedChannel>), PushError> {
        type Row = (
            String,
            String,
            String,
            i64,
            Option<String>,
            Option<String>,
            String,
            Option<String>,
            String,
        );
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT name, kind, url, allow_private, chat_id, email_json, events, secret_in, created_at FROM push_channels ORDER BY name",
        )
        .fetch_all(&self.pool)
        .await?;
        let mut good = Vec::new();
        let mut damaged = Vec::new();
        for (name, kind, url, allow_private, chat_id, email, events, secret_in, created_at) in rows
        {
            let read = || -> Result<Channel, String> {
                let kind = ChannelKind::parse(&kind).ok_or_else(|| format!("kind '{kind}'"))?;
                let email = email
                    .as_deref()
                    .map(serde_json::from_str::<EmailSettings>)
                    .transpose()
                    .map_err(|e| format!("e-mail settings: {e}"))?;
                if kind == ChannelKind::Email && email.is_none() {
                    return Err("an e-mail channel without its addresses".into());
                }
                let secret_in = match secret_in.as_deref() {
                    None => None,
                    Some(t) => Some(
                        SecretIn::parse_stored(t)
                            .ok_or_else(|| format!("secret placement '{t}'"))?,
                    ),
                };
                Ok(Channel {
                    name: name.clone(),
                    kind,
                    url: url.clone(),
                    allow_private: allow_private != 0,
                    chat_id: chat_id.clone(),
                    email,
                    events: events::stored_events(&events),
                    secret_in,
                    created_at: created_at.clone(),
                })
            };
            match read() {
                Ok(c) => good.push(c),
                Err(why) => damaged.push(DamagedChannel { name, why }),
            }
        }
        Ok((good, damaged))
    }

    /// Removes a channel; its rows still pending fail at their next attempt.
    pub async fn remove_channel(&self, name: &str) -> Result<(), PushError> {
        let done = sqlx::query("DELETE FROM push_channels WHERE name = ?")
            .bind(name.trim())
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(PushError::NotFound(name.trim().to_owned()));
        }
        Ok(())
    }

    /// Sets which events a channel is sent (at least one).
    pub async fn set_events(
        &self,
        name: &str,
        events: Vec<PushEvent>,
    ) -> Result<Channel, PushError> {
        let events = events::normalise(events)?;
        let done = sqlx::query("UPDATE push_channels SET events = ? WHERE name = ?")
            .bind(events::events_text(&events))
            .bind(name.trim())
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(PushError::NotFound(name.trim().to_owned()));
        }
        self.channel(name).await
    }

    /// Queues a fired alert's `body` for every channel that takes alerts (see
    /// [`Outbox::enqueue_event`]).
    pub async fn enqueue_all(
        &self,
        alert_id: Option<i64>,
        body: &Value,
        now: DateTime<Utc>,
    ) -> Result<Vec<String>, PushError> {
        self.enqueue_for(PushEvent::Alerts, alert_id, body, now)
            .await
    }

    /// Queues `body` (its `text` is what robots show) for every channel that takes
    /// `event`, split into numbered parts where a channel's limit is shorter, one row per
    /// part; returns the channels' names (none: nothing queued).
    pub async fn enqueue_event(
        &self,
        event: PushEvent,
        body: &Value,
        now: DateTime<Utc>,
    ) -> Result<Vec<String>, PushError> {
        self.enqueue_for(event, None, body, now).await
    }

    async fn enqueue_for(
        &self,
        event: PushEvent,
        alert_id: Option<i64>,
        body: &Value,
        now: DateTime<Utc>,
    ) -> Result<Vec<String>, PushError> {
        let (channels, _) = self.channels_for(event).await?;
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        Outbox::enqueue_on(&mut tx, &channels, alert_id, body, now).await?;
        tx.commit().await?;
        Ok(channels.into_iter().map(|c| c.name).collect())
    }

    /// The channels that take `event`, and every damaged channel row (which takes
    /// nothing: it cannot be read). The damaged ones are logged by name.
    pub async fn channels_for(
        &self,
        event: PushEvent,
    ) -> Result<(Vec<Channel>, Vec<DamagedChannel>), PushError> {
        let (good, damaged) = self.channels_checked().await?;
        for d in &damaged {
            tracing::warn!(channel = %d.name, why = %d.why, "a stored push channel is damaged and skipped");
        }
        let takes = good
            .into_iter()
            .filter(|c| c.events.contains(&event))
            .collect();
        Ok((takes, damaged))
    }

    /// Queues `body` for each of `channels` on `conn`, inside the caller's transaction (so
    /// what the body reports and its rows are written together or not at all): one row per
    /// part where a channel's limit is shorter than the text, each with its own delivery id.
    pub async fn enqueue_on(
        conn: &mut sqlx::SqliteConnection,
        channels: &[Channel],
        alert_id: Option<i64>,
        body: &Value,
        now: DateTime<Utc>,
    ) -> Result<(), PushError> {
        Self::enqueue_many_on(conn, channels, &[(alert_id, body.clone())], now).await
    }

    /// [`Outbox::enqueue_on`] for many bodies, their rows written a few hundred a
    /// statement, in order.
    pub async fn enqueue_many_on(
        conn: &mut sqlx::SqliteConnection,
        channels: &[Channel],
        bodies: &[(Option<i64>, Value)],
        now: DateTime<Utc>,
    ) -> Result<(), PushError> {
        let mut rows: Vec<(&str, Option<i64>, String)> = Vec::new();
        for (alert_id, body) in bodies {
            let text = body.get("text").and_then(Value::as_str).unwrap_or_default();
            for channel in channels {
                let parts = split(text, footer_room(channel.kind.limit()));
                for part in &parts {
                    let mut row = body.clone();
                    if parts.len() > 1 {
                        row["text"] = Value::String(part.clone());
                    }
                    rows.push((&channel.name, *alert_id, row.to_string()));
                }
            }
        }
        let at = stamp(now);
        for chunk in rows.chunks(OUTBOX_ROWS_A_STATEMENT) {
            let mut insert = sqlx::QueryBuilder::new(
                "INSERT INTO push_outbox (channel, alert_id, body_json, status, attempts, next_attempt_at, created_at, delivery_id) ",
            );
            insert.push_values(chunk, |mut row, (channel, alert_id, body)| {
                row.push_bind(*channel)
                    .push_bind(*alert_id)
                    .push_bind(body)
                    .push("'pending'")
                    .push("0")
                    .push_bind(&at)
                    .push_bind(&at)
                    .push("lower(hex(randomblob(16)))");
            });
            insert.build().execute(&mut *conn).await?;
        }
        Ok(())
    }

    /// Every row, oldest first.
    pub async fn rows(&self) -> Result<Vec<OutboxRow>, PushError> {
        let rows: Vec<RowTuple> = sqlx::query_as(select_rows!("ORDER BY id"))
            .fetch_all(&self.pool)
            .await?;
        rows.into_iter().map(row_of).collect()
    }

    /// Sends every pending row due at `now` (those of earlier processes too) and records
    /// each outcome: sent; retried after the backoff; failed for good with the channel's
    /// answer (a 4xx, a removed channel, or too many retries).
    pub async fn deliver_due(&self, now: DateTime<Utc>) -> Result<Vec<Delivery>, PushError> {
        let due: Vec<RowTuple> = sqlx::query_as(select_rows!(
            "WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY id"
        ))
        .bind(stamp(now))
        .fetch_all(&self.pool)
        .await?;
        let (channels, damaged) = self.channels_checked().await?;
        let mut out = Vec::new();
        for row in due {
            let row = match row_of(row) {
                Ok(r) => r,
                // One unreadable row stops no other.
                Err(e) => {
                    tracing::warn!(error = %e, "an outbox row is damaged and skipped");
                    continue;
                }
            };
            // Claim it (a second process delivering at the same moment skips it) and mark
            // it in flight before anything is sent: if this process dies before the
            // outcome is recorded, the next attempt knows the channel may have it already.
            let claimed = sqlx::query(
                "UPDATE push_outbox SET next_attempt_at = ?, sending_since = ? WHERE id = ? AND status = 'pending' AND next_attempt_at = ?",
            )
            .bind(stamp(now + CLAIM))
            .bind(stamp(now))
            .bind(row.id)
            .bind(&row.next_attempt_at)
            .execute(&self.pool)
            .await?;
            if claimed.rows_affected() == 0 {
                continue;
            }
            let repeat = row.in_flight_since.is_some();
            if let Some(since) = &row.in_flight_since {
                tracing::warn!(
                    row = row.id,
                    channel = %row.channel,
                    delivery_id = %row.delivery_id,
                    since = %since,
                    "a send of this message was interrupted before its outcome was known; sending it again under the same delivery id"
                );
            }
            let attempts = row.attempts + 1;
            let broken = damaged.iter().find(|d| d.name == row.channel);
            let (verdict, error) = match channels.iter().find(|c| c.name == row.channel) {
                // Kept for a later attempt: the row may be mended.
                None if broken.is_some() => (
                    Verdict::Retry,
                    broken.map(|d| format!("the channel '{}' is damaged: {}", d.name, d.why)),
                ),
                None => (
                    Verdict::Permanent,
                    Some(format!("the channel '{}' was removed", row.channel)),
                ),
                Some(channel) => {
                    let creds = self.credentials(channel);
                    let (verdict, status, answer) = post(
                        channel,
                        &creds,
                        &row.body,
                        &row.delivery_id,
                        now,
                        self.timeout,
                    )
                    .await;
                    let error = match (verdict, status) {
                        (Verdict::Sent, _) => None,
                        (_, Some(s)) => Some(format!("HTTP {s}: {answer}")),
                        (_, None) => Some(answer),
                    };
                    (verdict, error)
                }
            };
            let (status, next) = match verdict {
                Verdict::Sent => (OutboxStatus::Sent, now),
                Verdict::Permanent => (OutboxStatus::Failed, now),
                Verdict::Retry if policy::exhausted(attempts) => (OutboxStatus::Failed, now),
                Verdict::Retry => {
                    let wait = TimeDelta::from_std(policy::backoff(attempts))
                        .unwrap_or(TimeDelta::seconds(30));
                    (OutboxStatus::Pending, now + wait)
                }
            };
            if let Some(e) = &error {
                tracing::warn!(row = row.id, channel = %row.channel, attempts, error = %e, "push not delivered");
            }
            sqlx::query(
                "UPDATE push_outbox SET status = ?, attempts = ?, next_attempt_at = ?, last_error = ?, sent_at = ?, sending_since = NULL WHERE id = ?",
            )
            .bind(status.as_str())
            .bind(i64::from(attempts))
            .bind(stamp(next))
            .bind(error.as_deref())
            .bind((status == OutboxStatus::Sent).then(|| stamp(now)))
            .bind(row.id)
            .execute(&self.pool)
            .await?;
            out.push(Delivery {
                id: row.id,
                channel: row.channel,
                alert_id: row.alert_id,
                status,
                attempts,
                error,
                delivery_id: row.delivery_id,
                repeat,
            });
        }
        Ok(out)
    }

    /// The rows' statuses for one alert.
    pub async fn statuses_for(&self, alert_id: i64) -> Result<Vec<OutboxStatus>, PushError> {
        let rows: Vec<(String,)> =
            sqlx::query_as("SELECT status FROM push_outbox WHERE alert_id = ? ORDER BY id")
                .bind(alert_id)
                .fetch_all(&self.pool)
                .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(s,)| OutboxStatus::parse(&s))
            .collect())
    }

    /// Sends a test message to one channel now (not through the outbox) and returns what
    /// it answered.
    pub async fn test(&self, name: &str, now: DateTime<Utc>) -> Result<TestOutcome, PushError> {
        let channel = self.channel(name).await?;
        let body = serde_json::json!({
            "type": "test",
            "title": "Wyckoff Desk",
            "text": format!("Wyckoff Desk: test message to '{}'", channel.name),
            "sent_at": stamp(now),
        });
        let creds = self.credentials(&channel);
        // A test is not queued: its id is its own, never repeated.
        let delivery_id = format!("test-{}", now.timestamp_millis());
        let (verdict, status, answer) =
            post(&channel, &creds, &body, &delivery_id, now, self.timeout).await;
        Ok(TestOutcome {
            channel: channel.name,
            http_status: status,
            answer,
            ok: verdict == Verdict::Sent,
        })
    }
}
