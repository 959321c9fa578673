//! A scriptable HTTP server that speaks the LLM vendors' streaming wire formats, for
//! tests of the `wyckoff-llm` providers and end-to-end tests of `wyckoff` and the app.
//!
//! It listens on `127.0.0.1` and answers three vendor routes, each from its own queue of
//! scripted responses (first in, first out):
//!
//! | route     | path                                                  |
//! |-----------|-------------------------------------------------------|
//! | `openai`  | `POST …/chat/completions` (any prefix, e.g. `/v1`)     |
//! | `claude`  | `POST …/messages` (e.g. `/v1/messages`)               |
//! | `gemini`  | `POST /v1beta/models/{model}:streamGenerateContent`   |
//!
//! Point `wyckoff-llm` providers at it with base URL `{url}/v1` for the OpenAI-compatible
//! kinds and `{url}` for Claude and Gemini.
//!
//! Every request (headers lowercased + JSON body) is recorded for assertions. When a
//! queue is empty the server answers HTTP 500 with an `mock_script_exhausted` error, so a
//! test that makes an unexpected call fails loudly.
//!
//! Control endpoints: `GET /__mock/requests` returns the recorded requests as JSON;
//! `POST /__mock/responses/{route}` appends one response (same JSON as in a script).
//! Plain web pages for `web_fetch` tests live under `/__web/` (see [`web`]).
//!
//! # From Rust
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};
//! let server = MockServer::start().await?;
//! server.push(Route::Openai, OpenAiStream::text_response(&["Hel", "lo"]));
//! // point a provider at format!("{}/v1", server.url()), run it, then:
//! let sent = server.requests_to(Route::Openai);
//! # let _ = sent; Ok(()) }
//! ```
//!
//! [`OpenAiStream`], [`ClaudeStream`] and [`GeminiStream`] build each vendor's documented
//! event sequences (text, thinking, tool calls in many fragments, parallel calls, usage);
//! [`Response`] adds the status, headers, `stall_after` and `cut_after`.
//!
//! # From a JSON file (the `wyckoff-mock-vendor` binary)
//!
//! `wyckoff-mock-vendor --script FILE.json [--port N] [--record FILE.jsonl]` prints
//! `listening http://127.0.0.1:PORT` on stdout once it accepts connections, then serves
//! until killed. `--record` appends every request as one JSON line. `{{MOCK_URL}}` in the
//! script file is replaced by the server's own URL (for tools told to fetch from it). The
//! script is a serialized [`Script`]:
//!
//! ```json
#![doc = include_str!("../scripts/example.json")]
//! ```
//!
//! A response is `{status (default 200), headers, body | events, stall_after, cut_after}`.
//! `body` (string verbatim or JSON) makes a plain response; otherwise `events` are sent
//! as `text/event-stream`. An event is `{event?, data, delay_ms?}` — a string `data` is
//! sent verbatim, other JSON serialized, multi-line data split into `data:` lines — or
//! `{raw, delay_ms?}` for bytes sent with no framing. `stall_after: N` sends N events and
//! then keeps the connection open without sending anything (a half-open peer);
//! `cut_after: N` sends N events and then aborts the connection. `repeat_last: true`
//! keeps answering a route with its last response instead of failing. Rust code can
//! write such a file with `serde_json::to_string(&script)`.

mod script;
mod server;
mod vendor;
pub mod web;

pub use script::{Event, Response, Route, Script};
pub use server::{MockServer, RecordedRequest};
pub use vendor::{
    ClaudeStream, GeminiStream, OpenAiStream, claude_error, fragments, gemini_error, openai_error,
};
