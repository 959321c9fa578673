#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use wyckoff_protocol::TaskStatus;
use wyckoff_session::domain::market::MarketConfig;

use super::*;
use crate::commands::error::CommandErrorKind;
use crate::commands::test_desk;

async fn offline(dir: &std::path::Path) -> Arc<MarketData> {
    Arc::new(
        MarketData::open_with(MarketConfig::offline(dir))
            .await
            .unwrap(),
    )
}

#[tokio::test]
async fn offline_overview_says_what_is_missing_instead_of_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let desk = test_desk::offline(tmp.path()).await;
    let o = build_overview(&desk).await.unwrap();
    let codes: Vec<&str> = o.indices.iter().map(|i| i.code.as_str()).collect();
    assert_eq!(codes, ["000001.SH", "399001.SZ", "399006.SZ", "000300.SH"]);
    for i in &o.indices {
        assert_eq!(
            (i.close, i.change_pct, i.date.as_deref()),
            (None, None, None)
        );
        assert_eq!(i.data_status, "unavailable");
    }
    assert_eq!(o.regime, "UNKNOWN");
    // No index bars offline: said as a code the page words, not as Chinese text.
    assert_eq!(
        o.regime_reasons,
        [wyckoff_session::domain::engine::RegimeReason::NoBenchmarkBars]
    );
    // 8 bundled stocks are far below the breadth sample: how many, and how many it needs.
    assert!(!o.breadth.available);
    let sample = o.breadth.sample_size.unwrap();
    let need = o.breadth.min_sample.unwrap();
    assert!(sample > 0 && sample < need, "{sample} of {need}");
}

#[test]
fn an_index_quote_comes_from_its_last_two_bars() {
    let bar = |date, close| wyckoff_session::domain::market::Bar {
        date,
        open: close,
        high: close,
        low: close,
        close,
        volume: 1.0,
        amount: 1.0,
        turnover: None,
    };
    let r = |bars: Vec<wyckoff_session::domain::market::Bar>| {
        wyckoff_session::domain::market::BarsResult {
            code: "000001.SH".into(),
            name: Some("上证指数".into()),
            as_of: bars.last().map(|b| b.date),
            bars,
            source: Some("eastmoney".into()),
            data_status: wyckoff_session::domain::market::DataStatus::Ok,
            expected_last_date: None,
            notes: vec![],
            corrupt_rows: vec![],
        }
    };
    let q = index_quote(&r(vec![bar(20260601, 3000.0), bar(20260602, 3030.0)]));
    assert_eq!(q.close, Some(3030.0));
    assert_eq!(q.change_pct, Some(1.0));
    assert_eq!(q.date.as_deref(), Some("2026-06-02"));
    assert_eq!(q.data_status, "ok");
    let one = index_quote(&r(vec![bar(20260602, 3030.0)]));
    assert_eq!((one.close, one.change_pct), (Some(3030.0), None));
}

#[tokio::test]
async fn data_status_counts_are_the_caches() {
    let tmp = tempfile::tempdir().unwrap();
    let md = offline(tmp.path()).await;
    let s = build_data_status(&md).await.unwrap();
    let report = md.status().await.unwrap();
    assert_eq!(s.stocks_cached as usize, report.stocks.len());
    assert_eq!(s.indices_cached as usize, report.indices.len());
    assert_eq!(s.stale + s.fresh, s.stocks_cached);
    let newest = report.stocks.iter().map(|c| c.last_date).max();
    assert_eq!(
        s.newest_date,
        newest.map(wyckoff_session::domain::market::date::iso)
    );
    assert_eq!(s.damaged, 0);
    assert!(s.sources.is_empty(), "offline");
    assert_eq!(s.stock_list_size as usize, report.stock_list_size);
}

#[tokio::test]
async fn buttons_start_screen_and_backtest_as_tasks_of_no_conversation() {
    let tmp = tempfile::tempdir().unwrap();
    let desk = test_desk::offline(tmp.path()).await;
    let tasks = desk.services().background();

    let screen = start(
        &desk,
        &TaskRequest::Screen {
            as_of: None,
            board: None,
            limit: None,
        },
    )
    .await
    .unwrap();
    assert_eq!(screen.tool_name, "screen_stocks");
    assert_eq!(screen.session_id, None);
    let done = tasks
        .wait_for(&screen.task_id, Duration::from_secs(120))
        .await
        .unwrap();
    assert_eq!(done.status, TaskStatus::Completed, "{:?}", done.error);
    assert!(done.result.unwrap()["candidates"].is_array());

    let bt = start(
        &desk,
        &TaskRequest::Backtest {
            start: "2020-01-02".into(),
            end: "2020-06-16".into(),
            hold_days: 5,
            top_n: 2,
        },
    )
    .await
    .unwrap();
    let done = tasks
        .wait_for(&bt.task_id, Duration::from_secs(120))
        .await
        .unwrap();
    assert_eq!(done.status, TaskStatus::Completed, "{:?}", done.error);
    let result = done.result.unwrap();
    assert!(result["metrics"].is_object(), "{result}");
    assert!(result["equity_curve"].as_array().unwrap().len() > 2);
    assert!(!tasks.has_notifications(""), "nothing for any chat");
}

#[tokio::test]
async fn full_market_sync_offline_is_refused_before_a_task_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let desk = test_desk::offline(tmp.path()).await;
    let tasks = desk.services().background();
    let err = start(&desk, &TaskRequest::SyncAll).await.unwrap_err();
    assert_eq!(err.kind, CommandErrorKind::Offline, "{err:?}");
    assert!(tasks.list().is_empty(), "no task was started");
}

#[tokio::test]
async fn a_csv_import_runs_as_a_task_and_the_cache_counts_it() {
    let tmp = tempfile::tempdir().unwrap();
    let desk = test_desk::offline(tmp.path()).await;
    let tasks = desk.services().background();
    let before = build_data_status(desk.market())
        .await
        .unwrap()
        .stocks_cached;

    let csv = tempfile::tempdir().unwrap();
    std::fs::write(
        csv.path().join("moutai.csv"),
        "date,code,open,high,low,close,volume,amount\n\
         2024-01-02,600519,1700,1720,1690,1710,1000,1700000\n\
         2024-01-03,600519,1710,1730,1700,1725,1200,2000000\n",
    )
    .unwrap();
    std::fs::write(
        csv.path().join("broken.csv"),
        "date,code\nnot-a-date,600519\n",
    )
    .unwrap();
    let path = csv.path().display().to_string();
    let task = start(&desk, &TaskRequest::Import { path }).await.unwrap();
    assert_eq!(task.tool_name, wyckoff_session::reports::IMPORT_TASK);
    let done = tasks
        .wait_for(&task.task_id, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(done.status, TaskStatus::Completed, "{:?}", done.error);
    let result = done.result.unwrap();
    assert_eq!(
        (
            result["files_imported"].as_u64(),
            result["files_rejected"].as_u64()
        ),
        (Some(1), Some(1)),
        "{result}"
    );
    assert_eq!(result["bars"], 2);
    assert_eq!(
        build_data_status(desk.market())
            .await
            .unwrap()
            .stocks_cached,
        before + 1
    );

    // Only broken files: the task fails and says why, naming the file.
    let bad = tempfile::tempdir().unwrap();
    std::fs::write(
        bad.path().join("broken.csv"),
        "date,code\nnot-a-date,600519\n",
    )
    .unwrap();
    let task = start(
        &desk,
        &TaskRequest::Import {
            path: bad.path().display().to_string(),
        },
    )
    .await
    .unwrap();
    let done = tasks
        .wait_for(&task.task_id, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(done.status, TaskStatus::Failed);
    assert!(done.error.unwrap().contains("broken.csv"));

    // A path that does not exist is refused before any task starts.
    let n = tasks.list().len();
    let err = start(
        &desk,
        &TaskRequest::Import {
            path: "/no/such/folder".into(),
        },
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string().contains("/no/such/folder does not exist"),
        "{err}"
    );
    assert_eq!(tasks.list().len(), n);
}
