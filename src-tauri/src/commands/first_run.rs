//! The guided start on a fresh desk: its state (kept in the data home), each step's
//! outcome, a TDX install imported with progress, and the full sync's estimate. The CSV
//! import and the full sync themselves start as background tasks (`start_task`); the work is
//! the desk's.

use std::path::Path;

use tauri::State;
use tauri::ipc::Channel;
use wyckoff_session::Desk;
use wyckoff_session::desk_onboarding::{
    FirstRun, FirstRunStep, StepState, SyncEstimate, WatchlistImport,
};
use wyckoff_session::domain::market::tdx::{TdxError, TdxEvent, TdxImportReport};

use crate::chat::ChatState;
use crate::commands::chat::desk;
use crate::commands::error::CommandError;
use crate::state::AppState;

impl From<TdxError> for CommandError {
    fn from(e: TdxError) -> Self {
        match e {
            // the folder as given cannot be used: the user picks another
            TdxError::Io { .. } | TdxError::NotTdx(_) => Self::invalid(e),
            TdxError::Cache(_) | TdxError::Watchlist(_) => Self::internal(e),
        }
    }
}

pub async fn import(
    desk: &Desk,
    path: &str,
    progress: &mut (dyn FnMut(TdxEvent) + Send),
) -> Result<TdxImportReport, CommandError> {
    let path = path.trim();
    if path.is_empty() {
        return Err(CommandError::invalid("type the TDX install folder's path"));
    }
    Ok(desk.import_tdx(Path::new(path), progress).await?)
}

/// The guide's state: whether it shows, its steps and what the desk holds.
#[tauri::command]
#[specta::specta]
pub async fn first_run(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<FirstRun, CommandError> {
    Ok(desk(&state, &chat).await?.first_run().await?)
}

/// Records a step as done, skipped or pending again (`step` none: the guide as finished
/// when `state` is not pending).
#[tauri::command]
#[specta::specta]
pub async fn set_first_run_step(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    step: Option<FirstRunStep>,
    step_state: StepState,
) -> Result<FirstRun, CommandError> {
    Ok(desk(&state, &chat)
        .await?
        .set_first_run_step(step, step_state)
        .await?)
}

/// What a full-market sync would fetch now and about how long it would take.
#[tauri::command]
#[specta::specta]
pub async fn full_sync_estimate(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<SyncEstimate, CommandError> {
    Ok(desk(&state, &chat).await?.full_sync_estimate().await?)
}

/// Imports a TDX install (bars, blocks into the watchlist, industries); progress goes out
/// over `on_progress`.
#[tauri::command]
#[specta::specta]
pub async fn import_tdx(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    path: String,
    on_progress: Channel<TdxEvent>,
) -> Result<TdxImportReport, CommandError> {
    let desk = desk(&state, &chat).await?;
    import(&desk, &path, &mut |ev| {
        if let Err(e) = on_progress.send(ev) {
            tracing::debug!("TDX import progress channel closed: {e}");
        }
    })
    .await
}

/// Adds the stock codes of a watchlist file (a code per line, or a CSV whose first column
/// is the code); nothing when a line is bad, which the result names.
#[tauri::command]
#[specta::specta]
pub async fn import_watchlist_file(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    path: String,
) -> Result<WatchlistImport, CommandError> {
    let path = path.trim();
    if path.is_empty() {
        return Err(CommandError::invalid("type the watchlist file's path"));
    }
    let desk = desk(&state, &chat).await?;
    desk.import_watchlist_file(Path::new(path))
        .await
        .map_err(|e| match e {
            wyckoff_session::SessionError::Io(io) => CommandError::invalid(format!("{path}: {io}")),
            other => other.into(),
        })
}
