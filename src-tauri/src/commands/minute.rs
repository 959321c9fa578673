//! The stock page at a minute period (60/30/15/5 minutes) from the cache, and a sync of one
//! stock's minute bars with progress over a channel. The work is the desk's; the page only
//! draws it. Offline is said as such before anything starts.

use tauri::State;
use tauri::ipc::Channel;
use wyckoff_session::domain::market::StockCode;
use wyckoff_session::domain::market::minute::{MinuteError, MinutePeriod};
use wyckoff_session::domain::market::minute_chart::MinuteChart;
use wyckoff_session::domain::market::minute_sync::{
    MinuteSyncEvent, MinuteSyncOutcome, MinuteSyncStatus,
};

use crate::chat::ChatState;
use crate::commands::chat::desk;
use crate::commands::error::CommandError;
use crate::state::AppState;

impl From<MinuteError> for CommandError {
    fn from(e: MinuteError) -> Self {
        Self::internal(e)
    }
}

fn code_of(code: &str) -> Result<String, CommandError> {
    StockCode::parse(code)
        .map(|c| c.digits().to_owned())
        .map_err(CommandError::invalid)
}

/// The stock's cached minute bars at `period`, with the daily reading's marks where they
/// apply (the chart's notes say which are daily-only, or that nothing is cached yet).
#[tauri::command]
#[specta::specta]
pub async fn minute_chart(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    code: String,
    period: MinutePeriod,
) -> Result<MinuteChart, CommandError> {
    let code = code_of(&code)?;
    Ok(desk(&state, &chat)
        .await?
        .minute_chart(&code, period)
        .await?)
}

/// Fetches the stock's minute bars at `period` into the cache; each step goes out over
/// `on_progress`. A source failure is the command's error, naming every source tried.
#[tauri::command]
#[specta::specta]
pub async fn sync_minutes(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    code: String,
    period: MinutePeriod,
    on_progress: Channel<MinuteSyncEvent>,
) -> Result<MinuteSyncOutcome, CommandError> {
    let code = code_of(&code)?;
    let desk = desk(&state, &chat).await?;
    if desk.market().source_names().is_empty() {
        return Err(CommandError::offline());
    }
    let mut outcomes = desk
        .sync_minutes(std::slice::from_ref(&code), period, &mut |e| {
            if let Err(err) = on_progress.send(e) {
                tracing::debug!("minute sync progress channel closed: {err}");
            }
        })
        .await?;
    let outcome = outcomes
        .pop()
        .ok_or_else(|| CommandError::internal(format!("nothing synced for {code}")))?;
    match &outcome.status {
        MinuteSyncStatus::Failed { error } => {
            Err(CommandError::unavailable(error.clone()).with_code(code))
        }
        MinuteSyncStatus::Updated { .. } => Ok(outcome),
    }
}
