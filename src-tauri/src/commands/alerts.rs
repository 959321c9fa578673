//! The alert centre: rules (add, switch, remove) and the alerts that fired.
//! Thin adapters over `wyckoff_alerts`; a check runs as the `alerts` background task
//! (`start_task`), the same job a schedule runs.

use chrono::Utc;
use serde::Serialize;
use specta::Type;
use tauri::State;
use wyckoff_alerts::{AlertStore, NewRule, RuleError, StoreError};
use wyckoff_protocol::{AlertCondition, AlertRule, AlertTarget, FiredAlert};

use crate::chat::ChatState;
use crate::commands::chat::{ChatError, services};
use crate::state::AppState;

/// Default cooldown: once per stock per rule per trading day.
const DEFAULT_COOLDOWN_DAYS: u32 = 1;
/// Fired alerts listed at most.
const HISTORY_MAX: u32 = 500;

#[derive(Debug, Clone, Serialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AlertError {
    /// The rule is wrong (a bad or unlisted code, a non-positive level, an unknown event, a
    /// cooldown out of range): nothing stored.
    Invalid {
        message: String,
    },
    NotFound {
        message: String,
    },
    Other {
        message: String,
    },
}

impl From<RuleError> for AlertError {
    fn from(e: RuleError) -> Self {
        AlertError::Invalid {
            message: e.to_string(),
        }
    }
}

impl From<StoreError> for AlertError {
    fn from(e: StoreError) -> Self {
        let message = e.to_string();
        match e {
            StoreError::NotFound(_) => AlertError::NotFound { message },
            _ => AlertError::Other { message },
        }
    }
}

impl From<ChatError> for AlertError {
    fn from(e: ChatError) -> Self {
        AlertError::Other {
            message: e.into_message(),
        }
    }
}

async fn store(
    state: &AppState,
    chat: &ChatState,
) -> Result<(std::sync::Arc<wyckoff_market::MarketData>, AlertStore), AlertError> {
    let md = services(state, chat).await?.market().clone();
    let store = AlertStore::new(md.pool().clone()).await?;
    Ok((md, store))
}

#[tauri::command]
#[specta::specta]
pub async fn alert_rules(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Vec<AlertRule>, AlertError> {
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
) -> Result<AlertRule, AlertError> {
    let (md, store) = store(&state, &chat).await?;
    let rule = wyckoff_alerts::validate(
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
) -> Result<AlertRule, AlertError> {
    let (_, store) = store(&state, &chat).await?;
    Ok(store.set_enabled(id, enabled).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn alert_remove(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    id: i64,
) -> Result<(), AlertError> {
    let (_, store) = store(&state, &chat).await?;
    Ok(store.remove_rule(id).await?)
}

/// What fired, newest first, with the figures and where it was delivered.
#[tauri::command]
#[specta::specta]
pub async fn alert_history(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Vec<FiredAlert>, AlertError> {
    let (_, store) = store(&state, &chat).await?;
    Ok(store.history(HISTORY_MAX).await?)
}
