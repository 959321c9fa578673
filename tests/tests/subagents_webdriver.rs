//! WebDriver test of a sub-agent pane in the real app: the model (the mock
//! vendor) delegates to the research role; while the sub-agent works — its answer held back
//! at the mock — its pane in the delegate card shows its tool call with ✓ and time; released,
//! the pane shows the status and policy, and the parent answers. Reopened from the
//! conversation list, the pane shows the sub-agent's tool row again (✓ and time), with the
//! rounds and elapsed time of the result against the role's limits from the backend.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::json;
use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, send, shot, wait_attr, wait_for,
    wait_for_answer, wait_gone,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

/// Only the research sub-agent's requests carry its system prompt.
const SUB: &str = "投研团队中的研究员";

async fn pane_scenario(d: WebDriver, server: Arc<MockServer>) {
    let d = &d;
    send(d, "让研究员看看 000001").await;
    // The sub-agent's own tool call shows in the pane while it is still working.
    let tool = wait_for(
        d,
        By::Css(".tool-card[data-tool='delegate_to_research'] .subagent-tool[data-tool='analyze_stock'][data-status='ok']"),
    )
    .await;
    let live_row = tool.text().await.unwrap();
    assert!(live_row.starts_with("✓ analyze_stock "), "{live_row}");
    let pane = wait_for(d, By::Css(".subagent-pane[data-agent='research']")).await;
    assert_eq!(
        pane.attr("data-status").await.unwrap().as_deref(),
        Some("running")
    );
    assert!(pane.text().await.unwrap().contains("研究 agent"));
    // Its clock runs while it works: whole seconds, moving on.
    let limits = pane.find(By::Css(".subagent-limits")).await.unwrap();
    let first = limits.attr("data-elapsed").await.unwrap().unwrap();
    assert!(
        first.ends_with('s') && first[..first.len() - 1].parse::<u32>().is_ok(),
        "{first}"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while limits.attr("data-elapsed").await.unwrap().unwrap() == first {
        assert!(
            std::time::Instant::now() < deadline,
            "the clock stood at {first}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    shot(d, "55-subagent-pane-working.png").await;

    server.open_gate("sub");
    let done = wait_attr(
        d,
        By::Css(".subagent-pane[data-agent='research']"),
        "data-status",
        "completed",
    )
    .await;
    let policy = done.find(By::Css(".subagent-policy")).await.unwrap();
    assert_eq!(
        policy.attr("data-next-action").await.unwrap().as_deref(),
        Some("use_result")
    );
    assert!(done.text().await.unwrap().contains("偏弱"));
    wait_for_answer(d, "研究员说").await;
    shot(d, "56-subagent-pane-done.png").await;

    // Reopened: the same tool row, from what was stored with the result.
    click(d, By::Id("chat-new")).await;
    wait_gone(d, By::Css(".subagent-pane")).await;
    click(d, By::Css("#chat-conversations li .conv-open")).await;
    let reopened = wait_attr(
        d,
        By::Css(".subagent-pane[data-agent='research']"),
        "data-status",
        "completed",
    )
    .await;
    let row = wait_for(
        d,
        By::Css(".subagent-pane[data-agent='research'] .subagent-tool[data-tool='analyze_stock'][data-status='ok']"),
    )
    .await;
    assert_eq!(row.text().await.unwrap(), live_row);
    let limits = reopened
        .find(By::Css(".subagent-limits"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // rounds of the research role's 8, elapsed of its 240 s
    assert!(
        limits.starts_with("工具轮次 ") && limits.contains("/8 · ") && limits.ends_with("s/240s"),
        "{limits}"
    );
    shot(d, "57-subagent-pane-reopened.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn a_sub_agent_pane_fills_while_it_works_then_shows_its_status() {
    let server = Arc::new(MockServer::start().await.unwrap());
    server.push(
        Route::Openai,
        OpenAiStream::tool_call_response(
            "call_d",
            "delegate_to_research",
            &json!({"task": "研究任务：000001 的量价结构"}),
        )
        .when_body_contains("让研究员看看"),
    );
    server.push(
        Route::Openai,
        OpenAiStream::tool_call_response("call_a", "analyze_stock", &json!({"code": "000001"}))
            .when_body_contains(SUB),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["000001 偏弱，数据截至 2020-06-16。"])
            .when_body_contains(SUB)
            .gated("sub"),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["研究员说 000001 偏弱。"]).when_body_contains("use_result"),
    );
    let home = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        &[
            ("WYCKOFF_OFFLINE", "1"),
            ("WYCKOFF_KEY_MOCK", "sk-subagent-e2e-123456"),
        ],
    );
    let s = server.clone();
    run_scenario(&driver, "subagents", move |d| pane_scenario(d, s)).await;
}
