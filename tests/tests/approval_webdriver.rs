//! WebDriver test of approvals and persistence in the real app, with the model served
//! in-process by `wyckoff-mock-vendor` (OpenAI wire format):
//! - `update_portfolio` asks for approval; "edit then run" runs with the edited
//!   arguments (invalid JSON is refused in the dialog first);
//! - "deny" gives the model the refusal as the tool result;
//! - "always allow" lets the next call run without asking until the user revokes it;
//! - the app is stopped mid-turn; the next launch shows the conversation intact with
//!   the interrupted turn marked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use thirtyfour::prelude::*;
use wyckoff_e2e::approvals::set_cash_call;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, send, shot, wait_attr, wait_for,
    wait_for_answer, wait_gone,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

/// The content of the last tool message the model was sent in request `n`.
fn last_tool_result(server: &MockServer, n: usize) -> String {
    let requests = server.requests_to(Route::Openai);
    let body: &Value = &requests[n].body;
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no tool message in request {n}: {body}"))
        .to_owned()
}

async fn approvals_then_stop_mid_turn(d: WebDriver, server: std::sync::Arc<MockServer>) {
    // Edit then run: the tool runs with 6000, not the 8000 the model asked for.
    send(&d, "把可用资金设为 8000").await;
    let dialog = wait_for(&d, By::Id("approval-dialog")).await;
    let args = wait_for(&d, By::Id("approval-args"))
        .await
        .text()
        .await
        .unwrap();
    assert!(args.contains("8000"), "{args}");
    assert!(dialog.text().await.unwrap().contains("update_portfolio"));
    shot(&d, "20-approval-dialog.png").await;
    click(&d, By::Id("approval-edit")).await;
    let editor = wait_for(&d, By::Id("approval-editor")).await;
    editor.clear().await.unwrap();
    editor
        .send_keys("{\"action\": \"set_cash\",")
        .await
        .unwrap();
    wait_for(&d, By::Id("approval-edit-error")).await;
    let run = wait_for(&d, By::Id("approval-run-edited")).await;
    assert!(
        !run.is_enabled().await.unwrap(),
        "invalid JSON must not run"
    );
    editor.clear().await.unwrap();
    editor
        .send_keys("{\"action\": \"set_cash\", \"free_cash\": 6000}")
        .await
        .unwrap();
    wait_gone(&d, By::Id("approval-edit-error")).await;
    run.click().await.unwrap();
    wait_gone(&d, By::Id("approval-dialog")).await;
    wait_for_answer(&d, "可用资金已设为 6000").await;
    wait_attr(
        &d,
        By::Css(".tool-card[data-tool='update_portfolio']"),
        "data-status",
        "ok",
    )
    .await;
    let result = last_tool_result(&server, 1);
    assert!(result.contains("6000"), "{result}");
    assert!(!result.contains("8000"), "{result}");

    // Deny: the model is told the user refused, and nothing ran.
    send(&d, "再把资金改成 9000").await;
    click(&d, By::Id("approval-deny")).await;
    wait_gone(&d, By::Id("approval-dialog")).await;
    wait_for_answer(&d, "好的，资金未修改").await;
    let result = last_tool_result(&server, 3);
    assert!(
        result.contains("用户拒绝执行此操作 [update_portfolio]"),
        "{result}"
    );
    wait_for(
        &d,
        By::Css(".tool-card[data-tool='update_portfolio'][data-status='error']"),
    )
    .await;
    shot(&d, "21-approval-denied.png").await;

    // Always allow: the next call runs without asking, until the user revokes it.
    send(&d, "把资金设为 7000").await;
    click(&d, By::Id("approval-allow-always")).await;
    wait_for_answer(&d, "已设为 7000。").await;
    let chip = By::Css("#always-allowed .always-allowed-tool[data-tool='update_portfolio']");
    wait_for(&d, chip.clone()).await;
    send(&d, "再设为 7500").await;
    // No dialog stands in the way: the turn finishes on its own.
    wait_for_answer(&d, "已设为 7500。").await;
    assert!(last_tool_result(&server, 7).contains("7500"));
    shot(&d, "23-always-allowed.png").await;
    click(&d, By::Css("#always-allowed .always-allowed-revoke")).await;
    wait_gone(&d, chip).await;
    send(&d, "最后设为 7600").await;
    click(&d, By::Id("approval-deny")).await;
    wait_for_answer(&d, "未改为 7600。").await;
    assert!(last_tool_result(&server, 9).contains("用户拒绝执行此操作"));

    // A turn the model never finishes: the app stops while it runs.
    send(&d, "现在资金是多少？").await;
    wait_for(&d, By::Id("chat-stop")).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while server.requests_to(Route::Openai).len() < 11 {
        assert!(
            std::time::Instant::now() < deadline,
            "third turn never reached the model"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

async fn reopened_conversation_is_intact(d: WebDriver) {
    click(&d, By::Css("#chat-conversations li .conv-open")).await;
    let transcript = wait_for(&d, By::Id("transcript")).await;
    wait_for(&d, By::Id("chat-interrupted")).await;
    let text = transcript.text().await.unwrap();
    for expected in [
        "把可用资金设为 8000",
        "可用资金已设为 6000。",
        "再把资金改成 9000",
        "好的，资金未修改。",
        "已设为 7500。",
        "未改为 7600。",
        "现在资金是多少？",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in {text}");
    }
    wait_for(&d, By::Css(".msg.user.interrupted")).await;
    shot(&d, "22-reopened-after-restart.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn approvals_edit_and_deny_and_restart_keeps_the_conversation() {
    let server = std::sync::Arc::new(MockServer::start().await.unwrap());
    server.push(Route::Openai, set_cash_call("call_cash_1", 8000));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["可用资金已设为 6000。"]),
    );
    server.push(Route::Openai, set_cash_call("call_cash_2", 9000));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["好的，资金未修改。"]),
    );
    server.push(Route::Openai, set_cash_call("call_cash_3", 7000));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["已设为 7000。"]),
    );
    server.push(Route::Openai, set_cash_call("call_cash_4", 7500));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["已设为 7500。"]),
    );
    server.push(Route::Openai, set_cash_call("call_cash_5", 7600));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["未改为 7600。"]),
    );
    // Starts answering, then never sends another byte.
    server.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .text(&["正在查询"])
            .response()
            .stall_after(1),
    );

    let home = tempfile::tempdir().unwrap();
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);

    let s = server.clone();
    run_scenario(&driver, "approval", move |d| {
        approvals_then_stop_mid_turn(d, s)
    })
    .await;
    run_scenario(&driver, "restart", reopened_conversation_is_intact).await;
}
