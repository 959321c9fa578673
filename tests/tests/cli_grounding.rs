//! `wyckoff run --json` and the grounding check, through the real binary against the mock
//! vendor over the bundled bars: an answer quoting the close the tool returned is sourced
//! with no extra round; one quoting another close and a code no tool returned gets exactly
//! one correction round, and what remains is marked in the `done` event, in the stored
//! conversation and in its export.
//!
//! ```sh
//! cargo build -p wyckoff-cli
//! cargo test -p wyckoff-e2e --test cli_grounding
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use wyckoff_e2e::approvals::tool_call;
use wyckoff_e2e::{show, wyckoff_cli};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

const KEY: (&str, &str) = ("WYCKOFF_KEY_MOCK", "sk-grounding-e2e-123456");

async fn wyckoff(home: &Path, args: &[&str]) -> Output {
    let mut cmd = wyckoff_cli(home);
    cmd.args(args).env(KEY.0, KEY.1);
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

fn events(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn done(events: &[Value]) -> &Value {
    events.iter().find(|e| e["type"] == "done").expect("done")
}

fn grounding_retries(events: &[Value]) -> usize {
    events
        .iter()
        .filter(|e| {
            e["type"] == "retry"
                && e["reason"]
                    .as_str()
                    .is_some_and(|r| r.starts_with("grounding"))
        })
        .count()
}

/// The close of 000001 in the bundled bars, as the engine reports it.
async fn close_000001(home: &Path) -> f64 {
    let out = wyckoff(home, &["analyze", "000001", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    d["latest_close"].as_f64().unwrap()
}

fn classes(g: &Value) -> Vec<(String, String)> {
    g["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["text"].as_str().unwrap().to_owned(),
                c["support"]["type"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn pair(t: &str, c: &str) -> (String, String) {
    (t.to_owned(), c.to_owned())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_close_from_the_tool_is_sourced_to_its_call_and_field() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let close = close_000001(h).await;
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        tool_call("call_an_1", "analyze_stock", json!({"code": "000001"})),
    );
    let answer = format!("平安银行 000001 最新收盘 {close:.2} 元。");
    server.push(Route::Openai, OpenAiStream::text_response(&[&answer]));
    wyckoff_e2e::webdriver::mock_model_settings(h, &format!("{}/v1", server.url()));

    let out = wyckoff(h, &["run", "--json", "看看平安银行"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let ev = events(&out);
    assert_eq!(grounding_retries(&ev), 0);
    assert_eq!(server.requests_to(Route::Openai).len(), 2);
    let g = &done(&ev)["grounding"];
    assert_eq!(
        classes(g),
        [
            pair("000001", "sourced"),
            pair(&format!("{close:.2} 元"), "sourced")
        ]
    );
    assert_eq!(
        (g["sourced"].as_u64(), g["unsupported"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(
        g["claims"][1]["support"]["source"],
        json!({"type": "tool", "call_id": "call_an_1", "tool": "analyze_stock", "path": "latest_close"})
    );

    // Text mode prints the count under the answer.
    server.push(
        Route::Openai,
        tool_call("call_an_2", "analyze_stock", json!({"code": "000001"})),
    );
    server.push(Route::Openai, OpenAiStream::text_response(&[&answer]));
    let out = wyckoff(h, &["run", "看看平安银行"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("numbers: 2 sourced, 0 unsupported"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_close_and_an_invented_code_get_one_correction_then_stay_marked() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let close = close_000001(h).await;
    // Far from the real close, so no rounding can make it right.
    let wrong = format!("{:.2}", close * 3.0 + 1.0);
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        tool_call("call_an_1", "analyze_stock", json!({"code": "000001"})),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&[format!("000001 最新收盘 {wrong} 元，可换成 601318。")]),
    );
    // The corrected answer drops the invented code but keeps the wrong close.
    let remaining = format!("000001 最新收盘 {wrong} 元。");
    server.push(Route::Openai, OpenAiStream::text_response(&[&remaining]));
    wyckoff_e2e::webdriver::mock_model_settings(h, &format!("{}/v1", server.url()));

    let out = wyckoff(h, &["run", "--json", "看看平安银行"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let ev = events(&out);
    assert_eq!(grounding_retries(&ev), 1, "{ev:?}");
    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 3, "exactly one correction round");
    // The model was told which figures have no source.
    let note = &requests[2].raw_body;
    assert!(note.contains(&format!("「{wrong} 元」")), "{note}");
    assert!(note.contains("「601318」"), "{note}");

    let d = done(&ev);
    assert_eq!(d["text"], remaining.as_str());
    let g = &d["grounding"];
    assert_eq!(
        classes(g),
        [
            pair("000001", "sourced"),
            pair(&format!("{wrong} 元"), "unsupported")
        ]
    );
    assert_eq!(g["corrected"], true);
    // The span points at the figure in the answer (characters, not bytes).
    let chars: Vec<char> = remaining.chars().collect();
    let (start, end) = (
        g["claims"][1]["start"].as_u64().unwrap() as usize,
        g["claims"][1]["end"].as_u64().unwrap() as usize,
    );
    assert_eq!(
        chars[start..end].iter().collect::<String>(),
        format!("{wrong} 元")
    );

    // Stored with the answer: `conversations show` carries it typed and says it in text.
    let session = ev
        .iter()
        .find_map(|e| e["session_id"].as_str())
        .unwrap()
        .to_owned();
    let out = wyckoff(h, &["conversations", "show", &session, "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let export: Value = serde_json::from_slice(&out.stdout).unwrap();
    let answers: Vec<&Value> = export["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m.get("grounding").is_some())
        .collect();
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["text"], remaining.as_str());
    assert_eq!(answers[0]["grounding"], *g);
    let text = wyckoff(h, &["conversations", "show", &session]).await;
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(
        text.contains(&format!(
            "(numbers: 1 sourced, 1 unsupported (「{wrong} 元」), after one correction)"
        )),
        "{text}"
    );
    // The corrected first answer and the note are not in the conversation.
    let raw = String::from_utf8_lossy(&out.stdout);
    assert!(!raw.contains("601318"), "{raw}");
}
