//! Alerts on past closes over a real SQLite cache read each stock's facts of that day: the
//! bundled 000001 bars stored as 000005 too — named ST星源 today, 世纪星源 until 2021 by its
//! imported name history — fire under the name it carried then; a stock recorded as
//! delisted (600002, last day 2019-01-25) is checked up to that day and left out after it,
//! counted and named; and the report says how many stocks' names came from today's list.
//! A check of the newest day reads today's names as its own: no fallback is counted.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{TimeZone, Utc};
use wyckoff_alerts::{AlertStore, NewRule, check};
use wyckoff_market::cache::BarTable;
use wyckoff_market::history::{ListStatus, Listing};
use wyckoff_market::watchlist::WatchlistStore;
use wyckoff_market::{MarketConfig, MarketData, StockCode};
use wyckoff_protocol::{AlertCheckReport, AlertCondition, AlertTarget};

fn now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 5, 8, 0, 0).unwrap()
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

/// The name each fired alert was recorded under, by code.
fn names(r: &AlertCheckReport) -> Vec<(String, Option<String>)> {
    let mut out: Vec<_> = r
        .fired
        .iter()
        .map(|f| (f.code.clone(), f.name.clone()))
        .collect();
    out.sort();
    out
}

fn named(code: &str, name: &str) -> (String, Option<String>) {
    (code.to_owned(), Some(name.to_owned()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_past_check_fires_under_the_names_of_the_day_and_leaves_out_the_delisted() {
    let dir = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(dir.path()))
        .await
        .unwrap();
    let store = AlertStore::new(md.pool().clone()).await.unwrap();
    copy_000001(&md, "000005", u32::MAX).await;
    copy_000001(&md, "600002", 20190125).await;
    let watch = WatchlistStore::new(md.pool().clone());
    for code in ["000001", "000005", "600002"] {
        watch.add(code, now()).await.unwrap();
    }
    // A close above a cent: fires on every stock with a bar, each day it is checked.
    store
        .add_rule(
            &NewRule {
                target: AlertTarget::Watchlist,
                condition: AlertCondition::PriceAbove { level: 0.01 },
                cooldown_days: 1,
            },
            now(),
        )
        .await
        .unwrap();

    // Before any history: 000005 fires in 2019 under today's ST name, and that is said.
    let before = check(&md, &store, Some(20190114), now()).await.unwrap();
    assert!(
        names(&before).contains(&named("000005", "ST星源")),
        "{before:?}"
    );
    assert_eq!(
        (before.as_of_notes.stocks, before.as_of_notes.st_from_today),
        (3, 3),
        "{:?}",
        before.as_of_notes
    );
    assert!(
        before.notes[0].starts_with("3 只股票中 3 只的名称与 ST 状态取自今日名称"),
        "{:?}",
        before.notes
    );

    let csv = dir.path().join("names.csv");
    std::fs::write(
        &csv,
        "date,code,name\n1990-12-10,000005,世纪星源\n2021-05-01,000005,ST星源\n",
    )
    .unwrap();
    assert!(!md.import_names(&csv).await.unwrap().rejected());
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
            now(),
        )
        .await
        .unwrap();

    // 2019-01-16: every stock traded; 000005 under the name it carried then.
    let r = check(&md, &store, Some(20190116), now()).await.unwrap();
    assert_eq!(
        names(&r),
        vec![
            named("000001", "平安银行"),
            named("000005", "世纪星源"),
            named("600002", "齐鲁石化"),
        ],
        "{r:?}"
    );
    assert_eq!(r.stocks, 3);
    // 000001 and 600002 have no recorded names: today's (the listing's) stood in.
    assert_eq!(
        (
            r.as_of_notes.stocks,
            r.as_of_notes.st_from_today,
            r.as_of_notes.delisted
        ),
        (3, 2, 0),
        "{:?}",
        r.as_of_notes
    );
    assert_eq!(
        r.notes,
        vec![
            "3 只股票中 2 只的名称与 ST 状态取自今日名称（没有该日的历史名称），可能与当日不符"
                .to_owned()
        ]
    );
    // Stored under that name too.
    let stored = store.history(100).await.unwrap();
    assert!(
        stored.iter().any(|f| f.code == "000005"
            && f.bar_date == "2019-01-16"
            && f.name.as_deref() == Some("世纪星源")),
        "{stored:?}"
    );

    // Its last day: still checked.
    let last = check(&md, &store, Some(20190125), now()).await.unwrap();
    assert!(
        last.fired
            .iter()
            .any(|f| f.code == "600002" && f.bar_date == "2019-01-25"),
        "{last:?}"
    );
    assert_eq!(last.as_of_notes.delisted, 0);

    // After it: not checked on its old last bar, counted and named.
    let after = check(&md, &store, Some(20190128), now()).await.unwrap();
    assert!(after.fired.iter().all(|f| f.code != "600002"), "{after:?}");
    assert!(
        after.unevaluated.iter().all(|u| u.code != "600002")
            && after.suppressed.iter().all(|s| s.code != "600002"),
        "{after:?}"
    );
    assert_eq!(after.stocks, 2);
    assert_eq!(
        (
            after.as_of_notes.delisted,
            after.as_of_notes.delisted_codes.clone()
        ),
        (1, vec!["600002".to_owned()])
    );
    assert!(
        after
            .notes
            .contains(&"1 只股票在 2019-01-28 前已退市，不在当日检查范围内：600002".to_owned()),
        "{:?}",
        after.notes
    );

    // The newest day: today's names are its own, none counted as a fallback; the bundled
    // bars end in 2020, before 000005's recorded rename, and the delisted stock stays out.
    let newest = check(&md, &store, None, now()).await.unwrap();
    assert_eq!(
        newest.as_of_notes.st_from_today, 0,
        "{:?}",
        newest.as_of_notes
    );
    assert!(
        newest.notes.iter().all(|n| !n.contains("今日名称")),
        "{:?}",
        newest.notes
    );
    assert_eq!(
        names(&newest),
        vec![named("000001", "平安银行"), named("000005", "世纪星源")],
        "{newest:?}"
    );
    assert_eq!(newest.as_of_notes.delisted, 1);
}
