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

    // progress by symbol: the three benchmark indices come first
    let mut details = Vec::new();
    while details.len() < 6 {
        let t = events.recv().await.unwrap();
        if t.task_id == task.task_id && t.progress.stage == "同步" {
            details.push((t.progress.detail.clone(), t.progress.fraction));
        }
    }
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
