//! `wyckoff model list|light` (seed §12) through the real binary over a temporary
//! `WYCKOFF_HOME`: the list names each model's roles and whether its key is set (never the
//! key); `light ID` writes the settings file the app reads; an unknown id exits 2 and
//! writes nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use wyckoff_e2e::wyckoff_cli;

const CANARY: &str = "sk-model-list-canary-0123456789";

fn wyckoff(home: &Path, args: &[&str]) -> Output {
    let mut cmd = wyckoff_cli(home);
    // No session bus: the keychain is unavailable, so keys come from the environment only.
    for var in [
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "DBUS_SESSION_BUS_ADDRESS",
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "WYCKOFF_KEY_LOCAL_COMPAT",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("DEEPSEEK_API_KEY", CANARY);
    cmd.args(args).output().unwrap()
}

fn write_settings(home: &Path) -> Vec<u8> {
    let text = serde_json::to_vec_pretty(&json!({
        "version": 1,
        "models": [
            {"id": "claude-main", "provider": "claude", "model": "claude-sonnet-4", "base_url": null,
             "context_window": null, "input_price_per_mtok": null, "output_price_per_mtok": null},
            {"id": "ds-cheap", "provider": "deepseek", "model": "deepseek-chat", "base_url": null,
             "context_window": null, "input_price_per_mtok": null, "output_price_per_mtok": null},
            {"id": "local-compat", "provider": "openai_compatible", "model": "qwen", "base_url": "http://127.0.0.1:9/v1",
             "context_window": null, "input_price_per_mtok": null, "output_price_per_mtok": null},
            {"id": "ollama-small", "provider": "ollama", "model": "llama3", "base_url": null,
             "context_window": null, "input_price_per_mtok": null, "output_price_per_mtok": null}
        ],
        "main_model": "claude-main",
        "fallback_models": ["ds-cheap"],
        "theme": "dark"
    }))
    .unwrap();
    std::fs::write(home.join("settings.json"), &text).unwrap();
    text
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn settings_file(home: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(home.join("settings.json")).unwrap()).unwrap()
}

#[test]
fn list_names_roles_and_key_state_without_the_key() {
    let home = tempfile::tempdir().unwrap();
    write_settings(home.path());
    let stdout = ok(&wyckoff(home.path(), &["model", "list", "--json"]));
    assert!(!stdout.contains(CANARY), "the key leaked: {stdout}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["main_model"], "claude-main");
    assert_eq!(v["light_model"], Value::Null);
    let row = |id: &str| {
        v["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .cloned()
            .unwrap()
    };
    let main = row("claude-main");
    assert_eq!(main["provider"], "claude");
    assert_eq!(main["roles"], json!(["main"]));
    assert_eq!(
        main["key"],
        json!({"state": "not_set", "env_var": "ANTHROPIC_API_KEY"})
    );
    let cheap = row("ds-cheap");
    assert_eq!(cheap["roles"], json!(["fallback"]));
    assert_eq!(
        cheap["key"],
        json!({"state": "set", "source": "environment", "env_var": "DEEPSEEK_API_KEY"})
    );
    assert_eq!(
        row("local-compat")["key"],
        json!({"state": "not_set", "env_var": "WYCKOFF_KEY_LOCAL_COMPAT"})
    );
    assert_eq!(row("ollama-small")["key"], json!({"state": "not_needed"}));
    assert_eq!(row("ollama-small")["roles"], json!([]));

    let text = ok(&wyckoff(home.path(), &["model", "list"]));
    assert!(!text.contains(CANARY));
    assert!(text.contains("no light model"), "{text}");
    assert!(!text.contains('💡'), "{text}");
}

#[test]
fn light_sets_the_model_the_app_reads_and_the_list_marks_it() {
    let home = tempfile::tempdir().unwrap();
    write_settings(home.path());
    let out = ok(&wyckoff(
        home.path(),
        &["model", "light", "ds-cheap", "--json"],
    ));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["light_model"], "ds-cheap");
    assert_eq!(v["previous"], Value::Null);

    // The file is the app's format: versioned, every field, the user's other settings kept.
    let file = settings_file(home.path());
    assert_eq!(file["light_model"], "ds-cheap");
    assert_eq!(file["version"], 1);
    assert_eq!(file["theme"], "dark");
    assert_eq!(file["main_model"], "claude-main");
    assert_eq!(file["fallback_models"], json!(["ds-cheap"]));
    assert_eq!(
        file["retention_days"], 30,
        "missing fields written with defaults"
    );

    let text = ok(&wyckoff(home.path(), &["model", "list"]));
    let marked: Vec<&str> = text.lines().filter(|l| l.starts_with('💡')).collect();
    assert_eq!(marked.len(), 1, "{text}");
    assert!(
        marked[0].contains("ds-cheap") && marked[0].contains("light,fallback"),
        "{text}"
    );
    let listed: Value =
        serde_json::from_str(&ok(&wyckoff(home.path(), &["model", "list", "--json"]))).unwrap();
    assert_eq!(listed["light_model"], "ds-cheap");

    // --clear removes it: every turn uses the main model again.
    let text = ok(&wyckoff(home.path(), &["model", "light", "--clear"]));
    assert!(text.contains("light model: none"), "{text}");
    assert_eq!(settings_file(home.path())["light_model"], Value::Null);
}

#[test]
fn an_unknown_id_exits_2_and_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let before = write_settings(home.path());
    let out = wyckoff(home.path(), &["model", "light", "gpt-nope"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no model with id 'gpt-nope'")
            && stderr.contains("claude-main, ds-cheap, local-compat, ollama-small"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(home.path().join("settings.json")).unwrap(),
        before
    );

    // Neither an id nor --clear: a usage error, nothing written.
    let out = wyckoff(home.path(), &["model", "light"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        std::fs::read(home.path().join("settings.json")).unwrap(),
        before
    );

    // No settings file at all: refused, and no file is created.
    let empty = tempfile::tempdir().unwrap();
    let out = wyckoff(empty.path(), &["model", "light", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no models are configured"));
    assert!(!empty.path().join("settings.json").exists());

    // A corrupt file is left for the user to repair.
    std::fs::write(home.path().join("settings.json"), "{not json").unwrap();
    let out = wyckoff(home.path(), &["model", "light", "ds-cheap"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(home.path().join("settings.json")).unwrap(),
        "{not json"
    );
}
