use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::{AppHandle, State};
use tauri_specta::Event;
use wyckoff_config::settings::{Settings, SettingsError};

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
pub fn update_settings(
    app: AppHandle,
    state: State<'_, AppState>,
    settings: Settings,
) -> Result<Settings, SettingsError> {
    state.store.write(&settings)?;
    match state.settings.write() {
        Ok(mut current) => *current = settings.clone(),
        Err(poisoned) => *poisoned.into_inner() = settings.clone(),
    }
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
