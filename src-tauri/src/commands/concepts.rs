//! Concept blocks for the market map page and the stock page: each concept's 5-day return
//! against the market's, and one stock's industry and concept blocks. The desk computes
//! both; these commands carry them to the window as they are (the market's own types),
//! with the loads they were read from and whether a later load stood in for the day.

use tauri::State;
use wyckoff_session::Desk;
use wyckoff_session::domain::market::date::parse_date;
use wyckoff_session::domain::market::{ConceptStrength, StockMembership};

use crate::chat::ChatState;
use crate::commands::chat::desk;
use crate::commands::error::CommandError;
use crate::state::AppState;

fn as_of(date: Option<&str>) -> Result<Option<u32>, CommandError> {
    match date.map(str::trim).filter(|d| !d.is_empty()) {
        None => Ok(None),
        Some(d) => parse_date(d).map(Some).ok_or_else(|| {
            CommandError::invalid(format!(
                "the date must be a real date such as 2020-06-16, not {d:?}"
            ))
        }),
    }
}

/// The concept table of `as_of_date`'s trading day (the newest cached when `None`).
pub async fn strength(
    desk: &Desk,
    as_of_date: Option<&str>,
) -> Result<ConceptStrength, CommandError> {
    Ok(desk.concept_strength(as_of(as_of_date)?).await?)
}

/// `code`'s industry and blocks as of `as_of_date` (the latest loads when `None`).
pub async fn blocks(
    desk: &Desk,
    code: &str,
    as_of_date: Option<&str>,
) -> Result<StockMembership, CommandError> {
    Ok(desk
        .stock_membership(code.trim(), as_of(as_of_date)?)
        .await?)
}

/// Each concept block's 5-day return against the market's (`as_of` `YYYY-MM-DD`; the
/// newest cached day when `None`), strongest first.
#[tauri::command]
#[specta::specta]
pub async fn concept_strength(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    as_of: Option<String>,
) -> Result<ConceptStrength, CommandError> {
    strength(&*desk(&state, &chat).await?, as_of.as_deref()).await
}

/// A stock's industry and concept and style blocks (the latest loads when `as_of` is
/// `None`).
#[tauri::command]
#[specta::specta]
pub async fn stock_blocks(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    code: String,
    as_of: Option<String>,
) -> Result<StockMembership, CommandError> {
    blocks(&*desk(&state, &chat).await?, &code, as_of.as_deref()).await
}

#[cfg(test)]
mod tests;
