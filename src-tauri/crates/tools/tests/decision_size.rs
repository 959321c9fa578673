//! The strategy decision sizes every buy it may propose with the approval's own sizing:
//! each reviewed candidate (given to the model, so its 建议仓位 can quote the engine) and
//! each holding the model says to add to carry the `suggested_size` that `suggest_sizes`
//! gives the same code at the same close on the same account; a keep carries none, and
//! without risk rules nothing is sized. The model is a local server speaking OpenAI's
//! stream; a real SQLite data home over the bundled bars, offline.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::ToolContext;
use wyckoff_engine::risk_limits::RiskLimits;
use wyckoff_llm::{HttpClient, HttpSettings, Provider, ProviderKind, ProviderSpec, build};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route, Script};
use wyckoff_tools::report;
use wyckoff_tools::risk::suggest_sizes;

use support::{account, close_of, open, rules};

const ANSWER: &str = "## 持仓去留\n| 000338 | 潍柴动力 | 加仓 | 突破 | 跌破止损清仓 |\n\n## 新候选\n000001\n\n```json\n{\"holdings\": [\n  {\"code\": \"000338\", \"action\": \"add\", \"reason\": \"放量突破\"},\n  {\"code\": \"000778\", \"action\": \"keep\", \"reason\": \"趋势完好\"}\n]}\n```\n";

async fn model() -> (MockServer, Arc<dyn Provider>) {
    let server = MockServer::start_with(
        Script {
            openai: vec![OpenAiStream::text_response(&[ANSWER])],
            ..Script::default()
        },
        0,
    )
    .await
    .unwrap();
    let http = HttpClient::new(&HttpSettings::default()).unwrap();
    let spec = ProviderSpec::new(ProviderKind::Openai)
        .model("mock-model")
        .base_url(format!("{}/v1", server.url()))
        .api_key("sk-decision-test");
    (server, build(&spec, &http).unwrap())
}

fn ctx() -> ToolContext {
    ToolContext {
        session_id: "s1".into(),
        call_id: "c1".into(),
        cancel: CancellationToken::new(),
        background: None,
        progress: wyckoff_agent::ProgressHandle::silent(),
    }
}

fn decision<'a>(out: &'a Value, code: &str) -> &'a Value {
    out["holding_decisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == code)
        .unwrap_or_else(|| panic!("no decision for {code}: {out}"))
}

#[tokio::test]
async fn the_decisions_buys_and_adds_carry_the_approvals_sizing() {
    let (md, _dir) = open().await;
    account(&md).await;
    let (server, provider) = model().await;
    // Two positions held, a limit of two: a new candidate breaks it, an add does not.
    let rules = rules(RiskLimits {
        max_positions: 2,
        drawdown_brake_bp: 0,
        ..RiskLimits::default()
    });
    let out = report::strategy(
        &md,
        provider.as_ref(),
        Some(&rules),
        &json!({"report_text": "## 进攻\n000001", "reviewed_codes": ["000001", "300027"]}),
        &ctx(),
    )
    .await
    .unwrap();

    // What the same rules give the same buys, the way the screen and the approval size them.
    let mut picks = Vec::new();
    for c in ["000001", "300027", "000338"] {
        picks.push((c.to_owned(), close_of(&md, c).await));
    }
    let want = suggest_sizes(&md, &rules, &picks).await;
    let want: Vec<Value> = want
        .iter()
        .map(|z| serde_json::to_value(z).unwrap())
        .collect();

    // The add carries its size; the keep carries none.
    let add = decision(&out, "000338");
    assert_eq!(add["action"], "add");
    assert_eq!(add["suggested_size"], want[2], "{out}");
    let sizing = &add["suggested_size"]["sizing"];
    assert!(sizing["shares"].as_u64().unwrap() > 0, "{add}");
    assert!(sizing["stop_e6"].as_i64().unwrap() > 0, "{add}");
    assert!(sizing["risk_fen"].as_i64().unwrap() > 0, "{add}");
    assert!(sizing["risk_pct"].as_f64().unwrap() <= 1.0, "{add}");
    assert!(
        add["suggested_size"]["breaches"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["type"] != "positions"),
        "an add is no new position: {add}"
    );
    assert!(
        decision(&out, "000778").get("suggested_size").is_none(),
        "{out}"
    );

    // Each candidate carries its size, and the new position breaks the limit of two.
    let facts = out["candidate_facts"].as_array().unwrap();
    assert_eq!(facts.len(), 2, "{out}");
    for (fact, want) in facts.iter().zip(&want[..2]) {
        assert_eq!(fact["suggested_size"], *want, "{fact}");
    }
    let first = &facts[0]["suggested_size"];
    assert_eq!(first["code"], "000001");
    assert!(
        first["breaches"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["type"] == "positions" && b["limit"] == 2),
        "{first}"
    );

    // The model was given the candidates' sizes and told to quote them, not to estimate.
    let body = &server.requests_to(Route::Openai)[0].raw_body;
    let shares = first["sizing"]["shares"].as_u64().unwrap();
    assert!(body.contains("suggested_size"), "{body}");
    assert!(body.contains(&format!("\\\"shares\\\":{shares}")), "{body}");
}

#[tokio::test]
async fn without_risk_rules_nothing_is_sized() {
    let (md, _dir) = open().await;
    account(&md).await;
    let (_server, provider) = model().await;
    let out = report::strategy(
        &md,
        provider.as_ref(),
        None,
        &json!({"report_text": "## 进攻\n000001", "reviewed_codes": ["000001"]}),
        &ctx(),
    )
    .await
    .unwrap();
    assert!(
        decision(&out, "000338").get("suggested_size").is_none(),
        "{out}"
    );
    assert!(out["candidate_facts"][0].get("suggested_size").is_none());
}
