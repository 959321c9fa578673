//! `wyckoff portfolio` as an account ledger, end to end through the real binary offline on
//! a fresh data home over the bundled bars (forward-adjusted, to 2020-06-16): a bank
//! transfer recorded with `portfolio cash in`, a buy paid from it, the cash line under the
//! positions, and `portfolio value` with cash, NAV = cash + holdings, the day's P/L and the
//! time-weighted return — recomputed here from the days — saying its closes are
//! approximate (the bundled bars carry no unadjusted price). Needs
//! `cargo build -p wyckoff-cli` first.

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
fn cash_transfers_make_the_value_a_nav() {
    let home = tempfile::tempdir().unwrap();
    let t = json(
        home.path(),
        &[
            "portfolio",
            "cash",
            "in",
            "50000",
            "--date",
            "2020-01-02",
            "--json",
        ],
    );
    assert_eq!(t["entry"]["kind"]["type"], "cash_in");
    assert_eq!(t["entry"]["kind"]["amount_fen"], 5_000_000);
    assert_eq!(t["cash_fen"], 5_000_000);
    // buy 1000 × 16.00 = 16,000.00 + 5.00 + 0.16: cash 50,000 − 16,005.16 = 33,994.84
    let (code, _, err) = wyckoff(
        home.path(),
        &[
            "portfolio",
            "fill",
            "buy",
            "000001",
            "--shares",
            "1000",
            "--price",
            "16.00",
            "--date",
            "2020-01-02",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let sum = json(home.path(), &["portfolio", "--json"]);
    assert_eq!(sum["cash_fen"], 3_399_484);
    assert_eq!(sum["totals"]["transfers_in_fen"], 5_000_000);
    assert_eq!(sum["transfers_on_record"], true);
    let (code, text, _) = wyckoff(home.path(), &["portfolio"]);
    assert_eq!(code, Some(0));
    assert!(text.contains("cash 33994.84"), "{text}");

    // 5,000.00 back to the bank on 2020-03-02
    let (code, text, err) = wyckoff(
        home.path(),
        &["portfolio", "cash", "out", "5000", "--date", "2020-03-02"],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(text.contains("28994.84"), "{text}");

    let values = json(home.path(), &["portfolio", "value", "--all", "--json"]);
    let days = values.as_array().unwrap();
    assert_eq!(days[0]["date"], "2020-01-02");
    assert_eq!(days[0]["cash_fen"], 3_399_484);
    assert_eq!(days[0]["flow_fen"], 5_000_000);
    let (mut prev, mut index) = (0_i64, 1.0_f64);
    for d in days {
        let (cash, mv, nav, flow) = (
            d["cash_fen"].as_i64().unwrap(),
            d["market_value_fen"].as_i64().unwrap(),
            d["nav_fen"].as_i64().unwrap(),
            d["flow_fen"].as_i64().unwrap(),
        );
        assert_eq!(nav, cash + mv, "{d}");
        assert_eq!(d["pnl_fen"].as_i64().unwrap(), nav - prev - flow, "{d}");
        index *= nav as f64 / (prev + flow) as f64;
        let twr = d["twr_pct"].as_f64().unwrap();
        assert!((twr - (index - 1.0) * 100.0).abs() < 1e-9, "{d}");
        // the bundled closes are adjusted ones standing in: every held day says so
        assert_eq!(d["approximate"], serde_json::json!(["000001"]), "{d}");
        prev = nav;
    }
    let out_day = days.iter().find(|d| d["date"] == "2020-03-02").unwrap();
    assert_eq!(out_day["flow_fen"], -500_000);

    let (code, text, _) = wyckoff(home.path(), &["portfolio", "value"]);
    assert_eq!(code, Some(0));
    assert!(text.contains("NAV"), "{text}");
    assert!(text.contains("time-weighted return"), "{text}");
    assert!(text.contains("近似"), "{text}");

    // a transfer that is no amount is refused, nothing written
    let (code, _, err) = wyckoff(home.path(), &["portfolio", "cash", "in", "-5"]);
    assert_eq!(code, Some(2), "{err}");
    let (code, _, err) = wyckoff(home.path(), &["portfolio", "cash", "in", "12.345"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("12.345"), "{err}");
    let sum = json(home.path(), &["portfolio", "--json"]);
    assert_eq!(sum["cash_fen"], 2_899_484);
}
