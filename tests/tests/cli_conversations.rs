//! Forking a conversation through the real `wyckoff` binary over real HTTP: three turns
//! are made with `wyckoff run --session` against the mock
//! vendor speaking OpenAI's stream (the first with a tool round), `wyckoff conversations
//! fork` forks at the first answer, and a turn on the fork (`wyckoff run --session FORK`)
//! sends the model exactly the history up to that message. The original is unchanged and
//! `wyckoff conversations list` shows both, the fork naming its source. Unknown ids exit 2
//! and write nothing. Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, RecordedRequest, Route, Script};

const FIRST_ANSWER: &str = "平安银行（000001）处于下跌通道，暂不介入。";

/// `wyckoff ARGS` over `home`, with the canary key for the OpenAI-format vendor.
fn wyckoff(home: &Path, args: &[&str]) -> Output {
    wyckoff_e2e::wyckoff_cli(home)
        .args(args)
        .env("OPENAI_API_KEY", "sk-e2e-fork-canary")
        .output()
        .unwrap()
}

/// `wyckoff run --json` against the mock vendor; returns the session id it reports.
fn run_turn(home: &Path, base: &str, session: Option<&str>, prompt: &str) -> String {
    let mut args = vec!["run", "--json", "--provider", "openai", "--base-url", base];
    if let Some(id) = session {
        args.extend(["--session", id]);
    }
    args.push(prompt);
    let out = wyckoff(home, &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{prompt}: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.last().unwrap()["type"], "done", "{events:?}");
    events[0]["session_id"].as_str().unwrap().to_owned()
}

/// stdout as JSON, after checking the command succeeded.
fn json_of(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn show(home: &Path, id: &str) -> Value {
    json_of(&wyckoff(home, &["conversations", "show", id, "--json"]))
}

fn list(home: &Path) -> Vec<Value> {
    json_of(&wyckoff(home, &["conversations", "list", "--json"]))
        .as_array()
        .unwrap()
        .clone()
}

fn messages(request: &RecordedRequest) -> Vec<Value> {
    request.body["messages"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fork_at_the_first_answer_sends_the_model_exactly_the_history_up_to_it() {
    let script = Script {
        openai: vec![
            // turn 1: a tool round, then the first answer
            OpenAiStream::tool_call_response(
                "call_an",
                "analyze_stock",
                &json!({"code": "000001"}),
            ),
            OpenAiStream::text_response(&[FIRST_ANSWER]),
            // turns 2 and 3
            OpenAiStream::text_response(&["第二答：成交量在萎缩。"]),
            OpenAiStream::text_response(&["第三答：观望。"]),
            // the turn on the fork
            OpenAiStream::text_response(&["换个角度：看看招商银行。"]),
        ],
        ..Script::default()
    };
    let server = MockServer::start_with(script, 0).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let (h, base) = (home.path().to_path_buf(), format!("{}/v1", server.url()));

    tokio::task::spawn_blocking(move || {
        let home = h.as_path();
        // Three turns, the second and third with --session.
        let source = run_turn(home, &base, None, "分析一下 000001");
        assert_eq!(run_turn(home, &base, Some(&source), "第二问：成交量呢？"), source);
        assert_eq!(run_turn(home, &base, Some(&source), "第三问：总结一下"), source);

        let before = show(home, &source);
        let stored = before["messages"].as_array().unwrap();
        let roles: Vec<&str> = stored.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(
            roles,
            ["user", "assistant", "tool", "assistant", "user", "assistant", "user", "assistant"]
        );
        assert_eq!(stored[1]["tool_calls"][0]["name"], "analyze_stock");
        assert_eq!(stored[2]["tool_call_id"], "call_an");
        // The first answer: the first assistant message without tool calls.
        let first_answer = stored
            .iter()
            .find(|m| m["role"] == "assistant" && m.get("tool_calls").is_none())
            .unwrap();
        assert_eq!(first_answer["text"], FIRST_ANSWER);
        let at = first_answer["id"].as_i64().unwrap();
        assert_eq!(at, 4);

        // Fork there: stdout is the new conversation's id.
        let out = wyckoff(
            home,
            &["conversations", "fork", &source, "--from", &at.to_string()],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let fork = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        assert_eq!(fork.len(), 36, "{fork:?}");
        assert_ne!(fork, source);
        let forked = show(home, &fork);
        assert_eq!(forked["messages"], json!(stored[..4]), "the history through #4");
        assert_eq!(
            forked["conversation"]["forked_from"],
            json!({"conversation_id": source, "message_id": 4})
        );

        // A turn on the fork continues it.
        assert_eq!(run_turn(home, &base, Some(&fork), "换个话题"), fork);

        // The original is unchanged.
        assert_eq!(show(home, &source), before);

        // Both are listed, the fork naming its source and message.
        let rows = list(home);
        assert_eq!(rows.len(), 2, "{rows:?}");
        let row = |id: &str| rows.iter().find(|r| r["id"] == id).unwrap().clone();
        assert_eq!(row(&source)["message_count"], 8);
        assert_eq!(row(&source)["forked_from"], Value::Null);
        assert_eq!(row(&fork)["message_count"], 6);
        assert_eq!(
            row(&fork)["forked_from"],
            json!({"conversation_id": source, "message_id": 4})
        );
        let text = wyckoff(home, &["conversations", "list"]);
        let text = String::from_utf8(text.stdout).unwrap();
        assert!(
            text.lines()
                .any(|l| l.starts_with(&fork) && l.contains(&format!("forked from {source} at #4"))),
            "{text}"
        );
    })
    .await
    .unwrap();

    // What the model got: the fork's request is the second turn's request (system prompt
    // and the history through the first answer) with the fork's own question in place of
    // the second turn's — nothing of turns 2 and 3.
    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 5);
    let (second_turn, on_fork) = (messages(&requests[2]), messages(&requests[4]));
    let roles: Vec<&str> = on_fork
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
    assert_eq!(on_fork[..5], second_turn[..5]);
    assert_eq!(on_fork[2]["tool_calls"][0]["id"], "call_an");
    assert_eq!(on_fork[3]["tool_call_id"], "call_an");
    assert_eq!(on_fork[4]["content"], FIRST_ANSWER);
    assert!(
        requests[4]
            .last_user_text()
            .unwrap()
            .starts_with("换个话题"),
        "{:?}",
        requests[4].last_user_text()
    );
    for later in ["第二问", "第二答", "第三问", "第三答"] {
        assert!(
            !requests[4].raw_body.contains(later),
            "{later} leaked into the fork"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fork_at_a_tool_call_takes_its_results_and_unknown_ids_exit_2_writing_nothing() {
    let script = Script {
        openai: vec![
            OpenAiStream::tool_call_response(
                "call_an",
                "analyze_stock",
                &json!({"code": "000001"}),
            ),
            OpenAiStream::text_response(&[FIRST_ANSWER]),
        ],
        ..Script::default()
    };
    let server = MockServer::start_with(script, 0).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let (h, base) = (home.path().to_path_buf(), format!("{}/v1", server.url()));
    tokio::task::spawn_blocking(move || {
        let home = h.as_path();
        // Before anything is stored: nothing to list, an unknown id, and no database made.
        assert!(list(home).is_empty());
        let out = wyckoff(home, &["conversations", "show", "no-such-id"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(!home.join("wyckoff.db").exists());

        let source = run_turn(home, &base, None, "分析一下 000001");
        let before = show(home, &source);

        // At the assistant message that called the tool: its result comes along.
        let forked = json_of(&wyckoff(
            home,
            &["conversations", "fork", &source, "--from", "#2", "--json"],
        ));
        assert_eq!(forked["through_message_id"], 3);
        assert_eq!(forked["conversation"]["message_count"], 3);
        let fork_id = forked["id"].as_str().unwrap();
        let copied = show(home, fork_id);
        assert_eq!(
            copied["messages"],
            json!(before["messages"].as_array().unwrap()[..3])
        );

        // Unknown conversation or message: exit 2, the id named, nothing written.
        for (args, named) in [
            (vec!["conversations", "show", "no-such-id"], "no-such-id"),
            (
                vec!["conversations", "fork", "no-such-id", "--from", "1"],
                "no-such-id",
            ),
            (
                vec!["conversations", "fork", source.as_str(), "--from", "99"],
                "#99",
            ),
            (
                vec!["conversations", "fork", source.as_str(), "--from", "x"],
                "x",
            ),
        ] {
            let out = wyckoff(home, &args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(stderr.contains(named), "{args:?}: {stderr}");
            assert!(out.stdout.is_empty(), "{args:?}");
        }
        assert_eq!(list(home).len(), 2);
        assert_eq!(show(home, &source), before);
    })
    .await
    .unwrap();
}

/// `archive://CONVERSATION/ID` references → `archive://REF` (each conversation archives
/// under its own id, and an archive id carries the second it was made).
fn without_archive_refs(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("archive://") {
        out.push_str(&rest[..at + "archive://".len()]);
        out.push_str("REF");
        rest = &rest[at + "archive://".len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/')))
            .unwrap_or(rest.len());
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// A request's messages as the model got them, archive references and the Beijing time
/// line of the newest question normalised.
fn comparable(request: &RecordedRequest) -> Vec<Value> {
    let mut msgs: Vec<Value> =
        serde_json::from_str(&without_archive_refs(&request.body["messages"].to_string())).unwrap();
    let last = msgs.last_mut().unwrap();
    let question = last["content"].as_str().unwrap();
    let question = question
        .split("\n\n[当前北京时间")
        .next()
        .unwrap()
        .to_owned();
    last["content"] = Value::String(question);
    msgs
}

/// A fork taken after the source compacted its context: compaction shortens only a turn's
/// live context (the store keeps every message), so a turn on the fork sends the model what
/// a turn on the source at that point sends — the same summary of the same head and the
/// same kept tail.
#[tokio::test(flavor = "multi_thread")]
async fn a_fork_after_compaction_sends_what_the_source_would() {
    use wyckoff_mock_vendor::Response;
    fn when(mut response: Response, marker: &str) -> Response {
        response.when_body_contains = Some(marker.to_owned());
        response
    }
    // Requests are told apart by what they contain: the memory flush and the summary by
    // their prompts, each turn by its question (later questions are not in earlier bodies,
    // and the summarised head never holds the newest question).
    let mut openai = vec![
        when(
            OpenAiStream::tool_call_response(
                "call_an",
                "analyze_stock",
                &json!({"code": "000001"}),
            ),
            "第一问",
        ),
        when(OpenAiStream::text_response(&[FIRST_ANSWER]), "第一问"),
        when(
            OpenAiStream::text_response(&["第二答：量能萎缩。"]),
            "第二问",
        ),
        when(
            OpenAiStream::text_response(&["第三答：继续观望。"]),
            "第三问",
        ),
        when(
            OpenAiStream::text_response(&["第四答：等待 Spring。"]),
            "第四问",
        ),
        when(
            OpenAiStream::text_response(&["第四答：等待 Spring。"]),
            "第四问",
        ),
    ];
    for _ in 0..4 {
        openai.push(when(OpenAiStream::text_response(&["无"]), "即将被压缩"));
        openai.push(when(
            OpenAiStream::text_response(&[
                "摘要：用户请求分析 000001，工具显示下跌通道，助手建议暂不介入。",
            ]),
            "请将以下对话历史总结",
        ));
    }
    let server = MockServer::start_with(
        Script {
            openai,
            ..Script::default()
        },
        0,
    )
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let (h, base) = (home.path().to_path_buf(), format!("{}/v1", server.url()));
    // A window this small puts every request over the 25 % mark: compaction runs as soon
    // as there is a head to summarise (the third turn).
    let run = move |home: &Path, session: Option<&str>, prompt: &str| {
        let mut args = vec![
            "run",
            "--json",
            "--provider",
            "openai",
            "--base-url",
            &base,
            "--context-window",
            "200",
        ];
        if let Some(id) = session {
            args.extend(["--session", id]);
        }
        args.push(prompt);
        let out = wyckoff(home, &args);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{prompt}: {}\n{stdout}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    };
    let (source, fork) = tokio::task::spawn_blocking(move || {
        let home = h.as_path();
        let first = run(home, None, "第一问：分析一下 000001");
        let source: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
        let source = source["session_id"].as_str().unwrap().to_owned();
        run(home, Some(&source), "第二问：成交量呢？");
        let third = run(home, Some(&source), "第三问：总结一下");
        assert!(third.contains(r#""type":"compaction""#), "{third}");
        let stored = show(home, &source);
        assert_eq!(stored["messages"].as_array().unwrap().len(), 8);

        // Fork at the last message, after the compaction; then the same question on both.
        let out = wyckoff(home, &["conversations", "fork", &source, "--from", "8"]);
        let fork = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        let forked = show(home, &fork);
        assert_eq!(
            forked["messages"], stored["messages"],
            "every stored message"
        );
        run(home, Some(&fork), "第四问：接下来怎么做？");
        run(home, Some(&source), "第四问：接下来怎么做？");
        (source, fork)
    })
    .await
    .unwrap();

    let turns: Vec<RecordedRequest> = server
        .requests_to(Route::Openai)
        .into_iter()
        .filter(|r| r.raw_body.contains("第四问") && !r.raw_body.contains("即将被压缩"))
        .filter(|r| !r.raw_body.contains("请将以下对话历史总结"))
        .collect();
    assert_eq!(turns.len(), 2, "one fourth-question turn each");
    let (on_fork, on_source) = (&turns[0], &turns[1]);
    // Both were compacted, each archiving under its own id: the summary replaced the head,
    // the tail is kept.
    for (request, id) in [(on_fork, &fork), (on_source, &source)] {
        let body = &request.raw_body;
        assert!(body.contains("[对话摘要]"), "{body}");
        assert!(body.contains(&format!("archive://{id}/")), "{body}");
        assert!(body.contains("摘要：用户请求分析 000001"), "{body}");
    }
    assert_eq!(comparable(on_fork), comparable(on_source));
}

#[test]
fn archive_references_normalise_whatever_second_they_were_made_in() {
    let a = "- archive://6ebe00ce-6612-4945-a543-d1ebe472413b/ctx_20261204165911_0601a34ed121\n- 按上述 archive:// 引用";
    let b = "- archive://0b89d94e-5470-4f2a-a8c0-a7c3fbf80aec/ctx_20261204165912_0601a34ed121\n- 按上述 archive:// 引用";
    assert_eq!(without_archive_refs(a), without_archive_refs(b));
    assert_eq!(
        without_archive_refs(a),
        "- archive://REF\n- 按上述 archive://REF 引用"
    );
}

/// A fork at a tool round that is still running is refused while its `wyckoff run` lives
/// (exit 1, nothing written); once that process is gone (killed mid-tool), its turn is
/// marked interrupted and the fork copies the round as the source holds it.
#[tokio::test(flavor = "multi_thread")]
async fn a_tool_round_still_running_is_refused_until_its_process_is_gone() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    let script = Script {
        openai: vec![
            OpenAiStream::tool_call_response(
                "call_d",
                "delegate_to_research",
                &json!({"task": "看看 000001 的量价结构"}),
            ),
            // the sub-agent's model call never finishes: the round stays open
            OpenAiStream::new()
                .role()
                .text(&["…"])
                .response()
                .stall_after(2),
        ],
        ..Script::default()
    };
    let server = MockServer::start_with(script, 0).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let (h, base) = (home.path().to_path_buf(), format!("{}/v1", server.url()));
    tokio::task::spawn_blocking(move || {
        let home = h.as_path();
        let mut child = wyckoff_e2e::wyckoff_cli(home)
            .args(["run", "--json", "--provider", "openai", "--base-url", &base])
            .arg("让研究员看看 000001")
            .env("OPENAI_API_KEY", "sk-e2e-fork-canary")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut session = None;
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
            if event["type"] == "session" {
                session = event["session_id"].as_str().map(str::to_owned);
            }
            if event["type"] == "tool_start" && event["id"] == "call_d" {
                break;
            }
            assert!(Instant::now() < deadline, "the delegate call never started");
        }
        let source = session.unwrap();
        // The call is stored as it is made; its result never comes.
        let deadline = Instant::now() + Duration::from_secs(10);
        while show(home, &source)["messages"].as_array().unwrap().len() < 2 {
            assert!(Instant::now() < deadline, "the tool call was never stored");
            std::thread::sleep(Duration::from_millis(50));
        }

        for at in ["2", "1"] {
            let out = wyckoff(home, &["conversations", "fork", &source, "--from", at]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            if at == "2" {
                // Its run is alive: refused, nothing written.
                assert_eq!(out.status.code(), Some(1), "{stderr}");
                assert!(stderr.contains("still running"), "{stderr}");
                assert!(out.stdout.is_empty());
                assert_eq!(list(home).len(), 1);
            } else {
                // Before the round: fine while it runs.
                assert_eq!(out.status.code(), Some(0), "{stderr}");
            }
        }

        child.kill().unwrap();
        child.wait().unwrap();
        let forked = json_of(&wyckoff(
            home,
            &["conversations", "fork", &source, "--from", "2", "--json"],
        ));
        assert_eq!(forked["through_message_id"], 2);
        let copied = show(home, forked["id"].as_str().unwrap());
        let copied = copied["messages"].as_array().unwrap();
        assert_eq!(copied.len(), 2);
        assert_eq!(copied[1]["tool_calls"][0]["id"], "call_d");
        assert_eq!(copied[1]["interrupted"], true);
    })
    .await
    .unwrap();
}
