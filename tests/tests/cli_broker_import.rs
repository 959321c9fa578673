//! `wyckoff portfolio import` with real-shaped broker statements, end to end through the
//! real binary on a fresh data home: a year of an account (buys, sells, an ETF, 红股入账,
//! 股息入账 and its 差异扣税, 指定交易, 新股申购, a 逆回购 and its 购回, 银证转账 both
//! ways, a 配股 paid and listed, 利息归本) imports whole and its positions and cash match
//! the statement's own 股份余额 / 资金余额; the same file again adds nothing; GBK and
//! UTF-8-with-BOM copies read the same; a row the ledger cannot place refuses the file by
//! its line. A 2015 statement of the prepaid-subscription years (指定交易 and 撤指 with a
//! fee, 新股申购 frozen, 中签 paid from it, 申购还款) imports whole too. Each reply carries
//! the account's cash and NAV after it. Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::Value;

const STATEMENT: &str =
    include_str!("../../src-tauri/crates/journal/tests/fixtures/broker/statement_2023.csv");
const PREPAID_2015: &str = include_str!(
    "../../src-tauri/crates/journal/tests/fixtures/broker/subscription_prepaid_2015.csv"
);

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

fn import(home: &Path, bytes: &[u8]) -> Value {
    let path = home.join("statement.csv");
    std::fs::write(&path, bytes).unwrap();
    json(
        home,
        &["portfolio", "import", path.to_str().unwrap(), "--json"],
    )
}

fn count(out: &Value, kind: &str) -> u64 {
    out["by_kind"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == kind)
        .map_or(0, |k| k["count"].as_u64().unwrap())
}

#[test]
fn a_year_of_statement_imports_whole_once_and_reconciles() {
    let home = tempfile::tempdir().unwrap();
    let out = import(home.path(), STATEMENT.as_bytes());
    // 19 rows, the 逆回购's fee an entry of its own
    assert_eq!(out["imported"], 20, "{out}");
    assert_eq!(out["duplicates"], 0);
    for (kind, n) in [
        ("buy", 3),
        ("sell", 4),
        ("bonus_shares", 1),
        ("dividend", 1),
        ("tax", 1),
        ("rights_issue", 1),
        ("repo_lend", 1),
        ("repo_return", 1),
        ("cash_in", 1),
        ("cash_out", 1),
        ("interest", 1),
        ("note", 3),
    ] {
        assert_eq!(count(&out, kind), n, "{kind}: {out}");
    }
    assert_eq!(out["skipped"], Value::Array(vec![]));
    assert_eq!(out["ignored"][0]["line"], 21, "the 合计 line");
    let r = &out["reconciliation"];
    assert_eq!(r["differences"], Value::Array(vec![]), "{r}");
    assert!(r["checked"].as_u64().unwrap() >= 20, "{r}");
    // the statement's last balances: cash 155,802.87 and 5,000 of the ETF
    let closing = r["closing"].as_array().unwrap();
    let cash = closing.iter().find(|d| d["kind"] == "cash").unwrap();
    assert_eq!(
        (cash["statement"].clone(), cash["derived"].clone()),
        (15_580_287.into(), 15_580_287.into())
    );
    let etf = closing.iter().find(|d| d["code"] == "510300").unwrap();
    assert_eq!(
        (etf["statement"].clone(), etf["derived"].clone()),
        (5000.into(), 5000.into())
    );
    // the account after the import: the ledger's cash is the statement's last 资金余额
    assert_eq!(out["cash_fen"], 15_580_287, "{out}");

    // the same file again adds nothing and says so
    let again = import(home.path(), STATEMENT.as_bytes());
    assert_eq!(again["imported"], 0, "{again}");
    assert_eq!(again["duplicates"], 20);
    assert_eq!(again["reconciliation"]["differences"], Value::Array(vec![]));
    let sum = json(home.path(), &["portfolio", "--json"]);
    let positions = sum["positions"].as_array().unwrap();
    assert_eq!(positions.len(), 1, "{sum}");
    assert_eq!(positions[0]["code"], "510300");
    assert_eq!(positions[0]["shares"], 5000);

    // the text reply: the message first, then the reconciliation table
    let path = home.path().join("statement.csv");
    let (code, text, err) = wyckoff(
        home.path(),
        &["portfolio", "import", path.to_str().unwrap()],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(text.starts_with("已导入 0 条记录"), "{text}");
    assert!(text.contains("20 条已在账中"), "{text}");
    assert!(text.contains("ignored line 21: 合计"), "{text}");
    assert!(text.contains("reconciliation:"), "{text}");
    assert!(!text.contains("DIFFERS"), "{text}");
}

#[test]
fn gbk_and_bom_copies_read_the_same() {
    let (gbk, _, bad) = encoding_rs::GBK.encode(STATEMENT);
    assert!(!bad);
    let mut bom = vec![0xEF, 0xBB, 0xBF];
    bom.extend_from_slice(STATEMENT.as_bytes());
    for (bytes, encoding) in [(gbk.to_vec(), "gbk"), (bom, "utf8_bom")] {
        let home = tempfile::tempdir().unwrap();
        let out = import(home.path(), &bytes);
        assert_eq!(out["encoding"], encoding);
        assert_eq!(out["imported"], 20, "{out}");
        assert_eq!(out["reconciliation"]["differences"], Value::Array(vec![]));
        // and the GBK copy after the UTF-8 one is the same rows: nothing added
        let again = import(home.path(), STATEMENT.as_bytes());
        assert_eq!(
            (again["imported"].clone(), again["duplicates"].clone()),
            (0.into(), 20.into())
        );
    }
}

#[test]
fn re_importing_an_overlapping_file_does_not_double_a_fill() {
    let home = tempfile::tempdir().unwrap();
    let first = "成交日期,业务名称,证券代码,证券名称,成交数量,成交价格,成交金额,手续费,印花税,过户费,发生金额,资金余额,股份余额\n\
20200102,银行转证券,,,,,,,,,20000.00,20000.00,\n\
20200103,证券买入,000001,平安银行,600,16.00,9600.00,5.00,0.00,0.10,-9605.10,10394.90,600\n";
    let out = import(home.path(), first.as_bytes());
    assert_eq!(out["imported"], 2);
    // a later export covering the same days and one more
    let second = format!(
        "{first}20200106,证券卖出,000001,平安银行,200,16.50,3300.00,5.00,3.30,0.03,3291.67,13686.57,400\n"
    );
    let out = import(home.path(), second.as_bytes());
    assert_eq!(
        (out["imported"].clone(), out["duplicates"].clone()),
        (1.into(), 2.into()),
        "{out}"
    );
    let sum = json(home.path(), &["portfolio", "--json"]);
    assert_eq!(
        sum["positions"][0]["shares"], 400,
        "600 bought once, 200 sold: {sum}"
    );
    assert_eq!(out["reconciliation"]["differences"], Value::Array(vec![]));
    // the reply's cash and NAV are the account's: 13,686.57 and 400 shares at their close
    assert_eq!(out["cash_fen"], 1_368_657, "{out}");
    let held = json(home.path(), &["portfolio", "value", "--holdings", "--json"]);
    let line = held
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["code"] == "000001")
        .unwrap_or_else(|| panic!("{held}"));
    assert_eq!(line["shares"], 400);
    let holding = line["valuation"]["value_fen"].as_i64().unwrap();
    assert!(holding > 0, "{line}");
    assert_eq!(out["nav_fen"].as_i64(), Some(1_368_657 + holding), "{out}");
    let days = json(home.path(), &["portfolio", "value", "--json"]);
    let last = days.as_array().unwrap().last().unwrap();
    assert_eq!(out["nav_date"], last["date"], "{out}");
    assert_eq!(out["nav_fen"], last["nav_fen"]);
    // the text reply ends with the same line
    let path = home.path().join("statement.csv");
    let (code, text, err) = wyckoff(
        home.path(),
        &["portfolio", "import", path.to_str().unwrap()],
    );
    assert_eq!(code, Some(0), "{err}");
    let want = format!(
        "cash 13686.57 · NAV {}.{:02} (as of {})",
        (1_368_657 + holding) / 100,
        (1_368_657 + holding) % 100,
        last["date"].as_str().unwrap()
    );
    assert!(text.lines().any(|l| l.starts_with(&want)), "{want}\n{text}");
}

#[test]
fn a_prepaid_subscription_statement_imports_whole_and_its_cash_is_the_statements() {
    let home = tempfile::tempdir().unwrap();
    let out = import(home.path(), PREPAID_2015.as_bytes());
    // 10 rows: 指定交易 and 撤销指定 each a note and its fee, the 中签 a release and a buy
    assert_eq!(out["imported"], 13, "{out}");
    for (kind, n) in [
        ("cash_in", 1),
        ("note", 4),
        ("fee", 2),
        ("buy", 2),
        ("sell", 1),
        ("subscription_paid", 1),
        ("subscription_released", 2),
    ] {
        assert_eq!(count(&out, kind), n, "{kind}: {out}");
    }
    assert_eq!(out["skipped"], Value::Array(vec![]));
    let r = &out["reconciliation"];
    assert_eq!(r["differences"], Value::Array(vec![]), "{r}");
    let closing = r["closing"].as_array().unwrap();
    let cash = closing.iter().find(|d| d["kind"] == "cash").unwrap();
    assert_eq!(
        (cash["statement"].clone(), cash["derived"].clone()),
        (3_441_656.into(), 3_441_656.into())
    );
    assert_eq!(out["cash_fen"], 3_441_656, "{out}");
    // nothing stays frozen: 10,000.00 paid, 1,000.00 to the allotment, 9,000.00 back
    let sum = json(home.path(), &["portfolio", "--json"]);
    assert_eq!(sum["subscription_fen"], 0, "{sum}");
    assert_eq!(sum["cash_fen"], 3_441_656);
    let positions = sum["positions"].as_array().unwrap();
    assert_eq!(positions.len(), 1, "{sum}");
    assert_eq!(
        (positions[0]["code"].clone(), positions[0]["shares"].clone()),
        ("600036".into(), 1000.into())
    );
    // while frozen the money counted in the NAV: the day after the 申购 the NAV is the
    // cash and the frozen 10,000.00 (600036 has no closes here)
    let days = json(home.path(), &["portfolio", "value", "--all", "--json"]);
    let day = days
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["date"] == "2015-01-07")
        .unwrap_or_else(|| panic!("{days}"));
    assert_eq!(
        (day["cash_fen"].clone(), day["subscription_fen"].clone()),
        (2_398_900.into(), 1_000_000.into()),
        "{day}"
    );
    assert_eq!(
        day["nav_fen"].as_i64(),
        Some(2_398_900 + 1_000_000 + day["market_value_fen"].as_i64().unwrap())
    );

    // the same file again adds nothing
    let again = import(home.path(), PREPAID_2015.as_bytes());
    assert_eq!(
        (again["imported"].clone(), again["duplicates"].clone()),
        (0.into(), 13.into()),
        "{again}"
    );
    assert_eq!(again["cash_fen"], 3_441_656);
    assert_eq!(again["reconciliation"]["differences"], Value::Array(vec![]));
}

#[test]
fn a_row_the_ledger_cannot_place_refuses_the_file_by_line() {
    let home = tempfile::tempdir().unwrap();
    let text = STATEMENT.replace("20231221,,利息归本,", "20231221,,股份转出,");
    let path = home.path().join("statement.csv");
    std::fs::write(&path, text).unwrap();
    let (code, _, err) = wyckoff(
        home.path(),
        &["portfolio", "import", path.to_str().unwrap()],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("第 19 行"), "{err}");
    assert!(err.contains("股份转出"), "{err}");
    assert_eq!(
        json(home.path(), &["portfolio", "fills", "--json"]),
        Value::Array(vec![])
    );
}

#[test]
fn a_file_over_the_size_cap_is_refused_before_it_is_read() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("huge.csv");
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(33 * 1024 * 1024).unwrap();
    let (code, _, err) = wyckoff(
        home.path(),
        &["portfolio", "import", path.to_str().unwrap()],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("32 MB"), "{err}");
}
