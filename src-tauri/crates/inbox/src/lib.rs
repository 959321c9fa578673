//! The approval inbox and the approval audit log (issue 24 item 4).
//!
//! A run with nobody to ask (`wyckoff run --approve queue`, a schedule, the daemon) gets a
//! [`QueueApprover`]: a call that needs approval is stored with its exact arguments and an
//! expiry, and the model is told it waits. `wyckoff approvals allow ID` runs the stored
//! call through the session's gate with an [`InboxAnswer`] (the inbox decision is the
//! approval) and hands the result to the conversation as a follow-up turn. Every decision
//! of every gate lands in the audit log ([`AuditLog`]). What may be decided when is
//! [`policy`].

mod approver;
pub mod policy;
mod store;

pub use approver::{AuditLog, InboxAnswer, QUEUE_POLICY, QueueApprover};
pub use store::{InboxError, InboxStore, NewRequest};

use wyckoff_protocol::{InboxRequest, InboxStatus};

/// What the model reads in the follow-up turn once a queued call was decided.
pub fn notice_text(request: &InboxRequest, outcome: &str) -> String {
    let status = match request.status {
        InboxStatus::Allowed => "allowed by the user; the call ran",
        InboxStatus::Denied => "denied by the user; the call did not run",
        InboxStatus::Expired => "expired before anyone answered; the call did not run",
        InboxStatus::Pending => "still pending",
    };
    format!(
        "[SYSTEM NOTIFICATION - NOT USER INPUT]\nThis is an automated approval-inbox event, NOT a message from the user.\n\n<system-reminder>\n<approval-notification>\n<request-id>{}</request-id>\n<tool-name>{}</tool-name>\n<args>{}</args>\n<status>{status}</status>\n<outcome>{outcome}</outcome>\n</approval-notification>\n</system-reminder>",
        request.id, request.tool, request.args
    )
}
