//! A bond whose code does not say its exchange (10xxxx, 13xxxx other than 131 repos),
//! through the real `wyckoff` binary: a statement with a 股东代码 column — an account
//! starting with a letter is Shanghai's — imports, and `wyckoff portfolio sync` against a
//! local server speaking Eastmoney's kline format asks for that bond on Shanghai (`secid`
//! 1.xxxxxx) and never for the one bought with no account named; `portfolio value` then
//! values the first at the served close and names the second unvalued, saying why (in the
//! JSON, the text and the sync's outcome). A 交易市场 column works the same (深A → 0.).
//! A full `wyckoff data sync` (no codes named) brings the ledger's bonds up to date as
//! `portfolio sync` does; a sync of named codes leaves them. Needs `cargo build -p
//! wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/ledger_klines.rs"]
mod ledger_klines;

use ledger_klines::{Close, line, run};
use serde_json::{Value, json};
use wyckoff_e2e::{show, wyckoff_cli};

/// Cash in; 100 of 101234 under a Shanghai account; 50 of 108888 with no account named.
const STATEMENT: &str = "成交日期,业务名称,证券代码,证券名称,成交数量,成交价格,成交金额,手续费,发生金额,资金余额,股东代码
20240805,银行转证券,,,,,,,100000.00,100000.00,
20240805,证券买入,101234,国债1234,100,99.500,9950.00,0.10,-9950.10,90049.90,A123456789
20240806,证券买入,108888,债券8888,50,100.000,5000.00,0.05,-5000.05,85049.85,
";

/// The same bond on Shenzhen, named by a 交易市场 column.
const STATEMENT_SZ: &str =
    "成交日期,交易市场,业务名称,证券代码,证券名称,成交数量,成交价格,成交金额,手续费,发生金额
20240805,深A,银行转证券,,,,,,,100000.00
20240805,深A,证券买入,101234,国债1234,100,99.500,9950.00,0.10,-9950.10
";

/// Closes served, as (secid, date, close).
const CLOSES: &[Close] = &[
    ("1.101234", "2024-08-05", 99.61),
    ("1.101234", "2024-08-09", 100.27),
    ("0.101234", "2024-08-09", 98.76),
    ("1.108888", "2024-08-09", 101.0),
    ("0.108888", "2024-08-09", 101.0),
];

#[test]
fn a_bond_is_valued_on_the_exchange_its_statement_names_and_left_unvalued_when_none_does() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("statement.csv");
    std::fs::write(&path, STATEMENT).unwrap();
    run(
        home.path(),
        None,
        &["portfolio", "import", path.to_str().unwrap(), "--json"],
    );

    let (base, seen) = ledger_klines::serve(CLOSES);
    let sync = run(home.path(), Some(&base), &["portfolio", "sync", "--json"]);
    let outcome = |code: &str| {
        sync.as_array()
            .unwrap()
            .iter()
            .find(|o| o["code"] == code)
            .unwrap_or_else(|| panic!("no {code} in {sync}"))
            .clone()
    };
    assert_eq!(outcome("101234")["status"]["type"], "updated", "{sync}");
    assert_eq!(outcome("101234")["last_close"], "2024-08-09");
    let none = outcome("108888");
    assert_eq!(none["status"]["type"], "not_supported", "{sync}");
    assert!(
        none["status"]["reason"]
            .as_str()
            .unwrap()
            .contains("交易市场或股东代码"),
        "{none}"
    );
    let asked = seen.lock().unwrap().clone();
    assert_eq!(
        asked.len(),
        1,
        "only the bond of a named exchange: {asked:?}"
    );
    assert!(asked[0].contains("secid=1.101234"), "{asked:?}");

    let after = run(
        home.path(),
        None,
        &["portfolio", "value", "--holdings", "--json"],
    );
    let bond = line(&after, "101234");
    assert_eq!(bond["valuation"]["type"], "close", "{bond}");
    assert_eq!(bond["valuation"]["close_date"], "2024-08-09");
    // 100 × 100.27 = 10,027.00
    assert_eq!(bond["valuation"]["value_fen"], 1_002_700);
    let unknown = line(&after, "108888");
    assert_eq!(unknown["valuation"]["type"], "unvalued", "{unknown}");
    assert!(
        unknown["valuation"]["reason"]
            .as_str()
            .unwrap()
            .contains("不能确定沪深"),
        "{unknown}"
    );
    // NAV = cash + 100 × 100.27 (the unknown bond counts nothing, never a guess)
    let days = run(
        home.path(),
        None,
        &["portfolio", "value", "--all", "--json"],
    );
    let last = days.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["date"], "2024-08-09");
    assert_eq!(
        last["nav_fen"].as_i64().unwrap(),
        last["cash_fen"].as_i64().unwrap() + 1_002_700,
        "{last}"
    );
    assert_eq!(last["cash_fen"], 8_504_985);

    let out = wyckoff_cli(home.path())
        .args(["portfolio", "value"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("108888") && text.contains("不能确定沪深"),
        "{text}"
    );
}

#[test]
fn a_market_column_names_shenzhen() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("statement.csv");
    std::fs::write(&path, STATEMENT_SZ).unwrap();
    run(
        home.path(),
        None,
        &["portfolio", "import", path.to_str().unwrap(), "--json"],
    );
    let (base, seen) = ledger_klines::serve(CLOSES);
    run(home.path(), Some(&base), &["portfolio", "sync", "--json"]);
    let asked = seen.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].contains("secid=0.101234"), "{asked:?}");
    let after = run(
        home.path(),
        None,
        &["portfolio", "value", "--holdings", "--json"],
    );
    // 100 × 98.76 = 9,876.00
    assert_eq!(
        line(&after, "101234")["valuation"],
        json!({"type": "close", "close": 98.76, "close_date": "2024-08-09", "days_behind": 0, "exact": true, "value_fen": 987_600})
    );
}

#[test]
fn a_full_data_sync_refreshes_what_the_ledger_holds() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("statement.csv");
    std::fs::write(&path, STATEMENT).unwrap();
    run(
        home.path(),
        None,
        &["portfolio", "import", path.to_str().unwrap(), "--json"],
    );
    let (base, seen) = ledger_klines::serve(CLOSES);
    let data_sync = |args: &[&str]| {
        let out = wyckoff_cli(home.path())
            .env_remove("WYCKOFF_OFFLINE")
            .env("WYCKOFF_DATA_SOURCES", "eastmoney")
            .env("WYCKOFF_EASTMONEY_URL", &base)
            .args(args)
            .output()
            .unwrap();
        // the bundled stocks get no bars from this server: the exit code says so; the
        // report is whole all the same
        serde_json::from_slice::<Value>(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", show(&out)))
    };

    // codes named: only those, the ledger is left alone
    let named = data_sync(&["data", "sync", "000001", "--json"]);
    assert!(named.get("ledger").is_none(), "{named}");
    assert!(
        !seen.lock().unwrap().iter().any(|l| l.contains("101234")),
        "{:?}",
        seen.lock().unwrap()
    );

    // the cache: the ledger's bond too, from the exchange its statement named
    let full = data_sync(&["data", "sync", "--json"]);
    let ledger = full["ledger"]
        .as_array()
        .unwrap_or_else(|| panic!("{full}"));
    let bond = ledger.iter().find(|o| o["code"] == "101234").unwrap();
    assert_eq!(bond["status"]["type"], "updated", "{full}");
    assert_eq!(bond["last_close"], "2024-08-09");
    let none = ledger.iter().find(|o| o["code"] == "108888").unwrap();
    assert_eq!(none["status"]["type"], "not_supported", "{full}");
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("secid=1.101234")),
        "{:?}",
        seen.lock().unwrap()
    );
    let after = run(
        home.path(),
        None,
        &["portfolio", "value", "--holdings", "--json"],
    );
    assert_eq!(line(&after, "101234")["valuation"]["value_fen"], 1_002_700);
}
