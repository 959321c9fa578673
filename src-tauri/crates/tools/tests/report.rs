//! `generate_ai_report` / `generate_strategy_decision` over real HTTP: the model is a local
//! server speaking OpenAI's stream (the mock vendor); the figures come from the bundled
//! real bars of a temporary offline data home.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use wyckoff_agent::{ToolContext, ToolError};
use wyckoff_llm::{HttpClient, HttpSettings, Provider, ProviderKind, ProviderSpec, build};
use wyckoff_market::{MarketConfig, MarketData};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Response, Route, Script};
use wyckoff_tools::report;

async fn setup(
    responses: Vec<Response>,
) -> (MockServer, Arc<dyn Provider>, MarketData, tempfile::TempDir) {
    let server = MockServer::start_with(
        Script {
            openai: responses,
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
        .api_key("sk-report-test");
    let provider = build(&spec, &http).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(dir.path()))
        .await
        .unwrap();
    (server, provider, md, dir)
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

#[tokio::test]
async fn the_report_keeps_the_figures_it_gave_the_model() {
    let answer = "## 进攻\n暂无\n## 防守\n### 000001 平安银行\n核心逻辑…";
    let (server, provider, md, _dir) = setup(vec![OpenAiStream::text_response(&[answer])]).await;
    let out = report::report(
        &md,
        provider.as_ref(),
        &json!({"stock_codes": ["000001", "999999"]}),
        &ctx(),
    )
    .await
    .unwrap();
    assert_eq!(out["report_text"], answer);
    assert_eq!(out["stock_count"], 1);
    assert_eq!(out["reviewed_codes"], json!(["000001"]));
    // the unknown code is reported missing, never guessed
    assert_eq!(out["missing"][0]["code"], "999999");
    let fact = &out["facts"][0];
    assert_eq!(fact["code"], "000001");
    let close = fact["latest_close"].as_f64().unwrap();
    // the same figure went to the model
    let req = &server.requests_to(Route::Openai)[0];
    assert!(
        req.raw_body.contains(&close.to_string()),
        "{}",
        req.raw_body
    );
    assert!(req.raw_body.contains("999999"));
    assert!(req.raw_body.contains(fact["latest_date"].as_str().unwrap()));
}

#[tokio::test]
async fn a_model_failure_fails_the_report_with_the_classified_error() {
    let (_server, provider, md, _dir) = setup(vec![Response::error(
        401,
        json!({"error": {"message": "invalid api key", "type": "invalid_request_error"}}),
    )])
    .await;
    let err = report::report(
        &md,
        provider.as_ref(),
        &json!({"stock_codes": ["000001"]}),
        &ctx(),
    )
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, ToolError::Failed(_)), "{err:?}");
    assert!(text.contains("模型调用失败"), "{text}");
    assert!(text.contains("Auth"), "{text}");
}

#[tokio::test]
async fn a_report_needs_codes_or_a_finished_screen() {
    let (server, provider, md, _dir) = setup(Vec::new()).await;
    let err = report::report(&md, provider.as_ref(), &json!({}), &ctx())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("screen_stocks"), "{err}");
    assert!(server.requests_to(Route::Openai).is_empty());
}

#[tokio::test]
async fn the_decision_never_trades_and_says_so() {
    let answer = "## 持仓去留\n| 000001 | 平安银行 | 持有 | … |";
    let (server, provider, md, _dir) = setup(vec![OpenAiStream::text_response(&[answer])]).await;
    let out = report::strategy(
        &md,
        provider.as_ref(),
        None,
        &json!({"report_text": "## 防守\n000001", "reviewed_codes": ["000001"]}),
        &ctx(),
    )
    .await
    .unwrap();
    assert_eq!(out["decision_text"], answer);
    assert_eq!(out["executed"], false);
    assert_eq!(out["report_source"], "provided");
    assert_eq!(out["candidate_count"], 1);
    let req = &server.requests_to(Route::Openai)[0];
    assert!(req.raw_body.contains("update_portfolio"));
    // the portfolio is untouched
    let view = wyckoff_tools::portfolio::portfolio(&md, &json!({"mode": "view"}))
        .await
        .unwrap();
    assert!(
        view["positions"].as_array().is_none_or(|p| p.is_empty()),
        "{view}"
    );
}

/// The model writes the decision; each action is checked against the actual holdings:
/// the valid ones come back structured beside the Markdown (the JSON block leaves the
/// Markdown), an action for a stock not held or an unknown action is rejected and named.
#[tokio::test]
async fn the_decision_comes_back_structured_per_holding_and_checked() {
    let answer = "## 持仓去留\n| 000001 | 平安银行 | 减仓 | 破位 | 跌破 12 清仓 |\n\n## 风险提示\n仅供参考\n\n```json\n{\"holdings\": [\n  {\"code\": \"000001\", \"action\": \"trim\", \"reason\": \"放量破位\"},\n  {\"code\": \"600519\", \"action\": \"add\", \"reason\": \"不是持仓\"},\n  {\"code\": \"000002\", \"action\": \"hold-ish\", \"reason\": \"?\"}\n]}\n```\n";
    let (server, provider, md, _dir) = setup(vec![OpenAiStream::text_response(&[answer])]).await;
    let now = chrono::Utc::now();
    for (code, name) in [("000001", "平安银行"), ("000002", "万科A")] {
        md.portfolio()
            .apply(
                wyckoff_market::PortfolioOp::Add {
                    code: code.into(),
                    name: name.into(),
                    shares: 1000,
                    cost_price: 10.0,
                    buy_dt: Some("2020-01-06".into()),
                },
                now,
            )
            .await
            .unwrap();
    }
    let out = report::strategy(
        &md,
        provider.as_ref(),
        None,
        &json!({"report_text": "## 防守\n000001", "reviewed_codes": []}),
        &ctx(),
    )
    .await
    .unwrap();
    // the model was asked for the block, with the holdings it must cover
    let req = &server.requests_to(Route::Openai)[0];
    assert!(
        req.raw_body.contains("keep|trim|exit|add"),
        "{}",
        req.raw_body
    );
    assert!(req.raw_body.contains("000002"));

    assert_eq!(
        out["holding_decisions"],
        json!([{"code": "000001", "name": "平安银行", "action": "trim", "reason": "放量破位"}])
    );
    assert_eq!(
        out["decision_problems"],
        json!([
            {"type": "not_a_holding", "code": "600519"},
            {"type": "unknown_action", "code": "000002", "action": "hold-ish"},
            {"type": "missing_holding", "code": "000002"}
        ])
    );
    let markdown = out["decision_text"].as_str().unwrap();
    assert!(markdown.starts_with("## 持仓去留"), "{markdown}");
    assert!(markdown.ends_with("仅供参考"), "{markdown}");
    assert!(!markdown.contains("```"), "{markdown}");
    assert_eq!(out["executed"], false);
    assert_eq!(out["position_count"], 2);
}
