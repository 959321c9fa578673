//! Forward tracking in the window: the hit rates of every saved screen's
//! candidates, shown under a screen result. A thin adapter over `wyckoff_track`.

use tauri::State;
use wyckoff_session::domain::track::{TrackStats, TrackedScreen};

use crate::chat::ChatState;
use crate::commands::chat::desk;
use crate::commands::error::CommandError;
use crate::state::AppState;

/// Hit rates (net return after fees > 0) with counts per trigger, track and 水温 at 1, 5,
/// 10 and 20 trading days, over every saved screen, from the cached bars.
#[tauri::command]
#[specta::specta]
pub async fn track_stats(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<TrackStats, CommandError> {
    let desk = desk(&state, &chat).await?;
    wyckoff_session::domain::track::stats(desk.market(), desk.tracking())
        .await
        .map_err(CommandError::internal)
}

/// Every saved screen with its candidates' figures so far (pending where the bars are not
/// cached yet), oldest day first: the review page's list.
#[tauri::command]
#[specta::specta]
pub async fn track_screens(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Vec<TrackedScreen>, CommandError> {
    let desk = desk(&state, &chat).await?;
    wyckoff_session::domain::track::tracked(desk.market(), desk.tracking())
        .await
        .map_err(CommandError::internal)
}
