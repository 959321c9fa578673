//! The script: what the server answers, per vendor route, in order.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A vendor endpoint the server answers on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// `POST /v1/chat/completions` (also `/chat/completions`).
    Openai,
    /// `POST /v1/messages`.
    Claude,
    /// `POST /v1beta/models/{model}:streamGenerateContent`.
    Gemini,
}

impl Route {
    pub fn as_str(self) -> &'static str {
        match self {
            Route::Openai => "openai",
            Route::Claude => "claude",
            Route::Gemini => "gemini",
        }
    }
}

/// One server-sent event, or raw bytes written as they are.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// The `event:` field (Claude names its events; OpenAI and Gemini do not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// The `data:` payload: a string is sent verbatim, any other JSON value serialized.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub data: Value,
    /// Bytes written verbatim instead of `event`/`data` (to test framing: CRLF,
    /// comments, multi-line data, malformed JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// Wait this long before sending the event.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_ms: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl Event {
    /// A data-only event with a JSON payload.
    pub fn json(data: Value) -> Self {
        Event {
            data,
            ..Event::default()
        }
    }

    /// A named event with a JSON payload (Claude's format).
    pub fn named(event: &str, data: Value) -> Self {
        Event {
            event: Some(event.to_string()),
            data,
            ..Event::default()
        }
    }

    /// A data-only event whose payload is sent verbatim (e.g. `[DONE]` or broken JSON).
    pub fn text(data: &str) -> Self {
        Event {
            data: Value::String(data.to_string()),
            ..Event::default()
        }
    }

    /// Bytes written as they are, with no SSE framing added.
    pub fn raw(bytes: &str) -> Self {
        Event {
            raw: Some(bytes.to_string()),
            ..Event::default()
        }
    }

    pub fn delayed(mut self, ms: u64) -> Self {
        self.delay_ms = ms;
        self
    }

    /// The bytes this event puts on the wire.
    pub fn to_wire(&self) -> String {
        if let Some(raw) = &self.raw {
            return raw.clone();
        }
        let mut out = String::new();
        if let Some(name) = &self.event {
            out.push_str("event: ");
            out.push_str(name);
            out.push('\n');
        }
        let data = match &self.data {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        // Multi-line payloads become several `data:` lines, as the SSE spec requires.
        for line in data.split('\n') {
            out.push_str("data: ");
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
        out
    }
}

/// One scripted HTTP response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    #[serde(default = "ok")]
    pub status: u16,
    /// Extra response headers (e.g. `retry-after`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// A plain body (string verbatim, other JSON serialized) instead of an event stream;
    /// used for error responses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// The event stream, when `body` is absent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Event>,
    /// After this many events, send nothing more and never close (a half-open peer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_after: Option<usize>,
    /// After this many events, abort the connection mid-body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_after: Option<usize>,
    /// Only a request whose body contains this text gets this response (for requests that
    /// race, e.g. a turn's next round and a background task's own model call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_body_contains: Option<String>,
    /// Held back until the test opens this gate (`MockServer::open_gate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
}

fn ok() -> u16 {
    200
}

impl Response {
    /// A 200 event stream.
    pub fn stream(events: Vec<Event>) -> Self {
        Response {
            status: 200,
            headers: BTreeMap::new(),
            body: None,
            events,
            stall_after: None,
            cut_after: None,
            when_body_contains: None,
            gate: None,
        }
    }

    /// A non-streaming error (or any plain) response.
    pub fn error(status: u16, body: Value) -> Self {
        Response {
            status,
            headers: BTreeMap::new(),
            body: Some(body),
            events: Vec::new(),
            stall_after: None,
            cut_after: None,
            when_body_contains: None,
            gate: None,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers
            .insert(name.to_ascii_lowercase(), value.to_string());
        self
    }

    pub fn stall_after(mut self, n: usize) -> Self {
        self.stall_after = Some(n);
        self
    }

    pub fn cut_after(mut self, n: usize) -> Self {
        self.cut_after = Some(n);
        self
    }

    /// Serve this only to a request whose body contains `text`.
    pub fn when_body_contains(mut self, text: &str) -> Self {
        self.when_body_contains = Some(text.to_owned());
        self
    }

    /// Hold this response until the test opens `gate`.
    pub fn gated(mut self, gate: &str) -> Self {
        self.gate = Some(gate.to_owned());
        self
    }
}

/// Everything the server will answer, per route, in order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Script {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub openai: Vec<Response>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claude: Vec<Response>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gemini: Vec<Response>,
    /// When a route's queue is down to its last response, keep answering with it
    /// instead of failing (for UI tests that cannot count model calls).
    #[serde(default)]
    pub repeat_last: bool,
}

impl Script {
    pub fn queue_mut(&mut self, route: Route) -> &mut Vec<Response> {
        match route {
            Route::Openai => &mut self.openai,
            Route::Claude => &mut self.claude,
            Route::Gemini => &mut self.gemini,
        }
    }
}
