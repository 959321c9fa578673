use serde::{Deserialize, Serialize};
use wyckoff_protocol::{ToolCall, Usage};

/// Why the model stopped, normalised across vendors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    /// Output token limit reached.
    Length,
    ToolCalls,
    ContentFilter,
    Other(String),
}

/// One item of a provider stream, in vendor-neutral form.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamChunk {
    TextDelta(String),
    ThinkingDelta(String),
    /// Signature that vouches for the thinking text of this response (Claude).
    ThinkingSignature(String),
    /// All tool calls of the response, complete, emitted once after their fragments.
    ToolCalls(Vec<ToolCall>),
    Usage(Usage),
    Finish(FinishReason),
    /// A fallback provider took over (emitted by the fallback wrapper).
    Fallback {
        from: String,
        to: String,
        reason: String,
        discard_text: bool,
    },
}

/// A whole response, collected from a stream.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Completion {
    pub text: String,
    pub thinking: String,
    pub thinking_signature: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub finish: Option<FinishReason>,
}

impl Completion {
    /// Folds one chunk into the completion.
    pub fn push(&mut self, chunk: StreamChunk) {
        match chunk {
            StreamChunk::TextDelta(t) => self.text.push_str(&t),
            StreamChunk::ThinkingDelta(t) => self.thinking.push_str(&t),
            StreamChunk::ThinkingSignature(s) => self.thinking_signature = Some(s),
            StreamChunk::ToolCalls(calls) => self.tool_calls.extend(calls),
            StreamChunk::Usage(u) => self.usage.add(&u),
            StreamChunk::Finish(f) => self.finish = Some(f),
            StreamChunk::Fallback { discard_text, .. } => {
                if discard_text {
                    self.text.clear();
                    self.thinking.clear();
                }
            }
        }
    }
}
