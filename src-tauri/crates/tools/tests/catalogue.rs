//! Every tool we ship, checked as a catalogue:
//! - in OpenAI strict form (seed §2): every schema must be expressible, so none of them
//!   silently goes out non-strict to OpenAI, and each strict form keeps every property,
//!   lists them all as required and closes every object;
//! - named in the UI by its `ToolSpec` display name (reopened tool cards and tasks look them
//!   up in `ui/src/chat/toolNames.ts`): a tool added here without its entry there would show
//!   as a bare identifier.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::Value;
use wyckoff_agent::Tool;
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

/// Every tool the app and the CLI register, over a fresh offline home.
async fn every_tool(home: &std::path::Path) -> Vec<Arc<dyn Tool>> {
    let md = Arc::new(
        MarketData::open_with(MarketConfig::offline(home))
            .await
            .unwrap(),
    );
    let mut tools = wyckoff_tools::market_tools(md.clone());
    tools.extend(wyckoff_tools::report_tools(
        md.clone(),
        Arc::new(ScriptedProvider::new(vec![])),
    ));
    tools.extend(wyckoff_tools::local_tools(LocalToolsConfig {
        workspace: home.join("workspace"),
        file_roots: vec![],
        allow_private_web_fetch: false,
    }));
    tools.push(wyckoff_tools::sync::sync_all_tool(md.clone()));
    tools.push(wyckoff_tools::sync::import_tool(md));
    assert!(tools.len() >= 16, "{} tools", tools.len());
    tools
}

#[tokio::test]
async fn every_tool_schema_has_a_strict_form() {
    let home = tempfile::tempdir().unwrap();
    let tools = every_tool(home.path()).await;
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
}

#[tokio::test]
async fn every_tool_has_its_display_name_in_the_ui_table() {
    let home = tempfile::tempdir().unwrap();
    let tools = every_tool(home.path()).await;
    let table = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../ui/src/chat/toolNames.ts"),
    )
    .unwrap();
    let zh = table.split("TOOL_NAMES_EN").next().unwrap_or_default();
    for tool in &tools {
        let spec = tool.spec();
        let entry = format!("  {}: \"{}\",", spec.name, spec.display_name);
        assert!(zh.contains(&entry), "toolNames.ts lacks {entry}");
        assert!(
            table
                .split("TOOL_NAMES_EN")
                .nth(1)
                .unwrap()
                .contains(&format!("  {}: \"", spec.name)),
            "toolNames.ts has no English name for {}",
            spec.name
        );
    }
}
