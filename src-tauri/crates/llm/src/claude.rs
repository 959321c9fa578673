//! Anthropic Messages API, streamed.

use std::collections::{HashMap, VecDeque};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use wyckoff_protocol::{Message, ToolCall, ToolSchema, Usage};

use crate::args::parse_args;
use crate::classify;
use crate::http::HttpClient;
use crate::sse::SseEvent;
use crate::stream::Decoder;
use crate::{
    ChatRequest, ChunkStream, FinishReason, LlmError, Provider, ProviderConfig, StreamChunk,
};

pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// Claude requires `max_tokens`; used when the request leaves it open.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

pub struct ClaudeProvider {
    cfg: ProviderConfig,
    http: HttpClient,
    url: String,
}

impl ClaudeProvider {
    pub fn new(cfg: ProviderConfig, http: HttpClient) -> Self {
        let base = cfg.base_url.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        let url = format!("{base}/v1/messages");
        ClaudeProvider { cfg, http, url }
    }

    fn secret(&self) -> Option<&str> {
        self.cfg.secret()
    }

    pub fn request_body(&self, req: &ChatRequest) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.cfg.model));
        body.insert(
            "max_tokens".into(),
            json!(req.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
        );
        body.insert("stream".into(), json!(true));
        if !req.system.is_empty() {
            // Cache breakpoint on the (stable) system prompt.
            body.insert(
                "system".into(),
                json!([{"type": "text", "text": req.system, "cache_control": {"type": "ephemeral"}}]),
            );
        }
        body.insert(
            "messages".into(),
            Value::Array(wire_messages(&req.messages)),
        );
        if !req.tools.is_empty() {
            body.insert("tools".into(), Value::Array(wire_tools(&req.tools)));
        }
        Value::Object(body)
    }
}

fn wire_tools(tools: &[ToolSchema]) -> Vec<Value> {
    let mut out: Vec<Value> = tools
        .iter()
        .map(|t| {
            let schema = if t.parameters.is_object() {
                t.parameters.clone()
            } else {
                json!({"type": "object", "properties": {}})
            };
            json!({"name": t.name, "description": t.description, "input_schema": schema})
        })
        .collect();
    // Cache breakpoint after the tool list (it changes rarely).
    if let Some(last) = out.last_mut() {
        last["cache_control"] = json!({"type": "ephemeral"});
    }
    out
}

/// Unified messages → Claude messages. Tool results become `tool_result` blocks in a
/// user message; consecutive same-role messages are merged (Claude requires
/// alternation, and all results of one assistant turn in one user message).
pub fn wire_messages(messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in messages {
        let (role, blocks) = match m {
            Message::User { content, .. } => {
                let blocks = if content.is_empty() {
                    Vec::new()
                } else {
                    vec![json!({"type": "text", "text": content})]
                };
                ("user", blocks)
            }
            Message::Assistant {
                content,
                tool_calls,
                reasoning,
                reasoning_signature,
            } => {
                let mut blocks = Vec::new();
                // Thinking can only be sent back with its signature; unsigned reasoning
                // (from another vendor) is dropped.
                if let (Some(r), Some(sig)) = (reasoning, reasoning_signature) {
                    blocks.push(json!({"type": "thinking", "thinking": r, "signature": sig}));
                }
                if !content.is_empty() {
                    blocks.push(json!({"type": "text", "text": content}));
                }
                for c in tool_calls {
                    let input = if c.args.is_object() {
                        c.args.clone()
                    } else {
                        json!({})
                    };
                    blocks.push(
                        json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}),
                    );
                }
                ("assistant", blocks)
            }
            Message::Tool {
                tool_call_id,
                content,
                is_error,
                ..
            } => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": tool_call_id, "content": content});
                if *is_error {
                    block["is_error"] = json!(true);
                }
                ("user", vec![block])
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => out.push((role, blocks)),
        }
    }
    // Cache breakpoint on the newest block: the whole prefix is reused next round.
    // Thinking blocks cannot carry cache_control.
    if let Some(block) = out.last_mut().and_then(|(_, b)| b.last_mut())
        && !matches!(
            block["type"].as_str(),
            Some("thinking" | "redacted_thinking")
        )
    {
        block["cache_control"] = json!({"type": "ephemeral"});
    }
    out.into_iter()
        .map(|(role, blocks)| json!({"role": role, "content": blocks}))
        .collect()
}

#[async_trait]
impl Provider for ClaudeProvider {
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
        let mut headers: Vec<(&'static str, String)> =
            vec![("anthropic-version", ANTHROPIC_VERSION.to_string())];
        if let Some(key) = self.secret() {
            headers.push(("x-api-key", key.to_string()));
        }
        let body = self.request_body(req);
        tracing::debug!(provider = %self.cfg.name, model = %self.cfg.model, url = %self.url, "model request");
        let call = self.cfg.sse_call(&self.url, &headers);
        let decoder = ClaudeDecoder::new(&self.cfg.name, self.secret());
        self.http
            .open_sse(&call, &body, decoder)
            .await?
            .into_result()
    }
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireEvent {
    MessageStart {
        message: WireMessage,
    },
    ContentBlockStart {
        index: u32,
        content_block: Value,
    },
    ContentBlockDelta {
        index: u32,
        delta: Value,
    },
    ContentBlockStop {
        index: u32,
    },
    MessageDelta {
        #[serde(default)]
        delta: Value,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: Value,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u32>,
    #[serde(default)]
    output_tokens: Option<u32>,
    #[serde(default)]
    cache_read_input_tokens: Option<u32>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u32>,
}

enum Block {
    Text,
    Thinking {
        signature: Option<String>,
    },
    Tool {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

pub struct ClaudeDecoder {
    provider: String,
    secret: Option<String>,
    blocks: HashMap<u32, Block>,
    calls: Vec<ToolCall>,
    input: u32,
    output: u32,
    cache_read: u32,
    cache_write: u32,
    stop_reason: Option<String>,
}

impl ClaudeDecoder {
    pub fn new(provider: &str, secret: Option<&str>) -> Self {
        ClaudeDecoder {
            provider: provider.to_string(),
            secret: secret.map(str::to_string),
            blocks: HashMap::new(),
            calls: Vec::new(),
            input: 0,
            output: 0,
            cache_read: 0,
            cache_write: 0,
            stop_reason: None,
        }
    }

    fn take_usage(&mut self, u: &WireUsage) {
        if let Some(v) = u.input_tokens {
            self.input = v;
        }
        if let Some(v) = u.output_tokens {
            self.output = v;
        }
        if let Some(v) = u.cache_read_input_tokens {
            self.cache_read = v;
        }
        if let Some(v) = u.cache_creation_input_tokens {
            self.cache_write = v;
        }
    }
}

impl Decoder for ClaudeDecoder {
    fn on_event(
        &mut self,
        event: &SseEvent,
        out: &mut VecDeque<StreamChunk>,
    ) -> Result<bool, LlmError> {
        let wire: WireEvent = serde_json::from_str(&event.data).map_err(|e| {
            let head: String = event.data.chars().take(120).collect();
            classify::protocol(
                &self.provider,
                &format!("malformed JSON in a stream event ({e}): {head}"),
            )
        })?;
        match wire {
            WireEvent::MessageStart { message } => {
                if let Some(u) = message.usage {
                    self.take_usage(&u);
                }
            }
            WireEvent::ContentBlockStart {
                index,
                content_block,
            } => {
                let kind = content_block.get("type").and_then(Value::as_str);
                let block = match kind {
                    Some("text") => {
                        if let Some(t) = content_block
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            out.push_back(StreamChunk::TextDelta(t.to_string()));
                        }
                        Block::Text
                    }
                    Some("thinking") => Block::Thinking { signature: None },
                    Some("tool_use") => Block::Tool {
                        id: str_field(&content_block, "id"),
                        name: str_field(&content_block, "name"),
                        json: String::new(),
                    },
                    _ => Block::Other,
                };
                self.blocks.insert(index, block);
            }
            WireEvent::ContentBlockDelta { index, delta } => {
                let kind = delta.get("type").and_then(Value::as_str).unwrap_or("");
                match (kind, self.blocks.get_mut(&index)) {
                    ("text_delta", _) => {
                        let t = str_field(&delta, "text");
                        if !t.is_empty() {
                            out.push_back(StreamChunk::TextDelta(t));
                        }
                    }
                    ("thinking_delta", _) => {
                        let t = str_field(&delta, "thinking");
                        if !t.is_empty() {
                            out.push_back(StreamChunk::ThinkingDelta(t));
                        }
                    }
                    ("signature_delta", Some(Block::Thinking { signature })) => {
                        signature
                            .get_or_insert_with(String::new)
                            .push_str(&str_field(&delta, "signature"));
                    }
                    ("input_json_delta", Some(Block::Tool { json, .. })) => {
                        json.push_str(
                            delta
                                .get("partial_json")
                                .and_then(Value::as_str)
                                .unwrap_or(""),
                        );
                    }
                    _ => {}
                }
            }
            WireEvent::ContentBlockStop { index } => match self.blocks.remove(&index) {
                Some(Block::Tool { id, name, json }) => {
                    let (args, args_error) = parse_args(&json);
                    self.calls.push(ToolCall {
                        id,
                        name,
                        args,
                        args_error,
                        thought_signature: None,
                    });
                }
                Some(Block::Thinking {
                    signature: Some(sig),
                }) => out.push_back(StreamChunk::ThinkingSignature(sig)),
                _ => {}
            },
            WireEvent::MessageDelta { delta, usage } => {
                if let Some(r) = delta.get("stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(r.to_string());
                }
                if let Some(u) = usage {
                    self.take_usage(&u);
                }
            }
            WireEvent::MessageStop => {
                let calls = std::mem::take(&mut self.calls);
                let has_calls = !calls.is_empty();
                if has_calls {
                    out.push_back(StreamChunk::ToolCalls(calls));
                }
                // Claude reports uncached input separately; ours counts all prompt tokens.
                out.push_back(StreamChunk::Usage(Usage {
                    input_tokens: self
                        .input
                        .saturating_add(self.cache_read)
                        .saturating_add(self.cache_write),
                    output_tokens: self.output,
                    cache_read_tokens: self.cache_read,
                    cache_write_tokens: self.cache_write,
                }));
                let reason = match self.stop_reason.as_deref() {
                    Some("end_turn" | "stop_sequence") | None => {
                        if has_calls {
                            FinishReason::ToolCalls
                        } else {
                            FinishReason::Stop
                        }
                    }
                    Some("max_tokens" | "model_context_window_exceeded") => FinishReason::Length,
                    Some("tool_use") => FinishReason::ToolCalls,
                    Some("refusal") => FinishReason::ContentFilter,
                    Some(other) => FinishReason::Other(other.to_string()),
                };
                out.push_back(StreamChunk::Finish(reason));
                return Ok(true);
            }
            WireEvent::Ping | WireEvent::Unknown => {}
            WireEvent::Error { error } => {
                return Err(classify::from_stream_error(
                    &self.provider,
                    &json!({"error": error}),
                    self.secret.as_deref(),
                ));
            }
        }
        Ok(false)
    }

    fn on_eof(&mut self, _out: &mut VecDeque<StreamChunk>) -> Result<(), LlmError> {
        Err(classify::protocol(
            &self.provider,
            "the stream ended before message_stop",
        ))
    }
}

fn str_field(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_results_merge_and_thinking_needs_signature() {
        let a = ToolCall::new("t1", "a", json!({"x": 1}));
        let b = ToolCall::new("t2", "b", Value::Null);
        let msgs = vec![
            Message::user("go"),
            Message::Assistant {
                content: "plan".into(),
                tool_calls: vec![a.clone(), b.clone()],
                reasoning: Some("hmm".into()),
                reasoning_signature: Some("sig".into()),
            },
            Message::tool_result(&a, "r1", false),
            Message::tool_result(&b, "oops", true),
            Message::Assistant {
                content: "done".into(),
                tool_calls: vec![],
                reasoning: Some("unsigned".into()),
                reasoning_signature: None,
            },
        ];
        let wire = wire_messages(&msgs);
        assert_eq!(wire.len(), 4);
        assert_eq!(
            wire[1]["content"][0],
            json!({"type": "thinking", "thinking": "hmm", "signature": "sig"})
        );
        assert_eq!(wire[1]["content"][3]["input"], json!({}));
        assert_eq!(wire[2]["role"], "user");
        assert_eq!(wire[2]["content"].as_array().unwrap().len(), 2);
        assert_eq!(wire[2]["content"][1]["is_error"], true);
        assert_eq!(
            wire[3]["content"],
            json!([{"type": "text", "text": "done", "cache_control": {"type": "ephemeral"}}])
        );
    }
}
