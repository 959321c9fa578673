//! End-to-end: background tools through the real `wyckoff run --json`:
//! the model (an in-process mock vendor speaking OpenAI's stream over real HTTP) starts a
//! background task; the run shows its progress as `background_task` events, injects the
//! completion notification (§7.4) into a turn of its own, lets the model answer it, and
//! exits 0. Needs `cargo build -p wyckoff-cli` first (scripts/test builds every binary).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route, Script};

struct Run {
    code: Option<i32>,
    events: Vec<Value>,
    stderr: String,
}

impl Run {
    fn types(&self) -> Vec<&str> {
        self.events
            .iter()
            .map(|e| e["type"].as_str().unwrap_or("?"))
            .collect()
    }
}

fn run_wyckoff(home: &Path, base_url: &str, extra: &[&str], prompt: &str) -> Run {
    let mut cmd = Command::new(wyckoff_e2e::binary("wyckoff"));
    cmd.args([
        "run",
        "--json",
        "--provider",
        "openai",
        "--base-url",
        base_url,
    ])
    .args(extra)
    .arg(prompt)
    .env("OPENAI_API_KEY", "sk-e2e-background-canary")
    .env("WYCKOFF_HOME", home)
    .env("WYCKOFF_OFFLINE", "1")
    .env_remove("HTTPS_PROXY")
    .env_remove("HTTP_PROXY")
    .env_remove("ALL_PROXY")
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let events = stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("not JSON ({e}): {l}\nstderr: {stderr}"))
        })
        .collect();
    Run {
        code: out.status.code(),
        events,
        stderr,
    }
}

fn text(t: &str) -> wyckoff_mock_vendor::Response {
    OpenAiStream::text_response(&[t])
}

#[tokio::test(flavor = "multi_thread")]
async fn a_background_report_shows_progress_then_its_completion_is_answered() {
    // The report's own model call and the turn's second round race for the next
    // response, so both get the same text; the order of the rest is fixed.
    let script = Script {
        openai: vec![
            OpenAiStream::tool_call_response(
                "call_report",
                "generate_ai_report",
                &json!({"stock_codes": ["000001"]}),
            ),
            text("已提交。"),
            text("已提交。"),
            text("研报完成：000001 在防守阵营。"),
        ],
        ..Script::default()
    };
    let server = MockServer::start_with(script, 0).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let base = format!("{}/v1", server.url());
    let home_path = home.path().to_path_buf();
    let run = tokio::task::spawn_blocking(move || {
        run_wyckoff(&home_path, &base, &[], "给 000001 生成研报")
    })
    .await
    .unwrap();
    assert_eq!(run.code, Some(0), "{:?}\n{}", run.types(), run.stderr);

    // The submission, progress from inside the task, then the finished task.
    let tasks: Vec<&Value> = run
        .events
        .iter()
        .filter(|e| e["type"] == "background_task")
        .map(|e| &e["task"])
        .collect();
    assert!(!tasks.is_empty(), "{:?}", run.types());
    let task_id = tasks[0]["task_id"].as_str().unwrap().to_owned();
    assert!(task_id.ends_with("generate_ai_report"), "{task_id}");
    assert!(
        tasks
            .iter()
            .any(|t| t["status"] == "running" && t["progress"]["stage"] == "个股诊断"),
        "{tasks:?}"
    );
    assert!(
        tasks.iter().any(|t| t["status"] == "completed"),
        "{tasks:?}"
    );

    // Two turns: the user's, then the notification's; each ends with done.
    let types = run.types();
    assert_eq!(
        types.iter().filter(|t| **t == "done").count(),
        2,
        "{types:?}"
    );
    assert_eq!(types.last(), Some(&"done"));
    let last_done = run
        .events
        .iter()
        .rev()
        .find(|e| e["type"] == "done")
        .unwrap();
    assert_eq!(last_done["text"], "研报完成：000001 在防守阵营。");

    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 4, "{requests:?}");
    // The report request carries the engine's facts for 000001 (from the bundled bars).
    let report_req = requests
        .iter()
        .find(|r| r.raw_body.contains("三阵营研报"))
        .expect("the report's model call");
    assert!(report_req.raw_body.contains("000001"));
    assert!(report_req.raw_body.contains("latest_close"));
    assert!(
        report_req.body["tools"]
            .as_array()
            .is_none_or(|t| t.is_empty()),
        "the report call offers no tools"
    );
    // The notification turn's request carries the task-notification with the task id.
    let last = requests.last().unwrap().raw_body.clone();
    assert!(
        last.contains("SYSTEM NOTIFICATION - NOT USER INPUT"),
        "{last}"
    );
    assert!(
        last.contains(&format!("<task-id>{task_id}</task-id>")),
        "{last}"
    );
    assert!(last.contains("<status>completed</status>"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_background_backtest_reports_its_days_and_the_model_answers_its_completion() {
    let script = Script {
        openai: vec![
            OpenAiStream::tool_call_response(
                "call_bt",
                "run_backtest",
                &json!({"start": "2019-12-01", "end": "2020-03-31", "hold_days": 20, "top_n": 4, "stop_loss_pct": -15}),
            ),
            text("回测已在后台运行。"),
            text("回测完成：6 笔交易。"),
        ],
        ..Script::default()
    };
    let server = MockServer::start_with(script, 0).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let base = format!("{}/v1", server.url());
    let home_path = home.path().to_path_buf();
    let run = tokio::task::spawn_blocking(move || {
        run_wyckoff(&home_path, &base, &[], "回测一下威科夫策略")
    })
    .await
    .unwrap();
    assert_eq!(run.code, Some(0), "{:?}\n{}", run.types(), run.stderr);
    let tasks: Vec<&Value> = run
        .events
        .iter()
        .filter(|e| e["type"] == "background_task")
        .map(|e| &e["task"])
        .collect();
    let task_id = tasks[0]["task_id"].as_str().unwrap().to_owned();
    assert!(task_id.ends_with("run_backtest"), "{task_id}");
    // Progress by simulated day, then the end.
    assert!(
        tasks.iter().any(|t| t["progress"]["stage"] == "逐日回测"
            && t["progress"]["detail"]
                .as_str()
                .unwrap_or("")
                .contains("2020-")),
        "{tasks:?}"
    );
    let done = tasks
        .iter()
        .rev()
        .find(|t| t["status"] == "completed")
        .unwrap();
    assert_eq!(done["task_id"], task_id.as_str());
    // The user's turn, then the completion's: each ends with done, in that order.
    let types = run.types();
    let dones: Vec<usize> = types
        .iter()
        .enumerate()
        .filter(|(_, t)| **t == "done")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(dones.len(), 2, "{types:?}");
    assert_eq!(types.last(), Some(&"done"));
    // The model's last request carries the notification with the backtest's figures.
    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 3);
    let last = &requests[2].raw_body;
    assert!(
        last.contains(&format!("<task-id>{task_id}</task-id>")),
        "{last}"
    );
    assert!(last.contains("<tool-name>run_backtest</tool-name>"));
    assert!(last.contains("total_return_pct"), "{last}");
}

/// Seed §10 through the binary: the turn `wyckoff run` starts on a finished task's
/// notification leaves a scratchpad of its own (like the user's turn), naming the task.
#[tokio::test(flavor = "multi_thread")]
async fn the_completion_turn_leaves_its_own_scratchpad() {
    let script = Script {
        openai: vec![
            OpenAiStream::tool_call_response(
                "call_report",
                "generate_ai_report",
                &json!({"stock_codes": ["000001"]}),
            ),
            text("已提交。"),
            text("已提交。"),
            text("研报完成：000001 在防守阵营。"),
        ],
        ..Script::default()
    };
    let server = MockServer::start_with(script, 0).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let base = format!("{}/v1", server.url());
    let home_path = home.path().to_path_buf();
    let run = tokio::task::spawn_blocking(move || {
        run_wyckoff(&home_path, &base, &[], "给 000001 生成研报")
    })
    .await
    .unwrap();
    assert_eq!(run.code, Some(0), "{:?}\n{}", run.types(), run.stderr);
    let task_id = run
        .events
        .iter()
        .find(|e| e["type"] == "background_task")
        .and_then(|e| e["task"]["task_id"].as_str())
        .unwrap()
        .to_owned();

    let pads: Vec<Vec<Value>> = std::fs::read_dir(home.path().join("scratchpad"))
        .unwrap()
        .map(|f| {
            std::fs::read_to_string(f.unwrap().path())
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        })
        .collect();
    assert_eq!(pads.len(), 2, "one per turn: {pads:?}");
    let user = pads.iter().find(|p| p[0]["trigger"] == "user").unwrap();
    assert!(
        user[0]["user_input"]
            .as_str()
            .unwrap()
            .contains("给 000001 生成研报")
    );
    let completion = pads
        .iter()
        .find(|p| p[0]["trigger"] == "background_completion")
        .expect("the completion turn's scratchpad");
    let types: Vec<&str> = completion
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    assert_eq!(types.first(), Some(&"init"));
    assert_eq!(types.last(), Some(&"final"), "{types:?}");
    let note = completion
        .iter()
        .find(|r| r["type"] == "notification")
        .expect("the notification it answered");
    assert_eq!(note["task_id"], task_id.as_str());
    assert_eq!(
        completion.last().unwrap()["content"],
        "研报完成：000001 在防守阵营。"
    );
    let all = pads
        .iter()
        .flatten()
        .map(Value::to_string)
        .collect::<String>();
    assert!(!all.contains("sk-e2e-background-canary"));
}
