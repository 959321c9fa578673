//! `wyckoff screen` end to end, offline on a fresh data home over the bundled real bars
//! (8 stocks, to 2020-06-16): the whole funnel runs, a replayed day's candidate agrees
//! with the single-stock detector of `wyckoff analyze` for that day, bad input is a clear
//! error (exit 2), and a damaged cache row is reported as a skip, never used.
//! Needs `cargo build -p wyckoff-cli` first.

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
fn the_whole_funnel_runs_offline_over_the_bundled_bars() {
    let home = tempfile::tempdir().unwrap();
    let r = json(home.path(), &["screen", "--json"]);
    assert_eq!(r["as_of"], "2020-06-16");
    assert_eq!(r["universe_size"], 8);
    let layers: Vec<&str> = r["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["layer"].as_str().unwrap())
        .collect();
    assert_eq!(layers, ["L1", "L2", "L3", "L4", "L5"]);
    // Each layer takes in what the one before passed.
    let l = r["layers"].as_array().unwrap();
    for w in l.windows(2) {
        assert_eq!(w[1]["input"], w[0]["passed"], "{w:?}");
    }
    // No index bars offline: the regime is unknown, new buys blocked, and it says why.
    assert_eq!(r["regime"]["regime"]["regime"], "UNKNOWN");
    assert_eq!(r["regime"]["new_buy_allowed"], false);
    let missing: Vec<&str> = r["cache"]["missing_benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["code"].as_str().unwrap())
        .collect();
    assert!(missing.contains(&"000001.SH"), "{missing:?}");
    // Same cache, same arguments, same result.
    assert_eq!(json(home.path(), &["screen", "--json"]), r);
    // Text mode prints the layers.
    let (code, text, _) = wyckoff(home.path(), &["screen"]);
    assert_eq!(code, Some(0));
    assert!(text.contains("L4") && text.contains("水温"), "{text}");
}

#[test]
fn a_replayed_days_candidates_agree_with_the_single_stock_detector() {
    let home = tempfile::tempdir().unwrap();
    // Walk the last year of the bundled bars until a day yields a candidate, then check
    // it by the other path: `wyckoff analyze CODE --as-of DAY` must see the same L4
    // trigger on that day's bars.
    // Weekdays are enough to probe: a holiday replays the trading day before it.
    let days: Vec<String> = (0..380).map(|i| weekday(20190102, i)).collect();
    let mut checked = 0;
    for day in days.iter().step_by(3) {
        let r = json(home.path(), &["screen", "--json", "--as-of", day]);
        for c in r["candidates"].as_array().unwrap() {
            let code = c["code"].as_str().unwrap();
            let a = json(home.path(), &["analyze", code, "--as-of", day, "--json"]);
            assert_eq!(a["latest_date"], c["bars_as_of"], "{code} on {day}");
            let single: Vec<String> = a["l4_triggers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_lowercase())
                .collect();
            for t in c["triggers"].as_array().unwrap() {
                let kind = t["kind"].as_str().unwrap().to_lowercase();
                assert!(
                    single
                        .iter()
                        .any(|s| s.contains(&kind) || kind.contains(s.as_str())),
                    "{code} on {day}: funnel {kind}, analyze {single:?}"
                );
            }
            checked += 1;
        }
        if checked >= 3 {
            break;
        }
    }
    assert!(checked >= 1, "no replayed day had a candidate");
}

/// `YYYYMMDD` of the `n`-th weekday from `start` (a Wednesday).
fn weekday(start: u32, n: usize) -> String {
    let (mut y, mut m, mut d) = (start / 10_000, (start / 100) % 100, start % 100);
    let mut left = n;
    let mut dow = 3; // 2019-01-02 was a Wednesday (1 = Monday)
    loop {
        if dow <= 5 {
            if left == 0 {
                return format!("{y:04}{m:02}{d:02}");
            }
            left -= 1;
        }
        dow = dow % 7 + 1;
        d += 1;
        let dim = match m {
            4 | 6 | 9 | 11 => 30,
            2 if y % 4 == 0 => 29,
            2 => 28,
            _ => 31,
        };
        if d > dim {
            d = 1;
            m += 1;
            if m > 12 {
                m = 1;
                y += 1;
            }
        }
    }
}

#[test]
fn bad_input_is_a_clear_error() {
    let home = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 4] = [
        (&["screen", "--board", "nasdaq"], "board"),
        (&["screen", "--limit", "-3"], "limit"),
        (&["screen", "--limit", "5000"], "3000"),
        (&["screen", "--as-of", "2020-13-45"], "as_of"),
    ];
    for (args, word) in cases {
        let (code, out, err) = wyckoff(home.path(), args);
        assert_eq!(code, Some(2), "{args:?}: {out}{err}");
        assert!(err.contains(word), "{args:?}: {err}");
        assert!(out.is_empty(), "nothing on stdout for bad input");
    }
    // Before any cached bar: an error that says so, not an empty "result".
    let (code, _, err) = wyckoff(home.path(), &["screen", "--as-of", "1999-01-04"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("1999") || err.contains("早于"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_damaged_cache_row_is_reported_and_skipped() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_path_buf();
    // Open once so the bundled bars are in the cache.
    let before = tokio::task::spawn_blocking(move || json(&h, &["screen", "--json"]))
        .await
        .unwrap();
    assert_eq!(before["universe_size"], 8);
    let pool = sqlx::SqlitePool::connect_with(
        sqlx::sqlite::SqliteConnectOptions::new().filename(home.path().join("wyckoff.db")),
    )
    .await
    .unwrap();
    let hit = sqlx::query(
        "UPDATE market_series SET data = X'00FF00FF' WHERE kind = 'stock' AND code LIKE '601318%'",
    )
    .execute(&pool)
    .await
    .unwrap();
    assert_eq!(hit.rows_affected(), 1);
    pool.close().await;
    let h = home.path().to_path_buf();
    let after = tokio::task::spawn_blocking(move || json(&h, &["screen", "--json"]))
        .await
        .unwrap();
    assert_eq!(after["universe_size"], 7, "the damaged stock is left out");
    let skipped = after["cache"]["skipped"].to_string();
    assert!(skipped.contains("601318"), "{skipped}");
    assert!(
        !after["candidates"].to_string().contains("601318"),
        "a damaged series is never scored"
    );
}

#[test]
fn a_past_days_screen_says_why_it_suggests_no_size() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let (code, _, err) = wyckoff(
        h,
        &["portfolio", "cash", "in", "100000", "--date", "2020-01-02"],
    );
    assert_eq!(code, Some(0), "{err}");
    let note = "按某日回看的筛选不给建议仓位：仓位按今天的账户与收盘价计算";
    // A replayed day: its candidates carry no size (today's account did not exist then).
    let r = json(h, &["screen", "--json", "--as-of", "2019-06-12"]);
    assert_eq!(r["suggested_size_note"], note);
    for c in r["candidates"].as_array().unwrap() {
        assert!(c.get("suggested_size").is_none(), "{c}");
    }
    let (code, text, _) = wyckoff(h, &["screen", "--as-of", "2019-06-12"]);
    assert_eq!(code, Some(0));
    assert!(text.contains(&format!("note: {note}")), "{text}");
    assert!(!text.contains("suggested sizes"), "{text}");
    // Today's screen is sized, so it carries no such note. (Offline, the bundled last
    // day has no candidate; the sizes themselves are the tools test `suggested_size`'s.)
    let today = json(h, &["screen", "--json"]);
    assert!(today.get("suggested_size_note").is_none(), "{today}");
    for c in today["candidates"].as_array().unwrap() {
        let z = &c["suggested_size"];
        assert_eq!(z["code"], c["code"], "{c}");
        if let Some(n) = z["sizing"]["shares"].as_u64() {
            assert!(n == 0 || n.is_multiple_of(100) || n >= 200, "{z}");
        }
    }
}
