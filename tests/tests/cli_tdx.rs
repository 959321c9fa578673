//! The real `wyckoff data import --tdx` on a fresh, offline data home with a TDX install
//! written here from the documented `.day` layout (32-byte little-endian records: u32
//! date, u32 open/high/low/close in fen, f32 amount, u32 volume, u32 reserved) and block
//! files: every stored bar equals its source record, the blocks become watchlist entries,
//! indices and funds are skipped, the install's industry file (GBK tdxhy.cfg with
//! incon.dat's names) gives each stock its industry, a re-import adds nothing, and a corrupt
//! file is named with its record while the rest imports. Build the binary first (`cargo build -p
//! wyckoff-cli`; `scripts/test` does).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use wyckoff_e2e::show;
use wyckoff_market::watchlist::WatchlistStore;
use wyckoff_market::{MarketConfig, MarketData};

fn run(home: &Path, args: &[&str]) -> Output {
    Command::new(wyckoff_e2e::binary("wyckoff"))
        .args(args)
        .env("WYCKOFF_HOME", home)
        .env("WYCKOFF_OFFLINE", "1")
        .env_remove("WYCKOFF_DATA_SOURCES")
        .output()
        .unwrap()
}

/// One record as the documentation lays it out.
#[derive(Clone, Copy, Debug)]
struct Rec {
    date: u32,
    open: u32,
    high: u32,
    low: u32,
    close: u32,
    amount: f32,
    volume: u32,
}

fn encode(recs: &[Rec]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in recs {
        for v in [r.date, r.open, r.high, r.low, r.close] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&r.amount.to_le_bytes());
        out.extend_from_slice(&r.volume.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
    }
    out
}

/// Weekdays from 2024-01-02 on, `n` of them, leaving out those whose index is in `gap`.
fn history(seed: u32, n: usize, gap: std::ops::Range<usize>) -> Vec<Rec> {
    let mut day = chrono::NaiveDate::from_ymd_opt(2024, 1, 2).unwrap();
    let mut out = Vec::new();
    let mut i = 0;
    let mut price = 1000 + seed * 137;
    while i < n {
        use chrono::Datelike;
        if day.weekday().number_from_monday() <= 5 {
            // a deterministic walk in fen: ±3%
            let step = (i as u32 * 7 + seed * 13) % 61;
            price = (price * (970 + step)) / 1000 + 1;
            let open = price;
            let close = price + (step % 9) * 3;
            let high = close.max(open) + step % 5 + 1;
            let low = open.min(close) - (step % 4) - 1;
            let volume = 100_000 + step * 1_000 + seed;
            if !gap.contains(&i) {
                out.push(Rec {
                    date: day.year() as u32 * 10_000 + day.month() * 100 + day.day(),
                    open,
                    high,
                    low,
                    close,
                    amount: (f64::from(close) / 100.0 * f64::from(volume)) as f32,
                    volume,
                });
            }
            i += 1;
        }
        day = day.succ_opt().unwrap();
    }
    out
}

struct Install {
    root: tempfile::TempDir,
    /// (six digits, its records) of each stock file written.
    stocks: Vec<(&'static str, Vec<Rec>)>,
}

fn write_day(root: &Path, market: &str, digits: &str, recs: &[Rec]) {
    let dir = root.join("vipdoc").join(market).join("lday");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{market}{digits}.day")), encode(recs)).unwrap();
}

fn install() -> Install {
    let root = tempfile::tempdir().unwrap();
    let stocks: Vec<(&str, &str, Vec<Rec>)> = vec![
        ("sh", "600519", history(1, 260, 0..0)),
        ("sh", "688981", history(2, 120, 0..0)),
        ("sz", "000001", history(3, 260, 0..0)),
        ("sz", "300750", history(4, 200, 0..0)),
        // suspended for 15 trading days in the middle
        ("sz", "000002", history(5, 200, 90..105)),
        ("bj", "430047", history(6, 150, 0..0)),
    ];
    for (m, d, recs) in &stocks {
        write_day(root.path(), m, d, recs);
    }
    // not stocks: the SSE Composite (same digits as Ping An Bank), a Shenzhen index, an ETF
    write_day(root.path(), "sh", "000001", &history(7, 100, 0..0));
    write_day(root.path(), "sz", "399001", &history(8, 100, 0..0));
    write_day(root.path(), "sh", "510300", &history(9, 100, 0..0));

    let blocks = root.path().join("T0002").join("blocknew");
    std::fs::create_dir_all(&blocks).unwrap();
    // 自选股: market digit + code, CRLF, an index among them
    std::fs::write(
        blocks.join("ZXG.blk"),
        "\r\n1600519\r\n0000001\r\n1000001\r\n",
    )
    .unwrap();
    // one custom block named in blocknew.cfg: 50-byte GBK name + 70-byte file name
    let mut cfg = vec![0u8; 120];
    let (name, _, _) = encoding_rs::GBK.encode("短线");
    cfg[..name.len()].copy_from_slice(&name);
    cfg[50..52].copy_from_slice(b"DX");
    std::fs::write(blocks.join("blocknew.cfg"), cfg).unwrap();
    std::fs::write(blocks.join("DX.blk"), "0300750\r\n2430047\r\n1600519\r\n").unwrap();
    Install {
        root,
        stocks: stocks.into_iter().map(|(_, d, r)| (d, r)).collect(),
    }
}

/// The install's industry membership as TDX keeps it: `T0002/hq_cache/tdxhy.cfg` (market|code|
/// TDX industry code|…) and the names in `incon.dat`, both GBK. Ping An Bank is in 银行 (its
/// code T100101 is named at the second level), Moutai in 白酒; an ETF and a stock without an
/// industry code are counted apart.
fn write_industries(root: &Path) {
    let gbk = |s: &str| encoding_rs::GBK.encode(s).0.into_owned();
    let cache = root.join("T0002").join("hq_cache");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(
        cache.join("tdxhy.cfg"),
        gbk("0|000001|T100101|||X500102\r\n1|600519|T050101|||\r\n1|510300|T1001|||\r\n0|000002||||\r\n"),
    )
    .unwrap();
    std::fs::write(
        root.join("incon.dat"),
        gbk("#TDXNHY\nT10|金融\nT1001|银行\nT100101|股份制银行\nT05|消费\nT050101|白酒\n######\n"),
    )
    .unwrap();
}

/// A stock's industry as `wyckoff data industries show` gives it.
fn industry_of(home: &Path, code: &str) -> Value {
    let out = run(home, &["data", "industries", "show", code, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let m: Value = serde_json::from_slice(&out.stdout).unwrap();
    m["industry"].clone()
}

async fn open(home: &Path) -> MarketData {
    MarketData::open_with(MarketConfig::offline(home))
        .await
        .unwrap()
}

/// Every stored bar of every stock equals its source record, and its raw close is exact.
async fn assert_stored_as_source(home: &Path, inst: &Install) {
    let md = open(home).await;
    for (code, recs) in &inst.stocks {
        let r = md.daily_bars(code, None).await.unwrap();
        assert_eq!(r.bars.len(), recs.len(), "{code}");
        for (bar, rec) in r.bars.iter().zip(recs) {
            assert_eq!(bar.date, rec.date, "{code}");
            assert_eq!(bar.open, f64::from(rec.open) / 100.0, "{code} {}", rec.date);
            assert_eq!(bar.high, f64::from(rec.high) / 100.0, "{code} {}", rec.date);
            assert_eq!(bar.low, f64::from(rec.low) / 100.0, "{code} {}", rec.date);
            assert_eq!(
                bar.close,
                f64::from(rec.close) / 100.0,
                "{code} {}",
                rec.date
            );
            assert_eq!(bar.volume, f64::from(rec.volume), "{code} {}", rec.date);
            assert_eq!(bar.amount, f64::from(rec.amount), "{code} {}", rec.date);
        }
        let notes: Vec<String> = r.notes.iter().map(ToString::to_string).collect();
        assert!(
            notes.iter().any(|n| n.contains("unadjusted")),
            "{code}: {notes:?}"
        );
        let raw = md.raw_closes(code, 0..=u32::MAX).await.unwrap();
        assert!(raw.is_exact(), "{code}: {}", raw.basis);
        let closes: Vec<(u32, i64)> = raw.closes.iter().map(|c| (c.date, c.close_e6)).collect();
        let want: Vec<(u32, i64)> = recs
            .iter()
            .map(|r| (r.date, i64::from(r.close) * 10_000))
            .collect();
        assert_eq!(closes, want, "{code}");
    }
    // the suspension stays a gap: nothing is filled in
    let vanke = &inst.stocks.iter().find(|(c, _)| *c == "000002").unwrap().1;
    let gap_start = vanke[89].date;
    let gap_end = vanke[90].date;
    let r = md.daily_bars("000002", None).await.unwrap();
    assert!(
        !r.bars
            .iter()
            .any(|b| b.date > gap_start && b.date < gap_end),
        "bars inside the suspension"
    );
    // the index file did not become Ping An Bank's bars (checked above by count) nor any index
    let idx = md.index_bars("sse", None).await.unwrap();
    assert!(idx.bars.is_empty(), "{} index bars", idx.bars.len());
}

#[test]
fn a_tdx_install_imports_every_bar_as_its_source_and_the_blocks_into_the_watchlist() {
    let home = tempfile::tempdir().unwrap();
    let inst = install();
    write_industries(inst.root.path());
    let root = inst.root.path().to_str().unwrap();

    let out = run(home.path(), &["data", "import", "--tdx", root, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let total: usize = inst.stocks.iter().map(|(_, r)| r.len()).sum();
    assert_eq!(r["files"], 9, "{r}");
    assert_eq!(r["stocks"], 6, "{r}");
    assert_eq!(r["stocks_written"], 6, "{r}");
    assert_eq!(r["bars_added"], total, "{r}");
    assert_eq!(r["bars_unchanged"], 0, "{r}");
    assert_eq!(
        r["skipped"],
        serde_json::json!([{"kind": "index", "files": 2}, {"kind": "fund", "files": 1}]),
        "{r}"
    );
    assert_eq!(r["watchlist_added"], 4, "{r}");
    let blocks = r["blocks"].as_array().unwrap();
    assert_eq!(blocks[0]["name"], "自选股");
    assert_eq!(blocks[0]["stocks"], 2);
    assert_eq!(blocks[0]["not_stocks"], 1);
    assert_eq!(blocks[1]["name"], "短线");
    assert_eq!(blocks[1]["stocks"], 3);
    // 600519 is in both blocks: added once
    assert_eq!(blocks[1]["added"], 2);
    // Ping An Bank's bundled sample gave way to the install's history
    assert_eq!(r["bundled_replaced"], 1, "{r}");
    // the industry file came along
    let ind = &r["industries"];
    assert_eq!(ind["status"], "imported", "{ind}");
    assert_eq!(ind["report"]["status"], "imported", "{ind}");
    assert_eq!(ind["report"]["source"], "tdx", "{ind}");
    assert_eq!(ind["report"]["write"], "added", "{ind}");
    assert_eq!(ind["report"]["stocks"], 2, "{ind}");
    assert_eq!(ind["report"]["industries"], 2, "{ind}");
    assert_eq!(ind["report"]["not_stocks"], 1, "{ind}");
    assert_eq!(ind["report"]["without_industry"], 1, "{ind}");
    assert_eq!(industry_of(home.path(), "000001"), "银行");
    assert_eq!(industry_of(home.path(), "600519"), "白酒");
    assert_eq!(industry_of(home.path(), "300750"), Value::Null);

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(assert_stored_as_source(home.path(), &inst));
    let watched: Vec<String> = rt.block_on(async {
        let md = open(home.path()).await;
        WatchlistStore::new(md.pool().clone())
            .list()
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.code)
            .collect()
    });
    let mut watched = watched;
    watched.sort();
    assert_eq!(watched, ["000001", "300750", "430047", "600519"]);

    let out = run(home.path(), &["data", "status", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let st: Value = serde_json::from_slice(&out.stdout).unwrap();
    let moutai = st["stocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["code"] == "688981")
        .unwrap_or_else(|| panic!("{st}"));
    assert_eq!(moutai["sources"][0]["source"], "tdx-import");

    // again: nothing new, and it says so
    let out = run(home.path(), &["data", "import", "--tdx", root]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "bars: 0 new, 0 changed, {total} already stored; 0 stock(s) written"
        )),
        "{text}"
    );
    assert!(text.contains("nothing new"), "{text}");
    assert!(text.contains("自选股"), "{text}");
    // the same membership again: kept, not loaded a second time
    assert!(
        text.contains("industries: 2 stock(s) in 2 industries (already on record)"),
        "{text}"
    );
    assert_eq!(industry_of(home.path(), "000001"), "银行");
    rt.block_on(assert_stored_as_source(home.path(), &inst));
}

#[test]
fn a_corrupt_file_is_named_with_its_record_and_the_rest_imports() {
    let home = tempfile::tempdir().unwrap();
    let inst = install();
    let root = inst.root.path();
    // a torn last record and, in another file, a date that is not a date
    let mut torn = encode(&history(10, 30, 0..0));
    torn.truncate(torn.len() - 12);
    write_day(root, "sh", "601318", &[]);
    std::fs::write(root.join("vipdoc/sh/lday/sh601318.day"), torn).unwrap();
    let mut bad = history(11, 10, 0..0);
    bad[2].date = 20241340;
    write_day(root, "sz", "002594", &bad);

    let out = run(
        home.path(),
        &["data", "import", "--tdx", root.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("sh601318.day: REJECTED, nothing imported (1 bad record(s))"),
        "{text}"
    );
    assert!(
        text.contains("record 30 (byte 928): truncated: the last 20 byte(s)"),
        "{text}"
    );
    assert!(
        text.contains("record 3 (byte 64): date 20241340 is not a YYYYMMDD date"),
        "{text}"
    );
    // the other stocks are all there, as their sources
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(assert_stored_as_source(home.path(), &inst));
    // the rejected files stored nothing: 601318 keeps only its bundled sample, 002594 has none
    let (ping_an, byd) = rt.block_on(async {
        let md = open(home.path()).await;
        let last = md
            .daily_bars("601318", None)
            .await
            .unwrap()
            .bars
            .last()
            .map(|b| b.date);
        (
            last,
            md.daily_bars("002594", None).await.unwrap().bars.len(),
        )
    });
    assert_eq!(ping_an, Some(20200616));
    assert_eq!(byd, 0);

    // not an install at all
    let out = run(
        home.path(),
        &["data", "import", "--tdx", home.path().to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a TDX install"),
        "{}",
        show(&out)
    );
}
