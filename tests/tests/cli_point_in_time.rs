//! History as it was, end to end through the real binary on a fresh, offline data home:
//! the bundled 000001 bars stored as 000005 (ST星源 in today's list), as 600000 (浦发银行
//! today) and, up to 2019-01-25, as 600002 (recorded as delisted that day). With the name
//! history imported by `wyckoff data names import` — 000005 ST only from 2021, 600000 *ST
//! through 2019 — `wyckoff screen --as-of 2019-01-16` lists 000005 under the name it had
//! then and turns 600000 away at the ST gate, and 600002 is screened like its twin; a
//! `wyckoff backtest` over the period buys 600002 with 000001 and closes it on its last day
//! as delisted while the twin is held on. Build the binary first (`cargo build -p
//! wyckoff-cli`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::Utc;
use serde_json::Value;
use wyckoff_market::cache::BarTable;
use wyckoff_market::history::{ListStatus, Listing};
use wyckoff_market::{MarketConfig, MarketData, StockCode};

type Home = wyckoff_e2e::CliHome;

fn key(code: &str) -> String {
    StockCode::parse(code).unwrap().symbol().key()
}

/// The home's cache with 000001's bars under 000005, 600000 and (to its last day) 600002,
/// 600002 recorded as delisted.
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
    for (code, through) in [
        ("000005", u32::MAX),
        ("600000", u32::MAX),
        ("600002", 20190125),
    ] {
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
}

fn candidates(r: &Value) -> Vec<&str> {
    r["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["code"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_past_screen_and_backtest_read_the_names_and_delistings_of_their_days() {
    let home = Home::new();
    seed(&home).await;

    // Without history, today's names decide: 000005 (ST星源 today) is turned away.
    let before = home.json(&["screen", "--as-of", "2019-01-16", "--json"]);
    let codes = candidates(&before);
    assert!(
        codes.contains(&"600000") && !codes.contains(&"000005"),
        "{codes:?}"
    );

    let names = home.path().join("names.csv");
    std::fs::write(
        &names,
        "date,code,name\n\
         1990-12-10,000005,世纪星源\n\
         2021-05-01,000005,ST星源\n\
         2018-01-02,600000,*ST浦发\n\
         2020-01-02,600000,浦发银行\n",
    )
    .unwrap();
    home.text(&["data", "names", "import", names.to_str().unwrap()]);

    let r = home.json(&["screen", "--as-of", "2019-01-16", "--json"]);
    let codes = candidates(&r);
    assert!(codes.contains(&"000005"), "{codes:?}");
    assert!(codes.contains(&"000001"), "{codes:?}");
    assert!(
        codes.contains(&"600002"),
        "delisted later, listed then: {codes:?}"
    );
    assert!(!codes.contains(&"600000"), "{codes:?}");
    assert_eq!(r["layers"][0]["reasons"]["st"], 1, "{}", r["layers"][0]);
    let listed = r["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["code"] == "000005")
        .unwrap();
    assert_eq!(listed["name"], "世纪星源");
    // the stocks without a name history are counted, not hidden
    assert!(
        r["data_quality"]["warnings"]
            .to_string()
            .contains("的 ST 状态取自今日名称"),
        "{}",
        r["data_quality"]["warnings"]
    );

    // After its last day 600002 is out of the screen.
    let after = home.json(&["screen", "--as-of", "2019-01-28", "--json"]);
    assert!(!after.to_string().contains("\"600002\""), "{after}");
    assert_eq!(
        after["as_of_notes"]["delisted"], 1,
        "{}",
        after["as_of_notes"]
    );

    // A backtest over the period holds 600002 by the rules and closes it when delisted.
    let bt = home.json(&[
        "backtest",
        "--start",
        "2019-01-02",
        "--end",
        "2019-03-29",
        "--hold-days",
        "20",
        "--top-n",
        "8",
        "--json",
    ]);
    let trades = bt["trades"].as_array().unwrap();
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
    // 600000 (*ST then) is never bought in 2019
    assert!(
        trades
            .iter()
            .filter(|t| t["code"] == "600000")
            .all(|t| t["entry_date"].as_str().unwrap() >= "2020-01-02"),
        "{trades:?}"
    );
    assert_eq!(bt["as_of_notes"]["delisted"], 1, "{}", bt["as_of_notes"]);
}
