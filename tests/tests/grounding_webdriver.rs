//! WebDriver test of the grounding marks in the real app, with `wyckoff-mock-vendor` as the
//! model: the model calls analyze_stock on 000001 (bundled bars) and answers with the real
//! close and an invented target price; after its one correction round (the same answer
//! again) the close links to the tool card, the target is underlined with "no source in
//! this turn's data", and the line under the answer counts them. Reopening the
//! conversation shows the same marks from the stored grounding.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use thirtyfour::prelude::*;
use wyckoff_e2e::approvals::tool_call;
use wyckoff_e2e::webdriver::{
    TauriDriver, mock_model_settings, run_scenario, send, shot, wait_for, wait_for_answer,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

async fn grounding_scenario(d: WebDriver, close: String) {
    let d = &d;
    send(d, "看看 000001 的收盘价").await;
    wait_for_answer(d, "目标价").await;

    // The sourced close: a mark that names its tool and field and leads to the card.
    let sourced = wait_for(
        d,
        By::Css(".msg.final .claim.claim-sourced[data-kind='price'][data-call-id='call_gw_1']"),
    )
    .await;
    assert!(sourced.text().await.unwrap().contains(&close));
    // The code came from the same result, and is still a stock link inside its mark.
    wait_for(
        d,
        By::Css(
            ".msg.final .claim.claim-sourced[data-kind='code'] .stock-link[data-code='000001']",
        ),
    )
    .await;
    assert_eq!(
        sourced.attr("data-path").await.unwrap().as_deref(),
        Some("latest_close")
    );
    // The invented target: dotted, with the title in the app's language (zh by default).
    let unsupported = wait_for(d, By::Css(".msg.final .claim.claim-unsupported")).await;
    assert!(unsupported.text().await.unwrap().contains("99.99"));
    assert_eq!(
        unsupported.attr("title").await.unwrap().as_deref(),
        Some("本轮数据中没有来源")
    );
    let style = unsupported
        .css_value("text-decoration-style")
        .await
        .unwrap();
    assert_eq!(style, "dotted");
    let line = wait_for(d, By::Css(".msg.final .grounding-line")).await;
    let text = line.text().await.unwrap();
    assert!(
        text.contains("2 处有来源") && text.contains("1 处无来源"),
        "{text}"
    );
    assert!(text.contains("已更正一次"), "{text}");
    shot(d, "40-grounding-marks.png").await;

    // A click on the sourced close brings its tool card into view, highlighted.
    sourced.click().await.unwrap();
    wait_for(
        d,
        By::Css(".tool-card.claim-target[data-call-id='call_gw_1']"),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn an_answers_figures_are_marked_by_their_source() {
    let home = tempfile::tempdir().unwrap();
    // The close the tool will return, from the same bundled bars through the CLI.
    let out = wyckoff_e2e::wyckoff_cli(home.path())
        .args(["analyze", "000001", "--json"])
        .output()
        .unwrap();
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let close = format!("{:.2}", d["latest_close"].as_f64().unwrap());

    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        tool_call("call_gw_1", "analyze_stock", json!({"code": "000001"})),
    );
    let answer = format!("000001 最新收盘 {close} 元，目标价 99.99 元。");
    server.push(Route::Openai, OpenAiStream::text_response(&[&answer]));
    // The correction round gets the same answer: what remains is marked.
    server.push(Route::Openai, OpenAiStream::text_response(&[&answer]));
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        &[
            ("WYCKOFF_OFFLINE", "1"),
            ("WYCKOFF_KEY_MOCK", "sk-grounding-e2e-canary-123456"),
        ],
    );
    run_scenario(&driver, "grounding", move |d| grounding_scenario(d, close)).await;
}
