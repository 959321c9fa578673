//! Sub-agents through the real `wyckoff run --json`: the parent delegates to
//! the research role over real HTTP (the mock vendor speaking OpenAI's stream); the
//! sub-agent's call to a tool outside its whitelist is refused without running it, an
//! allowed call runs, the sub-agent answers, and the parent's next request carries the
//! structured result with status `completed` and policy `use_result`. Its progress goes
//! out as `sub_agent` events, tagged with the role and the delegate call's id, between
//! that call's `tool_start` and `tool_result`. Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route, Script};

fn run(home: &Path, base: &str, prompt: &str) -> (Option<i32>, Vec<Value>, String) {
    let out = Command::new(wyckoff_e2e::binary("wyckoff"))
        .args([
            "run",
            "--json",
            "--provider",
            "openai",
            "--base-url",
            base,
            prompt,
        ])
        .env("OPENAI_API_KEY", "sk-e2e-subagent-canary")
        .env("WYCKOFF_HOME", home)
        .env("WYCKOFF_OFFLINE", "1")
        .env_remove("HTTPS_PROXY")
        .env_remove("HTTP_PROXY")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (
        out.status.code(),
        events,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_delegation_refuses_a_forbidden_tool_runs_an_allowed_one_and_returns_a_structured_result()
{
    let script = Script {
        openai: vec![
            // parent: delegate
            OpenAiStream::tool_call_response(
                "call_d",
                "delegate_to_research",
                &json!({"task": "看看 000001 的量价结构", "context": "用户关心平安银行"}),
            ),
            // sub-agent: a tool research may not use
            OpenAiStream::tool_call_response(
                "call_x",
                "update_portfolio",
                &json!({"action": "remove", "code": "000001"}),
            ),
            // sub-agent: an allowed one
            OpenAiStream::tool_call_response("call_a", "analyze_stock", &json!({"code": "000001"})),
            // sub-agent: its answer
            OpenAiStream::text_response(&["000001 处于下跌通道，数据截至 2020-06-16。"]),
            // parent: the final answer
            OpenAiStream::text_response(&["研究员结论：000001 偏弱。"]),
        ],
        ..Script::default()
    };
    let server = MockServer::start_with(script, 0).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let (h, base) = (home.path().to_path_buf(), format!("{}/v1", server.url()));
    let (code, events, stderr) =
        tokio::task::spawn_blocking(move || run(&h, &base, "让研究员看看 000001"))
            .await
            .unwrap();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(code, Some(0), "{stderr}\n{events:?}");

    // sub_agent events sit between the delegate call's tool_start and tool_result.
    let start = events
        .iter()
        .position(|e| e["type"] == "tool_start" && e["id"] == "call_d")
        .expect("tool_start of the delegate call");
    let end = events
        .iter()
        .position(|e| e["type"] == "tool_result" && e["id"] == "call_d")
        .expect("tool_result of the delegate call");
    let subs: Vec<&Value> = events[start..end]
        .iter()
        .filter(|e| e["type"] == "sub_agent")
        .collect();
    assert!(!subs.is_empty(), "{types:?}");
    assert!(
        subs.iter()
            .all(|e| e["agent"] == "research" && e["call_id"] == "call_d")
    );
    assert!(
        subs.iter()
            .any(|e| e["kind"] == "tool_start" && e["text"] == "analyze_stock"),
        "{subs:?}"
    );
    assert!(events[..start].iter().all(|e| e["type"] != "sub_agent"));
    assert!(events[end..].iter().all(|e| e["type"] != "sub_agent"));

    // The structured result, as the tool result and in the parent's next request.
    let result = &events[end]["result"];
    assert_eq!(result["agent"], "research");
    assert_eq!(result["status"], "completed");
    assert_eq!(result["policy"]["next_action"], "use_result");
    assert_eq!(result["policy"]["retryable"], false);
    // What ran is listed; the refused call is listed as refused, not as run.
    assert_eq!(result["tool_calls"], json!(["analyze_stock"]));
    assert_eq!(result["refused_calls"], json!(["update_portfolio"]));
    assert!(
        !subs
            .iter()
            .any(|e| e["kind"] == "tool_start" && e["text"] == "update_portfolio"),
        "a refused call never starts: {subs:?}"
    );
    assert!(
        subs.iter().any(|e| e["kind"] == "tool_error"
            && e["text"]
                .as_str()
                .unwrap()
                .starts_with("update_portfolio: ")),
        "{subs:?}"
    );
    assert!(result["result"].as_str().unwrap().contains("下跌通道"));
    assert_eq!(result["context_truncated"], false);

    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 5);
    // The sub-agent's model saw only its whitelist (no update_portfolio, no delegation).
    let sub_tools: Vec<&str> = requests[1].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(sub_tools.contains(&"analyze_stock"), "{sub_tools:?}");
    assert!(!sub_tools.contains(&"update_portfolio"));
    assert!(!sub_tools.iter().any(|t| t.starts_with("delegate_to_")));
    // Its task and context went in the first message.
    assert!(requests[1].raw_body.contains("看看 000001 的量价结构"));
    assert!(requests[1].raw_body.contains("用户关心平安银行"));
    // The refusal reached the sub-agent's next request; the registry never ran it.
    assert!(
        requests[2]
            .raw_body
            .contains("sub-agent 无权调用工具: update_portfolio")
    );
    // The sub-agent's tokens count in the turn's totals: every request's usage, parent and
    // sub-agent (3 tool-call answers of 30/6, 2 text answers of 10/5).
    let last = events.iter().rev().find(|e| e["type"] == "usage").unwrap();
    assert_eq!(last["turn"]["input_tokens"], 30 * 3 + 10 * 2, "{last}");
    assert_eq!(last["turn"]["output_tokens"], 6 * 3 + 5 * 2);
    // The parent's last request carries the structured result.
    let last = &requests[4].raw_body;
    assert!(last.contains(r#"\"status\":\"completed\""#), "{last}");
    assert!(last.contains("use_result"));
}

/// The trading role through `wyckoff run`: six tool rounds run, the seventh is asked for
/// and refused without running, and the delegation ends as `timeout` with the role's
/// fallbacks (seed 11_07: trading, 6 rounds). It ran seven before.
#[tokio::test(flavor = "multi_thread")]
async fn the_trading_role_runs_exactly_six_tool_rounds() {
    let mut openai = vec![OpenAiStream::tool_call_response(
        "call_d",
        "delegate_to_trading",
        &json!({"task": "给 000001 做去留决策"}),
    )];
    // seven rounds asked for; different arguments each, so no doom loop
    for i in 0..7 {
        openai.push(OpenAiStream::tool_call_response(
            &format!("call_{i}"),
            "get_market_history",
            &json!({"days": 20 + i}),
        ));
    }
    openai.push(OpenAiStream::text_response(&[
        "交易员没能给出结论，改用直接工具。",
    ]));
    let server = MockServer::start_with(
        Script {
            openai,
            ..Script::default()
        },
        0,
    )
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let (h, base) = (home.path().to_path_buf(), format!("{}/v1", server.url()));
    let (code, events, stderr) =
        tokio::task::spawn_blocking(move || run(&h, &base, "让交易员给 000001 做去留决策"))
            .await
            .unwrap();
    assert_eq!(code, Some(0), "{stderr}\n{events:?}");
    let subs: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "sub_agent" && e["agent"] == "trading")
        .collect();
    let kinds = |kind: &str| subs.iter().filter(|e| e["kind"] == kind).count();
    // six rounds' calls started and ran (a result or the tool's own error); the seventh
    // never started and is refused as such
    assert_eq!(kinds("tool_start"), 6, "{subs:?}");
    let refused: Vec<&&Value> = subs
        .iter()
        .filter(|e| {
            e["kind"] == "tool_error" && e["text"].as_str().unwrap().contains("已用完 6 轮工具调用")
        })
        .collect();
    assert_eq!(refused.len(), 1, "{subs:?}");
    assert_eq!(kinds("tool_result") + kinds("tool_error"), 7);

    let result = &events
        .iter()
        .find(|e| e["type"] == "tool_result" && e["id"] == "call_d")
        .unwrap()["result"];
    assert_eq!(result["status"], "timeout", "{result}");
    assert_eq!(result["rounds"], 7);
    assert_eq!(result["tool_rounds"], 6);
    assert_eq!(
        result["tool_calls"].as_array().unwrap().len(),
        6,
        "{result}"
    );
    assert_eq!(result["refused_calls"], json!(["get_market_history"]));
    assert_eq!(result["policy"]["next_action"], "fallback_to_direct_tools");
    assert_eq!(
        result["policy"]["fallback_tools"],
        json!([
            "portfolio",
            "generate_strategy_decision",
            "get_market_overview"
        ])
    );
    // the parent's request, seven of the sub-agent's, the parent's answer
    assert_eq!(server.requests_to(Route::Openai).len(), 9);
}
