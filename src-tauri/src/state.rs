use std::sync::{Arc, RwLock};

use tauri::AppHandle;
use wyckoff_config::{DataHome, Secrets, Settings};

use crate::settings_store::SettingsStore;

/// State shared by every command.
pub struct AppState {
    pub home: DataHome,
    pub secrets: Arc<Secrets>,
    pub settings: RwLock<Settings>,
    pub store: SettingsStore,
}

impl AppState {
    pub fn load(app: &AppHandle, home: DataHome) -> Self {
        let store = SettingsStore::open(app, &home);
        let settings = store.current().clone();
        AppState {
            secrets: Arc::new(Secrets::system()),
            settings: RwLock::new(settings),
            store,
            home,
        }
    }

    pub fn settings(&self) -> Settings {
        match self.settings.read() {
            Ok(s) => s.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub fn close_to_tray(&self) -> bool {
        self.settings().close_to_tray
    }
}
