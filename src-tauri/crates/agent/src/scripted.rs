//! A provider that plays back scripted responses, one per call, and records every
//! request. For tests and benchmarks of the runtime without a network.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use wyckoff_llm::{ChatRequest, ChunkStream, FinishReason, LlmError, Provider, StreamChunk};
use wyckoff_protocol::{ErrorKind, ToolCall, Usage};

/// One step of a scripted response.
#[derive(Debug, Clone)]
pub enum Step {
    Chunk(StreamChunk),
    /// Yields this error as a stream item (a stall arrives as `ErrorKind::Timeout`).
    Error(LlmError),
    /// Fails the call before any byte (only meaningful as the first step).
    FailStart(LlmError),
    Sleep(Duration),
}

/// A response of text only.
pub fn text(t: &str) -> Vec<Step> {
    vec![
        Step::Chunk(StreamChunk::TextDelta(t.to_owned())),
        Step::Chunk(StreamChunk::Usage(Usage {
            input_tokens: 10,
            output_tokens: 5,
            ..Usage::default()
        })),
        Step::Chunk(StreamChunk::Finish(FinishReason::Stop)),
    ]
}

/// A response asking for tools (optionally after some planning text).
pub fn tool_calls(plan: &str, calls: Vec<ToolCall>) -> Vec<Step> {
    let mut steps = Vec::new();
    if !plan.is_empty() {
        steps.push(Step::Chunk(StreamChunk::TextDelta(plan.to_owned())));
    }
    steps.push(Step::Chunk(StreamChunk::ToolCalls(calls)));
    steps.push(Step::Chunk(StreamChunk::Usage(Usage {
        input_tokens: 10,
        output_tokens: 5,
        ..Usage::default()
    })));
    steps.push(Step::Chunk(StreamChunk::Finish(FinishReason::ToolCalls)));
    steps
}

/// The error a provider's idle timeout produces.
pub fn stall(provider: &str) -> LlmError {
    LlmError::new(ErrorKind::Timeout, provider, "模型响应超时（60s 内无数据）")
}

pub struct ScriptedProvider {
    name: String,
    model: String,
    script: Mutex<VecDeque<Vec<Step>>>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl ScriptedProvider {
    pub fn new(responses: Vec<Vec<Step>>) -> Self {
        Self::named("scripted", responses)
    }

    pub fn named(name: &str, responses: Vec<Vec<Step>>) -> Self {
        ScriptedProvider {
            name: name.to_owned(),
            model: "scripted-model".to_owned(),
            script: Mutex::new(responses.into()),
            requests: Mutex::new(Vec::new()),
        }
    }

    pub fn push(&self, response: Vec<Step>) {
        if let Ok(mut s) = self.script.lock() {
            s.push_back(response);
        }
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }

    pub fn remaining(&self) -> usize {
        self.script.lock().map(|s| s.len()).unwrap_or(0)
    }
}

#[async_trait]
impl Provider for ScriptedProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn context_window(&self) -> u32 {
        128_000
    }

    async fn stream(&self, request: &ChatRequest) -> Result<ChunkStream, LlmError> {
        if let Ok(mut r) = self.requests.lock() {
            r.push(request.clone());
        }
        let steps = self
            .script
            .lock()
            .ok()
            .and_then(|mut s| s.pop_front())
            .ok_or_else(|| {
                LlmError::new(ErrorKind::InvalidRequest, &self.name, "script exhausted")
            })?;
        if let Some(Step::FailStart(e)) = steps.first() {
            return Err(e.clone());
        }
        let stream = futures::stream::iter(steps).filter_map(|step| async move {
            match step {
                Step::Chunk(c) => Some(Ok(c)),
                Step::Error(e) | Step::FailStart(e) => Some(Err(e)),
                Step::Sleep(d) => {
                    tokio::time::sleep(d).await;
                    None
                }
            }
        });
        Ok(Box::pin(stream))
    }
}
