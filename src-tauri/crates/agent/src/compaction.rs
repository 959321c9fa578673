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

/// What a compaction did, for the `compaction` event (the counts) and the scratchpad
/// (the conversation before and after, so the trace alone shows what was removed and the
/// summary that replaced it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompactionReport {
    pub before_messages: u32,
    pub after_messages: u32,
    pub archive_ref: Option<String>,
    /// True when the model summary failed and a deterministic one was used.
    pub summary_fallback: bool,
    /// The messages as they were before compaction.
    pub before: Vec<Message>,
    /// The messages after: the summary (and its acknowledgement), then the kept tail.
    pub after: Vec<Message>,
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

    /// Called after [`Compactor::maybe_compact`]: a notice naming the cap when the request
    /// about to be sent is still larger than the model's window (the vendor would refuse
    /// it). `None` when it fits or the compactor does not know the window.
    fn over_window(
        &self,
        _messages: &[Message],
        _system_prompt: &str,
        _tools: &[ToolSchema],
        _provider: &dyn Provider,
    ) -> Option<String> {
        None
    }
}

/// The notice for a request of `estimate` tokens against a window of `window` tokens:
/// `None` when it fits; otherwise it names both figures and what the user can do.
pub fn over_window_notice(estimate: u64, window: u32) -> Option<String> {
    (estimate > u64::from(window)).then(|| {
        format!(
            "本次请求约 {estimate} tokens，超过模型上下文窗口 {window} tokens 的上限，压缩后仍放不下，模型可能拒绝（request ≈ {estimate} tokens exceeds the {window}-token context window cap）。请开启新对话，或在设置中换用上下文窗口更大的模型。"
        )
    })
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

#[cfg(test)]
mod tests {
    use super::over_window_notice;

    #[test]
    fn the_window_notice_names_the_request_and_the_cap() {
        // (estimate, window, expected: None = fits, Some = figures the notice must name)
        let cases: [(u64, u32, Option<[&str; 2]>); 4] = [
            (0, 1_000, None),
            (1_000, 1_000, None),
            (1_001, 1_000, Some(["1001 tokens", "1000 tokens 的上限"])),
            (
                90_000,
                64_000,
                Some(["90000 tokens", "the 64000-token context window cap"]),
            ),
        ];
        for (estimate, window, want) in cases {
            let got = over_window_notice(estimate, window);
            match want {
                None => assert_eq!(got, None, "{estimate}/{window}"),
                Some(parts) => {
                    let text = got.unwrap_or_default();
                    for p in parts {
                        assert!(text.contains(p), "{estimate}/{window}: {text}");
                    }
                }
            }
        }
    }
}
