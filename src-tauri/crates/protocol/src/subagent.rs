use serde::{Deserialize, Serialize};
use specta::Type;

use crate::Usage;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum SubAgentStatus {
    Completed,
    Timeout,
    Cancelled,
    Error,
    Empty,
}

/// What the parent agent should do with a sub-agent's result (seed 11_07).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct SubAgentPolicy {
    pub next_action: String,
    pub retryable: bool,
    pub fallback_tools: Vec<String>,
    pub instruction: String,
}

/// The structured result a delegate_to_* tool returns to the parent agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct SubAgentResult {
    pub agent: String,
    pub status: SubAgentStatus,
    pub result: String,
    pub usage: Usage,
    /// Seconds.
    pub elapsed: f64,
    /// Model calls, the answer's included (seed 11_07's `rounds`).
    pub rounds: u32,
    /// Tool rounds run, out of the role's `max_tool_rounds` (a refused round past the
    /// cap is not counted).
    pub tool_rounds: u32,
    /// The tools that ran, in order.
    pub tool_calls: Vec<String>,
    /// Calls refused without running (outside the role's tools, past its tool rounds or
    /// its deadline), in order.
    #[serde(default)]
    pub refused_calls: Vec<String>,
    pub background_task_ids: Vec<String>,
    pub context_truncated: bool,
    pub result_truncated: bool,
    pub error: String,
    pub policy: SubAgentPolicy,
}
