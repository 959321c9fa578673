//! Non-secret settings: typed schema, defaults, validation and migration.
//!
//! The desktop app persists them through tauri-plugin-store (one top-level key per
//! field, so the file is exactly this struct as JSON); the CLI reads the same file with
//! [`load`]. Secrets never appear here: they live in the keychain (see `secrets`).

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use specta::Type;

pub const SETTINGS_FILE: &str = "settings.json";
pub const CURRENT_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    #[default]
    Zh,
    En,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Theme {
    #[default]
    System,
    Light,
    Dark,
}

pub use wyckoff_protocol::ProviderKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum DataSourceKind {
    Eastmoney,
    Tencent,
    Tickflow,
    Tushare,
}

/// One configured model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ModelEntry {
    /// Stable id chosen by the user, e.g. "deepseek-main".
    pub id: String,
    pub provider: ProviderKind,
    pub model: String,
    pub base_url: Option<String>,
    /// Overrides the known-model table.
    pub context_window: Option<i32>,
    /// USD per million tokens, for the cost estimate in the status bar.
    pub input_price_per_mtok: Option<f64>,
    pub output_price_per_mtok: Option<f64>,
}

/// Every field is required on the wire (IPC sends whole objects); files with missing
/// fields are completed from the defaults in [`Settings::from_value`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct Settings {
    pub version: u32,
    pub language: Language,
    pub theme: Theme,
    /// Closing the main window hides it to the tray instead of quitting.
    pub close_to_tray: bool,
    /// Desktop notification when background work finishes.
    pub notifications: bool,
    pub models: Vec<ModelEntry>,
    pub main_model: Option<String>,
    /// Cheaper model for simple turns (heavy/light routing); none = no routing.
    pub light_model: Option<String>,
    /// Tried in order when the main model fails with a retryable error.
    pub fallback_models: Vec<String>,
    pub stream_idle_timeout_secs: i32,
    pub tool_timeout_secs: i32,
    pub approval_timeout_secs: i32,
    /// http(s):// or socks5:// proxy for model and data requests; none = system/env.
    pub proxy: Option<String>,
    pub data_sources: Vec<DataSourceKind>,
    /// Let web_fetch reach private and loopback addresses.
    pub allow_private_web_fetch: bool,
    /// Folders read_file / write_file may use besides the data home's `workspace/`
    /// (absolute paths; one that does not exist is left out until it does).
    pub file_roots: Vec<String>,
    /// Scratchpads, offloaded tool results and context archives older than this are
    /// removed, unless a stored conversation still points to them.
    pub retention_days: i32,
    /// Sizing by risk and the account's limits (see [`RiskSettings`]).
    pub risk: RiskSettings,
    /// Minutes between intraday alert checks during the session (the app's and the
    /// daemon's): each check claims one slot of this length from 09:30 / 13:00.
    pub intraday_alert_minutes: i32,
    /// Ask the update server a little after start and once a day while the app runs
    /// whether a newer signed version exists (never installs without the user's click).
    pub check_for_updates: bool,
}

/// How buys are sized and what guards the account. Percents of equity; a limit of 0 is
/// off (the brake's stop-out window excepted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct RiskSettings {
    /// Equity at risk to the stop per trade.
    pub risk_per_trade_pct: f64,
    /// The most one position may cost.
    pub max_position_pct: f64,
    /// Open risk to the stops of all positions ("heat").
    pub max_heat_pct: f64,
    /// One industry's market value.
    pub max_industry_pct: f64,
    pub max_positions: i32,
    /// No new buy while NAV is this far below its high.
    pub drawdown_brake_pct: f64,
    /// No new buy after this many losing sales within `stop_out_days` calendar days.
    pub max_stop_outs: i32,
    pub stop_out_days: i32,
}

impl Default for RiskSettings {
    fn default() -> Self {
        RiskSettings {
            risk_per_trade_pct: 1.0,
            max_position_pct: 20.0,
            max_heat_pct: 6.0,
            max_industry_pct: 30.0,
            max_positions: 8,
            drawdown_brake_pct: 15.0,
            max_stop_outs: 3,
            stop_out_days: 10,
        }
    }
}

/// Valid ranges of [`RiskSettings`].
pub const MAX_POSITIONS_RANGE: (i32, i32) = (0, 200);
pub const MAX_STOP_OUTS_RANGE: (i32, i32) = (0, 100);
pub const STOP_OUT_DAYS_RANGE: (i32, i32) = (1, 365);

impl RiskSettings {
    /// Checks every field; the first problem found is returned, named `risk.<field>`.
    pub fn validate(&self) -> Result<(), SettingsError> {
        // Sizing needs a budget; the limits may be off (0).
        for (field, v, min) in [
            ("risk_per_trade_pct", self.risk_per_trade_pct, 0.01),
            ("max_position_pct", self.max_position_pct, 0.01),
            ("max_heat_pct", self.max_heat_pct, 0.0),
            ("max_industry_pct", self.max_industry_pct, 0.0),
            ("drawdown_brake_pct", self.drawdown_brake_pct, 0.0),
        ] {
            if !v.is_finite() || v < min || v > 100.0 {
                let off = if min == 0.0 { " (0 turns it off)" } else { "" };
                return Err(invalid(
                    format!("risk.{field}"),
                    format!("must be a percent between {min} and 100{off} (got {v})"),
                ));
            }
        }
        check_range(
            "risk.max_positions",
            self.max_positions,
            MAX_POSITIONS_RANGE,
        )?;
        check_range(
            "risk.max_stop_outs",
            self.max_stop_outs,
            MAX_STOP_OUTS_RANGE,
        )?;
        check_range(
            "risk.stop_out_days",
            self.stop_out_days,
            STOP_OUT_DAYS_RANGE,
        )?;
        Ok(())
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            version: CURRENT_VERSION,
            language: Language::Zh,
            theme: Theme::System,
            close_to_tray: true,
            notifications: true,
            models: Vec::new(),
            main_model: None,
            light_model: None,
            fallback_models: Vec::new(),
            stream_idle_timeout_secs: 60,
            tool_timeout_secs: DEFAULT_TOOL_TIMEOUT_SECS,
            approval_timeout_secs: 120,
            proxy: None,
            data_sources: vec![
                DataSourceKind::Eastmoney,
                DataSourceKind::Tencent,
                DataSourceKind::Tickflow,
                DataSourceKind::Tushare,
            ],
            allow_private_web_fetch: false,
            file_roots: Vec::new(),
            retention_days: 30,
            risk: RiskSettings::default(),
            intraday_alert_minutes: DEFAULT_INTRADAY_ALERT_MINUTES,
            check_for_updates: true,
        }
    }
}

/// Foreground tool time limit when nothing is configured. The one source of truth: the
/// agent runtime's default and the Settings default both read it (REFERENCE: 60 s).
pub const DEFAULT_TOOL_TIMEOUT_SECS: i32 = 60;

/// Valid ranges, in seconds.
pub const STREAM_IDLE_TIMEOUT_RANGE: (i32, i32) = (10, 600);
pub const TOOL_TIMEOUT_RANGE: (i32, i32) = (5, 300);
pub const APPROVAL_TIMEOUT_RANGE: (i32, i32) = (10, 600);
/// Minutes, for [`Settings::intraday_alert_minutes`]: a check at least every hour of the
/// session, and no more than one a minute (the quote sources' pace).
pub const INTRADAY_ALERT_MINUTES_RANGE: (i32, i32) = (1, 60);
pub const DEFAULT_INTRADAY_ALERT_MINUTES: i32 = 5;
/// Days, for [`Settings::retention_days`].
pub const RETENTION_DAYS_RANGE: (i32, i32) = (1, 3650);
const CONTEXT_WINDOW_RANGE: (i32, i32) = (1_024, 10_000_000);
/// Most extra folders the file tools may be given.
pub const MAX_FILE_ROOTS: usize = 16;

#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SettingsError {
    #[error("{field} must be between {min} and {max} (got {got})")]
    OutOfRange {
        field: String,
        min: i32,
        max: i32,
        got: i32,
    },
    #[error("{field} is invalid: {reason}")]
    Invalid { field: String, reason: String },
    #[error(
        "settings file was written by a newer Wyckoff Desk (version {found}, this one understands up to {supported}); not overwriting it"
    )]
    NewerVersion { found: u32, supported: u32 },
    #[error("settings file {path} is not valid JSON ({reason}); fix or remove it")]
    Corrupt { path: String, reason: String },
    #[error("cannot access settings file {path}: {reason}")]
    Io { path: String, reason: String },
}

fn invalid(field: impl Into<String>, reason: impl Into<String>) -> SettingsError {
    SettingsError::Invalid {
        field: field.into(),
        reason: reason.into(),
    }
}

fn check_range(field: &str, got: i32, (min, max): (i32, i32)) -> Result<(), SettingsError> {
    if (min..=max).contains(&got) {
        Ok(())
    } else {
        Err(SettingsError::OutOfRange {
            field: field.to_owned(),
            min,
            max,
            got,
        })
    }
}

fn is_http_url(s: &str) -> bool {
    let rest = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"));
    rest.is_some_and(|r| !r.is_empty() && !r.starts_with('/') && !r.contains(char::is_whitespace))
}

fn is_valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// Extra file-tool folders: absolute, not the filesystem root, each once. Whether they
/// exist is the tools' business (a folder on a drive that is not mounted is not an error).
fn validate_file_roots(roots: &[String]) -> Result<(), SettingsError> {
    if roots.len() > MAX_FILE_ROOTS {
        return Err(invalid(
            "file_roots",
            format!("at most {MAX_FILE_ROOTS} folders (got {})", roots.len()),
        ));
    }
    let mut seen = HashSet::new();
    for root in roots {
        let field = || format!("file_roots: '{root}'");
        let path = Path::new(root);
        if root.trim() != root || root.is_empty() || root.contains('\0') {
            return Err(invalid(field(), "not a usable path"));
        }
        if !path.is_absolute() {
            return Err(invalid(field(), "use an absolute path"));
        }
        if path.parent().is_none() {
            return Err(invalid(
                field(),
                "the whole filesystem cannot be a file-tool folder",
            ));
        }
        if path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(invalid(
                field(),
                "'..' is not allowed; give the folder itself",
            ));
        }
        if !seen.insert(path.components().collect::<Vec<_>>()) {
            return Err(invalid(field(), "listed twice"));
        }
    }
    Ok(())
}

impl Settings {
    /// Checks every field; the first problem found is returned.
    pub fn validate(&self) -> Result<(), SettingsError> {
        check_range(
            "stream_idle_timeout_secs",
            self.stream_idle_timeout_secs,
            STREAM_IDLE_TIMEOUT_RANGE,
        )?;
        check_range(
            "tool_timeout_secs",
            self.tool_timeout_secs,
            TOOL_TIMEOUT_RANGE,
        )?;
        check_range(
            "approval_timeout_secs",
            self.approval_timeout_secs,
            APPROVAL_TIMEOUT_RANGE,
        )?;
        check_range("retention_days", self.retention_days, RETENTION_DAYS_RANGE)?;
        check_range(
            "intraday_alert_minutes",
            self.intraday_alert_minutes,
            INTRADAY_ALERT_MINUTES_RANGE,
        )?;

        let mut ids = HashSet::new();
        for (i, m) in self.models.iter().enumerate() {
            let field = format!("models[{i}]");
            if !is_valid_id(&m.id) {
                return Err(invalid(
                    format!("{field}.id"),
                    "use 1–64 lowercase letters, digits, '-' or '_'",
                ));
            }
            if !ids.insert(m.id.as_str()) {
                return Err(invalid(
                    format!("{field}.id"),
                    format!("duplicate id '{}'", m.id),
                ));
            }
            if m.model.trim().is_empty() {
                return Err(invalid(format!("{field}.model"), "model name is empty"));
            }
            match &m.base_url {
                Some(url) if !is_http_url(url) => {
                    return Err(invalid(
                        format!("{field}.base_url"),
                        format!("'{url}' is not an http(s) URL"),
                    ));
                }
                None if m.provider == ProviderKind::OpenaiCompatible => {
                    return Err(invalid(
                        format!("{field}.base_url"),
                        "an OpenAI-compatible endpoint needs a base URL",
                    ));
                }
                _ => {}
            }
            if let Some(cw) = m.context_window {
                check_range(&format!("{field}.context_window"), cw, CONTEXT_WINDOW_RANGE)?;
            }
            for (name, price) in [
                ("input_price_per_mtok", m.input_price_per_mtok),
                ("output_price_per_mtok", m.output_price_per_mtok),
            ] {
                if price.is_some_and(|p| !p.is_finite() || p < 0.0) {
                    return Err(invalid(
                        format!("{field}.{name}"),
                        "price must be a non-negative number",
                    ));
                }
            }
        }

        let known = |field: &str, id: &str| {
            if ids.contains(id) {
                Ok(())
            } else {
                Err(invalid(field, format!("no model with id '{id}'")))
            }
        };
        if let Some(id) = &self.main_model {
            known("main_model", id)?;
        }
        if let Some(id) = &self.light_model {
            known("light_model", id)?;
        }
        let mut seen = HashSet::new();
        for id in &self.fallback_models {
            known("fallback_models", id)?;
            if !seen.insert(id) {
                return Err(invalid("fallback_models", format!("'{id}' listed twice")));
            }
        }

        if let Some(proxy) = &self.proxy {
            let ok = ["http://", "https://", "socks5://", "socks5h://"]
                .iter()
                .any(|scheme| {
                    proxy
                        .strip_prefix(scheme)
                        .is_some_and(|r| !r.is_empty() && !r.contains(char::is_whitespace))
                });
            if !ok {
                return Err(invalid(
                    "proxy",
                    format!("'{proxy}' is not an http(s):// or socks5:// URL"),
                ));
            }
        }

        validate_file_roots(&self.file_roots)?;
        self.risk.validate()?;

        let mut sources = HashSet::new();
        for s in &self.data_sources {
            if !sources.insert(s) {
                return Err(invalid("data_sources", format!("{s:?} listed twice")));
            }
        }
        Ok(())
    }

    pub fn model(&self, id: &str) -> Option<&ModelEntry> {
        self.models.iter().find(|m| m.id == id)
    }

    /// Sets (or with `None` clears) the light model of heavy/light routing (seed §12,
    /// `wyckoff model light ID`). An id that is not a configured model is refused and
    /// nothing changes; the error names the ids there are.
    pub fn set_light_model(&mut self, id: Option<&str>) -> Result<(), SettingsError> {
        if let Some(id) = id
            && self.model(id).is_none()
        {
            let known: Vec<&str> = self.models.iter().map(|m| m.id.as_str()).collect();
            let known = if known.is_empty() {
                "no models are configured".to_owned()
            } else {
                format!("configured: {}", known.join(", "))
            };
            return Err(invalid(
                "light_model",
                format!("no model with id '{id}' ({known})"),
            ));
        }
        self.light_model = id.map(str::to_owned);
        Ok(())
    }

    /// Migrates a settings document of any known version to the current schema, then
    /// validates it. Returns the settings and notes about what the migration changed.
    pub fn from_value(mut doc: Value) -> Result<(Settings, Vec<String>), SettingsError> {
        let mut notes = Vec::new();
        let version = doc.get("version").and_then(Value::as_u64).unwrap_or(0);
        let version = u32::try_from(version).unwrap_or(u32::MAX);
        if version > CURRENT_VERSION {
            return Err(SettingsError::NewerVersion {
                found: version,
                supported: CURRENT_VERSION,
            });
        }
        if version == 0 {
            migrate_v0_to_v1(&mut doc, &mut notes);
        }
        let settings: Settings = serde_json::from_value(with_defaults(doc))
            .map_err(|e| invalid("settings", e.to_string()))?;
        settings.validate()?;
        Ok((settings, notes))
    }
}

/// Fills fields missing from `doc` with their defaults (files written by an older
/// version, or edited by hand, may lack some).
fn with_defaults(doc: Value) -> Value {
    let mut base = match serde_json::to_value(Settings::default()) {
        Ok(Value::Object(map)) => map,
        _ => return doc,
    };
    match doc {
        Value::Object(mut fields) => {
            // A section written by an older version may lack some of its fields.
            if let (Some(Value::Object(given)), Some(Value::Object(defaults))) =
                (fields.get_mut("risk"), base.get("risk"))
            {
                for (k, v) in defaults {
                    given.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            base.extend(fields);
            Value::Object(base)
        }
        other => other,
    }
}

/// v0 is the layout of the original Python tool's `wyckoff.json`.
fn migrate_v0_to_v1(doc: &mut Value, notes: &mut Vec<String>) {
    let Some(map) = doc.as_object_mut() else {
        return;
    };
    let renames = [
        ("stream_chunk_timeout_seconds", "stream_idle_timeout_secs"),
        ("tool_timeout_seconds", "tool_timeout_secs"),
        ("default", "main_model"),
        ("light", "light_model"),
    ];
    for (old, new) in renames {
        if let Some(v) = map.remove(old) {
            notes.push(format!("renamed {old} to {new}"));
            map.insert(new.to_owned(), v);
        }
    }
    if let Some(fallback) = map.remove("fallback") {
        notes.push("fallback became fallback_models".to_owned());
        let list = match fallback {
            Value::String(s) if !s.is_empty() => vec![Value::String(s)],
            Value::Array(items) => items,
            _ => Vec::new(),
        };
        map.insert("fallback_models".to_owned(), Value::Array(list));
    }
    // Secrets must never stay in a file: drop them and say so.
    for secret in [
        "api_key",
        "tushare_token",
        "tickflow_api_key",
        "password",
        "email",
    ] {
        if map.remove(secret).is_some() {
            notes.push(format!(
                "removed {secret} from the settings file; store it in the keychain instead"
            ));
        }
    }
    if let Some(Value::Array(models)) = map.get_mut("models") {
        for m in models.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(p) = m.remove("provider_name") {
                let kind = p.as_str().and_then(ProviderKind::from_cli_name);
                m.insert(
                    "provider".to_owned(),
                    serde_json::to_value(kind).unwrap_or(Value::Null),
                );
            }
            if m.remove("api_key").is_some() {
                notes.push("removed a model api_key from the settings file; store it in the keychain instead".to_owned());
            }
        }
    }
    map.insert("version".to_owned(), Value::from(CURRENT_VERSION));
}

/// Reads the settings file; a missing file gives the defaults. A corrupt file is an
/// error (the caller must not overwrite what the user may want to repair).
pub fn load(path: &Path) -> Result<(Settings, Vec<String>), SettingsError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((Settings::default(), Vec::new()));
        }
        Err(e) => {
            return Err(SettingsError::Io {
                path: path.display().to_string(),
                reason: e.to_string(),
            });
        }
    };
    let doc: Value = serde_json::from_str(&text).map_err(|e| SettingsError::Corrupt {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    Settings::from_value(doc)
}

/// Validates, then writes atomically (temp file + rename) so a crash never leaves a
/// half-written file. Invalid settings are not written.
pub fn save(path: &Path, settings: &Settings) -> Result<(), SettingsError> {
    settings.validate()?;
    let io_err = |e: std::io::Error| SettingsError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let text =
        serde_json::to_string_pretty(settings).map_err(|e| invalid("settings", e.to_string()))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io_err)?;
    }
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text).map_err(io_err)?;
    std::fs::rename(&tmp, path).map_err(io_err)
}

/// The settings a process runs on, one copy shared by everything that reads them (the
/// app's commands and its desk alike). Cloning shares the copy.
#[derive(Debug, Clone, Default)]
pub struct SharedSettings(std::sync::Arc<std::sync::RwLock<Settings>>);

impl SharedSettings {
    pub fn new(settings: Settings) -> SharedSettings {
        SharedSettings(std::sync::Arc::new(std::sync::RwLock::new(settings)))
    }

    /// The settings now.
    pub fn get(&self) -> Settings {
        match self.0.read() {
            Ok(s) => s.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Puts `settings` in place and returns what they replaced.
    pub fn replace(&self, settings: Settings) -> Settings {
        match self.0.write() {
            Ok(mut s) => std::mem::replace(&mut *s, settings),
            Err(poisoned) => std::mem::replace(&mut *poisoned.into_inner(), settings),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Clones of a shared copy are one copy: a change through any is what every one reads,
    /// and the change hands back what it replaced.
    #[test]
    fn shared_settings_are_one_copy() {
        let shared = SharedSettings::new(Settings::default());
        let other = shared.clone();
        let dark = Settings {
            theme: Theme::Dark,
            ..Settings::default()
        };
        let before = other.replace(dark.clone());
        assert_eq!(before, Settings::default());
        assert_eq!(shared.get(), dark);
    }

    fn entry(id: &str, provider: ProviderKind) -> ModelEntry {
        ModelEntry {
            id: id.into(),
            provider,
            model: "m".into(),
            base_url: None,
            context_window: None,
            input_price_per_mtok: None,
            output_price_per_mtok: None,
        }
    }

    #[test]
    fn defaults_are_valid() {
        Settings::default().validate().unwrap();
    }

    #[test]
    fn validation_table() {
        type Mutate = fn(&mut Settings);
        let cases: Vec<(&str, Mutate, &str)> = vec![
            (
                "negative timeout",
                |s| s.stream_idle_timeout_secs = -5,
                "stream_idle_timeout_secs must be between 10 and 600 (got -5)",
            ),
            (
                "timeout too big",
                |s| s.stream_idle_timeout_secs = 601,
                "stream_idle_timeout_secs must be between 10 and 600 (got 601)",
            ),
            (
                "tool timeout",
                |s| s.tool_timeout_secs = 0,
                "tool_timeout_secs must be between 5 and 300 (got 0)",
            ),
            (
                "approval timeout",
                |s| s.approval_timeout_secs = 5,
                "approval_timeout_secs must be between 10 and 600 (got 5)",
            ),
            (
                "retention",
                |s| s.retention_days = 0,
                "retention_days must be between 1 and 3650 (got 0)",
            ),
            (
                "intraday alerts every 0 minutes",
                |s| s.intraday_alert_minutes = 0,
                "intraday_alert_minutes must be between 1 and 60 (got 0)",
            ),
            (
                "intraday alerts less than hourly",
                |s| s.intraday_alert_minutes = 61,
                "intraday_alert_minutes must be between 1 and 60 (got 61)",
            ),
            (
                "negative intraday interval",
                |s| s.intraday_alert_minutes = -5,
                "intraday_alert_minutes must be between 1 and 60 (got -5)",
            ),
            (
                "no risk per trade",
                |s| s.risk.risk_per_trade_pct = 0.0,
                "risk.risk_per_trade_pct is invalid: must be a percent between 0.01 and 100 (got 0)",
            ),
            (
                "heat over 100",
                |s| s.risk.max_heat_pct = 120.0,
                "risk.max_heat_pct is invalid: must be a percent between 0 and 100 (0 turns it off) (got 120)",
            ),
            (
                "brake not a number",
                |s| s.risk.drawdown_brake_pct = f64::NAN,
                "risk.drawdown_brake_pct is invalid: must be a percent between 0 and 100 (0 turns it off) (got NaN)",
            ),
            (
                "negative positions",
                |s| s.risk.max_positions = -1,
                "risk.max_positions must be between 0 and 200 (got -1)",
            ),
            (
                "no stop-out window",
                |s| s.risk.stop_out_days = 0,
                "risk.stop_out_days must be between 1 and 365 (got 0)",
            ),
            (
                "bad proxy",
                |s| s.proxy = Some("ftp://x".into()),
                "proxy is invalid: 'ftp://x' is not an http(s):// or socks5:// URL",
            ),
            (
                "unknown main",
                |s| s.main_model = Some("nope".into()),
                "main_model is invalid: no model with id 'nope'",
            ),
            (
                "dup source",
                |s| s.data_sources = vec![DataSourceKind::Tencent, DataSourceKind::Tencent],
                "data_sources is invalid: Tencent listed twice",
            ),
            (
                "bad id",
                |s| s.models = vec![entry("Bad Id", ProviderKind::Claude)],
                "models[0].id is invalid: use 1–64 lowercase letters, digits, '-' or '_'",
            ),
            (
                "dup id",
                |s| {
                    s.models = vec![
                        entry("a", ProviderKind::Claude),
                        entry("a", ProviderKind::Openai),
                    ]
                },
                "models[1].id is invalid: duplicate id 'a'",
            ),
            (
                "compat without url",
                |s| s.models = vec![entry("c", ProviderKind::OpenaiCompatible)],
                "models[0].base_url is invalid: an OpenAI-compatible endpoint needs a base URL",
            ),
            (
                "url scheme",
                |s| {
                    let mut e = entry("o", ProviderKind::Ollama);
                    e.base_url = Some("localhost:11434".into());
                    s.models = vec![e];
                },
                "models[0].base_url is invalid: 'localhost:11434' is not an http(s) URL",
            ),
            (
                "context window",
                |s| {
                    let mut e = entry("o", ProviderKind::Openai);
                    e.context_window = Some(10);
                    s.models = vec![e];
                },
                "models[0].context_window must be between 1024 and 10000000 (got 10)",
            ),
            (
                "relative file root",
                |s| s.file_roots = vec!["notes".into()],
                "file_roots: 'notes' is invalid: use an absolute path",
            ),
            (
                "filesystem root",
                |s| s.file_roots = vec!["/".into()],
                "file_roots: '/' is invalid: the whole filesystem cannot be a file-tool folder",
            ),
            (
                "dotdot file root",
                |s| s.file_roots = vec!["/home/a/../b".into()],
                "file_roots: '/home/a/../b' is invalid: '..' is not allowed; give the folder itself",
            ),
            (
                "duplicate file root",
                |s| s.file_roots = vec!["/data/x".into(), "/data/x/".into()],
                "file_roots: '/data/x/' is invalid: listed twice",
            ),
            (
                "padded file root",
                |s| s.file_roots = vec![" /data".into()],
                "file_roots: ' /data' is invalid: not a usable path",
            ),
            (
                "too many file roots",
                |s| s.file_roots = (0..17).map(|i| format!("/d{i}")).collect(),
                "file_roots is invalid: at most 16 folders (got 17)",
            ),
        ];
        for (name, mutate, want) in cases {
            let mut s = Settings::default();
            mutate(&mut s);
            let err = s.validate().expect_err(name);
            assert_eq!(err.to_string(), want, "{name}");
        }
    }

    #[test]
    fn migrates_the_legacy_layout_and_drops_secrets() {
        let legacy = json!({
            "models": [{"id": "ds", "provider_name": "openai", "api_key": "sk-secret", "model": "deepseek-chat", "base_url": "https://api.deepseek.com"}],
            "default": "ds",
            "fallback": "",
            "stream_chunk_timeout_seconds": 90,
            "tushare_token": "abc",
        });
        let (s, notes) = Settings::from_value(legacy).unwrap();
        assert_eq!(s.version, CURRENT_VERSION);
        assert_eq!(s.main_model.as_deref(), Some("ds"));
        assert_eq!(s.stream_idle_timeout_secs, 90);
        assert_eq!(s.models[0].provider, ProviderKind::Openai);
        assert!(s.fallback_models.is_empty());
        assert!(notes.iter().any(|n| n.contains("tushare_token")));
        let text = serde_json::to_string(&s).unwrap();
        assert!(!text.contains("sk-secret") && !text.contains("abc\""));
    }

    #[test]
    fn missing_fields_take_their_defaults() {
        let (s, notes) = Settings::from_value(json!({"version": 1, "theme": "dark"})).unwrap();
        assert!(notes.is_empty());
        assert_eq!(s.theme, Theme::Dark);
        assert_eq!(s.stream_idle_timeout_secs, 60);
        assert!(s.close_to_tray);
        assert_eq!(s.risk, RiskSettings::default());
        assert_eq!(s.intraday_alert_minutes, DEFAULT_INTRADAY_ALERT_MINUTES);
        // a file from before the automatic update check keeps it on
        assert!(s.check_for_updates);
        let (off, _) =
            Settings::from_value(json!({"version": 1, "check_for_updates": false})).unwrap();
        assert!(!off.check_for_updates);
    }

    #[test]
    fn the_intraday_alert_interval_from_a_file_table() {
        // (the file's value, the minutes read or the error)
        let table: [(Value, Result<i32, &str>); 6] = [
            (json!(1), Ok(1)),
            (json!(15), Ok(15)),
            (json!(60), Ok(60)),
            (
                json!(0),
                Err("intraday_alert_minutes must be between 1 and 60 (got 0)"),
            ),
            (
                json!(90),
                Err("intraday_alert_minutes must be between 1 and 60 (got 90)"),
            ),
            (json!("5"), Err("settings is invalid: invalid type: string")),
        ];
        for (given, want) in table {
            let got = Settings::from_value(json!({"version": 1, "intraday_alert_minutes": given}))
                .map(|(s, _)| s.intraday_alert_minutes)
                .map_err(|e| e.to_string());
            match (want, got) {
                (Ok(w), Ok(g)) => assert_eq!(g, w, "{given}"),
                (Err(w), Err(g)) => assert!(g.starts_with(w), "{given}: {g}"),
                (w, g) => panic!("{given}: want {w:?}, got {g:?}"),
            }
        }
    }

    #[test]
    fn a_partial_risk_section_keeps_its_fields_and_takes_the_rest() {
        let (s, _) =
            Settings::from_value(json!({"version": 1, "risk": {"max_positions": 5}})).unwrap();
        assert_eq!(s.risk.max_positions, 5);
        assert_eq!(s.risk.max_heat_pct, RiskSettings::default().max_heat_pct);
        let err =
            Settings::from_value(json!({"version": 1, "risk": {"max_heat_pct": -1}})).unwrap_err();
        assert!(
            err.to_string().starts_with("risk.max_heat_pct is invalid"),
            "{err}"
        );
    }

    #[test]
    fn newer_versions_are_refused() {
        let err = Settings::from_value(json!({"version": 99})).unwrap_err();
        assert!(matches!(err, SettingsError::NewerVersion { found: 99, .. }));
    }

    #[test]
    fn save_rejects_invalid_and_leaves_the_file_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(SETTINGS_FILE);
        let good = Settings {
            stream_idle_timeout_secs: 30,
            ..Settings::default()
        };
        save(&path, &good).unwrap();
        let before = std::fs::read(&path).unwrap();
        let bad = Settings {
            stream_idle_timeout_secs: -1,
            ..Settings::default()
        };
        assert!(save(&path, &bad).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert_eq!(load(&path).unwrap().0, good);
    }

    #[test]
    fn set_light_model_table() {
        let base = Settings {
            models: vec![
                entry("main", ProviderKind::Claude),
                entry("cheap", ProviderKind::Deepseek),
            ],
            light_model: Some("main".into()),
            ..Settings::default()
        };
        // (id given, the light model after it, or the error)
        type Case<'a> = (Option<&'a str>, Result<Option<&'a str>, &'a str>);
        let cases: [Case; 4] = [
            (Some("cheap"), Ok(Some("cheap"))),
            (Some("main"), Ok(Some("main"))),
            (None, Ok(None)),
            (
                Some("nope"),
                Err("light_model is invalid: no model with id 'nope' (configured: main, cheap)"),
            ),
        ];
        for (id, want) in cases {
            let mut s = base.clone();
            let got = s.set_light_model(id).map(|()| s.light_model.clone());
            match want {
                Ok(light) => assert_eq!(got.unwrap().as_deref(), light, "{id:?}"),
                Err(message) => {
                    assert_eq!(got.unwrap_err().to_string(), message);
                    assert_eq!(s, base, "a refused id changes nothing");
                }
            }
        }
        let mut empty = Settings::default();
        assert_eq!(
            empty.set_light_model(Some("x")).unwrap_err().to_string(),
            "light_model is invalid: no model with id 'x' (no models are configured)"
        );
    }

    /// What the CLI writes (`wyckoff model light`) is what the app reads: the same file,
    /// one top-level key per field as the app's store writes it, loaded back unchanged.
    #[test]
    fn a_light_model_saved_by_the_cli_is_what_the_app_loads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(SETTINGS_FILE);
        let s = Settings {
            models: vec![
                entry("main", ProviderKind::Claude),
                entry("cheap", ProviderKind::Deepseek),
            ],
            main_model: Some("main".into()),
            ..Settings::default()
        };
        save(&path, &s).unwrap();

        let (mut loaded, _) = load(&path).unwrap();
        loaded.set_light_model(Some("cheap")).unwrap();
        save(&path, &loaded).unwrap();

        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let app_fields = serde_json::to_value(&loaded).unwrap();
        let keys = |v: &Value| {
            let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
            k.sort();
            k
        };
        assert_eq!(keys(&doc), keys(&app_fields));
        assert_eq!(doc["version"], CURRENT_VERSION);
        assert_eq!(doc["light_model"], "cheap");
        let (app_view, notes) = Settings::from_value(doc).unwrap();
        assert!(notes.is_empty());
        assert_eq!(app_view.light_model.as_deref(), Some("cheap"));
        assert_eq!(app_view, loaded);
    }

    #[test]
    fn missing_file_gives_defaults_and_corrupt_file_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(SETTINGS_FILE);
        assert_eq!(load(&path).unwrap().0, Settings::default());
        std::fs::write(&path, "{not json").unwrap();
        assert!(matches!(load(&path), Err(SettingsError::Corrupt { .. })));
    }
}
