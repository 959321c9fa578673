//! Answers to the approval inbox, wherever they come from (`wyckoff approvals`, the app's
//! inbox, expiry): every precondition of an allow is checked before anything is decided,
//! the decision is stored and audited, an allowed call runs through its conversation's
//! gate, and the conversation is told in a follow-up turn — at once when a model is
//! available, else later by [`tell_waiting`] (the stored decision is what waits).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::NullSink;
pub use wyckoff_inbox::QUEUE_POLICY;
pub use wyckoff_inbox::policy::{Answer, DEFAULT_EXPIRY, parse_expiry};
use wyckoff_inbox::policy::{AnswerTime, Verdict};
use wyckoff_inbox::{DecidedNotice, InboxError};
use wyckoff_protocol::{ApprovalPreview, Decider, InboxRequest, InboxStatus, ToolCall};

use crate::{ConversationHub, Services, SessionError, StartedTurn};

/// How a decision reaches its conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Telling {
    /// The follow-up turn started.
    Now,
    /// A turn runs in the conversation: it takes the notice right after (in another
    /// process, a later [`tell_waiting`] does).
    AfterTurn,
    /// No model to run the follow-up turn: the decision is stored, and a later
    /// [`tell_waiting`] with a model tells the conversation. Why there is no model.
    WaitsForModel(String),
    /// The follow-up turn could not start; the notice waits for the conversation's next
    /// turn here, or a later [`tell_waiting`].
    Failed(String),
}

/// An answered request.
#[derive(Debug)]
pub struct Decided {
    /// As stored: allowed, denied, or expired when the answer came too late.
    pub request: InboxRequest,
    /// What the allowed call returned, as the model got it.
    pub tool_result: Option<String>,
    /// The allowed call ran and failed.
    pub failed: bool,
    /// The follow-up turn telling the conversation, when it started now.
    pub follow_up: Option<StartedTurn>,
    pub told: Telling,
}

/// Requests whose notices this process handed to a hub: the hub delivers them, so
/// [`tell_waiting`] must not hand them over again (the conversation would read the notice
/// twice). Ids are unique across processes, so one set serves every hub of the process.
static HANDED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

fn handed(id: &str) -> bool {
    HANDED.lock().map(|s| s.contains(id)).unwrap_or(true)
}

fn set_handed(id: &str, on: bool) {
    if let Ok(mut set) = HANDED.lock() {
        if on {
            set.insert(id.to_owned());
        } else {
            set.remove(id);
        }
    }
}

/// Answers request `id` by `by`. `at` (`--now`) may judge the expiry later than the
/// clock, never earlier; the decision is recorded at the clock's time. The model the
/// hub's sessions are built with (the follow-up turn and an allowed call's session need
/// one) is checked before anything is decided or handed over.
///
/// Unknown or already decided: an error, nothing changed. At or after its expiry the
/// request becomes expired whatever the answer. An allow is refused, the request left
/// pending, when its conversation runs a turn, when no model can open its session, when
/// what the call would do changed since it was queued (the request then shows the new
/// preview) or when the call could not start (busy in another process).
pub async fn answer(
    hub: &Arc<ConversationHub>,
    id: &str,
    answer: Answer,
    by: Decider,
    reason: Option<String>,
    at: DateTime<Utc>,
) -> Result<Decided, SessionError> {
    let services = hub.services().clone();
    let inbox = services.inbox().clone();
    let time = AnswerTime::new(services.clock().now(), Some(at));
    let (request, verdict) = inbox.verdict(id, answer, time).await?;
    if verdict == Verdict::Apply(InboxStatus::Allowed) {
        check_allow(hub, &request).await?;
    }
    // Handed before it is stored: a pass of `tell_waiting` between the two must not tell
    // the conversation as well.
    set_handed(&request.id, true);
    let answered = match inbox
        .answer(&request.id, answer, by, reason.as_deref(), time)
        .await
    {
        Ok(a) => a,
        Err(e) => {
            set_handed(&request.id, false);
            return Err(e.into());
        }
    };
    let request = answered.request.clone();
    let conversation = request.conversation_id.clone();
    // What the call returned (allowed), or why it was denied.
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
                // Nothing ran (the conversation was taken meanwhile, its session could
                // not be opened): the allow is taken back, the request waits again.
                Err(e) => {
                    set_handed(&request.id, false);
                    inbox.release(&answered).await?;
                    return Err(InboxError::NotRun {
                        id: request.id,
                        why: e.to_string(),
                    }
                    .into());
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
    let (follow_up, told) = tell(hub, &request, notice).await;
    Ok(Decided {
        request,
        tool_result: summary,
        failed,
        follow_up,
        told,
    })
}

/// Everything that must hold for an allowed call to run, checked before the allow is
/// stored so a refusal leaves the request pending.
async fn check_allow(
    hub: &Arc<ConversationHub>,
    request: &InboxRequest,
) -> Result<(), SessionError> {
    let not_run = |why: String| InboxError::NotRun {
        id: request.id.clone(),
        why,
    };
    if hub.is_running(&request.conversation_id) {
        return Err(not_run(format!(
            "a turn is running in conversation '{}'; allow it once that turn has ended",
            request.conversation_id
        ))
        .into());
    }
    if let Err(e) = hub.services().check_model(hub.overrides()) {
        return Err(not_run(format!(
            "the call runs in its conversation's session, which needs a model: {e}"
        ))
        .into());
    }
    let now = current_preview(hub.services(), &request.tool, &request.args).await;
    if now != request.preview {
        hub.services()
            .inbox()
            .set_preview(&request.id, now.as_ref())
            .await?;
        return Err(InboxError::PreviewChanged {
            id: request.id.clone(),
            preview: now.map(Box::new),
        }
        .into());
    }
    Ok(())
}

/// What the call would do now, as the approval dialog shows it: the files and commands
/// of the local tools depend on the disk and the settings, which may have changed since
/// the call was queued. Other tools show no preview.
pub async fn current_preview(
    services: &Services,
    tool: &str,
    args: &serde_json::Value,
) -> Option<ApprovalPreview> {
    let settings = services.settings();
    // The local tools as the session's registry builds them (`Services::registry`).
    let tools = wyckoff_tools::local_tools(wyckoff_tools::LocalToolsConfig {
        workspace: services.home().root().join("workspace"),
        file_roots: settings.file_roots.iter().map(PathBuf::from).collect(),
        allow_private_web_fetch: settings.allow_private_web_fetch,
    });
    let tool = tools.into_iter().find(|t| t.spec().name == tool)?;
    if !tool.spec().requires_approval {
        return None;
    }
    match wyckoff_agent::validation::validate_args(&tool.schema().parameters, args) {
        Ok(valid) => tool.approval_preview(&valid).await,
        Err(e) => Some(ApprovalPreview::Invalid { reason: e }),
    }
}

/// Hands the conversation its notice when a model can run the follow-up turn.
async fn tell(
    hub: &Arc<ConversationHub>,
    request: &InboxRequest,
    notice: DecidedNotice,
) -> (Option<StartedTurn>, Telling) {
    if let Err(e) = hub.services().check_model(hub.overrides()) {
        // Not handed: the stored decision waits for `tell_waiting`.
        set_handed(&request.id, false);
        tracing::info!(request = %request.id, "the conversation is told once a model is available: {e}");
        return (None, Telling::WaitsForModel(e.to_string()));
    }
    set_handed(&request.id, true);
    match hub.follow_up_with(&request.conversation_id, notice).await {
        Ok(Some(started)) => (Some(started), Telling::Now),
        Ok(None) => (None, Telling::AfterTurn),
        Err(e) => {
            tracing::warn!(request = %request.id, "the conversation was not told: {e}");
            (None, Telling::Failed(e.to_string()))
        }
    }
}

/// What [`tell_waiting`] did.
#[derive(Debug, Default)]
pub struct Waiting {
    /// Requests handed to their conversations now, each with how and its follow-up turn
    /// when it started.
    pub told: Vec<(InboxRequest, Telling, Option<StartedTurn>)>,
    /// Decided requests whose conversations were not told and still wait (no model, or
    /// a turn runs there).
    pub still_waiting: Vec<InboxRequest>,
    /// Why nothing was told: no model.
    pub no_model: Option<String>,
}

/// Tells the conversations of decided requests that were not told yet — decided with no
/// model to run the follow-up turn, or by a process that ended before its follow-up ran
/// — now that a model is available. The stored decision is the fact that waits; the
/// conversation is told once (its notice stored marks it told).
pub async fn tell_waiting(hub: &Arc<ConversationHub>) -> Result<Waiting, SessionError> {
    let untold: Vec<_> = hub
        .services()
        .inbox()
        .untold()
        .await?
        .into_iter()
        .filter(|u| !handed(&u.request.id))
        .collect();
    let mut waiting = Waiting::default();
    if untold.is_empty() {
        return Ok(waiting);
    }
    if let Err(e) = hub.services().check_model(hub.overrides()) {
        waiting.no_model = Some(e.to_string());
        waiting.still_waiting = untold.into_iter().map(|u| u.request).collect();
        return Ok(waiting);
    }
    for u in untold {
        // A turn of this process runs there: it is told after, by the next pass.
        if hub.is_running(&u.request.conversation_id) {
            waiting.still_waiting.push(u.request);
            continue;
        }
        let summary = match u.request.status {
            InboxStatus::Allowed => u.request.result.clone(),
            _ => None,
        };
        let notice = wyckoff_inbox::decided_notice(&u.request, summary, u.reason.clone());
        let (follow_up, told) = tell(hub, &u.request, notice).await;
        waiting.told.push((u.request, told, follow_up));
    }
    Ok(waiting)
}

/// Expires every pending request past its expiry at `now` (never earlier than the
/// clock) and tells each conversation.
pub async fn expire_due(
    hub: &Arc<ConversationHub>,
    now: DateTime<Utc>,
) -> Result<Vec<Decided>, SessionError> {
    let time = AnswerTime::new(hub.services().clock().now(), Some(now));
    let due: Vec<String> = hub
        .services()
        .inbox()
        .list(time.judged)
        .await?
        .into_iter()
        .filter(|r| r.status == InboxStatus::Expired && r.decided_at.is_none())
        .map(|r| r.id)
        .collect();
    let mut expired = Vec::with_capacity(due.len());
    for id in due {
        match answer(hub, &id, Answer::Deny, Decider::Expiry, None, time.judged).await {
            Ok(decided) => expired.push(decided),
            // Another process expired it meanwhile.
            Err(SessionError::Inbox(InboxError::AlreadyDecided { .. })) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(expired)
}
