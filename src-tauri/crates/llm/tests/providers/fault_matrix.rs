//! The provider fault matrix. Every (wire format, fault) pair runs over
//! real HTTP against the mock vendor and must end in ONE defined state — the whole answer,
//! or an `LlmError` of the expected kind after exactly the text that really arrived —
//! never a hang (each row is bounded), never duplicated or lost text.

use std::time::Duration;

use serde_json::json;
use wyckoff_llm::ProviderKind;
use wyckoff_mock_vendor::{
    ClaudeStream, Event, GeminiStream, OpenAiStream, Response, Route, claude_error, gemini_error,
    openai_error,
};
use wyckoff_protocol::ErrorKind;

use crate::common::*;

/// Idle timeout for every row: short so stalls end fast, long enough for the trickle.
const IDLE: Duration = Duration::from_millis(400);
/// Per-chunk delay of the slow trickle: under IDLE, while the whole answer takes longer.
const TRICKLE: u64 = 150;
/// Bound of one row: a row that has not ended by then is a hang.
const ROW_BOUND: Duration = Duration::from_secs(10);

const PARTS: [&str; 3] = ["Spring ", "then ", "SOS"];
const WHOLE: &str = "Spring then SOS";

#[derive(Debug, Clone, Copy, PartialEq)]
enum Vendor {
    Openai,
    Claude,
    Gemini,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Unauthorized401,
    Forbidden403,
    ModelNotFound404,
    RateLimited429RetryAfter,
    RateLimited429,
    Server500,
    Unavailable503,
    Overloaded529,
    ContextTooLong,
    MalformedJsonChunk,
    UnknownEventType,
    CutBeforeFinalEvent,
    StallBeforeFirstByte,
    StallMidStream,
    ConnectionReset,
    SlowTrickle,
    HtmlErrorPage200,
}

/// How a row must end.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Outcome {
    /// The stream completes with exactly the whole answer.
    Completes,
    /// The stream ends in an error of `kind` after exactly `text` reached the consumer.
    Fails {
        kind: ErrorKind,
        text: &'static str,
        retry_after: Option<Duration>,
    },
}

const fn fails(kind: ErrorKind) -> Outcome {
    Outcome::Fails {
        kind,
        text: "",
        retry_after: None,
    }
}

const fn fails_after(kind: ErrorKind, text: &'static str) -> Outcome {
    Outcome::Fails {
        kind,
        text,
        retry_after: None,
    }
}

/// The matrix: every fault is run for each of the three wire formats.
const FAULTS: &[(Fault, Outcome)] = &[
    (Fault::Unauthorized401, fails(ErrorKind::Authentication)),
    (Fault::Forbidden403, fails(ErrorKind::Permission)),
    (Fault::ModelNotFound404, fails(ErrorKind::InvalidRequest)),
    (
        Fault::RateLimited429RetryAfter,
        Outcome::Fails {
            kind: ErrorKind::RateLimit,
            text: "",
            retry_after: Some(Duration::from_secs(7)),
        },
    ),
    (Fault::RateLimited429, fails(ErrorKind::RateLimit)),
    (Fault::Server500, fails(ErrorKind::Server)),
    (Fault::Unavailable503, fails(ErrorKind::Overloaded)),
    (Fault::Overloaded529, fails(ErrorKind::Overloaded)),
    (Fault::ContextTooLong, fails(ErrorKind::ContextTooLong)),
    (
        Fault::MalformedJsonChunk,
        fails_after(ErrorKind::Protocol, "Spring "),
    ),
    (Fault::UnknownEventType, Outcome::Completes),
    (
        Fault::CutBeforeFinalEvent,
        fails_after(ErrorKind::Protocol, WHOLE),
    ),
    (Fault::StallBeforeFirstByte, fails(ErrorKind::Timeout)),
    (
        Fault::StallMidStream,
        fails_after(ErrorKind::Timeout, "Spring "),
    ),
    (
        Fault::ConnectionReset,
        fails_after(ErrorKind::Network, "Spring "),
    ),
    (Fault::SlowTrickle, Outcome::Completes),
    (Fault::HtmlErrorPage200, fails(ErrorKind::Protocol)),
];

const VENDORS: [Vendor; 3] = [Vendor::Openai, Vendor::Claude, Vendor::Gemini];

impl Vendor {
    fn route(self) -> Route {
        match self {
            Vendor::Openai => Route::Openai,
            Vendor::Claude => Route::Claude,
            Vendor::Gemini => Route::Gemini,
        }
    }

    fn kind(self) -> ProviderKind {
        match self {
            Vendor::Openai => ProviderKind::OpenaiCompatible,
            Vendor::Claude => ProviderKind::Claude,
            Vendor::Gemini => ProviderKind::Gemini,
        }
    }

    /// The complete answer in this vendor's wire format.
    fn whole_answer(self) -> Vec<Event> {
        match self {
            Vendor::Openai => OpenAiStream::text_response(&PARTS).events,
            Vendor::Claude => ClaudeStream::new(10, 0, 0)
                .text(&PARTS)
                .stop("end_turn", 5)
                .message_stop()
                .events(),
            Vendor::Gemini => GeminiStream::text_response(&PARTS).events,
        }
    }

    /// The answer up to its last text piece, without the events that finish it.
    fn unfinished_answer(self) -> Vec<Event> {
        match self {
            Vendor::Openai => OpenAiStream::new().role().text(&PARTS).events(),
            Vendor::Claude => ClaudeStream::new(10, 0, 0).text(&PARTS).events(),
            Vendor::Gemini => GeminiStream::new().text(&PARTS).events(),
        }
    }

    /// An event of a type this vendor's parser has never seen.
    fn unknown_event(self) -> Event {
        match self {
            Vendor::Openai => Event::json(json!({"object": "chat.completion.annotation",
                "annotation": {"kind": "citation"}})),
            Vendor::Claude => Event::named(
                "content_block_citation",
                json!({"type": "content_block_citation", "index": 0}),
            ),
            Vendor::Gemini => Event::json(json!({"modelVersion": "gemini-next",
                "groundingMetadata": {"webSearchQueries": []}})),
        }
    }

    fn error_body(self, status: u16, code: &str, message: &str) -> serde_json::Value {
        match self {
            Vendor::Openai => openai_error(message, code, None),
            Vendor::Claude => claude_error(code, message),
            Vendor::Gemini => gemini_error(status, code, message),
        }
    }
}

/// Index just after the event that carries the first text piece.
fn after_first_piece(events: &[Event]) -> usize {
    events
        .iter()
        .position(|e| e.to_wire().contains(PARTS[0]))
        .map_or(0, |i| i + 1)
}

fn scripted(vendor: Vendor, fault: Fault) -> Response {
    let error = |status: u16, code: &str, message: &str| {
        Response::error(status, vendor.error_body(status, code, message))
    };
    match fault {
        Fault::Unauthorized401 => error(401, "authentication_error", "invalid x-api-key"),
        Fault::Forbidden403 => error(403, "permission_error", "key lacks access"),
        Fault::ModelNotFound404 => error(404, "not_found_error", "model: mock-model not found"),
        Fault::RateLimited429RetryAfter => {
            error(429, "rate_limit_error", "slow down").header("retry-after", "7")
        }
        Fault::RateLimited429 => error(429, "rate_limit_error", "slow down"),
        Fault::Server500 => error(500, "api_error", "internal error"),
        Fault::Unavailable503 => error(503, "api_error", "service unavailable"),
        Fault::Overloaded529 => error(529, "overloaded_error", "Overloaded"),
        Fault::ContextTooLong => error(
            400,
            "invalid_request_error",
            "prompt is too long: 210000 tokens > 200000 maximum",
        ),
        Fault::MalformedJsonChunk => {
            let mut events = vendor.whole_answer();
            let at = after_first_piece(&events);
            events.insert(
                at,
                Event::text(r#"{"choices": [{"delta": {"content": "bro"#),
            );
            Response::stream(events)
        }
        Fault::UnknownEventType => {
            let mut events = vendor.whole_answer();
            let at = after_first_piece(&events);
            events.insert(at, vendor.unknown_event());
            Response::stream(events)
        }
        Fault::CutBeforeFinalEvent => Response::stream(vendor.unfinished_answer()),
        Fault::StallBeforeFirstByte => Response::stream(vendor.whole_answer()).stall_after(0),
        Fault::StallMidStream => {
            let events = vendor.whole_answer();
            let at = after_first_piece(&events);
            Response::stream(events).stall_after(at)
        }
        Fault::ConnectionReset => {
            let events = vendor.whole_answer();
            let at = after_first_piece(&events);
            Response::stream(events).cut_after(at)
        }
        Fault::SlowTrickle => Response::stream(
            vendor
                .whole_answer()
                .into_iter()
                .map(|e| e.delayed(TRICKLE))
                .collect(),
        ),
        Fault::HtmlErrorPage200 => Response::error(
            200,
            json!("<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"),
        )
        .header("content-type", "text/html"),
    }
}

/// Runs one row; `Err` describes how it broke its expectation.
async fn run_row(vendor: Vendor, fault: Fault, expected: Outcome) -> Result<(), String> {
    let server = server().await;
    server.push(vendor.route(), scripted(vendor, fault));
    let provider = provider_with(vendor.kind(), &server, Some("k-test"), IDLE, &http());
    let request = req("诊断 600519");
    let Ok((chunks, err)) =
        tokio::time::timeout(ROW_BOUND, collect(provider.as_ref(), &request)).await
    else {
        return Err(format!("hung for more than {ROW_BOUND:?}"));
    };
    let got_text = text(&chunks);
    if server.requests().len() != 1 {
        return Err(format!(
            "{} requests reached the vendor, expected exactly 1 (the provider does not retry)",
            server.requests().len()
        ));
    }
    match (expected, err) {
        (Outcome::Completes, None) if got_text == WHOLE => Ok(()),
        (Outcome::Completes, None) => Err(format!("completed with text {got_text:?}")),
        (Outcome::Completes, Some(e)) => {
            Err(format!("failed: {:?} {e} (text {got_text:?})", e.kind))
        }
        (Outcome::Fails { .. }, None) => Err(format!("completed with text {got_text:?}")),
        (
            Outcome::Fails {
                kind,
                text: want_text,
                retry_after,
            },
            Some(e),
        ) => {
            let mut problems = Vec::new();
            if e.kind != kind {
                problems.push(format!("kind {:?}, expected {kind:?} ({e})", e.kind));
            }
            if got_text != want_text {
                problems.push(format!("text {got_text:?}, expected {want_text:?}"));
            }
            let content_arrived = !want_text.is_empty();
            if e.after_content != content_arrived {
                problems.push(format!("after_content {}", e.after_content));
            }
            if retry_after.is_some() && e.retry_after != retry_after {
                problems.push(format!("retry_after {:?}", e.retry_after));
            }
            if e.message.trim().is_empty() {
                problems.push("empty error message".into());
            }
            if problems.is_empty() {
                Ok(())
            } else {
                Err(problems.join("; "))
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_of_every_wire_format_ends_in_one_defined_state() {
    let mut rows = 0;
    let mut broken = Vec::new();
    for vendor in VENDORS {
        for &(fault, expected) in FAULTS {
            rows += 1;
            if let Err(why) = run_row(vendor, fault, expected).await {
                broken.push(format!("{vendor:?} × {fault:?}: {why}"));
            }
        }
    }
    assert_eq!(rows, 51, "3 wire formats × 17 faults");
    assert!(
        broken.is_empty(),
        "{} of {rows} rows broken:\n{}",
        broken.len(),
        broken.join("\n")
    );
}
