//! WebDriver test of the tray and desktop notifications in the real app,
//! on the session bus `dbus-run-session` gives the suite, with two stand-ins a desktop
//! would provide: a notification daemon (tests/support/fake-notifyd.py) and the panel's
//! StatusNotifierWatcher (tests/support/fake-tray-host.py), through which the test reads
//! and clicks the tray menu exactly as a panel does (com.canonical.dbusmenu).
//!
//! The model (the mock vendor) starts an AI report whose own model call is held at the
//! mock, so the task is known to be running while the tray is read: its count says 1. The
//! tray's Show/Hide hides the window; the report is released and finishes while the window
//! is hidden: the daemon records a Notify naming the task, and the count goes back to 0.
//! Show/Hide brings the window back, where the completion's turn answered.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/tray.rs"]
mod tray;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use thirtyfour::prelude::*;
use tray::{Daemon, show_hide, wait_tray_label};
use wyckoff_e2e::webdriver::{
    TauriDriver, mock_model_settings, run_scenario, send, shot, wait_attr, wait_for,
    wait_for_answer,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Response, Route};

/// The Notify calls the daemon recorded.
fn notifications(record: &Path) -> Vec<Value> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

async fn tray_scenario(d: WebDriver, server: Arc<MockServer>, items: PathBuf, record: PathBuf) {
    let d = &d;
    wait_tray_label(&items, "后台任务：0 个运行中").await;

    // A report whose model call is held: the task runs, and the tray counts it.
    send(d, "给 000001 生成研报").await;
    wait_for_answer(d, "研报已在后台生成").await;
    wait_attr(
        d,
        By::Css(".task-panel .task-row[data-tool='generate_ai_report']"),
        "data-status",
        "running",
    )
    .await;
    wait_tray_label(&items, "后台任务：1 个运行中").await;
    assert!(
        notifications(&record).is_empty(),
        "nothing finished yet: {:?}",
        notifications(&record)
    );

    // The tray hides the window; the report finishes while it is hidden.
    show_hide(d, &items, true).await;
    server.open_gate("report");
    let deadline = Instant::now() + Duration::from_secs(20);
    let sent = loop {
        if let Some(n) = notifications(&record).into_iter().next() {
            break n;
        }
        assert!(
            Instant::now() < deadline,
            "no Notify reached the session bus"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(sent["app_name"], "Wyckoff Desk");
    assert_eq!(sent["summary"], "后台任务已完成");
    assert_eq!(sent["body"], "AI 研报 已完成");
    wait_tray_label(&items, "后台任务：0 个运行中").await;
    assert_eq!(
        notifications(&record).len(),
        1,
        "one task, one notification"
    );

    // Back from the tray: the window shows the finished task and the completion's turn.
    show_hide(d, &items, false).await;
    wait_attr(
        d,
        By::Css(".task-panel .task-row[data-tool='generate_ai_report']"),
        "data-status",
        "completed",
    )
    .await;
    wait_for_answer(d, "研报读完了").await;
    wait_for(d, By::Css(".msg.system")).await;
    shot(d, "58-tray-task-finished-while-hidden.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn a_task_finishing_while_hidden_notifies_and_the_tray_counts_it() {
    assert!(
        std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some(),
        "run under dbus-run-session (scripts/test does)"
    );
    let server = Arc::new(MockServer::start().await.unwrap());
    let push = |r: Response| server.push(Route::Openai, r);
    push(
        OpenAiStream::tool_call_response(
            "c_rep",
            "generate_ai_report",
            &json!({"stock_codes": ["000001"]}),
        )
        .when_body_contains("给 000001 生成研报"),
    );
    push(
        OpenAiStream::text_response(&["研报已在后台生成。"])
            .when_body_contains("AI 研报已提交后台执行"),
    );
    push(
        OpenAiStream::text_response(&["## 进攻\n暂无\n## 防守\n000001 平安银行"])
            .when_body_contains("三阵营研报")
            .gated("report"),
    );
    push(
        OpenAiStream::text_response(&["研报读完了。"])
            .when_body_contains("<tool-name>generate_ai_report</tool-name>"),
    );

    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("notifications.jsonl");
    let items = dir.path().join("tray-items.jsonl");
    // Both on the bus before the app starts, as on a desktop.
    let _notifyd = Daemon::start("fake-notifyd.py", &[record.to_str().unwrap()]);
    let _tray_host = Daemon::start("fake-tray-host.py", &["watch", items.to_str().unwrap()]);

    let home = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        &[
            ("WYCKOFF_OFFLINE", "1"),
            ("WYCKOFF_KEY_MOCK", "sk-tray-e2e-123456"),
        ],
    );
    let s = server.clone();
    run_scenario(&driver, "tray", move |d| tray_scenario(d, s, items, record)).await;
}
