//! CSV import against real files in a temp dir and a real SQLite cache: good files land
//! (and read back through the same paths as synced bars), a file with any bad row lands
//! not at all, and every problem is reported with its file and line.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use chrono::NaiveDate;
use wyckoff_market::{FileStatus, ImportReport, ManualClock, MarketConfig, MarketData};

async fn open(home: &Path) -> MarketData {
    let mut cfg = MarketConfig::offline(home);
    cfg.clock = Arc::new(ManualClock::at_beijing(
        NaiveDate::from_ymd_opt(2026, 12, 1)
            .unwrap()
            .and_hms_opt(16, 0, 0)
            .unwrap(),
    ));
    MarketData::open_with(cfg).await.unwrap()
}

async fn import(md: &MarketData, path: &Path) -> ImportReport {
    let mut events = 0;
    let r = md.import_csv(path, &mut |_| events += 1).await.unwrap();
    assert_eq!(events, r.files, "one progress event per file");
    r
}

const HEADER: &str = "date,code,open,high,low,close,volume,amount\n";

fn write(dir: &Path, name: &str, body: &str) {
    std::fs::write(dir.join(name), body).unwrap();
}

#[tokio::test]
async fn a_folder_imports_its_good_files_and_rejects_each_bad_one_whole() {
    let home = tempfile::tempdir().unwrap();
    let csv = tempfile::tempdir().unwrap();
    let d = csv.path();
    // 600519 is in the bundled stock list but has no bundled bars
    write(
        d,
        "a_good.csv",
        &format!(
            "{HEADER}2024-01-02,600519,1700,1720,1690,1710,1000,1.7e6\n20240103,sh600519,1710,1730,1700,1725,1200,2.0e6\n2024-01-02,300750.SZ,150,155,149,154,5000,7.7e5\n"
        ),
    );
    write(
        d,
        "b_mixed.csv",
        &format!(
            "{HEADER}2024-01-02,601012,20,21,19,20.5,100,2050\n2024-01-03,601012,20,x,19,20.5,100,2050\n"
        ),
    );
    write(
        d,
        "c_high_below_low.csv",
        &format!("{HEADER}2024-01-02,601012,20,18,19,20.5,100,2050\n"),
    );
    write(
        d,
        "d_duplicate.csv",
        &format!(
            "{HEADER}2024-01-02,601012,20,21,19,20.5,100,2050\n20240102,601012,20,21,19,20.6,100,2050\n"
        ),
    );
    write(
        d,
        "e_unknown_code.csv",
        &format!("{HEADER}2024-01-02,999999,20,21,19,20.5,100,2050\n"),
    );
    write(d, "f_empty.csv", "");
    write(d, "notes.txt", "not a csv, ignored");
    let md = open(home.path()).await;
    let r = import(&md, d).await;
    assert_eq!(
        (r.files, r.files_imported, r.files_rejected),
        (6, 1, 5),
        "{r:#?}"
    );
    assert_eq!((r.stocks, r.bars), (2, 3));
    assert!(r.anything_rejected());
    let line_of = |name: &str| -> Vec<(usize, String)> {
        let o = r.outcomes.iter().find(|o| o.path.ends_with(name)).unwrap();
        match &o.status {
            FileStatus::Rejected { errors, .. } => {
                errors.iter().map(|e| (e.line, e.message.clone())).collect()
            }
            other => panic!("{name}: {other:?}"),
        }
    };
    assert_eq!(line_of("b_mixed.csv")[0].0, 3);
    assert!(
        line_of("b_mixed.csv")[0]
            .1
            .contains("high \"x\" is not a number")
    );
    assert!(line_of("c_high_below_low.csv")[0].1.contains("high below"));
    assert_eq!(line_of("d_duplicate.csv")[0].0, 3);
    assert!(
        line_of("d_duplicate.csv")[0]
            .1
            .contains("duplicate date 2024-01-02")
    );
    assert!(line_of("e_unknown_code.csv")[0].1.contains("unknown code"));
    assert!(line_of("f_empty.csv")[0].1.contains("empty"));
    // nothing of the rejected files is stored: 601012 appears in four of them
    let r601 = md.daily_bars("601012", None).await.unwrap();
    assert!(r601.bars.is_empty(), "{:?}", r601.bars);
    // the good file reads back like any cached series
    let moutai = md.daily_bars("600519", None).await.unwrap();
    let closes: Vec<(u32, f64)> = moutai.bars.iter().map(|b| (b.date, b.close)).collect();
    assert_eq!(closes, [(20240102, 1710.0), (20240103, 1725.0)]);
    assert_eq!(moutai.source.as_deref(), Some("csv-import"));
    assert_eq!(moutai.bars[1].amount, 2.0e6);
    let st = md.status().await.unwrap();
    let s = st.stocks.iter().find(|c| c.code == "600519").unwrap();
    assert_eq!(s.sources[0].source, "csv-import");
    assert_eq!(s.sources[0].last_date, Some(20240103));
    // and the whole-market read sees it
    let u = md.load_universe(None).await.unwrap();
    assert!(
        u.universe
            .stocks
            .iter()
            .any(|s| s.code == "300750" && s.bars.len() == 1)
    );
}

#[tokio::test]
async fn import_merges_into_cached_series_and_a_rerun_changes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let csv = tempfile::tempdir().unwrap();
    let md = open(home.path()).await;
    let before = md.daily_bars("000001", None).await.unwrap().bars;
    let last = *before.last().unwrap();
    assert_eq!(last.date, 20200616);
    // one corrected day and two new ones, without an amount column
    let file = csv.path().join("pingan.csv");
    std::fs::write(
        &file,
        "code,date,open,high,low,close,volume\n000001,2020-06-16,12.8,13.0,12.7,12.95,1000\n000001,2020-06-17,13,13.2,12.9,13.1,900\n000001,2020-06-18,13.1,13.3,13.0,13.2,800\n",
    )
    .unwrap();
    for _ in 0..2 {
        let r = import(&md, &file).await;
        assert_eq!((r.files_imported, r.bars), (1, 3));
        let after = md.daily_bars("000001", None).await.unwrap();
        assert_eq!(after.bars.len(), before.len() + 2);
        assert_eq!(after.bars[..before.len() - 1], before[..before.len() - 1]);
        let tail: Vec<(u32, f64, f64)> = after.bars[before.len() - 1..]
            .iter()
            .map(|b| (b.date, b.close, b.amount))
            .collect();
        // no amount in the file: 0, reported as missing, never estimated
        assert_eq!(
            tail,
            [
                (20200616, 12.95, 0.0),
                (20200617, 13.1, 0.0),
                (20200618, 13.2, 0.0)
            ]
        );
        assert_eq!(after.source.as_deref(), Some("csv-import"));
        assert!(
            after
                .notes
                .iter()
                .any(|n| n.to_string().contains("3 bar(s) have no traded amount")),
            "{:?}",
            after.notes
        );
    }
}

#[tokio::test]
async fn a_future_bar_or_a_missing_path_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let csv = tempfile::tempdir().unwrap();
    let md = open(home.path()).await;
    let file = csv.path().join("future.csv");
    std::fs::write(&file, format!("{HEADER}2026-12-02,600519,1,1,1,1,1,1\n")).unwrap();
    let r = import(&md, &file).await;
    assert_eq!(r.files_rejected, 1);
    let err = md
        .import_csv(&csv.path().join("nope"), &mut |_| {})
        .await
        .unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
    let empty_dir = tempfile::tempdir().unwrap();
    let err = md
        .import_csv(empty_dir.path(), &mut |_| {})
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no .csv files"), "{err}");
}
