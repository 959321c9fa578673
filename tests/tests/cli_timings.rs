//! `wyckoff --timings` and `WYCKOFF_TIMINGS=1` print where a command's time went, one
//! stderr line a stage, and change nothing else: the screen's JSON is byte for byte the
//! one printed without them, and without them stderr carries no timing line.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

fn wyckoff(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(wyckoff_e2e::binary("wyckoff"));
    cmd.args(args)
        .env("WYCKOFF_HOME", home)
        .env("WYCKOFF_OFFLINE", "1")
        .env_remove("WYCKOFF_TIMINGS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The stage names in the order printed, indentation kept.
fn stages(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("timing "))
        .map(|rest| {
            let label = rest.rsplitn(3, ' ').nth(2).unwrap_or_default();
            label.trim_end().to_string()
        })
        .collect()
}

#[test]
fn a_screen_reports_each_stage_and_prints_the_same_json() {
    let home = tempfile::tempdir().unwrap();
    let plain = wyckoff(home.path(), &["screen", "--json"], &[]);
    assert_eq!(plain.status.code(), Some(0), "{plain:?}");
    assert!(
        !String::from_utf8_lossy(&plain.stderr).contains("timing "),
        "no timings unless asked: {}",
        String::from_utf8_lossy(&plain.stderr)
    );

    let flagged = wyckoff(home.path(), &["--timings", "screen", "--json"], &[]);
    let by_env = wyckoff(
        home.path(),
        &["screen", "--json"],
        &[("WYCKOFF_TIMINGS", "1")],
    );
    for run in [&flagged, &by_env] {
        assert_eq!(run.status.code(), Some(0), "{run:?}");
        assert_eq!(run.stdout, plain.stdout, "the output does not change");
        let names = stages(&run.stderr);
        for stage in [
            "start-up",
            "settings",
            "open",
            "  database",
            "  market",
            "read",
            "  stock list",
            "  bars",
            "prepare",
            "compute",
            "close",
            "output",
            "total",
        ] {
            assert!(
                names.iter().any(|n| n == stage),
                "{stage:?} missing from {names:?}"
            );
        }
        assert_eq!(names.last().map(String::as_str), Some("total"));
        // every line is `timing <stage> <ms> ms` with a number
        for line in String::from_utf8_lossy(&run.stderr)
            .lines()
            .filter(|l| l.starts_with("timing "))
        {
            let ms: Vec<&str> = line.rsplitn(3, ' ').collect();
            assert_eq!(ms[0], "ms", "{line}");
            assert!(ms[1].parse::<f64>().is_ok(), "{line}");
        }
    }
    // "0" turns them off
    let off = wyckoff(
        home.path(),
        &["screen", "--json"],
        &[("WYCKOFF_TIMINGS", "0")],
    );
    assert!(stages(&off.stderr).is_empty());
}

#[test]
fn a_command_that_writes_a_log_reports_its_stages_too() {
    let home = tempfile::tempdir().unwrap();
    let out = wyckoff(home.path(), &["alerts", "list", "--timings"], &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let names = stages(&out.stderr);
    for stage in ["start-up", "open", "close", "total"] {
        assert!(
            names.iter().any(|n| n == stage),
            "{stage:?} missing from {names:?}"
        );
    }
}

#[test]
fn an_alerts_check_accounts_for_each_of_its_stages() {
    let home = tempfile::tempdir().unwrap();
    let out = wyckoff(home.path(), &["alerts", "check", "--timings"], &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let names = stages(&out.stderr);
    for stage in [
        "open", "rules", "history", "bars", "facts", "evaluate", "record", "deliver", "output",
        "close", "total",
    ] {
        assert!(
            names.iter().any(|n| n == stage),
            "{stage:?} missing from {names:?}"
        );
    }
}
