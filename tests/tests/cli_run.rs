//! End-to-end tests of `wyckoff run --json`: the real `wyckoff` binary
//! against the real `wyckoff-mock-vendor` binary speaking OpenAI's streaming format, with
//! a temporary `WYCKOFF_HOME`, offline market data (the bundled real bars) and a canary
//! API key.
//!
//! Build both binaries first (the tests do not build them):
//!
//! ```sh
//! cargo build -p wyckoff-cli -p wyckoff-mock-vendor
//! cargo test -p wyckoff-e2e --test cli_run
//! ```
//!
//! Binaries come from the target directory (`wyckoff_e2e::binary`); scripts live in
//! `tests/scripts/`.

// Test helpers may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use wyckoff_e2e::{VendorProcess as Vendor, binary};

/// Unique enough per test process; shaped like a real key.
fn canary() -> String {
    format!("sk-e2ecanary{}x{}", std::process::id(), 7_391_u32)
}

struct RunOutput {
    status: ExitStatus,
    events: Vec<Value>,
    stdout: String,
    stderr: String,
}

impl RunOutput {
    fn types(&self) -> Vec<&str> {
        self.events
            .iter()
            .map(|e| e["type"].as_str().unwrap_or("?"))
            .collect()
    }

    fn first(&self, ty: &str) -> &Value {
        self.events
            .iter()
            .find(|e| e["type"] == ty)
            .unwrap_or_else(|| {
                panic!(
                    "no {ty} event in {:?}\nstderr: {}",
                    self.types(),
                    self.stderr
                )
            })
    }

    fn session_id(&self) -> String {
        self.first("session")["session_id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Exactly one terminal event, and it is the last line.
    fn assert_one_terminal_last(&self) {
        let terminal = ["done", "turn_cancelled", "turn_failed"];
        let types = self.types();
        let count = types.iter().filter(|t| terminal.contains(t)).count();
        assert_eq!(count, 1, "terminal events in {types:?}");
        assert!(
            terminal.contains(types.last().unwrap()),
            "last event is not terminal: {types:?}"
        );
    }
}

/// Runs `wyckoff run --json --provider openai --base-url … ARGS PROMPT` with a clean
/// environment: the canary key, `home` as `WYCKOFF_HOME`, offline market data.
fn run_wyckoff(home: &Path, vendor: &Vendor, extra: &[&str], prompt: &str) -> RunOutput {
    let mut cmd = Command::new(binary("wyckoff"));
    cmd.arg("run")
        .arg("--json")
        .args(["--provider", "openai", "--base-url", &vendor.base_url()])
        .args(extra)
        .arg(prompt);
    run_command(cmd, home)
}

/// Runs `cmd` in the test environment. stdout lines are parsed as events when every
/// line is JSON (`--json` runs); text-mode runs keep `events` empty.
/// Runs `cmd` in the test environment. stdout lines are parsed as events for `--json`
/// runs; text-mode runs keep `events` empty.
fn run_command(mut cmd: Command, home: &Path) -> RunOutput {
    let json_mode = cmd.get_args().any(|a| a == "--json");
    for var in [
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "DEEPSEEK_API_KEY",
        "DASHSCOPE_API_KEY",
        "QWEN_API_KEY",
        "MOONSHOT_API_KEY",
        "KIMI_API_KEY",
        "WYCKOFF_DATA_SOURCES",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
        "HTTP_PROXY",
        "http_proxy",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("OPENAI_API_KEY", canary())
        .env("WYCKOFF_HOME", home)
        .env("WYCKOFF_OFFLINE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        out.read_to_string(&mut s).unwrap();
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        err.read_to_string(&mut s).unwrap();
        s
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("wyckoff run did not finish within 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = out_reader.join().unwrap();
    let stderr = err_reader.join().unwrap();
    let events = if json_mode {
        stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap_or_else(|e| {
                    panic!("stdout line is not JSON ({e}): {l:?}\nstderr: {stderr}")
                })
            })
            .collect()
    } else {
        Vec::new()
    };
    RunOutput {
        status,
        events,
        stdout,
        stderr,
    }
}

/// Every file below `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

fn contains_bytes(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Messages of a recorded chat request.
fn messages(request: &Value) -> &Vec<Value> {
    request["body"]["messages"].as_array().unwrap()
}

#[test]
fn text_turn_streams_events_and_exits_zero() {
    let vendor = Vendor::start("text_answer.json");
    let home = tempfile::tempdir().unwrap();
    let out = run_wyckoff(home.path(), &vendor, &[], "你好");

    assert_eq!(out.status.code(), Some(0), "stderr: {}", out.stderr);
    let types = out.types();
    assert_eq!(types[0], "session", "{types:?}");
    assert_eq!(types[1], "model_start", "{types:?}");
    assert_eq!(types.last(), Some(&"done"), "{types:?}");
    out.assert_one_terminal_last();
    let deltas: String = out
        .events
        .iter()
        .filter(|e| e["type"] == "text_delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, "你好，我是威科夫分析助手。");
    assert_eq!(out.first("done")["text"], "你好，我是威科夫分析助手。");
    let start = out.first("model_start");
    assert_eq!(
        (start["round"].as_u64(), start["provider"].as_str()),
        (Some(1), Some("openai"))
    );

    // The request: system prompt, the tools, the user message with the Beijing time, the key.
    let requests = vendor.chat_requests();
    assert_eq!(requests.len(), 1);
    let req = &requests[0];
    let msgs = messages(req);
    assert_eq!(msgs[0]["role"], "system");
    assert!(msgs[0]["content"].as_str().unwrap().contains("威科夫"));
    let user = msgs.last().unwrap();
    assert_eq!(user["role"], "user");
    let content = user["content"].as_str().unwrap();
    assert!(content.starts_with("你好\n\n[当前北京时间："), "{content}");
    assert!(content.ends_with("，UTC+8）]"), "{content}");
    let tools: Vec<&str> = req["body"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    for name in [
        "check_background_tasks",
        "search_stock_by_name",
        "analyze_stock",
        "update_portfolio",
    ] {
        assert!(tools.contains(&name), "{name} missing from {tools:?}");
    }
    assert_eq!(
        req["headers"]["authorization"].as_str(),
        Some(format!("Bearer {}", canary()).as_str())
    );

    // The key reached the vendor and nothing under the data home.
    let needle = canary();
    let tail = needle.trim_start_matches("sk-").to_owned();
    let files = files_under(home.path());
    assert!(
        files
            .iter()
            .any(|f| f.to_string_lossy().ends_with(".jsonl")),
        "no scratchpad in {files:?}"
    );
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !contains_bytes(&bytes, tail.as_bytes()),
            "the API key leaked into {}",
            file.display()
        );
    }
}

#[test]
fn tool_turn_runs_analyze_stock_and_sends_the_result_back() {
    let vendor = Vendor::start("tool_turn.json");
    let home = tempfile::tempdir().unwrap();
    let out = run_wyckoff(home.path(), &vendor, &[], "帮我看看 000001");

    assert_eq!(out.status.code(), Some(0), "stderr: {}", out.stderr);
    out.assert_one_terminal_last();
    let types = out.types();
    let pos = |t: &str| {
        types
            .iter()
            .position(|x| *x == t)
            .unwrap_or_else(|| panic!("{t} missing in {types:?}"))
    };
    assert!(pos("tool_calls") < pos("tool_start"));
    assert!(pos("tool_start") < pos("tool_result"));
    let rounds: Vec<u64> = out
        .events
        .iter()
        .filter(|e| e["type"] == "model_start")
        .map(|e| e["round"].as_u64().unwrap())
        .collect();
    assert_eq!(rounds, vec![1, 2]);
    assert!(pos("tool_result") < types.iter().rposition(|t| *t == "model_start").unwrap());
    let start = out.first("tool_start");
    assert_eq!(start["name"], "analyze_stock");
    assert_eq!(start["args"]["code"], "000001");
    let result = &out.first("tool_result")["result"];
    assert_eq!(out.first("tool_result")["id"], "call_analyze_1");
    // The bundled real bars: an answer about 平安银行 that says how fresh it is.
    assert!(result.get("data_status").is_some(), "{result}");
    assert!(result.get("as_of").is_some(), "{result}");
    assert_eq!(out.first("done")["text"], "平安银行（000001）的分析见上。");

    // The second model call carries the assistant's call and the tool's result.
    let requests = vendor.chat_requests();
    assert_eq!(requests.len(), 2);
    let msgs = messages(&requests[1]);
    let call = msgs
        .iter()
        .find(|m| m["role"] == "assistant" && m["tool_calls"].is_array())
        .expect("assistant tool call in the second request");
    assert_eq!(call["tool_calls"][0]["id"], "call_analyze_1");
    assert_eq!(call["tool_calls"][0]["function"]["name"], "analyze_stock");
    let tool = msgs
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("tool result in the second request");
    assert_eq!(tool["tool_call_id"], "call_analyze_1");
    let content = tool["content"].as_str().unwrap();
    assert!(
        content.contains("000001") && content.contains("data_status"),
        "{content}"
    );

    // The whole exchange was stored: continuing the session sends it back in order.
    let id = out.session_id();
    let next = run_wyckoff(home.path(), &vendor, &["--session", &id], "继续");
    assert_eq!(next.status.code(), Some(0), "stderr: {}", next.stderr);
    let requests = vendor.chat_requests();
    assert_eq!(requests.len(), 3);
    let roles: Vec<&str> = messages(&requests[2])
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        vec!["system", "user", "assistant", "tool", "assistant", "user"]
    );
    let stored = messages(&requests[2]);
    assert_eq!(stored[3]["tool_call_id"], "call_analyze_1");
    assert_eq!(stored[3]["content"], tool["content"]);
    assert_eq!(stored[4]["content"], "平安银行（000001）的分析见上。");
}

#[test]
fn approval_needing_tool_is_denied_by_default_and_the_model_is_told() {
    let vendor = Vendor::start("approval_denied.json");
    let home = tempfile::tempdir().unwrap();
    let out = run_wyckoff(
        home.path(),
        &vendor,
        &["--approve", "never"],
        "把现金设为 5000",
    );

    assert_eq!(out.status.code(), Some(0), "stderr: {}", out.stderr);
    out.assert_one_terminal_last();
    let resolved = out.first("approval_resolved");
    assert_eq!(resolved["id"], "call_update_1");
    assert_eq!(resolved["outcome"], "denied_by_policy");
    let error = out.first("tool_error");
    assert_eq!(error["name"], "update_portfolio");
    assert!(error["error"].as_str().unwrap().contains("批准"), "{error}");
    assert!(!out.types().contains(&"tool_result"), "{:?}", out.types());

    let requests = vendor.chat_requests();
    assert_eq!(requests.len(), 2);
    let tool = messages(&requests[1])
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("the denial goes back to the model")
        .clone();
    assert_eq!(tool["tool_call_id"], "call_update_1");
    let content = tool["content"].as_str().unwrap();
    assert!(content.contains("没有执行"), "{content}");
}

#[test]
fn session_flag_continues_a_stored_conversation() {
    let vendor = Vendor::start("session_continue.json");
    let home = tempfile::tempdir().unwrap();
    let first = run_wyckoff(home.path(), &vendor, &[], "我关注平安银行");
    assert_eq!(first.status.code(), Some(0), "stderr: {}", first.stderr);
    let id = first.session_id();

    let second = run_wyckoff(
        home.path(),
        &vendor,
        &["--session", &id],
        "我关注哪只股票？",
    );
    assert_eq!(second.status.code(), Some(0), "stderr: {}", second.stderr);
    assert_eq!(second.session_id(), id);
    second.assert_one_terminal_last();

    let requests = vendor.chat_requests();
    assert_eq!(requests.len(), 2);
    let msgs = messages(&requests[1]);
    let texts: Vec<(&str, &str)> = msgs
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap(),
                m["content"].as_str().unwrap_or(""),
            )
        })
        .collect();
    // system, first user, first answer, second user
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert!(
        texts[1].0 == "user" && texts[1].1.starts_with("我关注平安银行\n\n[当前北京时间："),
        "{texts:?}"
    );
    assert_eq!(texts[2], ("assistant", "记住了：你关注平安银行。"));
    assert!(
        texts[3].0 == "user" && texts[3].1.starts_with("我关注哪只股票？"),
        "{texts:?}"
    );
    // The time line is added once per message, never twice.
    assert_eq!(texts[1].1.matches("当前北京时间").count(), 1);

    // An unknown session is bad input.
    let unknown = run_wyckoff(
        home.path(),
        &vendor,
        &["--session", "no-such-session"],
        "hi",
    );
    assert_eq!(unknown.status.code(), Some(2), "stderr: {}", unknown.stderr);
    assert!(
        unknown.stderr.contains("no-such-session"),
        "{}",
        unknown.stderr
    );
    assert_eq!(
        vendor.chat_requests().len(),
        2,
        "no model call for a bad session id"
    );
}

#[test]
fn stall_is_retried_then_fails_with_timeout() {
    let vendor = Vendor::start("stall.json");
    let home = tempfile::tempdir().unwrap();
    let out = run_wyckoff(home.path(), &vendor, &["--idle-timeout", "1"], "你好");

    assert_eq!(out.status.code(), Some(1), "stderr: {}", out.stderr);
    out.assert_one_terminal_last();
    let retries: Vec<u64> = out
        .events
        .iter()
        .filter(|e| e["type"] == "retry")
        .map(|e| e["attempt"].as_u64().unwrap())
        .collect();
    assert_eq!(retries, vec![1, 2], "{:?}", out.types());
    let failed = out.events.last().unwrap();
    assert_eq!(failed["type"], "turn_failed");
    assert_eq!(failed["kind"], "timeout");
    assert_eq!(vendor.chat_requests().len(), 3);
}

#[test]
fn unauthorized_fails_with_authentication() {
    let vendor = Vendor::start("unauthorized.json");
    let home = tempfile::tempdir().unwrap();
    let out = run_wyckoff(home.path(), &vendor, &[], "你好");

    assert_eq!(out.status.code(), Some(1), "stderr: {}", out.stderr);
    out.assert_one_terminal_last();
    let failed = out.events.last().unwrap();
    assert_eq!(failed["type"], "turn_failed");
    assert_eq!(failed["kind"], "authentication");
    assert!(!out.stdout.contains(&canary()));
}

#[test]
fn bad_input_exits_two_with_a_clear_message() {
    let vendor = Vendor::start("text_answer.json");
    let home = tempfile::tempdir().unwrap();

    let mut cmd = Command::new(binary("wyckoff"));
    cmd.args(["run", "--json", "--provider", "nope", "hi"]);
    let unknown = run_command(cmd, home.path());
    assert_eq!(unknown.status.code(), Some(2), "stderr: {}", unknown.stderr);
    assert!(
        unknown.stderr.contains("nope") && unknown.stderr.contains("openai-compatible"),
        "{}",
        unknown.stderr
    );

    for bad in ["0", "601"] {
        let out = run_wyckoff(home.path(), &vendor, &["--idle-timeout", bad], "hi");
        assert_eq!(
            out.status.code(),
            Some(2),
            "--idle-timeout {bad}: {}",
            out.stderr
        );
    }

    // DeepSeek's public endpoint without a key: the message names the variable.
    let mut cmd = Command::new(binary("wyckoff"));
    cmd.args(["run", "--json", "--provider", "deepseek", "hi"]);
    let missing = run_command(cmd, home.path());
    assert_eq!(missing.status.code(), Some(2), "stderr: {}", missing.stderr);
    assert!(
        missing.stderr.contains("DEEPSEEK_API_KEY"),
        "{}",
        missing.stderr
    );
    assert!(missing.stdout.is_empty(), "{}", missing.stdout);

    // No --provider and no configured model: say how to configure one.
    let mut cmd = Command::new(binary("wyckoff"));
    cmd.args(["run", "hi"]);
    let none = run_command(cmd, home.path());
    assert_eq!(none.status.code(), Some(2), "stderr: {}", none.stderr);
    assert!(none.stderr.contains("--provider"), "{}", none.stderr);

    assert!(vendor.chat_requests().is_empty());
}

#[test]
fn text_mode_prints_the_answer_only() {
    let vendor = Vendor::start("text_answer.json");
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(binary("wyckoff"));
    cmd.args([
        "run",
        "--provider",
        "openai",
        "--base-url",
        &vendor.base_url(),
        "你好",
    ]);
    let out = run_command(cmd, home.path());
    assert_eq!(out.status.code(), Some(0), "stderr: {}", out.stderr);
    assert_eq!(out.stdout, "你好，我是威科夫分析助手。\n");
    assert!(out.stderr.contains("session "), "{}", out.stderr);
}

#[test]
fn ctrl_c_cancels_the_turn_and_exits_130() {
    let vendor = Vendor::start("cancel.json");
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new(binary("wyckoff"))
        .args([
            "run",
            "--json",
            "--provider",
            "openai",
            "--base-url",
            &vendor.base_url(),
            "你好",
        ])
        .env("OPENAI_API_KEY", canary())
        .env("WYCKOFF_HOME", home.path())
        .env("WYCKOFF_OFFLINE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    // Wait until the model is streaming (the vendor then stalls), then press Ctrl-C.
    let mut lines = Vec::new();
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("wyckoff run printed no text_delta");
        let delta = line.contains("\"text_delta\"");
        lines.push(line);
        if delta {
            break;
        }
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "wyckoff run ignored Ctrl-C");
        std::thread::sleep(Duration::from_millis(20));
    };
    reader.join().unwrap();
    lines.extend(rx.try_iter());
    assert_eq!(status.code(), Some(130));
    let events: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let terminal: Vec<&str> = events
        .iter()
        .filter_map(|e| e["type"].as_str())
        .filter(|t| matches!(*t, "done" | "turn_cancelled" | "turn_failed"))
        .collect();
    assert_eq!(terminal, vec!["turn_cancelled"]);
    assert_eq!(events.last().unwrap()["type"], "turn_cancelled");
}

#[test]
fn remember_extracts_memories_that_the_next_run_recalls() {
    let vendor = Vendor::start("remember.json");
    let home = tempfile::tempdir().unwrap();
    let first = run_wyckoff(
        home.path(),
        &vendor,
        &["--remember"],
        "我只做主板，不碰创业板。",
    );
    assert_eq!(first.status.code(), Some(0), "stderr: {}", first.stderr);
    assert!(
        first.stderr.contains("remembered 2 new memories"),
        "{}",
        first.stderr
    );
    // The extraction request carried the conversation.
    let requests = vendor.chat_requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].to_string().contains("我只做主板，不碰创业板。"));

    // A new conversation: the preference is recalled and put in the system prompt.
    let second = run_wyckoff(home.path(), &vendor, &[], "创业板的股票能买吗？");
    assert_eq!(second.status.code(), Some(0), "stderr: {}", second.stderr);
    assert_ne!(second.session_id(), first.session_id());
    let recall = second.first("memory_recall");
    assert_eq!(recall["items"][0]["memory_type"], "preference");
    assert_eq!(recall["items"][0]["content"], "不碰创业板，只做主板");
    let types = second.types();
    let recall_at = types.iter().position(|t| *t == "memory_recall").unwrap();
    let model_at = types.iter().position(|t| *t == "model_start").unwrap();
    assert!(recall_at < model_at, "{types:?}");
    let requests = vendor.chat_requests();
    let system = messages(&requests[2])[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        system.contains("# 用户偏好\n- 不碰创业板，只做主板"),
        "{system}"
    );
}
