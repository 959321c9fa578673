//! The approver that queues (runs with nobody to ask) and the audit log every gate
//! writes to.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use wyckoff_agent::{ApprovalAudit, Approver, AuditRecord, Clock, Queued};
use wyckoff_protocol::{ApprovalDecision, ApprovalRequest, Decider};

use crate::store::{InboxStore, NewRequest};

/// The label of the queueing policy in the audit log (`--approve queue`).
pub const QUEUE_POLICY: &str = "queue";

/// Puts every call that needs approval in the inbox, to be answered later.
pub struct QueueApprover {
    store: InboxStore,
    clock: Arc<dyn Clock>,
    expiry: Duration,
    requested_by: String,
}

impl QueueApprover {
    /// `requested_by`: `conversation` for a headless run, `schedule:NAME` for a schedule.
    pub fn new(
        store: InboxStore,
        clock: Arc<dyn Clock>,
        expiry: Duration,
        requested_by: impl Into<String>,
    ) -> QueueApprover {
        QueueApprover {
            store,
            clock,
            expiry,
            requested_by: requested_by.into(),
        }
    }
}

#[async_trait]
impl Approver for QueueApprover {
    fn decider(&self, _call_id: &str) -> Option<Decider> {
        Some(Decider::Policy {
            approve: QUEUE_POLICY.to_owned(),
        })
    }

    async fn enqueue(
        &self,
        conversation_id: &str,
        request: &ApprovalRequest,
    ) -> Option<Result<Queued, String>> {
        let queued = self
            .store
            .queue(
                NewRequest {
                    conversation_id: conversation_id.to_owned(),
                    call_id: request.id.clone(),
                    tool: request.tool.clone(),
                    display_name: request.display_name.clone(),
                    args: request.args.clone(),
                    preview: request.preview.clone(),
                    requested_by: self.requested_by.clone(),
                },
                self.clock.now(),
                self.expiry,
            )
            .await;
        Some(
            queued
                .map(|r| Queued {
                    request_id: r.id,
                    expires_at: r.expires_at,
                })
                .map_err(|e| e.to_string()),
        )
    }

    async fn request(&self, _request: ApprovalRequest) -> Option<ApprovalDecision> {
        None
    }
}

/// The audit log as the gates see it.
pub struct AuditLog {
    store: InboxStore,
    clock: Arc<dyn Clock>,
}

impl AuditLog {
    pub fn new(store: InboxStore, clock: Arc<dyn Clock>) -> AuditLog {
        AuditLog { store, clock }
    }
}

#[async_trait]
impl ApprovalAudit for AuditLog {
    async fn record(&self, record: AuditRecord) {
        if let Err(e) = self.store.record(&record, self.clock.now()).await {
            tracing::error!(tool = %record.tool, call = %record.call_id, "approval not audited: {e}");
        }
    }
}
