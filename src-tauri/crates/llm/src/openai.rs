//! OpenAI-compatible chat completions (GPT, DeepSeek, Qwen, Kimi, Zhipu, OpenRouter,
//! Ollama, LM Studio, llama.cpp, any base URL).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use wyckoff_protocol::{ErrorKind, Message, ToolCall, ToolSchema, Usage};

use crate::args::{null_default, parse_args};
use crate::classify;
use crate::http::{HttpClient, Opened};
use crate::sse::SseEvent;
use crate::stream::Decoder;
use crate::strict::{NullPlan, strict_schema, strip_added_nulls};
use crate::tagged::{Segment, TagFilter, short_id};
use crate::{
    ChatRequest, ChunkStream, FinishReason, LlmError, Provider, ProviderConfig, StreamChunk,
};

/// Optional request parameters an endpoint may reject; dropped one by one and
/// remembered per endpoint.
pub mod degrade {
    pub const STREAM_OPTIONS: u32 = 1;
    pub const TOOL_CHOICE: u32 = 1 << 1;
    pub const PARALLEL_TOOL_CALLS: u32 = 1 << 2;
    pub const PENALTIES: u32 = 1 << 3;
    pub const REASONING_CONTENT: u32 = 1 << 4;
    /// Newer OpenAI models take `max_completion_tokens` instead of `max_tokens`.
    pub const MAX_COMPLETION_TOKENS: u32 = 1 << 5;
    /// Tools go without `strict` (the endpoint refused a strict schema).
    pub const STRICT_TOOLS: u32 = 1 << 6;
}

/// Penalty sent by default (the reference's setting; curbs repetitive output).
const FREQUENCY_PENALTY: f64 = 0.3;
const MAX_DEGRADE_STEPS: usize = 4;

pub struct OpenAiProvider {
    cfg: ProviderConfig,
    http: HttpClient,
    url: String,
    endpoint_key: String,
    /// Tools go out in strict form where their schema allows (OpenAI's own API).
    strict_tools: bool,
}

impl OpenAiProvider {
    pub fn new(cfg: ProviderConfig, http: HttpClient) -> Self {
        let base = cfg.base_url.trim_end_matches('/').to_string();
        let url = if base.ends_with("/chat/completions") {
            base.clone()
        } else {
            format!("{base}/chat/completions")
        };
        let endpoint_key = format!("openai|{base}|{}", cfg.model);
        OpenAiProvider {
            cfg,
            http,
            url,
            endpoint_key,
            strict_tools: false,
        }
    }

    /// Sends each tool whose schema strict mode can express with `"strict": true` and its
    /// schema in strict form (see [`crate::strict`]). Off by default: OpenAI-compatible
    /// vendors take the schema as it is.
    pub fn with_strict_tools(mut self, on: bool) -> Self {
        self.strict_tools = on;
        self
    }

    pub fn strict_tools(&self) -> bool {
        self.strict_tools
    }

    fn secret(&self) -> Option<&str> {
        self.cfg.secret()
    }

    /// The request body, leaving out what `flags` says the endpoint rejects.
    pub fn request_body(&self, req: &ChatRequest, flags: u32) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.cfg.model));
        body.insert(
            "messages".into(),
            Value::Array(wire_messages(
                &req.system,
                &req.messages,
                flags & degrade::REASONING_CONTENT == 0,
            )),
        );
        body.insert("stream".into(), json!(true));
        if flags & degrade::STREAM_OPTIONS == 0 {
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        if let Some(max) = req.max_tokens {
            let key = if flags & degrade::MAX_COMPLETION_TOKENS != 0 {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            body.insert(key.into(), json!(max));
        }
        if flags & degrade::PENALTIES == 0 {
            body.insert("frequency_penalty".into(), json!(FREQUENCY_PENALTY));
        }
        if !req.tools.is_empty() {
            let strict = self.strict_tools && flags & degrade::STRICT_TOOLS == 0;
            body.insert("tools".into(), Value::Array(wire_tools(&req.tools, strict)));
            if flags & degrade::TOOL_CHOICE == 0 {
                body.insert("tool_choice".into(), json!("auto"));
            }
            if flags & degrade::PARALLEL_TOOL_CALLS == 0 {
                body.insert("parallel_tool_calls".into(), json!(true));
            }
        }
        Value::Object(body)
    }
}

/// Which optional parameters to drop after the endpoint rejected `body` with `error`.
/// `None` when nothing is left to drop (the error is then genuine).
pub fn next_degradation(flags: u32, body: &Value, error_text: &str) -> Option<u32> {
    let text = error_text.to_ascii_lowercase();
    let has = |k: &str| body.get(k).is_some();
    let sends_reasoning = body
        .get("messages")
        .and_then(Value::as_array)
        .is_some_and(|ms| ms.iter().any(|m| m.get("reasoning_content").is_some()));
    let candidates: [(u32, bool, &[&str]); 5] = [
        (
            degrade::STREAM_OPTIONS,
            has("stream_options"),
            &["stream_options", "include_usage"],
        ),
        (degrade::TOOL_CHOICE, has("tool_choice"), &["tool_choice"]),
        (
            degrade::PARALLEL_TOOL_CALLS,
            has("parallel_tool_calls"),
            &["parallel_tool_calls"],
        ),
        (
            degrade::PENALTIES,
            has("frequency_penalty") || has("presence_penalty"),
            &["frequency_penalty", "presence_penalty", "penalty"],
        ),
        (
            degrade::REASONING_CONTENT,
            sends_reasoning,
            &["reasoning_content"],
        ),
    ];
    let named: u32 = candidates
        .iter()
        .filter(|(_, sent, words)| *sent && words.iter().any(|w| text.contains(w)))
        .fold(0, |acc, (bit, _, _)| acc | bit);
    if named != 0 {
        return Some(flags | named);
    }
    let sends_strict = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|ts| {
            ts.iter()
                .any(|t| t.pointer("/function/strict") == Some(&json!(true)))
        });
    if sends_strict && (text.contains("strict") || text.contains("schema")) {
        return Some(flags | degrade::STRICT_TOOLS);
    }
    if has("max_tokens") && text.contains("max_completion_tokens") {
        return Some(flags | degrade::MAX_COMPLETION_TOKENS);
    }
    // A generic rejection: drop stream_options first, then the tool-call extras and
    // penalties together, as the seed's progressive degradation does.
    if has("stream_options") {
        return Some(flags | degrade::STREAM_OPTIONS);
    }
    let extras = degrade::TOOL_CHOICE | degrade::PARALLEL_TOOL_CALLS | degrade::PENALTIES;
    let sent_extras = candidates[1..4]
        .iter()
        .filter(|(_, sent, _)| *sent)
        .fold(0, |acc, (bit, _, _)| acc | bit);
    if sent_extras != 0 {
        return Some(flags | extras);
    }
    None
}

fn wire_tools(tools: &[ToolSchema], strict: bool) -> Vec<Value> {
    tools
        .iter()
        .map(|t| {
            let params = if t.parameters.is_object() {
                t.parameters.clone()
            } else {
                json!({"type": "object", "properties": {}})
            };
            if strict {
                match strict_schema(&params) {
                    Ok(s) => {
                        return json!({"type": "function", "function": {
                            "name": t.name, "description": t.description,
                            "parameters": s.schema, "strict": true}});
                    }
                    Err(e) => tracing::debug!(tool = %t.name, "tool sent non-strict: {e}"),
                }
            }
            json!({"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": params}})
        })
        .collect()
}

/// The null plans of the tools that go out strict, by tool name.
fn null_plans(tools: &[ToolSchema]) -> HashMap<String, NullPlan> {
    tools
        .iter()
        .filter_map(|t| Some((t.name.clone(), strict_schema(&t.parameters).ok()?.plan)))
        .collect()
}

/// Unified messages → chat-completions messages. `reasoning_content` goes back on every
/// assistant message that has reasoning (DeepSeek thinking mode with tools requires it).
pub fn wire_messages(system: &str, messages: &[Message], send_reasoning: bool) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    if !system.is_empty() {
        out.push(json!({"role": "system", "content": system}));
    }
    for m in messages {
        match m {
            Message::User { content, .. } => out.push(json!({"role": "user", "content": content})),
            Message::Assistant {
                content,
                tool_calls,
                reasoning,
                ..
            } => {
                let mut msg = Map::new();
                msg.insert("role".into(), json!("assistant"));
                if content.is_empty() && !tool_calls.is_empty() {
                    msg.insert("content".into(), Value::Null);
                } else {
                    msg.insert("content".into(), json!(content));
                }
                if send_reasoning && let Some(r) = reasoning.as_ref().filter(|r| !r.is_empty()) {
                    msg.insert("reasoning_content".into(), json!(r));
                }
                if !tool_calls.is_empty() {
                    let calls: Vec<Value> = tool_calls.iter().map(wire_call).collect();
                    msg.insert("tool_calls".into(), Value::Array(calls));
                }
                out.push(Value::Object(msg));
            }
            Message::Tool {
                tool_call_id,
                content,
                ..
            } => {
                out.push(json!({"role": "tool", "tool_call_id": tool_call_id, "content": content}))
            }
        }
    }
    out
}

fn wire_call(c: &ToolCall) -> Value {
    let args = if c.args.is_object() {
        c.args.to_string()
    } else {
        "{}".to_string()
    };
    let mut v = json!({"id": c.id, "type": "function",
                       "function": {"name": c.name, "arguments": args}});
    if let Some(sig) = &c.thought_signature {
        // Gemini's OpenAI-compatible endpoint carries thought signatures here.
        v["extra_content"] = json!({"google": {"thought_signature": sig}});
    }
    v
}

#[async_trait]
impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        &self.cfg.name
    }

    fn model(&self) -> &str {
        &self.cfg.model
    }

    fn context_window(&self) -> u32 {
        self.cfg.context_window
    }

    async fn stream(&self, req: &ChatRequest) -> Result<ChunkStream, LlmError> {
        let mut headers: Vec<(&'static str, String)> = Vec::new();
        if let Some(key) = self.secret() {
            headers.push(("authorization", format!("Bearer {key}")));
        }
        let remembered = self.http.flags(&self.endpoint_key);
        let call = self.cfg.sse_call(&self.url, &headers);
        let mut flags = remembered;
        let mut steps = 0;
        let plans = Arc::new(if self.strict_tools {
            null_plans(&req.tools)
        } else {
            HashMap::new()
        });
        loop {
            let body = self.request_body(req, flags);
            tracing::debug!(provider = %self.cfg.name, model = %self.cfg.model, url = %self.url, flags, "model request");
            let mut decoder = OpenAiDecoder::new(&self.cfg.name, self.secret());
            if flags & degrade::STRICT_TOOLS == 0 {
                decoder = decoder.with_null_plans(plans.clone());
            }
            match self.http.open_sse(&call, &body, decoder).await? {
                Opened::Stream(stream) => {
                    if flags != remembered {
                        tracing::info!(provider = %self.cfg.name, flags, "endpoint needs degraded parameters; remembered");
                        self.http.remember_flags(&self.endpoint_key, flags);
                    }
                    return Ok(stream);
                }
                Opened::Rejected {
                    error,
                    status,
                    body: text,
                } => {
                    let degradable =
                        matches!(status, 400 | 422) && error.kind == ErrorKind::InvalidRequest;
                    if degradable
                        && steps < MAX_DEGRADE_STEPS
                        && let Some(next) = next_degradation(flags, &body, &text)
                        && next != flags
                    {
                        tracing::info!(provider = %self.cfg.name, status, "endpoint rejected optional parameters; retrying without");
                        flags = next;
                        steps += 1;
                        continue;
                    }
                    return Err(error);
                }
            }
        }
    }
}

#[derive(Deserialize)]
struct WireChunk {
    #[serde(default, deserialize_with = "null_default")]
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireChoice {
    #[serde(default, deserialize_with = "null_default")]
    index: u32,
    #[serde(default)]
    delta: Option<WireDelta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct WireDelta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<Value>,
    #[serde(default)]
    thinking: Option<Value>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    index: Option<u32>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
    #[serde(default)]
    extra_content: Option<Value>,
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default, deserialize_with = "null_default")]
    prompt_tokens: u32,
    #[serde(default, deserialize_with = "null_default")]
    completion_tokens: u32,
    #[serde(default)]
    prompt_cache_hit_tokens: Option<u32>,
    #[serde(default)]
    prompt_tokens_details: Option<WireUsageDetails>,
}

#[derive(Deserialize)]
struct WireUsageDetails {
    #[serde(default)]
    cached_tokens: Option<u32>,
    #[serde(default)]
    cache_write_tokens: Option<u32>,
}

#[derive(Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    args: String,
    signature: Option<String>,
}

/// Decodes chat-completions chunks. Public for the benchmark.
pub struct OpenAiDecoder {
    provider: String,
    secret: Option<String>,
    calls: BTreeMap<u32, PartialCall>,
    last_index: Option<u32>,
    filter: TagFilter,
    segments: Vec<Segment>,
    text_calls: Vec<ToolCall>,
    usage: Option<Usage>,
    finish: Option<String>,
    null_plans: Arc<HashMap<String, NullPlan>>,
}

impl OpenAiDecoder {
    pub fn new(provider: &str, secret: Option<&str>) -> Self {
        OpenAiDecoder {
            provider: provider.to_string(),
            secret: secret.map(str::to_string),
            calls: BTreeMap::new(),
            last_index: None,
            filter: TagFilter::new(),
            segments: Vec::new(),
            text_calls: Vec::new(),
            usage: None,
            finish: None,
            null_plans: Arc::default(),
        }
    }

    /// The tools that went out strict: a `null` for an argument their strict form made
    /// nullable is removed, so the tool sees it absent.
    pub fn with_null_plans(mut self, plans: Arc<HashMap<String, NullPlan>>) -> Self {
        self.null_plans = plans;
        self
    }

    fn emit_segments(&mut self, out: &mut VecDeque<StreamChunk>) {
        for seg in self.segments.drain(..) {
            match seg {
                Segment::Text(t) => out.push_back(StreamChunk::TextDelta(t)),
                Segment::Thinking(t) => out.push_back(StreamChunk::ThinkingDelta(t)),
                Segment::Call(c) => self.text_calls.push(c),
            }
        }
    }

    fn tool_delta(&mut self, tc: WireToolCall) {
        let index = match tc.index {
            Some(i) => i,
            // No index (some local servers): a new id starts a new call.
            None => match (&tc.id, self.last_index) {
                (Some(id), Some(last))
                    if self.calls.get(&last).and_then(|c| c.id.as_ref()) == Some(id) =>
                {
                    last
                }
                (Some(_), _) => self.calls.keys().next_back().map_or(0, |k| k + 1),
                (None, last) => last.unwrap_or(0),
            },
        };
        self.last_index = Some(index);
        let call = self.calls.entry(index).or_default();
        if let Some(id) = tc.id.filter(|s| !s.is_empty()) {
            call.id = Some(id);
        }
        if let Some(f) = tc.function {
            if let Some(name) = f.name.filter(|s| !s.is_empty()) {
                call.name = name;
            }
            match f.arguments {
                Some(Value::String(s)) => call.args.push_str(&s),
                Some(Value::Null) | None => {}
                // A few servers send the arguments as an object in one piece.
                Some(other) => call.args = other.to_string(),
            }
        }
        if let Some(sig) = tc
            .extra_content
            .as_ref()
            .and_then(|e| e.pointer("/google/thought_signature"))
            .and_then(Value::as_str)
        {
            call.signature = Some(sig.to_string());
        }
    }

    fn finalize(&mut self, out: &mut VecDeque<StreamChunk>) {
        self.filter.finish(&mut self.segments);
        self.emit_segments(out);
        let mut calls: Vec<ToolCall> = std::mem::take(&mut self.calls)
            .into_values()
            .map(|p| {
                let (args, args_error) = parse_args(&p.args);
                ToolCall {
                    id: p.id.unwrap_or_else(|| format!("call_{}", short_id())),
                    name: p.name,
                    args,
                    args_error,
                    thought_signature: p.signature,
                }
            })
            .collect();
        if calls.is_empty() {
            calls = std::mem::take(&mut self.text_calls);
        }
        for c in &mut calls {
            if let Some(plan) = self.null_plans.get(&c.name) {
                strip_added_nulls(&mut c.args, plan);
            }
        }
        let has_calls = !calls.is_empty();
        if has_calls {
            out.push_back(StreamChunk::ToolCalls(calls));
        }
        if let Some(u) = self.usage.take() {
            out.push_back(StreamChunk::Usage(u));
        }
        let reason = match self.finish.take().as_deref() {
            Some("length") => FinishReason::Length,
            Some("content_filter") => FinishReason::ContentFilter,
            Some("tool_calls" | "function_call") => FinishReason::ToolCalls,
            _ if has_calls => FinishReason::ToolCalls,
            Some("stop" | "eos" | "end_turn") | None => FinishReason::Stop,
            Some(other) => FinishReason::Other(other.to_string()),
        };
        out.push_back(StreamChunk::Finish(reason));
    }
}

fn reasoning_text(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) => Some(s),
        Value::Object(o) => o
            .get("content")
            .or_else(|| o.get("text"))
            .and_then(Value::as_str),
        _ => None,
    }
}

impl Decoder for OpenAiDecoder {
    fn on_event(
        &mut self,
        event: &SseEvent,
        out: &mut VecDeque<StreamChunk>,
    ) -> Result<bool, LlmError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.finalize(out);
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk: WireChunk = serde_json::from_str(data).map_err(|e| {
            let head: String = data.chars().take(120).collect();
            classify::protocol(
                &self.provider,
                &format!("malformed JSON in a stream chunk ({e}): {head}"),
            )
        })?;
        if let Some(err) = chunk.error {
            return Err(classify::from_stream_error(
                &self.provider,
                &json!({"error": err}),
                self.secret.as_deref(),
            ));
        }
        if let Some(u) = chunk.usage {
            let details = u.prompt_tokens_details.as_ref();
            self.usage = Some(Usage {
                input_tokens: u.prompt_tokens,
                output_tokens: u.completion_tokens,
                cache_read_tokens: u
                    .prompt_cache_hit_tokens
                    .or_else(|| details.and_then(|d| d.cached_tokens))
                    .unwrap_or(0),
                cache_write_tokens: details.and_then(|d| d.cache_write_tokens).unwrap_or(0),
            });
        }
        for choice in chunk.choices {
            if choice.index != 0 {
                continue;
            }
            if let Some(delta) = choice.delta {
                let reasoning = delta
                    .reasoning_content
                    .as_deref()
                    .filter(|s| !s.is_empty())
                    .or_else(|| delta.reasoning.as_ref().and_then(reasoning_text))
                    .or_else(|| delta.thinking.as_ref().and_then(reasoning_text));
                if let Some(r) = reasoning.filter(|s| !s.is_empty()) {
                    out.push_back(StreamChunk::ThinkingDelta(r.to_string()));
                }
                if let Some(text) = delta.content.as_deref().filter(|s| !s.is_empty()) {
                    self.filter.push(text, &mut self.segments);
                    self.emit_segments(out);
                }
                for tc in delta.tool_calls.unwrap_or_default() {
                    self.tool_delta(tc);
                }
            }
            if let Some(f) = choice.finish_reason {
                self.finish = Some(f);
            }
        }
        Ok(false)
    }

    fn on_eof(&mut self, out: &mut VecDeque<StreamChunk>) -> Result<(), LlmError> {
        // Some local servers close without `[DONE]`; a finish reason is enough.
        if self.finish.is_some() {
            self.finalize(out);
            return Ok(());
        }
        Err(classify::protocol(
            &self.provider,
            "the stream ended before the final event",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degradation_prefers_named_params_then_generic_order() {
        let body = json!({"stream_options": {}, "tool_choice": "auto",
                          "parallel_tool_calls": true, "frequency_penalty": 0.3,
                          "messages": []});
        assert_eq!(
            next_degradation(
                0,
                &body,
                "Unrecognized request argument supplied: tool_choice"
            ),
            Some(degrade::TOOL_CHOICE)
        );
        assert_eq!(
            next_degradation(
                0,
                &body,
                "frequency_penalty is not supported with this model"
            ),
            Some(degrade::PENALTIES)
        );
        assert_eq!(
            next_degradation(0, &body, "invalid request"),
            Some(degrade::STREAM_OPTIONS)
        );
        let body2 = json!({"tool_choice": "auto", "messages": []});
        assert_eq!(
            next_degradation(degrade::STREAM_OPTIONS, &body2, "bad"),
            Some(
                degrade::STREAM_OPTIONS
                    | degrade::TOOL_CHOICE
                    | degrade::PARALLEL_TOOL_CALLS
                    | degrade::PENALTIES
            )
        );
        assert_eq!(next_degradation(31, &json!({"messages": []}), "bad"), None);
        assert_eq!(
            next_degradation(
                degrade::STREAM_OPTIONS,
                &json!({"max_tokens": 10, "messages": []}),
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
            ),
            Some(degrade::STREAM_OPTIONS | degrade::MAX_COMPLETION_TOKENS)
        );
        let with_reasoning = json!({"messages": [{"role": "assistant", "reasoning_content": "x"}]});
        assert_eq!(
            next_degradation(0, &with_reasoning, "unknown field reasoning_content"),
            Some(degrade::REASONING_CONTENT)
        );
    }

    fn decode(lines: &[&str]) -> Result<Vec<StreamChunk>, LlmError> {
        let body: String = lines.iter().map(|l| format!("data: {l}\n\n")).collect();
        crate::decode_all(OpenAiDecoder::new("t", None), [body.as_bytes()])
    }

    #[test]
    fn odd_but_valid_chunks() {
        let out = decode(&[
            r#"{"choices": null, "usage": null}"#,
            r#"{"choices": [{"index": null, "delta": {"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{\"x\":1}"}, "extra_content": {"google": {"thought_signature": "s1"}}}]}}]}"#,
            r#"{"choices": [{"delta": {"tool_calls": [{"id": "b", "function": {"name": "g", "arguments": {"y": 2}}}]}}]}"#,
            r#"{"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 9, "completion_tokens": 3, "prompt_cache_hit_tokens": 4}}"#,
            "[DONE]",
        ])
        .unwrap();
        let StreamChunk::ToolCalls(calls) = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(calls.len(), 2);
        assert_eq!(
            (calls[0].name.as_str(), &calls[0].args),
            ("f", &json!({"x": 1}))
        );
        assert_eq!(calls[0].thought_signature.as_deref(), Some("s1"));
        assert_eq!(
            (calls[1].name.as_str(), &calls[1].args),
            ("g", &json!({"y": 2}))
        );
        assert_eq!(
            out[1],
            StreamChunk::Usage(Usage {
                input_tokens: 9,
                output_tokens: 3,
                cache_read_tokens: 4,
                cache_write_tokens: 0
            })
        );
        assert_eq!(out[2], StreamChunk::Finish(FinishReason::ToolCalls));
    }

    #[test]
    fn messages_translate_with_reasoning_and_calls() {
        let call = ToolCall::new("c1", "portfolio", json!({"mode": "view"}));
        let msgs = vec![
            Message::user("hi"),
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![call.clone()],
                reasoning: Some("think".into()),
                reasoning_signature: None,
            },
            Message::tool_result(&call, "{\"ok\":true}", false),
        ];
        let wire = wire_messages("sys", &msgs, true);
        assert_eq!(
            Value::Array(wire),
            json!([
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": null, "reasoning_content": "think",
                 "tool_calls": [{"id": "c1", "type": "function",
                                 "function": {"name": "portfolio", "arguments": "{\"mode\":\"view\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "{\"ok\":true}"}
            ])
        );
        let wire = wire_messages("", &msgs, false);
        assert!(wire[1].get("reasoning_content").is_none());
    }
}
