//! `wyckoff doctor` on a machine without a display or a session bus.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

use serde_json::Value;

fn doctor(home: &std::path::Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(wyckoff_e2e::binary("wyckoff"));
    cmd.arg("doctor").args(args).env("WYCKOFF_HOME", home);
    // No display and no session bus: the keychain probe must fail fast, not hang.
    for var in ["DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS"] {
        cmd.env_remove(var);
    }
    for var in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "DEEPSEEK_API_KEY",
        "GEMINI_API_KEY",
        "TUSHARE_TOKEN",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(envs.iter().copied());
    cmd.output().unwrap()
}

#[test]
fn reports_keys_set_in_the_environment_without_their_values() {
    let home = tempfile::tempdir().unwrap();
    let canary = "sk-doctor-canary-0123456789";
    let out = doctor(home.path(), &["--json"], &[("DEEPSEEK_API_KEY", canary)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(!stdout.contains(canary), "the key value leaked: {stdout}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["data_home"], home.path().display().to_string());
    assert_eq!(report["settings"]["state"], "missing");
    assert_eq!(report["keychain"]["state"], "unavailable");
    assert!(
        report["keychain"]["fix"]
            .as_str()
            .unwrap()
            .contains("gnome-keyring")
    );
    let deepseek = report["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"]["vendor"] == "deepseek")
        .unwrap();
    assert_eq!(deepseek["set"], true);
    assert_eq!(deepseek["source"], "environment");
    let anthropic = report["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"]["vendor"] == "anthropic")
        .unwrap();
    assert_eq!(anthropic["set"], false);
}

#[test]
fn text_report_names_the_settings_problem_and_fails() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("settings.json"),
        r#"{"version": 1, "stream_idle_timeout_secs": -5}"#,
    )
    .unwrap();
    let out = doctor(home.path(), &[], &[]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("ERROR: stream_idle_timeout_secs must be between 10 and 600 (got -5)"),
        "{stdout}"
    );
    assert!(stdout.contains("keychain:      unavailable"), "{stdout}");
}
