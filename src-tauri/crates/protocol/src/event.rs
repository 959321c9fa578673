use serde::{Deserialize, Serialize};
use serde_json::Value;
use specta::Type;

use crate::{
    ApprovalNotice, ApprovalRequest, ErrorKind, Grounding, SizedBuy, TaskInfo, TaskNotice,
    ToolCall, Usage,
};

/// Why a turn runs: the user's message, or a follow-up the conversation's hub starts to
/// answer finished background tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum TurnKind {
    User,
    FollowUp,
}

/// Which model tier answered a round when heavy/light routing is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Heavy,
    Light,
}

/// One long-term memory recalled for a turn: what the UI shows under "what the agent
/// remembered this turn".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct RecalledItem {
    pub id: i64,
    /// preference, session, stock_opinion, decision or market_view.
    pub memory_type: String,
    pub content: String,
    /// When it was stored, as a Beijing date (`YYYY-MM-DD`).
    pub date: String,
}

/// Everything the agent runtime tells its listeners during a turn. The same JSON goes
/// over IPC, out of `wyckoff run --json` (one object per line) and into scratchpads.
///
/// A turn ends with exactly one of `done`, `turn_cancelled`, `turn_failed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RuntimeEvent {
    /// First event of a headless run: the conversation this turn belongs to.
    Session {
        session_id: String,
    },
    /// A model call starts (round 1 is the first call of the turn).
    ModelStart {
        round: u32,
        provider: String,
        model: String,
        #[serde(default)]
        tier: Option<Tier>,
    },
    TextDelta {
        text: String,
    },
    ThinkingDelta {
        text: String,
    },
    /// The model asked for tools. When `discard_text` is true the text streamed so far
    /// in this round was a plan, not the answer: the UI erases it.
    ToolCalls {
        calls: Vec<ToolCall>,
        discard_text: bool,
    },
    ToolStart {
        id: String,
        name: String,
        display_name: String,
        args: Value,
    },
    ToolResult {
        id: String,
        name: String,
        elapsed_ms: u32,
        result: Value,
    },
    ToolError {
        id: String,
        name: String,
        error: String,
    },
    ApprovalRequest {
        request: ApprovalRequest,
    },
    /// An approval was answered (or timed out without an answer).
    ApprovalResolved {
        id: String,
        outcome: String,
    },
    Compaction {
        before_messages: u32,
        after_messages: u32,
        #[serde(default)]
        archive_ref: Option<String>,
        summary_fallback: bool,
    },
    /// Memories recalled for this turn and injected into the model's context
    /// (preferences first, in injection order). Sent before the first model call.
    MemoryRecall {
        items: Vec<RecalledItem>,
    },
    /// The round is being retried (stream stall, loop guard correction).
    Retry {
        reason: String,
        attempt: u32,
    },
    /// A fallback provider took over; partial text from the failed attempt (if any)
    /// must be discarded.
    Fallback {
        from: String,
        to: String,
        reason: String,
        discard_text: bool,
    },
    Usage {
        round: u32,
        usage: Usage,
        /// Totals for the turn so far.
        turn: Usage,
    },
    BackgroundTask {
        task: TaskInfo,
    },
    /// A strategy decision task finished: each buy it may propose (adds to holdings, then
    /// the reviewed candidates) with the size the risk rules give it, as its result carries
    /// them. Sent by a headless run after the task's completed `background_task` event;
    /// none when the result carries no size (no risk rules).
    DecisionSizes {
        task_id: String,
        sizes: Vec<SizedBuy>,
    },
    /// A finished background task's notice joins the conversation here (the model reads
    /// it next); stored with the notice message.
    TaskNotice {
        notice: TaskNotice,
    },
    /// A call queued in the approval inbox was decided (allowed and run, denied,
    /// expired): its notice joins the conversation here, stored with its message.
    ApprovalNotice {
        notice: ApprovalNotice,
    },
    /// Progress of a sub-agent started by a delegate_to_* tool.
    SubAgent {
        agent: String,
        call_id: String,
        kind: String,
        text: String,
    },
    Warning {
        message: String,
    },
    Done {
        text: String,
        elapsed_ms: u32,
        /// Where the answer's numbers and codes came from (none for the runtime's own
        /// texts: a stopped loop, a round limit).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        grounding: Option<Grounding>,
    },
    TurnCancelled {},
    TurnFailed {
        kind: ErrorKind,
        message: String,
    },
}

impl RuntimeEvent {
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            RuntimeEvent::Done { .. }
                | RuntimeEvent::TurnCancelled {}
                | RuntimeEvent::TurnFailed { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_are_tagged_snake_case() {
        let e = RuntimeEvent::TextDelta {
            text: "你好".into(),
        };
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"type":"text_delta","text":"你好"})
        );
        let c = RuntimeEvent::TurnCancelled {};
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            json!({"type":"turn_cancelled"})
        );
        let f = RuntimeEvent::TurnFailed {
            kind: ErrorKind::RateLimit,
            message: "x".into(),
        };
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            json!({"type":"turn_failed","kind":"rate_limit","message":"x"})
        );
    }

    #[test]
    fn decision_sizes_round_trip_as_a_tagged_event() {
        let e = RuntimeEvent::DecisionSizes {
            task_id: "bg_1".into(),
            sizes: vec![crate::SizedBuy {
                kind: crate::SizedBuyKind::Candidate,
                code: "000001".into(),
                name: None,
                sizing: None,
                breaches: vec![crate::RiskBreach::Positions { count: 2, limit: 1 }],
                unavailable: Some("000001 没有本地K线".into()),
            }],
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["type"], "decision_sizes");
        assert_eq!(v["sizes"][0]["kind"], "candidate");
        assert_eq!(v["sizes"][0]["breaches"][0]["type"], "positions");
        assert_eq!(serde_json::from_value::<RuntimeEvent>(v).unwrap(), e);
        assert!(!e.is_terminal());
    }

    #[test]
    fn only_three_events_are_terminal() {
        assert!(
            RuntimeEvent::Done {
                text: String::new(),
                elapsed_ms: 0,
                grounding: None,
            }
            .is_terminal()
        );
        assert!(RuntimeEvent::TurnCancelled {}.is_terminal());
        assert!(
            !RuntimeEvent::Retry {
                reason: "r".into(),
                attempt: 1
            }
            .is_terminal()
        );
        let back: RuntimeEvent = serde_json::from_value(json!({"type":"turn_cancelled"})).unwrap();
        assert!(back.is_terminal());
    }
}
