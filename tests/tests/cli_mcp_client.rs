//! `wyckoff mcp add|list|enable|disable|remove|test` on a fresh data home, against real MCP
//! servers: the published `mcp-server-time` (PyPI, installed by scripts/setup into
//! target/mcp-venv; works offline) and our own `wyckoff mcp serve` over stdio and loopback
//! HTTP; a server that dies at once and one that never answers fail clearly within the
//! limit. Build the binary first (`cargo build -p wyckoff-cli`; `scripts/test` does).
//!
//! Outside CI a machine without the venv skips the third-party test with a message; in CI
//! (`CI=true`) a missing venv fails it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use wyckoff_e2e::show;

struct Home(tempfile::TempDir);

impl Home {
    fn new() -> Self {
        Home(tempfile::tempdir().unwrap())
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = wyckoff_e2e::wyckoff_cli(self.0.path());
        c.args(args);
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", show(&out));
        String::from_utf8(out.stdout).unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).unwrap()
    }
}

fn wyckoff() -> String {
    wyckoff_e2e::binary("wyckoff").display().to_string()
}

fn tool_names(report: &Value) -> Vec<&str> {
    report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

/// The venv's `mcp-server-time`, or `None` (skip) when the venv is missing outside CI.
fn time_server() -> Option<PathBuf> {
    let bin = wyckoff_e2e::target_dir().join("mcp-venv/bin/mcp-server-time");
    if bin.is_file() {
        return Some(bin);
    }
    let msg = format!(
        "{} is missing: run scripts/setup (it installs the Python MCP packages there)",
        bin.display()
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{msg}");
    }
    eprintln!("SKIPPED: {msg}");
    None
}

#[test]
fn a_published_third_party_server_is_added_and_tested() {
    let Some(bin) = time_server() else { return };
    let h = Home::new();
    let bin = bin.display().to_string();
    h.ok(&[
        "mcp",
        "add",
        "time",
        "--",
        &bin,
        "--local-timezone",
        "Asia/Shanghai",
    ]);
    let r = h.json(&["mcp", "test", "time", "--json"]);
    assert_eq!(r["server"], "time");
    assert_eq!(r["name"], "mcp-time");
    assert!(!r["version"].as_str().unwrap().is_empty());
    assert_eq!(tool_names(&r), ["get_current_time", "convert_time"]);
    let convert = &r["tools"][1];
    assert_eq!(convert["input_schema"]["type"], "object");
    assert!(
        convert["input_schema"]["properties"]["source_timezone"].is_object(),
        "{convert}"
    );
    // the text form names the server, its version and each tool
    let text = h.ok(&["mcp", "test", "time"]);
    assert!(text.starts_with("time: mcp-time "), "{text}");
    assert!(
        text.contains("2 tools") && text.contains("get_current_time"),
        "{text}"
    );
}

#[test]
fn our_own_server_over_stdio_is_tested_and_the_list_is_managed() {
    let h = Home::new();
    let me = wyckoff();
    h.ok(&[
        "mcp",
        "add",
        "self",
        "--always-ask",
        "--",
        &me,
        "mcp",
        "serve",
    ]);
    let r = h.json(&["mcp", "test", "self", "--json"]);
    assert_eq!(r["name"], "wyckoff");
    assert_eq!(r["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        tool_names(&r),
        [
            "search_stock_by_name",
            "analyze_stock",
            "portfolio",
            "get_market_overview",
            "get_market_history",
            "get_market_map",
            "size_position",
            "stock_events",
            "screen_stocks",
            "run_backtest"
        ]
    );
    assert!(
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["read_only"] == true)
    );

    // list, disable, enable, remove
    let list = h.json(&["mcp", "list", "--json"]);
    assert_eq!(list[0]["name"], "self");
    assert_eq!(list[0]["enabled"], true);
    assert_eq!(list[0]["always_ask"], true);
    assert_eq!(list[0]["transport"]["type"], "stdio");
    assert_eq!(list[0]["transport"]["command"], me.as_str());
    assert_eq!(
        list[0]["transport"]["args"],
        serde_json::json!(["mcp", "serve"])
    );
    h.ok(&["mcp", "disable", "self"]);
    assert_eq!(h.json(&["mcp", "list", "--json"])[0]["enabled"], false);
    assert!(h.ok(&["mcp", "list"]).contains("disabled"));
    h.ok(&["mcp", "enable", "self"]);
    assert_eq!(h.json(&["mcp", "list", "--json"])[0]["enabled"], true);
    // always ask off/on, trust one tool and take it back
    h.ok(&["mcp", "always-ask", "self", "off"]);
    assert_eq!(h.json(&["mcp", "list", "--json"])[0]["always_ask"], false);
    h.ok(&["mcp", "always-ask", "self", "on"]);
    assert_eq!(h.json(&["mcp", "list", "--json"])[0]["always_ask"], true);
    h.ok(&["mcp", "trust", "self", "analyze_stock"]);
    assert_eq!(
        h.json(&["mcp", "list", "--json"])[0]["trusted_tools"],
        serde_json::json!(["analyze_stock"])
    );
    assert!(
        h.ok(&["mcp", "list"])
            .contains("trusted tools: analyze_stock")
    );
    h.ok(&["mcp", "trust", "self", "analyze_stock", "--remove"]);
    assert_eq!(
        h.json(&["mcp", "list", "--json"])[0]["trusted_tools"],
        serde_json::json!([])
    );

    // a name in use, a bad name, an unknown one: exit 2, nothing changed
    for args in [
        &["mcp", "add", "self", "--", "true"][..],
        &["mcp", "add", "Bad Name", "--", "true"],
        &["mcp", "add", "nothing"],
        &["mcp", "remove", "nope"],
        &["mcp", "enable", "nope"],
        &["mcp", "test", "nope"],
        &["mcp", "trust", "nope", "analyze_stock"],
        &["mcp", "always-ask", "nope", "on"],
    ] {
        let out = h.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
    }
    assert_eq!(
        h.json(&["mcp", "list", "--json"]).as_array().unwrap().len(),
        1
    );
    h.ok(&["mcp", "remove", "self"]);
    assert_eq!(h.json(&["mcp", "list", "--json"]), serde_json::json!([]));
}

/// Kills the HTTP server when the test ends, pass or fail.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve_http(home: &Path) -> (Server, String) {
    let [port] = wyckoff_e2e::free_ports::<1>();
    let addr = format!("127.0.0.1:{port}");
    let mut server = Server(
        wyckoff_e2e::wyckoff_cli(home)
            .args(["mcp", "serve", "--http", &addr])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stderr = server.0.stderr.take().unwrap();
    let url = format!("http://{addr}/mcp");
    let mut lines = BufReader::new(stderr).lines();
    loop {
        let line = lines
            .next()
            .expect("the server never said it listens")
            .unwrap();
        if line.contains(&url) {
            break;
        }
    }
    (server, url)
}

#[test]
fn an_http_server_with_a_header_secret_is_tested() {
    let h = Home::new();
    let (_server, url) = serve_http(h.0.path());
    h.ok(&[
        "mcp",
        "add",
        "web",
        "--url",
        &url,
        "--header-secret",
        "web-token",
    ]);
    let list = h.json(&["mcp", "list", "--json"]);
    assert_eq!(list[0]["transport"]["type"], "http");
    assert_eq!(
        list[0]["transport"]["header_secret"]["header"],
        "Authorization"
    );
    assert_eq!(
        list[0]["secrets"][0],
        serde_json::json!({"name": "web-token", "set": false})
    );

    // the secret is not set: a clear error naming where to put it, exit 1
    let out = h.run(&["mcp", "test", "web"]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("secret 'web-token' is not set")
            && err.contains("WYCKOFF_MCP_SECRET_WEB_TOKEN"),
        "{err}"
    );
    // with it (from the environment), the server answers; the value is in no file
    let out = h
        .cmd(&["mcp", "test", "web", "--json"])
        .env("WYCKOFF_MCP_SECRET_WEB_TOKEN", "canary-5f1e")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["name"], "wyckoff");
    assert_eq!(tool_names(&r).len(), 10);
    let file = std::fs::read_to_string(h.0.path().join("mcp_servers.json")).unwrap();
    assert!(
        !file.contains("canary-5f1e") && file.contains("web-token"),
        "{file}"
    );
}

#[test]
fn a_dead_or_silent_server_fails_clearly_within_the_limit() {
    let h = Home::new();
    h.ok(&[
        "mcp",
        "add",
        "dead",
        "--env",
        "API_KEY=dead-key",
        "--",
        "sh",
        "-c",
        "echo \"starting with $API_KEY\" >&2; echo 'fatal: no config' >&2; exit 1",
    ]);
    h.ok(&["mcp", "add", "silent", "--", "sleep", "61.25"]);
    h.ok(&["mcp", "add", "missing", "--", "/nonexistent/mcp-server"]);

    // it dies at once: the error quotes what it said, its secret masked
    let out = h
        .cmd(&["mcp", "test", "dead", "--timeout", "10"])
        .env("WYCKOFF_MCP_SECRET_DEAD_KEY", "canary-77a1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("MCP server 'dead'")
            && err.contains("the server said: starting with *** | fatal: no config"),
        "{err}"
    );
    assert!(!err.contains("canary-77a1"), "{err}");
    // what it wrote on stderr is in the data home's log too, its secret masked
    let logs: String = std::fs::read_dir(h.0.path().join("logs"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("wyckoff"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert!(
        logs.contains("mcp server stderr: starting with ***"),
        "{logs}"
    );
    assert!(!logs.contains("canary-77a1"), "{logs}");

    let out = h.run(&["mcp", "test", "missing"]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("MCP server 'missing': cannot start \"/nonexistent/mcp-server\""),
        "{err}"
    );

    let started = Instant::now();
    let out = h.run(&["mcp", "test", "silent", "--timeout", "2"]);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("MCP server 'silent' did not answer within 2 s"),
        "{}",
        show(&out)
    );
    assert!(took >= Duration::from_secs(2), "{took:?}");
    assert!(
        took < Duration::from_secs(10),
        "stopped waiting long after the limit: {took:?}"
    );
    // and the silent server was stopped, not left behind
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.trim_end() == "sleep 61.25")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// The venv's Python (with the MCP SDK), or `None` (skip) when the venv is missing outside CI.
fn venv_python() -> Option<PathBuf> {
    let bin = wyckoff_e2e::target_dir().join("mcp-venv/bin/python");
    if bin.is_file() {
        return Some(bin);
    }
    let msg = format!("{} is missing: run scripts/setup", bin.display());
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{msg}");
    }
    eprintln!("SKIPPED: {msg}");
    None
}

fn wide_server_script() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("mcp/wide_server.py")
        .display()
        .to_string()
}

/// tests/mcp/wide_server.py over streamable HTTP, answering only requests whose
/// Authorization is exactly `auth`; every header it receives goes to `log`.
fn wide_http(python: &Path, auth: &str, log: &Path, extra: &[&str]) -> (Server, String) {
    let [port] = wyckoff_e2e::free_ports::<1>();
    let mut server = Server(
        Command::new(python)
            .args([
                &wide_server_script(),
                "--http",
                &port.to_string(),
                "--auth",
                auth,
                "--log",
                &log.display().to_string(),
            ])
            .args(extra)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stderr = server.0.stderr.take().unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut lines = BufReader::new(stderr).lines();
    loop {
        let line = lines
            .next()
            .expect("the server never said it listens")
            .unwrap();
        if line.contains(&url) {
            break;
        }
    }
    (server, url)
}

/// A secret that carries its own scheme (`Basic …`) goes in the Authorization header as it
/// is; a bare token gets `Bearer `. Each server refuses anything else with 401.
#[test]
fn an_authorization_secret_with_a_scheme_is_sent_as_it_is() {
    let Some(python) = venv_python() else { return };
    let h = Home::new();
    let basic_log = h.0.path().join("basic.log");
    let bearer_log = h.0.path().join("bearer.log");
    let (_basic, basic_url) = wide_http(&python, "Basic dXNlcjpwYXNz", &basic_log, &[]);
    let (_bearer, bearer_url) = wide_http(&python, "Bearer tok-31c", &bearer_log, &[]);
    h.ok(&[
        "mcp",
        "add",
        "basic",
        "--url",
        &basic_url,
        "--header-secret",
        "basic-cred",
    ]);
    h.ok(&[
        "mcp",
        "add",
        "bearer",
        "--url",
        &bearer_url,
        "--header-secret",
        "bearer-cred",
    ]);
    for (name, var, value, log, sent) in [
        (
            "basic",
            "WYCKOFF_MCP_SECRET_BASIC_CRED",
            "Basic dXNlcjpwYXNz",
            &basic_log,
            "auth Basic dXNlcjpwYXNz",
        ),
        (
            "bearer",
            "WYCKOFF_MCP_SECRET_BEARER_CRED",
            "tok-31c",
            &bearer_log,
            "auth Bearer tok-31c",
        ),
    ] {
        let out = h
            .cmd(&["mcp", "test", name, "--json", "--timeout", "30"])
            .env(var, value)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{name}: {}", show(&out));
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["name"], "wide", "{r}");
        let received = std::fs::read_to_string(log).unwrap();
        assert!(
            received.lines().all(|l| l == sent),
            "{name} received: {received}"
        );
    }
}

/// Over streamable HTTP the same: a tool list over the 16 MiB limit is said to be too
/// large (the SDK closes the connection on it and only logs why), not "transport closed".
#[test]
fn a_tool_list_over_the_size_limit_over_http_is_said_too_large() {
    let Some(python) = venv_python() else { return };
    let h = Home::new();
    let log = h.0.path().join("wide-http.log");
    let (_server, url) = wide_http(
        &python,
        "Bearer tok-big",
        &log,
        &["--tools", "20", "--pad-kib", "1024"],
    );
    h.ok(&[
        "mcp",
        "add",
        "wide",
        "--url",
        &url,
        "--header-secret",
        "wide-cred",
    ]);
    let out = h
        .cmd(&["mcp", "test", "wide", "--timeout", "120"])
        .env("WYCKOFF_MCP_SECRET_WIDE_CRED", "tok-big")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("MCP server 'wide' answered a message too large")
            && err.contains("over the 16 MiB a message may have"),
        "{err}"
    );
}

/// A tool list over the SDK's 16 MiB message limit is said to be too large, not taken for a
/// server that did not answer.
#[test]
fn a_tool_list_over_the_size_limit_is_said_too_large() {
    let Some(python) = venv_python() else { return };
    let h = Home::new();
    let py = python.display().to_string();
    let script = wide_server_script();
    // 20 tools of 1 MiB each: about 20 MiB in one tools/list answer
    h.ok(&[
        "mcp",
        "add",
        "wide",
        "--",
        &py,
        &script,
        "--tools",
        "20",
        "--pad-kib",
        "1024",
    ]);
    let out = h.run(&["mcp", "test", "wide", "--timeout", "120"]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("MCP server 'wide' answered a message too large")
            && err.contains("over the 16 MiB a message may have"),
        "{err}"
    );
    // a list under the limit is read whole
    h.ok(&["mcp", "remove", "wide"]);
    h.ok(&[
        "mcp",
        "add",
        "wide",
        "--",
        &py,
        &script,
        "--tools",
        "12",
        "--pad-kib",
        "1024",
    ]);
    let r = h.json(&["mcp", "test", "wide", "--json", "--timeout", "120"]);
    assert_eq!(tool_names(&r).len(), 12);
}

/// `wyckoff mcp tools` names what is offered and what is left out, and why: a server's cap
/// exactly at the limit, the cap on all servers, the user's pick, and two tools of one
/// name after cleaning, told apart.
#[test]
fn mcp_tools_says_what_is_offered_and_what_is_left_out() {
    let Some(python) = venv_python() else { return };
    let h = Home::new();
    let py = python.display().to_string();
    let script = wide_server_script();
    h.ok(&["mcp", "add", "one", "--", &py, &script, "--tools", "5"]);
    h.ok(&[
        "mcp", "add", "two", "--", &py, &script, "--tools", "5", "--clash",
    ]);
    h.ok(&["mcp", "max-tools", "3", "--server", "one"]);
    let state = |r: &Value, server: &str, tool: &str| -> Value {
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["server"] == server && t["tool"] == tool)
            .unwrap_or_else(|| panic!("{server} {tool}: {r}"))
            .clone()
    };
    let r = h.json(&["mcp", "tools", "--json"]);
    assert_eq!(r["offered"], 3 + 7, "{r}");
    assert_eq!(state(&r, "one", "t0003")["left_out"], Value::Null);
    assert_eq!(
        state(&r, "one", "t0004")["left_out"],
        serde_json::json!({"reason": "server_cap", "cap": 3})
    );
    let dotted = state(&r, "two", "get.quote");
    assert_eq!(dotted["renamed"], true);
    assert_ne!(dotted["name"], state(&r, "two", "get_quote")["name"]);
    assert_eq!(state(&r, "two", "get_quote")["name"], "mcp__two__get_quote");
    // the text names them too
    let text = h.ok(&["mcp", "tools"]);
    assert!(
        text.contains("one: 3 of 5 tools offered (at most 3)"),
        "{text}"
    );
    assert!(
        text.lines().any(
            |l| l.contains("t0004") && l.contains("left out: over the server's cap of 3 tools")
        ),
        "{text}"
    );
    assert!(
        text.contains("renamed: another tool has its name"),
        "{text}"
    );

    // the cap on all servers: "one" takes 3, "two" the 1 left
    h.ok(&["mcp", "max-tools", "4"]);
    let r = h.json(&["mcp", "tools", "--json"]);
    assert_eq!(r["offered"], 4, "{r}");
    assert_eq!(state(&r, "two", "t0001")["left_out"], Value::Null);
    assert_eq!(
        state(&r, "two", "t0002")["left_out"],
        serde_json::json!({"reason": "total_cap", "cap": 4})
    );
    // a cap out of range is refused (exit 2) and changes nothing
    let out = h.run(&["mcp", "max-tools", "129"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_eq!(h.json(&["mcp", "tools", "--json"])["max_tools"], 4);

    // the user picks: only those, in the server's order
    h.ok(&["mcp", "pick", "one", "t0005", "t0002"]);
    h.ok(&["mcp", "max-tools", "default"]);
    let r = h.json(&["mcp", "tools", "--json"]);
    assert_eq!(state(&r, "one", "t0002")["left_out"], Value::Null);
    assert_eq!(state(&r, "one", "t0005")["left_out"], Value::Null);
    assert_eq!(
        state(&r, "one", "t0001")["left_out"],
        serde_json::json!({"reason": "not_picked"})
    );
    // a pick over the server's cap is refused
    let out = h.run(&["mcp", "pick", "one", "t0001", "t0002", "t0003", "t0004"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    h.ok(&["mcp", "pick", "one", "--all"]);
    let r = h.json(&["mcp", "tools", "--json"]);
    assert_eq!(state(&r, "one", "t0001")["left_out"], Value::Null);
}
