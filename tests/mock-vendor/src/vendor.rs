//! Builders for the event sequences each vendor documents, so tests read as intent.

use serde_json::{Value, json};

use crate::script::{Event, Response};

/// Splits `s` into pieces of at most `n` characters (never inside a UTF-8 character).
pub fn fragments(s: &str, n: usize) -> Vec<String> {
    let n = n.max(1);
    let chars: Vec<char> = s.chars().collect();
    chars.chunks(n).map(|c| c.iter().collect()).collect()
}

/// OpenAI chat-completions stream (`data: {chunk}` … `data: [DONE]`).
#[derive(Debug, Clone)]
pub struct OpenAiStream {
    events: Vec<Event>,
}

impl Default for OpenAiStream {
    fn default() -> Self {
        Self::new()
    }
}

impl OpenAiStream {
    pub fn new() -> Self {
        OpenAiStream { events: Vec::new() }
    }

    fn chunk(delta: Value, finish: Value) -> Value {
        json!({
            "id": "chatcmpl-mock",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": "mock",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
        })
    }

    /// Any delta object, sent as one chunk.
    pub fn delta(mut self, delta: Value) -> Self {
        self.events
            .push(Event::json(Self::chunk(delta, Value::Null)));
        self
    }

    /// The role-only first chunk most servers send.
    pub fn role(self) -> Self {
        self.delta(json!({"role": "assistant", "content": ""}))
    }

    pub fn text<S: AsRef<str>>(mut self, parts: &[S]) -> Self {
        for p in parts {
            self = self.delta(json!({"content": p.as_ref()}));
        }
        self
    }

    /// DeepSeek/Kimi `reasoning_content` deltas.
    pub fn reasoning<S: AsRef<str>>(mut self, parts: &[S]) -> Self {
        for p in parts {
            self = self.delta(json!({"content": null, "reasoning_content": p.as_ref()}));
        }
        self
    }

    /// One tool-call fragment; `id`/`name` only on the first fragment of a call, as
    /// the vendors send them.
    pub fn tool_fragment(
        self,
        index: u32,
        id: Option<&str>,
        name: Option<&str>,
        arguments: &str,
    ) -> Self {
        let mut call = json!({"index": index, "function": {"arguments": arguments}});
        if let Some(id) = id {
            call["id"] = json!(id);
            call["type"] = json!("function");
        }
        if let Some(name) = name {
            call["function"]["name"] = json!(name);
        }
        self.delta(json!({"tool_calls": [call]}))
    }

    /// A whole tool call whose argument text arrives in the given fragments.
    pub fn tool_call<S: AsRef<str>>(
        mut self,
        index: u32,
        id: &str,
        name: &str,
        arg_fragments: &[S],
    ) -> Self {
        self = self.tool_fragment(index, Some(id), Some(name), "");
        for f in arg_fragments {
            self = self.tool_fragment(index, None, None, f.as_ref());
        }
        self
    }

    /// Several tool calls whose argument fragments (of `fragment_len` characters)
    /// arrive interleaved, as parallel calls do: `calls` = `(id, name, arguments)`.
    pub fn parallel_tool_calls(
        mut self,
        calls: &[(&str, &str, &str)],
        fragment_len: usize,
    ) -> Self {
        for (i, (id, name, _)) in calls.iter().enumerate() {
            self = self.tool_fragment(i as u32, Some(id), Some(name), "");
        }
        let pieces: Vec<Vec<String>> = calls
            .iter()
            .map(|(_, _, args)| fragments(args, fragment_len))
            .collect();
        let rounds = pieces.iter().map(Vec::len).max().unwrap_or(0);
        for round in 0..rounds {
            for (i, p) in pieces.iter().enumerate() {
                if let Some(piece) = p.get(round) {
                    self = self.tool_fragment(i as u32, None, None, piece);
                }
            }
        }
        self
    }

    pub fn finish(mut self, reason: &str) -> Self {
        self.events
            .push(Event::json(Self::chunk(json!({}), json!(reason))));
        self
    }

    /// The usage-only chunk sent when `stream_options.include_usage` is on.
    pub fn usage(mut self, prompt: u32, completion: u32, cached: u32) -> Self {
        self.events.push(Event::json(json!({
            "id": "chatcmpl-mock",
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached}
            }
        })));
        self
    }

    pub fn done(mut self) -> Self {
        self.events.push(Event::text("[DONE]"));
        self
    }

    pub fn event(mut self, event: Event) -> Self {
        self.events.push(event);
        self
    }

    pub fn events(self) -> Vec<Event> {
        self.events
    }

    pub fn response(self) -> Response {
        Response::stream(self.events)
    }

    /// One tool call in one piece: role, the call, `tool_calls`, usage (30 in, 6 out),
    /// `[DONE]`.
    pub fn tool_call_response(id: &str, name: &str, args: &serde_json::Value) -> Response {
        OpenAiStream::new()
            .role()
            .tool_call(0, id, name, &[args.to_string()])
            .finish("tool_calls")
            .usage(30, 6, 0)
            .done()
            .response()
    }

    /// A complete plain answer: role, text pieces, stop, usage, `[DONE]`.
    pub fn text_response<S: AsRef<str>>(parts: &[S]) -> Response {
        OpenAiStream::new()
            .role()
            .text(parts)
            .finish("stop")
            .usage(10, 5, 0)
            .done()
            .response()
    }
}

/// An OpenAI-style error body.
pub fn openai_error(message: &str, kind: &str, param: Option<&str>) -> Value {
    json!({"error": {"message": message, "type": kind, "param": param, "code": null}})
}

/// Claude Messages stream (named events, `message_start` … `message_stop`).
#[derive(Debug, Clone)]
pub struct ClaudeStream {
    events: Vec<Event>,
    next_index: u32,
}

impl Default for ClaudeStream {
    fn default() -> Self {
        Self::new(10, 0, 0)
    }
}

impl ClaudeStream {
    /// Starts with `message_start` carrying the input usage.
    pub fn new(input_tokens: u32, cache_read: u32, cache_write: u32) -> Self {
        let start = Event::named(
            "message_start",
            json!({"type": "message_start", "message": {
                "id": "msg_mock", "type": "message", "role": "assistant",
                "model": "claude-mock", "content": [], "stop_reason": null,
                "stop_sequence": null,
                "usage": {"input_tokens": input_tokens, "output_tokens": 1,
                          "cache_read_input_tokens": cache_read,
                          "cache_creation_input_tokens": cache_write}
            }}),
        );
        ClaudeStream {
            events: vec![start],
            next_index: 0,
        }
    }

    fn block(mut self, start: Value, deltas: Vec<Value>) -> Self {
        let index = self.next_index;
        self.next_index += 1;
        self.events.push(Event::named(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for d in deltas {
            self.events.push(Event::named(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": d}),
            ));
        }
        self.events.push(Event::named(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        self
    }

    pub fn ping(mut self) -> Self {
        self.events
            .push(Event::named("ping", json!({"type": "ping"})));
        self
    }

    pub fn thinking<S: AsRef<str>>(self, parts: &[S], signature: &str) -> Self {
        let mut deltas: Vec<Value> = parts
            .iter()
            .map(|p| json!({"type": "thinking_delta", "thinking": p.as_ref()}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": signature}));
        self.block(json!({"type": "thinking", "thinking": ""}), deltas)
    }

    pub fn text<S: AsRef<str>>(self, parts: &[S]) -> Self {
        let deltas = parts
            .iter()
            .map(|p| json!({"type": "text_delta", "text": p.as_ref()}))
            .collect();
        self.block(json!({"type": "text", "text": ""}), deltas)
    }

    /// A `tool_use` block whose input arrives as `input_json_delta` fragments.
    pub fn tool_use<S: AsRef<str>>(self, id: &str, name: &str, json_fragments: &[S]) -> Self {
        let deltas = json_fragments
            .iter()
            .map(|p| json!({"type": "input_json_delta", "partial_json": p.as_ref()}))
            .collect();
        self.block(
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            deltas,
        )
    }

    /// `message_delta` with the stop reason and output usage.
    pub fn stop(mut self, stop_reason: &str, output_tokens: u32) -> Self {
        self.events.push(Event::named(
            "message_delta",
            json!({"type": "message_delta",
                   "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                   "usage": {"output_tokens": output_tokens}}),
        ));
        self
    }

    pub fn message_stop(mut self) -> Self {
        self.events.push(Event::named(
            "message_stop",
            json!({"type": "message_stop"}),
        ));
        self
    }

    /// An in-stream `error` event (Claude sends these with HTTP 200).
    pub fn error(mut self, kind: &str, message: &str) -> Self {
        self.events.push(Event::named(
            "error",
            json!({"type": "error", "error": {"type": kind, "message": message}}),
        ));
        self
    }

    pub fn event(mut self, event: Event) -> Self {
        self.events.push(event);
        self
    }

    pub fn events(self) -> Vec<Event> {
        self.events
    }

    pub fn response(self) -> Response {
        Response::stream(self.events)
    }

    /// A complete plain answer.
    pub fn text_response<S: AsRef<str>>(parts: &[S]) -> Response {
        ClaudeStream::default()
            .text(parts)
            .stop("end_turn", 5)
            .message_stop()
            .response()
    }
}

/// A Claude-style error body.
pub fn claude_error(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

/// Gemini `streamGenerateContent?alt=sse` stream (one GenerateContentResponse per event).
#[derive(Debug, Clone, Default)]
pub struct GeminiStream {
    events: Vec<Event>,
}

impl GeminiStream {
    pub fn new() -> Self {
        GeminiStream { events: Vec::new() }
    }

    /// One response chunk carrying the given parts.
    pub fn parts(mut self, parts: Vec<Value>) -> Self {
        self.events.push(Event::json(json!({
            "candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
            "modelVersion": "gemini-mock"
        })));
        self
    }

    pub fn thought(self, text: &str) -> Self {
        self.parts(vec![json!({"text": text, "thought": true})])
    }

    pub fn text<S: AsRef<str>>(mut self, parts: &[S]) -> Self {
        for p in parts {
            self = self.parts(vec![json!({"text": p.as_ref()})]);
        }
        self
    }

    pub fn function_call(self, name: &str, args: Value, signature: Option<&str>) -> Self {
        let mut part = json!({"functionCall": {"name": name, "args": args}});
        if let Some(sig) = signature {
            part["thoughtSignature"] = json!(sig);
        }
        self.parts(vec![part])
    }

    /// The final chunk: finish reason and usage metadata.
    pub fn finish(mut self, reason: &str, prompt: u32, candidates: u32, thoughts: u32) -> Self {
        self.events.push(Event::json(json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
                            "finishReason": reason, "index": 0}],
            "usageMetadata": {"promptTokenCount": prompt,
                              "candidatesTokenCount": candidates,
                              "thoughtsTokenCount": thoughts,
                              "totalTokenCount": prompt + candidates + thoughts},
            "modelVersion": "gemini-mock"
        })));
        self
    }

    pub fn event(mut self, event: Event) -> Self {
        self.events.push(event);
        self
    }

    pub fn events(self) -> Vec<Event> {
        self.events
    }

    pub fn response(self) -> Response {
        Response::stream(self.events)
    }

    pub fn text_response<S: AsRef<str>>(parts: &[S]) -> Response {
        GeminiStream::new()
            .text(parts)
            .finish("STOP", 10, 5, 0)
            .response()
    }
}

/// A Gemini-style error body.
pub fn gemini_error(code: u16, status: &str, message: &str) -> Value {
    json!({"error": {"code": code, "message": message, "status": status}})
}
