use std::process::ExitCode;

use serde::Serialize;
use wyckoff_config::secrets::{KeychainState, SecretId};
use wyckoff_config::settings;
use wyckoff_config::{DataHome, KeyStatus, Secrets};

#[derive(Debug, Serialize)]
struct Report {
    version: &'static str,
    data_home: String,
    data_home_exists: bool,
    settings_file: String,
    settings: SettingsState,
    database: String,
    database_exists: bool,
    keychain: KeychainState,
    keys: Vec<KeyStatus>,
    main_model: Option<String>,
    models: Vec<String>,
    /// What the trading calendar knows and from where; `None` when it cannot be read.
    calendar: Option<wyckoff_session::domain::market::calendar_store::CalendarInfo>,
}

/// The stored calendar of the data home (the bundled one before the database exists:
/// `doctor` creates nothing).
fn calendar(
    home: &DataHome,
) -> Option<wyckoff_session::domain::market::calendar_store::CalendarInfo> {
    let read = crate::market::runtime().and_then(|rt| {
        rt.block_on(async {
            if !home.db_path().is_file() {
                return Ok(wyckoff_session::domain::market::calendar_store::bundled_info()?);
            }
            let desk = crate::market::desk().await?;
            let calendar = desk.market().current_calendar().await;
            desk.close().await;
            Ok(calendar?.1)
        })
    });
    match read {
        Ok(info) => Some(info),
        Err(e) => {
            tracing::warn!("cannot read the trading calendar: {e:#}");
            None
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
enum SettingsState {
    Missing,
    Ok { notes: Vec<String> },
    Error { message: String },
}

pub fn run(json: bool) -> anyhow::Result<ExitCode> {
    let home = DataHome::from_env();
    let settings_path = home.settings_path();
    let (settings_state, settings) = match settings::load(&settings_path) {
        Ok((s, notes)) if settings_path.exists() => (SettingsState::Ok { notes }, s),
        Ok((s, _)) => (SettingsState::Missing, s),
        Err(e) => (
            SettingsState::Error {
                message: e.to_string(),
            },
            settings::Settings::default(),
        ),
    };
    let secrets = Secrets::system();
    let ids = SecretId::all_for(&settings);
    let report = Report {
        version: env!("CARGO_PKG_VERSION"),
        data_home: home.root().display().to_string(),
        data_home_exists: home.root().is_dir(),
        settings_file: settings_path.display().to_string(),
        settings: settings_state,
        database: home.db_path().display().to_string(),
        database_exists: home.db_path().is_file(),
        keychain: secrets.keychain_state(),
        keys: ids.iter().map(|id| secrets.status(id)).collect(),
        main_model: settings.main_model.clone(),
        models: settings
            .models
            .iter()
            .map(|m| format!("{} ({} {})", m.id, m.provider.cli_name(), m.model))
            .collect(),
        calendar: calendar(&home),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report);
    }
    let healthy = !matches!(report.settings, SettingsState::Error { .. });
    Ok(if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn yes_no(b: bool) -> &'static str {
    if b { "present" } else { "absent" }
}

fn print_text(r: &Report) {
    println!("Wyckoff Desk {} (wyckoff CLI)", r.version);
    println!(
        "data home:     {} ({})",
        r.data_home,
        yes_no(r.data_home_exists)
    );
    let settings = match &r.settings {
        SettingsState::Missing => "absent, using defaults".to_owned(),
        SettingsState::Ok { notes } if notes.is_empty() => "ok".to_owned(),
        SettingsState::Ok { notes } => format!("ok (migrated: {})", notes.join("; ")),
        SettingsState::Error { message } => format!("ERROR: {message}"),
    };
    println!("settings file: {} ({settings})", r.settings_file);
    println!(
        "database:      {} ({})",
        r.database,
        yes_no(r.database_exists)
    );
    match &r.keychain {
        KeychainState::Available => println!("keychain:      available"),
        KeychainState::Unavailable { reason, fix } => {
            println!("keychain:      unavailable: {reason}\n               fix: {fix}")
        }
    }
    println!("keys (values are never shown):");
    for k in &r.keys {
        let state = match (k.set, k.source) {
            (true, Some(src)) => format!(
                "set ({})",
                serde_json::to_value(src)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            ),
            _ => "not set".to_owned(),
        };
        println!("  {:<22} {:<22} env {}", k.id.account(), state, k.env_var);
    }
    match &r.main_model {
        Some(m) => println!("main model:    {m}"),
        None => println!("main model:    none configured"),
    }
    for m in &r.models {
        println!("  model {m}");
    }
    match &r.calendar {
        Some(c) => println!("{}", crate::data::calendar_line(c)),
        None => println!("calendar:      cannot be read (see the log)"),
    }
}
