//! The portfolio page: the positions with the engine's diagnosis, and the user's own
//! edits. Reads are the `portfolio` tool's diagnosis (typed) and writes go through
//! `update_portfolio`'s function, so the page and the agent validate alike; the user's
//! own clicks need no approval dialog (the agent's calls still pass the approval gate).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use specta::Type;
use tauri::State;
use wyckoff_session::Desk;
use wyckoff_session::domain::market::{PortfolioView, StockCode};
use wyckoff_session::reports::{HoldingReport, PortfolioDiagnosis, UpdateError};

use crate::chat::ChatState;
use crate::commands::chat::desk;
use crate::commands::error::CommandError;
use crate::state::AppState;

/// One holding as the page shows it. Price fields are `None` when the cache has no bar
/// for the code (never estimated); `last_date` says how old `last` is.
#[derive(Debug, Clone, Serialize, Type)]
pub struct PositionRow {
    pub code: String,
    pub name: String,
    pub shares: i64,
    pub cost: f64,
    /// YYYY-MM-DD.
    pub buy_dt: String,
    pub stop_loss: Option<f64>,
    /// The target (take-profit) price; the alerts check fires when a close reaches it.
    pub target_price: Option<f64>,
    pub last: Option<f64>,
    /// The date of the bar `last` comes from (YYYY-MM-DD).
    pub last_date: Option<String>,
    /// ok / stale / partial / unavailable, for `last`.
    pub data_status: String,
    pub market_value: Option<f64>,
    pub pnl_amount: Option<f64>,
    pub pnl_pct: Option<f64>,
    /// Share of the total market value, percent.
    pub weight_pct: Option<f64>,
    pub health: Option<String>,
    pub health_reasons: Vec<String>,
    /// The engine's verdict (`diagnosis_brief.label`).
    pub verdict: Option<String>,
    /// Why the holding could not be diagnosed (no bars).
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct PortfolioPage {
    pub positions: Vec<PositionRow>,
    pub free_cash: f64,
    /// The free cash is the ledger's (it records bank transfers), not a figure to set here.
    pub cash_from_ledger: bool,
    pub total_market_value: Option<f64>,
    pub total_assets: Option<f64>,
    pub data_status: String,
    /// The oldest last bar among the holdings (YYYY-MM-DD).
    pub as_of: Option<String>,
    /// Holdings with no bars to price them: the totals and weights cover the others.
    pub without_quotes: u32,
}

/// One edit from the page's form.
#[derive(Debug, Clone, Serialize, Deserialize, Type, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PortfolioEdit {
    Add {
        code: String,
        shares: i64,
        cost_price: f64,
        /// YYYY-MM-DD or YYYYMMDD.
        buy_dt: String,
    },
    Update {
        code: String,
        shares: Option<i64>,
        cost_price: Option<f64>,
    },
    Remove {
        code: String,
    },
    SetCash {
        free_cash: f64,
    },
}

/// The `update_portfolio` arguments an edit stands for.
pub fn edit_args(edit: &PortfolioEdit) -> Value {
    let mut args = serde_json::to_value(edit).unwrap_or_else(|_| json!({}));
    if let Some(obj) = args.as_object_mut() {
        let action = obj.remove("type").unwrap_or(Value::Null);
        obj.insert("action".into(), action);
        obj.retain(|_, v| !v.is_null());
    }
    args
}

fn finite(x: Option<f64>) -> Option<f64> {
    x.filter(|x| x.is_finite())
}

fn nonempty(s: String) -> Option<String> {
    Some(s).filter(|s| !s.is_empty())
}

impl From<HoldingReport> for PositionRow {
    fn from(h: HoldingReport) -> Self {
        let d = h.diagnosis;
        PositionRow {
            code: h.code,
            name: h.name,
            shares: h.shares,
            cost: h.cost,
            buy_dt: h.buy_dt,
            stop_loss: finite(h.stop_loss),
            target_price: finite(h.target_price),
            last: finite(d.as_ref().and_then(|d| d.latest_close)),
            last_date: h.freshness.as_of.and_then(nonempty),
            data_status: h.freshness.data_status,
            market_value: finite(h.market_value),
            pnl_amount: finite(h.pnl_amount),
            pnl_pct: finite(d.as_ref().and_then(|d| d.pnl_pct)),
            weight_pct: finite(h.weight_pct),
            health: d.as_ref().and_then(|d| nonempty(d.health.clone())),
            health_reasons: d
                .as_ref()
                .map(|d| d.health_reasons.clone())
                .unwrap_or_default(),
            verdict: d.and_then(|d| nonempty(d.diagnosis_brief.label)),
            error: h.error.and_then(nonempty),
        }
    }
}

/// The page with every holding diagnosed.
pub fn page_of(d: PortfolioDiagnosis, cash_from_ledger: bool) -> PortfolioPage {
    PortfolioPage {
        without_quotes: u32::try_from(d.failed_count).unwrap_or(u32::MAX),
        free_cash: d.free_cash,
        cash_from_ledger,
        total_market_value: finite(Some(d.total_market_value)),
        total_assets: finite(Some(d.total_assets)),
        data_status: d.data_status,
        as_of: d.as_of.and_then(nonempty),
        positions: d.diagnostics.into_iter().map(Into::into).collect(),
    }
}

/// The page of a portfolio without positions (nothing to diagnose, so no totals).
fn page_of_cash(view: &PortfolioView, cash_from_ledger: bool) -> PortfolioPage {
    PortfolioPage {
        positions: Vec::new(),
        free_cash: view.free_cash,
        cash_from_ledger,
        total_market_value: None,
        total_assets: None,
        data_status: "ok".into(),
        as_of: None,
        without_quotes: 0,
    }
}

/// The positions diagnosed as the `portfolio` tool (mode diagnose) reports them.
pub async fn load(desk: &Desk) -> Result<PortfolioPage, CommandError> {
    let (view, cash_from_ledger) = desk.account_view().await.map_err(CommandError::internal)?;
    if view.positions.is_empty() {
        return Ok(page_of_cash(&view, cash_from_ledger));
    }
    let d = desk
        .diagnose_portfolio(&view)
        .await
        .map_err(CommandError::internal)?;
    Ok(page_of(d, cash_from_ledger))
}

/// Applies one edit through `update_portfolio`'s validation; a refused edit writes nothing
/// and comes back as invalid input with the tool's own message (a database failure is
/// internal).
pub async fn apply(desk: &Desk, edit: &PortfolioEdit) -> Result<PortfolioPage, CommandError> {
    if let PortfolioEdit::Add { code, .. } = edit
        && let Ok(parsed) = StockCode::parse(code)
        && desk.market().stock_info(&parsed).is_none()
    {
        // The tool would only say the name is missing; the user needs to hear why.
        return Err(CommandError::unknown_code(
            parsed.digits(),
            "not in the stock list",
        ));
    }
    match desk.update_portfolio(&edit_args(edit)).await {
        Ok(_) => load(desk).await,
        Err(UpdateError::Refused(refusal)) => Err(CommandError::invalid(refusal)),
        Err(UpdateError::Failed(e)) => Err(CommandError::internal(e)),
    }
}

/// The positions with last price, P/L, weight and the engine's health and verdict.
#[tauri::command]
#[specta::specta]
pub async fn portfolio_page(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<PortfolioPage, CommandError> {
    load(&*desk(&state, &chat).await?).await
}

/// The user's own add / update / remove / set-cash (no approval dialog: the click is the
/// user's); returns the page after the write.
#[tauri::command]
#[specta::specta]
pub async fn portfolio_edit(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    edit: PortfolioEdit,
) -> Result<PortfolioPage, CommandError> {
    apply(&*desk(&state, &chat).await?, &edit).await
}

/// The user's own stop-loss and target price on a holding (`None` clears one; a target
/// must lie above the stop); the alerts check fires when a close reaches either. A refused
/// pair writes nothing. Returns the page after the write.
#[tauri::command]
#[specta::specta]
pub async fn portfolio_set_levels(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    code: String,
    stop_loss: Option<f64>,
    target_price: Option<f64>,
) -> Result<PortfolioPage, CommandError> {
    set_levels(&*desk(&state, &chat).await?, &code, stop_loss, target_price).await
}

/// [`portfolio_set_levels`]'s write and the page after it.
pub async fn set_levels(
    desk: &Desk,
    code: &str,
    stop_loss: Option<f64>,
    target_price: Option<f64>,
) -> Result<PortfolioPage, CommandError> {
    let md = desk.market();
    md.portfolio()
        .set_levels(code, stop_loss, target_price, md.clock().now())
        .await
        .map_err(CommandError::invalid)?;
    load(desk).await
}

#[cfg(test)]
mod tests;
