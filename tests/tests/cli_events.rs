//! `wyckoff events CODE [--as-of DATE] [--json]` on a fresh, offline data home (the bundled
//! bars): the marks known as of a close, each with its bar, known-on date and why, nothing
//! from after the close, and clear errors for bad input. Build the binary first
//! (`cargo build -p wyckoff-cli`; `scripts/test` does).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use wyckoff_e2e::show;

/// A fresh data home per test, never the user's; no network.
type Home = wyckoff_e2e::CliHome;

fn marks(v: &Value) -> &Vec<Value> {
    v["marks"].as_array().unwrap()
}

fn event<'a>(v: &'a Value, label: &str) -> Option<&'a Value> {
    marks(v)
        .iter()
        .find(|m| m["mark"]["type"] == "event" && m["mark"]["event"] == label)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

#[test]
fn events_as_of_a_close_are_the_ones_known_then() {
    let h = Home::new();
    // 2019-06-29 is a Saturday: the close read is the Friday before.
    let v = h.json(&["events", "sz000001", "--as-of", "2019-06-29", "--json"]);
    assert_eq!(v["code"], "000001");
    assert_eq!(v["as_of"], 20190628);
    assert_eq!(v["source"], "bundled:zvt");
    for m in marks(&v) {
        assert!(u(&m["bar_date"]) <= u(&m["known_on"]), "{m}");
        assert!(u(&m["known_on"]) <= 20190628, "{m}");
        assert!(
            m["ended"].is_null(),
            "nothing after the close revises it: {m}"
        );
        assert!(!m["why"].as_str().unwrap().is_empty(), "{m}");
        assert!(!m["why_zh"].as_str().unwrap().is_empty(), "{m}");
    }
    // The 2019 distribution on the bundled 平安银行 bars: the buying climax is known on its own
    // day, the automatic reaction and the sign of weakness too, each with its rule.
    let bc = event(&v, "BC").expect("BC");
    assert_eq!(bc["mark"]["schematic"], "distribution");
    assert_eq!(
        (u(&bc["bar_date"]), u(&bc["known_on"])),
        (20190416, 20190416)
    );
    assert!(bc["why"].as_str().unwrap().starts_with("buying climax"));
    let sow = event(&v, "SOW").expect("SOW");
    assert_eq!(
        (u(&sow["bar_date"]), u(&sow["known_on"])),
        (20190603, 20190603)
    );
    assert!(sow["why"].as_str().unwrap().contains("(with 2019-05-09)"));
    // Phase A, closed when D began, keeps the day it was first drawn.
    let a = marks(&v)
        .iter()
        .find(|m| m["mark"]["type"] == "phase_band" && m["mark"]["phase"] == "A")
        .expect("phase A");
    assert_eq!(u(&a["known_on"]), 20190416);
    assert_eq!(u(&a["since"]), 20190603);
    assert_eq!(a["mark"]["until"], 20190603);
    // Triggers fired up to the close are listed with the day they fired.
    assert!(marks(&v).iter().any(|m| m["mark"]["type"] == "trigger"));

    // The day before the SOW, the engine did not know it.
    let before = h.json(&["events", "000001", "--as-of", "20190531", "--json"]);
    assert!(event(&before, "BC").is_some());
    assert!(event(&before, "SOW").is_none(), "{before}");
    assert!(marks(&before).iter().all(|m| u(&m["known_on"]) <= 20190531));

    // Text: one line per mark with its bar date, known-on date and why.
    let out = h.run(&["events", "000001", "--as-of", "2019-06-28"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("000001 平安银行 — marks known as of 2019-06-28"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("2019-06-03  2019-06-03  SOW")
            && l.contains("sign of weakness")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("2019-04-16  2019-04-16  phase A")
                && l.contains("in this form since 2019-06-03")),
        "{text}"
    );
}

#[test]
fn without_as_of_the_newest_cached_close_is_read() {
    let h = Home::new();
    let v = h.json(&["events", "000001", "--json"]);
    assert_eq!(v["as_of"], 20200616);
    assert_eq!(v["first_bar"], 20050104);
}

#[test]
fn bad_input_exits_2_and_says_what_is_wrong() {
    let h = Home::new();
    for (args, needle) in [
        (vec!["events", "60051x"], "unknown stock code format"),
        (
            vec!["events", "688999"],
            "unknown stock code 688999: not in the stock list and no cached bars",
        ),
        (
            vec!["events", "000001", "--as-of", "2020-02-30"],
            "--as-of must be a real date",
        ),
        (
            vec!["events", "000001", "--as-of", "2021-01-04"],
            "--as-of 2021-01-04 is outside the cached bars of 000001 (2005-01-04 … 2020-06-16)",
        ),
        (
            vec!["events", "000001", "--as-of", "2004-12-31"],
            "--as-of 2004-12-31 is outside the cached bars of 000001",
        ),
    ] {
        let out = h.run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: {}", show(&out));
    }
    // A listed stock without cached bars is unavailable (1), like `analyze`.
    let out = h.run(&["events", "600519"]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no data offline for 600519"), "{err}");
    assert!(err.contains("wyckoff data sync 600519"), "{err}");
}

/// A reader that closes its end before anything is written (`wyckoff events 000001 |
/// head -0`): every command exits 0 and says nothing, never a panic (exit 101).
#[test]
fn a_closed_stdout_ends_each_command_quietly() {
    let h = Home::new();
    for args in [
        &["events", "000001"][..],
        &["events", "000001", "--json"],
        &["analyze", "000001"],
        &["doctor"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = h.command(args).stdout(writer).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", show(&out));
        assert!(out.stderr.is_empty(), "{args:?}: {}", show(&out));
    }
}
