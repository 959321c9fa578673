//! The report's figures traced to the facts it was given: the bundled bars' close is
//! sourced, a target no fact holds and a code no input names are not.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::ToolContext;
use wyckoff_llm::{HttpClient, HttpSettings, ProviderKind, ProviderSpec, build};
use wyckoff_market::{MarketConfig, MarketData};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Script};
use wyckoff_tools::report;

#[tokio::test]
async fn the_reports_close_is_sourced_and_an_invented_code_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(dir.path()))
        .await
        .unwrap();
    // The close the report will be given, from the same engine path.
    let d = wyckoff_tools::analyze::run(&md, &json!({"code": "000001"}))
        .await
        .unwrap();
    let close = d["latest_close"].as_f64().unwrap();
    let answer = format!("### 000001\n收盘 {close:.2} 元，目标 987.65 元，可换 601318。");
    let server = MockServer::start_with(
        Script {
            openai: vec![OpenAiStream::text_response(&[&answer])],
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
    let ctx = ToolContext {
        session_id: "s1".into(),
        call_id: "c9".into(),
        cancel: CancellationToken::new(),
        background: None,
        progress: wyckoff_agent::ProgressHandle::silent(),
    };
    let out = report::report(
        &md,
        provider.as_ref(),
        &json!({"stock_codes": ["000001"]}),
        &ctx,
    )
    .await
    .unwrap();
    let g = &out["grounding"];
    let classes: Vec<(String, String)> = g["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["text"].as_str().unwrap().to_owned(),
                c["support"]["type"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let s = |t: &str, c: &str| (t.to_owned(), c.to_owned());
    assert_eq!(
        classes,
        [
            s("000001", "sourced"),
            s(&format!("{close:.2} 元"), "sourced"),
            s("987.65 元", "unsupported"),
            s("601318", "unsupported"),
        ]
    );
    assert_eq!(g["invented_codes"], 1);
    let close_source: &Value = &g["claims"][1]["support"]["source"];
    assert_eq!(close_source["call_id"], "c9");
    assert_eq!(close_source["path"], "facts[0].latest_close");
}
