//! A command that writes leaves the database closed clean: `wyckoff data import` of a
//! market's worth of bars ends with its write-ahead log checkpointed into `wyckoff.db` and
//! truncated (no `-wal` file, or an empty one), so the disk holds the data once and the
//! next reader does not read through a log. The bars stay compact on disk (≤ 20 bytes).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// Stocks × bars written: enough that the import's log grows far past SQLite's automatic
/// checkpoint (1,000 pages), as a whole-market import's does.
const STOCKS: usize = 800;
const BARS: usize = 500;

/// One CSV per stock: weekdays from 2018-01-02, a deterministic random walk.
fn write_market(dir: &Path) {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % 10_000) as f64 / 10_000.0
    };
    let days: Vec<chrono::NaiveDate> = chrono::NaiveDate::from_ymd_opt(2018, 1, 2)
        .unwrap()
        .iter_days()
        .filter(|d| {
            use chrono::Datelike;
            d.weekday().number_from_monday() <= 5
        })
        .take(BARS)
        .collect();
    let mut text = String::new();
    for i in 0..STOCKS {
        let code = format!("{:06}", 600_000 + i);
        text.clear();
        text.push_str("date,code,open,high,low,close,volume,amount\n");
        let mut close: f64 = 10.0 + (i % 50) as f64;
        for d in &days {
            let open = close;
            close = (close * (0.97 + 0.06 * next())).max(1.0);
            let high = open.max(close) * 1.01;
            let low = open.min(close) * 0.99;
            let volume = 100_000.0 + (next() * 1e6).round();
            let _ = writeln!(
                text,
                "{d},{code},{open:.2},{high:.2},{low:.2},{close:.2},{volume},{:.0}",
                volume * close
            );
        }
        std::fs::write(dir.join(format!("{code}.csv")), &text).unwrap();
    }
}

fn wyckoff(home: &Path, args: &[&str]) -> std::process::Output {
    Command::new(wyckoff_e2e::binary("wyckoff"))
        .args(args)
        .env("WYCKOFF_HOME", home)
        .env("WYCKOFF_OFFLINE", "1")
        .output()
        .unwrap()
}

/// The log beside the database: absent, or empty after a truncating checkpoint.
fn wal_bytes(home: &Path) -> u64 {
    std::fs::metadata(home.join("wyckoff.db-wal")).map_or(0, |m| m.len())
}

#[test]
fn an_import_leaves_no_write_ahead_log_and_compact_bars() {
    let home = tempfile::tempdir().unwrap();
    let csv = tempfile::tempdir().unwrap();
    write_market(csv.path());
    // a fresh home: the bundled stocks, list and calendar
    assert_eq!(
        wyckoff(home.path(), &["data", "status"]).status.code(),
        Some(0)
    );
    let db_size = || {
        std::fs::metadata(home.path().join("wyckoff.db"))
            .unwrap()
            .len()
    };
    let fresh = db_size();
    for round in ["first", "again (nothing new)"] {
        let out = wyckoff(
            home.path(),
            &["data", "import", csv.path().to_str().unwrap()],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{round}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            wal_bytes(home.path()),
            0,
            "{round}: the log was left behind"
        );
    }
    // a read-only command after it leaves none either
    let out = wyckoff(home.path(), &["data", "status"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(wal_bytes(home.path()), 0);
    // what the import added: at most 20 bytes a bar on disk
    let added = db_size() - fresh;
    let bars = (STOCKS * BARS) as u64;
    assert!(
        added / bars <= 20,
        "{added} bytes for {bars} imported bars: {} a bar",
        added / bars
    );
}
