//! MCP tools in the agent's registry, through the real runtime (a scripted model) and a real
//! MCP server on the official Python SDK (tests/mcp/recorder_server.py, which logs every call
//! it receives): a tool that may write is refused under `--approve never` and the server never
//! sees the call; allowed, its result reaches the model's next request; a read-only tool runs
//! unasked unless the server is marked "always ask"; a server that dies mid-call is a tool
//! error naming it and is started again on the next call; one that keeps failing is disabled.
//!
//! Needs target/mcp-venv (scripts/setup): skipped with a message outside CI when missing,
//! failed in CI.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::scripted::{self, ScriptedProvider};
use wyckoff_agent::{
    CollectingSink, HeadlessApprover, ResultStore, Runtime, RuntimeConfig, SystemClock,
    ToolRegistry,
};
use wyckoff_config::mcp::{McpServer, McpServers, McpTransport};
use wyckoff_mcp::agent_tools::{LeftOut, MAX_RESTARTS, McpHub, ServerStatus, discover};
use wyckoff_protocol::ToolCall;

fn venv_python() -> Option<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../target"));
    let python = target.join("mcp-venv/bin/python");
    if python.is_file() {
        return Some(python);
    }
    let msg = format!("{} is missing: run scripts/setup", python.display());
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{msg}");
    }
    eprintln!("SKIPPED: {msg}");
    None
}

fn recorder(python: &Path, log: &Path, always_ask: bool) -> McpServers {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/mcp/recorder_server.py");
    McpServers {
        version: 1,
        max_tools: None,
        servers: vec![McpServer {
            name: "rec".into(),
            transport: McpTransport::Stdio {
                command: python.display().to_string(),
                args: vec![script.display().to_string(), log.display().to_string()],
                env: vec![],
            },
            enabled: true,
            always_ask,
            trusted_tools: vec![],
            max_tools: None,
            offered_tools: None,
        }],
    }
}

async fn registry(servers: &McpServers) -> ToolRegistry {
    let (tools, failed) = discover(servers, Arc::new(|_| None), Duration::from_secs(30)).await;
    assert!(failed.is_empty(), "{failed:?}");
    let mut registry = ToolRegistry::empty();
    for t in tools {
        registry.register(t);
    }
    registry
}

fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        args,
        args_error: None,
        thought_signature: None,
    }
}

/// One turn: the model calls `calls` (one round each), then answers; returns the provider
/// (its recorded requests).
async fn turn(
    registry: ToolRegistry,
    approve: HeadlessApprover,
    rounds: Vec<Vec<ToolCall>>,
) -> Arc<ScriptedProvider> {
    turn_with(registry, approve, rounds, None).await
}

async fn turn_with(
    registry: ToolRegistry,
    approve: HeadlessApprover,
    rounds: Vec<Vec<ToolCall>>,
    results: Option<ResultStore>,
) -> Arc<ScriptedProvider> {
    turn_configured(registry, approve, rounds, results, RuntimeConfig::default()).await
}

async fn turn_configured(
    registry: ToolRegistry,
    approve: HeadlessApprover,
    rounds: Vec<Vec<ToolCall>>,
    results: Option<ResultStore>,
    config: RuntimeConfig,
) -> Arc<ScriptedProvider> {
    let mut script: Vec<_> = rounds
        .into_iter()
        .map(|calls| scripted::tool_calls("", calls))
        .collect();
    script.push(scripted::text("完成"));
    let provider = Arc::new(ScriptedProvider::new(script));
    let mut runtime = Runtime::new(
        provider.clone(),
        Arc::new(registry),
        config,
        Arc::new(approve),
        None,
        Arc::new(SystemClock),
    );
    if let Some(store) = results {
        runtime = runtime.with_result_store(store);
    }
    let sink = CollectingSink::new();
    let mut messages = Vec::new();
    tokio::time::timeout(
        Duration::from_secs(60),
        runtime.run_turn(
            &mut messages,
            "sys",
            "go",
            sink.clone(),
            CancellationToken::new(),
        ),
    )
    .await
    .unwrap();
    provider
}

fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// What the model was sent back for its tool calls, as text.
fn last_request(provider: &ScriptedProvider) -> String {
    let requests = provider.requests();
    serde_json::to_string(&requests.last().unwrap().messages).unwrap()
}

#[tokio::test]
async fn the_gate_stops_a_writing_tool_and_lets_an_allowed_call_through() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let servers = recorder(&python, &log, false);

    // the tools carry the server's flags and name it
    let reg = registry(&servers).await;
    assert_eq!(
        reg.names(),
        [
            "mcp__rec__record",
            "mcp__rec__peek",
            "mcp__rec__crash",
            "mcp__rec__slow",
            "mcp__rec__grow"
        ]
    );
    let record = reg.spec("mcp__rec__record").unwrap();
    assert!(record.requires_approval && !record.concurrency_safe);
    assert_eq!(record.display_name, "MCP · rec · record");
    let peek = reg.spec("mcp__rec__peek").unwrap();
    assert!(!peek.requires_approval && peek.concurrency_safe);

    // --approve never: refused, and the server never receives the call
    let provider = turn(
        reg,
        HeadlessApprover::Never,
        vec![vec![call("c1", "mcp__rec__record", json!({"note": "buy"}))]],
    )
    .await;
    assert!(log_lines(&log).is_empty(), "{:?}", log_lines(&log));
    let sent = last_request(&provider);
    assert!(!sent.contains("recorded buy"), "{sent}");

    // approved: the call reaches the server and its result the model's next request
    let provider = turn(
        registry(&servers).await,
        HeadlessApprover::parse("mcp__rec__record"),
        vec![vec![call("c2", "mcp__rec__record", json!({"note": "buy"}))]],
    )
    .await;
    assert_eq!(log_lines(&log), ["record buy"]);
    assert!(last_request(&provider).contains("recorded buy"));

    // a read-only tool runs without asking, even under --approve never
    let provider = turn(
        registry(&servers).await,
        HeadlessApprover::Never,
        vec![vec![call("c3", "mcp__rec__peek", json!({}))]],
    )
    .await;
    assert_eq!(log_lines(&log), ["record buy", "peek"]);
    assert!(last_request(&provider).contains("record buy"));
}

#[tokio::test]
async fn an_always_ask_server_asks_even_for_read_only_tools() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let reg = registry(&recorder(&python, &log, true)).await;
    assert!(reg.spec("mcp__rec__peek").unwrap().requires_approval);
    turn(
        reg,
        HeadlessApprover::Never,
        vec![vec![call("c1", "mcp__rec__peek", json!({}))]],
    )
    .await;
    assert!(log_lines(&log).is_empty(), "{:?}", log_lines(&log));
}

#[tokio::test]
async fn a_server_killed_mid_call_is_an_error_naming_it_and_restarts_next_call() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let provider = turn(
        registry(&recorder(&python, &log, false)).await,
        HeadlessApprover::Never,
        vec![
            vec![call("c1", "mcp__rec__crash", json!({}))],
            vec![call("c2", "mcp__rec__peek", json!({}))],
        ],
    )
    .await;
    let requests = provider.requests();
    // after the crash round the model was told the server failed, by name
    let after_crash = serde_json::to_string(&requests[1].messages).unwrap();
    assert!(
        after_crash.contains("MCP server 'rec' failed")
            && after_crash.contains("started again on the next call"),
        "{after_crash}"
    );
    // the next call started it again (a new process) and worked
    let lines = log_lines(&log);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with("crash 0 pid "));
    assert_eq!(lines[1], "peek");
    assert!(last_request(&provider).contains("crash 0 pid"));
}

#[tokio::test]
async fn a_server_that_keeps_failing_is_disabled_with_the_reason() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let rounds: Vec<Vec<ToolCall>> = (0..=MAX_RESTARTS)
        // different arguments each time: the runtime's doom-loop guard stops identical ones
        .map(|i| {
            vec![call(
                &format!("c{i}"),
                "mcp__rec__crash",
                json!({"attempt": i * 1000}),
            )]
        })
        .collect();
    let provider = turn(
        registry(&recorder(&python, &log, false)).await,
        HeadlessApprover::Never,
        rounds,
    )
    .await;
    // exactly MAX_RESTARTS crashes reached the server; the call after them did not
    assert_eq!(log_lines(&log).len(), MAX_RESTARTS as usize);
    let last = last_request(&provider);
    assert!(
        last.contains("MCP server 'rec' is disabled for this session")
            && last.contains("3 failures in a row"),
        "{last}"
    );
}

#[tokio::test]
async fn a_large_result_is_offloaded_like_any_other() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    // each record result fits inline (200 chars); peek's, with both notes, does not
    let (a, b) = ("甲".repeat(150), "乙".repeat(150));
    let provider = turn_with(
        registry(&recorder(&python, &log, false)).await,
        HeadlessApprover::parse("mcp__rec__record"),
        vec![
            vec![call("c1", "mcp__rec__record", json!({"note": a}))],
            vec![call("c2", "mcp__rec__record", json!({"note": b}))],
            vec![call("c3", "mcp__rec__peek", json!({}))],
        ],
        Some(ResultStore::new(dir.path().join("results")).with_inline_max(200)),
    )
    .await;
    let last = last_request(&provider);
    assert!(last.contains("tool-result://"), "{last}");
    assert!(last.contains("exceeds the 200-char cap"), "{last}");
    let saved: Vec<_> = std::fs::read_dir(dir.path().join("results"))
        .unwrap()
        .flatten()
        .collect();
    let names: Vec<String> = saved
        .iter()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let peek = saved
        .iter()
        .find(|e| {
            e.file_name()
                .to_string_lossy()
                .contains("mcp__rec__peek_c3")
        })
        .unwrap_or_else(|| panic!("{names:?}"));
    assert!(
        !names.iter().any(|n| n.contains("mcp__rec__record")),
        "record's results fit inline: {names:?}"
    );
    let full = std::fs::read_to_string(peek.path()).unwrap();
    assert!(full.contains(&a) && full.contains(&b));
}

#[test]
fn sub_agents_get_no_mcp_tools() {
    for role in &wyckoff_agent::subagents::roles::ROLES {
        for name in ["mcp__rec__peek", "mcp__time__get_current_time"] {
            assert!(!role.allows(name), "{} allows {name}", role.name);
        }
    }
}

#[tokio::test]
async fn a_changed_tool_list_is_picked_up() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let hub = McpHub::new(Arc::new(|_| None), Duration::from_secs(30));
    hub.set_servers(&recorder(&python, &log, false)).await;
    let names = |tools: &[Arc<dyn wyckoff_agent::Tool>]| -> Vec<String> {
        tools.iter().map(|t| t.spec().name.clone()).collect()
    };
    let (tools, failed) = hub.agent_tools().await;
    assert!(failed.is_empty(), "{failed:?}");
    assert!(!names(&tools).contains(&"mcp__rec__extra".to_owned()));
    let grow = tools
        .iter()
        .find(|t| t.spec().name == "mcp__rec__grow")
        .unwrap()
        .clone();
    let ctx = wyckoff_agent::ToolContext {
        session_id: "s".into(),
        call_id: "c1".into(),
        cancel: CancellationToken::new(),
        background: None,
        progress: wyckoff_agent::ProgressHandle::silent(),
    };
    assert_eq!(grow.call(json!({}), ctx).await.unwrap()["result"], "grown");
    // the notification arrives on its own task: wait for it, within a bound
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (tools, _) = hub.agent_tools().await;
        if names(&tools).contains(&"mcp__rec__extra".to_owned()) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{:?}",
            names(&tools)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // nothing else reached the server
    assert_eq!(log_lines(&log), ["grow"]);
}

#[tokio::test]
async fn a_hub_follows_the_data_home_list() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let path = wyckoff_config::mcp::path_in(dir.path());
    let mut servers = recorder(&python, &log, false);
    wyckoff_config::mcp::save(&path, &servers).unwrap();
    let secrets = Arc::new(wyckoff_config::Secrets::with_backend(
        Box::new(wyckoff_config::secrets::MemoryBackend::default()),
        Box::new(|_| None),
    ));
    let hub = McpHub::with_secrets(secrets, Duration::from_secs(30));
    hub.reload(dir.path()).await.unwrap();
    let status = |connected, tools| ServerStatus {
        name: "rec".into(),
        connected,
        tools,
        last_error: None,
        disabled: None,
    };
    // Listed before any session used it: not connected, nothing listed yet.
    assert_eq!(hub.statuses().await, [status(false, None)]);
    let (tools, failed) = hub.agent_tools().await;
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(tools.len(), 5);
    assert_eq!(hub.statuses().await, [status(true, Some(5))]);
    // disabled in the file: gone at the next reload
    servers.set_enabled("rec", false).unwrap();
    wyckoff_config::mcp::save(&path, &servers).unwrap();
    hub.reload(dir.path()).await.unwrap();
    assert!(hub.agent_tools().await.0.is_empty());
    assert!(hub.statuses().await.is_empty());
    // a broken file is an error and changes nothing
    std::fs::write(&path, "{broken").unwrap();
    assert!(hub.reload(dir.path()).await.is_err());
    assert!(hub.agent_tools().await.0.is_empty());
}

#[tokio::test]
async fn read_only_calls_to_one_server_overlap() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let (tools, _) = discover(
        &recorder(&python, &log, false),
        Arc::new(|_| None),
        Duration::from_secs(30),
    )
    .await;
    let slow = tools
        .iter()
        .find(|t| t.spec().name == "mcp__rec__slow")
        .unwrap()
        .clone();
    assert!(slow.spec().concurrency_safe);
    let ctx = |id: &str| wyckoff_agent::ToolContext {
        session_id: "s".into(),
        call_id: id.into(),
        cancel: CancellationToken::new(),
        background: None,
        progress: wyckoff_agent::ProgressHandle::silent(),
    };
    let started = std::time::Instant::now();
    let (a, b) = tokio::join!(
        slow.call(json!({"seconds": 1.5, "tag": "a"}), ctx("c1")),
        slow.call(json!({"seconds": 1.5, "tag": "b"}), ctx("c2")),
    );
    let took = started.elapsed();
    assert_eq!(a.unwrap()["result"], "slow a");
    assert_eq!(b.unwrap()["result"], "slow b");
    assert!(
        took < Duration::from_millis(2900),
        "the calls ran one after the other: {took:?}"
    );
}

#[tokio::test]
async fn a_server_that_cannot_start_shows_its_last_error() {
    let servers = McpServers {
        version: 1,
        max_tools: None,
        servers: vec![McpServer {
            name: "gone".into(),
            transport: McpTransport::Stdio {
                command: "/nonexistent/mcp-server".into(),
                args: Vec::new(),
                env: Vec::new(),
            },
            enabled: true,
            always_ask: false,
            trusted_tools: Vec::new(),
            max_tools: None,
            offered_tools: None,
        }],
    };
    let hub = McpHub::new(
        Arc::new(|_: &wyckoff_config::NamedSecret| None),
        Duration::from_secs(5),
    );
    hub.set_servers(&servers).await;
    let (tools, failed) = hub.agent_tools().await;
    assert!(tools.is_empty());
    assert_eq!(failed.len(), 1);
    let st = hub.statuses().await;
    assert_eq!(st.len(), 1);
    assert!(!st[0].connected);
    let why = st[0].last_error.as_deref().unwrap_or_default();
    assert!(why.contains("/nonexistent/mcp-server"), "{why}");
    assert_eq!(st[0].disabled, None, "one failure does not disable it");
}

/// A call that hangs past the session's tool time limit is a tool error naming the server;
/// the hung process is dropped and the next call starts it again.
#[tokio::test]
async fn a_call_that_hangs_past_the_time_limit_is_an_error_and_the_server_restarts() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let config = RuntimeConfig {
        tool_timeout: Some(Duration::from_secs(2)),
        ..RuntimeConfig::default()
    };
    let started = std::time::Instant::now();
    let provider = turn_configured(
        registry(&recorder(&python, &log, false)).await,
        HeadlessApprover::Never,
        vec![
            vec![call(
                "c1",
                "mcp__rec__slow",
                json!({"seconds": 30, "tag": "hang"}),
            )],
            vec![call("c2", "mcp__rec__crash", json!({"attempt": 7}))],
        ],
        None,
        config,
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "waited for the hung call"
    );
    let requests = provider.requests();
    let after_hang = serde_json::to_string(&requests[1].messages).unwrap();
    assert!(
        after_hang.contains("MCP · rec · slow (mcp__rec__slow) timed out after 2s"),
        "{after_hang}"
    );
    // The next call reached a server again (and it never finished the hung one).
    let lines = log_lines(&log);
    assert!(
        lines.iter().any(|l| l.starts_with("crash 7 pid ")),
        "{lines:?}"
    );
    assert!(!lines.iter().any(|l| l == "slow hang"), "{lines:?}");
    // The hung process was stopped, not left behind (the second one died in its call).
    let marker = log.display().to_string();
    let left = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|c| String::from_utf8_lossy(c).contains(&marker))
        .count();
    assert_eq!(left, 0, "a recorder process is still running");
}

fn stdio_server(name: &str, command: &str, args: Vec<String>) -> McpServer {
    McpServer {
        name: name.into(),
        transport: McpTransport::Stdio {
            command: command.into(),
            args,
            env: Vec::new(),
        },
        enabled: true,
        always_ask: false,
        trusted_tools: Vec::new(),
        max_tools: None,
        offered_tools: None,
    }
}

/// Servers connect side by side: "first" only answers once "second" has been started, so
/// connecting them one after the other would leave "first" waiting out its time limit.
#[tokio::test]
async fn servers_are_connected_side_by_side() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/mcp/recorder_server.py");
    let marker = dir.path().join("second-started");
    let (py, script, marker_s) = (
        python.display().to_string(),
        script.display().to_string(),
        marker.display().to_string(),
    );
    let log = |n: &str| dir.path().join(n).display().to_string();
    let first = format!(
        "for i in $(seq 200); do [ -f '{marker_s}' ] && exec '{py}' '{script}' '{}'; sleep 0.05; done; exit 1",
        log("first.log")
    );
    let second = format!(
        "touch '{marker_s}'; exec '{py}' '{script}' '{}'",
        log("second.log")
    );
    let servers = McpServers {
        version: 1,
        max_tools: None,
        servers: vec![
            stdio_server("first", "sh", vec!["-c".into(), first]),
            stdio_server("second", "sh", vec!["-c".into(), second]),
        ],
    };
    let hub = McpHub::new(
        Arc::new(|_: &wyckoff_config::NamedSecret| None),
        Duration::from_secs(8),
    );
    hub.set_servers(&servers).await;
    let (tools, failed) = hub.agent_tools().await;
    assert!(failed.is_empty(), "{failed:?}");
    let names: Vec<String> = tools.iter().map(|t| t.spec().name.clone()).collect();
    assert!(
        names.iter().any(|n| n.starts_with("mcp__first__")),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n.starts_with("mcp__second__")),
        "{names:?}"
    );
}

/// A server that just failed is left out of the next session without being started again
/// (a dead server must not hold every session build for its connect time limit).
#[tokio::test]
async fn a_server_that_just_failed_is_not_started_again_for_the_next_session() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts.log");
    let servers = McpServers {
        version: 1,
        max_tools: None,
        servers: vec![stdio_server(
            "dead",
            "sh",
            vec![
                "-c".into(),
                format!("echo start >> '{}'; exit 1", starts.display()),
            ],
        )],
    };
    let hub = McpHub::new(
        Arc::new(|_: &wyckoff_config::NamedSecret| None),
        Duration::from_secs(5),
    );
    hub.set_servers(&servers).await;
    let (_, first) = hub.agent_tools().await;
    assert_eq!(first.len(), 1, "{first:?}");
    let (tools, second) = hub.agent_tools().await;
    assert!(tools.is_empty());
    assert_eq!(second.len(), 1);
    assert!(
        second[0].1.contains("MCP server 'dead' failed moments ago"),
        "{second:?}"
    );
    assert_eq!(log_lines(&starts).len(), 1, "started once, not twice");
    // a changed configuration is a new server: it is started at once
    let mut changed = servers.clone();
    changed.servers[0].always_ask = true;
    hub.set_servers(&changed).await;
    let (_, third) = hub.agent_tools().await;
    assert_eq!(third.len(), 1);
    assert_eq!(log_lines(&starts).len(), 2);
}

/// When each `tool tag` call ran at the recorder (its LOG.spans lines): (start, end).
fn spans(log: &Path) -> std::collections::HashMap<String, (f64, f64)> {
    let path = format!("{}.spans", log.display());
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let mut parts = l.rsplitn(3, ' ');
            let end: f64 = parts.next().unwrap().parse().unwrap();
            let start: f64 = parts.next().unwrap().parse().unwrap();
            (parts.next().unwrap().to_owned(), (start, end))
        })
        .collect()
}

/// One round asks for two calls of a tool that may write and two of a read-only one, all
/// allowed: the read-only calls run side by side, each writing call runs alone (it overlaps
/// no other call), in the order asked.
#[tokio::test]
async fn in_a_parallel_batch_only_read_only_calls_overlap() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let round = vec![
        call(
            "w1",
            "mcp__rec__record",
            json!({"note": "w1", "seconds": 0.8}),
        ),
        call("r1", "mcp__rec__slow", json!({"seconds": 1.5, "tag": "r1"})),
        call("r2", "mcp__rec__slow", json!({"seconds": 1.5, "tag": "r2"})),
        call(
            "w2",
            "mcp__rec__record",
            json!({"note": "w2", "seconds": 0.8}),
        ),
    ];
    let provider = turn(
        registry(&recorder(&python, &log, false)).await,
        HeadlessApprover::All,
        vec![round],
    )
    .await;
    let sent = last_request(&provider);
    for answer in ["recorded w1", "slow r1", "slow r2", "recorded w2"] {
        assert!(sent.contains(answer), "{answer} missing: {sent}");
    }
    let spans = spans(&log);
    let names = ["record w1", "slow r1", "slow r2", "record w2"];
    let [w1, r1, r2, w2] = names.map(|n| *spans.get(n).unwrap_or_else(|| panic!("{spans:?}")));
    let overlap = |a: (f64, f64), b: (f64, f64)| a.0 < b.1 && b.0 < a.1;
    assert!(
        overlap(r1, r2),
        "the read-only calls ran one after the other: {spans:?}"
    );
    for (name, w) in [("w1", w1), ("w2", w2)] {
        for (other, o) in [("w1", w1), ("r1", r1), ("r2", r2), ("w2", w2)] {
            if other != name {
                assert!(!overlap(w, o), "{name} overlapped {other}: {spans:?}");
            }
        }
    }
    // in the order asked: w1, then both reads, then w2
    assert!(
        w1.1 <= r1.0.min(r2.0) && r1.1.max(r2.1) <= w2.0,
        "{spans:?}"
    );
    assert_eq!(
        log_lines(&log)
            .iter()
            .filter(|l| l.starts_with("record"))
            .count(),
        2
    );
}

fn wide_server(python: &Path, name: &str, args: &[&str]) -> McpServer {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/mcp/wide_server.py");
    let mut all = vec![script.display().to_string()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    stdio_server(name, &python.display().to_string(), all)
}

fn ctx(id: &str) -> wyckoff_agent::ToolContext {
    wyckoff_agent::ToolContext {
        session_id: "s".into(),
        call_id: id.into(),
        cancel: CancellationToken::new(),
        background: None,
        progress: wyckoff_agent::ProgressHandle::silent(),
    }
}

/// A server whose tool list changes while a session is open: the session's next model
/// request offers the new tool, and calling it reaches the server (no new session).
#[tokio::test]
async fn an_open_session_sees_a_changed_tool_list() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let hub = McpHub::new(Arc::new(|_| None), Duration::from_secs(30));
    hub.set_servers(&recorder(&python, &log, false)).await;
    let (_, failed) = hub.agent_tools().await;
    assert!(failed.is_empty(), "{failed:?}");
    let mut registry = ToolRegistry::empty();
    registry.add_source(hub.source());
    let provider = Arc::new(ScriptedProvider::new(vec![
        scripted::tool_calls("", vec![call("c1", "mcp__rec__grow", json!({}))]),
        scripted::text("grown"),
    ]));
    let runtime = Runtime::new(
        provider.clone(),
        Arc::new(registry),
        RuntimeConfig::default(),
        Arc::new(HeadlessApprover::Never),
        None,
        Arc::new(SystemClock),
    );
    let offered = |n: usize| -> Vec<String> {
        provider.requests()[n]
            .tools
            .iter()
            .map(|t| t.name.clone())
            .collect()
    };
    let mut changes = hub.changes();
    let mut messages = Vec::new();
    let go = |text: &'static str| {
        let sink = CollectingSink::new();
        (text, sink)
    };
    let (input, sink) = go("grow");
    tokio::time::timeout(
        Duration::from_secs(60),
        runtime.run_turn(&mut messages, "sys", input, sink, CancellationToken::new()),
    )
    .await
    .unwrap();
    assert!(!offered(0).contains(&"mcp__rec__extra".to_owned()));
    // the server's notification makes the offer again on its own task: wait for it
    tokio::time::timeout(Duration::from_secs(30), async {
        while !hub.placed().iter().any(|p| p.name == "mcp__rec__extra") {
            changes.changed().await.unwrap();
        }
    })
    .await
    .unwrap();
    // the same session, its next turn
    provider.push(scripted::tool_calls(
        "",
        vec![call("c2", "mcp__rec__extra", json!({}))],
    ));
    provider.push(scripted::text("done"));
    let (input, sink) = go("use it");
    tokio::time::timeout(
        Duration::from_secs(60),
        runtime.run_turn(&mut messages, "sys", input, sink, CancellationToken::new()),
    )
    .await
    .unwrap();
    assert!(
        offered(2).contains(&"mcp__rec__extra".to_owned()),
        "{:?}",
        offered(2)
    );
    assert_eq!(log_lines(&log), ["grow", "extra"]);
    assert!(last_request(&provider).contains("extra"));
}

/// `get.quote` and `get_quote` are one name after cleaning: both are offered, told apart,
/// and each call reaches its own tool.
#[tokio::test]
async fn tools_of_one_name_after_cleaning_are_told_apart() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let servers = McpServers {
        version: 1,
        max_tools: None,
        servers: vec![wide_server(
            &python,
            "wide",
            &["--clash", "--log", &log.display().to_string()],
        )],
    };
    let hub = McpHub::new(Arc::new(|_| None), Duration::from_secs(30));
    hub.set_servers(&servers).await;
    let (tools, failed) = hub.agent_tools().await;
    assert!(failed.is_empty(), "{failed:?}");
    let names: Vec<&str> = tools.iter().map(|t| t.spec().name.as_str()).collect();
    let renamed = wyckoff_mcp::offer::distinct_tool_name("wide", "get.quote");
    assert_eq!(names, [renamed.as_str(), "mcp__wide__get_quote"]);
    // the renamed one says its real name to the model
    assert!(
        tools[0].schema().description.contains("tool \"get.quote\""),
        "{}",
        tools[0].schema().description
    );
    let placed = hub.placed();
    assert!(placed[0].renamed && !placed[1].renamed, "{placed:?}");
    for t in tools.iter().rev() {
        t.call(json!({}), ctx("c")).await.unwrap();
    }
    assert_eq!(log_lines(&log), ["call get_quote", "call get.quote"]);
}

/// Caps at the limit: a server's first N tools are offered and the N+1th is left out and
/// named; then the total cap across two servers; then the user's pick.
#[tokio::test]
async fn tools_are_capped_per_server_and_in_total_and_the_user_picks() {
    let Some(python) = venv_python() else { return };
    let mut servers = McpServers {
        version: 1,
        max_tools: None,
        servers: vec![
            wide_server(&python, "one", &["--tools", "5"]),
            wide_server(&python, "two", &["--tools", "5"]),
        ],
    };
    servers.set_max_tools(Some("one"), Some(3)).unwrap();
    servers.set_max_tools(Some("two"), Some(3)).unwrap();
    servers.set_max_tools(None, Some(4)).unwrap();
    let hub = McpHub::new(Arc::new(|_| None), Duration::from_secs(30));
    hub.set_servers(&servers).await;
    let (tools, failed) = hub.agent_tools().await;
    assert!(failed.is_empty(), "{failed:?}");
    let names: Vec<&str> = tools.iter().map(|t| t.spec().name.as_str()).collect();
    assert_eq!(
        names,
        [
            "mcp__one__t0001",
            "mcp__one__t0002",
            "mcp__one__t0003",
            "mcp__two__t0001"
        ]
    );
    let why = |server: &str, tool: &str| {
        hub.placed()
            .into_iter()
            .find(|p| p.server == server && p.tool == tool)
            .unwrap()
            .left_out
    };
    assert_eq!(why("one", "t0003"), None);
    assert_eq!(why("one", "t0004"), Some(LeftOut::ServerCap { cap: 3 }));
    assert_eq!(why("two", "t0001"), None);
    assert_eq!(why("two", "t0002"), Some(LeftOut::TotalCap { cap: 4 }));
    // the user picks two tools of "one": just those, and "two" gets the room left
    servers
        .set_offered("one", Some(vec!["t0005".into(), "t0002".into()]))
        .unwrap();
    hub.set_servers(&servers).await;
    let (tools, _) = hub.agent_tools().await;
    let names: Vec<&str> = tools.iter().map(|t| t.spec().name.as_str()).collect();
    assert_eq!(
        names,
        [
            "mcp__one__t0002",
            "mcp__one__t0005",
            "mcp__two__t0001",
            "mcp__two__t0002"
        ]
    );
    assert_eq!(why("one", "t0001"), Some(LeftOut::NotPicked));
}

/// An answer over the SDK's 16 MiB limit is an error saying it is too large, at once (not
/// a timeout), and the server stays up for the next call.
#[tokio::test]
async fn an_answer_over_the_size_limit_is_said_too_large() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let servers = McpServers {
        version: 1,
        max_tools: None,
        servers: vec![wide_server(
            &python,
            "wide",
            &["--tools", "1", "--big", "--log", &log.display().to_string()],
        )],
    };
    let hub = McpHub::new(Arc::new(|_| None), Duration::from_secs(30));
    hub.set_servers(&servers).await;
    let (tools, failed) = hub.agent_tools().await;
    assert!(failed.is_empty(), "{failed:?}");
    let tool = |name: &str| {
        tools
            .iter()
            .find(|t| t.spec().name == name)
            .unwrap()
            .clone()
    };
    // a bound so a regression fails instead of hanging; the error comes long before it
    let err = tokio::time::timeout(
        Duration::from_secs(120),
        tool("mcp__wide__big").call(json!({"mib": 20}), ctx("c1")),
    )
    .await
    .expect("the call was not answered")
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("MCP server 'wide' answered a message too large")
            && err.contains("over the 16 MiB a message may have"),
        "{err}"
    );
    // the same process answers the next call (it was not taken for dead)
    let ok = tool("mcp__wide__t0001")
        .call(json!({}), ctx("c2"))
        .await
        .unwrap();
    assert_eq!(ok["result"], "t0001", "{ok}");
    let below = tool("mcp__wide__big")
        .call(json!({"mib": 1}), ctx("c3"))
        .await
        .unwrap();
    assert!(below.to_string().len() > 1024 * 1024);
    assert_eq!(log_lines(&log), ["call big 20", "call t0001", "call big 1"]);
    let status = &hub.statuses().await[0];
    assert!(status.connected && status.disabled.is_none(), "{status:?}");
}

/// A server that crashed is not started again for a session built moments later, but an
/// open session keeps its tools: the next call starts it again.
#[tokio::test]
async fn an_open_session_keeps_a_crashed_servers_tools_across_a_new_session() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let hub = McpHub::new(Arc::new(|_| None), Duration::from_secs(30));
    hub.set_servers(&recorder(&python, &log, false)).await;
    let (_, failed) = hub.agent_tools().await;
    assert!(failed.is_empty(), "{failed:?}");
    let mut registry = ToolRegistry::empty();
    registry.add_source(hub.source());
    let crash = call("c1", "mcp__rec__crash", json!({"attempt": 1}));
    let provider = turn(registry, HeadlessApprover::Never, vec![vec![crash]]).await;
    assert!(last_request(&provider).contains("MCP server 'rec'"));
    // a new session: the server failed moments ago, so it is not started for it
    let (_, failed) = hub.agent_tools().await;
    assert_eq!(failed.len(), 1, "{failed:?}");
    // the open session (the hub's offer) still has the tools, and a call starts it again
    let peek = hub
        .source()
        .tools()
        .iter()
        .find(|t| t.spec().name == "mcp__rec__peek")
        .cloned()
        .expect("the crashed server's tools are still offered");
    peek.call(json!({}), ctx("c2")).await.unwrap();
    assert_eq!(log_lines(&log).last().map(String::as_str), Some("peek"));
}
