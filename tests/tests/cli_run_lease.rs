//! One turn per conversation holds across processes: while `wyckoff run --session ID`
//! waits on its model, a second `wyckoff run --session ID` from another process is
//! refused as busy before it stores or sends anything; once the first has ended, the
//! conversation takes turns again. Needs the binaries (`scripts/test` builds them).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

fn run(home: &Path, base: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(wyckoff_e2e::binary("wyckoff"));
    cmd.args(["run", "--json", "--provider", "openai", "--base-url", base])
        .args(args)
        .env("OPENAI_API_KEY", "sk-e2e-lease-canary")
        .env("WYCKOFF_HOME", home)
        .env("WYCKOFF_OFFLINE", "1")
        .env_remove("HTTPS_PROXY")
        .env_remove("HTTP_PROXY")
        .env_remove("ALL_PROXY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn events(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

async fn output(cmd: Command) -> Output {
    let mut cmd = cmd;
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_process_is_refused_while_a_turn_runs_in_the_conversation() {
    let server = MockServer::start().await.unwrap();
    server.push(Route::Openai, OpenAiStream::text_response(&["记住了。"]));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["第一进程的回答。"]).gated("hold"),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["又轮到我了。"]),
    );
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let base = format!("{}/v1", server.url());

    let first = output(run(h, &base, &["我关注平安银行"])).await;
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let id = events(&first)[0]["session_id"].as_str().unwrap().to_owned();

    // Process A: its model call is held.
    let a = run(h, &base, &["--session", &id, "第一个问题"])
        .spawn()
        .unwrap();
    let started = Instant::now();
    while server.requests_to(Route::Openai).len() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "A made no model call"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Process B on the same conversation: refused as busy, nothing sent.
    let b = output(run(h, &base, &["--session", &id, "第二个问题"])).await;
    let said = String::from_utf8_lossy(&b.stderr);
    assert_eq!(b.status.code(), Some(2), "{said}");
    assert!(said.contains("in another process"), "{said}");
    assert!(said.contains(&id), "{said}");
    assert_eq!(server.requests_to(Route::Openai).len(), 2);

    server.open_gate("hold");
    let a_out = tokio::task::spawn_blocking(move || a.wait_with_output().unwrap())
        .await
        .unwrap();
    assert!(
        a_out.status.success(),
        "{}",
        String::from_utf8_lossy(&a_out.stderr)
    );

    // A's turn is stored whole, B's message never was; the conversation runs turns again.
    let again = output(run(h, &base, &["--session", &id, "现在呢"])).await;
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let last = server.requests_to(Route::Openai).pop().unwrap();
    let body = last.raw_body;
    assert!(body.contains("第一进程的回答。"), "{body}");
    assert!(!body.contains("第二个问题"), "{body}");
}
