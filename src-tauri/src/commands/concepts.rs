//! Concept blocks for the market map page and the stock page: each concept's 5-day return
//! against the market's, and one stock's industry and concept blocks. The desk computes
//! both; these commands carry them to the window as they are, with the loads they were
//! read from and whether a later load stood in for the day.

use serde::Serialize;
use specta::Type;
use tauri::State;
use wyckoff_session::Desk;
use wyckoff_session::domain::market::LoadInfo;
use wyckoff_session::domain::market::date::parse_date;

use crate::chat::ChatState;
use crate::commands::chat::desk;
use crate::commands::error::CommandError;
use crate::state::AppState;

/// One concept block on the day.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ConceptStrengthRow {
    pub concept: String,
    /// Members in the block (A-share stocks).
    pub members: u32,
    /// Of them, those with a 5-day return on the day.
    pub counted: u32,
    /// Their equal-weight mean 5-day return, percent.
    pub return_5d_pct: f64,
    /// `return_5d_pct` minus the market's, percentage points.
    pub relative_5d_pct: f64,
    /// Counted members that closed up on the day.
    pub up_today: u32,
}

/// Every concept block on one trading day, strongest relative return first.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ConceptStrengthDay {
    /// `YYYYMMDD`.
    pub date: u32,
    /// Stocks with a 5-day return on the day, and their mean, percent.
    pub market_stocks: u32,
    pub market_return_5d_pct: Option<f64>,
    pub rows: Vec<ConceptStrengthRow>,
}

/// The concept table as the map page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ConceptStrengthPage {
    /// `None`: no concept blocks on record (a TDX install's block_gn.dat gives them).
    pub load: Option<LoadInfo>,
    /// The load is dated after the day (none earlier exists): today's blocks stand in.
    pub load_later: bool,
    /// `None` with no blocks, or no bars cached on or before the day.
    pub table: Option<ConceptStrengthDay>,
}

/// What a stock belonged to on a day, as the stock page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct StockBlocks {
    /// Six digits.
    pub code: String,
    pub industry: Option<String>,
    /// The load the industry was read from.
    pub industry_load: Option<LoadInfo>,
    /// The industry is a later membership standing in for the day's.
    pub industry_later: bool,
    /// Concept blocks (概念), sorted.
    pub concepts: Vec<String>,
    /// Style blocks (风格), sorted.
    pub styles: Vec<String>,
    /// The block loads read (concepts, then styles).
    pub block_loads: Vec<LoadInfo>,
    /// A block load read is later than the day.
    pub blocks_later: bool,
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

/// The concept table of `as_of_date`'s trading day (the newest cached when `None`).
pub async fn strength(
    desk: &Desk,
    as_of_date: Option<&str>,
) -> Result<ConceptStrengthPage, CommandError> {
    let s = desk.concept_strength(as_of(as_of_date)?).await?;
    Ok(ConceptStrengthPage {
        load: s.load,
        load_later: s.load_later,
        table: s.table.map(|t| ConceptStrengthDay {
            date: t.date,
            market_stocks: t.market_stocks,
            market_return_5d_pct: t.market_return_5d_pct,
            rows: t
                .rows
                .into_iter()
                .map(|r| ConceptStrengthRow {
                    concept: r.concept,
                    members: r.members,
                    counted: r.counted,
                    return_5d_pct: r.return_5d_pct,
                    relative_5d_pct: r.relative_5d_pct,
                    up_today: r.up_today,
                })
                .collect(),
        }),
    })
}

/// `code`'s industry and blocks as of `as_of_date` (the latest loads when `None`).
pub async fn blocks(
    desk: &Desk,
    code: &str,
    as_of_date: Option<&str>,
) -> Result<StockBlocks, CommandError> {
    let m = desk
        .stock_membership(code.trim(), as_of(as_of_date)?)
        .await?;
    Ok(StockBlocks {
        code: m.code,
        industry: m.industry,
        industry_load: m.industry_load,
        industry_later: m.industry_later,
        concepts: m.concepts,
        styles: m.styles,
        block_loads: m.block_loads,
        blocks_later: m.blocks_later,
    })
}

/// Each concept block's 5-day return against the market's (`as_of` `YYYY-MM-DD`; the
/// newest cached day when `None`), strongest first.
#[tauri::command]
#[specta::specta]
pub async fn concept_strength(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    as_of: Option<String>,
) -> Result<ConceptStrengthPage, CommandError> {
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
) -> Result<StockBlocks, CommandError> {
    blocks(&*desk(&state, &chat).await?, &code, as_of.as_deref()).await
}

#[cfg(test)]
mod tests;
