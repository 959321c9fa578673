//! The queue → inbox → answer scenario's pieces, shared by the approval, schedule and inbox
//! tests: the model's `update_portfolio` call (or any tool call), a queued `wyckoff run`,
//! the free cash read back from the data home's file, and what the model was sent.

use std::path::Path;

use serde_json::{Value, json};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Response, Route};

/// The model's `update_portfolio` call setting the free cash to `amount`.
pub fn set_cash_call(id: &str, amount: u32) -> Response {
    tool_call(
        id,
        "update_portfolio",
        json!({"action": "set_cash", "free_cash": amount}),
    )
}

/// The model's call `id` of `tool` with `args`.
pub fn tool_call(id: &str, tool: &str, args: Value) -> Response {
    OpenAiStream::new()
        .role()
        .tool_call(0, id, tool, &[args.to_string()])
        .finish("tool_calls")
        .usage(1200, 30, 0)
        .done()
        .response()
}

/// `wyckoff run --json --approve queue [extra] PROMPT` over `home`, the mock vendor's key
/// given as (variable, value): the gate queued the call, whose result says it waits (no
/// tool error). The conversation's id.
pub async fn queued_run(home: &Path, key: (&str, &str), extra: &[&str], prompt: &str) -> String {
    let mut cmd = crate::wyckoff_cli(home);
    cmd.args(["run", "--json", "--approve", "queue"])
        .args(extra)
        .arg(prompt)
        .env(key.0, key.1);
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("run wyckoff"))
        .await
        .expect("the run's thread");
    assert_eq!(out.status.code(), Some(0), "{}", crate::show(&out));
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let resolved = events
        .iter()
        .find(|e| e["type"] == "approval_resolved")
        .unwrap_or_else(|| panic!("the gate did not resolve the call: {events:?}"));
    assert_eq!(resolved["outcome"], "queued");
    // Waiting is the call's result, not an error.
    assert!(events.iter().any(|e| e["type"] == "tool_result"));
    assert!(!events.iter().any(|e| e["type"] == "tool_error"));
    events
        .iter()
        .find_map(|e| {
            (e["type"] == "session")
                .then(|| e["session_id"].as_str())
                .flatten()
        })
        .expect("the run names its conversation")
        .to_owned()
}

/// The portfolio's free cash, read from the data home's file.
pub async fn free_cash(home: &Path) -> Option<f64> {
    let url = format!("sqlite://{}?mode=ro", home.join("wyckoff.db").display());
    let pool = sqlx::SqlitePool::connect(&url)
        .await
        .expect("open wyckoff.db");
    let cash: Option<(f64,)> = sqlx::query_as("SELECT free_cash FROM portfolio_cash")
        .fetch_optional(&pool)
        .await
        .expect("read the free cash");
    pool.close().await;
    cash.map(|c| c.0)
}

/// The text of the last message with `role` in request `n` to the model.
pub fn last_message(server: &MockServer, n: usize, role: &str) -> String {
    let requests = server.requests_to(Route::Openai);
    requests[n].body["messages"]
        .as_array()
        .expect("the request's messages")
        .iter()
        .rev()
        .find(|m| m["role"] == role)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no {role} message in request {n}"))
        .to_owned()
}
