use std::sync::Arc;

use tauri::AppHandle;
use wyckoff_config::{DataHome, Secrets, Settings, SharedSettings};

use crate::settings_store::SettingsStore;

/// State shared by every command.
pub struct AppState {
    pub home: DataHome,
    pub secrets: Arc<Secrets>,
    /// The one copy of the settings: the desk opens on it and reads it from then on.
    pub settings: SharedSettings,
    pub store: SettingsStore,
}

impl AppState {
    pub fn load(app: &AppHandle, home: DataHome) -> Self {
        let store = SettingsStore::open(app, &home);
        let settings = store.current().clone();
        AppState {
            secrets: Arc::new(Secrets::system()),
            settings: SharedSettings::new(settings),
            store,
            home,
        }
    }

    pub fn settings(&self) -> Settings {
        self.settings.get()
    }

    pub fn close_to_tray(&self) -> bool {
        self.settings().close_to_tray
    }
}
