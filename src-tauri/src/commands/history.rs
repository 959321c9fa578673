//! Stock history as of a date in the window: a user's `date,code,name` file imported from
//! the overview (every bad line named, nothing stored from a file with one), the names a
//! stock carried on its page, and the counts on the data panel. The work is the desk's.

use std::path::Path;

use tauri::State;
use wyckoff_session::Desk;
use wyckoff_session::domain::market::{
    CodeHistory, HistoryCounts, NamesImportError, NamesImportReport,
};

use crate::chat::ChatState;
use crate::commands::chat::desk;
use crate::commands::error::CommandError;
use crate::state::AppState;

impl From<NamesImportError> for CommandError {
    fn from(e: NamesImportError) -> Self {
        match e {
            // the file as given cannot be read: the user picks another
            NamesImportError::Io { .. }
            | NamesImportError::TooLarge { .. }
            | NamesImportError::NotAFile { .. } => Self::invalid(e),
            NamesImportError::Cache(_) => Self::internal(e),
        }
    }
}

/// Imports the names file at `path`; a file with bad lines comes back as a report that
/// names them (status `rejected`), not as an error.
pub async fn import(desk: &Desk, path: &str) -> Result<NamesImportReport, CommandError> {
    let path = path.trim();
    if path.is_empty() {
        return Err(CommandError::invalid(
            "give the path of a CSV file of date,code,name rows",
        ));
    }
    Ok(desk.import_names(Path::new(path)).await?)
}

/// Imports a `date,code,name` file (the name in force from that date) from the overview.
#[tauri::command]
#[specta::specta]
pub async fn names_import(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    path: String,
) -> Result<NamesImportReport, CommandError> {
    import(&*desk(&state, &chat).await?, &path).await
}

/// The names recorded for `code` (oldest first, each with its source and whether its
/// start is only the day a stock-list sync first saw it) and its listing.
#[tauri::command]
#[specta::specta]
pub async fn name_history(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    code: String,
) -> Result<CodeHistory, CommandError> {
    Ok(desk(&state, &chat).await?.name_history(&code).await?)
}

/// How much stock history the store holds, for the data panel.
#[tauri::command]
#[specta::specta]
pub async fn history_counts(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<HistoryCounts, CommandError> {
    Ok(desk(&state, &chat).await?.history_counts().await?)
}

#[cfg(test)]
mod tests;
