//! The point-in-time data notes through the real binary, offline on a fresh data home over
//! the bundled real bars (8 stocks to 2020-06-16, today's stock list, no name history, no
//! delisting record): a screen of a past day, a backtest, a sweep and a track backfill each
//! say — in text and as a typed `as_of_notes` in --json — that ST status came from today's
//! names for all 8 stocks and that the list has no delisted stocks, and `events --as-of`
//! that the name shown is today's; a screen of the newest day says nothing of the kind. Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::Value;

const ST_NOTE: &str = "8 只股票中 8 只的 ST 状态取自今日名称";
const SURVIVORS: &str = "幸存者偏差";

fn wyckoff(home: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = wyckoff_e2e::wyckoff_cli(home).args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn text(home: &Path, args: &[&str]) -> String {
    let (code, out, err) = wyckoff(home, args);
    assert_eq!(code, Some(0), "{args:?}: {err}");
    out
}

fn json(home: &Path, args: &[&str]) -> Value {
    serde_json::from_str(&text(home, args)).unwrap()
}

#[test]
fn past_days_say_which_facts_were_todays() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();

    let past = json(h, &["screen", "--as-of", "2019-01-16", "--json"]);
    let n = &past["as_of_notes"];
    assert_eq!(
        (n["stocks"].as_u64(), n["st_from_today"].as_u64()),
        (Some(8), Some(8)),
        "{n}"
    );
    assert_eq!(n["no_delisting_records"], true, "{n}");
    let out = text(h, &["screen", "--as-of", "2019-01-16"]);
    assert!(out.contains(&format!("warning: {ST_NOTE}")), "{out}");
    assert!(out.contains(SURVIVORS), "{out}");

    // The newest day's facts are today's own.
    let newest = json(h, &["screen", "--json"]);
    assert_eq!(
        newest["as_of_notes"]["st_from_today"], 0,
        "{}",
        newest["as_of_notes"]
    );
    let out = text(h, &["screen"]);
    assert!(
        !out.contains("今日名称") && !out.contains(SURVIVORS),
        "{out}"
    );

    let range = ["--start", "2019-01-02", "--end", "2019-03-29"];
    let bt = json(h, &[&["backtest", "--json"][..], &range].concat());
    assert_eq!(
        bt["as_of_notes"]["st_from_today"], 8,
        "{}",
        bt["as_of_notes"]
    );
    assert!(bt["notes"].to_string().contains(ST_NOTE), "{}", bt["notes"]);
    let out = text(h, &[&["backtest"][..], &range].concat());
    assert!(out.contains(&format!("note: {ST_NOTE}")), "{out}");

    let sweep = [&["backtest"][..], &range, &["--hold-days", "5,10"]].concat();
    let out = text(h, &sweep);
    assert!(out.contains(&format!("note: {ST_NOTE}")), "{out}");
    let swept = json(h, &[&sweep[..], &["--json"]].concat());
    assert_eq!(
        swept["as_of_notes"]["st_from_today"], 8,
        "{}",
        swept["as_of_notes"]
    );

    // `events --as-of` shows a past close with today's name, and says so.
    let ev = json(h, &["events", "000001", "--as-of", "2019-06-28", "--json"]);
    assert_eq!(ev["name"], "平安银行", "{ev}");
    assert_eq!(ev["name_from_today"], true, "{ev}");
    let out = text(h, &["events", "000001", "--as-of", "2019-06-28"]);
    assert!(out.contains("note: the name is today's"), "{out}");
    let ev = json(h, &["events", "000001", "--json"]);
    assert_eq!(ev["name_from_today"], false, "{ev}");

    let out = text(
        h,
        &[
            "track",
            "backfill",
            "--from",
            "2019-01-02",
            "--to",
            "2019-01-10",
        ],
    );
    assert!(out.contains(&format!("note: {ST_NOTE}")), "{out}");
    assert!(out.contains(SURVIVORS), "{out}");
}
