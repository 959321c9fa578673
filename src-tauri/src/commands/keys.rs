//! API keys: the webview may ask whether a key is set, set one, or delete one. A key's
//! value never travels back to the webview.

use std::sync::Arc;

use serde::Serialize;
use specta::Type;
use tauri::State;
use wyckoff_config::secrets::{KeychainState, SecretId};
use wyckoff_config::{KeyStatus, SecretError, Secrets};

use crate::chat::ChatState;
use crate::state::AppState;

#[derive(Debug, Clone, Serialize, Type)]
pub struct KeysReport {
    pub keychain: KeychainState,
    pub keys: Vec<KeyStatus>,
}

/// Keychain calls can block for seconds (D-Bus), so they run off the async runtime.
async fn blocking<T: Send + 'static>(
    secrets: &Arc<Secrets>,
    f: impl FnOnce(&Secrets) -> T + Send + 'static,
) -> Result<T, SecretError> {
    let secrets = secrets.clone();
    tokio::task::spawn_blocking(move || f(&secrets))
        .await
        .map_err(|e| SecretError::Keychain {
            reason: e.to_string(),
        })
}

#[tauri::command]
#[specta::specta]
pub async fn key_statuses(state: State<'_, AppState>) -> Result<KeysReport, SecretError> {
    let ids = SecretId::all_for(&state.settings());
    blocking(&state.secrets, move |s| KeysReport {
        keychain: s.keychain_state(),
        keys: ids.iter().map(|id| s.status(id)).collect(),
    })
    .await
}

/// Stores a key in the keychain, or only for this session when `session_only` is set
/// (offered when no keychain is reachable). Returns the key's new status.
#[tauri::command]
#[specta::specta]
pub async fn set_key(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    id: SecretId,
    value: String,
    session_only: bool,
) -> Result<KeyStatus, SecretError> {
    let status = blocking(&state.secrets, move |s| {
        if session_only {
            s.set_for_session(&id, &value)
        } else {
            s.set(&id, &value)
        }?;
        let status = s.status(&id);
        Ok::<_, SecretError>((id, status))
    })
    .await??;
    reload_market_sources(&chat, &status.0).await;
    Ok(status.1)
}

/// A data-source token changed: the open market data takes it now (the services are
/// opened once per process, so nothing else would).
async fn reload_market_sources(chat: &ChatState, id: &SecretId) {
    if !matches!(id, SecretId::DataSource { .. }) {
        return;
    }
    if let Some(services) = chat.opened_services()
        && let Err(e) = services.reload_market_sources().await
    {
        tracing::warn!("cannot apply the data-source token: {e}");
    }
}

#[tauri::command]
#[specta::specta]
pub async fn delete_key(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    id: SecretId,
) -> Result<KeyStatus, SecretError> {
    let status = blocking(&state.secrets, move |s| {
        s.delete(&id)?;
        let status = s.status(&id);
        Ok::<_, SecretError>((id, status))
    })
    .await??;
    reload_market_sources(&chat, &status.0).await;
    Ok(status.1)
}
