//! The UI names every tool by its `ToolSpec` display name (reopened tool cards and tasks
//! look them up in `ui/src/chat/toolNames.ts`): a tool added here without its entry there
//! would show as a bare identifier.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use wyckoff_agent::scripted::ScriptedProvider;
use wyckoff_market::{MarketConfig, MarketData};
use wyckoff_tools::LocalToolsConfig;

#[tokio::test]
async fn every_tool_has_its_display_name_in_the_ui_table() {
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
    assert!(tools.len() >= 16, "{} tools", tools.len());
}
