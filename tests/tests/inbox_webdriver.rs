//! WebDriver test of the approval inbox in the real app, the model served
//! in-process by `wyckoff-mock-vendor` and the requests queued by the real `wyckoff run
//! --approve queue` on the app's home:
//! - a `write_file` queued before the app starts: the sidebar badge says 1; the inbox
//!   shows who asked, the approval dialog's preview (path and diff) and the arguments;
//!   allowed, the file is written, the badge goes away, the request shows allowed by the
//!   app, the approval log has the decision by "app", and its conversation opens in the
//!   chat with the follow-up answer;
//! - an `update_portfolio` queued by another process while the app runs: the app's inbox
//!   watcher brings the badge back to 1; denied with a reason, the portfolio is unchanged,
//!   the model is told the reason, and the log has the denial by "app";
//! - one queued with a 5 s expiry and left alone: the watcher refuses it (expired, by
//!   "expiry", in the log too) and the model is told; the portfolio is unchanged.
//!
//! Needs `cargo build -p wyckoff-cli` and the app built first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use thirtyfour::prelude::*;
use wyckoff_e2e::approvals::{free_cash, last_message, queued_run};
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, shot, wait_attr, wait_for,
    wait_for_answer, wait_gone,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

const KEY: (&str, &str) = ("WYCKOFF_KEY_MOCK", "sk-inbox-e2e-123456");

/// Waits until the model has been sent `n` requests (a follow-up turn reached it).
async fn wait_requests(server: &MockServer, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.requests_to(Route::Openai).len() < n {
        assert!(
            Instant::now() < deadline,
            "the model got {} requests, not {n}",
            server.requests_to(Route::Openai).len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The badge's count, waiting up to `within` (the app's watcher reads the inbox every 15 s).
async fn wait_badge(d: &WebDriver, want: &str, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let got = match d.find(By::Id("nav-inbox")).await {
            Ok(b) => b.attr("data-pending").await.ok().flatten(),
            Err(_) => None,
        };
        if got.as_deref() == Some(want) {
            if want == "0" {
                assert!(d.find(By::Id("inbox-badge")).await.is_err());
            } else {
                let shown = d.find(By::Id("inbox-badge")).await.unwrap();
                assert_eq!(shown.text().await.unwrap(), want);
            }
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the inbox badge never said {want} (last {got:?})"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn scenario(d: WebDriver, server: std::sync::Arc<MockServer>, home: PathBuf, plan: PathBuf) {
    // The request queued before the app started: counted at once.
    wait_badge(&d, "1", Duration::from_secs(20)).await;
    click(&d, By::Id("nav-inbox")).await;
    wait_for(&d, By::Id("inbox-page")).await;
    let pending = By::Css(".inbox-request[data-status='pending'][data-tool='write_file']");
    let card = wait_for(&d, pending.clone()).await;
    let id = card.attr("data-request-id").await.unwrap().unwrap();
    assert_eq!(
        card.find(By::Css(".inbox-requested-by"))
            .await
            .unwrap()
            .attr("data-requested-by")
            .await
            .unwrap()
            .as_deref(),
        Some("conversation")
    );
    // The approval dialog's preview: the resolved path and the diff.
    let path = card.find(By::Id("approval-path")).await.unwrap();
    assert_eq!(path.text().await.unwrap(), plan.display().to_string());
    let removed = card
        .find(By::Css("#approval-diff .diff-del"))
        .await
        .unwrap();
    let added = card
        .find(By::Css("#approval-diff .diff-add"))
        .await
        .unwrap();
    assert_eq!(
        (
            removed.text().await.unwrap().as_str(),
            added.text().await.unwrap().as_str()
        ),
        ("-b", "+B")
    );
    let args = card.find(By::Css(".inbox-args")).await.unwrap();
    assert!(args.text().await.unwrap().contains("plan.md"));
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), "a\nb\nc\n");
    shot(&d, "inbox-pending-preview.png").await;

    // Allowed: the call runs with the arguments shown.
    card.find(By::Css(".inbox-allow"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let decided = By::Css(format!(
        ".inbox-request[data-request-id='{id}'][data-status='allowed']"
    ));
    let card = wait_for(&d, decided).await;
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), "a\nB\nc\n");
    assert_eq!(
        card.find(By::Css(".inbox-decided"))
            .await
            .unwrap()
            .attr("data-decided-by")
            .await
            .unwrap()
            .as_deref(),
        Some("app")
    );
    wait_badge(&d, "0", Duration::from_secs(5)).await;
    let logged = wait_for(
        &d,
        By::Css(format!(
            "#approval-log .inbox-log-row[data-request-id='{id}'][data-decision='allowed'][data-decided-by='app']"
        )),
    )
    .await;
    assert!(logged.text().await.unwrap().contains("write_file"));
    assert!(logged.text().await.unwrap().contains("应用"));
    // The conversation was told in a follow-up turn.
    wait_requests(&server, 3).await;
    let told = last_message(&server, 2, "user");
    assert!(told.contains(&id), "{told}");
    shot(&d, "inbox-allowed.png").await;

    // Its conversation opens in the chat, with the follow-up answer.
    card.find(By::Css(".inbox-open-conversation"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_attr(&d, By::Id("nav-chat"), "class", "active").await;
    wait_for_answer(&d, "已写入计划。").await;
    click(&d, By::Id("nav-inbox")).await;

    // Queued by another process while the app runs: the watcher finds it.
    queued_run(&home, KEY, &[], "把现金设为 5000").await;
    wait_badge(&d, "1", Duration::from_secs(40)).await;
    let pending = By::Css(".inbox-request[data-status='pending'][data-tool='update_portfolio']");
    let card = wait_for(&d, pending.clone()).await;
    let id = card.attr("data-request-id").await.unwrap().unwrap();
    assert!(
        card.find(By::Css(".inbox-args"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
            .contains("5000")
    );
    card.find(By::Css(".inbox-deny"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    card.find(By::Css(".inbox-deny-reason"))
        .await
        .unwrap()
        .send_keys("仓位先不动")
        .await
        .unwrap();
    card.find(By::Css(".inbox-deny-confirm"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(
        &d,
        By::Css(format!(
            ".inbox-request[data-request-id='{id}'][data-status='denied']"
        )),
    )
    .await;
    wait_gone(&d, pending).await;
    wait_badge(&d, "0", Duration::from_secs(5)).await;
    assert_eq!(
        free_cash(&home).await,
        None,
        "a denied call changed the portfolio"
    );
    wait_for(
        &d,
        By::Css(format!(
            "#approval-log .inbox-log-row[data-request-id='{id}'][data-decision='denied'][data-decided-by='app']"
        )),
    )
    .await;
    wait_requests(&server, 6).await;
    let told = last_message(&server, 5, "user");
    assert!(told.contains(&id) && told.contains("仓位先不动"), "{told}");
    assert_eq!(free_cash(&home).await, None);
    shot(&d, "inbox-denied-log.png").await;

    // Nobody answers within its expiry: the app's watcher refuses it and tells the model.
    queued_run(&home, KEY, &["--approval-expiry", "5s"], "把现金设为 9000").await;
    let expired = wait_for_within(
        &d,
        By::Css(".inbox-request[data-tool='update_portfolio'][data-status='expired']"),
        Duration::from_secs(45),
    )
    .await;
    let id = expired.attr("data-request-id").await.unwrap().unwrap();
    wait_for(
        &d,
        By::Css(format!(
            ".inbox-request[data-request-id='{id}'] .inbox-decided[data-decided-by='expiry']"
        )),
    )
    .await;
    assert!(
        expired.find(By::Css(".inbox-allow")).await.is_err(),
        "an expired request cannot be allowed"
    );
    wait_for(
        &d,
        By::Css(format!(
            "#approval-log .inbox-log-row[data-request-id='{id}'][data-decision='expired'][data-decided-by='expiry']"
        )),
    )
    .await;
    wait_badge(&d, "0", Duration::from_secs(5)).await;
    wait_requests(&server, 9).await;
    let told = last_message(&server, 8, "user");
    assert!(
        told.contains(&id) && told.contains("expired before anyone answered"),
        "{told}"
    );
    assert_eq!(free_cash(&home).await, None);
}

/// The first element matching `by` within `within` (longer than the usual wait: the
/// app's watcher passes every 15 s).
async fn wait_for_within(d: &WebDriver, by: By, within: Duration) -> WebElement {
    let deadline = Instant::now() + within;
    loop {
        if let Ok(e) = d.find(by.clone()).await {
            return e;
        }
        assert!(Instant::now() < deadline, "{by:?} never appeared");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn the_inbox_shows_the_preview_and_answers_from_the_window() {
    let research = tempfile::tempdir().unwrap();
    let research_dir = research.path().canonicalize().unwrap();
    let plan = research_dir.join("plan.md");
    std::fs::write(&plan, "a\nb\nc\n").unwrap();

    let server = std::sync::Arc::new(MockServer::start().await.unwrap());
    // The first run: write_file, queued.
    server.push(
        Route::Openai,
        OpenAiStream::tool_call_response(
            "call_write",
            "write_file",
            &json!({"path": plan, "content": "a\nB\nc\n"}),
        ),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["修改在等待你的批准。"]),
    );
    // The app's follow-up turn after the allow.
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["已写入计划。"]),
    );
    // The second run (while the app runs): update_portfolio, queued.
    server.push(
        Route::Openai,
        OpenAiStream::tool_call_response(
            "call_cash",
            "update_portfolio",
            &json!({"action": "set_cash", "free_cash": 5000}),
        ),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["调仓在等待你的批准。"]),
    );
    // The app's follow-up turn after the deny.
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["好的，现金不变。"]),
    );
    // The third run (while the app runs): update_portfolio, queued for 5 s only.
    server.push(
        Route::Openai,
        OpenAiStream::tool_call_response(
            "call_cash_late",
            "update_portfolio",
            &json!({"action": "set_cash", "free_cash": 9000}),
        ),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["调仓在等待你的批准。"]),
    );
    // The app's follow-up turn after the expiry.
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["请求已过期，现金不变。"]),
    );

    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_path_buf();
    mock_model_settings(&h, &format!("{}/v1", server.url()));
    let mut settings: Value =
        serde_json::from_slice(&std::fs::read(h.join("settings.json")).unwrap()).unwrap();
    settings["file_roots"] = json!([research_dir.display().to_string()]);
    std::fs::write(h.join("settings.json"), settings.to_string()).unwrap();

    queued_run(&h, KEY, &[], "把计划里的 b 改成 B").await;
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), "a\nb\nc\n");

    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(&h, xdg.path(), &[("WYCKOFF_OFFLINE", "1"), KEY]);
    let s = server.clone();
    run_scenario(&driver, "inbox", move |d| scenario(d, s, h, plan)).await;
}
