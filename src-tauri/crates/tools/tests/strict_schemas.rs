//! Our own tools in OpenAI strict form (seed §2): every schema must be expressible, so
//! none of them silently goes out non-strict to OpenAI, and each strict form keeps every
//! property, lists them all as required and closes every object.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::Value;
use wyckoff_agent::scripted::ScriptedProvider;
use wyckoff_market::{MarketConfig, MarketData};
use wyckoff_tools::LocalToolsConfig;

/// Every object in `s` lists all its properties as required and allows nothing else.
fn closed_and_complete(s: &Value, path: &str) {
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
        names.sort_unstable();
        let required: Vec<&str> = s["required"]
            .as_array()
            .unwrap_or_else(|| panic!("{path}: no required"))
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(required, names, "{path}");
        assert_eq!(s["additionalProperties"], false, "{path}");
        for (k, v) in props {
            closed_and_complete(v, &format!("{path}.{k}"));
        }
    }
    if let Some(items) = s.get("items") {
        closed_and_complete(items, &format!("{path}[]"));
    }
    for b in s
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        closed_and_complete(b, &format!("{path}|"));
    }
}

#[tokio::test]
async fn every_tool_schema_has_a_strict_form() {
    let home = tempfile::tempdir().unwrap();
    let md = Arc::new(
        MarketData::open_with(MarketConfig::offline(home.path()))
            .await
            .unwrap(),
    );
    let mut tools = wyckoff_tools::market_tools(md.clone());
    tools.extend(wyckoff_tools::report_tools(
        md.clone(),
        Arc::new(ScriptedProvider::new(vec![])),
    ));
    tools.extend(wyckoff_tools::local_tools(LocalToolsConfig {
        workspace: home.path().join("workspace"),
        file_roots: vec![],
        allow_private_web_fetch: false,
    }));
    tools.push(wyckoff_tools::sync::sync_all_tool(md.clone()));
    tools.push(wyckoff_tools::sync::import_tool(md));

    let mut refused = Vec::new();
    for tool in &tools {
        let schema = tool.schema();
        match wyckoff_llm::strict_schema(&schema.parameters) {
            Ok(s) => {
                closed_and_complete(&s.schema, &schema.name);
                let own = schema.parameters["properties"].as_object();
                let strict = s.schema["properties"].as_object().unwrap();
                assert_eq!(
                    own.map(|p| p.len()).unwrap_or(0),
                    strict.len(),
                    "{}: every property stays",
                    schema.name
                );
            }
            Err(e) => refused.push(format!("{}: {e}", schema.name)),
        }
    }
    assert!(refused.is_empty(), "sent non-strict: {refused:#?}");
    assert!(tools.len() >= 16, "{} tools", tools.len());
}
