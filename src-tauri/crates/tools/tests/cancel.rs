//! A cancelled heavy task stops its engine work. The engine of
//! `run_backtest` and `screen_stocks` runs on a thread of its own; cancelling the background
//! task must make that thread end `cancelled` — for the backtest, having screened fewer days
//! than the period has — instead of computing to the end. Each worker reports how it ended
//! (a tracing event), which these tests read. The sweep and walk-forward tasks' progress and
//! reports are checked here too (the same synthetic home).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};
use wyckoff_agent::{BackgroundTaskManager, SystemClock, Tool};
use wyckoff_engine::synthetic::{MarketShape, market};
use wyckoff_market::cache::BarTable;
use wyckoff_market::date::iso;
use wyckoff_market::{MarketConfig, MarketData};
use wyckoff_protocol::TaskStatus;

/// Everything logged in this test process.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The process-wide log (worker threads log outside any test's scope).
fn log() -> Captured {
    static LOG: OnceLock<Captured> = OnceLock::new();
    LOG.get_or_init(|| {
        let captured = Captured::default();
        let writer = captured.clone();
        tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .init();
        captured
    })
    .clone()
}

/// The first logged line containing `needle`, waiting for it up to a generous bound (a
/// liveness guard, not a measurement: a worker that never reports fails here).
async fn logged_line(log: &Captured, needle: &str) -> String {
    for _ in 0..3_000 {
        let text = String::from_utf8_lossy(&log.0.lock().unwrap()).into_owned();
        if let Some(line) = text.lines().find(|l| l.contains(needle)) {
            return line.to_owned();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no '{needle}' in 300 s");
}

/// `key=value` of a logged line.
fn field(line: &str, key: &str) -> String {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        .trim_matches('"')
        .to_owned()
}

struct Home {
    md: Arc<MarketData>,
    tasks: Arc<BackgroundTaskManager>,
    /// Trading days of the synthetic stocks.
    days: Vec<u32>,
    _dir: tempfile::TempDir,
}

/// An offline data home with 400 synthetic (seeded, labelled) stocks × 400 bars: enough
/// work that a backtest or a screen takes a while in a debug build.
async fn home() -> Home {
    let dir = tempfile::tempdir().unwrap();
    let md = Arc::new(
        MarketData::open_with(MarketConfig::offline(dir.path()))
            .await
            .unwrap(),
    );
    let m = market(MarketShape {
        stocks: 400,
        bars: 400,
        start: 20230102,
        seed: 29,
    });
    for s in &m.stocks {
        md.store()
            .upsert_bars(BarTable::Stocks, &s.code, &s.bars, "test:synthetic", true)
            .await
            .unwrap();
    }
    let tasks =
        BackgroundTaskManager::open(&dir.path().join("tasks.db"), Arc::new(SystemClock), None)
            .await
            .unwrap();
    Home {
        md,
        tasks,
        days: m.stocks[0].bars.iter().map(|b| b.date).collect(),
        _dir: dir,
    }
}

impl Home {
    fn tool(&self, name: &str) -> Arc<dyn Tool> {
        wyckoff_tools::market_tools(self.md.clone())
            .into_iter()
            .find(|t| t.spec().name == name)
            .unwrap()
    }

    /// Starts `name` as a background task, waits until it reports `stage`, cancels it and
    /// waits for the task to end cancelled.
    async fn cancel_at_stage(&self, name: &str, args: Value, stage: &str) {
        let mut events = self.tasks.subscribe();
        let task = self
            .tasks
            .start_for_user(self.tool(name), args)
            .await
            .unwrap();
        loop {
            let t = tokio::time::timeout(Duration::from_secs(300), events.recv())
                .await
                .expect("progress")
                .unwrap();
            assert!(
                !t.status.is_finished(),
                "{name} ended before its cancel: {t:?}"
            );
            if t.task_id == task.task_id && t.progress.stage == stage {
                break;
            }
        }
        assert!(self.tasks.cancel(&task.task_id));
        let done = self
            .tasks
            .wait_for(&task.task_id, Duration::from_secs(60))
            .await
            .unwrap();
        assert_eq!(done.status, TaskStatus::Cancelled);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_backtest_task_stops_its_worker_within_a_day() {
    let log = log();
    let h = home().await;
    let n = h.days.len();
    // 250 trading days, 20 slots: the funnel screens on most days.
    let args = json!({"start": iso(h.days[n - 250]), "end": iso(h.days[n - 1]), "top_n": 20});
    // "逐日回测" is reported from inside the day loop, after the first day's screen.
    h.cancel_at_stage(wyckoff_tools::backtest::NAME, args, "逐日回测")
        .await;
    // Run to the end, the worker would report `cancelled=false` with every day simulated.
    let line = logged_line(&log, "backtest worker finished").await;
    assert_eq!(field(&line, "cancelled"), "true", "{line}");
    assert_eq!(field(&line, "trading_days"), "250", "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_screen_task_stops_its_worker() {
    let log = log();
    let h = home().await;
    // "漏斗筛选" is reported just before the funnel's worker starts.
    h.cancel_at_stage(wyckoff_tools::screen::NAME, json!({}), "漏斗筛选")
        .await;
    let line = logged_line(&log, "screen worker finished").await;
    assert_eq!(field(&line, "cancelled"), "true", "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_sweep_task_stops_its_worker() {
    let log = log();
    let h = home().await;
    let n = h.days.len();
    let args = json!({
        "start": iso(h.days[n - 250]), "end": iso(h.days[n - 1]),
        "hold_days": [5, 10], "stop_loss_pct": "5,8",
    });
    // "逐日信号" is reported from the shared daily screens, before any combination runs.
    h.cancel_at_stage(wyckoff_tools::backtest::NAME, args, "逐日信号")
        .await;
    // The log is the process's: the other sweep test's worker has 6 combinations.
    let line = logged_line(&log, "combinations=4").await;
    assert!(line.contains("sweep worker finished"), "{line}");
    assert_eq!(field(&line, "cancelled"), "true", "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_task_reports_combinations_done_of_total_and_a_tagged_report() {
    let h = home().await;
    let n = h.days.len();
    let args = json!({
        "start": iso(h.days[n - 30]), "end": iso(h.days[n - 1]),
        "hold_days": "3..9:3", "entry_price_mode": ["open", "close"], "top_n": 20,
        "best_by": "return",
    });
    let mut events = h.tasks.subscribe();
    let task = h
        .tasks
        .start_for_user(h.tool(wyckoff_tools::backtest::NAME), args)
        .await
        .unwrap();
    let mut details = Vec::new();
    let done = loop {
        let t = tokio::time::timeout(Duration::from_secs(300), events.recv())
            .await
            .expect("progress")
            .unwrap();
        if t.task_id != task.task_id {
            continue;
        }
        if t.status.is_finished() {
            break t;
        }
        if t.progress.stage == "组合回测" {
            details.push(t.progress.detail.clone());
        }
    };
    assert_eq!(done.status, TaskStatus::Completed, "{done:?}");
    assert_eq!(
        details.last().map(String::as_str),
        Some("6/6 个组合"),
        "{details:?}"
    );
    let finished = h
        .tasks
        .wait_for(&task.task_id, Duration::from_secs(10))
        .await
        .unwrap();
    let result = finished.result.expect("a result");
    assert_eq!(result["kind"], "sweep");
    assert_eq!(result["rows"].as_array().unwrap().len(), 6);
    assert_eq!(result["best_by"], "return");
    assert_eq!(result["swept"], json!(["hold_days", "entry_price_mode"]));
    assert!(result["best_run"]["trades"].is_array());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_walk_forward_task_reports_window_i_of_n_and_a_tagged_report() {
    let h = home().await;
    let n = h.days.len();
    // 120 trading days, 40 in sample / 30 out: windows at 0, 30, 60 (the last one 20 days).
    let args = json!({
        "start": iso(h.days[n - 120]), "end": iso(h.days[n - 1]),
        "hold_days": [3, 5], "top_n": 20, "best_by": "return",
        "walk_forward": {"in_sample": 40, "out_of_sample": 30},
    });
    let mut events = h.tasks.subscribe();
    let task = h
        .tasks
        .start_for_user(h.tool(wyckoff_tools::backtest::NAME), args)
        .await
        .unwrap();
    let mut details = Vec::new();
    let done = loop {
        let t = tokio::time::timeout(Duration::from_secs(300), events.recv())
            .await
            .expect("progress")
            .unwrap();
        if t.task_id != task.task_id {
            continue;
        }
        if t.status.is_finished() {
            break t;
        }
        if t.progress.stage == "滚动窗口" && details.last() != Some(&t.progress.detail) {
            details.push(t.progress.detail.clone());
        }
    };
    assert_eq!(done.status, TaskStatus::Completed, "{done:?}");
    assert_eq!(
        details,
        ["第 1/3 个窗口", "第 2/3 个窗口", "第 3/3 个窗口"],
        "{details:?}"
    );
    let finished = h
        .tasks
        .wait_for(&task.task_id, Duration::from_secs(10))
        .await
        .unwrap();
    let r = finished.result.expect("a result");
    assert_eq!(r["kind"], "walk_forward");
    assert_eq!(
        r["spec"],
        json!({"in_sample": 40, "out_of_sample": 30, "step": 30})
    );
    let windows = r["windows"].as_array().unwrap();
    assert_eq!(windows.len(), 3);
    assert_eq!(windows[0]["in_sample_start"], iso(h.days[n - 120]));
    assert_eq!(windows[0]["out_of_sample_start"], iso(h.days[n - 80]));
    assert_eq!(windows[2]["out_of_sample_end"], iso(h.days[n - 1]));
    assert_eq!(windows[2]["partial"], true);
    assert!(
        r["verdict"]["text"]
            .as_str()
            .unwrap()
            .contains("个测试窗口为正")
    );
    assert!(r["out_of_sample_curve"][0]["date"].is_string());
}

#[tokio::test]
async fn bad_walk_forward_arguments_are_invalid_args() {
    let h = home().await;
    let n = h.days.len();
    let run = |wf: Value| {
        let md = h.md.clone();
        let args = json!({
            "start": iso(h.days[n - 50]), "end": iso(h.days[n - 1]), "walk_forward": wf,
        });
        async move {
            wyckoff_tools::backtest::run(&md, &args, &wyckoff_agent::ProgressHandle::silent())
                .await
                .unwrap_err()
        }
    };
    for (wf, says) in [
        (
            json!({"in_sample": 40, "out_of_sample": 10, "step": 5}),
            "步长 5 小于样本外长度 10",
        ),
        (json!({"in_sample": 0, "out_of_sample": 10}), "样本内长度"),
        (json!({"in_sample": 40}), "walk_forward 应是"),
        (
            json!({"in_sample": 40, "out_of_sample": 10, "size": 3}),
            "walk_forward 应是",
        ),
        (json!("40,x"), "IS,OOS[,STEP]"),
        // 50 trading days < 40 + 11.
        (
            json!({"in_sample": 40, "out_of_sample": 11}),
            "区间只有 50 个交易日",
        ),
    ] {
        match run(wf.clone()).await {
            wyckoff_agent::ToolError::InvalidArgs(m) => assert!(m.contains(says), "{wf}: {m}"),
            e => panic!("{wf}: {e:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_walk_forward_task_stops_its_worker() {
    let log = log();
    let h = home().await;
    let n = h.days.len();
    let args = json!({
        "start": iso(h.days[n - 250]), "end": iso(h.days[n - 1]),
        "hold_days": [5, 10, 15], "walk_forward": {"in_sample": 100, "out_of_sample": 50},
    });
    // The shared daily screens come before any window.
    h.cancel_at_stage(wyckoff_tools::backtest::NAME, args, "逐日信号")
        .await;
    // The log is the process's: the other walk-forward task's worker has 2 combinations.
    let line = logged_line(&log, "combinations=3 windows=").await;
    assert!(line.contains("walk-forward worker finished"), "{line}");
    assert_eq!(field(&line, "cancelled"), "true", "{line}");
    assert_eq!(field(&line, "windows"), "0", "{line}");
}
