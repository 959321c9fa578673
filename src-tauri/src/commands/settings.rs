use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::{AppHandle, State};
use tauri_specta::Event;
use wyckoff_config::settings::{ModelEntry, Settings, SettingsError};
use wyckoff_protocol::ErrorKind;
use wyckoff_session::connection::{self, ConnectionError};

use crate::chat::ChatState;
use crate::state::AppState;
use crate::tray;

#[derive(Debug, Clone, Serialize, Type)]
pub struct SettingsView {
    pub settings: Settings,
    /// Set when the settings file could not be used (corrupt, newer version); the app
    /// runs on defaults and will not overwrite the file.
    pub problem: Option<String>,
    /// What a migration changed when the file was loaded.
    pub migration_notes: Vec<String>,
}

/// Emitted after settings change, so every window and the tray can follow.
#[derive(Debug, Clone, Serialize, Deserialize, Type, Event)]
pub struct SettingsChanged {
    pub settings: Settings,
}

#[tauri::command]
#[specta::specta]
pub fn get_settings(state: State<'_, AppState>) -> SettingsView {
    SettingsView {
        settings: state.settings(),
        problem: state.store.problem.clone(),
        migration_notes: state.store.notes.clone(),
    }
}

/// Validates and saves. On error nothing is written and the old settings stay.
#[tauri::command]
#[specta::specta]
pub async fn update_settings(
    app: AppHandle,
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    settings: Settings,
) -> Result<Settings, SettingsError> {
    state.store.write(&settings)?;
    // One copy: an open desk takes the change (a new proxy, a new source order) and
    // records it; before the desk opens, it opens on what is recorded here.
    let applied = match chat.opened_desk() {
        Some(desk) => desk.apply_settings(settings.clone()).await,
        None => Ok(true),
    };
    if let Err(e) = applied {
        tracing::warn!("saved settings not applied in full: {e}");
    }
    state.settings.replace(settings.clone());
    tracing::info!("settings saved");
    tray::refresh_labels(&app, settings.language);
    if let Err(e) = (SettingsChanged {
        settings: settings.clone(),
    })
    .emit(&app)
    {
        tracing::warn!("cannot emit settings_changed: {e}");
    }
    Ok(settings)
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct ConnectionOk {
    pub provider: String,
    pub model: String,
    pub elapsed_ms: u32,
    /// The start of the model's reply to "ping".
    pub reply: String,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct ConnectionFailed {
    /// The vendor's error, classified; `None` when the entry could not be built (a
    /// missing key, a bad setting) and no request was made.
    pub kind: Option<ErrorKind>,
    /// What happened and what to do.
    pub message: String,
}

/// "Test connection" for a model entry as it is in the form (saved or not): one tiny
/// request with the stored key and the saved proxy.
#[tauri::command]
#[specta::specta]
pub async fn test_connection(
    state: State<'_, AppState>,
    entry: ModelEntry,
) -> Result<ConnectionOk, ConnectionFailed> {
    match connection::test_entry(&state.settings(), &state.secrets, &entry).await {
        Ok(check) => Ok(ConnectionOk {
            provider: check.provider,
            model: check.model,
            elapsed_ms: u32::try_from(check.elapsed.as_millis()).unwrap_or(u32::MAX),
            reply: check.reply,
        }),
        Err(ConnectionError::Vendor(e)) => Err(ConnectionFailed {
            kind: Some(e.kind),
            message: e.message,
        }),
        Err(e @ ConnectionError::Setup(_)) => Err(ConnectionFailed {
            kind: None,
            message: e.to_string(),
        }),
    }
}
