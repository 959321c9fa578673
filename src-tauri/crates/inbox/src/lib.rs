//! The approval inbox and the approval audit log.
//!
//! A run with nobody to ask (`wyckoff run --approve queue`, a schedule, the daemon) gets a
//! [`QueueApprover`]: a call that needs approval is stored with its exact arguments and an
//! expiry, and the model is told it waits. An allow runs the stored call through the
//! session's gate, preapproved (the inbox decision is the approval), and the result goes
//! to the conversation as a follow-up turn (`wyckoff_session::approvals`). Every decision
//! of every gate lands in the audit log ([`AuditLog`]). What may be decided when is
//! [`policy`].

mod approver;
pub mod policy;
mod store;

pub use approver::{AuditLog, QUEUE_POLICY, QueueApprover};
pub use store::{Answered, InboxError, InboxStore, NewRequest, QueuedHook, Untold};

use wyckoff_protocol::{ApprovalNotice, InboxRequest, InboxStatus, Message, UserOrigin};

/// A decided request as its conversation gets it: the typed notice (stored with the
/// message) and the notification message the model reads.
#[derive(Debug, Clone, PartialEq)]
pub struct DecidedNotice {
    pub notice: ApprovalNotice,
    pub message: Message,
}

/// The notice of a decided request: `summary` is what an allowed call returned, `reason`
/// why it was denied or could not run.
pub fn decided_notice(
    request: &InboxRequest,
    summary: Option<String>,
    reason: Option<String>,
) -> DecidedNotice {
    let notice = ApprovalNotice {
        request_id: request.id.clone(),
        tool_name: request.tool.clone(),
        display_name: request.display_name.clone(),
        status: request.status,
        decided_by: request.decided_by.clone(),
        summary,
        reason,
    };
    let message = Message::user_with_origin(
        notice_text(&notice, &request.args, &request.expires_at),
        UserOrigin::SystemNotification,
    );
    DecidedNotice { notice, message }
}

/// What the model reads in the follow-up turn once a queued call was decided.
fn notice_text(notice: &ApprovalNotice, args: &serde_json::Value, expires_at: &str) -> String {
    let status = match notice.status {
        InboxStatus::Allowed if notice.reason.is_some() => {
            "allowed by the user, but the call could not run"
        }
        InboxStatus::Allowed => "allowed by the user; the call ran",
        InboxStatus::Denied => "denied by the user; the call did not run",
        InboxStatus::Expired => "expired before anyone answered; refused, the call did not run",
        InboxStatus::Pending => "still pending",
    };
    let mut detail = String::new();
    if let Some(summary) = &notice.summary {
        detail.push_str(&format!("\n<result>{summary}</result>"));
    }
    if let Some(reason) = &notice.reason {
        detail.push_str(&format!("\n<reason>{reason}</reason>"));
    }
    if notice.status == InboxStatus::Expired {
        detail.push_str(&format!("\n<expired-at>{expires_at}</expired-at>"));
    }
    format!(
        "[SYSTEM NOTIFICATION - NOT USER INPUT]\nThis is an automated approval-inbox event, NOT a message from the user.\n\n<system-reminder>\n<approval-notification>\n<request-id>{}</request-id>\n<tool-name>{}</tool-name>\n<args>{args}</args>\n<status>{status}</status>{detail}\n</approval-notification>\n</system-reminder>",
        notice.request_id, notice.tool_name
    )
}
