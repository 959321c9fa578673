//! The strategy decision's suggested sizes through the real `wyckoff run`: the scripted
//! model (the mock vendor speaking OpenAI's stream) asks for `generate_strategy_decision`,
//! the task runs in the binary under the risk rules in `settings.json`, and when it
//! completes the run prints each sized buy — the add to the held stock and the reviewed
//! candidate — with its shares, stop, risk and the limit it breaks; the task's result (as
//! the model is told of it) carries the same figures. Offline over the bundled bars.
//! Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::json;
use wyckoff_e2e::{CliHome, show};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

const DECISION: &str = "## 持仓去留\n| 000338 | 潍柴动力 | 加仓 | 放量突破 | 跌破止损清仓 |\n\n## 新候选\n000001\n\n```json\n{\"holdings\": [{\"code\": \"000338\", \"action\": \"add\", \"reason\": \"放量突破\"}]}\n```\n";

fn run(home: &Path, base: &str, prompt: &str, json: bool) -> std::process::Output {
    let mut args = vec!["run", "--provider", "openai", "--base-url", base, prompt];
    if json {
        args.insert(1, "--json");
    }
    Command::new(wyckoff_e2e::binary("wyckoff"))
        .args(args)
        .env("OPENAI_API_KEY", "sk-e2e-decision")
        .env("WYCKOFF_HOME", home)
        .env("WYCKOFF_OFFLINE", "1")
        .env_remove("HTTPS_PROXY")
        .env_remove("HTTP_PROXY")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The scripted model (the decision task's request answered with [`DECISION`] wherever it
/// falls) and a data home holding 000338 (no stop) in 100,000 yuan, one position allowed.
async fn scene() -> (MockServer, CliHome) {
    let server = MockServer::start().await.unwrap();
    // The task's own request (its system prompt names the 交易决策官) gets the decision,
    // wherever it falls among the turn's requests.
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&[DECISION]).when_body_contains("交易决策官"),
    );
    server.push(
        Route::Openai,
        OpenAiStream::tool_call_response(
            "call_decision",
            "generate_strategy_decision",
            &json!({"report_text": "## 进攻\n000001", "reviewed_codes": ["000001"]}),
        ),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["决策在后台生成。"]),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["攻防决策已完成。"]),
    );

    // One position (000338, no stop) in 100,000 yuan; Settings allow one position.
    let h = CliHome::new();
    std::fs::write(
        h.path().join("settings.json"),
        json!({"risk": {"max_positions": 1}}).to_string(),
    )
    .unwrap();
    for args in [
        &["portfolio", "cash", "in", "100000", "--date", "2020-01-02"][..],
        &[
            "portfolio",
            "fill",
            "buy",
            "000338",
            "--shares",
            "500",
            "--price",
            "10",
            "--date",
            "2020-01-02",
        ],
    ] {
        let out = h.run(args);
        assert!(out.status.success(), "{args:?}: {}", show(&out));
    }

    (server, h)
}

/// Runs the decision over [`scene`] (with `--json` when `json`), asserts it exited 0 and
/// returns the model server and the run's stdout.
async fn decide(json: bool) -> (MockServer, String) {
    let (server, h) = scene().await;
    let (home, base) = (h.path().to_path_buf(), format!("{}/v1", server.url()));
    let out = tokio::task::spawn_blocking(move || run(&home, &base, "生成攻防决策", json))
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    (server, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The task's result, as the follow-up request told the model of it, carries the same
/// `shares`.
fn assert_told_shares(server: &MockServer, shares: u64) {
    let told = server
        .requests_to(Route::Openai)
        .into_iter()
        .map(|r| r.raw_body)
        .find(|b| b.contains("holding_decisions") && !b.contains("交易决策官"))
        .expect("the model was told the decision");
    let needle = format!("\\\"shares\\\":{shares}");
    assert!(told.contains(&needle), "{needle} in {told}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decision_run_prints_the_rules_size_of_each_buy_it_may_propose() {
    let (server, stdout) = decide(false).await;

    // the held stock's add: whole lots, under a stop below its last close (13.53)
    let add = stdout
        .lines()
        .find(|l| l.starts_with("  加仓 000338"))
        .unwrap_or_else(|| panic!("the add's size: {stdout}"));
    let shares: u64 = add
        .split('：')
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(shares > 0 && shares.is_multiple_of(100), "{add}");
    let stop: f64 = add
        .split("止损 ")
        .nth(1)
        .and_then(|r| r.split('（').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(stop > 0.0 && stop < 13.53, "{add}");
    assert!(add.contains("风险 ") && add.contains("元（"), "{add}");
    assert!(
        !add.contains("持仓 2 只"),
        "an add is no new position: {add}"
    );
    // the candidate: a second position with one allowed
    let cand = stdout
        .lines()
        .find(|l| l.starts_with("  候选 000001"))
        .unwrap_or_else(|| panic!("the candidate's size: {stdout}"));
    assert!(
        cand.contains("超限") && cand.contains("持仓 2 只超过上限 1 只"),
        "{cand}"
    );

    assert_told_shares(&server, shares);
    assert!(stdout.contains("攻防决策已完成。"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_json_run_carries_the_sizes_as_a_typed_event_after_the_task() {
    let (server, stdout) = decide(true).await;
    let events: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let at = |pred: &dyn Fn(&serde_json::Value) -> bool| events.iter().position(pred);
    let sized = at(&|e| e["type"] == "decision_sizes")
        .unwrap_or_else(|| panic!("a decision_sizes event: {stdout}"));
    let ev = &events[sized];
    // It follows the decision task's completion and names that task.
    let done = at(&|e| {
        e["type"] == "background_task"
            && e["task"]["tool_name"] == "generate_strategy_decision"
            && e["task"]["status"] == "completed"
    })
    .unwrap_or_else(|| panic!("the task's completion: {stdout}"));
    assert!(done < sized, "{stdout}");
    assert_eq!(ev["task_id"], events[done]["task"]["task_id"], "{ev}");
    assert_eq!(
        events
            .iter()
            .filter(|e| e["type"] == "decision_sizes")
            .count(),
        1,
        "{stdout}"
    );

    let sizes = ev["sizes"].as_array().unwrap();
    let of = |kind: &str, code: &str| {
        sizes
            .iter()
            .find(|s| s["kind"] == kind && s["code"] == code)
            .unwrap_or_else(|| panic!("{kind} {code} in {ev}"))
    };
    // The add: whole lots under a stop below the last close (13.53), its risk and source.
    let add = &of("add", "000338")["sizing"];
    let shares = add["shares"].as_u64().unwrap();
    assert!(shares > 0 && shares.is_multiple_of(100), "{add}");
    let stop = add["stop_e6"].as_i64().unwrap();
    assert!(stop > 0 && stop < 13_530_000, "{add}");
    assert!(!add["stop_from"].as_str().unwrap().is_empty(), "{add}");
    assert!(add["risk_fen"].as_i64().unwrap() > 0, "{add}");
    assert!(add["risk_pct"].as_f64().unwrap() > 0.0, "{add}");
    assert!(add["bound"].is_array(), "{add}");
    assert!(
        of("add", "000338")["breaches"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["type"] != "positions"),
        "an add is no new position: {ev}"
    );
    // The candidate breaks the one-position limit, as a typed breach.
    let cand = of("candidate", "000001");
    assert!(
        cand["breaches"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["type"] == "positions" && b["count"] == 2 && b["limit"] == 1),
        "{cand}"
    );

    assert_told_shares(&server, shares);
    // No text lines mixed into the JSON stream.
    assert!(!stdout.contains("攻防决策的建议仓位"), "{stdout}");
}
