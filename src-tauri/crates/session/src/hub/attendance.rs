//! Who answers a turn's approvals. A conversation keeps one session (and gate) between
//! turns, but not one answerer: the user's turn in the window is asked in the dialog,
//! while a schedule's turn in the same conversation has nobody to ask, so its calls wait
//! in the approval inbox.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use wyckoff_agent::{Approver, HeadlessApprover, Queued};
use wyckoff_protocol::{ApprovalDecision, ApprovalRequest, Decider};

/// Who is there to answer a turn's approvals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attendance {
    /// The hub's approver answers: the window's dialog, the CLI's `--approve` policy.
    Attended,
    /// Nobody: a call that needs approval is queued in the inbox as asked for by
    /// `requested_by` (`schedule:NAME`), and the run goes on.
    Unattended { requested_by: String },
}

/// A session's approver, switched at the start of each of its turns; follow-up turns
/// keep the answerer of the turn before them.
pub(super) struct TurnApprover {
    attended: Arc<dyn Approver>,
    /// Set while the conversation runs unattended.
    unattended: Mutex<Option<Arc<dyn Approver>>>,
}

impl TurnApprover {
    pub(super) fn new(attended: Arc<dyn Approver>) -> TurnApprover {
        TurnApprover {
            attended,
            unattended: Mutex::new(None),
        }
    }

    /// `None` for attended turns.
    pub(super) fn set(&self, unattended: Option<Arc<dyn Approver>>) {
        *self.lock() = unattended;
    }

    fn current(&self) -> Arc<dyn Approver> {
        self.lock().clone().unwrap_or_else(|| self.attended.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Arc<dyn Approver>>> {
        self.unattended
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[async_trait]
impl Approver for TurnApprover {
    fn decider(&self, call_id: &str) -> Option<Decider> {
        self.current().decider(call_id)
    }

    async fn enqueue(
        &self,
        conversation_id: &str,
        request: &ApprovalRequest,
    ) -> Option<Result<Queued, String>> {
        self.current().enqueue(conversation_id, request).await
    }

    fn headless_policy(&self) -> Option<&HeadlessApprover> {
        // An unattended turn queues; the attended answerer's policy must not decide it.
        if self.lock().is_some() {
            None
        } else {
            self.attended.headless_policy()
        }
    }

    async fn request(&self, request: ApprovalRequest) -> Option<ApprovalDecision> {
        self.current().request(request).await
    }
}
