//! Settings → Chat bots: the bots with their paired senders, the pairing codes waiting for
//! the owner (approve one here as with `wyckoff bot pair CODE`), and who may approve from
//! a chat. Thin adapters over the desk's bot methods; a bot's token never comes here.

use serde::Serialize;
use specta::Type;
use tauri::State;
use wyckoff_session::SessionError;
use wyckoff_session::bot_store::BotError;

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
        SessionError::Bots(BotError::Invalid(_)) => {
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
    let bots = desk
        .bot_list()
        .await
        .map_err(command_error)?
        .into_iter()
        .map(|b| BotView {
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
        })
        .collect();
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
