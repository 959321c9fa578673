#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use super::*;
use crate::commands::error::CommandErrorKind;
use crate::commands::test_desk;

/// A TDX block file: a 384-byte header, a u16 block count, then per block 9 bytes of name
/// (ASCII here, the same bytes in GBK), u16 stock count, u16 type and 400 slots of 7 bytes.
fn block_file(blocks: &[(&str, &[&str])]) -> Vec<u8> {
    let mut out = vec![0u8; 384];
    out.extend((blocks.len() as u16).to_le_bytes());
    for (name, codes) in blocks {
        let mut rec = vec![0u8; 9 + 4 + 400 * 7];
        rec[..name.len()].copy_from_slice(name.as_bytes());
        rec[9..11].copy_from_slice(&(codes.len() as u16).to_le_bytes());
        rec[11..13].copy_from_slice(&2u16.to_le_bytes());
        for (i, c) in codes.iter().enumerate() {
            rec[13 + i * 7..13 + i * 7 + 6].copy_from_slice(c.as_bytes());
        }
        out.extend(rec);
    }
    out
}

fn write_blocks(tdx: &Path) {
    let cache = tdx.join("T0002").join("hq_cache");
    std::fs::create_dir_all(&cache).unwrap();
    let fin: &[&str] = &["000001", "601318", "000783"];
    let make: &[&str] = &["000338", "000778", "603220", "000001"];
    let none_cached: &[&str] = &["600519"];
    std::fs::write(
        cache.join("block_gn.dat"),
        block_file(&[("FIN", fin), ("MAKE", make), ("LIQUOR", none_cached)]),
    )
    .unwrap();
}

#[tokio::test]
async fn the_concept_table_and_a_stocks_blocks_come_from_the_imported_blocks() {
    let home = tempfile::tempdir().unwrap();
    let desk = test_desk::offline(home.path()).await;

    // nothing imported: no load and no table, not an error; a stock has no concepts
    let empty = strength(&desk, None).await.unwrap();
    assert!(empty.load.is_none() && empty.table.is_none(), "{empty:?}");
    let none = blocks(&desk, "000001", None).await.unwrap();
    assert!(none.concepts.is_empty(), "{none:?}");

    let tdx = tempfile::tempdir().unwrap();
    write_blocks(tdx.path());
    let file = tdx
        .path()
        .join("T0002")
        .join("hq_cache")
        .join("block_gn.dat");
    desk.import_industries(&file).await.unwrap();

    let page = strength(&desk, Some(" 2020-06-16 ")).await.unwrap();
    // imported today, after the bundled bars end: today's blocks stand in, and it says so
    assert!(page.load_later, "{page:?}");
    assert!(page.load.is_some());
    let t = page.table.expect("a table on a cached day");
    assert_eq!(t.date, 20200616);
    assert_eq!(t.market_stocks, 8, "{t:?}");
    let market = t.market_return_5d_pct.expect("a market mean");
    // the block with no cached member has no row, not a made-up zero
    let names: Vec<&str> = t.rows.iter().map(|r| r.concept.as_str()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names.contains(&"FIN") && names.contains(&"MAKE"),
        "{names:?}"
    );
    for r in &t.rows {
        assert_eq!(r.counted, r.members, "{r:?}");
        assert!((r.relative_5d_pct - (r.return_5d_pct - market)).abs() < 1e-9);
        assert!(r.up_today <= r.counted);
    }
    assert!(t.rows[0].relative_5d_pct >= t.rows[1].relative_5d_pct);
    let fin = t.rows.iter().find(|r| r.concept == "FIN").unwrap();
    assert_eq!(fin.members, 3);

    // a stock in both blocks lists both; the load is later than 2020 and says so
    let b = blocks(&desk, " 000001 ", Some("2020-06-16")).await.unwrap();
    assert_eq!(b.code, "000001");
    assert_eq!(b.concepts, vec!["FIN".to_string(), "MAKE".to_string()]);
    assert!(b.blocks_later, "{b:?}");
    let only = blocks(&desk, "603220", None).await.unwrap();
    assert_eq!(only.concepts, vec!["MAKE".to_string()]);

    // bad input says what is wrong
    let e = strength(&desk, Some("2020-13-45")).await.unwrap_err();
    assert_eq!(e.kind, CommandErrorKind::InvalidInput, "{e:?}");
    assert!(e.message.contains("2020-13-45"), "{e:?}");
    let e = blocks(&desk, "12ab", None).await.unwrap_err();
    assert_eq!(e.kind, CommandErrorKind::InvalidInput, "{e:?}");
}
