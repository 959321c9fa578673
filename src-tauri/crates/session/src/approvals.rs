//! Answers to the approval inbox, wherever they come from (`wyckoff approvals`, later the
//! app's inbox and the daemon): the decision is stored and audited, an allowed call runs
//! through its conversation's gate, and the conversation is told in a follow-up turn.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::NullSink;
use wyckoff_inbox::policy::Answer;
use wyckoff_protocol::{Decider, InboxRequest, InboxStatus, ToolCall};

use crate::{ConversationHub, SessionError, StartedTurn};

/// An answered request.
#[derive(Debug)]
pub struct Decided {
    /// As stored: allowed, denied, or expired when the answer came too late.
    pub request: InboxRequest,
    /// What the allowed call returned, as the model got it.
    pub tool_result: Option<String>,
    /// The allowed call failed or could not run.
    pub failed: bool,
    /// The follow-up turn telling the conversation; `None` when a turn runs there (it
    /// takes the notice right after).
    pub follow_up: Option<StartedTurn>,
}

/// Answers request `id` at `now` by `by`. Unknown or already decided: an error, nothing
/// changed. At or after its expiry the request becomes expired whatever the answer.
pub async fn answer(
    hub: &Arc<ConversationHub>,
    id: &str,
    answer: Answer,
    by: Decider,
    reason: Option<String>,
    now: DateTime<Utc>,
) -> Result<Decided, SessionError> {
    let inbox = hub.services().inbox().clone();
    let request = inbox.answer(id, answer, by, now).await?;
    let conversation = request.conversation_id.clone();
    // What the call returned (allowed), or why it did not run.
    let (summary, why, failed) = match request.status {
        InboxStatus::Allowed => {
            let call = ToolCall::new(
                request.id.clone(),
                request.tool.clone(),
                request.args.clone(),
            );
            let ran = hub
                .run_approved_call(
                    &conversation,
                    &call,
                    Arc::new(NullSink),
                    CancellationToken::new(),
                )
                .await;
            match ran {
                Ok(result) => {
                    inbox.set_result(&request.id, &result.content).await?;
                    (Some(result.content), None, result.is_error)
                }
                Err(e) => {
                    let why = format!("the call could not run: {e}");
                    inbox.set_result(&request.id, &why).await?;
                    (None, Some(why), true)
                }
            }
        }
        InboxStatus::Denied => (
            None,
            reason
                .map(|r| r.trim().to_owned())
                .filter(|r| !r.is_empty()),
            false,
        ),
        InboxStatus::Expired | InboxStatus::Pending => (None, None, false),
    };
    let notice = wyckoff_inbox::decided_notice(&request, summary.clone(), why);
    let follow_up = hub.follow_up_with(&conversation, notice).await?;
    Ok(Decided {
        request,
        tool_result: summary,
        failed,
        follow_up,
    })
}

/// Expires every pending request past its expiry at `now` and tells each conversation.
pub async fn expire_due(
    hub: &Arc<ConversationHub>,
    now: DateTime<Utc>,
) -> Result<Vec<Decided>, SessionError> {
    let due: Vec<String> = hub
        .services()
        .inbox()
        .list(now)
        .await?
        .into_iter()
        .filter(|r| r.status == InboxStatus::Expired && r.decided_at.is_none())
        .map(|r| r.id)
        .collect();
    let mut expired = Vec::with_capacity(due.len());
    for id in due {
        expired.push(answer(hub, &id, Answer::Deny, Decider::Expiry, None, now).await?);
    }
    Ok(expired)
}
