//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::collections::BTreeMap;

use wyckoff_engine::dates::parse_date;
use wyckoff_engine::{Bar, Board, StockSeries, Universe};

/// Fails when a Debug dump contains a NaN or an infinity. serde_json would silently turn those
/// into `null`, so the check runs on the Debug form, which prints them as `NaN` / `inf`.
pub fn assert_all_finite(what: &str, dump: &str) {
    assert!(!dump.contains("NaN"), "{what}: NaN in output:\n{dump}");
    let b = dump.as_bytes();
    for (i, _) in dump.match_indices("inf") {
        let before = if i == 0 { b' ' } else { b[i - 1] };
        let after = b.get(i + 3).copied().unwrap_or(b' ');
        let standalone = matches!(before, b' ' | b'(' | b'-' | b'[' | b':')
            && matches!(after, b',' | b')' | b']' | b' ' | b'\n');
        assert!(!standalone, "{what}: infinity in output:\n{dump}");
    }
}

const CSV: &str = include_str!("../data/zvt_8stocks_qfq_daily.csv");

/// The 8 real stocks as a universe (no market cap, industry or index bars offline).
pub fn real_universe() -> Universe {
    let mut by_code: BTreeMap<String, (String, Vec<Bar>)> = BTreeMap::new();
    for line in CSV.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let num = |i: usize| f[i].parse::<f64>().unwrap();
        by_code
            .entry(f[0].to_string())
            .or_insert_with(|| (f[1].to_string(), Vec::new()))
            .1
            .push(Bar {
                date: parse_date(f[2]).unwrap(),
                open: num(3),
                high: num(4),
                low: num(5),
                close: num(6),
                volume: num(7),
                amount: num(8),
                turnover: None,
            });
    }
    let stocks = by_code
        .into_iter()
        .map(|(code, (name, mut bars))| {
            bars.sort_by_key(|b| b.date);
            StockSeries {
                board: Board::from_code(&code),
                code,
                name,
                industry: None,
                market_cap_yi: None,
                list_date: None,
                bars,
                name_history: Vec::new(),
                delist_date: None,
                cap_history: Vec::new(),
            }
        })
        .collect();
    Universe {
        stocks,
        ..Universe::default()
    }
}
