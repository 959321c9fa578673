//! The alert centre: rules (add, switch, remove) and the alerts that fired.
//! Thin adapters over `wyckoff_alerts`; a check runs as the `alerts` background task
//! (`start_task`), the same job a schedule runs.

use chrono::Utc;
use tauri::State;
use wyckoff_protocol::{AlertCondition, AlertRule, AlertTarget, FiredAlert};
use wyckoff_session::domain::alerts::{AlertStore, NewRule};

use crate::chat::ChatState;
use crate::commands::chat::desk;
use crate::commands::error::CommandError;
use crate::state::AppState;

/// Default cooldown: once per stock per rule per trading day.
const DEFAULT_COOLDOWN_DAYS: u32 = 1;
/// Fired alerts listed at most.
const HISTORY_MAX: u32 = 500;

async fn store(
    state: &AppState,
    chat: &ChatState,
) -> Result<
    (
        std::sync::Arc<wyckoff_session::domain::market::MarketData>,
        AlertStore,
    ),
    CommandError,
> {
    let desk = desk(state, chat).await?;
    Ok((desk.market().clone(), desk.alerts().clone()))
}

#[tauri::command]
#[specta::specta]
pub async fn alert_rules(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Vec<AlertRule>, CommandError> {
    let (_, store) = store(&state, &chat).await?;
    Ok(store.rules().await?)
}

/// Adds a rule after checking it (nothing stored when it is wrong).
#[tauri::command]
#[specta::specta]
pub async fn alert_add(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    target: AlertTarget,
    condition: AlertCondition,
    cooldown_days: Option<u32>,
) -> Result<AlertRule, CommandError> {
    let (md, store) = store(&state, &chat).await?;
    let rule = wyckoff_session::domain::alerts::validate(
        &md,
        NewRule {
            target,
            condition,
            cooldown_days: cooldown_days.unwrap_or(DEFAULT_COOLDOWN_DAYS),
        },
    )?;
    Ok(store.add_rule(&rule, Utc::now()).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn alert_set_enabled(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    id: i64,
    enabled: bool,
) -> Result<AlertRule, CommandError> {
    let (_, store) = store(&state, &chat).await?;
    Ok(store.set_enabled(id, enabled).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn alert_remove(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    id: i64,
) -> Result<(), CommandError> {
    let (_, store) = store(&state, &chat).await?;
    Ok(store.remove_rule(id).await?)
}

/// What fired, newest first, with the figures and where it was delivered.
#[tauri::command]
#[specta::specta]
pub async fn alert_history(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Vec<FiredAlert>, CommandError> {
    let (_, store) = store(&state, &chat).await?;
    Ok(store.history(HISTORY_MAX).await?)
}
