//! The intraday alert interval is a setting, through the `wyckoff` binary: `alerts
//! interval` shows it (5 by default), sets it in the settings file the app reads, refuses
//! a value outside 1–60 minutes naming the field (the file unchanged); a daemon pass takes
//! its slot from it — at 15 minutes, 10:36 and 10:44 are one slot (the second pass checks
//! nothing) where at 5 they are two; `WYCKOFF_INTRADAY_MINUTES` still overrides it for a
//! process. What fired intraday says so, with the quote's time, in `alerts history`.
//! Against the recorded Tencent snapshot of 2020-06-17 10:42 (support/tencent_quotes.rs).
//! Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/tencent_quotes.rs"]
mod tencent_quotes;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};
use wyckoff_e2e::{show, wyckoff_cli};

fn cli(home: &Path) -> Command {
    let mut cmd = wyckoff_cli(home);
    cmd.env_remove("WYCKOFF_INTRADAY_MINUTES");
    cmd
}

fn online(home: &Path, base: &str) -> Command {
    let mut cmd = cli(home);
    cmd.env_remove("WYCKOFF_OFFLINE")
        // daily bars stay as bundled: only the quote API is served
        .env("WYCKOFF_DATA_SOURCES", "eastmoney")
        .env("WYCKOFF_EASTMONEY_URL", base)
        .env("WYCKOFF_TENCENT_URL", base);
    cmd
}

fn run(mut cmd: Command, args: &[&str]) -> Output {
    cmd.args(args).output().unwrap()
}

fn ok_json(out: Output) -> Value {
    assert!(out.status.success(), "{}", show(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The `{"intraday": …}` line of a daemon pass, if it printed one (a check ran).
fn intraday_line(out: &Output) -> Option<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v.get("intraday").cloned())
}

fn daemon_at(cmd: Command, now: &str) -> Option<Value> {
    let out = run(cmd, &["daemon", "--now", now, "--json"]);
    assert!(out.status.success(), "{now}: {}", show(&out));
    intraday_line(&out)
}

fn settings_file(home: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(home.join("settings.json")).unwrap()).unwrap()
}

#[test]
fn the_interval_is_shown_set_and_refused_outside_its_range() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();

    let out = run(cli(h), &["alerts", "interval"]);
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "intraday alerts: checked every 5 minute(s) during the session"
    );

    let v = ok_json(run(cli(h), &["alerts", "interval", "15", "--json"]));
    assert_eq!(v["intraday_alert_minutes"], 15, "{v}");
    assert_eq!(v["previous"], 5, "{v}");
    assert_eq!(v["in_effect"], 15, "{v}");
    assert_eq!(settings_file(h)["intraday_alert_minutes"], 15);

    for (bad, got) in [("0", "0"), ("61", "61"), ("-5", "-5")] {
        let out = run(cli(h), &["alerts", "interval", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "intraday_alert_minutes must be between 1 and 60 (got {got})"
            )),
            "{bad}: {err}"
        );
        assert_eq!(settings_file(h)["intraday_alert_minutes"], 15, "{bad}");
    }
    let out = run(cli(h), &["alerts", "interval", "ten"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_eq!(settings_file(h)["intraday_alert_minutes"], 15);

    // a hand-edited file out of range is refused with the field named, not read as 5
    let mut file = settings_file(h);
    file["intraday_alert_minutes"] = json!(90);
    std::fs::write(h.join("settings.json"), file.to_string()).unwrap();
    let out = run(cli(h), &["alerts", "interval"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("intraday_alert_minutes must be between 1 and 60 (got 90)"),
        "{}",
        show(&out)
    );

    // the override is said when set
    file["intraday_alert_minutes"] = json!(15);
    std::fs::write(h.join("settings.json"), file.to_string()).unwrap();
    let mut cmd = cli(h);
    cmd.env("WYCKOFF_INTRADAY_MINUTES", "1");
    let v = ok_json(run(cmd, &["alerts", "interval", "--json"]));
    assert_eq!(v["intraday_alert_minutes"], 15, "{v}");
    assert_eq!(v["in_effect"], 1, "{v}");
    assert_eq!(v["env_override"], "1", "{v}");
}

/// A home with a rule the 10:42 quote (13.05) fires: above the close of 06-16 (12.89).
fn home_with_rule() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    ok_json(run(
        cli(home.path()),
        &[
            "alerts",
            "add",
            "000001",
            "--price-above",
            "13.00",
            "--json",
        ],
    ));
    home
}

#[test]
fn the_setting_governs_the_daemons_slot_and_the_override_still_wins() {
    let (base, hits) = tencent_quotes::serve();

    // The default, 5 minutes: 10:36 and 10:44 are slots 13 and 14, both checked.
    let home = home_with_rule();
    let h = home.path();
    let first = daemon_at(online(h, &base), "2020-06-17 10:36").expect("10:36 checks");
    assert_eq!(
        first["report"]["fired"].as_array().unwrap().len(),
        1,
        "{first}"
    );
    let second = daemon_at(online(h, &base), "2020-06-17 10:44").expect("10:44 checks");
    // the cooldown holds the rule back, but the check ran
    assert_eq!(second["report"]["fired"], json!([]), "{second}");
    assert_eq!(
        second["report"]["suppressed"].as_array().unwrap().len(),
        1,
        "{second}"
    );

    // 15 minutes: 10:36 and 10:44 are one slot (10:30–10:45); 10:46 is the next.
    let home = home_with_rule();
    let h = home.path();
    ok_json(run(cli(h), &["alerts", "interval", "15", "--json"]));
    let asked = hits.load(std::sync::atomic::Ordering::SeqCst);
    let first = daemon_at(online(h, &base), "2020-06-17 10:36").expect("10:36 checks");
    let fired = first["report"]["fired"].as_array().unwrap();
    assert_eq!(fired.len(), 1, "{first}");
    assert_eq!(fired[0]["intraday_at"], "2020-06-17 10:42", "{first}");
    assert_eq!(daemon_at(online(h, &base), "2020-06-17 10:44"), None);
    assert_eq!(
        hits.load(std::sync::atomic::Ordering::SeqCst),
        asked + 1,
        "the pass that had no slot asked for no quote"
    );
    assert!(daemon_at(online(h, &base), "2020-06-17 10:46").is_some());

    // WYCKOFF_INTRADAY_MINUTES overrides the setting for its process: at 5, 10:49 is a
    // slot of its own (10:45–10:50 was not claimed at 5)
    let mut cmd = online(h, &base);
    cmd.env("WYCKOFF_INTRADAY_MINUTES", "5");
    assert!(daemon_at(cmd, "2020-06-17 10:49").is_some());
    assert_eq!(daemon_at(online(h, &base), "2020-06-17 10:58"), None);

    // what fired intraday says so, with the quote's time, in words and in JSON
    let history = ok_json(run(cli(h), &["alerts", "history", "--json"]));
    assert_eq!(history.as_array().unwrap().len(), 1, "{history}");
    assert_eq!(history[0]["intraday_at"], "2020-06-17 10:42", "{history}");
    let out = run(cli(h), &["alerts", "history"]);
    assert!(out.status.success(), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("2020-06-17 盘中 intraday 10:42  000001 平安银行  [rule 1]"),
        "{text}"
    );
}
