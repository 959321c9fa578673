//! Writes a synthetic market (wyckoff-engine feature `synthetic`: made-up test data, never
//! shipped) as CSV files the way a user's export looks: one file per stock, header row,
//! ISO dates, qfq prices, volume in shares, amount in CNY. Shared by tests and benches.

use std::fmt::Write as _;
use std::path::Path;

use wyckoff_engine::Universe;

/// One `<code>.csv` per stock under `dir`; returns the number of bars written.
pub fn write_market_csv(u: &Universe, dir: &Path) -> std::io::Result<usize> {
    let mut total = 0;
    let mut text = String::new();
    for s in &u.stocks {
        text.clear();
        text.push_str("date,code,open,high,low,close,volume,amount\n");
        for b in &s.bars {
            let d = b.date;
            // `{}` on f64 prints the shortest text that parses back to the same value
            let _ = writeln!(
                text,
                "{:04}-{:02}-{:02},{},{},{},{},{},{},{}",
                d / 10_000,
                (d / 100) % 100,
                d % 100,
                s.code,
                b.open,
                b.high,
                b.low,
                b.close,
                b.volume,
                b.amount
            );
        }
        total += s.bars.len();
        std::fs::write(dir.join(format!("{}.csv", s.code)), &text)?;
    }
    Ok(total)
}
