//! `wyckoff portfolio import` with 招商-style (GBK, tab-separated, 通达信-based client
//! layout) and 广发-style (UTF-8, comma, 日期 / 交易类别 / 清算金额) statements, end to end
//! through the real binary on a fresh data home: each imports whole, its positions and
//! cash match the statement's own balance columns, the fees, transfers, dividends, taxes
//! and interest total to the fen the statement's columns add up to (summed here from the
//! file itself), and the same file again adds nothing. Needs `cargo build -p wyckoff-cli`
//! first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::Value;

const CMS: &[u8] =
    include_bytes!("../../src-tauri/crates/journal/tests/fixtures/broker/cmschina_style.txt");
const GF: &str = include_str!("../../src-tauri/crates/journal/tests/fixtures/broker/gf_style.csv");

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

fn import(home: &Path, name: &str, bytes: &[u8]) -> Value {
    let path = home.join(name);
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

/// The statement as a table: its header and rows, split by `sep`.
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn parse(text: &str, sep: char) -> Table {
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let header = lines
            .next()
            .unwrap()
            .split(sep)
            .map(|c| c.trim().to_owned())
            .collect();
        let rows = lines
            .map(|l| l.split(sep).map(|c| c.trim().to_owned()).collect())
            .collect();
        Table { header, rows }
    }

    fn col(&self, name: &str) -> usize {
        self.header.iter().position(|h| h == name).unwrap()
    }

    /// A money cell in fen (an empty cell is 0), parsed by hand: yuan and two decimals.
    fn fen(&self, row: &[String], name: &str) -> i64 {
        let t = &row[self.col(name)];
        if t.is_empty() {
            return 0;
        }
        let neg = t.starts_with('-');
        let (y, f) = t.trim_start_matches('-').split_once('.').unwrap();
        let v = y.parse::<i64>().unwrap() * 100 + f.parse::<i64>().unwrap();
        if neg { -v } else { v }
    }

    /// Σ of `cols` over the rows whose business (column `biz`) contains any of `words`.
    fn sum(&self, biz: &str, words: &[&str], cols: &[&str]) -> i64 {
        self.rows
            .iter()
            .filter(|r| words.iter().any(|w| r[self.col(biz)].contains(w)))
            .map(|r| cols.iter().map(|c| self.fen(r, c).abs()).sum::<i64>())
            .sum()
    }

    fn last_fen(&self, name: &str) -> i64 {
        self.fen(self.rows.last().unwrap(), name)
    }
}

#[test]
fn a_cmschina_style_gbk_statement_imports_once_and_totals_to_the_fen() {
    let (text, _, bad) = encoding_rs::GBK.decode(CMS);
    assert!(!bad, "the fixture is GBK");
    let t = Table::parse(&text, '\t');
    let home = tempfile::tempdir().unwrap();
    let out = import(home.path(), "交割单.txt", CMS);
    assert_eq!(out["encoding"], "gbk", "{out}");
    // 10 rows; the 融券回购's commission is an entry of its own
    assert_eq!(out["imported"], 11, "{out}");
    for (kind, n) in [
        ("buy", 2),
        ("sell", 2),
        ("repo_lend", 1),
        ("repo_return", 1),
        ("fee", 1),
        ("dividend", 1),
        ("tax", 1),
        ("cash_in", 1),
        ("cash_out", 1),
    ] {
        assert_eq!(count(&out, kind), n, "{kind}: {out}");
    }
    assert_eq!(out["skipped"], Value::Array(vec![]), "{out}");
    let r = &out["reconciliation"];
    assert_eq!(r["differences"], Value::Array(vec![]), "{r}");

    let sum = json(home.path(), &["portfolio", "--json"]);
    assert_eq!(sum["cash_fen"], t.last_fen("资金余额"), "{sum}");
    let totals = &sum["totals"];
    let biz = "业务名称";
    let trade_fees = t.sum(
        biz,
        &["证券买入", "证券卖出"],
        &["佣金", "印花税", "过户费", "交易所清算费"],
    );
    assert_eq!(totals["fees_fen"], trade_fees, "{totals}");
    assert_eq!(
        totals["transfers_in_fen"],
        t.sum(biz, &["银证转入"], &["发生金额"])
    );
    assert_eq!(
        totals["transfers_out_fen"],
        t.sum(biz, &["银证转出"], &["发生金额"])
    );
    assert_eq!(
        totals["dividends_fen"],
        t.sum(biz, &["红利入账"], &["发生金额"])
    );
    // the repo's interest: what came back over what went out, before its commission
    let interest =
        t.sum(biz, &["融券购回"], &["发生金额"]) - t.sum(biz, &["融券购回"], &["成交金额"]);
    assert_eq!(totals["interest_fen"], interest, "{totals}");
    assert_eq!(
        totals["taxes_fen"],
        t.sum(biz, &["扣税"], &["发生金额"]) + t.sum(biz, &["融券回购"], &["佣金"]),
        "{totals}"
    );
    let positions = sum["positions"].as_array().unwrap();
    assert_eq!(positions.len(), 1, "{sum}");
    assert_eq!(positions[0]["code"], "600036");
    assert_eq!(positions[0]["shares"], 500);

    // the same file again adds nothing and says so; cash and positions as they were
    let again = import(home.path(), "交割单.txt", CMS);
    assert_eq!(
        (again["imported"].clone(), again["duplicates"].clone()),
        (0.into(), 11.into()),
        "{again}"
    );
    assert_eq!(json(home.path(), &["portfolio", "--json"]), sum);
}

#[test]
fn a_gf_style_utf8_statement_imports_once_and_totals_to_the_fen() {
    let t = Table::parse(GF, ',');
    let home = tempfile::tempdir().unwrap();
    let out = import(home.path(), "gf.csv", GF.as_bytes());
    assert_eq!(out["encoding"], "utf8", "{out}");
    assert_eq!(out["imported"], 8, "{out}");
    for (kind, n) in [
        ("buy", 2),
        ("sell", 2),
        ("bonus_shares", 1),
        ("interest", 1),
        ("cash_in", 1),
        ("cash_out", 1),
    ] {
        assert_eq!(count(&out, kind), n, "{kind}: {out}");
    }
    let r = &out["reconciliation"];
    assert_eq!(r["differences"], Value::Array(vec![]), "{r}");

    let sum = json(home.path(), &["portfolio", "--json"]);
    assert_eq!(sum["cash_fen"], t.last_fen("资金余额"), "{sum}");
    assert_eq!(sum["positions"], Value::Array(vec![]), "all sold: {sum}");
    let totals = &sum["totals"];
    let biz = "交易类别";
    assert_eq!(
        totals["fees_fen"],
        t.sum(
            biz,
            &["买入", "卖出"],
            &["佣金", "印花税", "过户费", "交易规费"]
        ),
        "{totals}"
    );
    assert_eq!(
        totals["transfers_in_fen"],
        t.sum(biz, &["银行转存"], &["清算金额"])
    );
    assert_eq!(
        totals["transfers_out_fen"],
        t.sum(biz, &["银行转取"], &["清算金额"])
    );
    assert_eq!(
        totals["interest_fen"],
        t.sum(biz, &["利息归本"], &["清算金额"])
    );
    // realised: every sale's proceeds less what its shares cost (the 转增 shares cost
    // nothing), all sold, so Σ 清算金额 of the trades
    let realised: i64 = t
        .rows
        .iter()
        .filter(|r| ["买入", "卖出"].contains(&r[t.col(biz)].as_str()))
        .map(|r| t.fen(r, "清算金额"))
        .sum();
    assert_eq!(sum["realised_fen"], realised, "{sum}");

    let again = import(home.path(), "gf.csv", GF.as_bytes());
    assert_eq!(
        (again["imported"].clone(), again["duplicates"].clone()),
        (0.into(), 8.into()),
        "{again}"
    );
    assert_eq!(json(home.path(), &["portfolio", "--json"]), sum);
}
