//! Google Gemini `streamGenerateContent?alt=sse`.

use std::collections::VecDeque;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use wyckoff_protocol::{Message, ToolCall, ToolSchema, Usage};

use crate::args::null_default;
use crate::classify;
use crate::http::HttpClient;
use crate::sse::SseEvent;
use crate::stream::Decoder;
use crate::tagged::short_id;
use crate::{
    ChatRequest, ChunkStream, FinishReason, LlmError, Provider, ProviderConfig, StreamChunk,
};

pub struct GeminiProvider {
    cfg: ProviderConfig,
    http: HttpClient,
    url: String,
}

impl GeminiProvider {
    pub fn new(cfg: ProviderConfig, http: HttpClient) -> Self {
        let base = cfg.base_url.trim_end_matches('/');
        let base = base.strip_suffix("/v1beta").unwrap_or(base);
        let model = cfg.model.strip_prefix("models/").unwrap_or(&cfg.model);
        let url = format!("{base}/v1beta/models/{model}:streamGenerateContent?alt=sse");
        GeminiProvider { cfg, http, url }
    }

    fn secret(&self) -> Option<&str> {
        self.cfg.secret()
    }

    pub fn request_body(&self, req: &ChatRequest) -> Value {
        let mut body = Map::new();
        body.insert(
            "contents".into(),
            Value::Array(wire_contents(&req.messages)),
        );
        if !req.system.is_empty() {
            body.insert(
                "systemInstruction".into(),
                json!({"parts": [{"text": req.system}]}),
            );
        }
        if !req.tools.is_empty() {
            body.insert(
                "tools".into(),
                json!([{"functionDeclarations": wire_tools(&req.tools)}]),
            );
        }
        let mut generation = Map::new();
        if let Some(max) = req.max_tokens {
            generation.insert("maxOutputTokens".into(), json!(max));
        }
        if supports_thinking(&self.cfg.model) {
            generation.insert("thinkingConfig".into(), json!({"includeThoughts": true}));
        }
        if !generation.is_empty() {
            body.insert("generationConfig".into(), Value::Object(generation));
        }
        Value::Object(body)
    }
}

/// Models that accept `thinkingConfig` (older ones reject it).
fn supports_thinking(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    m.contains("gemini-2.5") || m.contains("gemini-3") || m.contains("thinking")
}

/// JSON Schema keywords Gemini's function declarations reject.
fn clean_schema(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "$schema" | "additionalProperties" | "$id"))
                .map(|(k, v)| (k.clone(), clean_schema(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(clean_schema).collect()),
        other => other.clone(),
    }
}

fn wire_tools(tools: &[ToolSchema]) -> Vec<Value> {
    tools
        .iter()
        .map(|t| {
            let mut decl = json!({"name": t.name, "description": t.description});
            let has_props = t
                .parameters
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| !p.is_empty());
            // Gemini rejects an object schema with no properties; omit it instead.
            if has_props {
                decl["parameters"] = clean_schema(&t.parameters);
            }
            decl
        })
        .collect()
}

/// A tool result as a `functionResponse.response` object.
fn response_object(content: &str) -> Value {
    match serde_json::from_str::<Value>(content) {
        Ok(v @ Value::Object(_)) => v,
        Ok(other) => json!({"result": other}),
        Err(_) => json!({"result": content}),
    }
}

/// Unified messages → Gemini contents. Function calls echo their thought signatures;
/// all results of one model turn go in one user content.
pub fn wire_contents(messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in messages {
        let (role, parts) = match m {
            Message::User { content, .. } => ("user", vec![json!({"text": content})]),
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                let mut parts = Vec::new();
                if !content.is_empty() {
                    parts.push(json!({"text": content}));
                }
                for c in tool_calls {
                    let args = if c.args.is_object() {
                        c.args.clone()
                    } else {
                        json!({})
                    };
                    let mut part = json!({"functionCall": {"name": c.name, "args": args}});
                    if let Some(sig) = &c.thought_signature {
                        part["thoughtSignature"] = json!(sig);
                    }
                    parts.push(part);
                }
                ("model", parts)
            }
            Message::Tool { name, content, .. } => {
                let name = if name.is_empty() { "unknown" } else { name };
                (
                    "user",
                    vec![
                        json!({"functionResponse": {"name": name, "response": response_object(content)}}),
                    ],
                )
            }
        };
        if parts.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((r, p)) if *r == role => p.extend(parts),
            _ => out.push((role, parts)),
        }
    }
    out.into_iter()
        .map(|(role, parts)| json!({"role": role, "parts": parts}))
        .collect()
}

#[async_trait]
impl Provider for GeminiProvider {
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
            // Header, not `?key=`: URLs end up in logs and error messages.
            headers.push(("x-goog-api-key", key.to_string()));
        }
        let body = self.request_body(req);
        tracing::debug!(provider = %self.cfg.name, model = %self.cfg.model, url = %self.url, "model request");
        let call = self.cfg.sse_call(&self.url, &headers);
        let decoder = GeminiDecoder::new(&self.cfg.name, self.secret());
        self.http
            .open_sse(&call, &body, decoder)
            .await?
            .into_result()
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireResponse {
    #[serde(default, deserialize_with = "null_default")]
    candidates: Vec<WireCandidate>,
    #[serde(default)]
    usage_metadata: Option<WireUsage>,
    #[serde(default)]
    prompt_feedback: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireCandidate {
    #[serde(default)]
    content: Option<WireContent>,
    #[serde(default)]
    finish_reason: Option<String>,
    #[serde(default)]
    index: Option<u32>,
}

#[derive(Deserialize)]
struct WireContent {
    #[serde(default, deserialize_with = "null_default")]
    parts: Vec<WirePart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WirePart {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thought: Option<bool>,
    #[serde(default)]
    function_call: Option<WireFunctionCall>,
    #[serde(default)]
    thought_signature: Option<String>,
}

#[derive(Deserialize)]
struct WireFunctionCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default)]
    args: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireUsage {
    #[serde(default, deserialize_with = "null_default")]
    prompt_token_count: u32,
    #[serde(default, deserialize_with = "null_default")]
    candidates_token_count: u32,
    #[serde(default, deserialize_with = "null_default")]
    thoughts_token_count: u32,
    #[serde(default, deserialize_with = "null_default")]
    cached_content_token_count: u32,
}

pub struct GeminiDecoder {
    provider: String,
    secret: Option<String>,
    calls: Vec<ToolCall>,
    usage: Option<Usage>,
    finish: Option<String>,
}

impl GeminiDecoder {
    pub fn new(provider: &str, secret: Option<&str>) -> Self {
        GeminiDecoder {
            provider: provider.to_string(),
            secret: secret.map(str::to_string),
            calls: Vec::new(),
            usage: None,
            finish: None,
        }
    }
}

impl Decoder for GeminiDecoder {
    fn on_event(
        &mut self,
        event: &SseEvent,
        out: &mut VecDeque<StreamChunk>,
    ) -> Result<bool, LlmError> {
        let wire: WireResponse = serde_json::from_str(&event.data).map_err(|e| {
            let head: String = event.data.chars().take(120).collect();
            classify::protocol(
                &self.provider,
                &format!("malformed JSON in a stream chunk ({e}): {head}"),
            )
        })?;
        if let Some(err) = wire.error {
            return Err(classify::from_stream_error(
                &self.provider,
                &json!({"error": err}),
                self.secret.as_deref(),
            ));
        }
        if let Some(u) = wire.usage_metadata {
            // Cumulative: the last report wins.
            self.usage = Some(Usage {
                input_tokens: u.prompt_token_count,
                output_tokens: u
                    .candidates_token_count
                    .saturating_add(u.thoughts_token_count),
                cache_read_tokens: u.cached_content_token_count,
                cache_write_tokens: 0,
            });
        }
        if wire.candidates.is_empty()
            && let Some(reason) = wire
                .prompt_feedback
                .as_ref()
                .and_then(|f| f.get("blockReason"))
                .and_then(Value::as_str)
        {
            self.finish = Some(format!("BLOCKED_{reason}"));
        }
        for cand in wire.candidates {
            if cand.index.unwrap_or(0) != 0 {
                continue;
            }
            for part in cand.content.map(|c| c.parts).unwrap_or_default() {
                if let Some(fc) = part.function_call {
                    self.calls.push(ToolCall {
                        id: fc
                            .id
                            .filter(|s| !s.is_empty())
                            .unwrap_or_else(|| format!("call_{}", short_id())),
                        name: fc.name,
                        args: match fc.args {
                            Some(v @ Value::Object(_)) => v,
                            _ => json!({}),
                        },
                        args_error: None,
                        thought_signature: part.thought_signature,
                    });
                    continue;
                }
                if let Some(text) = part.text.filter(|t| !t.is_empty()) {
                    if part.thought == Some(true) {
                        out.push_back(StreamChunk::ThinkingDelta(text));
                    } else {
                        out.push_back(StreamChunk::TextDelta(text));
                    }
                }
            }
            if let Some(f) = cand.finish_reason {
                self.finish = Some(f);
            }
        }
        // Gemini has no terminal event; the body simply ends.
        Ok(false)
    }

    fn on_eof(&mut self, out: &mut VecDeque<StreamChunk>) -> Result<(), LlmError> {
        let Some(finish) = self.finish.take() else {
            return Err(classify::protocol(
                &self.provider,
                "the stream ended without a finish reason",
            ));
        };
        let calls = std::mem::take(&mut self.calls);
        let has_calls = !calls.is_empty();
        if has_calls {
            out.push_back(StreamChunk::ToolCalls(calls));
        }
        if let Some(u) = self.usage.take() {
            out.push_back(StreamChunk::Usage(u));
        }
        let reason = match finish.as_str() {
            "STOP" | "FINISH_REASON_UNSPECIFIED" if has_calls => FinishReason::ToolCalls,
            "STOP" => FinishReason::Stop,
            "MAX_TOKENS" => FinishReason::Length,
            "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII"
            | "IMAGE_SAFETY" => FinishReason::ContentFilter,
            b if b.starts_with("BLOCKED_") => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_string()),
        };
        out.push_back(StreamChunk::Finish(reason));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contents_merge_results_and_echo_signatures() {
        let mut a = ToolCall::new("g1", "analyze_stock", json!({"code": "600519"}));
        a.thought_signature = Some("c2ln".into());
        let b = ToolCall::new("g2", "portfolio", json!({}));
        let msgs = vec![
            Message::user("hi"),
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![a.clone(), b.clone()],
                reasoning: Some("thought".into()),
                reasoning_signature: None,
            },
            Message::tool_result(&a, "{\"score\": 3}", false),
            Message::tool_result(&b, "plain text", false),
        ];
        let wire = wire_contents(&msgs);
        assert_eq!(wire.len(), 3);
        assert_eq!(wire[1]["role"], "model");
        assert_eq!(wire[1]["parts"][0]["thoughtSignature"], "c2ln");
        assert!(wire[1]["parts"][1].get("thoughtSignature").is_none());
        assert_eq!(
            wire[2]["parts"],
            json!([
                {"functionResponse": {"name": "analyze_stock", "response": {"score": 3}}},
                {"functionResponse": {"name": "portfolio", "response": {"result": "plain text"}}}
            ])
        );
    }

    #[test]
    fn schemas_are_cleaned_and_empty_ones_omitted() {
        let tools = vec![
            ToolSchema {
                name: "a".into(),
                description: "d".into(),
                parameters: json!({"type": "object", "additionalProperties": false,
                                   "properties": {"x": {"type": "string"}}}),
            },
            ToolSchema {
                name: "b".into(),
                description: "d".into(),
                parameters: json!({"type": "object", "properties": {}}),
            },
        ];
        let w = wire_tools(&tools);
        assert_eq!(
            w[0]["parameters"],
            json!({"type": "object", "properties": {"x": {"type": "string"}}})
        );
        assert!(w[1].get("parameters").is_none());
    }
}
