//! Screens and backtests of past days over a real cache read each stock's facts of the
//! day: the same real bars (000001's) stored as 000005 — named ST today, ST only from 2021
//! by its imported name history — and as 600000 — healthy today, ST in 2019 — screened as
//! of 2019-01-16 list the first and turn the second away; a stock recorded as delisted is
//! screened up to its last day and not after, and a backtest holds it and closes it there;
//! and every result says which facts fell back to today's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use wyckoff_agent::ProgressHandle;
use wyckoff_market::cache::BarTable;
use wyckoff_market::history::{ListStatus, Listing};
use wyckoff_market::{MarketConfig, MarketData, StockCode};

const DAY: &str = "2019-01-16";

async fn offline() -> (MarketData, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(dir.path()))
        .await
        .unwrap();
    (md, dir)
}

fn key(code: &str) -> String {
    StockCode::parse(code).unwrap().symbol().key()
}

/// Stores the bundled 000001 bars (up to `through`) under `code` as well.
async fn copy_000001(md: &MarketData, code: &str, through: u32) {
    let bars = md
        .store()
        .load_bars(BarTable::Stocks, &key("000001"), None)
        .await
        .unwrap()
        .bars;
    let bars: Vec<_> = bars.into_iter().filter(|b| b.date <= through).collect();
    md.store()
        .upsert_bars(BarTable::Stocks, &key(code), &bars, "test:copy", true)
        .await
        .unwrap();
}

async fn import_names(md: &MarketData, dir: &std::path::Path, csv: &str) {
    let path = dir.join("names.csv");
    std::fs::write(&path, csv).unwrap();
    let report = md.import_names(&path).await.unwrap();
    assert!(!report.rejected(), "{report:?}");
}

async fn screen(md: &MarketData, as_of: &str) -> Value {
    wyckoff_tools::screen::screen(md, &json!({"as_of": as_of}), &ProgressHandle::silent())
        .await
        .unwrap()
        .1
}

fn candidates(r: &Value) -> Vec<&str> {
    r["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["code"].as_str().unwrap())
        .collect()
}

fn warnings(r: &Value) -> String {
    r["data_quality"]["warnings"].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_past_screen_reads_st_from_the_names_of_the_day() {
    let (md, dir) = offline().await;
    copy_000001(&md, "000005", u32::MAX).await;
    copy_000001(&md, "600000", u32::MAX).await;
    // Today's list: 000005 is ST星源, 600000 浦发银行. Before any history: today's names.
    let before = screen(&md, DAY).await;
    assert!(
        candidates(&before).contains(&"600000") && !candidates(&before).contains(&"000005"),
        "{:?}",
        candidates(&before)
    );
    assert_eq!(
        before["as_of_notes"]["st_from_today"], 10,
        "{}",
        before["as_of_notes"]
    );
    assert!(
        warnings(&before).contains("10 只股票中 10 只的 ST 状态取自今日名称"),
        "{}",
        warnings(&before)
    );

    import_names(
        &md,
        dir.path(),
        "date,code,name\n\
         1990-12-10,000005,世纪星源\n\
         2021-05-01,000005,ST星源\n\
         2018-01-02,600000,*ST浦发\n\
         2020-01-02,600000,浦发银行\n",
    )
    .await;
    let r = screen(&md, DAY).await;
    let codes = candidates(&r);
    assert!(codes.contains(&"000005"), "{codes:?}");
    assert!(codes.contains(&"000001"), "{codes:?}");
    assert!(!codes.contains(&"600000"), "{codes:?}");
    assert_eq!(r["layers"][0]["reasons"]["st"], 1, "{}", r["layers"][0]);
    let listed = r["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["code"] == "000005")
        .unwrap();
    assert_eq!(listed["name"], "世纪星源");
    // The eight bundled stocks have no history: said, with how many.
    let notes = &r["as_of_notes"];
    assert_eq!(
        (notes["stocks"].as_u64(), notes["st_from_today"].as_u64()),
        (Some(10), Some(8))
    );
    assert!(
        warnings(&r).contains("10 只股票中 8 只的 ST 状态取自今日名称"),
        "{}",
        warnings(&r)
    );
    assert_eq!(r["cache"]["without_name_history"], 8, "{}", r["cache"]);

    // The newest cached day is today's: its facts are its own, nothing fell back.
    let newest = wyckoff_tools::screen::screen(&md, &json!({}), &ProgressHandle::silent())
        .await
        .unwrap()
        .1;
    assert_eq!(
        newest["as_of_notes"]["st_from_today"], 0,
        "{}",
        newest["as_of_notes"]
    );
    assert!(
        !warnings(&newest).contains("今日名称"),
        "{}",
        warnings(&newest)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delisted_stock_is_screened_and_held_up_to_its_last_day() {
    let (md, _dir) = offline().await;
    // 600002 (齐鲁石化, gone from today's list) traded 000001's bars up to 2019-01-25.
    copy_000001(&md, "600002", 20190125).await;
    md.history()
        .record_listings(
            &[Listing {
                code: "600002".into(),
                name: "齐鲁石化".into(),
                status: ListStatus::Delisted,
                list_date: Some(19980406),
                delist_date: Some(20190125),
            }],
            "test",
            md.clock().now(),
        )
        .await
        .unwrap();
    // Before its delisting: a candidate exactly as 000001 is.
    let before = screen(&md, DAY).await;
    assert!(
        candidates(&before).contains(&"600002"),
        "{:?}",
        candidates(&before)
    );
    assert_eq!(before["as_of_notes"]["delisted"], 0);
    let last = screen(&md, "2019-01-25").await;
    assert_eq!(
        last["data_quality"]["in_scope"], 9,
        "{}",
        last["data_quality"]
    );
    for day in ["2019-01-28", "2019-01-30"] {
        let r = screen(&md, day).await;
        let seen = r.to_string();
        assert!(!seen.contains("\"600002\""), "{day}: {seen}");
        assert_eq!(r["data_quality"]["in_scope"], 8, "{day}");
        assert_eq!(r["as_of_notes"]["delisted"], 1, "{day}");
        assert!(warnings(&r).contains("已退市"), "{day}: {}", warnings(&r));
        // A list that records a delisting is not said to lack them.
        assert!(
            !warnings(&r).contains("幸存者偏差"),
            "{day}: {}",
            warnings(&r)
        );
    }

    // A backtest over the period: 600002 is bought with 000001 on the day after the
    // 2019-01-16 signal, held by the rules, and closed at its last close when delisted.
    let r = wyckoff_tools::backtest::run(
        &md,
        &json!({"start": "2019-01-02", "end": "2019-03-29", "hold_days": 20, "top_n": 8}),
        &ProgressHandle::silent(),
    )
    .await
    .unwrap();
    let trades = r["trades"].as_array().unwrap();
    let of = |code: &str| -> Vec<&Value> {
        trades
            .iter()
            .filter(|t| t["code"] == code && t["entry_date"] == "2019-01-17")
            .collect()
    };
    let (gone, kept) = (of("600002"), of("000001"));
    assert_eq!((gone.len(), kept.len()), (1, 1), "{trades:?}");
    assert_eq!(gone[0]["exit_date"], "2019-01-25", "{}", gone[0]);
    assert_eq!(gone[0]["exit_reason"], "delisted", "{}", gone[0]);
    // Its twin still listed is held on past that day.
    assert!(
        kept[0]["exit_date"].as_str().unwrap() > "2019-01-25",
        "{}",
        kept[0]
    );
    assert!(
        trades
            .iter()
            .filter(|t| t["code"] == "600002")
            .all(|t| t["exit_date"].as_str().unwrap() <= "2019-01-25"),
        "{trades:?}"
    );
    assert_eq!(r["as_of_notes"]["delisted"], 1, "{}", r["as_of_notes"]);
    assert!(
        r["notes"].to_string().contains("ST 状态取自今日名称"),
        "{}",
        r["notes"]
    );
}
