//! A scheduled full-market sync brings the ledger's open positions along, as the
//! overview's button does: through the real `wyckoff` binary, a schedule of the sync job
//! runs in the daemon's pass (`daemon --once`) against a local server speaking Eastmoney's
//! kline format; the ETF held (never in the stock list) is asked for unadjusted, the run's
//! line names it updated, and the ledger then values it at the close served. The stock
//! list is trimmed to one name so the whole market is a dozen symbols. Needs
//! `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/ledger_klines.rs"]
mod ledger_klines;

use ledger_klines::{Close, line, run};
use wyckoff_e2e::{run_sql, show, wyckoff_cli};

/// Cash in, then 10,000 units of 510300 bought at 3.400.
const STATEMENT: &str = "成交日期,业务名称,证券代码,证券名称,成交数量,成交价格,成交金额,手续费,印花税,过户费,发生金额,资金余额,股份余额
20261201,银行转证券,,,,,,,,,100000.00,100000.00,
20261201,证券买入,510300,沪深300ETF,10000,3.400,34000.00,5.00,0.00,0.00,-34005.00,65995.00,10000
";

/// The three benchmark indices and the ETF on the last two days before the run; every
/// other code gets Eastmoney's empty answer.
const CLOSES: &[Close] = &[
    ("1.000001", "2026-12-03", 3400.0),
    ("1.000001", "2026-12-04", 3410.0),
    ("1.000300", "2026-12-03", 4000.0),
    ("1.000300", "2026-12-04", 4010.0),
    ("0.399006", "2026-12-03", 2100.0),
    ("0.399006", "2026-12-04", 2110.0),
    ("1.510300", "2026-12-03", 3.41),
    ("1.510300", "2026-12-04", 3.455),
];

#[test]
fn a_scheduled_full_sync_fetches_the_etf_held_and_says_so() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let path = h.join("statement.csv");
    std::fs::write(&path, STATEMENT).unwrap();
    run(
        h,
        None,
        &["portfolio", "import", path.to_str().unwrap(), "--json"],
    );
    // a small market: one listed stock (the bundled bars' stocks stay in its reach)
    run_sql(h, "DELETE FROM market_stocks WHERE code <> '600519'");
    let added = wyckoff_cli(h)
        .args([
            "schedule",
            "add",
            "close-sync",
            "--at",
            "15:30",
            "--job",
            "sync",
            "--now",
            "2026-12-03 16:00",
        ])
        .output()
        .unwrap();
    assert!(added.status.success(), "{}", show(&added));

    let (base, seen) = ledger_klines::serve(CLOSES);
    // Friday after the close: the day's run is due
    let report = run(
        h,
        Some(&base),
        &["daemon", "--once", "--json", "--now", "2026-12-04 16:00"],
    );
    assert_eq!(report["schedule"], "close-sync", "{report}");
    assert_eq!(report["status"], "done", "{report}");
    let summary = report["summary"].as_str().unwrap();
    assert!(
        summary.contains("held positions: 510300 updated (2 new bars)"),
        "{summary}"
    );

    // the ETF asked for once, unadjusted daily bars
    let asked = seen.lock().unwrap().clone();
    let etf: Vec<&String> = asked
        .iter()
        .filter(|l| l.contains("secid=1.510300"))
        .collect();
    assert_eq!(etf.len(), 1, "{asked:?}");
    assert!(
        etf[0].contains("fqt=0") && etf[0].contains("klt=101"),
        "{etf:?}"
    );

    // and the ledger values it at the close served
    let after = run(h, None, &["portfolio", "value", "--holdings", "--json"]);
    let held = line(&after, "510300");
    assert_eq!(held["valuation"]["type"], "close", "{held}");
    assert_eq!(held["valuation"]["close_date"], "2026-12-04", "{held}");
    // 10,000 × 3.455 = 34,550.00
    assert_eq!(held["valuation"]["value_fen"], 3_455_000, "{held}");
}
