//! Settings → Chat bots: the bots with their paired senders, the pairing codes waiting for
//! the owner (approve one here as with `wyckoff bot pair CODE`), and who may approve from
//! a chat; adding a bot with its token (kept in the keychain, never sent back) and which
//! process serves each bot. Thin adapters over the desk's bot methods.

use serde::Serialize;
use specta::Type;
use tauri::State;
use wyckoff_session::SessionError;
use wyckoff_session::bot_store::{BotError, BotKind};

use crate::bot_serving::BotServing;

use crate::chat::ChatState;
use crate::commands::chat::desk;
use crate::commands::error::{CommandError, CommandErrorKind};
use crate::state::AppState;

#[derive(Debug, Clone, Serialize, Type)]
pub struct BotSenderView {
    pub sender_id: String,
    pub label: String,
    pub approver: bool,
    /// RFC 3339.
    pub paired_at: String,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct BotView {
    pub name: String,
    /// telegram, dingtalk, feishu or wecom.
    pub kind: String,
    /// The token is set (keychain or environment); its value never leaves the backend.
    pub token_set: bool,
    pub daily_tokens: i64,
    pub per_minute: i64,
    pub senders: Vec<BotSenderView>,
    /// The process serving the bot now, if any.
    pub server: Option<BotServerView>,
}

/// Who serves a bot: one process at a time, the first to take its lease.
#[derive(Debug, Clone, Serialize, Type)]
pub struct BotServerView {
    /// `app`, or `cli` for the daemon and `wyckoff bot run`.
    pub front: String,
    /// This app serves it.
    pub here: bool,
    /// RFC 3339: since when.
    pub since: String,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct PairingView {
    pub code: String,
    pub bot: String,
    pub sender_id: String,
    pub label: String,
    /// RFC 3339: after this the code pairs nobody.
    pub expires_at: String,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct BotsView {
    pub bots: Vec<BotView>,
    pub pending: Vec<PairingView>,
}

fn command_error(e: SessionError) -> CommandError {
    match &e {
        SessionError::Bots(BotError::UnknownCode(_) | BotError::UnknownSender { .. }) => {
            CommandError::new(CommandErrorKind::NotFound, e.to_string())
        }
        SessionError::Bots(BotError::Invalid(_) | BotError::Exists(_)) => {
            CommandError::new(CommandErrorKind::InvalidInput, e.to_string())
        }
        _ => CommandError::from(e),
    }
}

#[tauri::command]
#[specta::specta]
pub async fn bots_view(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<BotsView, CommandError> {
    let desk = desk(&state, &chat).await?;
    let mut bots = Vec::new();
    for b in desk.bot_list().await.map_err(command_error)? {
        let server = desk
            .bot_server(&b.bot.name)
            .await
            .map_err(command_error)?
            .map(|s| BotServerView {
                front: s.front,
                here: s.here,
                since: s.taken_at,
            });
        bots.push(BotView {
            name: b.bot.name,
            kind: b.bot.kind.as_str().to_owned(),
            token_set: b.token_set,
            daily_tokens: b.bot.daily_tokens,
            per_minute: b.bot.per_minute,
            senders: b
                .senders
                .into_iter()
                .map(|s| BotSenderView {
                    sender_id: s.sender_id,
                    label: s.label,
                    approver: s.approver,
                    paired_at: s.paired_at,
                })
                .collect(),
            server,
        });
    }
    let pending = desk
        .bot_pending_pairings()
        .await
        .map_err(command_error)?
        .into_iter()
        .map(|p| PairingView {
            code: p.code,
            bot: p.bot,
            sender_id: p.sender_id,
            label: p.label,
            expires_at: p.expires_at,
        })
        .collect();
    Ok(BotsView { bots, pending })
}

/// The owner approves a pairing code: its sender may talk to its bot.
#[tauri::command]
#[specta::specta]
pub async fn bot_pair(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    code: String,
) -> Result<(), CommandError> {
    desk(&state, &chat)
        .await?
        .bot_pair(&code)
        .await
        .map(|_| ())
        .map_err(command_error)
}

/// Lets a paired sender decide approval requests from the chat (with each request's
/// one-time code), or stops it.
#[tauri::command]
#[specta::specta]
pub async fn bot_set_approver(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    bot: String,
    sender: String,
    approver: bool,
) -> Result<(), CommandError> {
    desk(&state, &chat)
        .await?
        .bot_set_approver(&bot, &sender, approver)
        .await
        .map_err(command_error)
}

/// Forgets a paired sender.
#[tauri::command]
#[specta::specta]
pub async fn bot_unpair(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    bot: String,
    sender: String,
) -> Result<(), CommandError> {
    desk(&state, &chat)
        .await?
        .bot_unpair(&bot, &sender)
        .await
        .map_err(command_error)
}

/// Adds a bot and stores its token in the keychain (the token is never read back here);
/// the app serves it from the next look unless another process already does.
#[tauri::command]
#[specta::specta]
pub async fn bot_add(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    serving: State<'_, BotServing>,
    name: String,
    kind: String,
    api_url: Option<String>,
    token: String,
) -> Result<(), CommandError> {
    let invalid = |m: String| CommandError::new(CommandErrorKind::InvalidInput, m);
    let kind = BotKind::parse(kind.trim()).ok_or_else(|| {
        invalid(format!(
            "unknown bot kind '{kind}': telegram, dingtalk, feishu or wecom"
        ))
    })?;
    let token = token.trim();
    if token.is_empty() {
        return Err(invalid("the bot's token is empty".into()));
    }
    let api_url = api_url
        .map(|u| u.trim().to_owned())
        .filter(|u| !u.is_empty());
    let desk = desk(&state, &chat).await?;
    desk.bot_add(name.trim(), kind, api_url.as_deref(), None, None)
        .await
        .map_err(command_error)?;
    if let Err(e) = desk.set_bot_token(name.trim(), token).await {
        // No half-added bot: without its token it could not be served.
        let _ = desk.bot_remove(name.trim()).await;
        return Err(command_error(e));
    }
    serving.nudge();
    Ok(())
}

/// Removes a bot, its senders and its token (its conversations stay); the app stops
/// serving it.
#[tauri::command]
#[specta::specta]
pub async fn bot_remove(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    serving: State<'_, BotServing>,
    name: String,
) -> Result<(), CommandError> {
    desk(&state, &chat)
        .await?
        .bot_remove(&name)
        .await
        .map_err(command_error)?;
    serving.nudge();
    Ok(())
}
