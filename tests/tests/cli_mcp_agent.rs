//! The agent uses a configured MCP server's tools through the real
//! `wyckoff run` over real HTTP (the mock vendor speaks OpenAI's stream): the published
//! `mcp-server-time` (PyPI, in target/mcp-venv from scripts/setup) joins the registry as
//! `mcp__time__…`; the server marks its tools read-only, so one runs without asking and its
//! result reaches the model's next request; once the user sets the server to always ask,
//! `--approve never` refuses the call and the server never answers one. A tool that may
//! write (tests/mcp/recorder_server.py) is refused unasked, runs allowed, and under
//! `--approve queue` (the unattended path schedules use) waits in the inbox until
//! `wyckoff approvals allow` runs it. Outside CI a machine without the venv skips.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

const KEY: (&str, &str) = ("WYCKOFF_KEY_MOCK", "sk-mcp-agent-e2e-123456");
const TOOL: &str = "mcp__time__get_current_time";

async fn wyckoff(home: &Path, args: &[&str]) -> Output {
    let mut cmd = wyckoff_e2e::wyckoff_cli(home);
    cmd.args(args).env(KEY.0, KEY.1);
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

/// The command exited 0 (else its stderr is shown).
fn succeeded(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `wyckoff run --json --approve APPROVE PROMPT`, which must succeed: its events.
async fn turn(home: &Path, approve: &str, prompt: &str) -> Vec<Value> {
    let out = wyckoff(home, &["run", "--json", "--approve", approve, prompt]).await;
    succeeded(&out);
    events(&out)
}

fn events(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn call(id: &str, tool: &str, args: Value) -> wyckoff_mock_vendor::Response {
    OpenAiStream::new()
        .role()
        .tool_call(0, id, tool, &[args.to_string()])
        .finish("tool_calls")
        .done()
        .response()
}

fn time_call() -> wyckoff_mock_vendor::Response {
    call("call_time", TOOL, json!({"timezone": "Asia/Shanghai"}))
}

/// The venv's executable `name`, or `None` (skip) when the venv is missing outside CI.
fn venv(name: &str) -> Option<String> {
    let bin = wyckoff_e2e::target_dir().join("mcp-venv/bin").join(name);
    if bin.is_file() {
        return Some(bin.display().to_string());
    }
    let msg = format!("{} is missing: run scripts/setup", bin.display());
    assert!(std::env::var("CI").map_or(true, |v| v != "true"), "{msg}");
    eprintln!("skipped: {msg}");
    None
}

/// The content of the last tool message of an OpenAI-format request.
fn last_tool_result(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .expect("a tool result went back to the model")["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_servers_tool_is_offered_gated_and_its_result_reaches_the_model() {
    let Some(bin) = venv("mcp-server-time") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let added = wyckoff(
        h,
        &[
            "mcp",
            "add",
            "time",
            "--",
            &bin,
            "--local-timezone",
            "Asia/Shanghai",
        ],
    )
    .await;
    succeeded(&added);
    let server = MockServer::start().await.unwrap();
    wyckoff_e2e::webdriver::mock_model_settings(h, &format!("{}/v1", server.url()));

    // The server marks get_current_time read-only: it runs without asking, and what it
    // answered is the tool result the model reads next.
    server.push(Route::Openai, time_call());
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["现在是北京时间。"]),
    );
    let ran = turn(h, "never", "几点了").await;
    let requests = server.requests_to(Route::Openai);
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(offered.contains(&TOOL), "{offered:?}");
    assert!(
        !ran.iter().any(|e| e["type"] == "approval_resolved"),
        "{ran:?}"
    );
    let started = ran.iter().find(|e| e["type"] == "tool_start").unwrap();
    assert_eq!(started["display_name"], "MCP · time · get_current_time");
    let tool_result = last_tool_result(&requests[1].body);
    assert!(tool_result.contains("Asia/Shanghai"), "{tool_result}");
    assert!(tool_result.contains("datetime"), "{tool_result}");

    // A call the server fails (an unknown time zone): the model gets its error, named.
    server.push(
        Route::Openai,
        call("call_bad", TOOL, json!({"timezone": "Mars/Olympus_Mons"})),
    );
    server.push(Route::Openai, OpenAiStream::text_response(&["时区不对。"]));
    turn(h, "never", "火星几点").await;
    let requests = server.requests_to(Route::Openai);
    let failed = last_tool_result(&requests[requests.len() - 1].body);
    assert!(
        failed.contains("MCP server 'time'") && failed.contains("Mars/Olympus_Mons"),
        "{failed}"
    );

    // The user asks to confirm that server's tools: now the gate decides, and refused, the
    // server is never called (the model is told it was denied).
    let asked = wyckoff(h, &["mcp", "always-ask", "time", "on"]).await;
    succeeded(&asked);
    server.push(Route::Openai, time_call());
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["不能查时间。"]),
    );
    let ran = turn(h, "never", "几点了").await;
    let resolved = ran
        .iter()
        .find(|e| e["type"] == "approval_resolved")
        .unwrap_or_else(|| panic!("{ran:?}"));
    assert_eq!(resolved["outcome"], "denied_by_policy", "{resolved}");
    assert!(
        !ran.iter()
            .any(|e| e["type"] == "tool_result" && e["result"]["datetime"].is_string())
    );
    let requests = server.requests_to(Route::Openai);
    let denied = last_tool_result(&requests[requests.len() - 1].body);
    assert!(!denied.contains("datetime"), "{denied}");
}

/// Adds the recorder (tests/mcp/recorder_server.py, on the official Python SDK; it logs
/// every call it receives) as server `rec`: the log's path, or `None` (skip) without the venv.
async fn add_recorder(home: &Path) -> Option<std::path::PathBuf> {
    let python = venv("python")?;
    let log = home.join("recorder.log");
    std::fs::write(&log, "").unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/recorder_server.py");
    let (script, log_arg) = (script.display().to_string(), log.display().to_string());
    let added = wyckoff(
        home,
        &["mcp", "add", "rec", "--", &python, &script, &log_arg],
    )
    .await;
    succeeded(&added);
    Some(log)
}

/// The model's call of the recorder's `record`, which may write (not read-only).
fn record() -> wyckoff_mock_vendor::Response {
    call(
        "call_rec",
        "mcp__rec__record",
        json!({"note": "建仓 600519"}),
    )
}

/// A tool its server does not mark read-only (the official Python SDK's server in
/// tests/mcp/recorder_server.py logs every call it receives): refused with `--approve never`
/// before the server gets the call; allowed, it runs and its answer reaches the model.
#[tokio::test(flavor = "multi_thread")]
async fn a_tool_that_may_write_is_refused_unasked_and_runs_once_allowed() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let Some(log) = add_recorder(h).await else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    wyckoff_e2e::webdriver::mock_model_settings(h, &format!("{}/v1", server.url()));

    server.push(Route::Openai, record());
    server.push(Route::Openai, OpenAiStream::text_response(&["没有记录。"]));
    let ran = turn(h, "never", "记一笔").await;
    let resolved = ran
        .iter()
        .find(|e| e["type"] == "approval_resolved")
        .unwrap_or_else(|| panic!("{ran:?}"));
    assert_eq!(resolved["outcome"], "denied_by_policy", "{resolved}");
    assert!(
        !std::fs::read_to_string(&log).unwrap().contains("record"),
        "the server got the refused call"
    );

    server.push(Route::Openai, record());
    server.push(Route::Openai, OpenAiStream::text_response(&["已记录。"]));
    turn(h, "all", "记一笔").await;
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("record 建仓 600519")
    );
    let requests = server.requests_to(Route::Openai);
    let result = last_tool_result(&requests[requests.len() - 1].body);
    assert!(result.contains("recorded 建仓 600519"), "{result}");
}

/// The unattended path schedules use (`--approve queue`): a call of a tool that may write is
/// queued in the inbox, not run; `wyckoff approvals list` shows it with its exact arguments
/// under the server-named tool; `wyckoff approvals allow` runs it once (in a new process,
/// which starts the server again) and the conversation's follow-up turn gets its result.
#[tokio::test(flavor = "multi_thread")]
async fn a_queued_call_waits_in_the_inbox_and_allow_runs_it_once() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let Some(log) = add_recorder(h).await else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    wyckoff_e2e::webdriver::mock_model_settings(h, &format!("{}/v1", server.url()));
    server.push(Route::Openai, record());
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["记录在等待你的批准。"]),
    );
    server.push(Route::Openai, OpenAiStream::text_response(&["已记录。"]));

    let ran = turn(h, "queue", "记一笔").await;
    let resolved = ran
        .iter()
        .find(|e| e["type"] == "approval_resolved")
        .unwrap_or_else(|| panic!("{ran:?}"));
    assert_eq!(resolved["outcome"], "queued", "{resolved}");
    let conversation = ran.iter().find(|e| e["type"] == "session").unwrap()["session_id"].clone();
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "",
        "the server got the queued call"
    );
    let waiting: Value = serde_json::from_str(&last_tool_result(
        &server.requests_to(Route::Openai)[1].body,
    ))
    .unwrap();
    assert_eq!(waiting["status"], "waiting_for_approval", "{waiting}");

    let listed = wyckoff(h, &["approvals", "list", "--json"]).await;
    succeeded(&listed);
    let inbox: Vec<Value> = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(inbox.len(), 1, "{inbox:?}");
    let request = &inbox[0];
    assert_eq!(request["status"], "pending");
    assert_eq!(request["tool"], "mcp__rec__record");
    assert_eq!(request["args"], json!({"note": "建仓 600519"}));
    assert_eq!(request["conversation_id"], conversation);
    let id = request["id"].as_str().unwrap();
    assert_eq!(waiting["request_id"], id);

    let allowed = wyckoff(h, &["approvals", "allow", id, "--json"]).await;
    succeeded(&allowed);
    let report: Value = serde_json::from_slice(&allowed.stdout).unwrap();
    assert_eq!(report["request"]["status"], "allowed", "{report}");
    assert!(
        report["tool_result"]
            .as_str()
            .unwrap_or_default()
            .contains("recorded 建仓 600519"),
        "{report}"
    );
    assert_eq!(report["answer"], "已记录。");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "record 建仓 600519\n",
        "the allowed call reached the server exactly once"
    );
    // The follow-up turn of that conversation was told the result.
    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 3);
    let notice = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_owned();
    assert!(
        notice.contains(id) && notice.contains("recorded 建仓 600519"),
        "{notice}"
    );
}

/// The model's request through `wyckoff run`: a server's tools up to its cap exactly (the
/// N+1th is not in the request), two tools of one name after cleaning both offered under
/// distinct names, and each call reaching its own tool (tests/mcp/wide_server.py).
#[tokio::test(flavor = "multi_thread")]
async fn the_model_is_offered_a_servers_tools_up_to_its_cap_under_distinct_names() {
    let Some(python) = venv("python") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let log = h.join("wide.log");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/wide_server.py");
    let (script, log_arg) = (script.display().to_string(), log.display().to_string());
    let added = wyckoff(
        h,
        &[
            "mcp", "add", "wide", "--", &python, &script, "--tools", "5", "--clash", "--log",
            &log_arg,
        ],
    )
    .await;
    succeeded(&added);
    succeeded(&wyckoff(h, &["mcp", "max-tools", "6", "--server", "wide"]).await);
    let server = MockServer::start().await.unwrap();
    wyckoff_e2e::webdriver::mock_model_settings(h, &format!("{}/v1", server.url()));

    // the name `get.quote` is offered under, as `wyckoff mcp tools` says
    let listed = wyckoff(h, &["mcp", "tools", "--json"]).await;
    succeeded(&listed);
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let dotted = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool"] == "get.quote")
        .unwrap();
    assert_eq!(dotted["renamed"], true, "{listed}");
    let renamed = dotted["name"].as_str().unwrap().to_owned();
    assert!(renamed.starts_with("mcp__wide__get_quote_"), "{renamed}");
    server.push(Route::Openai, call("c1", &renamed, json!({})));
    server.push(Route::Openai, call("c2", "mcp__wide__get_quote", json!({})));
    server.push(Route::Openai, OpenAiStream::text_response(&["好。"]));
    turn(h, "never", "报价").await;
    let requests = server.requests_to(Route::Openai);
    let offered: Vec<String> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .filter(|n| n.starts_with("mcp__"))
        .map(str::to_owned)
        .collect();
    // 7 listed, 6 offered: t0001…t0005 and the first of the two quote tools in the
    // server's order; the other is the 7th, left out
    assert_eq!(
        offered,
        [
            "mcp__wide__t0001",
            "mcp__wide__t0002",
            "mcp__wide__t0003",
            "mcp__wide__t0004",
            "mcp__wide__t0005",
            renamed.as_str(),
        ]
    );
    // the call of a tool not offered is an unknown tool; the offered one reached the server
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "call get.quote\n",
        "{offered:?}"
    );

    // room for all 7: both quote tools offered, each call reaching its own
    succeeded(&wyckoff(h, &["mcp", "max-tools", "7", "--server", "wide"]).await);
    server.push(Route::Openai, call("c3", &renamed, json!({})));
    server.push(Route::Openai, call("c4", "mcp__wide__get_quote", json!({})));
    server.push(Route::Openai, OpenAiStream::text_response(&["好。"]));
    turn(h, "never", "报价").await;
    let requests = server.requests_to(Route::Openai);
    let offered = requests[3].body["tools"].as_array().unwrap().len();
    assert_eq!(
        offered,
        requests[0].body["tools"].as_array().unwrap().len() + 1
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "call get.quote\ncall get.quote\ncall get_quote\n"
    );
}
