//! ETFs, bonds and repos in the account ledger through the real `wyckoff` binary: a
//! statement holding an ETF, a convertible bond and a reverse repo imports; offline the
//! ETF and the bond are named unvalued (never invented) and the repo counts at its
//! principal; `wyckoff portfolio sync` against a local server speaking Eastmoney's kline
//! format (`WYCKOFF_EASTMONEY_URL`) asks for each fund's and bond's secid unadjusted and
//! never for the repo; then every line is valued at its real close with that close's day,
//! and NAV = cash + repo + Σ units × close on every day. Needs `cargo build -p wyckoff-cli`
//! first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/ledger_klines.rs"]
mod ledger_klines;

use ledger_klines::{Close, line, run};
use serde_json::json;
use wyckoff_e2e::wyckoff_cli;

/// The statement: cash in, 10,000 units of 510300 at 3.400, 100 of 127050 at 115.000,
/// 20,000.00 lent on 204001 (not yet back).
const STATEMENT: &str = "成交日期,业务名称,证券代码,证券名称,成交数量,成交价格,成交金额,手续费,印花税,过户费,发生金额,资金余额,股份余额
20240805,银行转证券,,,,,,,,,100000.00,100000.00,
20240805,证券买入,510300,沪深300ETF,10000,3.400,34000.00,5.00,0.00,0.00,-34005.00,65995.00,10000
20240806,证券买入,127050,麒麟转债,100,115.000,11500.00,1.15,0.00,0.00,-11501.15,54493.85,100
20240808,融券回购,204001,GC001,200,1.800,20000.00,0.20,0.00,0.00,-20000.20,34493.65,
";

/// Closes served, as (secid, date, close): the ETF on four days (none on the 8th), the
/// bond on three.
const CLOSES: &[Close] = &[
    ("1.510300", "2024-08-05", 3.401),
    ("1.510300", "2024-08-06", 3.412),
    ("1.510300", "2024-08-07", 3.398),
    ("1.510300", "2024-08-09", 3.455),
    ("0.127050", "2024-08-06", 116.25),
    ("0.127050", "2024-08-07", 117.1),
    ("0.127050", "2024-08-09", 117.4),
];

#[test]
fn funds_and_bonds_are_valued_at_their_real_closes_once_synced() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("statement.csv");
    std::fs::write(&path, STATEMENT).unwrap();
    let out = run(
        home.path(),
        None,
        &["portfolio", "import", path.to_str().unwrap(), "--json"],
    );
    assert_eq!(out["reconciliation"]["differences"], json!([]), "{out}");

    // offline, nothing synced: named, not valued; the repo at its principal
    let before = run(
        home.path(),
        None,
        &["portfolio", "value", "--holdings", "--json"],
    );
    for code in ["510300", "127050"] {
        let l = line(&before, code);
        assert_eq!(l["valuation"]["type"], "unvalued", "{l}");
        assert!(
            l["valuation"]["reason"]
                .as_str()
                .unwrap()
                .contains("portfolio sync"),
            "{l}"
        );
    }
    let repo = line(&before, "204001");
    assert_eq!(repo["instrument"], "repo");
    assert_eq!(
        repo["valuation"],
        json!({"type": "principal", "value_fen": 2_000_000})
    );

    let (base, seen) = ledger_klines::serve(CLOSES);
    let sync = run(home.path(), Some(&base), &["portfolio", "sync", "--json"]);
    let synced: Vec<(String, String)> = sync
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["code"].as_str().unwrap().to_owned(),
                o["status"]["type"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        synced.contains(&("510300".into(), "updated".into())),
        "{sync}"
    );
    assert!(
        synced.contains(&("127050".into(), "updated".into())),
        "{sync}"
    );
    assert!(
        synced.contains(&("204001".into(), "not_supported".into())),
        "{sync}"
    );
    let asked = seen.lock().unwrap().clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    for secid in ["secid=1.510300", "secid=0.127050"] {
        let l = asked.iter().find(|l| l.contains(secid)).unwrap();
        assert!(l.contains("fqt=0"), "unadjusted: {l}");
        assert!(l.contains("klt=101"), "daily: {l}");
    }

    let after = run(
        home.path(),
        None,
        &["portfolio", "value", "--holdings", "--json"],
    );
    let etf = line(&after, "510300");
    assert_eq!(etf["instrument"], "fund");
    assert_eq!(etf["valuation"]["type"], "close");
    assert_eq!(etf["valuation"]["close_date"], "2024-08-09");
    assert_eq!(etf["valuation"]["days_behind"], 0);
    assert_eq!(etf["valuation"]["exact"], true);
    // 10,000 × 3.455 = 34,550.00
    assert_eq!(etf["valuation"]["value_fen"], 3_455_000);
    let bond = line(&after, "127050");
    assert_eq!(bond["instrument"], "bond");
    // 100 × 117.40 = 11,740.00
    assert_eq!(bond["valuation"]["value_fen"], 1_174_000);
    assert_eq!(line(&after, "204001")["valuation"]["type"], "principal");

    // every day: NAV = cash + repo + Σ units × that day's close (the last before it)
    let days = run(
        home.path(),
        None,
        &["portfolio", "value", "--all", "--json"],
    );
    let close_on = |secid: &str, day: &str| {
        CLOSES
            .iter()
            .filter(|(s, d, _)| *s == secid && *d <= day)
            .map(|(_, _, c)| *c)
            .next_back()
    };
    for d in days.as_array().unwrap() {
        let day = d["date"].as_str().unwrap();
        let etf =
            close_on("1.510300", day).map_or(0, |c| (c * 1000.0).round() as i64 * 10_000 / 10);
        let bond = if day >= "2024-08-06" {
            close_on("0.127050", day).map_or(0, |c| (c * 1000.0).round() as i64 * 100 / 10)
        } else {
            0
        };
        assert_eq!(d["market_value_fen"].as_i64().unwrap(), etf + bond, "{d}");
        assert_eq!(
            d["nav_fen"].as_i64().unwrap(),
            d["cash_fen"].as_i64().unwrap() + d["repo_fen"].as_i64().unwrap() + etf + bond,
            "{d}"
        );
        assert!(d["approximate"].as_array().unwrap().is_empty(), "{d}");
    }
    assert_eq!(
        days.as_array().unwrap().last().unwrap()["date"],
        "2024-08-09"
    );

    // the text view names each line's close and its day
    let out = wyckoff_cli(home.path())
        .args(["portfolio", "value"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("close of 2024-08-09"), "{text}");
    assert!(
        text.contains("reverse repo at its principal 20000.00"),
        "{text}"
    );

    // a second sync asks only from the last stored day, and says up to date
    let again = run(home.path(), Some(&base), &["portfolio", "sync", "--json"]);
    assert_eq!(seen.lock().unwrap().len(), 4, "{again}");
    assert!(
        seen.lock().unwrap()[2].contains("beg=20240809"),
        "{:?}",
        seen.lock().unwrap()
    );
}
