//! `wyckoff model list|light` (seed §12): the configured models with their roles and
//! whether each one's key is set (never the key), and the light model of heavy/light
//! routing. The light model is written to the same settings.json the app uses, through
//! the shared validation, so an unknown id writes nothing.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde::Serialize;
use wyckoff_config::secrets::{KeySource, SecretId};
use wyckoff_config::settings::{self, Settings};
use wyckoff_config::{DataHome, Secrets};

#[derive(Debug, Args)]
pub struct ModelArgs {
    #[command(subcommand)]
    command: ModelCommand,
}

#[derive(Debug, Subcommand)]
enum ModelCommand {
    /// The configured models: id, provider, model, role (main / light / fallback) and
    /// whether its key is set. 💡 marks the light model.
    List {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Set the light model used for simple turns (heavy/light routing), or clear it.
    Light {
        /// A configured model id (see `wyckoff model list`).
        #[arg(required_unless_present = "clear", conflicts_with = "clear")]
        id: Option<String>,
        /// Remove the light model: every turn uses the main model.
        #[arg(long)]
        clear: bool,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "snake_case")]
enum Role {
    Main,
    Light,
    Fallback,
}

/// A model's key as `doctor` reports keys: whether it is set and from where, never its value.
#[derive(Debug, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
enum KeyState {
    /// A local provider (Ollama) needs none.
    NotNeeded,
    Set {
        source: KeySource,
        env_var: String,
    },
    NotSet {
        env_var: String,
    },
}

#[derive(Debug, Serialize)]
struct ModelRow {
    id: String,
    provider: &'static str,
    model: String,
    base_url: Option<String>,
    roles: Vec<Role>,
    key: KeyState,
}

#[derive(Debug, Serialize)]
struct ModelList {
    settings_file: String,
    main_model: Option<String>,
    light_model: Option<String>,
    fallback_models: Vec<String>,
    models: Vec<ModelRow>,
}

pub fn run(args: ModelArgs) -> anyhow::Result<ExitCode> {
    let home = DataHome::from_env();
    let path = home.settings_path();
    // A corrupt or newer file is an error here: never list defaults as if they were the
    // user's, and never overwrite what they may want to repair.
    let (current, _notes) = settings::load(&path)?;
    match args.command {
        ModelCommand::List { json } => {
            let list = model_list(&path.display().to_string(), &current, &Secrets::system());
            if json {
                crate::market::print_json(&list)?;
            } else {
                print_list(&list);
            }
        }
        ModelCommand::Light { id, clear, json } => {
            let id = if clear { None } else { id };
            let mut next = current.clone();
            next.set_light_model(id.as_deref())?;
            if next != current {
                settings::save(&path, &next)?;
            }
            tracing::info!(light_model = ?next.light_model, "light model set");
            if json {
                crate::market::print_json(&serde_json::json!({
                    "settings_file": path.display().to_string(),
                    "light_model": next.light_model,
                    "previous": current.light_model,
                }))?;
            } else {
                match &next.light_model {
                    Some(id) => println!(
                        "light model: {id} (simple turns use it; the rest use the main model)"
                    ),
                    None => println!("light model: none (every turn uses the main model)"),
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn model_list(settings_file: &str, s: &Settings, secrets: &Secrets) -> ModelList {
    let models = s
        .models
        .iter()
        .map(|m| {
            let mut roles = Vec::new();
            if s.main_model.as_deref() == Some(m.id.as_str()) {
                roles.push(Role::Main);
            }
            if s.light_model.as_deref() == Some(m.id.as_str()) {
                roles.push(Role::Light);
            }
            if s.fallback_models.contains(&m.id) {
                roles.push(Role::Fallback);
            }
            let key = match SecretId::for_provider(m.provider, &m.id) {
                None => KeyState::NotNeeded,
                Some(secret) => {
                    let status = secrets.status(&secret);
                    match status.source {
                        Some(source) => KeyState::Set {
                            source,
                            env_var: status.env_var,
                        },
                        None => KeyState::NotSet {
                            env_var: status.env_var,
                        },
                    }
                }
            };
            ModelRow {
                id: m.id.clone(),
                provider: m.provider.cli_name(),
                model: m.model.clone(),
                base_url: m.base_url.clone(),
                roles,
                key,
            }
        })
        .collect();
    ModelList {
        settings_file: settings_file.to_owned(),
        main_model: s.main_model.clone(),
        light_model: s.light_model.clone(),
        fallback_models: s.fallback_models.clone(),
        models,
    }
}

fn print_list(list: &ModelList) {
    if list.models.is_empty() {
        println!(
            "no models configured (add them in the app: Settings → Models; file {})",
            list.settings_file
        );
        return;
    }
    for m in &list.models {
        let mark = if m.roles.iter().any(|r| matches!(r, Role::Light)) {
            "💡"
        } else {
            "  "
        };
        let roles: Vec<&str> = m
            .roles
            .iter()
            .map(|r| match r {
                Role::Main => "main",
                Role::Light => "light",
                Role::Fallback => "fallback",
            })
            .collect();
        let key = match &m.key {
            KeyState::NotNeeded => "key not needed".to_owned(),
            KeyState::Set { source, .. } => format!(
                "key set ({})",
                serde_json::to_value(source)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            ),
            KeyState::NotSet { env_var } => format!("key NOT set (keychain or {env_var})"),
        };
        println!(
            "{mark} {:<20} {:<18} {:<28} {:<14} {key}",
            m.id,
            m.provider,
            m.model,
            if roles.is_empty() {
                "-".to_owned()
            } else {
                roles.join(",")
            },
        );
    }
    if list.light_model.is_none() {
        println!("no light model: every turn uses the main model (`wyckoff model light ID`)");
    }
}
