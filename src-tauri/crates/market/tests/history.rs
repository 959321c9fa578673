//! Stock history as of a date, through the paths that fill it: the store itself, the
//! stock-list snapshot every sync records, a user's `date,code,name` import, and Tushare's
//! `namechange` / `stock_basic` over real HTTP from a local server speaking its envelope;
//! then the universe loader handing it to the engine.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::NaiveDate;
use common::{FixtureServer, Recorded};
use serde_json::{Value, json};
use wyckoff_engine::{AsOf, NameSpan, StockSeries};
use wyckoff_market::breaker::BreakerConfig;
use wyckoff_market::history::{HistoryStore, ListStatus, Listing, NameChange, SpanWrite};
use wyckoff_market::name_import::{LineProblem, NamesImportError, NamesImportStatus};
use wyckoff_market::sources::SourcePolicy;
use wyckoff_market::sources::tushare::TushareConfig;
use wyckoff_market::{ManualClock, MarketConfig, MarketData, SourceSpec};

fn day(y: i32, m: u32, d: u32) -> Arc<ManualClock> {
    Arc::new(ManualClock::at_beijing(
        NaiveDate::from_ymd_opt(y, m, d)
            .unwrap()
            .and_hms_opt(16, 0, 0)
            .unwrap(),
    ))
}

fn days(n: u64) -> Duration {
    Duration::from_secs(n * 86_400)
}

fn fast() -> SourcePolicy {
    SourcePolicy {
        min_interval: Duration::ZERO,
        max_retries: 0,
        backoff_base: Duration::from_millis(1),
        backoff_max: Duration::from_millis(5),
        breaker: BreakerConfig {
            failure_threshold: 5,
            cooldown: Duration::from_secs(60),
        },
    }
}

async fn open(home: &std::path::Path, clock: Arc<ManualClock>) -> MarketData {
    let mut cfg = MarketConfig::offline(home);
    cfg.clock = clock;
    MarketData::open_with(cfg).await.unwrap()
}

async fn open_tushare(
    home: &std::path::Path,
    srv: &FixtureServer,
    clock: Arc<ManualClock>,
) -> MarketData {
    let mut cfg = MarketConfig::offline(home);
    cfg.clock = clock;
    cfg.sources = vec![SourceSpec::Tushare(
        TushareConfig {
            base: srv.base("tushare", "dynamic"),
            token: "t0ken".into(),
        },
        fast(),
    )];
    MarketData::open_with(cfg).await.unwrap()
}

/// Tushare's success envelope.
fn table(fields: &[&str], items: Value, has_more: bool) -> String {
    json!({
        "request_id": "r1",
        "code": 0,
        "msg": "",
        "data": {"fields": fields, "items": items, "has_more": has_more}
    })
    .to_string()
}

fn body(r: &Recorded) -> Value {
    serde_json::from_str(&r.body).unwrap()
}

fn spans(list: &[(u32, &str)]) -> Vec<NameSpan> {
    list.iter()
        .map(|&(from, name)| NameSpan {
            from,
            name: name.into(),
        })
        .collect()
}

fn change(code: &str, from: u32, name: &str) -> NameChange {
    NameChange {
        code: code.into(),
        from,
        name: name.into(),
    }
}

#[tokio::test]
async fn names_and_listings_round_trip_through_the_store() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path(), day(2026, 12, 1)).await;
    let store = md.history();
    let now = md.clock().now();
    let names = [
        change("000005", 19901210, "世纪星源"),
        change("000005", 20210501, "ST星源"),
        change("600087", 20180101, "*ST长油"),
    ];
    let w = store.add_names(&names, "tushare", now).await.unwrap();
    assert_eq!(
        w,
        SpanWrite {
            added: 3,
            ..SpanWrite::default()
        }
    );
    // the same again changes nothing
    let w = store.add_names(&names, "tushare", now).await.unwrap();
    assert_eq!((w.added, w.unchanged), (0, 3));
    // a correction of one day's name replaces it
    let w = store
        .add_names(&[change("600087", 20180101, "ST长油")], "names-import", now)
        .await
        .unwrap();
    assert_eq!(w.changed, 1);
    let stored = store.spans_of("600087").await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(
        (stored[0].name.as_str(), stored[0].source.as_str()),
        ("ST长油", "names-import")
    );
    assert!(!stored[0].first_seen);
    store
        .record_listings(
            &[Listing {
                code: "600087".into(),
                name: "退市长油".into(),
                status: ListStatus::Delisted,
                list_date: Some(19970611),
                delist_date: Some(20140605),
            }],
            "tushare",
            now,
        )
        .await
        .unwrap();
    let h = store.load().await.unwrap();
    assert_eq!(
        h.names["000005"],
        spans(&[(19901210, "世纪星源"), (20210501, "ST星源")])
    );
    let l = store.listing_of("600087").await.unwrap().unwrap();
    assert_eq!(
        (l.status, l.delist_date, l.list_date),
        (ListStatus::Delisted, Some(20140605), Some(19970611))
    );
    let c = store.counts().await.unwrap();
    assert_eq!(
        (c.codes_with_names, c.spans, c.listings, c.delisted),
        (2, 3, 1, 1)
    );
    // another process opening the same file reads the same history
    let again = HistoryStore::new(
        wyckoff_market::cache::open_db(&home.path().join("wyckoff.db"))
            .await
            .unwrap(),
    );
    assert_eq!(again.load().await.unwrap().names, h.names);
}

/// A Tushare server whose current stock list the test edits between syncs.
fn serve_list(srv: &FixtureServer, list: Arc<Mutex<Vec<(&'static str, &'static str)>>>) {
    srv.set_dynamic(Arc::new(move |r: &Recorded| {
        let b = body(r);
        (b["api_name"] == "stock_basic").then(|| {
            let items: Vec<Value> = list
                .lock()
                .unwrap()
                .iter()
                .map(|(code, name)| json!([code, &code[..6], name, "", "19910403"]))
                .collect();
            (
                200,
                table(
                    &["ts_code", "symbol", "name", "industry", "list_date"],
                    json!(items),
                    false,
                ),
            )
        })
    }));
}

#[tokio::test]
async fn each_list_sync_is_a_snapshot_and_a_rename_between_two_starts_a_first_seen_span() {
    let srv = FixtureServer::start().await;
    let list = Arc::new(Mutex::new(vec![
        ("000005.SZ", "世纪星源"),
        ("600519.SH", "贵州茅台"),
    ]));
    serve_list(&srv, list.clone());
    let home = tempfile::tempdir().unwrap();
    let clock = day(2024, 2, 1);
    let md = open_tushare(home.path(), &srv, clock.clone()).await;
    let store = md.history();

    assert_eq!(md.sync_stock_list().await.unwrap(), (2, "tushare"));
    // the first snapshot: every name is first seen that day
    let first = store.spans_of("000005").await.unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!(
        (first[0].from, first[0].name.as_str()),
        (20240201, "世纪星源")
    );
    assert!(first[0].first_seen);
    assert_eq!(first[0].source, "snapshot:tushare");

    // four days later the list has the new name: a span from the day it was seen
    list.lock().unwrap()[0].1 = "ST星源";
    clock.advance(days(4));
    md.sync_stock_list().await.unwrap();
    let seen: Vec<(u32, String, bool)> = store
        .spans_of("000005")
        .await
        .unwrap()
        .into_iter()
        .map(|s| (s.from, s.name, s.first_seen))
        .collect();
    assert_eq!(
        seen,
        [
            (20240201, "世纪星源".to_string(), true),
            (20240205, "ST星源".to_string(), true)
        ]
    );
    assert_eq!(
        store.spans_of("600519").await.unwrap().len(),
        1,
        "no rename"
    );

    // a third sync of the same list adds nothing
    clock.advance(days(1));
    md.sync_stock_list().await.unwrap();
    let snaps = store.snapshots().await.unwrap();
    let taken: Vec<(u32, usize, usize)> = snaps
        .iter()
        .map(|s| (s.day, s.stocks, s.new_names))
        .collect();
    assert_eq!(
        taken,
        [(20240201, 2, 2), (20240205, 2, 1), (20240206, 2, 0)]
    );
    assert_eq!(
        store.snapshot(20240205).await.unwrap().unwrap(),
        [
            ("000005".to_string(), "ST星源".to_string()),
            ("600519".to_string(), "贵州茅台".to_string())
        ]
    );

    // the real change date, imported later, confirms the name; the snapshot's later start
    // folds into it
    let csv = home.path().join("names.csv");
    std::fs::write(&csv, "20240202,000005,ST星源\n").unwrap();
    assert!(!md.import_names(&csv).await.unwrap().rejected());
    let h = store.load().await.unwrap();
    assert_eq!(
        h.names["000005"],
        spans(&[(20240201, "世纪星源"), (20240202, "ST星源")])
    );
    // and a snapshot never overrides a dated name on the same day
    clock.advance(days(1));
    std::fs::write(&csv, "20240207,000005,世纪星源\n").unwrap();
    assert!(!md.import_names(&csv).await.unwrap().rejected());
    md.sync_stock_list().await.unwrap();
    assert_eq!(
        store.snapshots().await.unwrap().last().unwrap().new_names,
        0
    );
    let on_the_7th = store.spans_of("000005").await.unwrap();
    let last = on_the_7th.last().unwrap();
    assert_eq!((last.from, last.name.as_str()), (20240207, "世纪星源"));
    assert!(!last.first_seen);
}

#[tokio::test]
async fn an_import_stores_a_good_file_once_and_a_file_with_a_bad_line_not_at_all() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path(), day(2026, 12, 1)).await;
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("names.csv");
    std::fs::write(
        &good,
        "\u{feff}date,code,name\r\n1990-12-10,000005,世纪星源\r\n20210501,000005.SZ,ST星源\r\n20180101,sh600087,*ST长油\r\n",
    )
    .unwrap();
    let r = md.import_names(&good).await.unwrap();
    match &r.status {
        NamesImportStatus::Imported {
            rows,
            stocks,
            write,
        } => {
            assert_eq!((*rows, *stocks), (3, 2));
            assert_eq!((write.added, write.unchanged), (3, 0));
        }
        other => panic!("{other:?}"),
    }
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["status"], "imported");
    assert_eq!(json["added"], 3);
    // twice: nothing new, and the report says so
    let r = md.import_names(&good).await.unwrap();
    match &r.status {
        NamesImportStatus::Imported { write, .. } => {
            assert_eq!((write.added, write.changed, write.unchanged), (0, 0, 3))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(md.history().counts().await.unwrap().spans, 3);

    let bad = dir.path().join("bad.csv");
    std::fs::write(
        &bad,
        "20200101,000001,平安银行\n20200101,000002,万科A\n2020-02-30,000004,国华网安\n",
    )
    .unwrap();
    let r = md.import_names(&bad).await.unwrap();
    assert!(r.rejected());
    match &r.status {
        NamesImportStatus::Rejected { errors, bad_lines } => {
            assert_eq!(*bad_lines, 1);
            assert_eq!(errors[0].line, 3);
            assert_eq!(
                errors[0].problem,
                LineProblem::BadDate {
                    value: "2020-02-30".into()
                }
            );
        }
        other => panic!("{other:?}"),
    }
    // the good lines of a bad file were not stored either
    assert!(md.history().spans_of("000001").await.unwrap().is_empty());
    assert_eq!(md.history().counts().await.unwrap().spans, 3);

    let missing = md.import_names(&dir.path().join("nope.csv")).await;
    assert!(
        matches!(missing, Err(NamesImportError::Io { .. })),
        "{missing:?}"
    );
    let folder = md.import_names(dir.path()).await;
    assert!(
        matches!(folder, Err(NamesImportError::NotAFile { .. })),
        "{folder:?}"
    );
}

const NAMECHANGE_FIELDS: [&str; 6] = [
    "ts_code",
    "name",
    "start_date",
    "end_date",
    "ann_date",
    "change_reason",
];
const BASIC_FIELDS: [&str; 6] = [
    "ts_code",
    "symbol",
    "name",
    "list_status",
    "list_date",
    "delist_date",
];

/// `namechange` in two pages (the first says `has_more`), one of its rows malformed;
/// `stock_basic` for L, D and P.
fn tushare_history(r: &Recorded) -> Option<(u16, String)> {
    let b = body(r);
    match b["api_name"].as_str()? {
        "namechange" => {
            let page = match b["params"]["offset"].as_u64()? {
                0 => (
                    json!([
                        ["000005.SZ", "ST星源", "20210501", null, "20210430", "*ST"],
                        [
                            "000005.SZ",
                            "世纪星源",
                            "19901210",
                            "20210430",
                            null,
                            "改名"
                        ],
                        // repeated with an end: the open-ended row is the one in force
                        [
                            "000005.SZ",
                            "ＳＴ星源",
                            "20210501",
                            "20210601",
                            "20210429",
                            "*ST"
                        ],
                        [
                            "600087.SH",
                            "*ST长油",
                            "20130507",
                            "20140604",
                            "20130506",
                            "*ST"
                        ],
                    ]),
                    true,
                ),
                4 => (
                    json!([
                        [
                            "600087.SH",
                            "退市长油",
                            "20140605",
                            null,
                            "20140604",
                            "终止上市"
                        ],
                        // malformed: no start date; 600000 keeps none of its rows
                        ["600000.SH", "浦发银行", null, null, null, "改名"],
                        ["600000.SH", "浦东发展", "19991110", null, null, ""],
                        // an ETF is no stock of ours
                        ["510300.SH", "沪深300ETF", "20120528", null, null, ""],
                    ]),
                    false,
                ),
                _ => return Some((200, table(&NAMECHANGE_FIELDS, json!([]), false))),
            };
            Some((200, table(&NAMECHANGE_FIELDS, page.0, page.1)))
        }
        "stock_basic" => {
            let items = match b["params"]["list_status"].as_str()? {
                "L" => json!([
                    ["000005.SZ", "000005", "ST星源", "L", "19901210", null],
                    ["600519.SH", "600519", "贵州茅台", "L", "20010827", null],
                ]),
                "D" => json!([
                    [
                        "600087.SH",
                        "600087",
                        "退市长油",
                        "D",
                        "19970611",
                        "20140605"
                    ],
                    // delisted without its day: not stored as a listing
                    ["600002.SH", "600002", "齐鲁石化", "D", "19980408", null],
                ]),
                _ => json!([]),
            };
            Some((200, table(&BASIC_FIELDS, items, false)))
        }
        _ => None,
    }
}

#[tokio::test]
async fn tushare_fills_names_and_listings_over_http() {
    let srv = FixtureServer::start().await;
    srv.set_dynamic(Arc::new(tushare_history));
    let home = tempfile::tempdir().unwrap();
    let md = open_tushare(home.path(), &srv, day(2026, 12, 1)).await;
    assert!(md.has_stock_history_source());
    let got = md.sync_stock_history().await.unwrap().unwrap();
    assert_eq!(got.source, "tushare");
    // 000005 × 2, 600087 × 2; 600000 dropped whole, the ETF skipped
    assert_eq!((got.names, got.write.added), (4, 4));
    assert_eq!((got.listings, got.delisted, got.paused), (3, 1, 0));
    assert_eq!(got.rejected_rows, 2, "{:?}", got.rejected);
    assert!(got.rejected[0].contains("600000"), "{:?}", got.rejected);
    assert!(got.rejected[1].contains("600002"), "{:?}", got.rejected);

    let h = md.history().load().await.unwrap();
    assert_eq!(
        h.names["000005"],
        spans(&[(19901210, "世纪星源"), (20210501, "ST星源")])
    );
    assert_eq!(
        h.names["600087"],
        spans(&[(20130507, "*ST长油"), (20140605, "退市长油")])
    );
    assert!(!h.names.contains_key("600000") && !h.names.contains_key("510300"));
    assert_eq!(h.listings["600087"].delist_date, Some(20140605));
    assert_eq!(h.listings["600519"].status, ListStatus::Listed);
    assert!(!h.listings.contains_key("600002"));
    let stored = md.history().spans_of("000005").await.unwrap();
    assert!(
        stored
            .iter()
            .all(|s| s.source == "tushare" && !s.first_seen)
    );

    // what went over the wire: Tushare's request envelope, paged, the three statuses
    let sent: Vec<Value> = srv
        .requests()
        .iter()
        .map(body)
        .filter(|b| b["api_name"] != "daily_basic")
        .collect();
    assert!(sent.iter().all(|b| b["token"] == "t0ken"));
    let calls: Vec<String> = sent
        .iter()
        .map(|b| {
            format!(
                "{} {}",
                b["api_name"].as_str().unwrap(),
                b["params"]["list_status"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| b["params"]["offset"].to_string())
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            "namechange 0",
            "namechange 4",
            "stock_basic L",
            "stock_basic D",
            "stock_basic P",
            // the industries: no Shenwan table in this stub, and no stock_basic industry
            "index_classify 0"
        ]
    );
    assert_eq!(
        sent[0]["fields"],
        "ts_code,name,start_date,end_date,ann_date,change_reason"
    );

    // fetched again: nothing new
    let again = md.sync_stock_history().await.unwrap().unwrap();
    assert_eq!((again.write.added, again.write.unchanged), (0, 4));
}

/// A history sync records the whole market's caps of each quarter end of the cached span,
/// ten years' worth a sync, newest first; the next sync goes on with the older ones and a
/// third asks for nothing. The universe then carries each stock's samples.
#[tokio::test]
async fn tushare_records_quarter_end_caps_newest_first_and_goes_on_where_it_stopped() {
    let srv = FixtureServer::start().await;
    srv.set_dynamic(Arc::new(|r: &Recorded| {
        let b = body(r);
        if b["api_name"] != "daily_basic" {
            return tushare_history(r);
        }
        if b["params"]["offset"].as_u64() != Some(0) {
            return Some((200, table(&["ts_code"], json!([]), false)));
        }
        let day: u32 = b["params"]["trade_date"].as_str()?.parse().ok()?;
        // 万元: 000001's cap grows with the year; a row with no cap is left out
        let wan = f64::from(day / 10_000 - 2000) * 10_000.0;
        let items = json!([
            ["000001.SZ", day.to_string(), wan],
            ["601318.SH", day.to_string(), null],
        ]);
        Some((
            200,
            table(&["ts_code", "trade_date", "total_mv"], items, false),
        ))
    }));
    let home = tempfile::tempdir().unwrap();
    let md = open_tushare(home.path(), &srv, day(2026, 12, 1)).await;
    let asked = |srv: &FixtureServer| -> Vec<u32> {
        srv.requests()
            .iter()
            .map(body)
            .filter(|b| b["api_name"] == "daily_basic")
            .filter_map(|b| b["params"]["trade_date"].as_str()?.parse().ok())
            .collect()
    };
    // the bundled bars run 2005-01-04 .. 2020-06-16: the last day with bars of each
    // quarter from 2005Q1 to 2020Q2 (the 16th, where the bars end), 62 of them
    let got = md.sync_stock_history().await.unwrap().unwrap();
    assert_eq!(
        (got.cap_days, got.cap_days_missing, got.cap_error),
        (40, 22, None)
    );
    let first = asked(&srv);
    assert_eq!(first.len(), 40);
    assert_eq!(first[..2], [20200616, 20200331], "newest first: {first:?}");
    assert!(first.windows(2).all(|w| w[0] > w[1]), "{first:?}");
    assert_eq!(first[39], 20100930);

    let got = md.sync_stock_history().await.unwrap().unwrap();
    assert_eq!((got.cap_days, got.cap_days_missing), (22, 0));
    let all = asked(&srv);
    assert_eq!(all.len(), 62);
    assert_eq!(*all.last().unwrap(), 20050331);
    let got = md.sync_stock_history().await.unwrap().unwrap();
    assert_eq!((got.cap_days, got.cap_days_missing), (0, 0));
    assert_eq!(asked(&srv).len(), 62, "a complete history asks for nothing");

    let u = md.load_universe(None).await.unwrap().universe;
    let pingan = u.stocks.iter().find(|s| s.code == "000001").unwrap();
    assert_eq!(pingan.cap_history.len(), 62);
    assert_eq!(pingan.cap_history[0].date, 20050331);
    // 2019's samples: 19 亿, read as of a day by the engine
    let q = pingan
        .cap_history
        .iter()
        .find(|c| c.date == 20190329)
        .unwrap_or_else(|| panic!("{:?}", pingan.cap_history));
    assert_eq!(q.cap_yi, 19.0);
    assert!(pingan.market_cap_on(20190329).known);
    let pingan_insurance = u.stocks.iter().find(|s| s.code == "601318").unwrap();
    assert!(pingan_insurance.cap_history.is_empty());
    assert!(!pingan_insurance.market_cap_on(20190329).known);
}

#[tokio::test]
async fn a_tushare_error_code_stores_nothing_and_no_source_means_no_history() {
    let srv = FixtureServer::start().await;
    srv.set_dynamic(Arc::new(|r: &Recorded| {
        (body(r)["api_name"] == "namechange").then(|| {
            (
                200,
                json!({"code": -2002, "msg": "抱歉，您没有访问该接口的权限", "data": null})
                    .to_string(),
            )
        })
    }));
    let home = tempfile::tempdir().unwrap();
    let md = open_tushare(home.path(), &srv, day(2026, 12, 1)).await;
    let err = md.sync_stock_history().await.unwrap_err().to_string();
    assert!(
        err.contains("-2002") && err.contains("没有访问该接口的权限"),
        "{err}"
    );
    let c = md.history().counts().await.unwrap();
    assert_eq!((c.spans, c.listings), (0, 0));

    let offline = tempfile::tempdir().unwrap();
    let md = open(offline.path(), day(2026, 12, 1)).await;
    assert!(!md.has_stock_history_source());
    assert_eq!(md.sync_stock_history().await.unwrap(), None);
}

/// Ten January 2019 trading days of one made-up series, as a `data import` CSV.
fn bars_csv(codes: &[&str]) -> String {
    let mut out = String::from("date,code,open,high,low,close,volume,amount\n");
    let days = [
        20190102, 20190103, 20190104, 20190107, 20190108, 20190109, 20190110, 20190111, 20190114,
        20190115, 20190116,
    ];
    for code in codes {
        for (i, d) in days.iter().enumerate() {
            let c = 10.0 + i as f64 * 0.1;
            out.push_str(&format!(
                "{d},{code},{c},{},{},{c},100000,1000000\n",
                c + 0.2,
                c - 0.2
            ));
        }
    }
    out
}

fn find<'a>(stocks: &'a [StockSeries], code: &str) -> &'a StockSeries {
    stocks
        .iter()
        .find(|s| s.code == code)
        .unwrap_or_else(|| panic!("{code} not loaded"))
}

#[tokio::test]
async fn the_universe_carries_each_stocks_names_and_delisting_day() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path(), day(2026, 12, 1)).await;
    let dir = tempfile::tempdir().unwrap();
    let bars = dir.path().join("bars.csv");
    // identical series; 600013 is in no stock list (delisted long ago)
    std::fs::write(&bars, bars_csv(&["000005", "600087", "600013"])).unwrap();
    md.import_csv(&bars, &mut |_| {}).await.unwrap();
    let before = md.universe(Some(20190116), None).await.unwrap();
    assert_eq!(before.report.without_name_history, before.report.stocks);
    assert_eq!(
        before.report.names_unknown_as_of,
        Some(before.report.stocks)
    );
    assert!(
        find(&before.universe.stocks, "000005")
            .name_history
            .is_empty()
    );

    let names = dir.path().join("names.csv");
    std::fs::write(
        &names,
        "date,code,name\n\
         19901210,000005,世纪星源\n20210501,000005,ST星源\n\
         20180101,600087,*ST长油\n20200101,600087,长油\n\
         20190108,600013,某某股份\n",
    )
    .unwrap();
    md.import_names(&names).await.unwrap();
    md.history()
        .record_listings(
            &[Listing {
                code: "600013".into(),
                name: "退市某某".into(),
                status: ListStatus::Delisted,
                list_date: Some(20100101),
                delist_date: Some(20190110),
            }],
            "tushare",
            md.clock().now(),
        )
        .await
        .unwrap();

    // the resident universe is rebuilt: the history changed
    let got = md.universe(Some(20190116), None).await.unwrap();
    let stocks = &got.universe.stocks;
    let st_2021 = find(stocks, "000005");
    assert_eq!(st_2021.name, "ST星源", "today's name, from the stock list");
    assert_eq!(
        st_2021.name_history,
        spans(&[(19901210, "世纪星源"), (20210501, "ST星源")])
    );
    assert_eq!(
        st_2021.is_st_on(20190116),
        AsOf {
            value: false,
            known: true
        }
    );
    let st_2019 = find(stocks, "600087");
    assert_eq!(
        st_2019.is_st_on(20190116),
        AsOf {
            value: true,
            known: true
        }
    );
    assert_eq!(st_2019.delist_date, None);
    let delisted = find(stocks, "600013");
    assert_eq!(delisted.delist_date, Some(20190110));
    assert_eq!(delisted.name, "退市某某", "its recorded listing names it");
    assert_eq!(delisted.list_date, Some(20100101));
    assert_eq!(
        delisted.bars.len(),
        11,
        "its bars stay; the engine stops at the day"
    );
    assert!(delisted.listed_on(20190110) && !delisted.listed_on(20190111));
    let r = &got.report;
    assert_eq!(r.not_in_stock_list, ["600013"]);
    assert_eq!(r.delisted, 1);
    // the eight bundled stocks have no recorded names
    assert_eq!(r.without_name_history, r.stocks - 3);
    assert_eq!(r.stocks, 11);
    assert_eq!(r.names_unknown_as_of, Some(8));
    // as of a day before 600013's first recorded name, its name then is not known
    let earlier = md.universe(Some(20190107), None).await.unwrap();
    assert_eq!(earlier.report.names_unknown_as_of, Some(9));
    let whole = md.universe(None, None).await.unwrap();
    assert_eq!(whole.report.names_unknown_as_of, None);
    let json = serde_json::to_value(r).unwrap();
    assert_eq!(json["without_name_history"], 8);
    assert_eq!(json["delisted"], 1);
}
