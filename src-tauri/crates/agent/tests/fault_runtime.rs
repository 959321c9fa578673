//! Provider faults through the runtime: a tool round succeeds, then the next model call
//! meets a fault over real HTTP. Each row ends in one defined state — retried (a stall,
//! within `stall_retries`) or a turn_failed of the right kind — within a bound, with one
//! terminal event and never an unanswered tool call in the stored conversation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wyckoff_agent::{
    CollectingSink, HeadlessApprover, Runtime, RuntimeConfig, SystemClock, ToolRegistry, ToolSpec,
    TurnOutcome,
};
use wyckoff_llm::{HttpClient, HttpSettings, OpenAiProvider, ProviderConfig};
use wyckoff_mock_vendor::{Event, MockServer, OpenAiStream, Response, Route, openai_error};
use wyckoff_protocol::{ErrorKind, RuntimeEvent};

const IDLE: Duration = Duration::from_millis(400);
const ANSWER: &str = "600519 处于吸筹阶段。";

#[derive(Debug, Clone, Copy)]
enum Fault {
    Unauthorized401,
    RateLimited429,
    Server500,
    Overloaded529,
    ContextTooLong,
    MalformedJsonChunk,
    CutBeforeFinalEvent,
    StallMidStream,
    ConnectionReset,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Outcome {
    /// The round was re-run and the turn finished with the answer.
    Retried,
    Failed(ErrorKind),
}

const ROWS: &[(Fault, Outcome)] = &[
    (
        Fault::Unauthorized401,
        Outcome::Failed(ErrorKind::Authentication),
    ),
    (Fault::RateLimited429, Outcome::Failed(ErrorKind::RateLimit)),
    (Fault::Server500, Outcome::Failed(ErrorKind::Server)),
    (Fault::Overloaded529, Outcome::Failed(ErrorKind::Overloaded)),
    (
        Fault::ContextTooLong,
        Outcome::Failed(ErrorKind::ContextTooLong),
    ),
    (
        Fault::MalformedJsonChunk,
        Outcome::Failed(ErrorKind::Protocol),
    ),
    (
        Fault::CutBeforeFinalEvent,
        Outcome::Failed(ErrorKind::Protocol),
    ),
    (Fault::StallMidStream, Outcome::Retried),
    (Fault::ConnectionReset, Outcome::Failed(ErrorKind::Network)),
];

fn faulty(fault: Fault) -> Response {
    let partial = || OpenAiStream::new().role().text(&["600519 "]);
    match fault {
        Fault::Unauthorized401 => {
            Response::error(401, openai_error("bad key", "invalid_api_key", None))
        }
        Fault::RateLimited429 => {
            Response::error(429, openai_error("slow down", "rate_limit_error", None))
        }
        Fault::Server500 => Response::error(500, openai_error("boom", "server_error", None)),
        Fault::Overloaded529 => {
            Response::error(529, openai_error("Overloaded", "overloaded_error", None))
        }
        Fault::ContextTooLong => Response::error(
            400,
            openai_error(
                "maximum context length is 8192 tokens",
                "invalid_request_error",
                None,
            ),
        ),
        Fault::MalformedJsonChunk => partial()
            .event(Event::text("{\"choices\": [{\"delta\""))
            .finish("stop")
            .done()
            .response(),
        Fault::CutBeforeFinalEvent => partial().response(),
        Fault::StallMidStream => partial().finish("stop").done().response().stall_after(2),
        Fault::ConnectionReset => partial().finish("stop").done().response().cut_after(2),
    }
}

fn runtime(server: &MockServer) -> Runtime {
    let http = HttpClient::new(&HttpSettings::default()).unwrap();
    let provider = Arc::new(OpenAiProvider::new(
        ProviderConfig {
            name: "openai".into(),
            model: "gpt-4o".into(),
            base_url: format!("{}/v1", server.url()),
            api_key: Some("sk-test-0000000000".into()),
            context_window: 128_000,
            idle_timeout: IDLE,
        },
        http,
    ));
    let mut reg = ToolRegistry::new();
    reg.register(tool(
        ToolSpec::new("analyze_stock", "个股分析").concurrency_safe(),
        obj(json!({"code": {"type": "string"}}), &["code"]),
        |args, _| async move { Ok(json!({"code": args["code"], "phase": "吸筹"})) },
    ));
    Runtime::new(
        provider,
        Arc::new(reg),
        RuntimeConfig::default(),
        Arc::new(HeadlessApprover::Never),
        None,
        Arc::new(SystemClock),
    )
}

async fn run_row(fault: Fault, expected: Outcome) -> Result<(), String> {
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .tool_call(0, "call_1", "analyze_stock", &["{\"code\": \"600519\"}"])
            .finish("tool_calls")
            .done()
            .response(),
    );
    server.push(Route::Openai, faulty(fault));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["600519 ", "处于吸筹阶段。"]),
    );
    let rt = runtime(&server);
    let sink = CollectingSink::new();
    let mut messages = Vec::new();
    let turn = rt.run_turn(
        &mut messages,
        "sys",
        "分析 600519",
        sink.clone(),
        CancellationToken::new(),
    );
    let Ok(out) = tokio::time::timeout(Duration::from_secs(15), turn).await else {
        return Err("turn hung".into());
    };
    let events = sink.events();
    let checks = std::panic::catch_unwind(|| {
        assert_one_terminal(&events);
        assert_valid_conversation(&messages);
    });
    if checks.is_err() {
        return Err(format!(
            "invalid events or stored conversation: {messages:?}"
        ));
    }
    let retried = events
        .iter()
        .any(|e| matches!(e, RuntimeEvent::Retry { .. }));
    match (expected, &out) {
        (Outcome::Retried, TurnOutcome::Done { text, .. }) if text == ANSWER && retried => Ok(()),
        (Outcome::Failed(kind), TurnOutcome::Failed { kind: got, message })
            if *got == kind && !message.trim().is_empty() =>
        {
            // A failed turn sends nothing more: the good answer queued after is unused.
            if server.pending(Route::Openai) == 1 {
                Ok(())
            } else {
                Err(format!(
                    "{} answers left unused, expected 1: the turn made extra calls or too few",
                    server.pending(Route::Openai)
                ))
            }
        }
        _ => Err(format!("ended {out:?} (retry event: {retried})")),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_after_a_tool_round_end_in_one_defined_state() {
    let mut broken = Vec::new();
    for &(fault, expected) in ROWS {
        if let Err(why) = run_row(fault, expected).await {
            broken.push(format!("{fault:?}: {why}"));
        }
    }
    assert!(
        broken.is_empty(),
        "{} of {} rows broken:\n{}",
        broken.len(),
        ROWS.len(),
        broken.join("\n")
    );
}
