#![allow(clippy::unwrap_used, reason = "test helpers outside #[test] fns")]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;
use wyckoff_mock_vendor::{
    ClaudeStream, Event, GeminiStream, MockServer, OpenAiStream, RecordedRequest, Response, Route,
    Script,
};

async fn post(url: &str, body: serde_json::Value) -> (u16, String, reqwest::header::HeaderMap) {
    let resp = reqwest::Client::new()
        .post(url)
        .header("authorization", "Bearer t")
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    (status, resp.text().await.unwrap(), headers)
}

#[tokio::test]
async fn routes_pop_in_order_and_requests_are_recorded() {
    let s = MockServer::start().await.unwrap();
    s.push(Route::Openai, OpenAiStream::text_response(&["a"]));
    s.push(
        Route::Openai,
        Response::error(429, json!({"error": {"message": "slow"}})).header("Retry-After", "2"),
    );
    s.push(Route::Claude, ClaudeStream::text_response(&["c"]));
    s.push(Route::Gemini, GeminiStream::text_response(&["g"]));

    let (st, body, h) = post(
        &format!("{}/v1/chat/completions", s.url()),
        json!({"model": "m"}),
    )
    .await;
    assert_eq!(st, 200);
    assert_eq!(h["content-type"], "text/event-stream");
    assert!(body.starts_with("data: {"), "{body}");
    assert!(body.ends_with("data: [DONE]\n\n"), "{body}");

    let (st, body, h) = post(&format!("{}/v1/chat/completions", s.url()), json!({})).await;
    assert_eq!((st, h["retry-after"].to_str().unwrap()), (429, "2"));
    assert_eq!(body, r#"{"error":{"message":"slow"}}"#);

    let (st, body, _) = post(&format!("{}/v1/chat/completions", s.url()), json!({})).await;
    assert_eq!(st, 500, "an exhausted queue fails loudly");
    assert!(body.contains("mock_script_exhausted"));

    let (_, body, _) = post(&format!("{}/v1/messages", s.url()), json!({})).await;
    assert!(body.starts_with("event: message_start\ndata: {"), "{body}");
    assert!(body.contains("event: message_stop"));

    let (_, body, _) = post(
        &format!(
            "{}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            s.url()
        ),
        json!({"contents": []}),
    )
    .await;
    assert!(body.contains("\"finishReason\":\"STOP\""), "{body}");

    let all = s.requests();
    assert_eq!(all.len(), 5);
    assert_eq!(all[0].body, json!({"model": "m"}));
    assert_eq!(all[0].header("Authorization"), Some("Bearer t"));
    let g = &s.requests_to(Route::Gemini)[0];
    assert_eq!(g.query.as_deref(), Some("alt=sse"));
    assert_eq!(
        g.path,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    );

    // The control endpoint serves the same log.
    let listed: Vec<RecordedRequest> = reqwest::get(format!("{}/__mock/requests", s.url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed, s.requests());
}

#[tokio::test]
async fn events_frame_multiline_data_and_raw_bytes() {
    let e = Event::named("x", json!("line1\nline2"));
    assert_eq!(e.to_wire(), "event: x\ndata: line1\ndata: line2\n\n");
    assert_eq!(Event::raw("data: a\r\n\r\n").to_wire(), "data: a\r\n\r\n");
    assert_eq!(
        Event::json(json!({"a": 1})).to_wire(),
        "data: {\"a\":1}\n\n"
    );
}

#[tokio::test]
async fn stall_keeps_the_connection_open_and_cut_aborts_it() {
    let s = MockServer::start().await.unwrap();
    s.push(
        Route::Openai,
        OpenAiStream::text_response(&["a", "b"]).stall_after(1),
    );
    s.push(
        Route::Openai,
        OpenAiStream::text_response(&["a", "b"]).cut_after(1),
    );
    let client = reqwest::Client::new();
    let url = format!("{}/v1/chat/completions", s.url());

    let mut resp = client.post(&url).body("{}").send().await.unwrap();
    let first = resp.chunk().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("assistant"));
    let more = tokio::time::timeout(Duration::from_millis(300), resp.chunk()).await;
    assert!(
        more.is_err(),
        "a stalled stream sends nothing and does not close"
    );

    let mut resp = client.post(&url).body("{}").send().await.unwrap();
    assert!(resp.chunk().await.unwrap().is_some());
    let end = tokio::time::timeout(Duration::from_secs(2), resp.chunk())
        .await
        .unwrap();
    assert!(
        end.is_err(),
        "a cut stream ends with a transport error, got {end:?}"
    );
}

#[tokio::test]
async fn responses_can_be_pushed_over_http_and_repeat_last() {
    let script = Script {
        repeat_last: true,
        ..Script::default()
    };
    let s = MockServer::start_with(script, 0).await.unwrap();
    let resp = reqwest::Client::new()
        .post(format!("{}/__mock/responses/openai", s.url()))
        .json(&OpenAiStream::text_response(&["again"]))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 204);
    for _ in 0..3 {
        let (st, body, _) = post(&format!("{}/v1/chat/completions", s.url()), json!({})).await;
        assert_eq!(st, 200);
        assert!(body.contains("again"));
    }
    assert_eq!(s.pending(Route::Openai), 1);
}

#[test]
fn script_json_round_trips() {
    let script = Script {
        openai: vec![
            OpenAiStream::new()
                .reasoning(&["r"])
                .tool_call(0, "c", "f", &["{}"])
                .finish("tool_calls")
                .done()
                .response(),
            Response::error(529, json!({"type": "error"})).stall_after(2),
        ],
        claude: vec![
            ClaudeStream::default()
                .thinking(&["t"], "s")
                .response()
                .cut_after(3),
        ],
        gemini: vec![GeminiStream::new().thought("x").response()],
        repeat_last: false,
    };
    let text = serde_json::to_string_pretty(&script).unwrap();
    let back: Script = serde_json::from_str(&text).unwrap();
    assert_eq!(back, script);
    // Defaults: status 200, no headers.
    let minimal: Response = serde_json::from_str(r#"{"events": [{"data": "[DONE]"}]}"#).unwrap();
    assert_eq!(minimal, Response::stream(vec![Event::text("[DONE]")]));
}

#[test]
fn documented_example_script_parses() {
    let script: Script = serde_json::from_str(include_str!("../scripts/example.json")).unwrap();
    assert_eq!(script.openai.len(), 2);
    assert_eq!(script.openai[1].status, 429);
    assert_eq!(script.claude[0].stall_after, Some(1));
}

#[tokio::test]
async fn binary_serves_a_script_file_and_records_requests() {
    let dir = tempfile::tempdir().unwrap();
    let script_path = dir.path().join("script.json");
    let record_path = dir.path().join("requests.jsonl");
    let script = Script {
        openai: vec![OpenAiStream::text_response(&["from ", "file"])],
        ..Script::default()
    };
    std::fs::write(&script_path, serde_json::to_string(&script).unwrap()).unwrap();

    let mut child = Command::new(env!("CARGO_BIN_EXE_wyckoff-mock-vendor"))
        .arg("--script")
        .arg(&script_path)
        .arg("--record")
        .arg(&record_path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let url = line
        .trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");

    let (st, body, _) = post(&format!("{url}/v1/chat/completions"), json!({"model": "x"})).await;
    child.kill().unwrap();
    let _ = child.wait();
    assert_eq!(st, 200);
    assert!(
        body.contains("\"from \"") && body.contains("[DONE]"),
        "{body}"
    );
    let recorded = std::fs::read_to_string(&record_path).unwrap();
    let first: RecordedRequest = serde_json::from_str(recorded.lines().next().unwrap()).unwrap();
    assert_eq!(first.route, Some(Route::Openai));
    assert_eq!(first.body, json!({"model": "x"}));
}
