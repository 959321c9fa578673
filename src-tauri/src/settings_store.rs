//! Persists settings through tauri-plugin-store in `$WYCKOFF_HOME/settings.json`.
//! Each settings field is one top-level key, so the file is the `Settings` JSON and
//! the CLI reads it with `wyckoff_config::settings::load`.

use std::sync::Arc;

use serde_json::Value;
use tauri::{AppHandle, Wry};
use tauri_plugin_store::{Store, StoreExt};
use wyckoff_config::DataHome;
use wyckoff_config::settings::{self, Settings, SettingsError};

pub struct SettingsStore {
    path: String,
    store: Option<Arc<Store<Wry>>>,
    loaded: Settings,
    /// Why the file could not be used (corrupt, newer version); shown to the user.
    pub problem: Option<String>,
    /// What a migration changed on load.
    pub notes: Vec<String>,
}

impl SettingsStore {
    pub fn open(app: &AppHandle, home: &DataHome) -> Self {
        let path = home.settings_path();
        // Validate and migrate with the shared code first: the plugin would happily
        // load a corrupt or future file, and we must not overwrite either.
        let (loaded, notes, problem) = match settings::load(&path) {
            Ok((s, notes)) => (s, notes, None),
            Err(e) => {
                tracing::error!("settings unusable: {e}");
                (Settings::default(), Vec::new(), Some(e.to_string()))
            }
        };
        let store = if problem.is_none() {
            match app.store_builder(&path).disable_auto_save().build() {
                Ok(store) => Some(store),
                Err(e) => {
                    tracing::error!("cannot open the settings store: {e}");
                    None
                }
            }
        } else {
            None
        };
        let this = SettingsStore {
            path: path.display().to_string(),
            store,
            loaded,
            problem,
            notes,
        };
        if !this.notes.is_empty() {
            // Persist the migrated form so the old layout (and any secret in it) is gone.
            if let Err(e) = this.write(&this.loaded) {
                tracing::error!("cannot save migrated settings: {e}");
            }
        }
        this
    }

    pub fn current(&self) -> &Settings {
        &self.loaded
    }

    /// Validates then writes. Invalid settings are rejected and nothing is written.
    pub fn write(&self, new: &Settings) -> Result<(), SettingsError> {
        new.validate()?;
        let path = self.path.clone();
        let Some(store) = &self.store else {
            return Err(SettingsError::Io {
                path,
                reason: self
                    .problem
                    .clone()
                    .unwrap_or_else(|| "the settings store is not open".into()),
            });
        };
        let Value::Object(fields) = serde_json::to_value(new).map_err(|e| SettingsError::Io {
            path: path.clone(),
            reason: e.to_string(),
        })?
        else {
            return Err(SettingsError::Io {
                path,
                reason: "settings did not serialize to an object".into(),
            });
        };
        for key in store.keys() {
            if !fields.contains_key(&key) {
                store.delete(&key);
            }
        }
        for (k, v) in fields {
            store.set(k, v);
        }
        store.save().map_err(|e| SettingsError::Io {
            path,
            reason: e.to_string(),
        })
    }
}
