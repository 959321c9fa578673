//! The approval inbox and the approval audit log: calls queued by runs
//! with nobody to ask, and every approval decision from every path.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use specta::Type;

use crate::ApprovalPreview;

/// Where a queued request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum InboxStatus {
    Pending,
    Allowed,
    Denied,
    Expired,
}

impl InboxStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            InboxStatus::Pending => "pending",
            InboxStatus::Allowed => "allowed",
            InboxStatus::Denied => "denied",
            InboxStatus::Expired => "expired",
        }
    }

    pub fn parse(text: &str) -> Option<InboxStatus> {
        [
            InboxStatus::Pending,
            InboxStatus::Allowed,
            InboxStatus::Denied,
            InboxStatus::Expired,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

/// A tool call waiting in the inbox (or decided there).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct InboxRequest {
    pub id: String,
    pub conversation_id: String,
    pub tool: String,
    pub display_name: String,
    /// The exact arguments the model called the tool with; an allow runs these.
    pub args: Value,
    /// What the app's approval dialog shows for the same call.
    #[serde(default)]
    pub preview: Option<ApprovalPreview>,
    /// Who asked: `conversation` for a headless run, `schedule:NAME` for a schedule.
    pub requested_by: String,
    /// RFC 3339 (UTC).
    pub created_at: String,
    /// RFC 3339 (UTC): from this moment on the request can only be refused.
    pub expires_at: String,
    pub status: InboxStatus,
    #[serde(default)]
    pub decided_at: Option<String>,
    #[serde(default)]
    pub decided_by: Option<Decider>,
    /// What the call returned when it was allowed and ran (as the model got it).
    #[serde(default)]
    pub result: Option<String>,
}

/// Who made an approval decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Decider {
    /// The user in the app's approval dialog (or nobody, when it timed out).
    Dialog,
    /// An earlier "always allow" of this session.
    AlwaysAllow,
    /// A headless run's `--approve` policy (`never`, `all`, a tool list, `queue`).
    Policy { approve: String },
    /// `wyckoff approvals allow|deny`.
    Cli,
    /// The app's inbox.
    App,
    /// The request passed its expiry.
    Expiry,
    /// A paired sender the owner marked approver, from a chat with the request's
    /// one-time code: the bot's name, the sender's platform id and its name there.
    Bot {
        bot: String,
        sender: String,
        #[serde(default)]
        label: String,
    },
}

/// What was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum AuditDecision {
    Allowed,
    AllowedAlways,
    Edited,
    Denied,
    TimedOut,
    /// Put in the inbox: neither run nor refused yet.
    Queued,
    Expired,
}

impl AuditDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            AuditDecision::Allowed => "allowed",
            AuditDecision::AllowedAlways => "allowed_always",
            AuditDecision::Edited => "edited",
            AuditDecision::Denied => "denied",
            AuditDecision::TimedOut => "timed_out",
            AuditDecision::Queued => "queued",
            AuditDecision::Expired => "expired",
        }
    }

    pub fn parse(text: &str) -> Option<AuditDecision> {
        [
            AuditDecision::Allowed,
            AuditDecision::AllowedAlways,
            AuditDecision::Edited,
            AuditDecision::Denied,
            AuditDecision::TimedOut,
            AuditDecision::Queued,
            AuditDecision::Expired,
        ]
        .into_iter()
        .find(|d| d.as_str() == text)
    }
}

/// One line of the approval audit log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct AuditEntry {
    pub id: i64,
    /// RFC 3339 (UTC).
    pub at: String,
    #[serde(default)]
    pub conversation_id: Option<String>,
    /// The inbox request, on every line of a call that went through the inbox (queued,
    /// then allowed, denied or expired); `None` for decisions made at once.
    #[serde(default)]
    pub request_id: Option<String>,
    /// The model's tool call id.
    pub call_id: String,
    pub tool: String,
    /// The arguments, secrets masked.
    pub args: Value,
    pub decision: AuditDecision,
    pub decided_by: Decider,
}

/// A decided inbox request's notice in the conversation that made the call: the model
/// reads the notification text; readers word the notice from these fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ApprovalNotice {
    pub request_id: String,
    pub tool_name: String,
    pub display_name: String,
    /// Allowed (the call ran), denied or expired.
    pub status: InboxStatus,
    #[serde(default)]
    pub decided_by: Option<Decider>,
    /// The call's result as the model got it (allowed calls).
    #[serde(default)]
    pub summary: Option<String>,
    /// The user's reason for a denial, or why the call could not run.
    #[serde(default)]
    pub reason: Option<String>,
}
