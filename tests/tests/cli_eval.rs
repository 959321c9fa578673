//! `wyckoff eval` through the real binary against the mock vendor over the bundled bars,
//! with scripted answers: right ones pass, a wrong label fails its check, and an answer
//! with the right close plus an invented target price is caught by the grounding (after
//! its one correction round) — the report says which, with each task's transcript.
//!
//! ```sh
//! cargo build -p wyckoff-cli
//! cargo test -p wyckoff-e2e --test cli_eval
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use wyckoff_e2e::approvals::tool_call;
use wyckoff_e2e::{show, wyckoff_cli};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

const KEY: (&str, &str) = ("WYCKOFF_KEY_MOCK", "sk-eval-e2e-123456");

async fn wyckoff(home: &Path, args: &[&str]) -> Output {
    let mut cmd = wyckoff_cli(home);
    cmd.args(args).env(KEY.0, KEY.1);
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

/// The engine's diagnosis of `code` over the bundled bars, from the binary.
async fn diagnosis(home: &Path, code: &str) -> Value {
    let out = wyckoff(home, &["analyze", code, "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn answer(server: &MockServer, code: &str, call: &str, text: &str) {
    server.push(
        Route::Openai,
        tool_call(call, "analyze_stock", json!({"code": code})),
    );
    server.push(Route::Openai, OpenAiStream::text_response(&[text]));
}

#[tokio::test(flavor = "multi_thread")]
async fn scripted_answers_pass_fail_and_the_invented_number_is_caught() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let pingan = diagnosis(h, "000001").await;
    let close = pingan["latest_close"].as_f64().unwrap();
    let health = pingan["health"].as_str().unwrap().to_owned();
    let close_601318 = diagnosis(h, "601318").await["latest_close"]
        .as_f64()
        .unwrap();
    // The pnl task's prompt: 1000 shares bought at 10.0.
    let gain = close - 10.0;

    let server = MockServer::start().await.unwrap();
    // In the task file's order.
    // close-000001-zh: right.
    answer(
        &server,
        "000001",
        "c1",
        &format!("000001 最新收盘价 {close:.2} 元。"),
    );
    // close-601318-zh: the right close and an invented target; the correction round
    // gets the same answer back.
    let invented = format!("601318 最新收盘价 {close_601318:.2} 元，目标价 99.99 元。");
    answer(&server, "601318", "c2", &invented);
    server.push(Route::Openai, OpenAiStream::text_response(&[&invented]));
    // health-000001-zh: the wrong label.
    let wrong_label = if health.contains("健康") {
        "🔴危险"
    } else {
        "🟢健康"
    };
    answer(
        &server,
        "000001",
        "c3",
        &format!("000001 的健康度是 {wrong_label}。"),
    );
    // pnl-000001-zh: right, worked step by step.
    answer(
        &server,
        "000001",
        "c4",
        &format!(
            "最新收盘 {close:.2} 元，每股盈亏 {gain:.2} 元，共 1000 股，浮动盈亏 {:.2} 元，收益率 {:.2}%。",
            gain * 1000.0,
            gain / 10.0 * 100.0
        ),
    );
    // refuse-unknown-600000-zh: right, a refusal.
    answer(
        &server,
        "600000",
        "c5",
        "本地没有 600000 的行情数据，无法给出收盘价。",
    );
    wyckoff_e2e::webdriver::mock_model_settings(h, &format!("{}/v1", server.url()));

    let report_path = h.join("eval-report.json");
    let out = wyckoff(
        h,
        &[
            "eval",
            "--json",
            "--tasks",
            "close-000001-zh,close-601318-zh,health-000001-zh,pnl-000001-zh,refuse-unknown-600000-zh",
            "--report",
            report_path.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "some fail: {}", show(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        server.pending(Route::Openai),
        0,
        "every scripted reply was used"
    );

    let by_id = |id: &str| -> &Value {
        report["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .unwrap_or_else(|| panic!("no {id} in {report}"))
    };
    let passed: Vec<(String, bool)> = report["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_str().unwrap().to_owned(), t["passed"] == true))
        .collect();
    let p = |id: &str, ok: bool| (id.to_owned(), ok);
    assert_eq!(
        passed,
        [
            p("close-000001-zh", true),
            p("close-601318-zh", false),
            p("health-000001-zh", false),
            p("pnl-000001-zh", true),
            p("refuse-unknown-600000-zh", true),
        ],
        "{report}"
    );

    // The expected close is the engine's, and the right answer's number matched it.
    let right = by_id("close-000001-zh");
    assert_eq!(right["checks"][0]["expected"].as_f64(), Some(close));
    assert_eq!(right["grounding"]["unsupported"], 0);

    // The invented target: its close check passes, the grounding catches 99.99.
    let caught = by_id("close-601318-zh");
    assert_eq!(caught["checks"][0]["passed"], true);
    assert_eq!(caught["grounding"]["flagged"], true);
    assert_eq!(
        caught["grounding"]["unsupported_figures"],
        json!(["99.99 元"])
    );
    let retries = caught["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "retry")
        .count();
    assert_eq!(retries, 1, "one correction round");

    // The wrong label fails its text check, naming the engine's.
    let wrong = by_id("health-000001-zh");
    assert_eq!(wrong["checks"][0]["check"], "text");
    assert_eq!(wrong["checks"][0]["passed"], false);
    assert_eq!(wrong["checks"][0]["expected"], health.as_str());

    // The worked pnl is derived, not unsupported.
    let pnl = by_id("pnl-000001-zh");
    assert!(pnl["grounding"]["derived"].as_u64().unwrap() >= 2, "{pnl}");
    assert_eq!(pnl["grounding"]["unsupported"], 0, "{pnl}");

    let s = &report["summary"];
    assert_eq!(
        (
            s["tasks"].as_u64(),
            s["passed"].as_u64(),
            s["failed"].as_u64()
        ),
        (Some(5), Some(3), Some(2))
    );
    assert_eq!(s["unsupported"], 1);
    // The report file holds the same, with the transcripts.
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    assert_eq!(file["summary"], *s);
    assert!(
        file["tasks"][0]["transcript"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["type"] == "done")
    );

    // A filter matching nothing is bad input.
    let out = wyckoff(h, &["eval", "--tasks", "no-such-task"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no task matches `no-such-task`"));
}
