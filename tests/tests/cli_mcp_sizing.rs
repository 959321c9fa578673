//! `wyckoff mcp serve` sizes under the risk settings of the data home it serves: a
//! `size_position` call that leaves out the risk per trade and the largest position is
//! answered with the ones in `settings.json`, so changing them there changes the served
//! answer, which equals `wyckoff size` given the same figures. A raw MCP client over the
//! real binary's stdio (newline-delimited JSON-RPC), offline over the bundled bars.
//! Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use serde_json::{Value, json};
use wyckoff_e2e::CliHome;

const CODE: &str = "000001";

/// Writes the risk section of the home's settings (the rest left at its defaults).
fn set_risk(h: &CliHome, risk: Value) {
    let path = h.path().join("settings.json");
    let mut s: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| json!({}));
    s["risk"] = risk;
    std::fs::write(&path, s.to_string()).unwrap();
}

/// Starts `wyckoff mcp serve` on the home, makes the MCP handshake, calls `tool` with
/// `arguments` and returns the call's result (the structured JSON of its answer).
fn served_call(h: &CliHome, tool: &str, arguments: Value) -> Value {
    let mut child = h
        .command(&["mcp", "serve"])
        .env("WYCKOFF_OFFLINE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |v: Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    let mut answer_to = |id: i64| -> Value {
        loop {
            let line = lines.next().expect("the server answered").unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "cli_mcp_sizing", "version": "0"}}}),
    );
    let init = answer_to(1);
    assert_eq!(init["result"]["serverInfo"]["name"], "wyckoff", "{init}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}}));
    let called = answer_to(2);
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "mcp serve exited with {status}");
    let result = &called["result"];
    assert_eq!(result["isError"], false, "{called}");
    let text = result["content"][0]["text"].as_str().unwrap();
    serde_json::from_str(text).unwrap()
}

#[test]
fn the_served_size_follows_the_risk_settings_of_the_home() {
    let h = CliHome::new();
    let call = json!({"code": CODE, "equity": 100000});

    // Settings at their defaults: 1 % a trade.
    let default = served_call(&h, "size_position", call.clone());
    assert_eq!(default["sizing"]["risk_budget_fen"], 100_000, "{default}");
    let cli = h.json(&["size", CODE, "--equity", "100000", "--json"]);
    assert_eq!(default["sizing"], cli["sizing"]);

    // Half a percent a trade and 5 % the largest position in Settings: the served answer
    // is wyckoff size given those figures.
    set_risk(
        &h,
        json!({"risk_per_trade_pct": 0.5, "max_position_pct": 5}),
    );
    let set = served_call(&h, "size_position", call.clone());
    assert_eq!(set["sizing"]["risk_budget_fen"], 50_000, "{set}");
    let cli = h.json(&[
        "size",
        CODE,
        "--equity",
        "100000",
        "--risk-pct",
        "0.5",
        "--max-position-pct",
        "5",
        "--json",
    ]);
    assert_eq!(set["sizing"], cli["sizing"]);
    assert_ne!(set["sizing"], default["sizing"]);
    assert!(
        set["sizing"]["shares"].as_u64().unwrap() < default["sizing"]["shares"].as_u64().unwrap(),
        "{set}\n{default}"
    );
    assert!(
        set["sizing"]["bound"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "position_budget"),
        "the 5 % budget binds: {set}"
    );

    // A figure the call gives still wins over Settings.
    let given = served_call(
        &h,
        "size_position",
        json!({"code": CODE, "equity": 100000, "risk_pct": 2, "max_position_pct": 100}),
    );
    assert_eq!(given["sizing"]["risk_budget_fen"], 200_000, "{given}");
}

/// The agent's own size_position (a `wyckoff run` turn) answers under the same Settings.
#[tokio::test(flavor = "multi_thread")]
async fn the_agents_size_follows_the_risk_settings_too() {
    use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        OpenAiStream::tool_call_response(
            "call_size",
            "size_position",
            &json!({"code": CODE, "equity": 100000}),
        ),
    );
    server.push(Route::Openai, OpenAiStream::text_response(&["算好了。"]));
    let h = CliHome::new();
    set_risk(&h, json!({"risk_per_trade_pct": 0.5}));
    let base = format!("{}/v1", server.url());
    let home = h.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(wyckoff_e2e::binary("wyckoff"))
            .args([
                "run",
                "--json",
                "--provider",
                "openai",
                "--base-url",
                &base,
                "算仓位",
            ])
            .env("OPENAI_API_KEY", "sk-e2e-size")
            .env("WYCKOFF_HOME", &home)
            .env("WYCKOFF_OFFLINE", "1")
            .env_remove("HTTPS_PROXY")
            .env_remove("HTTP_PROXY")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", wyckoff_e2e::show(&out));
    let result = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "tool_result" && e["id"] == "call_size")
        .unwrap_or_else(|| panic!("{}", wyckoff_e2e::show(&out)));
    let sized = &result["result"];
    assert_eq!(sized["sizing"]["risk_budget_fen"], 50_000, "{sized}");
}
