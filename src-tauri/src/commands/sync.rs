//! Data sync from the app: one stock from its page (progress over a channel, then the
//! page reloads), or the whole market as a background task (progress by symbol in the
//! task panel, cancellable; a job the desk starts, `Desk::start_job`). Offline —
//! `WYCKOFF_OFFLINE=1` or no source enabled — is said as such before anything starts.

use serde::Serialize;
use specta::Type;
use tauri::State;
use tauri::ipc::Channel;
use wyckoff_session::domain::market::facade::SyncTarget;
use wyckoff_session::domain::market::{MarketData, StockCode, SyncEvent, SyncOutcome, SyncStatus};

use crate::chat::ChatState;
use crate::commands::error::CommandError;
use crate::commands::overview::market;
use crate::state::AppState;

pub use wyckoff_session::reports::SyncProgress;

#[derive(Debug, Clone, Serialize, Type)]
pub struct StockSyncResult {
    pub code: String,
    /// updated / up_to_date / no_new_data.
    pub status: String,
    pub new_bars: u32,
    pub source: Option<String>,
    /// The newest cached bar after the sync (YYYY-MM-DD).
    pub last_date: Option<String>,
}

fn result_of(o: &SyncOutcome) -> Result<StockSyncResult, CommandError> {
    let (status, new_bars, source) = match &o.status {
        SyncStatus::Updated {
            source, new_bars, ..
        } => (
            "updated",
            u32::try_from(*new_bars).unwrap_or(u32::MAX),
            Some(source.clone()),
        ),
        SyncStatus::UpToDate => ("up_to_date", 0, None),
        SyncStatus::NoNewData => ("no_new_data", 0, None),
        SyncStatus::Failed { error } => {
            // The page words it as the code and why, so the message is only the why.
            return Err(CommandError::unavailable(error).with_code(o.code.clone()));
        }
    };
    Ok(StockSyncResult {
        code: o.code.clone(),
        status: status.to_owned(),
        new_bars,
        source,
        last_date: o.last_date.map(wyckoff_session::domain::market::date::iso),
    })
}

/// Syncs one stock, reporting each step.
pub async fn sync_one(
    md: &MarketData,
    code: &str,
    progress: &mut (dyn FnMut(SyncProgress) + Send),
) -> Result<StockSyncResult, CommandError> {
    let parsed = StockCode::parse(code).map_err(CommandError::invalid)?;
    if md.source_names().is_empty() {
        return Err(CommandError::offline());
    }
    let report = md
        .sync(
            SyncTarget::Codes(vec![parsed.digits().to_owned()]),
            &mut |e: SyncEvent| progress(SyncProgress::from(&e)),
        )
        .await?;
    match report.outcomes.first() {
        Some(o) => result_of(o),
        None => Err(CommandError::internal(format!(
            "nothing synced for {}",
            parsed.digits()
        ))),
    }
}

/// Syncs the stock shown on its page; progress goes out over `on_progress`.
#[tauri::command]
#[specta::specta]
pub async fn sync_stock(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    code: String,
    on_progress: Channel<SyncProgress>,
) -> Result<StockSyncResult, CommandError> {
    let md = market(&state, &chat).await?;
    sync_one(&md, &code, &mut |p| {
        if let Err(e) = on_progress.send(p) {
            tracing::debug!("sync progress channel closed: {e}");
        }
    })
    .await
}

#[cfg(test)]
mod tests;
