use serde::Serialize;
use specta::Type;
use tauri::State;

use crate::state::AppState;

#[derive(Debug, Clone, Serialize, Type)]
pub struct AppInfo {
    pub version: String,
    pub data_home: String,
    pub settings_path: String,
    pub logs_dir: String,
}

/// Version and where the app keeps its files.
#[tauri::command]
#[specta::specta]
pub fn app_info(state: State<'_, AppState>) -> AppInfo {
    AppInfo {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        data_home: state.home.root().display().to_string(),
        settings_path: state.home.settings_path().display().to_string(),
        logs_dir: state.home.logs_dir().display().to_string(),
    }
}
