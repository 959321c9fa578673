//! The full-market sync started as a job of no conversation (the overview's button, a
//! schedule): progress by symbol, one at a time, cancellable, and what it fetched before
//! the cancel stays. The only live source is Eastmoney pointed at a local server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wyckoff_agent::{BackgroundTaskManager, SystemClock};
use wyckoff_market::breaker::BreakerConfig;
use wyckoff_market::sources::SourcePolicy;
use wyckoff_market::sources::eastmoney::EastmoneyConfig;
use wyckoff_market::{ManualClock, MarketConfig, MarketData, SourceSpec};
use wyckoff_protocol::{TaskRequest, TaskStatus};
use wyckoff_tools::jobs::{self, JobError};

/// A local server answering every request with `body` (Eastmoney's kline JSON) after
/// `delay` (a slow vendor), recording each request line.
async fn serve_after(delay: Duration, body: String) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let mut buf = vec![0u8; 8192];
            let mut got = Vec::new();
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = sock.read(&mut buf).await.unwrap_or(0);
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
            let head = String::from_utf8_lossy(&got);
            log.lock()
                .unwrap()
                .push(head.lines().next().unwrap_or("").to_owned());
            tokio::time::sleep(delay).await;
            let reply = format!(
                "HTTP/1.1 200 X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(reply.as_bytes()).await;
        }
    });
    (base, seen)
}

/// Offline data home whose only live source is Eastmoney at `base`, on Friday
/// 2020-06-19 after the close (the bundled 000001 ends on Tuesday 2020-06-16).
async fn online_at(home: &std::path::Path, base: &str) -> MarketData {
    let mut cfg = MarketConfig::offline(home);
    cfg.sources = vec![SourceSpec::Eastmoney(
        EastmoneyConfig {
            kline_base: base.to_owned(),
            list_base: base.to_owned(),
            page_interval: Duration::ZERO,
            page_size: 100,
        },
        SourcePolicy {
            min_interval: Duration::ZERO,
            max_retries: 0,
            backoff_base: Duration::from_millis(1),
            backoff_max: Duration::from_millis(5),
            breaker: BreakerConfig {
                failure_threshold: 5,
                cooldown: Duration::from_secs(60),
            },
        },
    )];
    cfg.clock = Arc::new(ManualClock::at_beijing(
        chrono::NaiveDate::from_ymd_opt(2020, 6, 19)
            .unwrap()
            .and_hms_opt(16, 0, 0)
            .unwrap(),
    ));
    MarketData::open_with(cfg).await.unwrap()
}

fn kline(date: &str, close: f64) -> String {
    format!(
        "{date},{o:.2},{close:.2},{h:.2},{l:.2},100000,150000000.0,2.0,0.5,0.1,0.8",
        o = close - 0.1,
        h = close + 0.2,
        l = close - 0.2
    )
}

#[tokio::test]
async fn full_market_sync_runs_as_a_cancellable_task_with_progress_by_symbol() {
    let home = tempfile::tempdir().unwrap();
    let body = serde_json::json!({"rc": 0, "data": {"code": "x", "klines": [
        kline("2020-06-17", 10.0),
        kline("2020-06-18", 10.1),
        kline("2020-06-19", 10.2),
    ]}})
    .to_string();
    let (base, seen) = serve_after(Duration::from_millis(20), body).await;
    let md = Arc::new(online_at(home.path(), &base).await);
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
    let requests = seen.lock().unwrap().len();
    assert!(requests < total, "stopped early: {requests} requests");
    let sse = md.index_bars("sse", None).await.unwrap();
    assert_eq!(
        sse.as_of,
        Some(20200619),
        "what was fetched before the cancel stays"
    );
}
