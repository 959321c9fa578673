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

/// Days of the small TDX market below: a Tuesday to the next Monday, after the bundled bars.
const TDX_DAYS: [u32; 5] = [20240102, 20240103, 20240104, 20240105, 20240108];

/// A `.day` file (32-byte little-endian records: u32 date, u32 open/high/low/close in fen,
/// f32 amount, u32 volume, u32 reserved) of `bars` (open, high, low, close in fen) on
/// [`TDX_DAYS`].
fn day_file(bars: &[[u32; 4]; 5]) -> Vec<u8> {
    let mut out = Vec::new();
    for (date, [open, high, low, close]) in TDX_DAYS.iter().zip(bars) {
        for v in [*date, *open, *high, *low, *close] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        let volume = 100_000u32;
        out.extend_from_slice(
            &((f64::from(*close) / 100.0 * f64::from(volume)) as f32).to_le_bytes(),
        );
        out.extend_from_slice(&volume.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
    }
    out
}

/// A home holding a TDX install's bars of four stocks, one a board, whose closes are the
/// real (unadjusted) ones, from a close of 10.00 each on 2024-01-02:
/// * 600100 (main board, 10 %): 11.00 limit-up on 01-03, 12.10 limit-up on 01-04 (two
///   boards), then on 01-05 a high of 13.31 — the limit — and a close of 13.30, one fen
///   short: failed (炸板). Its bars were imported first from a CSV at 0.8 times these
///   prices (forward-adjusted), and those stay: the TDX closes come in as its raw closes,
///   and only they tell the failed day from a limit-up (on adjusted prices the close 10.64
///   is within a fen of the limit 9.68 × 1.1 = 10.648, 10.65);
/// * 300100 (ChiNext, 20 %): one price at 12.00 on 01-03 (一字板), 12.60 on 01-04 (+5 %);
/// * 688111 (STAR, 20 %): 8.00 on 01-04, its limit down;
/// * 830799 (BSE, 30 %): 13.00 on 01-05, its limit up, then 13.65 (+5 %).
fn tdx_home() -> Home {
    let h = Home::new();
    let root = tempfile::tempdir().unwrap();
    let stocks: [(&str, &str, [[u32; 4]; 5]); 4] = [
        (
            "sh",
            "600100",
            [
                [990, 1010, 980, 1000],
                [1020, 1100, 1010, 1100],
                [1150, 1210, 1140, 1210],
                [1250, 1331, 1240, 1330],
                [1300, 1320, 1280, 1300],
            ],
        ),
        (
            "sz",
            "300100",
            [
                [1000, 1010, 990, 1000],
                [1200, 1200, 1200, 1200],
                [1250, 1300, 1230, 1260],
                [1260, 1270, 1240, 1250],
                [1250, 1260, 1240, 1250],
            ],
        ),
        (
            "sh",
            "688111",
            [
                [1000, 1010, 990, 1000],
                [1000, 1010, 990, 1000],
                [950, 960, 800, 800],
                [800, 820, 790, 810],
                [810, 815, 805, 810],
            ],
        ),
        (
            "bj",
            "830799",
            [
                [1000, 1010, 990, 1000],
                [1000, 1010, 990, 1000],
                [1000, 1010, 990, 1000],
                [1050, 1300, 1040, 1300],
                [1320, 1400, 1300, 1365],
            ],
        ),
    ];
    for (market, digits, bars) in &stocks {
        let dir = root.path().join("vipdoc").join(market).join("lday");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{market}{digits}.day")), day_file(bars)).unwrap();
    }
    // 600100's forward-adjusted bars at 0.8 times the real prices, from a CSV (no raw close)
    let mut csv = String::from("date,code,open,high,low,close,volume,amount\n");
    for (date, [o, hi, lo, c]) in TDX_DAYS.iter().zip(&stocks[0].2) {
        let adjusted = |fen: &u32| format!("{:.3}", f64::from(fen * 8) / 1000.0);
        csv.push_str(&format!(
            "{}-{:02}-{:02},600100,{},{},{},{},100000,{}\n",
            date / 10_000,
            date / 100 % 100,
            date % 100,
            adjusted(o),
            adjusted(hi),
            adjusted(lo),
            adjusted(c),
            f64::from(c * 8) * 100.0
        ));
    }
    let file = root.path().join("600100.csv");
    std::fs::write(&file, csv).unwrap();
    h.json_exit(&["data", "import", file.to_str().unwrap(), "--json"], 0);
    h.json_exit(
        &[
            "data",
            "import",
            "--tdx",
            root.path().to_str().unwrap(),
            "--json",
        ],
        0,
    );
    h
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

#[test]
fn a_limit_is_judged_on_the_raw_closes_a_tdx_import_stored() {
    let h = tdx_home();
    // 600100's stored bars are the CSV's adjusted ones, its raw closes the TDX ones
    let p = h.json_exit(
        &[
            "analyze",
            "600100",
            "--json",
            "--as-of",
            "2024-01-05",
            "--mode",
            "price",
            "--days",
            "1",
        ],
        0,
    );
    assert_eq!(p["data"][0]["close"], 10.64, "{p:#}");

    let m = h.json_exit(&["market", "map", "--json", "--as-of", "2024-01-05"], 0);
    assert_eq!(m["trade_date"], "2024-01-05");
    let l = &m["limits"];
    assert_eq!(u(&l["stocks"]), 4, "{l:#}");
    // 830799 at 13.00; 600100's 13.30 is a fen under 12.10 × 1.1 = 13.31, its high on it
    assert_eq!(u(&l["limit_up"]), 1, "{l:#}");
    assert_eq!(l["ladder"][0]["code"], "830799");
    assert_eq!(u(&l["failed"]), 1, "{l:#}");
    assert_eq!(u(&l["limit_down"]), 0, "{l:#}");
    assert_eq!(f(&l["seal_rate"]), 0.5);
    // yesterday's one limit-up, 600100: 12.10 → 13.30
    assert!((f(&l["premium_pct"]) - (1330.0 / 1210.0 - 1.0) * 100.0).abs() < 1e-9);
    assert_eq!(u(&l["premium_stocks"]), 1);
    assert_eq!(u(&l["previous_scale_days"]), 0, "{l:#}");
    assert_eq!(u(&l["adjusted_days"]), 0, "{l:#}");
    let notes = m["notes"].as_array().unwrap();
    assert!(
        !notes.iter().any(|n| n["type"] == "raw_closes_missing"),
        "{notes:?}"
    );
}

#[test]
fn a_series_of_days_counts_each_day_as_by_hand_up_to_a_year() {
    let h = tdx_home();
    let s = h.json_exit(&["market", "map", "--json", "--days", "4"], 0);
    assert_eq!(s["trade_date"], "2024-01-08");
    let days = s["limits"].as_array().unwrap();
    let dates: Vec<u64> = days.iter().map(|d| u(&d["date"])).collect();
    assert_eq!(dates, [20240103, 20240104, 20240105, 20240108]);
    // (limit-up, one-price up, limit-down, failed, highest board), counted from the bars
    let want = [
        (2, 1, 0, 0, 1),
        (1, 0, 1, 0, 2),
        (1, 0, 0, 1, 1),
        (0, 0, 0, 0, 0),
    ];
    for (d, w) in days.iter().zip(want) {
        let got = (
            u(&d["limit_up"]),
            u(&d["one_price_up"]),
            u(&d["limit_down"]),
            u(&d["failed"]),
            u(&d["highest_board"]),
        );
        assert_eq!(got, w, "{d:#}");
        assert_eq!(u(&d["stocks"]), 4, "{d:#}");
        assert_eq!(u(&d["adjusted_days"]) + u(&d["previous_scale_days"]), 0);
    }
    // the ladder of 01-04: 600100 on its second board
    assert_eq!(days[1]["ladder"][0]["code"], "600100");
    assert_eq!(u(&days[1]["ladder"][0]["boards"]), 2);
    // 涨停溢价: none before 01-03; 01-04 the mean of 600100's +10 % and 300100's +5 %;
    // 01-05 600100's 12.10 → 13.30; 01-08 830799's 13.00 → 13.65
    assert_eq!(days[0]["premium_pct"], Value::Null);
    let premiums = [7.5, (1330.0 / 1210.0 - 1.0) * 100.0, 5.0];
    for (d, p) in days[1..].iter().zip(premiums) {
        assert!((f(&d["premium_pct"]) - p).abs() < 1e-9, "{d:#}");
    }
    assert_eq!(f(&days[0]["seal_rate"]), 1.0);
    assert_eq!(f(&days[2]["seal_rate"]), 0.5);
    assert_eq!(days[3]["seal_rate"], Value::Null);

    // the text: one line a day
    let text = h.text(&["market", "map", "--days", "4"]);
    assert!(
        text.contains("market map, 4 trading days to 2024-01-08"),
        "{text}"
    );
    assert!(text.contains("2024-01-05"), "{text}");
    assert!(text.contains("+7.50%"), "{text}");

    // a year of trading days (with the bundled ones before), and not a day more
    let s = h.json_exit(&["market", "map", "--json", "--days", "250"], 0);
    let days = s["limits"].as_array().unwrap();
    assert_eq!(days.len(), 250);
    assert_eq!(u(&days[249]["date"]), 20240108);
    assert_eq!(days[246]["limit_up"], 2);
    for bad in ["251", "0"] {
        let out = h.run(&["market", "map", "--days", bad]);
        assert_eq!(out.status.code(), Some(2), "{}", wyckoff_e2e::show(&out));
        assert!(String::from_utf8_lossy(&out.stderr).contains("days must be 1 to 250"));
    }
}
