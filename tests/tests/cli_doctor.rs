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

/// `doctor` says how far the trading calendar is known and from where: the bundled list
/// on a fresh home; once `data sync`'s step learned days from the SSE Composite's cached
/// bars, through their last day, from those bars. A schedule pass on a learned day says
/// nothing was assumed; past it, that the day was assumed.
#[tokio::test(flavor = "multi_thread")]
async fn the_calendar_is_said_with_how_far_it_is_known_and_from_where() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let fresh = doctor(h, &["--json"], &[]);
    let report: Value = serde_json::from_slice(&fresh.stdout).unwrap();
    assert_eq!(report["calendar"]["bundled_through"], 20261231, "{report}");
    assert_eq!(report["calendar"]["known_through"], 20261231);
    assert_eq!(report["calendar"]["learned_from"], Value::Null);

    {
        use wyckoff_market::cache::BarTable;
        let md = wyckoff_market::MarketData::open_with(wyckoff_market::MarketConfig::offline(h))
            .await
            .unwrap();
        let key = wyckoff_market::code::IndexCode::sse_composite()
            .symbol()
            .key();
        let bars: Vec<_> = [20261230, 20261231, 20270104, 20270105, 20270106]
            .into_iter()
            .map(|date| wyckoff_market::Bar {
                date,
                open: 3000.0,
                high: 3010.0,
                low: 2990.0,
                close: 3000.0,
                volume: 1.0e9,
                amount: 1.0e11,
                turnover: None,
            })
            .collect();
        md.store()
            .upsert_bars(BarTable::Indices, &key, &bars, "eastmoney", true)
            .await
            .unwrap();
        let learned = md.learn_calendar().await.unwrap();
        assert_eq!(learned.learned_now, 4);
    }
    let out = doctor(h, &["--json"], &[]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["calendar"]["known_through"], 20270106, "{report}");
    assert!(
        report["calendar"]["learned_from"]
            .as_str()
            .unwrap()
            .contains("000001.SH")
    );
    let text = doctor(h, &[], &[]);
    let said = String::from_utf8_lossy(&text.stdout);
    assert!(
        said.contains(
            "bundled through 2026-12-31, then through 2027-01-06 from index bars of 000001.SH"
        ),
        "{said}"
    );

    let cli = |args: &[&str]| wyckoff_e2e::wyckoff_cli(h).args(args).output().unwrap();
    let add = cli(&[
        "schedule",
        "add",
        "close",
        "--at",
        "15:05",
        "--job",
        "screen",
        "--now",
        "2026-12-31 16:00",
    ]);
    assert!(
        add.status.success(),
        "{}",
        String::from_utf8_lossy(&add.stderr)
    );
    for (now, occurrence, assumed) in [
        ("2027-01-05 15:10", "2027-01-05 15:05", false),
        ("2027-01-07 15:10", "2027-01-07 15:05", true),
    ] {
        let pass = cli(&["daemon", "--once", "--json", "--now", now]);
        assert!(
            pass.status.success(),
            "{}",
            String::from_utf8_lossy(&pass.stderr)
        );
        let run: Value = serde_json::from_slice(&pass.stdout).unwrap();
        assert_eq!(run["occurrence"], occurrence, "{run}");
        assert_eq!(run["assumed_trading_day"], assumed, "{run}");
    }
}
