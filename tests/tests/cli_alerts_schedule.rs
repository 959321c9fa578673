//! The `alerts` job of schedules through the real `wyckoff` binary on the bundled bars:
//! refused at `schedule add` while no rule exists (nothing stored); with a rule, "run now"
//! checks and records the alert, and the daemon's pass at the due time checks again and,
//! the data being the same close, fires nothing new (the cooldown holds it back).
//! Needs `cargo build -p wyckoff-cli` first (scripts/test builds every binary).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use wyckoff_e2e::wyckoff_cli;

fn wyckoff(home: &Path, args: &[&str]) -> Output {
    wyckoff_cli(home).args(args).output().unwrap()
}

fn ok_json(home: &Path, args: &[&str]) -> Value {
    let out = wyckoff(home, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

const ADD: [&str; 9] = [
    "schedule",
    "add",
    "close-alerts",
    "--at",
    "15:05",
    "--job",
    "alerts",
    "--now",
    "2026-12-03 16:00",
];

#[test]
fn an_alerts_job_needs_a_rule_and_then_checks_without_firing_twice() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();

    let refused = wyckoff(h, &ADD);
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains(
            "schedule close-alerts: no alert rule exists (add one with `wyckoff alerts add`)"
        ),
        "{err}"
    );
    assert_eq!(
        ok_json(
            h,
            &["schedule", "list", "--json", "--now", "2026-12-03 16:00"]
        ),
        serde_json::json!([])
    );

    // Every close is at or above 0.01: the rule fires on 000001's latest close.
    ok_json(
        h,
        &["alerts", "add", "000001", "--price-above", "0.01", "--json"],
    );
    let added = wyckoff(h, &ADD);
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let listed = ok_json(
        h,
        &["schedule", "list", "--json", "--now", "2026-12-03 16:00"],
    );
    assert_eq!(
        listed[0]["job"]["request"],
        serde_json::json!({"type": "alerts"})
    );

    let run = ok_json(h, &["schedule", "run", "close-alerts", "--json"]);
    assert_eq!(run["status"], "done", "{run}");
    let summary = run["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("as of 2020-06-16: 1 alerts fired (000001 平安银行 — close ≥ 0.01"),
        "{summary}"
    );
    let history = ok_json(h, &["alerts", "history", "--json"]);
    assert_eq!(history.as_array().unwrap().len(), 1);
    assert_eq!(history[0]["bar_date"], "2020-06-16");

    // The daemon at the due time: the same close, held back by the cooldown.
    let out = wyckoff(
        h,
        &["daemon", "--once", "--json", "--now", "2026-12-04 15:10"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let runs: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["status"], "done", "{runs:?}");
    assert_eq!(
        runs[0]["summary"],
        "as of 2020-06-16: 0 alerts fired, 1 held back by their cooldown"
    );
    assert_eq!(
        ok_json(h, &["alerts", "history", "--json"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
