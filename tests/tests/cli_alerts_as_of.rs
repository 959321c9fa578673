//! `wyckoff alerts check --as-of` reads each stock's facts of that close, through the real
//! binary on a fresh, offline data home: the bundled 000001 bars stored as 000005 too (ST星源
//! in today's list) and as 600002 up to 2019-01-25 (recorded as delisted that day), all
//! three on the watchlist under one rule that fires on any close. With the name history
//! imported by `wyckoff data names import`, a 2019 check records 000005 as 世纪星源 — the
//! name it carried then — and says, in text and as typed `as_of_notes` in --json, how many
//! stocks' names came from today's list; a check after 2019-01-25 leaves 600002 out and says
//! so; a check of the newest day counts no fallback. Build the binary first
//! (`cargo build -p wyckoff-cli`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::Utc;
use serde_json::Value;
use wyckoff_market::cache::BarTable;
use wyckoff_market::history::{ListStatus, Listing};
use wyckoff_market::watchlist::WatchlistStore;
use wyckoff_market::{MarketConfig, MarketData, StockCode};

type Home = wyckoff_e2e::CliHome;

const NAMES_FROM_TODAY: &str = "的名称与 ST 状态取自今日名称";

fn key(code: &str) -> String {
    StockCode::parse(code).unwrap().symbol().key()
}

/// The home's cache with 000001's bars under 000005 and (to its last day) 600002, 600002
/// recorded as delisted, and the three on the watchlist.
async fn seed(home: &Home) {
    let md = MarketData::open_with(MarketConfig::offline(home.path()))
        .await
        .unwrap();
    let bars = md
        .store()
        .load_bars(BarTable::Stocks, &key("000001"), None)
        .await
        .unwrap()
        .bars;
    for (code, through) in [("000005", u32::MAX), ("600002", 20190125)] {
        let kept: Vec<_> = bars.iter().filter(|b| b.date <= through).cloned().collect();
        md.store()
            .upsert_bars(BarTable::Stocks, &key(code), &kept, "test:copy", true)
            .await
            .unwrap();
    }
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
            Utc::now(),
        )
        .await
        .unwrap();
    let watch = WatchlistStore::new(md.pool().clone());
    for code in ["000001", "000005", "600002"] {
        watch.add(code, Utc::now()).await.unwrap();
    }
}

/// `code`'s alert in a check's --json.
fn fired<'a>(r: &'a Value, code: &str) -> Option<&'a Value> {
    r["fired"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
}

#[tokio::test]
async fn a_past_check_records_the_names_of_that_close_and_says_what_was_todays() {
    let home = Home::new();
    seed(&home).await;
    let names = home.path().join("names.csv");
    std::fs::write(
        &names,
        "date,code,name\n1990-12-10,000005,世纪星源\n2021-05-01,000005,ST星源\n",
    )
    .unwrap();
    home.text(&["data", "names", "import", names.to_str().unwrap()]);
    home.json(&[
        "alerts",
        "add",
        "--watchlist",
        "--price-above",
        "0.01",
        "--json",
    ]);

    let out = home.text(&["alerts", "check", "--as-of", "2019-01-15"]);
    assert!(out.contains(" 000005 世纪星源  [rule 1]"), "{out}");
    assert!(!out.contains("ST星源"), "{out}");
    // 000001 and 600002 have no recorded names: today's (the listing's) stood in.
    assert!(
        out.contains(&format!("note: 3 只股票中 2 只{NAMES_FROM_TODAY}")),
        "{out}"
    );

    let r = home.json(&["alerts", "check", "--as-of", "2019-01-16", "--json"]);
    assert_eq!(fired(&r, "000005").unwrap()["name"], "世纪星源", "{r}");
    assert_eq!(fired(&r, "600002").unwrap()["name"], "齐鲁石化", "{r}");
    let n = &r["as_of_notes"];
    assert_eq!(
        (
            n["stocks"].as_u64(),
            n["st_from_today"].as_u64(),
            n["delisted"].as_u64()
        ),
        (Some(3), Some(2), Some(0)),
        "{n}"
    );
    assert!(r["notes"].to_string().contains(NAMES_FROM_TODAY), "{r}");
    // The history keeps the name it fired under.
    let history = home.json(&["alerts", "history", "--json"]);
    assert!(
        history
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "000005"
                && f["bar_date"] == "2019-01-16"
                && f["name"] == "世纪星源"),
        "{history}"
    );

    // After 600002's last day: not checked on its old bar, left out and named.
    let out = home.text(&["alerts", "check", "--as-of", "2019-01-28"]);
    assert!(
        out.contains("note: 1 只股票在 2019-01-28 前已退市，不在当日检查范围内：600002"),
        "{out}"
    );
    assert!(out.contains("on 2 stock(s)"), "{out}");
    assert!(!out.contains(" 600002 齐鲁石化"), "{out}");
    let r = home.json(&["alerts", "check", "--as-of", "2019-01-29", "--json"]);
    assert!(fired(&r, "600002").is_none(), "{r}");
    assert_eq!(r["as_of_notes"]["delisted_codes"][0], "600002", "{r}");

    // The newest cached close: today's names are its own, no fallback counted.
    let r = home.json(&["alerts", "check", "--json"]);
    assert_eq!(r["as_of_notes"]["st_from_today"], 0, "{r}");
    assert!(fired(&r, "000001").is_some(), "{r}");
    let out = home.text(&["alerts", "check"]);
    assert!(!out.contains("今日名称"), "{out}");
}
