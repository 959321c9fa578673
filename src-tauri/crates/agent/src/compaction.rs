//! The compaction hook. The runtime calls it before every provider call; compaction
//! itself (summarising older messages at 25 % of the window) plugs in later behind this
//! trait.

use async_trait::async_trait;
use wyckoff_llm::Provider;
use wyckoff_protocol::Message;

use crate::error::AgentError;

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
    /// when it changed something.
    async fn maybe_compact(
        &self,
        messages: &mut Vec<Message>,
        system_prompt: &str,
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
        _provider: &dyn Provider,
    ) -> Result<Option<CompactionReport>, AgentError> {
        Ok(None)
    }
}
