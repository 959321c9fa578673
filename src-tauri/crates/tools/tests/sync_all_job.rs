//! The full-market sync started as a job of no conversation (the overview's button, a
//! schedule): progress by symbol, one at a time, cancellable, and what it fetched before
//! the cancel stays. The only live source is Eastmoney pointed at a local server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use wyckoff_agent::{BackgroundTaskManager, SystemClock};
use wyckoff_market::MarketData;
use wyckoff_market::test_support::{EastmoneyStub, kline, online_config};
use wyckoff_protocol::{TaskRequest, TaskStatus};
use wyckoff_tools::jobs::{self, JobError};

#[tokio::test]
async fn full_market_sync_runs_as_a_cancellable_task_with_progress_by_symbol() {
    let home = tempfile::tempdir().unwrap();
    let body = serde_json::json!({"rc": 0, "data": {"code": "x", "klines": [
        kline("2020-06-17", 10.0),
        kline("2020-06-18", 10.1),
        kline("2020-06-19", 10.2),
    ]}})
    .to_string();
    let server = EastmoneyStub::start_after(Duration::from_millis(20), 200, body)
        .await
        .unwrap();
    let md = Arc::new(
        MarketData::open_with(online_config(home.path(), server.base()))
            .await
            .unwrap(),
    );
    let tasks = BackgroundTaskManager::with_pool(md.pool().clone(), Arc::new(SystemClock), None)
        .await
        .unwrap();
    let mut events = tasks.subscribe();
    let task = jobs::start(&md, &tasks, &TaskRequest::SyncAll)
        .await
        .unwrap();
    assert_eq!(task.tool_name, wyckoff_tools::sync::SYNC_ALL);
    assert_eq!(task.session_id, None);
    let again = jobs::start(&md, &tasks, &TaskRequest::SyncAll)
        .await
        .unwrap_err();
    assert!(matches!(again, JobError::Refused(_)), "{again:?}");

    // the day's stock list first, then progress by symbol: the three benchmark indices
    // come first
    let mut details = Vec::new();
    let mut stages: Vec<String> = Vec::new();
    while details.len() < 6 {
        let t = events.recv().await.unwrap();
        if t.task_id != task.task_id {
            continue;
        }
        if stages.last() != Some(&t.progress.stage) {
            stages.push(t.progress.stage.clone());
        }
        if t.progress.stage == "同步" {
            details.push((t.progress.detail.clone(), t.progress.fraction));
        }
    }
    assert_eq!(
        stages[stages.len() - 2..],
        ["股票列表", "同步"],
        "{stages:?}"
    );
    assert!(details[0].0.starts_with("000001.SH (0/"), "{details:?}");
    assert!(details[1].0.starts_with("000001.SH (1/"), "{details:?}");
    let total: usize = details[1]
        .0
        .split('/')
        .nth(1)
        .unwrap()
        .trim_end_matches(')')
        .parse()
        .unwrap();
    assert!(total > 5_000, "the whole stock list: {total}");
    assert!(details[1].1.unwrap() > 0.0);

    assert!(tasks.cancel(&task.task_id));
    let done = tasks
        .wait_for(&task.task_id, Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(done.status, TaskStatus::Cancelled);
    let requests = server.requests().len();
    assert!(requests < total, "stopped early: {requests} requests");
    let sse = md.index_bars("sse", None).await.unwrap();
    assert_eq!(
        sse.as_of,
        Some(20200619),
        "what was fetched before the cancel stays"
    );
}

/// With Tushare configured (a local server speaking its wire), the full-market sync
/// stores the vendor's name and listing history and records the day's stock list as a
/// snapshot, before the bars; its result says what it recorded. (The task's own target is
/// every listed stock; one code here keeps the run short.)
#[tokio::test]
async fn the_market_sync_records_the_vendor_history_and_the_stock_list() {
    use wyckoff_market::ManualClock;
    use wyckoff_market::facade::SyncTarget;
    use wyckoff_market::history::ListStatus;
    use wyckoff_market::test_support::{TushareStub, tushare_at, tushare_small_market};

    let home = tempfile::tempdir().unwrap();
    let server = TushareStub::start(tushare_small_market).unwrap();
    let mut cfg = wyckoff_market::MarketConfig::offline(home.path());
    cfg.sources = vec![tushare_at(server.base())];
    let today = chrono::NaiveDate::from_ymd_opt(2026, 12, 4)
        .and_then(|d| d.and_hms_opt(16, 0, 0))
        .unwrap();
    cfg.clock = Arc::new(ManualClock::at_beijing(today));
    let md = MarketData::open_with(cfg).await.unwrap();
    let mut stages = Vec::new();
    let result = wyckoff_tools::sync::sync_market(
        &md,
        SyncTarget::Codes(vec!["000005".into()]),
        &mut |stage, _, _| stages.push(stage.to_owned()),
    )
    .await
    .unwrap();
    stages.dedup();
    assert_eq!(stages[..3], ["股票历史", "股票列表", "同步"], "{stages:?}");

    // the history and the list were asked for before any bars
    let apis = server.apis();
    let first_bars = apis.iter().position(|a| a == "daily");
    let last_history = apis
        .iter()
        .rposition(|a| a == "namechange" || a == "stock_basic");
    assert!(
        matches!((last_history, first_bars), (Some(h), Some(b)) if h < b),
        "{apis:?}"
    );

    assert_eq!(result["stock_list"]["ok"], true, "{result}");
    assert_eq!(result["stock_list"]["stocks"], 2);
    assert_eq!(result["stock_list"]["source"], "tushare");
    assert_eq!(result["stock_list"]["snapshot"]["day"], 20261204);
    assert_eq!(result["stock_history"]["source"], "tushare");
    assert_eq!(result["stock_history"]["names"], 5);
    assert_eq!(result["stock_history"]["delisted"], 1);
    assert_eq!(result["total"], 1);

    let history = md.history();
    let snapshots = history.snapshots().await.unwrap();
    // the vendor dated every name before the snapshot saw the list: nothing first-seen
    assert_eq!(
        snapshots
            .iter()
            .map(|s| (s.day, s.stocks, s.new_names))
            .collect::<Vec<_>>(),
        [(20261204, 2, 0)]
    );
    let st = history.of("000005").await.unwrap();
    let names: Vec<(u32, &str, bool)> = st
        .spans
        .iter()
        .map(|s| (s.from, s.name.as_str(), s.first_seen))
        .collect();
    assert_eq!(
        names,
        [(19901210, "世纪星源", false), (20210501, "ST星源", false)]
    );
    let gone = history.of("600087").await.unwrap();
    let listing = gone.listing.unwrap();
    assert_eq!(
        (listing.status, listing.delist_date),
        (ListStatus::Delisted, Some(20140605))
    );
}

/// A stock list and a name history that fail are said in the result; the bars are synced
/// all the same.
#[tokio::test]
async fn a_failed_stock_list_and_history_leave_the_bars_sync_standing() {
    use wyckoff_market::facade::SyncTarget;
    use wyckoff_market::test_support::tushare_at;

    let home = tempfile::tempdir().unwrap();
    let body = serde_json::json!({"rc": 0, "data": {"code": "x", "klines": [
        kline("2020-06-17", 10.0),
        kline("2020-06-18", 10.1),
    ]}})
    .to_string();
    // Eastmoney answers kline JSON to every request, the stock list's included
    let eastmoney = EastmoneyStub::start(200, body).await.unwrap();
    // nothing listens here: Tushare's history cannot be fetched
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let mut cfg = online_config(home.path(), eastmoney.base());
    cfg.sources.push(tushare_at(&dead));
    let md = MarketData::open_with(cfg).await.unwrap();
    let result = wyckoff_tools::sync::sync_market(
        &md,
        SyncTarget::Codes(vec!["000001".into()]),
        &mut |_, _, _| {},
    )
    .await
    .unwrap();
    assert_eq!(result["stock_list"]["ok"], false, "{result}");
    assert!(
        result["stock_list"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("stock list")),
        "{result}"
    );
    assert!(
        result["stock_history"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("tushare")),
        "{result}"
    );
    assert_eq!(
        (result["updated"].as_u64(), result.get("error")),
        (Some(1), None),
        "{result}"
    );
    assert!(md.history().snapshots().await.unwrap().is_empty());
}
