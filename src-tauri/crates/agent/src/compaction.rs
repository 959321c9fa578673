//! Context compaction (seed §3, DESIGN "decisions"). The runtime calls a [`Compactor`]
//! before every provider call. [`LlmCompactor`] triggers when the request (system prompt,
//! tool schemas and messages) reaches 25 % of the model's window, keeps the last 4
//! messages (extended so no tool result loses its call), flushes memories, summarises the
//! rest with the model (or deterministically when that fails), archives what it removed
//! and replaces it with the summary.
//!
//! The pure parts are public for tests and benchmarks: [`estimate`], [`plan`],
//! [`condense`], [`summary`].

use async_trait::async_trait;
use wyckoff_llm::Provider;
use wyckoff_protocol::{Message, ToolSchema};

use crate::error::AgentError;

pub mod archive;
pub mod condense;
pub mod estimate;
mod llm;
pub mod plan;
pub mod summary;

pub use archive::{CompactionArchive, FileArchive, MemoryFlush};
pub use llm::{
    FLUSH_TIMEOUT, LlmCompactor, SUMMARY_IDLE_TIMEOUT, SummaryError, summary_input_chars,
};
pub use plan::CompactionPlan;

/// What a compaction did, for the `compaction` event and the scratchpad.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionReport {
    pub before_messages: u32,
    pub after_messages: u32,
    pub archive_ref: Option<String>,
    /// True when the model summary failed and a deterministic one was used.
    pub summary_fallback: bool,
}

#[async_trait]
pub trait Compactor: Send + Sync {
    /// May rewrite `messages` (keeping every tool result with its call). Returns a report
    /// when it changed something. `tools` are the schemas sent with the request: they
    /// count against the window like the system prompt.
    async fn maybe_compact(
        &self,
        messages: &mut Vec<Message>,
        system_prompt: &str,
        tools: &[ToolSchema],
        provider: &dyn Provider,
    ) -> Result<Option<CompactionReport>, AgentError>;
}

/// Never compacts.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoCompaction;

#[async_trait]
impl Compactor for NoCompaction {
    async fn maybe_compact(
        &self,
        _messages: &mut Vec<Message>,
        _system_prompt: &str,
        _tools: &[ToolSchema],
        _provider: &dyn Provider,
    ) -> Result<Option<CompactionReport>, AgentError> {
        Ok(None)
    }
}
