//! The real `wyckoff` binary's `market map` over the bundled bars of a fresh, offline data
//! home: the day's limit statistics, typed in --json and printed as text, and bad input.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;

type Home = wyckoff_e2e::CliHome;

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

#[test]
fn the_map_of_the_newest_bundled_day_is_consistent_and_says_what_it_rests_on() {
    let h = Home::new();
    let m = h.json_exit(&["market", "map", "--json"], 0);
    let newest = h.json_exit(&["analyze", "000001", "--json"], 0);
    assert_eq!(m["trade_date"], newest["as_of"], "{m:#}");
    assert_eq!(m["asked"], Value::Null);
    let l = &m["limits"];
    assert!(u(&l["stocks"]) > 0 && u(&l["stocks"]) <= 8, "{l:#}");
    let ladder = l["ladder"].as_array().unwrap();
    assert_eq!(ladder.len() as u64, u(&l["limit_up"]));
    let highest = ladder.first().map_or(0, |s| u(&s["boards"]));
    assert_eq!(u(&l["highest_board"]), highest);
    let attempts = u(&l["limit_up"]) + u(&l["failed"]);
    match attempts {
        0 => assert_eq!(l["seal_rate"], Value::Null),
        n => assert_eq!(
            l["seal_rate"].as_f64().unwrap(),
            u(&l["limit_up"]) as f64 / n as f64
        ),
    }
    // the bundled bars carry no name history: every stock's name and ST status is today's
    let notes = m["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n["type"] == "names_from_today" && n["stocks"] == l["stocks"]),
        "{notes:?}"
    );

    let text = h.text(&["market", "map"]);
    let date = m["trade_date"].as_str().unwrap();
    assert!(text.contains(&format!("market map {date}")), "{text}");
    assert!(
        text.contains(&format!("limit-up {} ", l["limit_up"])),
        "{text}"
    );
    assert!(
        text.contains("note: names and ST status from today's list"),
        "{text}"
    );
}

#[test]
fn a_day_without_trading_maps_the_one_before_and_bad_dates_are_refused() {
    let h = Home::new();
    // a Sunday → the Friday before
    let m = h.json_exit(&["market", "map", "--json", "--as-of", "2020-06-14"], 0);
    assert_eq!(m["trade_date"], "2020-06-12");
    assert_eq!(m["asked"], "2020-06-14");
    assert_eq!(m["limits"]["date"], 20200612);

    let out = h.run(&["market", "map", "--as-of", "2020-02-30"]);
    assert_eq!(out.status.code(), Some(2), "{}", wyckoff_e2e::show(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--as-of"));

    // before any cached bar: said, exit 1
    let out = h.run(&["market", "map", "--as-of", "1990-01-02"]);
    assert_eq!(out.status.code(), Some(1), "{}", wyckoff_e2e::show(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("1990-01-02"));
}

/// Fen of a price in yuan, half up.
fn fen(yuan: f64) -> i64 {
    (yuan * 100.0 + 0.5 + 1e-7).floor() as i64
}

#[test]
fn the_crash_of_2020_02_03_counts_as_a_count_by_hand_from_the_bars() {
    let h = Home::new();
    let day = "2020-02-03";
    let m = h.json_exit(&["market", "map", "--json", "--as-of", day], 0);
    let status = h.json_exit(&["data", "status", "--json"], 0);
    // every bundled stock: 10 % on that day (ChiNext's 20 % came in August), none ST
    let (mut down, mut one_price_down, mut up, mut stocks) = (0u64, 0u64, 0u64, 0u64);
    for s in status["stocks"].as_array().unwrap() {
        let code = s["code"].as_str().unwrap();
        assert!(!s["name"].as_str().unwrap().contains("ST"));
        let p = h.json_exit(
            &[
                "analyze", code, "--json", "--as-of", day, "--mode", "price", "--days", "2",
            ],
            0,
        );
        let rows = p["data"].as_array().unwrap();
        if rows.len() < 2 || rows[1]["date"] != day {
            continue;
        }
        stocks += 1;
        let f = |k: &str| fen(rows[1][k].as_f64().unwrap());
        let prev = fen(rows[0]["close"].as_f64().unwrap());
        // bundled bars carry no raw close: adjusted prices, at a limit within one fen
        let (lim_up, lim_down) = ((prev * 110 + 50) / 100, (prev * 90 + 50) / 100);
        let at = |p: i64, l: i64| (p - l).abs() <= 1;
        if at(f("close"), lim_down) {
            down += 1;
            if at(f("open"), lim_down) && at(f("high"), lim_down) && at(f("low"), lim_down) {
                one_price_down += 1;
            }
        }
        if at(f("close"), lim_up) {
            up += 1;
        }
    }
    let l = &m["limits"];
    assert_eq!(u(&l["stocks"]), stocks, "{l:#}");
    assert!(down > 0, "the day of the crash has limit-downs");
    assert_eq!(u(&l["limit_down"]), down, "{l:#}");
    assert_eq!(u(&l["one_price_down"]), one_price_down, "{l:#}");
    assert_eq!(u(&l["limit_up"]), up, "{l:#}");
    // judged on adjusted prices, and said so
    let notes = m["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n["type"] == "raw_closes_missing" && u(&n["adjusted"]) >= down),
        "{notes:?}"
    );
}
