//! The market map page and the overview's mood line: the day's limit statistics and sector
//! table, the limit statistics over the last trading days with the industries' rotation
//! trails, an industry's members, and the industry membership imported from a file or a TDX
//! install. The work is the desk's; the page only draws it.

use std::path::Path;

use tauri::State;
use wyckoff_session::Desk;
use wyckoff_session::domain::agent::ToolError;
use wyckoff_session::domain::market::{
    IndustriesImportError, IndustriesImportReport, LoadInfo, date::parse_date,
};
use wyckoff_session::reports::{IndustryMembers, MarketMap, MarketMapSeries};

use crate::chat::ChatState;
use crate::commands::chat::desk;
use crate::commands::error::CommandError;
use crate::state::AppState;

/// Trading days of limit statistics the page asks for when it names none.
const DEFAULT_SERIES_DAYS: u32 = 20;

fn tool_err(e: ToolError) -> CommandError {
    match e {
        ToolError::InvalidArgs(m) => CommandError::invalid(m),
        // the cache has nothing for the day, or could not be read: the message says which
        ToolError::Failed(m) => CommandError::unavailable(m),
        ToolError::Cancelled => CommandError::internal(e),
    }
}

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

impl From<IndustriesImportError> for CommandError {
    fn from(e: IndustriesImportError) -> Self {
        match e {
            // the path as given cannot be used: the user picks another
            IndustriesImportError::Io { .. }
            | IndustriesImportError::TooLarge { .. }
            | IndustriesImportError::NotTdxFolder { .. }
            | IndustriesImportError::NoIncon { .. } => Self::invalid(e),
            IndustriesImportError::Cache(_) => Self::internal(e),
        }
    }
}

/// The day's map (the newest cached day when `as_of` is `None`).
pub async fn day_map(desk: &Desk, as_of_date: Option<&str>) -> Result<MarketMap, CommandError> {
    desk.market_map(as_of(as_of_date)?).await.map_err(tool_err)
}

/// The range series: `days` trading days (20 when `None`) of limit statistics and the
/// rotation trails.
pub async fn series(
    desk: &Desk,
    as_of_date: Option<&str>,
    days: Option<u32>,
) -> Result<MarketMapSeries, CommandError> {
    let days = usize::try_from(days.unwrap_or(DEFAULT_SERIES_DAYS)).unwrap_or(usize::MAX);
    desk.market_map_series(as_of(as_of_date)?, days)
        .await
        .map_err(tool_err)
}

/// An industry's members on the day.
pub async fn members(
    desk: &Desk,
    industry: &str,
    as_of_date: Option<&str>,
) -> Result<IndustryMembers, CommandError> {
    desk.industry_members(industry, as_of(as_of_date)?)
        .await
        .map_err(tool_err)
}

/// Imports the membership at `path`; a file with bad lines comes back as a report naming
/// them (status `rejected`), not as an error.
pub async fn import(desk: &Desk, path: &str) -> Result<IndustriesImportReport, CommandError> {
    let path = path.trim();
    if path.is_empty() {
        return Err(CommandError::invalid(
            "give the path of a code,industry CSV file or a TDX install folder",
        ));
    }
    Ok(desk.import_industries(Path::new(path)).await?)
}

/// The day's market map: limit counts, the 连板 ladder, 涨停溢价, seal rate and the sector
/// table (`as_of` `YYYY-MM-DD`; the newest cached day when `None`).
#[tauri::command]
#[specta::specta]
pub async fn market_map(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    as_of: Option<String>,
) -> Result<MarketMap, CommandError> {
    day_map(&*desk(&state, &chat).await?, as_of.as_deref()).await
}

/// The limit statistics of the last `days` trading days (20 when `None`) and each
/// industry's rotation trail over the last 20.
#[tauri::command]
#[specta::specta]
pub async fn market_map_series(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    as_of: Option<String>,
    days: Option<u32>,
) -> Result<MarketMapSeries, CommandError> {
    series(&*desk(&state, &chat).await?, as_of.as_deref(), days).await
}

/// An industry's members on the day, the best 5-day return first.
#[tauri::command]
#[specta::specta]
pub async fn industry_members(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    industry: String,
    as_of: Option<String>,
) -> Result<IndustryMembers, CommandError> {
    members(&*desk(&state, &chat).await?, &industry, as_of.as_deref()).await
}

/// Imports industry membership: a `code,industry` CSV or a TDX install folder.
#[tauri::command]
#[specta::specta]
pub async fn industries_import(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    path: String,
) -> Result<IndustriesImportReport, CommandError> {
    import(&*desk(&state, &chat).await?, &path).await
}

/// The membership loads on record, oldest first.
#[tauri::command]
#[specta::specta]
pub async fn industry_loads(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Vec<LoadInfo>, CommandError> {
    Ok(desk(&state, &chat).await?.industry_loads().await?)
}

#[cfg(test)]
mod tests;
