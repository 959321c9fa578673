//! Concepts through the real `wyckoff` binary, offline over the bundled real bars (8
//! stocks, to 2020-06-16): a TDX block_gn.dat imported, `data industries concepts --as-of`
//! gives each concept's 5-day return against the market's, equal to a count by hand from
//! the bundled bars, and `data industries show CODE` lists a stock's concepts. Without
//! blocks, both say how to get them. Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::Value;
use wyckoff_e2e::show;

fn run(home: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = wyckoff_e2e::wyckoff_cli(home).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", show(&out));
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn json(home: &Path, args: &[&str]) -> Value {
    serde_json::from_str(&run(home, args).1).unwrap()
}

/// A TDX block file: a 384-byte header, a u16 block count, then per block 9 bytes of GBK
/// name, u16 stock count, u16 type and 400 slots of 7 bytes.
fn block_file(blocks: &[(&str, &[&str])]) -> Vec<u8> {
    let mut out = vec![0u8; 384];
    out.extend((blocks.len() as u16).to_le_bytes());
    for (name, codes) in blocks {
        let mut rec = vec![0u8; 9 + 4 + 400 * 7];
        let n = encoding_rs::GBK.encode(name).0;
        rec[..n.len()].copy_from_slice(&n);
        rec[9..11].copy_from_slice(&(codes.len() as u16).to_le_bytes());
        rec[11..13].copy_from_slice(&2u16.to_le_bytes());
        for (i, c) in codes.iter().enumerate() {
            rec[13 + i * 7..13 + i * 7 + 6].copy_from_slice(c.as_bytes());
        }
        out.extend(rec);
    }
    out
}

/// A bundled stock's 5-day return on `day` in percent, from its bundled bars by hand.
fn by_hand(code: &str, day: u32) -> Option<f64> {
    let series = wyckoff_market::bundled::daily_bars()
        .unwrap()
        .into_iter()
        .find(|s| s.code.digits() == code)?;
    let bars: Vec<_> = series.bars.iter().filter(|b| b.date <= day).collect();
    let last = bars.last()?;
    if last.date != day || bars.len() < 6 {
        return None;
    }
    Some((last.close / bars[bars.len() - 6].close - 1.0) * 100.0)
}

const BUNDLED: [&str; 8] = [
    "000001", "601318", "000783", "000338", "000778", "603220", "002572", "300027",
];

#[test]
fn concept_strength_and_a_stocks_concepts_agree_with_the_bars_by_hand() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();

    // nothing imported: both say how to get blocks
    let (_, text) = run(h, &["data", "industries", "concepts"]);
    assert!(text.contains("no concept blocks on record"), "{text}");
    let (_, text) = run(h, &["data", "industries", "show", "000001"]);
    assert!(
        text.contains("concepts: no concept blocks on record"),
        "{text}"
    );

    let cache = h.join("tdx").join("T0002").join("hq_cache");
    std::fs::create_dir_all(&cache).unwrap();
    let finance: &[&str] = &["000001", "601318", "000783"];
    let makers: &[&str] = &["000338", "000778", "603220", "000001"];
    let none_cached: &[&str] = &["600519"];
    std::fs::write(
        cache.join("block_gn.dat"),
        block_file(&[("大金融", finance), ("制造", makers), ("白酒", none_cached)]),
    )
    .unwrap();
    run(
        h,
        &[
            "data",
            "industries",
            "import",
            cache.join("block_gn.dat").to_str().unwrap(),
        ],
    );

    let day = 20200616;
    let c = json(
        h,
        &[
            "data",
            "industries",
            "concepts",
            "--as-of",
            "2020-06-16",
            "--json",
        ],
    );
    let t = &c["table"];
    assert_eq!(t["date"], day, "{c}");
    // imported today: a later load stands in for 2020, and says so
    assert_eq!(c["load_later"], true, "{c}");
    let market: Vec<f64> = BUNDLED.iter().filter_map(|s| by_hand(s, day)).collect();
    assert_eq!(t["market_stocks"], market.len() as u64, "{t}");
    let market = market.iter().sum::<f64>() / market.len() as f64;
    assert!((t["market_return_5d_pct"].as_f64().unwrap() - market).abs() < 1e-6);
    let mut want: Vec<(String, f64)> = [("大金融", finance), ("制造", makers)]
        .iter()
        .map(|(name, codes)| {
            let r: Vec<f64> = codes.iter().filter_map(|s| by_hand(s, day)).collect();
            assert_eq!(r.len(), codes.len(), "every member has bars that day");
            (
                name.to_string(),
                r.iter().sum::<f64>() / r.len() as f64 - market,
            )
        })
        .collect();
    want.sort_by(|a, b| b.1.total_cmp(&a.1));
    let rows = t["rows"].as_array().unwrap();
    // 白酒's only member has no bars cached: no row, not a made-up zero
    assert_eq!(rows.len(), 2, "{t}");
    for (row, (name, rel)) in rows.iter().zip(&want) {
        assert_eq!(row["concept"], name.as_str());
        assert!(
            (row["relative_5d_pct"].as_f64().unwrap() - rel).abs() < 1e-6,
            "{row} vs {rel}"
        );
    }
    let (_, text) = run(
        h,
        &["data", "industries", "concepts", "--as-of", "2020-06-16"],
    );
    assert!(text.contains("concepts: 3 block(s) from tdx "), "{text}");
    assert!(text.contains("today's blocks stand in"), "{text}");
    assert!(text.contains("2020-06-16: market 5-day "), "{text}");

    // a stock's concepts
    let m = json(h, &["data", "industries", "show", "000001", "--json"]);
    assert_eq!(m["concepts"], serde_json::json!(["制造", "大金融"]), "{m}");
    let (_, text) = run(h, &["data", "industries", "show", "000001"]);
    assert!(text.contains("concepts (2): 制造, 大金融"), "{text}");
    let (_, text) = run(h, &["data", "industries", "show", "300027"]);
    assert!(text.contains("concepts (0): none"), "{text}");
}
