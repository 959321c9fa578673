//! The portfolio page's "refresh closes" button: the closes of every code the account
//! ledger has held (stocks, ETFs, LOFs, bonds), fetched as `wyckoff portfolio sync` does,
//! as a background task the task panel shows with progress ([`Desk::start_ledger_closes_sync`]);
//! the page reloads the ledger when the task ends.

use tauri::State;
use wyckoff_protocol::TaskInfo;
use wyckoff_session::Desk;

use crate::chat::ChatState;
use crate::commands::chat::desk;
use crate::commands::error::CommandError;
use crate::state::AppState;

/// Starts the task (offline, or while one runs, refused with why).
pub async fn start(desk: &Desk) -> Result<TaskInfo, CommandError> {
    Ok(desk.start_ledger_closes_sync().await?)
}

#[tauri::command]
#[specta::specta]
pub async fn journal_sync_closes(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<TaskInfo, CommandError> {
    start(&*desk(&state, &chat).await?).await
}
