//! The compactor the app and the CLI use: memory flush, model summary with a
//! deterministic fallback, archive, and the head replaced by the summary.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use wyckoff_llm::{ChatRequest, Provider, StreamChunk};
use wyckoff_protocol::{Message, ToolSchema, UserOrigin};

use super::archive::{CompactionArchive, MemoryFlush};
use super::condense::truncate_chars;
use super::plan::{self, CompactionPlan};
use super::summary::{
    COMPACTION_PROMPT, MAX_SUMMARY_CHARS, MIN_SUMMARY_CHARS, SUMMARY_ACK, codes_in,
    earlier_archive_refs, local_summary, serialize_head_within, summary_block,
};
use super::{CompactionReport, Compactor};
use crate::error::AgentError;

/// No chunk from the summary stream for this long ends the request (REFERENCE §3.1).
pub const SUMMARY_IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// The memory flush gets this long in all; compaction does not wait longer for it.
pub const FLUSH_TIMEOUT: Duration = Duration::from_secs(60);
/// Window assumed when a provider reports none.
const DEFAULT_WINDOW: u32 = 64_000;
/// Bounds of the summary request's input, in characters: a third of the window (so the
/// request fits even at 1.3 tokens per character), never more than 24,000 (a 500-character
/// summary gains little from more).
const SUMMARY_INPUT_MIN_CHARS: usize = 4_000;
const SUMMARY_INPUT_MAX_CHARS: usize = 24_000;
/// Output budget of the summary request (500 Chinese characters fit easily).
const SUMMARY_MAX_TOKENS: u32 = 1_024;

/// Summarises the older part of a conversation once the request reaches 25 % of the
/// model's window. One per conversation (the archive is keyed by its id).
pub struct LlmCompactor {
    conversation_id: String,
    archive: Option<Arc<dyn CompactionArchive>>,
    flush: Option<Arc<dyn MemoryFlush>>,
    summary_provider: Option<Arc<dyn Provider>>,
    context_window: Option<u32>,
    idle_timeout: Duration,
    flush_timeout: Duration,
}

/// Why the model summary was not used.
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    #[error("summary request failed: {0}")]
    Provider(#[from] wyckoff_llm::LlmError),
    #[error("summary stream idle for {0:?}")]
    Idle(Duration),
    #[error("summary too short ({0} characters, minimum {MIN_SUMMARY_CHARS})")]
    TooShort(usize),
}

impl LlmCompactor {
    pub fn new(conversation_id: impl Into<String>) -> Self {
        LlmCompactor {
            conversation_id: conversation_id.into(),
            archive: None,
            flush: None,
            summary_provider: None,
            context_window: None,
            idle_timeout: SUMMARY_IDLE_TIMEOUT,
            flush_timeout: FLUSH_TIMEOUT,
        }
    }

    /// Where removed messages go (without one they are gone after compaction).
    pub fn with_archive(mut self, archive: Arc<dyn CompactionArchive>) -> Self {
        self.archive = Some(archive);
        self
    }

    /// Runs before every compaction on the messages about to be removed.
    pub fn with_memory_flush(mut self, flush: Arc<dyn MemoryFlush>) -> Self {
        self.flush = Some(flush);
        self
    }

    /// Summaries (and the flush) from this provider instead of the turn's (e.g. the
    /// light tier).
    pub fn with_summary_provider(mut self, provider: Arc<dyn Provider>) -> Self {
        self.summary_provider = Some(provider);
        self
    }

    /// Overrides the provider's context window (tests, user settings).
    pub fn with_context_window(mut self, tokens: u32) -> Self {
        self.context_window = Some(tokens);
        self
    }

    pub fn with_idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    pub fn conversation_id(&self) -> &str {
        &self.conversation_id
    }

    /// The window compaction works against: the override, else the provider's, else a default.
    fn window(&self, provider: &dyn Provider) -> u32 {
        let window = self
            .context_window
            .unwrap_or_else(|| provider.context_window());
        if window == 0 { DEFAULT_WINDOW } else { window }
    }

    /// The plan for these messages against `provider`'s window (no side effects).
    pub fn plan(
        &self,
        messages: &[Message],
        system_prompt: &str,
        tools: &[ToolSchema],
        provider: &dyn Provider,
    ) -> Option<CompactionPlan> {
        plan::plan(messages, system_prompt, tools, self.window(provider))
    }

    /// Asks the model for a summary of `head`: text deltas only, idle timeout per chunk,
    /// cut to 500 characters; under 20 characters counts as a failure.
    pub async fn summarize(
        &self,
        head: &[Message],
        provider: &dyn Provider,
    ) -> Result<String, SummaryError> {
        let window = self
            .context_window
            .unwrap_or_else(|| provider.context_window());
        let request = ChatRequest {
            system: COMPACTION_PROMPT.to_owned(),
            messages: vec![Message::user(serialize_head_within(
                head,
                summary_input_chars(window),
            ))],
            tools: Vec::new(),
            max_tokens: Some(SUMMARY_MAX_TOKENS),
        };
        let idle = self.idle_timeout;
        let mut stream = tokio::time::timeout(idle, provider.stream(&request))
            .await
            .map_err(|_| SummaryError::Idle(idle))??;
        let mut text = String::new();
        loop {
            match tokio::time::timeout(idle, stream.next()).await {
                Err(_) => return Err(SummaryError::Idle(idle)),
                Ok(None) => break,
                Ok(Some(Err(e))) => return Err(e.into()),
                Ok(Some(Ok(StreamChunk::TextDelta(t)))) => text.push_str(&t),
                // A wrapper switched vendors: what came before is void.
                Ok(Some(Ok(StreamChunk::Fallback {
                    discard_text: true, ..
                }))) => text.clear(),
                Ok(Some(Ok(_))) => {}
            }
        }
        let text = text.trim();
        let n = text.chars().count();
        if n < MIN_SUMMARY_CHARS {
            return Err(SummaryError::TooShort(n));
        }
        Ok(truncate_chars(text, MAX_SUMMARY_CHARS))
    }

    async fn flush_memory(&self, head: &[Message], provider: &dyn Provider) {
        let Some(flush) = &self.flush else { return };
        match tokio::time::timeout(self.flush_timeout, flush.flush(head, provider)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("memory flush before compaction failed: {e}"),
            Err(_) => tracing::warn!(
                "memory flush before compaction timed out after {:?}",
                self.flush_timeout
            ),
        }
    }
}

/// Characters of head text the summary request may carry for a model with `window` tokens.
pub fn summary_input_chars(window: u32) -> usize {
    (usize::try_from(window).unwrap_or(usize::MAX) / 3)
        .clamp(SUMMARY_INPUT_MIN_CHARS, SUMMARY_INPUT_MAX_CHARS)
}

#[async_trait]
impl Compactor for LlmCompactor {
    fn over_window(
        &self,
        messages: &[Message],
        system_prompt: &str,
        tools: &[ToolSchema],
        provider: &dyn Provider,
    ) -> Option<String> {
        let estimate = super::estimate::request_tokens(system_prompt, tools, messages);
        super::over_window_notice(estimate, self.window(provider))
    }

    async fn maybe_compact(
        &self,
        messages: &mut Vec<Message>,
        system_prompt: &str,
        tools: &[ToolSchema],
        provider: &dyn Provider,
    ) -> Result<Option<CompactionReport>, AgentError> {
        let Some(plan) = self.plan(messages, system_prompt, tools, provider) else {
            return Ok(None);
        };
        let provider: &dyn Provider = match &self.summary_provider {
            Some(p) => p.as_ref(),
            None => provider,
        };
        let head = &messages[..plan.tail_start];
        tracing::info!(
            estimate = plan.estimate,
            threshold = plan.threshold,
            head = head.len(),
            tail = messages.len() - plan.tail_start,
            "compacting context"
        );
        // Preferences first: after this the head is only in the archive.
        self.flush_memory(head, provider).await;

        let (summary, fallback) = match self.summarize(head, provider).await {
            Ok(s) => (s, false),
            Err(e) => {
                tracing::warn!(
                    "上下文压缩：模型摘要不可用（{e}），改用本地摘要，历史 {} 条",
                    head.len()
                );
                (local_summary(head), true)
            }
        };

        let mut refs = earlier_archive_refs(head);
        let archive_ref = match &self.archive {
            Some(a) => match a.archive(&self.conversation_id, head).await {
                Ok(r) => Some(r),
                Err(e) => {
                    // The context must shrink anyway; the loss is logged and visible (no ref).
                    tracing::warn!("compaction archive failed: {e}");
                    None
                }
            },
            None => None,
        };
        if let Some(r) = &archive_ref {
            refs.insert(0, r.clone());
        }
        let block = summary_block(&summary, &refs, &codes_in(head, 8));

        let before = messages.clone();
        let tail = messages.split_off(plan.tail_start);
        messages.clear();
        messages.push(Message::user_with_origin(block, UserOrigin::Summary));
        messages.push(Message::assistant(SUMMARY_ACK));
        messages.extend(tail);
        Ok(Some(CompactionReport {
            before_messages: u32::try_from(before.len()).unwrap_or(u32::MAX),
            after_messages: u32::try_from(messages.len()).unwrap_or(u32::MAX),
            archive_ref,
            summary_fallback: fallback,
            before,
            after: messages.clone(),
        }))
    }
}
