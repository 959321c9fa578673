#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Delegation as a real session wires it: each sub-agent role is offered exactly its seed
//! 11_07 whitelist out of the session's tools, the parent has every delegate and fallback
//! tool, and the tools and fields the prompts name exist.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use wyckoff_agent::subagents::{ROLES, SubAgentToolProxy, roles::ANALYSIS_VERBATIM_FIELDS};
use wyckoff_agent::{HeadlessApprover, NullSink};
use wyckoff_config::secrets::MemoryBackend;
use wyckoff_config::{DataHome, Secrets, Settings};
use wyckoff_mock_vendor::MockServer;
use wyckoff_protocol::ToolCall;
use wyckoff_session::{ModelOverrides, Services, Session, SessionOptions, prompt};

async fn session() -> (Session, tempfile::TempDir, MockServer) {
    let home = tempfile::tempdir().unwrap();
    let settings = Settings {
        // No online market source: the bundled data only.
        data_sources: Vec::new(),
        ..Settings::default()
    };
    let secrets = Secrets::with_backend(Box::new(MemoryBackend::default()), Box::new(|_| None));
    let services = Services::open(DataHome::new(home.path()), settings, Arc::new(secrets))
        .await
        .unwrap();
    let server = MockServer::start().await.unwrap();
    let session = services
        .session(SessionOptions {
            overrides: ModelOverrides {
                provider: Some("openai-compatible".into()),
                model: Some("mock-model".into()),
                base_url: Some(format!("{}/v1", server.url())),
                ..ModelOverrides::default()
            },
            continue_session: None,
            approver: Arc::new(HeadlessApprover::Never),
        })
        .await
        .unwrap();
    (session, home, server)
}

#[tokio::test]
async fn each_role_is_offered_exactly_its_whitelist_out_of_the_sessions_tools() {
    let (session, _home, _server) = session().await;
    let registry = session.runtime().registry().clone();
    for role in &ROLES {
        let proxy = SubAgentToolProxy::new(
            registry.clone(),
            role,
            tokio::time::Instant::now() + Duration::from_secs(60),
        );
        let mut offered = proxy.allowed_tools();
        offered.sort_unstable();
        let mut whitelist: Vec<String> = role.tools.iter().map(|t| (*t).to_owned()).collect();
        whitelist.sort_unstable();
        // every whitelisted tool exists under that name, and nothing else gets through
        assert_eq!(offered, whitelist, "{}", role.name);
        for tool in role.fallback_tools.iter().chain([&role.delegate_tool]) {
            assert!(registry.contains(tool), "the parent lacks {tool}");
        }
    }
}

#[tokio::test]
async fn every_tool_the_main_prompt_names_is_one_the_session_has() {
    let (session, _home, _server) = session().await;
    let registry = session.runtime().registry();
    // result and data fields the prompt names; every other snake_case word is a tool
    let fields = [
        "data_status",
        "as_of",
        "next_action",
        "use_result",
        "fallback_to_direct_tools",
        "fallback_tools",
        "stop_and_report_cancelled",
        "context_truncated",
        "result_truncated",
        "background_task_ids",
    ];
    let words: Vec<&str> = prompt::system_prompt()
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.contains('_'))
        .collect();
    assert!(words.contains(&"delegate_to_trading"));
    for word in words {
        assert!(
            fields.contains(&word) || registry.contains(word),
            "the prompt names {word}, which the session does not have"
        );
    }
}

#[tokio::test]
async fn the_fields_the_analysis_prompt_quotes_are_in_analyze_stocks_result() {
    let (session, _home, _server) = session().await;
    let env = session
        .runtime()
        .exec_env(Arc::new(NullSink), CancellationToken::new());
    let outcome = session
        .runtime()
        .registry()
        .execute(
            &ToolCall::new("a1", "analyze_stock", json!({"code": "000001"})),
            &env,
        )
        .await;
    assert!(!outcome.is_error, "{}", outcome.content);
    for field in ANALYSIS_VERBATIM_FIELDS {
        assert!(
            outcome.result.get(field).is_some(),
            "analyze_stock returns no {field}: {}",
            outcome.result
        );
    }
}
