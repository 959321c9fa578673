//! Where to cut: the pure part of compaction, table-tested in `tests/compaction.rs`.

use std::collections::{HashMap, HashSet};

use wyckoff_protocol::{Message, ToolSchema};

use super::estimate;

/// Messages always kept verbatim at the end (extended for tool-call pairs).
pub const TAIL_KEEP: usize = 4;
/// A head this short is not worth a summary: the summary and its ack are two messages.
pub const MIN_HEAD: usize = 3;

/// A decided compaction: `messages[..tail_start]` is summarised, the rest kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionPlan {
    pub tail_start: usize,
    /// Estimated tokens of the whole request before compaction.
    pub estimate: u64,
    /// Tokens at which compaction triggers (25 % of the window).
    pub threshold: u64,
}

/// The first index of the kept tail: the last [`TAIL_KEEP`] messages, moved back so the
/// tail never starts with a tool result and every tool result in it keeps the assistant
/// message that called it (parallel calls included). A tool result whose call is nowhere
/// before it (a conversation that was already broken) cannot be helped and is ignored.
pub fn tail_start(messages: &[Message]) -> usize {
    let mut start = messages.len().saturating_sub(TAIL_KEEP);
    // For each tool result, the nearest earlier assistant message calling its id (ids
    // repeat across turns with some vendors, e.g. `call_0`).
    let mut latest: HashMap<&str, usize> = HashMap::new();
    let caller: Vec<Option<usize>> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| match m {
            Message::Assistant { tool_calls, .. } => {
                for c in tool_calls {
                    latest.insert(c.id.as_str(), i);
                }
                None
            }
            Message::Tool { tool_call_id, .. } => latest.get(tool_call_id.as_str()).copied(),
            Message::User { .. } => None,
        })
        .collect();
    loop {
        let mut next = start;
        while next > 0 && matches!(messages[next], Message::Tool { .. }) {
            next -= 1;
        }
        for at in caller[next..].iter().flatten() {
            next = next.min(*at);
        }
        if next == start {
            return start;
        }
        start = next;
    }
}

/// Whether some tool result has no earlier assistant message calling it (the invariant
/// compaction must never break).
pub fn has_orphan_results(messages: &[Message]) -> bool {
    let mut called: HashSet<&str> = HashSet::new();
    for m in messages {
        match m {
            Message::Assistant { tool_calls, .. } => {
                called.extend(tool_calls.iter().map(|c| c.id.as_str()));
            }
            Message::Tool { tool_call_id, .. } => {
                if !called.contains(tool_call_id.as_str()) {
                    return true;
                }
            }
            Message::User { .. } => {}
        }
    }
    false
}

/// Decides whether and where to compact. `None` when the request is under 25 % of the
/// window, or when the head would be too short to be worth a summary.
pub fn plan(
    messages: &[Message],
    system_prompt: &str,
    tools: &[ToolSchema],
    context_window: u32,
) -> Option<CompactionPlan> {
    let estimate = estimate::request_tokens(system_prompt, tools, messages);
    if !estimate::should_compact(estimate, context_window) {
        return None;
    }
    plan_cut(messages).map(|tail_start| CompactionPlan {
        tail_start,
        estimate,
        threshold: u64::from(context_window).div_ceil(4),
    })
}

/// The cut alone (no estimate): `Some(tail_start)` when the head has at least
/// [`MIN_HEAD`] messages.
pub fn plan_cut(messages: &[Message]) -> Option<usize> {
    let start = tail_start(messages);
    (start >= MIN_HEAD).then_some(start)
}
