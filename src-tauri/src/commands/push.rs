//! Settings → Push channels: list (with each channel's last send), add (a
//! robot's token and signing secret, or an e-mail channel's SMTP password, go to the
//! keychain, never to the database), remove, send a test, choose which events a channel is
//! sent. Thin adapters over `wyckoff_push`.

use chrono::Utc;
use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::State;
use wyckoff_config::{PushSecret, Secrets};
use wyckoff_session::domain::push::{
    Channel, ChannelKind, EmailSettings, Outbox, OutboxRow, OutboxStatus, PushError, PushEvent,
    SecretIn, split_pasted,
};

use crate::chat::ChatState;
use crate::commands::chat::desk;
use crate::commands::error::CommandError;
use crate::state::AppState;

/// A channel's latest send through the outbox.
#[derive(Debug, Clone, Serialize, Type)]
pub struct LastSend {
    /// pending, sent or failed.
    pub status: String,
    /// The channel's answer or why nothing answered, for a failed or retried send.
    pub error: Option<String>,
    /// RFC 3339: when it was queued.
    pub at: String,
}

/// An e-mail channel's sender, recipients and SMTP login (default: the sender's address).
/// Its password is passed as the channel's token and kept in the keychain only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct EmailAddresses {
    pub from: String,
    pub to: Vec<String>,
    pub user: Option<String>,
    /// The full path of a CA certificate (PEM) to trust besides the system's, for a server
    /// whose certificate an own (company) CA signed.
    pub ca_cert: Option<String>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct ChannelView {
    pub name: String,
    /// webhook, wecom, dingtalk, feishu, telegram or email.
    pub kind: String,
    pub url: String,
    pub chat_id: Option<String>,
    /// An e-mail channel's addresses.
    pub email: Option<EmailAddresses>,
    /// A token / signing secret (an e-mail channel: its SMTP password) is in the keychain
    /// (its value never leaves the backend).
    pub has_token: bool,
    pub has_sign_secret: bool,
    /// A generic webhook's secret placement: `header:NAME` or `query:NAME` (none:
    /// `Authorization: Bearer`).
    pub secret_in: Option<String>,
    pub last: Option<LastSend>,
    /// What it is sent: alerts, tasks, schedules, approvals (in that order).
    pub events: Vec<String>,
}

/// What a test send got back.
#[derive(Debug, Clone, Serialize, Type)]
pub struct TestResult {
    pub ok: bool,
    pub http_status: Option<u16>,
    /// The start of the channel's answer, or why nothing answered.
    pub answer: String,
}

async fn outbox(state: &AppState, chat: &ChatState) -> Result<Outbox, CommandError> {
    Ok(desk(state, chat).await?.outbox().clone())
}

fn secret(channel: &str, sign: bool) -> PushSecret {
    PushSecret {
        channel: channel.to_owned(),
        sign,
    }
}

/// The channels as the panel shows them, each with its latest send in `rows`.
fn views(channels: Vec<Channel>, rows: &[OutboxRow], secrets: &Secrets) -> Vec<ChannelView> {
    channels
        .into_iter()
        .map(|c| {
            // Rows are oldest first: the last one of the channel is its latest send.
            let last = rows
                .iter()
                .rev()
                .find(|r| r.channel == c.name)
                .map(|r| LastSend {
                    status: match r.status {
                        OutboxStatus::Pending => "pending",
                        OutboxStatus::Sent => "sent",
                        OutboxStatus::Failed => "failed",
                    }
                    .to_owned(),
                    error: r.last_error.clone(),
                    at: r.created_at.clone(),
                });
            ChannelView {
                has_token: secrets.get_push(&secret(&c.name, false)).is_some(),
                has_sign_secret: secrets.get_push(&secret(&c.name, true)).is_some(),
                kind: c.kind.as_str().to_owned(),
                email: c.email.map(|e| EmailAddresses {
                    from: e.from,
                    to: e.to,
                    user: e.username,
                    ca_cert: e.ca_cert,
                }),
                secret_in: c.secret_in.as_ref().map(SecretIn::stored),
                name: c.name,
                url: c.url,
                chat_id: c.chat_id,
                last,
                events: c.events.iter().map(|e| e.as_str().to_owned()).collect(),
            }
        })
        .collect()
}

#[tauri::command]
#[specta::specta]
pub async fn push_channels(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Vec<ChannelView>, CommandError> {
    let outbox = outbox(&state, &chat).await?;
    let rows = outbox.rows().await?;
    Ok(views(outbox.channels().await?, &rows, &state.secrets))
}

/// Adds a channel. `url`: the webhook's address, a robot's API base (the official one
/// when empty), or an e-mail channel's `smtps://host[:465]` / `smtp://host[:587]`
/// (STARTTLS). A private or loopback address only for a webhook with `allow_private`.
/// `email`: an e-mail channel's addresses. A token, signing secret or SMTP password (as
/// `token`, stored like `wyckoff push secret NAME`) goes to the keychain; if the keychain
/// refuses it, the channel is not kept. A robot's URL pasted with its key (or a webhook's
/// with its secret in `secret_query`) is stored without it, the key kept as the token.
/// A webhook's `token` is its secret, sent in the `secret_header` header or as the
/// `secret_query` parameter (neither: `Authorization: Bearer`).
#[tauri::command]
#[specta::specta]
#[allow(clippy::too_many_arguments)]
pub async fn push_add(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    name: String,
    kind: String,
    url: Option<String>,
    allow_private: bool,
    chat_id: Option<String>,
    email: Option<EmailAddresses>,
    secrets: Option<AddSecrets>,
) -> Result<ChannelView, CommandError> {
    let outbox = outbox(&state, &chat).await?;
    let secrets_given = secrets.unwrap_or_default();
    let request = AddRequest {
        name,
        kind,
        url,
        allow_private,
        chat_id,
        email,
        token: secrets_given.token,
        sign_secret: secrets_given.sign_secret,
        secret_header: secrets_given.secret_header,
        secret_query: secrets_given.secret_query,
    };
    let name = add(&outbox, &state.secrets, request, Utc::now()).await?;
    let listed = push_channels(state, chat).await?;
    listed.into_iter().find(|c| c.name == name).ok_or_else(|| {
        CommandError::internal(format!("channel '{name}' vanished after it was added"))
    })
}

/// A new channel's secrets (each goes to the keychain) and, for a generic webhook, where
/// its secret goes with every send.
#[derive(Debug, Clone, Default, Deserialize, Type)]
pub struct AddSecrets {
    /// A robot's key / token, a webhook's secret, an e-mail channel's SMTP password.
    pub token: Option<String>,
    /// DingTalk's or Feishu's signing secret.
    pub sign_secret: Option<String>,
    /// A webhook: the header its secret goes in (neither: `Authorization: Bearer`).
    pub secret_header: Option<String>,
    /// A webhook: the query parameter its secret goes in.
    pub secret_query: Option<String>,
}

/// What the add form sends.
struct AddRequest {
    name: String,
    kind: String,
    url: Option<String>,
    allow_private: bool,
    chat_id: Option<String>,
    email: Option<EmailAddresses>,
    token: Option<String>,
    sign_secret: Option<String>,
    secret_header: Option<String>,
    secret_query: Option<String>,
}

/// Checks and stores a channel and its secrets; the channel's name.
async fn add(
    outbox: &Outbox,
    secrets: &Secrets,
    r: AddRequest,
    now: chrono::DateTime<Utc>,
) -> Result<String, CommandError> {
    let invalid = |message: &str| CommandError::invalid(message);
    let kind = ChannelKind::parse(&r.kind).ok_or_else(|| {
        CommandError::invalid(format!(
            "unknown channel kind '{}': webhook, wecom, dingtalk, feishu, telegram or email",
            r.kind
        ))
    })?;
    if r.allow_private && kind != ChannelKind::Webhook {
        return Err(invalid(
            "only a generic webhook may point at a private or local address",
        ));
    }
    let url = r.url.as_deref().map(str::trim).filter(|u| !u.is_empty());
    let given = |v: Option<String>| v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    let secret_in = match (given(r.secret_header), given(r.secret_query)) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "a webhook's secret goes in a header or a query parameter, not both",
            ));
        }
        (Some(h), None) => Some(SecretIn::Header(h)),
        (None, Some(q)) => Some(SecretIn::Query(q)),
        (None, None) => None,
    };
    if secret_in.is_some() && kind != ChannelKind::Webhook {
        return Err(PushError::SecretInNotWebhook.into());
    }
    if let Some(SecretIn::Header(h)) = &secret_in
        && !wyckoff_session::domain::push::valid_header(h)
    {
        return Err(PushError::BadHeader(h.clone()).into());
    }
    let mut token = given(r.token);
    let channel = if kind == ChannelKind::Email {
        let Some(email) = r.email else {
            return Err(invalid(
                "an e-mail channel needs its sender and at least one recipient",
            ));
        };
        let Some(url) = url else {
            return Err(PushError::NeedsUrl("e-mail").into());
        };
        if given(r.sign_secret.clone()).is_some() {
            return Err(invalid("an e-mail channel has no signing secret"));
        }
        let settings = EmailSettings {
            from: email.from.trim().to_owned(),
            to: email
                .to
                .iter()
                .map(|t| t.trim().to_owned())
                .filter(|t| !t.is_empty())
                .collect(),
            username: email
                .user
                .map(|u| u.trim().to_owned())
                .filter(|u| !u.is_empty()),
            ca_cert: email
                .ca_cert
                .map(|u| u.trim().to_owned())
                .filter(|u| !u.is_empty()),
        };
        outbox
            .add_email_channel(&r.name, url, r.allow_private, &settings, now)
            .await?
    } else {
        if r.email.is_some() {
            return Err(invalid("only an e-mail channel has addresses"));
        }
        // A key pasted inside the URL is kept as the token (one typed as well wins).
        let (base, key) = match url {
            Some(u) => {
                let (b, k) = split_pasted(kind, u, secret_in.as_ref());
                (Some(b), k)
            }
            None => (None, None),
        };
        if token.is_none() {
            token = key;
        }
        let channel = outbox
            .add_channel(
                &r.name,
                kind,
                base.as_deref(),
                r.allow_private,
                r.chat_id.as_deref(),
                now,
            )
            .await?;
        match secret_in {
            Some(s) => outbox.set_secret_in(&channel.name, Some(s)).await?,
            None => channel,
        }
    };
    for (value, sign) in [(token, false), (given(r.sign_secret), true)] {
        let Some(value) = value else { continue };
        if let Err(e) = secrets.set_push(&secret(&channel.name, sign), &value) {
            let _ = outbox.remove_channel(&channel.name).await;
            let _ = secrets.delete_push(&secret(&channel.name, false));
            // The keychain would not keep the secret: the channel was not added.
            return Err(CommandError::unavailable(e));
        }
    }
    Ok(channel.name)
}

/// Sets which events a channel is sent (alerts, tasks, schedules, approvals; at least one).
#[tauri::command]
#[specta::specta]
pub async fn push_set_events(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    name: String,
    events: Vec<String>,
) -> Result<ChannelView, CommandError> {
    let events = events
        .iter()
        .map(|e| {
            PushEvent::parse(e).ok_or_else(|| {
                CommandError::invalid(format!(
                    "unknown push event '{e}': alerts, tasks, schedules or approvals"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let channel = outbox(&state, &chat)
        .await?
        .set_events(&name, events)
        .await?;
    push_channels(state, chat)
        .await?
        .into_iter()
        .find(|c| c.name == channel.name)
        .ok_or_else(|| CommandError::not_found(format!("no push channel named '{}'", channel.name)))
}

/// Removes a channel and its secrets.
#[tauri::command]
#[specta::specta]
pub async fn push_remove(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    name: String,
) -> Result<(), CommandError> {
    outbox(&state, &chat).await?.remove_channel(&name).await?;
    for sign in [false, true] {
        if let Err(e) = state.secrets.delete_push(&secret(&name, sign)) {
            tracing::warn!(channel = %name, "cannot remove a push secret: {e}");
        }
    }
    Ok(())
}

/// Sends a test message now and returns what the channel answered.
#[tauri::command]
#[specta::specta]
pub async fn push_test(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    name: String,
) -> Result<TestResult, CommandError> {
    let outcome = outbox(&state, &chat).await?.test(&name, Utc::now()).await?;
    Ok(TestResult {
        ok: outcome.ok,
        http_status: outcome.http_status,
        answer: outcome.answer,
    })
}

#[cfg(test)]
mod tests;
