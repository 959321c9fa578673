//! WebDriver test of chart notes and the review page (issue 27 items 3–4) in the real app:
//! the mock model calls `annotate_chart` (no approval asked), the note is listed beside the
//! stock's chart with the agent as author, the user removes it and draws a line of their
//! own from the Note… form; the review page lists a saved screen's candidate and opens the
//! stock at its signal day. Needs `cargo build -p wyckoff-cli` first (it saves the screen).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, send, shot, wait_attr, wait_for,
    wait_for_answer,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

async fn scenario(d: WebDriver) {
    send(&d, "在 000001 的日线上框出 2019 年初的交易区间").await;
    wait_for_answer(&d, "已在图上框出交易区间").await;
    wait_attr(
        &d,
        By::Css(".tool-card[data-tool='annotate_chart']"),
        "data-status",
        "ok",
    )
    .await;

    let search = wait_for(&d, By::Id("stock-search")).await;
    search.send_keys("000001").await.unwrap();
    click(&d, By::Css(".search-hit[data-code='000001']")).await;
    wait_for(&d, By::Css("#chart-canvas canvas")).await;
    let note = wait_for(
        &d,
        By::Css("#chart-notes li.chart-note[data-author='agent'][data-kind='box']"),
    )
    .await;
    let text = note.text().await.unwrap();
    assert!(
        text.contains("区间框 2019-01-02 → 2019-03-01 · 9.5–11") && text.contains("Agent（对话"),
        "{text}"
    );
    shot(&d, "95-agent-chart-note.png").await;

    // The user removes the agent's note …
    click(&d, By::Css("#chart-notes li.chart-note .chart-note-remove")).await;
    wait_for(&d, By::Id("no-chart-notes")).await;
    // … and draws a line of their own.
    click(&d, By::Id("note-open")).await;
    let price = wait_for(&d, By::Id("note-price")).await;
    price.send_keys("10.5").await.unwrap();
    click(&d, By::Id("note-save")).await;
    let mine = wait_for(
        &d,
        By::Css("#chart-notes li.chart-note[data-author='user'][data-kind='line']"),
    )
    .await;
    assert!(mine.text().await.unwrap().contains("支撑/阻力线 10.5"));
    shot(&d, "96-user-chart-note.png").await;

    // The review page opens the saved screen's candidate at its signal day.
    click(&d, By::Id("nav-review")).await;
    click(
        &d,
        By::Css(".review-row[data-code='000001'][data-day='20190116'] .review-open"),
    )
    .await;
    wait_attr(&d, By::Id("replay-bar"), "data-cursor", "20190116").await;
    shot(&d, "97-review-opens-stock.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn the_agents_note_is_drawn_and_removable_and_review_opens_the_stock() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .tool_call(
                0,
                "call_note_1",
                "annotate_chart",
                &[json!({"code": "000001", "kind": "box", "from": "2019-01-02", "to": "2019-03-01", "low": 9.5, "high": 11.0}).to_string()],
            )
            .finish("tool_calls")
            .usage(1200, 30, 0)
            .done()
            .response(),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["已在图上框出交易区间。"]),
    );

    let home = tempfile::tempdir().unwrap();
    // A saved screen for the review page (000001 is among its candidates).
    let out = wyckoff_e2e::wyckoff_cli(home.path())
        .args(["screen", "--as-of", "2019-01-16", "--save", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(&driver, "annotations", scenario).await;
}
