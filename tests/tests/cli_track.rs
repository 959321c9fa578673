//! `wyckoff track` end to end through the real binary, offline on a fresh data home over
//! the bundled real bars (8 stocks, to 2020-06-16): `screen --save` then `track` shows the
//! saved candidates with their figures (a horizon of N days sells at the close of the N-th
//! trading day after the entry day); a screen without `--save` is not kept; a backfill
//! over a short range reports progress on stderr and fills `track stats`; bad dates are
//! refused (exit 2). Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::Value;

fn wyckoff(home: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = wyckoff_e2e::wyckoff_cli(home).args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(home: &Path, args: &[&str]) -> Value {
    let (code, out, err) = wyckoff(home, args);
    assert_eq!(code, Some(0), "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn screen_save_then_track_shows_the_candidates() {
    let home = tempfile::tempdir().unwrap();
    // Not saved without --save.
    let plain = json(home.path(), &["screen", "--as-of", "2019-01-16", "--json"]);
    assert!(plain.get("tracked_screen_id").is_none());
    assert_eq!(
        json(home.path(), &["track", "--json"]),
        Value::Array(vec![])
    );

    let r = json(
        home.path(),
        &["screen", "--as-of", "2019-01-16", "--save", "--json"],
    );
    let id = r["tracked_screen_id"].as_i64().unwrap();
    let codes: Vec<&str> = r["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"000001"), "{codes:?}");

    let tracked = json(home.path(), &["track", "--json"]);
    let screens = tracked.as_array().unwrap();
    assert_eq!(screens.len(), 1);
    let s = &screens[0];
    assert_eq!(s["id"], id);
    assert_eq!(s["as_of"], "2019-01-16");
    assert_eq!(s["origin"], "cli");
    let saved: Vec<&str> = s["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["code"].as_str().unwrap())
        .collect();
    assert_eq!(saved, codes);
    let pingan = s["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["code"] == "000001")
        .unwrap();
    assert_eq!(pingan["triggers"], serde_json::json!(["Spring"]));
    let horizons: Vec<i64> = pingan["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            assert_eq!(o["status"], "done", "{o}");
            // The entry is the next trading day's open.
            assert_eq!(o["entry_date"], 20190117);
            o["horizon"].as_i64().unwrap()
        })
        .collect();
    assert_eq!(horizons, [1, 5, 10, 20]);

    // Text mode names the screen and the candidate.
    let (code, text, _) = wyckoff(home.path(), &["track"]);
    assert_eq!(code, Some(0));
    assert!(
        text.contains(&format!("screen #{id}  as of 2019-01-16")),
        "{text}"
    );
    assert!(text.contains("000001") && text.contains("Spring"), "{text}");
    let (_, text, _) = wyckoff(home.path(), &["screen", "--as-of", "2019-01-16", "--save"]);
    assert!(text.contains("saved for tracking as screen #"), "{text}");
}

/// The entry and exit days of a done outcome.
fn dates(o: &Value) -> (i64, i64) {
    assert_eq!(o["status"], "done", "{o}");
    (
        o["entry_date"].as_i64().unwrap(),
        o["exit_date"].as_i64().unwrap(),
    )
}

#[test]
fn a_one_day_horizon_sells_on_the_next_trading_day() {
    let home = tempfile::tempdir().unwrap();
    // 中国平安 screened at the close of 2019-01-07: bought at the open of 01-08, which T+1
    // does not let it sell before the close of 01-09.
    let r = json(
        home.path(),
        &["screen", "--as-of", "2019-01-07", "--save", "--json"],
    );
    assert!(
        r["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["code"] == "601318"),
        "{r}"
    );
    let tracked = json(home.path(), &["track", "--json"]);
    let pingan = tracked[0]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["code"] == "601318")
        .unwrap();
    let outcomes = pingan["outcomes"].as_array().unwrap();
    // 1, 5, 10 and 20 trading days after the entry day (the market shut 02-04 to 02-08
    // for the Spring Festival).
    let want = [(1, 20190109), (5, 20190115), (10, 20190122), (20, 20190212)];
    for (o, (h, exit)) in outcomes.iter().zip(want) {
        assert_eq!(o["horizon"], h, "{o}");
        assert_eq!(dates(o), (20190108, exit), "h{h}: {o}");
    }
    // The text says how a horizon is counted.
    let (code, text, _) = wyckoff(home.path(), &["track"]);
    assert_eq!(code, Some(0));
    assert!(
        text.contains("sold at the close N trading days after it (T+1"),
        "{text}"
    );
}

#[test]
fn backfill_a_short_range_then_stats() {
    let home = tempfile::tempdir().unwrap();
    let (code, out, err) = wyckoff(
        home.path(),
        &[
            "track",
            "backfill",
            "--from",
            "2019-01-02",
            "--to",
            "2019-01-31",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    // January 2019 had 22 trading days; progress names each on stderr.
    assert!(
        out.contains("backfilled 22 trading days over 8 stocks"),
        "{out}"
    );
    assert!(err.contains("backfill 1/22  2019-01-02"), "{err}");
    assert!(err.contains("backfill 22/22  2019-01-31"), "{err}");

    let tracked = json(home.path(), &["track", "--json"]);
    let screens = tracked.as_array().unwrap();
    assert_eq!(screens.len(), 22);
    assert!(screens.iter().all(|s| s["origin"] == "backfill"));
    let signals: usize = screens
        .iter()
        .map(|s| s["candidates"].as_array().unwrap().len())
        .sum();
    assert!(signals > 0);

    let st = json(home.path(), &["track", "stats", "--json"]);
    assert_eq!(st["screens"], 22);
    assert_eq!(st["signals"], signals);
    assert_eq!(st["horizons"], serde_json::json!([1, 5, 10, 20]));
    // All signals of January 2019 have their 20 bars in the bundled data.
    let all20 = st["rates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["group"] == "all" && r["horizon"] == 20)
        .unwrap();
    assert_eq!(all20["signals"], signals);
    assert_eq!(all20["pending"], 0);
    let hits = screens
        .iter()
        .flat_map(|s| s["candidates"].as_array().unwrap())
        .filter(|c| c["outcomes"][3]["net_return_pct"].as_f64().unwrap() > 0.0)
        .count();
    assert_eq!(all20["hits"], hits);

    let (code, text, _) = wyckoff(home.path(), &["track", "stats"]);
    assert_eq!(code, Some(0));
    assert!(
        text.contains(&format!("22 screens · {signals} signals")),
        "{text}"
    );
    assert!(text.contains("trigger"), "{text}");

    // Running it again replaces the same days rather than counting them twice.
    wyckoff(
        home.path(),
        &[
            "track",
            "backfill",
            "--from",
            "2019-01-02",
            "--to",
            "2019-01-31",
        ],
    );
    assert_eq!(
        json(home.path(), &["track", "stats", "--json"])["signals"],
        signals
    );
}

#[test]
fn bad_backfill_dates_are_refused() {
    let home = tempfile::tempdir().unwrap();
    for args in [
        [
            "track",
            "backfill",
            "--from",
            "2019-13-01",
            "--to",
            "2019-01-31",
        ],
        [
            "track",
            "backfill",
            "--from",
            "2019-02-01",
            "--to",
            "2019-01-31",
        ],
    ] {
        let (code, _, err) = wyckoff(home.path(), &args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("--from"), "{err}");
    }
}
