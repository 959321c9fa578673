//! WebDriver test in the real app: changing a setting (the theme) while
//! background tasks run keeps the one background task manager of the process. Three AI
//! reports are started by the model (mock vendor) with their own model calls held, so
//! they fill the three slots; the theme is changed and saved in Settings; back in the
//! chat (after a reload, so the panel lists what the core has), the three are listed as
//! running, a fourth waits as queued (the cap still holds: no second manager with three
//! free slots), one running report is cancelled from the window and reads cancelled, and
//! the queued one takes its slot.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, send, shot, wait_attr, wait_for,
    wait_for_answer,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Response, Route};

const REPORTS: [&str; 4] = ["甲号研报", "乙号研报", "丙号研报", "丁号研报"];

fn rows(status: &str) -> By {
    By::Css(format!(
        ".task-panel .task-row[data-tool='generate_ai_report'][data-status='{status}']"
    ))
}

/// Waits until exactly `n` report rows have `status`.
async fn wait_count(d: &WebDriver, status: &str, n: usize) -> Vec<WebElement> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let found = d.find_all(rows(status)).await.unwrap();
        if found.len() == n {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "{} report rows {status}, want {n}",
            found.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn scenario(d: WebDriver, home: std::path::PathBuf) {
    let d = &d;
    // Three reports fill the three slots; their model calls are held at the mock.
    for name in &REPORTS[..3] {
        send(d, &format!("给 000001 生成{name}")).await;
        wait_for_answer(d, &format!("{name}已提交")).await;
    }
    wait_count(d, "running", 3).await;

    // The theme changes while they run.
    click(d, By::Id("nav-settings")).await;
    click(d, By::Css("#set-theme option[value='dark']")).await;
    click(d, By::Id("settings-save")).await;
    let msg = wait_for(d, By::Id("settings-message")).await;
    assert_eq!(msg.attr("class").await.unwrap().as_deref(), Some("ok"));
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.join("settings.json")).unwrap()).unwrap();
    assert_eq!(saved["theme"], json!("dark"));

    // Back in the chat, with the panel listed afresh from the core: the three still run.
    d.refresh().await.unwrap();
    // The page took the new theme (applied once the settings have loaded).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let theme = d
            .execute(
                "return document.documentElement.getAttribute('data-theme')",
                vec![],
            )
            .await
            .unwrap();
        if theme.json() == &json!("dark") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "data-theme is {:?}",
            theme.json()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    click(d, By::Id("nav-chat")).await;
    let running = wait_count(d, "running", 3).await;
    let victim = running[0].attr("data-task-id").await.unwrap().unwrap();

    // A fourth report waits for a slot: the cap is still the process's one.
    send(d, &format!("给 000001 生成{}", REPORTS[3])).await;
    wait_for_answer(d, &format!("{}已提交", REPORTS[3])).await;
    wait_count(d, "queued", 1).await;
    wait_count(d, "running", 3).await;
    shot(d, "60-tasks-after-theme-change.png").await;

    // Cancelled from the window: it reads cancelled, and the queued report takes the slot.
    let victim_row = By::Css(format!(".task-panel .task-row[data-task-id='{victim}']"));
    wait_for(d, victim_row.clone())
        .await
        .find(By::Css(".task-cancel"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let cancelled = wait_attr(d, victim_row, "data-status", "cancelled").await;
    assert!(cancelled.text().await.unwrap().contains("已取消"));
    wait_count(d, "queued", 0).await;
    wait_count(d, "running", 3).await;
    shot(d, "61-task-cancelled-after-theme-change.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn a_theme_change_keeps_running_tasks_listed_cancellable_and_capped() {
    let server = Arc::new(MockServer::start().await.unwrap());
    let push = |r: Response| server.push(Route::Openai, r);
    // Each message's tool call, then the answer to its tool result (the same marker: the
    // first match is taken and removed).
    for (i, name) in REPORTS.iter().enumerate() {
        push(
            OpenAiStream::tool_call_response(
                &format!("c_rep{i}"),
                "generate_ai_report",
                &json!({"stock_codes": ["000001"]}),
            )
            .when_body_contains(name),
        );
        push(OpenAiStream::text_response(&[&format!("{name}已提交。")]).when_body_contains(name));
    }
    // The reports' own model calls are never released (one per slot, and one for the
    // queued report once it runs).
    for _ in 0..REPORTS.len() {
        push(
            OpenAiStream::text_response(&["不会送出"])
                .when_body_contains("三阵营研报")
                .gated("never"),
        );
    }
    // The turn that hears of the cancelled report.
    push(
        OpenAiStream::text_response(&["取消已知悉。"])
            .when_body_contains("<tool-name>generate_ai_report</tool-name>"),
    );

    let home = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        &[
            ("WYCKOFF_OFFLINE", "1"),
            ("WYCKOFF_KEY_MOCK", "sk-settings-tasks-e2e-123456"),
        ],
    );
    let home_path = home.path().to_path_buf();
    run_scenario(&driver, "settings-tasks", move |d| scenario(d, home_path)).await;
}
