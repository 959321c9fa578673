//! `wyckoff data industries import PATH` end to end, offline over the bundled real bars
//! (8 stocks, to 2020-06-16): without industries the screen's L3 is skipped and says how
//! to get them; a `code,industry` CSV imported, L3 runs and says so, and the universe
//! report counts the industries read from a load dated after the screened day; the same
//! file again adds nothing; a bad file imports nothing and names its lines; a TDX install
//! folder (GBK tdxhy.cfg + incon.dat, binary block_gn.dat) imports industries and concepts.
//! Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::Value;

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
    assert_eq!(code, Some(0), "{args:?}: {out}\n{err}");
    serde_json::from_str(&out).unwrap()
}

fn l3(r: &Value) -> &Value {
    r["layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["layer"] == "L3")
        .unwrap()
}

/// The bundled stocks in three industries.
const CSV: &str = "code,industry\n000001,金融\n601318,金融\n000783,金融\n000338,制造\n000778,制造\n603220,制造\n002572,消费\n300027,消费\n";

#[test]
fn an_imported_industry_file_makes_the_screens_l3_run() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let screen = ["screen", "--as-of", "2020-06-16", "--json"];

    // Without industries: skipped, and the note says how to get them.
    let r = json(h, &screen);
    let layer = l3(&r);
    assert_eq!(layer["skipped"], true, "{layer}");
    assert!(
        layer["note"]
            .as_str()
            .unwrap()
            .contains("wyckoff data industries import"),
        "{layer}"
    );
    assert_eq!(r["cache"]["industries"]["stocks_with_industry"], 0);
    let (code, text, _) = wyckoff(h, &["data", "industries", "list"]);
    assert_eq!(code, Some(0));
    assert!(text.contains("wyckoff data industries import"), "{text}");

    let file = h.join("industries.csv");
    std::fs::write(&file, CSV).unwrap();
    let path = file.to_str().unwrap();
    let r = json(h, &["data", "industries", "import", path, "--json"]);
    assert_eq!(r["status"], "imported", "{r}");
    assert_eq!(r["source"], "csv");
    assert_eq!(r["stocks"], 8);
    assert_eq!(r["industries"], 3);
    assert_eq!(r["write"], "added");
    let day = r["loaded_on"].clone();

    // The same file again adds nothing and says so.
    let again = json(h, &["data", "industries", "import", path, "--json"]);
    assert_eq!(again["write"], "unchanged", "{again}");
    assert_eq!(again["loaded_on"], day);
    let (code, text, _) = wyckoff(h, &["data", "industries", "import", path]);
    assert_eq!(code, Some(0));
    assert!(text.contains("nothing new"), "{text}");
    let loads = json(h, &["data", "industries", "list", "--json"]);
    assert_eq!(loads.as_array().unwrap().len(), 1, "{loads}");

    // L3 runs, names its industries, and the report says the membership is a later load's.
    let r = json(h, &screen);
    let layer = l3(&r);
    assert_eq!(layer["skipped"], false, "{layer}");
    let note = layer["note"].as_str().unwrap();
    assert!(note.starts_with("L3 行业共振："), "{note}");
    let l2 = &r["layers"][1]["passed"];
    assert!(
        note.contains(&format!("{l2}/{l2} 只 L2 股票有行业")),
        "{note}"
    );
    let cov = &r["cache"]["industries"];
    assert_eq!(cov["stocks_with_industry"], 8, "{cov}");
    // imported today, after 2020-06-16: every industry stands in from a later load
    assert_eq!(cov["from_later_load"], 8, "{cov}");
    assert_eq!(cov["load"]["loaded_on"], day);
    for s in r["top_sectors"].as_array().unwrap() {
        assert!(
            ["金融", "制造", "消费"].contains(&s["name"].as_str().unwrap()),
            "{s}"
        );
    }
    assert!(!r["top_sectors"].as_array().unwrap().is_empty());
    let (code, text, _) = wyckoff(h, &["screen", "--as-of", "2020-06-16"]);
    assert_eq!(code, Some(0));
    assert!(text.contains("L3 行业共振"), "{text}");
}

#[test]
fn a_bad_file_imports_nothing_and_names_every_bad_line() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let file = h.join("bad.csv");
    std::fs::write(
        &file,
        "code,industry\n000001,金融\n123456,某行业\n600519\n000001,制造\n",
    )
    .unwrap();
    let (code, out, _) = wyckoff(h, &["data", "industries", "import", file.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("REJECTED, nothing imported (3 bad line(s))"),
        "{out}"
    );
    assert!(out.contains("bad.csv:3: code \"123456\""), "{out}");
    assert!(out.contains("bad.csv:4: 1 field(s), expected 2"), "{out}");
    assert!(
        out.contains("bad.csv:5: 000001 is already in industry \"金融\" on line 2"),
        "{out}"
    );
    let (code, out, _) = wyckoff(
        h,
        &[
            "data",
            "industries",
            "import",
            file.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(code, Some(2), "{out}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["status"], "rejected", "{r}");
    assert_eq!(r["bad_lines"], 3);
    let lines: Vec<u64> = r["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [3, 4, 5]);
    assert_eq!(r["errors"][2]["problem"], "conflict");
    let loads = json(h, &["data", "industries", "list", "--json"]);
    assert_eq!(loads, serde_json::json!([]));
}

/// A TDX block file as TDX lays it out: a 384-byte header, a u16 block count, then per
/// block 9 bytes of GBK name, u16 stock count, u16 type and 400 slots of 7 bytes.
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

#[test]
fn a_tdx_install_folder_gives_industries_and_concepts() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let tdx = h.join("new_tdx");
    let cache = tdx.join("T0002").join("hq_cache");
    std::fs::create_dir_all(&cache).unwrap();
    let gbk = |s: &str| encoding_rs::GBK.encode(s).0.into_owned();
    std::fs::write(
        cache.join("tdxhy.cfg"),
        gbk("0|000001|T100101|||X500102\n1|601318|T1003|||\n1|600519|T050101|||\n1|510300|T1001|||\n0|000002||||\n"),
    )
    .unwrap();
    // no incon.dat yet: refused, naming where it looked
    let (code, _, err) = wyckoff(h, &["data", "industries", "import", tdx.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("incon.dat"), "{err}");
    std::fs::write(
        tdx.join("incon.dat"),
        gbk("#ZJHHY\nJ66|货币金融服务\n######\n#TDXNHY\nT10|金融\nT1001|银行\nT100101|股份制银行\nT1003|保险\nT05|消费\nT050101|白酒\n######\n"),
    )
    .unwrap();
    std::fs::write(
        cache.join("block_gn.dat"),
        block_file(&[("金融科技", &["000001", "601318"]), ("白酒", &["600519"])]),
    )
    .unwrap();
    let r = json(
        h,
        &[
            "data",
            "industries",
            "import",
            tdx.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(r["status"], "imported", "{r}");
    assert_eq!(r["source"], "tdx");
    // 000001 → second level 银行; 601318 → 保险; 600519 → its own 白酒 (no T0501 named)
    assert_eq!(r["stocks"], 3, "{r}");
    assert_eq!(r["industries"], 3, "{r}");
    assert_eq!(r["concepts"], 2, "{r}");
    assert_eq!(r["concept_rows"], 3, "{r}");
    assert_eq!(r["not_stocks"], 1, "{r}");
    assert_eq!(r["without_industry"], 1, "{r}");
    // the bundled stocks the membership names carry those industries in the screen
    let s = json(h, &["screen", "--as-of", "2020-06-16", "--json"]);
    assert_eq!(s["cache"]["industries"]["stocks_with_industry"], 2, "{s}");
    // a damaged block file: nothing imported, the block named
    std::fs::write(
        cache.join("block_gn.dat"),
        block_file(&[("金融科技", &["000001", "6013x8"])]),
    )
    .unwrap();
    let (code, out, _) = wyckoff(h, &["data", "industries", "import", tdx.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("block_gn.dat:1: code \"6013x8\": not six digits"),
        "{out}"
    );
    // the industries and the concepts are a load each, and the refused file changed neither
    let loads = json(h, &["data", "industries", "list", "--json"]);
    let kinds: Vec<&str> = loads
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["industry", "concept"], "{loads}");
    // block_gn.dat alone replaces the concepts and leaves the industries
    std::fs::write(
        cache.join("block_gn.dat"),
        block_file(&[("白酒", &["600519", "000858"])]),
    )
    .unwrap();
    let path = cache.join("block_gn.dat");
    let r = json(
        h,
        &[
            "data",
            "industries",
            "import",
            path.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(r["write"], "replaced", "{r}");
    let s = json(h, &["screen", "--as-of", "2020-06-16", "--json"]);
    assert_eq!(s["cache"]["industries"]["stocks_with_industry"], 2, "{s}");
}

/// The sector table of `wyckoff market map` against a count by hand from the binary's own
/// price rows (`analyze --mode price`): each industry's equal-weight 5-day return over the
/// market's, its amount share, and its leader.
#[test]
fn the_market_maps_sector_table_agrees_with_a_count_by_hand() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let day = "2020-06-16";
    // no industries: no table, and a note says how to get them
    let m = json(h, &["market", "map", "--json", "--as-of", day]);
    assert!(m["sectors"].is_null(), "{m}");
    assert!(
        m["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["type"] == "no_industries"),
        "{m}"
    );
    let file = h.join("industries.csv");
    std::fs::write(&file, CSV).unwrap();
    json(
        h,
        &[
            "data",
            "industries",
            "import",
            file.to_str().unwrap(),
            "--json",
        ],
    );
    let m = json(h, &["market", "map", "--json", "--as-of", day]);
    let sec = &m["sectors"];
    assert_eq!(sec["date"], 20200616, "{sec}");

    // by hand: (industry, 5-day return %, amount, day's change %, code, 20-day return %,
    // closed above its MA20) per stock
    let mut rows = Vec::new();
    for line in CSV.lines().skip(1) {
        let (code, industry) = line.split_once(',').unwrap();
        let p = json(
            h,
            &[
                "analyze", code, "--json", "--as-of", day, "--mode", "price", "--days", "21",
            ],
        );
        let bars = p["data"].as_array().unwrap();
        assert_eq!(bars.len(), 21, "{code}");
        assert_eq!(bars[20]["date"], day, "{code}");
        let close = |i: usize| bars[i]["close"].as_f64().unwrap();
        let ma20 = (1..=20).map(close).sum::<f64>() / 20.0;
        rows.push((
            industry.to_string(),
            (close(20) / close(15) - 1.0) * 100.0,
            bars[20]["amount"].as_f64().unwrap(),
            (close(20) / close(19) - 1.0) * 100.0,
            code.to_string(),
            (close(20) / close(0) - 1.0) * 100.0,
            close(20) > ma20,
        ));
    }
    let market = rows.iter().map(|r| r.1).sum::<f64>() / rows.len() as f64;
    let total: f64 = rows.iter().map(|r| r.2).sum();
    let m5 = sec["market_return_short_pct"].as_f64().unwrap();
    // the price rows are rounded to the fen: agree within a hundredth of a point
    assert!((m5 - market).abs() < 0.02, "{m5} vs {market}");
    let market_long = rows.iter().map(|r| r.5).sum::<f64>() / rows.len() as f64;
    let m20 = sec["market_return_long_pct"].as_f64().unwrap();
    assert!((m20 - market_long).abs() < 0.02, "{m20} vs {market_long}");
    let table = sec["rows"].as_array().unwrap();
    assert_eq!(table.len(), 3);
    for industry in ["金融", "制造", "消费"] {
        let members: Vec<_> = rows.iter().filter(|r| r.0 == industry).collect();
        let ret = members.iter().map(|r| r.1).sum::<f64>() / members.len() as f64;
        let amount: f64 = members.iter().map(|r| r.2).sum();
        let leader = members.iter().max_by(|a, b| a.3.total_cmp(&b.3)).unwrap();
        let row = table.iter().find(|r| r["industry"] == industry).unwrap();
        assert_eq!(row["members"], members.len() as u64, "{row}");
        let long = members.iter().map(|r| r.5).sum::<f64>() / members.len() as f64;
        let rel_long = row["relative_long_pct"].as_f64().unwrap();
        assert!(
            (rel_long - (long - market_long)).abs() < 0.03,
            "{industry}: {rel_long} vs {}",
            long - market_long
        );
        // breadth at MA20: every member has 20 closes
        let above = members.iter().filter(|r| r.6).count();
        assert_eq!(
            row["breadth_pct"].as_f64().unwrap(),
            above as f64 / members.len() as f64 * 100.0,
            "{industry}: {row}"
        );
        let rel = row["relative_short_pct"].as_f64().unwrap();
        assert!(
            (rel - (ret - market)).abs() < 0.03,
            "{industry}: {rel} vs {}",
            ret - market
        );
        let share = row["amount_share_pct"].as_f64().unwrap();
        assert!(
            (share - amount / total * 100.0).abs() < 1e-6,
            "{industry}: {share}"
        );
        assert_eq!(row["leaders"][0]["code"], leader.4.as_str(), "{row}");
        // every bundled stock has years of bars: the rotation has its figures
        assert!(row["rotation"].is_string(), "{row}");
        assert!(row["limit_up"].is_u64(), "{row}");
    }
    // strongest short relative return first
    let rel: Vec<f64> = table
        .iter()
        .map(|r| r["relative_short_pct"].as_f64().unwrap())
        .collect();
    assert!(rel.windows(2).all(|w| w[0] >= w[1]), "{rel:?}");
    let limit_ups: u64 = table.iter().map(|r| r["limit_up"].as_u64().unwrap()).sum();
    assert_eq!(limit_ups, m["limits"]["limit_up"].as_u64().unwrap());
    // the text prints the table
    let (code, text, _) = wyckoff(h, &["market", "map", "--as-of", day]);
    assert_eq!(code, Some(0));
    assert!(text.contains("rotation") && text.contains("金融"), "{text}");
}

#[test]
fn a_tdx_installs_style_blocks_come_in_as_styles() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let tdx = h.join("new_tdx");
    let cache = tdx.join("T0002").join("hq_cache");
    std::fs::create_dir_all(&cache).unwrap();
    let gbk = |s: &str| encoding_rs::GBK.encode(s).0.into_owned();
    std::fs::write(
        cache.join("tdxhy.cfg"),
        gbk("0|000001|T1001|||\n1|601318|T1003|||\n"),
    )
    .unwrap();
    std::fs::write(
        tdx.join("incon.dat"),
        gbk("#TDXNHY\nT10|金融\nT1001|银行\nT1003|保险\n######\n"),
    )
    .unwrap();
    std::fs::write(
        cache.join("block_gn.dat"),
        block_file(&[("金融科技", &["000001", "601318"])]),
    )
    .unwrap();
    std::fs::write(
        cache.join("block_fg.dat"),
        block_file(&[("大盘价值", &["601318"])]),
    )
    .unwrap();
    let r = json(
        h,
        &[
            "data",
            "industries",
            "import",
            tdx.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(r["status"], "imported", "{r}");
    // one concept block and one style block, three memberships
    assert_eq!(r["concepts"], 2, "{r}");
    assert_eq!(r["concept_rows"], 3, "{r}");
    let show = json(h, &["data", "industries", "show", "601318", "--json"]);
    assert_eq!(show["styles"], serde_json::json!(["大盘价值"]), "{show}");
    assert_eq!(show["concepts"], serde_json::json!(["金融科技"]), "{show}");
    let show = json(h, &["data", "industries", "show", "000001", "--json"]);
    assert_eq!(show["styles"], serde_json::json!([]), "{show}");
    let loads = json(h, &["data", "industries", "list", "--json"]);
    let kinds: Vec<&str> = loads
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"style"), "{loads}");
}
