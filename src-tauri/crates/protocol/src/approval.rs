use serde::{Deserialize, Serialize};
use serde_json::Value;
use specta::Type;

/// The kinds of answer an approval request may receive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    AllowOnce,
    AllowAlways,
    Edit,
    Deny,
}

/// Sent when a tool that needs approval is about to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ApprovalRequest {
    /// Unique per request (the tool call id).
    pub id: String,
    pub tool: String,
    pub display_name: String,
    pub args: Value,
    pub available_decisions: Vec<DecisionKind>,
    /// What the call will do, worked out before it runs, for tools that can say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<ApprovalPreview>,
    /// What "always allow" lets run without asking from now on; set exactly when
    /// `available_decisions` offers it, so the dialog can say it beside the button.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub always_allows: Option<AlwaysAllows>,
}

/// The reach of an "always allow", for the rest of the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AlwaysAllows {
    /// Every call of the tool, whatever its arguments.
    Tool,
    /// `exec_command`: every command that is one simple command starting with `base`
    /// (any arguments; never `;`, `&&`, pipes, redirections, `$( )`, quotes or globs,
    /// which ask again).
    BaseCommand { base: String },
}

/// What an approval dialog shows besides the arguments: the exact effect of the call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ApprovalPreview {
    /// `exec_command`: the command as the shell will get it, where it runs, its limit, and
    /// why it may leave processes behind.
    Command {
        command: String,
        cwd: String,
        timeout_secs: u32,
        detaches: Vec<String>,
    },
    /// `write_file`: the resolved path and a unified diff of the change (empty when the
    /// content is unchanged).
    FileWrite {
        path: String,
        created: bool,
        diff: String,
    },
    /// A buy (`update_portfolio` add, `record_fill` buy): the size the sizing rules give,
    /// the stop, the risk in yuan and percent, and every account limit it breaks.
    BuySizing(crate::BuyPreview),
    /// A batch `update_portfolio`: each line with its sizing and the limits it breaks, and
    /// the batch's total effect on heat and the number of positions.
    BatchSizing(crate::BatchPreview),
    /// The call will be refused whatever the answer (e.g. a path outside the allowed
    /// folders); said up front so the user is not asked to approve nothing.
    Invalid { reason: String },
}

/// The user's (or a headless policy's) answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ApprovalDecision {
    AllowOnce,
    /// Allow this tool for the rest of the session.
    AllowAlways,
    /// Run with these arguments instead (validated again before running).
    Edit {
        args: Value,
    },
    Deny {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

impl ApprovalDecision {
    pub fn kind(&self) -> DecisionKind {
        match self {
            ApprovalDecision::AllowOnce => DecisionKind::AllowOnce,
            ApprovalDecision::AllowAlways => DecisionKind::AllowAlways,
            ApprovalDecision::Edit { .. } => DecisionKind::Edit,
            ApprovalDecision::Deny { .. } => DecisionKind::Deny,
        }
    }
}
