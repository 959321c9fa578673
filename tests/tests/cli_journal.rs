//! `wyckoff portfolio` (the account journal) end to end through the real binary, offline
//! on a fresh data home over the bundled real bars (8 stocks, to 2020-06-16): fills with
//! fees by the backtest's rules and by hand, the derived position and realised P/L checked
//! by hand, a 交割单 with one bad row imports nothing and names the line (exit 2), the
//! daily value from the cached closes and the exit review (done from the bars, pending
//! past them). Needs `cargo build -p wyckoff-cli` first.

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
fn fills_derive_positions_value_and_review() {
    let home = tempfile::tempdir().unwrap();
    // buy 1000 × 16.00 = 16,000.00: commission 4.00 → 5.00, transfer 0.16
    let b = json(
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
            "--json",
        ],
    );
    assert_eq!(b["fill"]["fees_total_fen"], 516);
    assert_eq!(b["fill"]["fees_computed"], true);
    assert_eq!(b["position"]["shares"], 1000);
    assert_eq!(b["position"]["avg_cost"], 16.00516);
    assert_eq!(b["fill"]["name"], "平安银行");
    // sell 600 × 14.00 = 8,400.00 with fees given as 12.34: cost 16,005.16 × 0.6 =
    // 9,603.096; P/L 8,400 − 12.34 − 9,603.096 = −1,215.436 → −1,215.44
    let s = json(
        home.path(),
        &[
            "portfolio",
            "fill",
            "sell",
            "000001",
            "--shares",
            "600",
            "--price",
            "14",
            "--date",
            "2020-05-06",
            "--fees",
            "12.34",
            "--json",
        ],
    );
    assert_eq!(s["fill"]["realised_fen"], -121_544);
    assert_eq!(s["fill"]["fees_computed"], false);
    assert_eq!(s["position"]["shares"], 400);
    // sell the rest on 2020-06-10 (4 bars cached after it): 400 × 15.00 = 6,000.00,
    // commission 5.00, stamp 0.1 % 6.00, transfer 0.06; cost 6,402.064;
    // P/L 6,000 − 11.06 − 6,402.064 = −413.124 → −413.12
    let s = json(
        home.path(),
        &[
            "portfolio",
            "fill",
            "sell",
            "000001",
            "--shares",
            "400",
            "--price",
            "15",
            "--date",
            "2020-06-10",
            "--json",
        ],
    );
    assert_eq!(s["fill"]["realised_fen"], -41_312);
    assert!(s["position"].is_null());
    let sum = json(home.path(), &["portfolio", "--json"]);
    assert_eq!(sum["realised_fen"], -121_544 - 41_312);
    assert_eq!(sum["positions"], Value::Array(vec![]));
    assert_eq!(sum["fills"].as_array().unwrap().len(), 3);

    // the daily value: 1000 shares at each close until the first sale
    let values = json(home.path(), &["portfolio", "value", "--all", "--json"]);
    let days = values.as_array().unwrap();
    assert_eq!(days[0]["date"], "2020-01-02");
    assert_eq!(days[0]["cost_basis_fen"], 1_600_516);
    let mv = days[0]["market_value_fen"].as_i64().unwrap();
    assert!(mv > 0);
    assert_eq!(days.last().unwrap()["date"], "2020-06-16");
    assert_eq!(days.last().unwrap()["realised_fen"], -121_544 - 41_312);

    // the review: newest sale first; 2020-06-10 has only 4 bars after it
    let reviews = json(home.path(), &["portfolio", "review", "--json"]);
    let r = reviews.as_array().unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!(r[0]["date"], "2020-06-10");
    assert!(
        r[0]["after"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["status"] == "pending")
    );
    assert_eq!(r[1]["date"], "2020-05-06");
    for a in r[1]["after"].as_array().unwrap() {
        assert_eq!(a["status"], "done", "{a}");
        let close = a["close"].as_f64().unwrap();
        let pct = a["change_pct"].as_f64().unwrap();
        assert!((pct - (close / 14.0 - 1.0) * 100.0).abs() < 1e-9);
    }
    assert_eq!(r[1]["signal_unknown"], false);
    let (code, text, _) = wyckoff(home.path(), &["portfolio", "review"]);
    assert_eq!(code, Some(0));
    assert!(text.contains("pending"), "{text}");
}

#[test]
fn a_broker_file_with_one_bad_row_imports_nothing() {
    let home = tempfile::tempdir().unwrap();
    let good = "成交日期,证券代码,证券名称,操作,成交数量,成交均价,成交金额,手续费,印花税,过户费,发生金额\n\
20200102,000001,平安银行,证券买入,1000,16.00,16000.00,5.00,0.00,0.16,-16005.16\n\
20200103,,,银行转证券,,,,,,,50000.00\n\
20200506,000001,平安银行,证券卖出,600,14.00,8400.00,5.00,8.40,0.08,8386.52\n";
    let bad = format!("{good}20200507,000001,平安银行,证券卖出,100,abc,,5.00,0.00,0.01,\n");
    let path = home.path().join("jiaogedan.csv");
    let (gbk, _, _) = encoding_rs::GBK.encode(&bad);
    std::fs::write(&path, &gbk).unwrap();
    let (code, _, err) = wyckoff(
        home.path(),
        &["portfolio", "import", path.to_str().unwrap()],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("第 5 行"), "{err}");
    assert!(err.contains("成交价格"), "{err}");
    assert_eq!(
        json(home.path(), &["portfolio", "fills", "--json"]),
        Value::Array(vec![])
    );

    std::fs::write(&path, good).unwrap();
    let out = json(
        home.path(),
        &["portfolio", "import", path.to_str().unwrap(), "--json"],
    );
    // two fills and the 银行转证券 between them, booked as cash in
    assert_eq!(out["imported"], 3);
    assert_eq!(out["by_kind"][0]["kind"], "buy");
    assert_eq!(out["by_kind"][1]["kind"], "cash_in");
    assert_eq!(out["skipped"], Value::Array(vec![]));
    // 600 of 1000 sold: cost 16,005.16 × 0.6 = 9,603.096; P/L 8,386.52 − 9,603.096
    // = −1,216.576 → −1,216.58
    assert_eq!(out["realised_fen"], -121_658);
    let sum = json(home.path(), &["portfolio", "--json"]);
    assert_eq!(sum["positions"][0]["shares"], 400);
}
