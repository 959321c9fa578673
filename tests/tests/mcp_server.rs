//! `wyckoff mcp serve` driven by another language's official MCP SDK: the Python `mcp`
//! package (installed by scripts/setup into target/mcp-venv) runs tests/mcp/engine_client.py,
//! which launches the real binary over stdio (and connects over streamable HTTP), lists the
//! tools, calls them and prints a JSON report that this test checks against the CLI's own
//! output. Build the binary first (`cargo build -p wyckoff-cli`; `scripts/test` does).
//!
//! Outside CI a machine without the venv skips these tests with a message; in CI
//! (`CI=true`) a missing venv fails them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use wyckoff_e2e::show;

/// A bundled stock (the seeded zvt bars) and a code no exchange has.
const CODE: &str = "000001";
const NOT_A_STOCK: &str = "999999";

/// The tools served, in order; every one read-only.
const TOOLS: &[&str] = &[
    "search_stock_by_name",
    "analyze_stock",
    "portfolio",
    "get_market_overview",
    "get_market_history",
    "get_market_map",
    "size_position",
    "stock_events",
    "screen_stocks",
    "run_backtest",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn script() -> PathBuf {
    workspace().join("tests/mcp/engine_client.py")
}

/// The venv's python, or `None` (skip) when it is missing outside CI.
fn venv_python() -> Option<PathBuf> {
    let python = wyckoff_e2e::target_dir().join("mcp-venv/bin/python");
    if python.is_file() {
        return Some(python);
    }
    let msg = format!(
        "{} is missing: run scripts/setup (it installs the Python MCP SDK there)",
        python.display()
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{msg}");
    }
    eprintln!("SKIPPED: {msg}");
    None
}

fn report(out: Output) -> Value {
    assert!(out.status.success(), "python client: {}", show(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&out)))
}

/// `wyckoff ARGS --json` over the same home: what the MCP results must equal.
fn cli_json(home: &Path, args: &[&str]) -> Value {
    let out = wyckoff_e2e::wyckoff_cli(home).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", show(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn assert_tools(r: &Value) {
    assert_eq!(r["server"]["name"], "wyckoff");
    let tools = r["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names, TOOLS,
        "nothing that writes (update_portfolio, local tools)"
    );
    for t in tools {
        assert_eq!(t["read_only_hint"], true, "{}", t["name"]);
        assert_eq!(t["input_schema"]["type"], "object", "{}", t["name"]);
    }
    let analyze = &tools[1]["input_schema"];
    assert_eq!(analyze["required"], serde_json::json!(["code"]));
}

fn assert_analyze_matches_cli(r: &Value, home: &Path) {
    let a = &r["analyze"];
    assert_eq!(a["is_error"], false, "{a}");
    let expected = cli_json(home, &["analyze", CODE, "--json"]);
    assert_eq!(
        a["structured"], expected,
        "MCP analyze_stock = wyckoff analyze --json"
    );
    // the text content is the same JSON, with its freshness fields
    let text: Value = serde_json::from_str(a["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, expected);
    assert_eq!(expected["source"], "bundled:zvt");
    assert_eq!(expected["as_of"], "2020-06-16");
}

#[test]
fn python_sdk_over_stdio_lists_calls_reports_progress_and_errors() {
    let Some(python) = venv_python() else { return };
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(python)
        .arg(script())
        .args(["stdio"])
        .arg(wyckoff_e2e::binary("wyckoff"))
        .args([CODE, NOT_A_STOCK])
        .env("WYCKOFF_HOME", home.path())
        .env("WYCKOFF_OFFLINE", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let r = report(out);
    assert_tools(&r);
    assert_analyze_matches_cli(&r, home.path());

    // screen_stocks with a progress token: notifications arrive, increasing, with the
    // funnel's stages; the result is what `wyckoff screen --json` prints
    let s = &r["screen"];
    assert_eq!(s["is_error"], false, "{s}");
    assert_eq!(
        s["structured"],
        cli_json(home.path(), &["screen", "--json"])
    );
    // the agent's screen_stocks saves its run for tracking; served over MCP it writes nothing
    assert!(s["structured"].get("tracked_screen_id").is_none(), "{s}");
    let progress = r["progress"].as_array().unwrap();
    assert!(!progress.is_empty(), "no progress notification: {r}");
    let values: Vec<f64> = progress
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    assert!(
        progress[0]["message"].as_str().unwrap().contains("加载K线"),
        "{progress:?}"
    );

    // a code no exchange has: an error result naming it, and the session goes on
    let u = &r["unknown"];
    assert_eq!(u["is_error"], true, "{u}");
    assert!(u["text"].as_str().unwrap().contains(NOT_A_STOCK), "{u}");

    // get_market_map of the 2020 crash day: what `wyckoff market map --json` prints
    let m = &r["market_map"];
    assert_eq!(m["is_error"], false, "{m}");
    let expected = cli_json(
        home.path(),
        &["market", "map", "--json", "--as-of", "2020-02-03"],
    );
    assert_eq!(
        m["structured"], expected,
        "MCP get_market_map = wyckoff market map --json"
    );
    assert!(
        expected["limits"]["limit_down"].as_u64().unwrap() > 0,
        "{expected}"
    );
}

/// Kills the HTTP server when the test ends, pass or fail.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn python_sdk_over_loopback_http_lists_and_calls() {
    let Some(python) = venv_python() else { return };
    let home = tempfile::tempdir().unwrap();
    let [port] = wyckoff_e2e::free_ports::<1>();
    let addr = format!("127.0.0.1:{port}");
    let mut server = Server(
        wyckoff_e2e::wyckoff_cli(home.path())
            .args(["mcp", "serve", "--http", &addr])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // it says where it listens once it does
    let stderr = server.0.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let url = format!("http://{addr}/mcp");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let line = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("the server never said it listens");
        if line.contains(&url) {
            break;
        }
    }
    let out = Command::new(python)
        .arg(script())
        .args(["http", &url, CODE])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let r = report(out);
    assert_tools(&r);
    assert_analyze_matches_cli(&r, home.path());
}

#[test]
fn http_on_a_non_loopback_address_is_refused() {
    let home = tempfile::tempdir().unwrap();
    for addr in ["0.0.0.0:8765", "[::]:8765"] {
        let out = wyckoff_e2e::wyckoff_cli(home.path())
            .args(["mcp", "serve", "--http", addr])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{addr}: {}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("refusing to serve MCP on {addr}")) && err.contains("loopback"),
            "{err}"
        );
    }
}
