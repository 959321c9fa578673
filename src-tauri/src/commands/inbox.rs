//! The approval inbox and the audit log in the window: list, allow, deny (with a reason).
//! Answers go through `wyckoff_session::approvals::answer` as `Decider::App`: an allowed
//! call runs through its conversation's gate and the conversation is told in a follow-up
//! turn, exactly as `wyckoff approvals allow|deny` does. An allow that cannot run now is
//! refused with why and the request stays pending; one whose preview changed is refused as
//! stale, the listed request showing the new preview to be looked at and allowed again.

use chrono::{DateTime, Utc};
use serde::Serialize;
use specta::Type;
use tauri::{AppHandle, State};
use wyckoff_protocol::{AuditEntry, Decider, InboxRequest, InboxStatus};
use wyckoff_session::approvals::Telling;
use wyckoff_session::domain::inbox::policy::Answer;
use wyckoff_session::{ConversationHub, SessionError};

use crate::chat::ChatState;
use crate::commands::chat::hub;
use crate::commands::error::{CommandError, CommandErrorKind};
use crate::state::AppState;

/// Decided requests listed under the pending ones.
const DECIDED_SHOWN: usize = 30;
/// Audit lines listed (newest first).
const LOG_SHOWN: usize = 200;

/// The inbox as the window shows it.
#[derive(Debug, Clone, Serialize, Type)]
pub struct InboxView {
    /// Pending first (oldest first: the longest waiting on top), then the most recently
    /// decided ones (newest first).
    pub requests: Vec<InboxRequest>,
    pub pending: u32,
}

/// Pending requests first, oldest first; then up to `decided_shown` decided ones,
/// newest decision first.
pub fn inbox_order(mut requests: Vec<InboxRequest>, decided_shown: usize) -> InboxView {
    let (mut pending, mut decided): (Vec<_>, Vec<_>) = requests
        .drain(..)
        .partition(|r| r.status == InboxStatus::Pending);
    pending.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
    // A pending request past its expiry but not yet refused shows as expired without a
    // decision time: its creation orders it then.
    let when = |r: &InboxRequest| r.decided_at.clone().unwrap_or_else(|| r.created_at.clone());
    decided.sort_by(|a, b| when(b).cmp(&when(a)).then(a.id.cmp(&b.id)));
    decided.truncate(decided_shown);
    let count = pending.len() as u32;
    pending.extend(decided);
    InboxView {
        requests: pending,
        pending: count,
    }
}

/// An answer as the window gets it: the request as stored, and, when its conversation
/// is told later (no model now), why.
#[derive(Debug, Clone, Serialize, Type)]
pub struct InboxAnswer {
    pub request: InboxRequest,
    /// Set when the conversation is not told now: it waits for a model (the app tells
    /// it by itself once one is set).
    pub told_later: Option<String>,
}

/// The audit log newest first, at most `shown` lines.
pub fn log_order(mut entries: Vec<AuditEntry>, shown: usize) -> Vec<AuditEntry> {
    entries.sort_by_key(|e| std::cmp::Reverse(e.id));
    entries.truncate(shown);
    entries
}

async fn view(hub: &ConversationHub, now: DateTime<Utc>) -> Result<InboxView, CommandError> {
    Ok(inbox_order(
        hub.services().inbox().list(now).await?,
        DECIDED_SHOWN,
    ))
}

#[tauri::command]
#[specta::specta]
pub async fn inbox_list(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<InboxView, CommandError> {
    let hub = hub(&state, &chat).await?;
    view(&hub, Utc::now()).await
}

/// Allows request `id`: the call runs with the arguments shown and its conversation gets
/// the result in a follow-up turn. Returns the request as stored (with the result).
#[tauri::command]
#[specta::specta]
pub async fn inbox_allow(
    app: AppHandle,
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    id: String,
) -> Result<InboxAnswer, CommandError> {
    decide(&app, &state, &chat, &id, Answer::Allow, None).await
}

/// Denies request `id` (the reason, if any, goes to the model).
#[tauri::command]
#[specta::specta]
pub async fn inbox_deny(
    app: AppHandle,
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    id: String,
    reason: Option<String>,
) -> Result<InboxAnswer, CommandError> {
    decide(&app, &state, &chat, &id, Answer::Deny, reason).await
}

async fn decide(
    app: &AppHandle,
    state: &AppState,
    chat: &ChatState,
    id: &str,
    answer: Answer,
    reason: Option<String>,
) -> Result<InboxAnswer, CommandError> {
    let hub = hub(state, chat).await?;
    let now = Utc::now();
    let decided =
        wyckoff_session::approvals::answer(&hub, id, answer, Decider::App, reason, now).await;
    // Whatever happened, the badge shows the inbox as it now is.
    match view(&hub, now).await {
        Ok(v) => crate::inbox::announce(app, v.pending),
        Err(e) => tracing::warn!("inbox not re-read after an answer: {e}"),
    }
    // The follow-up turn runs on its own; its events reach the window like any turn's.
    answered(decided)
}

/// What the window is told of an answer: the request as stored, or why not — unknown,
/// already decided, cannot run now, preview changed, or too late (then it was refused
/// and its conversation told).
pub fn answered(
    decided: Result<wyckoff_session::approvals::Decided, SessionError>,
) -> Result<InboxAnswer, CommandError> {
    let decided = decided?;
    let told_later = match decided.told {
        Telling::WaitsForModel(why) => Some(why),
        Telling::Now | Telling::AfterTurn | Telling::Failed(_) => None,
    };
    let request = decided.request;
    if request.status == InboxStatus::Expired {
        return Err(CommandError::new(
            CommandErrorKind::Expired,
            format!(
                "approval request '{}' expired at {}: it was refused",
                request.id, request.expires_at
            ),
        ));
    }
    Ok(InboxAnswer {
        request,
        told_later,
    })
}

/// The approval audit log (every decision from every path), newest first.
#[tauri::command]
#[specta::specta]
pub async fn approval_log(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Vec<AuditEntry>, CommandError> {
    let hub = hub(&state, &chat).await?;
    Ok(log_order(hub.services().inbox().log().await?, LOG_SHOWN))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wyckoff_protocol::AuditDecision;
    use wyckoff_session::domain::inbox::InboxError;

    fn request(
        id: &str,
        created: &str,
        status: InboxStatus,
        decided: Option<&str>,
    ) -> InboxRequest {
        InboxRequest {
            id: id.into(),
            conversation_id: "c1".into(),
            tool: "update_portfolio".into(),
            display_name: "调整持仓".into(),
            args: json!({}),
            preview: None,
            requested_by: "conversation".into(),
            created_at: created.into(),
            expires_at: "2026-12-06T00:00:00Z".into(),
            status,
            decided_at: decided.map(str::to_owned),
            decided_by: decided.map(|_| Decider::App),
            result: None,
        }
    }

    #[test]
    fn pending_come_first_oldest_first_then_the_latest_decisions() {
        use InboxStatus::*;
        let requests = vec![
            request("p2", "2026-12-05T02:00:00Z", Pending, None),
            request(
                "d1",
                "2026-12-05T00:00:00Z",
                Allowed,
                Some("2026-12-05T05:00:00Z"),
            ),
            request("p1", "2026-12-05T01:00:00Z", Pending, None),
            request(
                "d2",
                "2026-12-05T03:00:00Z",
                Denied,
                Some("2026-12-05T04:00:00Z"),
            ),
            // Past its expiry, not yet refused: ordered by creation.
            request("x", "2026-12-05T06:00:00Z", Expired, None),
            request(
                "d3",
                "2026-12-04T00:00:00Z",
                Expired,
                Some("2026-12-05T01:00:00Z"),
            ),
        ];
        let cases: [(usize, &[&str]); 3] = [
            (30, &["p1", "p2", "x", "d1", "d2", "d3"]),
            (2, &["p1", "p2", "x", "d1"]),
            (0, &["p1", "p2"]),
        ];
        for (shown, want) in cases {
            let v = inbox_order(requests.clone(), shown);
            let ids: Vec<&str> = v.requests.iter().map(|r| r.id.as_str()).collect();
            assert_eq!(ids, want, "shown {shown}");
            assert_eq!(v.pending, 2);
        }
    }

    #[test]
    fn the_log_is_newest_first_and_capped() {
        let entry = |id: i64| AuditEntry {
            id,
            at: "2026-12-05T00:00:00Z".into(),
            conversation_id: None,
            request_id: None,
            call_id: format!("call_{id}"),
            tool: "update_portfolio".into(),
            args: json!({}),
            decision: AuditDecision::Allowed,
            decided_by: Decider::App,
        };
        let ids = |v: Vec<AuditEntry>| v.iter().map(|e| e.id).collect::<Vec<_>>();
        let entries: Vec<AuditEntry> = (1..=5).map(entry).collect();
        assert_eq!(ids(log_order(entries.clone(), 200)), [5, 4, 3, 2, 1]);
        assert_eq!(ids(log_order(entries.clone(), 5)), [5, 4, 3, 2, 1]);
        assert_eq!(ids(log_order(entries, 4)), [5, 4, 3, 2]);
    }

    /// An answer that came too late is an error naming the expiry (the request was still
    /// decided: expired); allowed and denied ones come back as stored.
    #[test]
    fn an_answer_is_the_request_or_why_not() {
        use wyckoff_session::approvals::Decided;
        let decided = |status: InboxStatus| {
            Ok(Decided {
                request: request(
                    "apr-1",
                    "2026-12-05T00:00:00Z",
                    status,
                    Some("2026-12-06T00:00:00Z"),
                ),
                tool_result: None,
                failed: false,
                follow_up: None,
                told: Telling::Now,
            })
        };
        for status in [InboxStatus::Allowed, InboxStatus::Denied] {
            assert_eq!(answered(decided(status)).unwrap().request.status, status);
        }
        let Err(CommandError {
            kind: CommandErrorKind::Expired,
            message,
            ..
        }) = answered(decided(InboxStatus::Expired))
        else {
            panic!("an expired answer must be an error");
        };
        assert!(
            message.contains("apr-1") && message.contains("2026-12-06T00:00:00Z"),
            "{message}"
        );
        let unknown = answered(Err(SessionError::Inbox(InboxError::NotFound(
            "apr-2".into(),
        ))));
        assert!(matches!(
            unknown,
            Err(CommandError {
                kind: CommandErrorKind::NotFound,
                ..
            })
        ));
    }

    /// A decision with no model to tell it is still the request as stored, with why the
    /// conversation hears of it later.
    #[test]
    fn a_decision_told_later_says_why() {
        use wyckoff_session::approvals::Decided;
        let r = answered(Ok(Decided {
            request: request(
                "apr-3",
                "2026-12-05T00:00:00Z",
                InboxStatus::Denied,
                Some("2026-12-05T01:00:00Z"),
            ),
            tool_result: None,
            failed: false,
            follow_up: None,
            told: Telling::WaitsForModel("no model".into()),
        }))
        .unwrap();
        assert_eq!(r.request.status, InboxStatus::Denied);
        assert_eq!(r.told_later.as_deref(), Some("no model"));
    }
}
