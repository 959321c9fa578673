//! The portfolio page: the positions with the engine's diagnosis, and the user's own
//! edits. Reads go through the `portfolio` tool (mode diagnose) and writes through
//! `update_portfolio`'s function, so the page and the agent validate alike; the user's
//! own clicks need no approval dialog (the agent's calls still pass the approval gate).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use specta::Type;
use tauri::State;
use wyckoff_market::{MarketData, StockCode};

use crate::chat::ChatState;
use crate::commands::error::CommandError;
use crate::commands::overview::market;
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

fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn number(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64).filter(|x| x.is_finite())
}

fn row(r: &Value) -> PositionRow {
    PositionRow {
        code: text(r, "code").unwrap_or_default(),
        name: text(r, "name").unwrap_or_default(),
        shares: r.get("shares").and_then(Value::as_i64).unwrap_or(0),
        cost: number(r, "cost")
            .or_else(|| number(r, "cost_price"))
            .unwrap_or(0.0),
        buy_dt: text(r, "buy_dt").unwrap_or_default(),
        stop_loss: number(r, "stop_loss"),
        target_price: number(r, "target_price"),
        last: number(r, "latest_close"),
        last_date: text(r, "as_of"),
        data_status: text(r, "data_status").unwrap_or_else(|| "unavailable".into()),
        market_value: number(r, "market_value"),
        pnl_amount: number(r, "pnl_amount"),
        pnl_pct: number(r, "pnl_pct"),
        weight_pct: number(r, "weight_pct"),
        health: text(r, "health"),
        health_reasons: r
            .get("health_reasons")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        verdict: r
            .pointer("/diagnosis_brief/label")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
        error: text(r, "error"),
    }
}

/// The page from the `portfolio` tool's diagnose result (or its view of an empty
/// portfolio, which has `positions` instead of `diagnostics`).
pub fn page_from(v: &Value) -> PortfolioPage {
    let list = v
        .get("diagnostics")
        .or_else(|| v.get("positions"))
        .and_then(Value::as_array);
    PortfolioPage {
        positions: list
            .map(|l| l.iter().map(row).collect())
            .unwrap_or_default(),
        free_cash: number(v, "free_cash").unwrap_or(0.0),
        total_market_value: number(v, "total_market_value"),
        total_assets: number(v, "total_assets"),
        data_status: text(v, "data_status").unwrap_or_else(|| "unavailable".into()),
        as_of: text(v, "as_of"),
        without_quotes: v
            .get("failed_count")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0),
    }
}

pub async fn load(md: &MarketData) -> Result<PortfolioPage, CommandError> {
    let v = wyckoff_tools::portfolio::portfolio(md, &json!({"mode": "diagnose"}))
        .await
        .map_err(CommandError::internal)?;
    Ok(page_from(&v))
}

/// Applies one edit through `update_portfolio`'s validation; a refused edit writes nothing
/// and comes back as the tool's own message.
pub async fn apply(md: &MarketData, edit: &PortfolioEdit) -> Result<PortfolioPage, CommandError> {
    if let PortfolioEdit::Add { code, .. } = edit
        && let Ok(parsed) = StockCode::parse(code)
        && md.stock_info(&parsed).is_none()
    {
        // The tool would only say the name is missing; the user needs to hear why.
        return Err(CommandError::unknown_code(
            parsed.digits(),
            "not in the stock list",
        ));
    }
    let out = wyckoff_tools::portfolio::update(md, &edit_args(edit))
        .await
        .map_err(CommandError::invalid)?;
    if let Some(message) = out.get("error") {
        return Err(CommandError::invalid(
            message
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| message.to_string()),
        ));
    }
    load(md).await
}

/// The positions with last price, P/L, weight and the engine's health and verdict.
#[tauri::command]
#[specta::specta]
pub async fn portfolio_page(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<PortfolioPage, CommandError> {
    load(&*market(&state, &chat).await?).await
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
    apply(&*market(&state, &chat).await?, &edit).await
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
    set_levels(
        &*market(&state, &chat).await?,
        &code,
        stop_loss,
        target_price,
    )
    .await
}

/// [`portfolio_set_levels`]'s write and the page after it.
pub async fn set_levels(
    md: &MarketData,
    code: &str,
    stop_loss: Option<f64>,
    target_price: Option<f64>,
) -> Result<PortfolioPage, CommandError> {
    md.portfolio()
        .set_levels(code, stop_loss, target_price, md.clock().now())
        .await
        .map_err(CommandError::invalid)?;
    load(md).await
}

#[cfg(test)]
mod tests;
