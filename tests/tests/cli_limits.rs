//! Limits that name their cap, through the real `wyckoff run --json`
//! against an in-process mock vendor: a tool result over the inline cap reaches the model
//! as a notice naming its size, the cap and where the whole result is saved; a request
//! larger than the model's context window is announced by a warning naming both figures.
//! Build the binary first (`cargo build -p wyckoff-cli`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route, Script};

async fn server(openai: Vec<wyckoff_mock_vendor::Response>) -> MockServer {
    MockServer::start_with(
        Script {
            openai,
            ..Script::default()
        },
        0,
    )
    .await
    .unwrap()
}

fn run(home: &Path, base_url: &str, extra: &[&str], prompt: &str) -> (Option<i32>, Vec<Value>) {
    let out = wyckoff_e2e::wyckoff_cli(home)
        .args([
            "run",
            "--json",
            "--provider",
            "openai",
            "--base-url",
            base_url,
        ])
        .args(extra)
        .arg(prompt)
        .env("OPENAI_API_KEY", "sk-e2e-limits-0000000000")
        .output()
        .unwrap();
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out.status.code(), events)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_result_over_the_cap_reaches_the_model_as_a_notice_naming_the_cap() {
    // `seq 1 4000` prints 18,893 characters: well over the inline cap.
    let server = server(vec![
        OpenAiStream::new()
            .role()
            .tool_call(
                0,
                "call_big",
                "exec_command",
                &[json!({"command": "seq 1 4000"}).to_string()],
            )
            .finish("tool_calls")
            .done()
            .response(),
        OpenAiStream::text_response(&["输出太长，已另存。"]),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_path_buf();
    let base = format!("{}/v1", server.url());
    let (code, events) = tokio::task::spawn_blocking(move || {
        run(&h, &base, &["--approve", "exec_command"], "列出 1 到 4000")
    })
    .await
    .unwrap();
    assert_eq!(code, Some(0), "{events:?}");
    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 2);
    let body: Value = serde_json::from_str(&requests[1].raw_body).unwrap();
    let tool_message = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    let first = tool_message.lines().next().unwrap();
    // "… tool result N chars exceeds the CAP-char cap …": both figures, the size above the cap
    let figure = |before: &str, after: &str| -> usize {
        first
            .split(before)
            .nth(1)
            .and_then(|s| s.split(after).next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("the notice does not name {before:?}…{after:?}: {first}"))
    };
    let (size, cap) = (
        figure("tool result ", " chars"),
        figure("exceeds the ", "-char cap"),
    );
    assert!(size > cap && cap > 0, "{first}");
    assert!(
        tool_message.chars().count() < size,
        "only a preview reaches the model"
    );
    // …and where the whole result is: a file under the data home that holds it all
    let saved = first
        .split("完整结果已保存到 ")
        .nth(1)
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or_else(|| panic!("no path in {first}"));
    assert!(Path::new(saved).starts_with(home.path()), "{saved}");
    let whole = std::fs::read_to_string(saved).unwrap();
    assert_eq!(whole.chars().count(), size);
    assert!(
        whole.contains("3999\\n4000"),
        "{}",
        &whole[whole.len() - 80..]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_over_the_context_window_is_announced_naming_the_window() {
    let server = server(vec![OpenAiStream::text_response(&["好的。"])]).await;
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_path_buf();
    let base = format!("{}/v1", server.url());
    // The system prompt and tool schemas alone are far over 200 tokens.
    let (code, events) =
        tokio::task::spawn_blocking(move || run(&h, &base, &["--context-window", "200"], "你好"))
            .await
            .unwrap();
    assert_eq!(code, Some(0), "{events:?}");
    let warning = events
        .iter()
        .filter(|e| e["type"] == "warning")
        .filter_map(|e| e["message"].as_str())
        .find(|m| m.contains("context window"))
        .unwrap_or_else(|| panic!("no window warning in {events:?}"));
    assert!(
        warning.contains("the 200-token context window cap"),
        "{warning}"
    );
    // the warning comes before the model is asked
    let at = |ty: &str| events.iter().position(|e| e["type"] == ty).unwrap();
    assert!(at("warning") < at("model_start"), "{events:?}");
}
