//! `wyckoff events CODE --period 60m`: the Wyckoff events the engine reads on the cached
//! 60-minute bars, through the real binary. With nothing cached it says so and how to sync;
//! after `wyckoff data sync 000001 --period 60m` from a local server speaking Eastmoney's
//! `klt` format (serving the engine's 60-minute fixture, test data shaped on the
//! accumulation rules), it lists the selling climax on the one climactic bar at its low and
//! the spring that undercut it, says how many bars it read and how old the newest is, and
//! refuses a period that is not one or a daily `--as-of` beside a minute period.
//! Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/http.rs"]
mod http;

use std::process::Output;

use http::{Reply, Request};
use serde_json::{Value, json};
use wyckoff_e2e::{show, wyckoff_cli};

const FIXTURE: &str =
    include_str!("../../src-tauri/crates/engine/tests/data/minute_60m_accumulation.csv");

/// (time YYYYMMDDHHMM, open, high, low, close, volume) of the fixture's rows.
fn fixture() -> Vec<(u64, [f64; 5])> {
    FIXTURE
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let n = |i: usize| f[i].parse::<f64>().unwrap();
            (f[0].parse().unwrap(), [n(1), n(2), n(3), n(4), n(5)])
        })
        .collect()
}

/// The fixture as Eastmoney's `klt=60` lines (open, close, high, low, volume in lots, amount).
fn klines() -> Vec<String> {
    fixture()
        .iter()
        .map(|(t, [o, h, l, c, v])| {
            let s = t.to_string();
            format!(
                "{}-{}-{} {}:{},{o:.2},{c:.2},{h:.2},{l:.2},{:.0},{:.2},0,0,0,0.1",
                &s[..4],
                &s[4..6],
                &s[6..8],
                &s[8..10],
                &s[10..12],
                v / 100.0,
                v * c
            )
        })
        .collect()
}

/// Serves the fixture for 000001 at `klt=60`; nothing else.
fn server() -> String {
    http::serve(|req: &Request| {
        Reply::json(
            if req.line.contains("klt=60&") && req.param("secid") == Some("0.000001") {
                json!({"rc": 0, "data": {"code": "000001", "klines": klines()}})
            } else {
                json!({"rc": 0, "data": null})
            },
        )
    })
}

fn events(home: &std::path::Path, args: &[&str]) -> Output {
    let mut cmd = wyckoff_cli(home);
    cmd.arg("events").args(args);
    cmd.output().unwrap()
}

fn beijing_today() -> chrono::NaiveDate {
    (chrono::Utc::now() + chrono::Duration::hours(8)).date_naive()
}

#[test]
fn events_on_cached_60_minute_bars_name_the_climax_and_spring_and_how_fresh_the_bars_are() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();

    // nothing cached: said, with the sync that fetches them, and no events invented
    let out = events(h, &["000001", "--period", "60m", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no 60m bars cached for 000001"), "{err}");
    assert!(
        err.contains("wyckoff data sync 000001 --period 60m"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "{}", show(&out));

    // bad input: a period that is not one; a daily --as-of beside a minute period
    let out = events(h, &["000001", "--period", "7m"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--period \"7m\" is not a period"));
    let out = events(h, &["000001", "--period", "60m", "--as-of", "2020-06-01"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--as-of 2020-06-01 reads daily closes"));

    let base = server();
    let mut sync = wyckoff_cli(h);
    sync.env_remove("WYCKOFF_OFFLINE")
        .env("WYCKOFF_DATA_SOURCES", "eastmoney")
        .env("WYCKOFF_EASTMONEY_URL", &base)
        .args(["data", "sync", "000001", "--period", "60m", "--json"]);
    let out = sync.output().unwrap();
    assert!(out.status.success(), "{}", show(&out));

    let rows = fixture();
    let before = beijing_today();
    let out = events(h, &["000001", "--period", "60m", "--json"]);
    let after = beijing_today();
    assert!(out.status.success(), "{}", show(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["code"], "000001");
    assert_eq!(v["period"], "60m");
    assert_eq!(v["bars"], rows.len());
    assert_eq!(v["first_bar"], rows[0].0);
    let newest = rows.last().unwrap().0;
    assert_eq!(v["newest_bar"], newest);
    assert_eq!(v["sources"], json!(["eastmoney"]));
    let newest_day =
        chrono::NaiveDate::parse_from_str(&(newest / 10_000).to_string(), "%Y%m%d").unwrap();
    let age = v["newest_bar_age_days"].as_i64().unwrap();
    assert!(
        [
            (before - newest_day).num_days(),
            (after - newest_day).num_days()
        ]
        .contains(&age),
        "{v}"
    );

    let evs = v["events"].as_array().unwrap();
    let of = |name: &str| evs.iter().find(|e| e["event"] == name);
    // the selling climax: the one bar on several times the volume, marked at its low
    let (climax_time, climax) = rows
        .iter()
        .max_by(|a, b| a.1[4].total_cmp(&b.1[4]))
        .map(|(t, f)| (*t, *f))
        .unwrap();
    let sc = of("SC").unwrap_or_else(|| panic!("no SC in {v}"));
    assert_eq!(sc["bar_time"], climax_time, "{v}");
    assert!(
        (sc["price"].as_f64().unwrap() - climax[2]).abs() < 0.005,
        "{sc}"
    );
    assert!(
        sc["why"].as_str().unwrap().starts_with("selling climax"),
        "{sc}"
    );
    // the spring: a later bar whose low undercut the climax low, marked at that low
    let spring = of("Spring").unwrap_or_else(|| panic!("no Spring in {v}"));
    let t = spring["bar_time"].as_u64().unwrap();
    let bar = rows.iter().find(|r| r.0 == t).unwrap().1;
    assert!(t > climax_time && bar[2] < climax[2], "{spring}");
    assert!(
        (spring["price"].as_f64().unwrap() - bar[2]).abs() < 0.005,
        "{spring}"
    );
    // every event sits on a served bar, in time order
    let times: Vec<u64> = evs
        .iter()
        .map(|e| e["bar_time"].as_u64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    assert!(times.iter().all(|t| rows.iter().any(|r| r.0 == *t)));

    // the text report: the freshness line and a row per event
    let out = events(h, &["000001", "--period", "60m"]);
    assert!(out.status.success(), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        text.contains("Wyckoff events on the cached 60m bars (120 bars"),
        "{text}"
    );
    assert!(text.contains("newest bar 2020-06-16 15:00"), "{text}");
    let sc_row = format!(
        "{}-{}-{} {}:{}",
        &climax_time.to_string()[..4],
        &climax_time.to_string()[4..6],
        &climax_time.to_string()[6..8],
        &climax_time.to_string()[8..10],
        &climax_time.to_string()[10..12]
    );
    let row = text
        .lines()
        .find(|l| l.starts_with(&sc_row))
        .unwrap_or_else(|| panic!("no row at {sc_row}: {text}"));
    assert!(row.contains("SC"), "{row}");

    // the daily reading is untouched by the minute one
    let out = events(h, &["000001", "--json"]);
    assert!(out.status.success(), "{}", show(&out));
    let daily: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(daily["marks"].is_array(), "{daily}");
}
