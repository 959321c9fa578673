//! The market workspace (stock page, search, watchlist): thin adapters over
//! `wyckoff-market` (bars, search, watchlist) and `wyckoff-engine` (the Wyckoff reading).
//! The engine computes every label and line here; the webview only draws them.

use serde::Serialize;
use specta::Type;
use tauri::State;
use wyckoff_session::Desk;
use wyckoff_session::domain::engine::Phase;
use wyckoff_session::domain::market::{MarketData, StockCode};
use wyckoff_session::reports::{BarsFreshness, StockDiagnosis};
// build_chart: for the end-to-end tests and benchmarks, which hold a market data alone.
pub use wyckoff_session::reports::{Period, StockChart, build_chart};

use crate::chat::ChatState;
use crate::commands::chat::{desk, services};
use crate::commands::error::CommandError;
use crate::state::AppState;

const SEARCH_LIMIT: usize = 20;

async fn market(
    state: &AppState,
    chat: &ChatState,
) -> Result<std::sync::Arc<MarketData>, CommandError> {
    Ok(services(state, chat).await?.market().clone())
}

/// The stock page's data: bars as columns, MA lines, the Wyckoff reading, signals, a
/// holding's lines, the diagnosis and the data's freshness; `as_of` (YYYYMMDD) gives the
/// page as it stood at that close (replay).
#[tauri::command]
#[specta::specta]
pub async fn stock_chart(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    code: String,
    period: Period,
    as_of: Option<u32>,
) -> Result<StockChart, CommandError> {
    let desk = desk(&state, &chat).await?;
    Ok(desk.chart(&code, period, as_of).await?)
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct StockHit {
    pub code: String,
    pub name: String,
    pub exchange: String,
    /// How it matched: code, name or pinyin.
    pub matched: String,
}

/// Stocks by code, name or pinyin initials (the same search the agent's tool uses).
#[tauri::command]
#[specta::specta]
pub async fn search_stocks(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    query: String,
) -> Result<Vec<StockHit>, CommandError> {
    let q = query.trim();
    if q.is_empty() {
        return Ok(Vec::new());
    }
    let md = market(&state, &chat).await?;
    Ok(md
        .search(q, SEARCH_LIMIT)
        .into_iter()
        .map(|h| StockHit {
            code: h.code,
            name: h.name,
            exchange: h.exchange,
            matched: h.matched.to_owned(),
        })
        .collect())
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct WatchlistRow {
    pub code: String,
    pub name: Option<String>,
    pub last: Option<f64>,
    pub change_pct: Option<f64>,
    pub health: Option<String>,
    /// Accumulation stage or Wyckoff phase, as the diagnosis reads it.
    pub stage: Option<String>,
    pub as_of: Option<u32>,
    pub data_status: String,
    /// RFC 3339.
    pub added_at: String,
}

/// The phase's letter, as the page shows it.
fn phase_letter(p: Phase) -> &'static str {
    match p {
        Phase::A => "A",
        Phase::B => "B",
        Phase::C => "C",
        Phase::D => "D",
        Phase::E => "E",
    }
}

/// One watchlist row from the cache and the engine (as `analyze_stock` diagnoses it); a
/// stock without bars says so.
async fn watchlist_row(desk: &Desk, code: &str, added_at: String) -> WatchlistRow {
    let found = desk.diagnose_stock(code).await;
    let (bars, d) = match found {
        Ok(StockDiagnosis::Diagnosed(d)) => (Some(d.bars), Some(d.diagnosis)),
        Ok(StockDiagnosis::NoBars(bars)) => (Some(bars), None),
        Err(e) => {
            tracing::debug!(code, "watchlist row without a diagnosis: {e}");
            (None, None)
        }
    };
    let stage = d.as_ref().and_then(|d| {
        d.wyckoff
            .phase
            .map(|p| format!("Phase {}", phase_letter(p)))
            .or_else(|| d.accum_stage.map(|s| s.as_str().to_owned()))
    });
    WatchlistRow {
        code: code.to_owned(),
        name: bars
            .as_ref()
            .and_then(|b| b.name.clone())
            .filter(|n| !n.is_empty()),
        last: d.as_ref().and_then(|d| d.latest_close),
        change_pct: d.as_ref().and_then(|d| d.day_change_pct),
        health: d.as_ref().map(|d| d.health.clone()),
        stage,
        as_of: d.as_ref().and_then(|d| d.latest_date),
        data_status: bars
            .as_ref()
            .map(|b| BarsFreshness::of(b).data_status)
            .unwrap_or_else(|| "unavailable".into()),
        added_at,
    }
}

pub async fn watchlist_rows(desk: &Desk) -> Result<Vec<WatchlistRow>, CommandError> {
    let mut rows = Vec::new();
    for e in desk.watchlist().list().await? {
        rows.push(watchlist_row(desk, &e.code, e.added_at.to_rfc3339()).await);
    }
    Ok(rows)
}

#[tauri::command]
#[specta::specta]
pub async fn watchlist(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Vec<WatchlistRow>, CommandError> {
    let desk = desk(&state, &chat).await?;
    watchlist_rows(&desk).await
}

/// Adds a stock to the watchlist; unknown codes are refused.
#[tauri::command]
#[specta::specta]
pub async fn watchlist_add(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    code: String,
) -> Result<Vec<WatchlistRow>, CommandError> {
    let desk = desk(&state, &chat).await?;
    let md = desk.market();
    let parsed = StockCode::parse(&code)?;
    if md.stock_info(&parsed).is_none() {
        return Err(CommandError::unknown_code(
            parsed.digits(),
            "not in the stock list and no cached bars",
        ));
    }
    desk.watchlist()
        .add(parsed.digits(), md.clock().now())
        .await?;
    watchlist_rows(&desk).await
}

#[tauri::command]
#[specta::specta]
pub async fn watchlist_remove(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    code: String,
) -> Result<Vec<WatchlistRow>, CommandError> {
    let desk = desk(&state, &chat).await?;
    desk.watchlist().remove(&code).await?;
    watchlist_rows(&desk).await
}

/// Whether a stock is on the watchlist (the stock page's add/remove toggle).
#[tauri::command]
#[specta::specta]
pub async fn watchlist_contains(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    code: String,
) -> Result<bool, CommandError> {
    Ok(desk(&state, &chat)
        .await?
        .watchlist()
        .contains(&code)
        .await?)
}

#[cfg(test)]
mod tests;
