//! The approval inbox in the app: requests are queued by runs with nobody to ask — the
//! app's scheduled runs, `wyckoff daemon`, `wyckoff run --approve queue` — possibly in
//! another process. The desk's tick (the app's timer) expires and tells; what it found goes
//! to the window here: the pending count (`InboxChanged`) when it changed and, when a new
//! request came and the window is not in front, a desktop notification.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::AppHandle;
use tauri_specta::Event;
use wyckoff_protocol::{InboxRequest, InboxStatus};

/// The inbox changed (a request queued, answered or expired): the badge shows `pending`
/// and an open inbox reloads.
#[derive(Debug, Clone, Serialize, Deserialize, Type, Event)]
pub struct InboxChanged {
    pub pending: u32,
}

/// Tells the window how many requests wait.
pub fn announce(app: &AppHandle, pending: u32) {
    if let Err(e) = (InboxChanged { pending }).emit(app) {
        tracing::warn!("cannot emit an inbox event: {e}");
    }
}

/// The ids of the requests that wait for an answer (not past their expiry).
pub fn pending_ids(requests: &[InboxRequest]) -> BTreeSet<String> {
    requests
        .iter()
        .filter(|r| r.status == InboxStatus::Pending)
        .map(|r| r.id.clone())
        .collect()
}

/// The pending requests not in `seen` (oldest first): what a notification is about.
pub fn newly_pending<'a>(
    seen: &BTreeSet<String>,
    requests: &'a [InboxRequest],
) -> Vec<&'a InboxRequest> {
    let mut new: Vec<&InboxRequest> = requests
        .iter()
        .filter(|r| r.status == InboxStatus::Pending && !seen.contains(&r.id))
        .collect();
    new.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
    new
}

/// Whether a pass tells the window: at the first pass, when the pending set changed, or
/// when requests expired (queued and expired between two passes, the set looks the same).
pub fn should_announce(
    seen: Option<&BTreeSet<String>>,
    pending: &BTreeSet<String>,
    expired_any: bool,
) -> bool {
    expired_any || seen != Some(pending)
}

/// The notification's title and body: the first new request's tool, who asked, and how
/// many more came with it.
pub fn notification_text(
    tool: &str,
    requested_by: &str,
    more: usize,
    zh: bool,
) -> (String, String) {
    let title = if zh {
        format!("需要审批：{tool}")
    } else {
        format!("Approval needed: {tool}")
    };
    let body = match (more, zh) {
        (0, true) => format!("来自 {requested_by}"),
        (n, true) => format!("来自 {requested_by}；另有 {n} 个请求"),
        (0, false) => format!("Requested by {requested_by}"),
        (n, false) => format!("Requested by {requested_by}; {n} more waiting"),
    };
    (title, body.chars().take(200).collect())
}

/// Tells the window what a tick found in the inbox: the pending count when it changed
/// (or requests expired) and, when a new request came and the window is not in front, a
/// desktop notification. Returns the pending set for the next tick to compare with.
pub fn tell_window(
    app: &AppHandle,
    seen: Option<&BTreeSet<String>>,
    pending_requests: &[InboxRequest],
    expired_any: bool,
) -> BTreeSet<String> {
    let pending = pending_ids(pending_requests);
    if should_announce(seen, &pending, expired_any) {
        announce(app, pending.len() as u32);
    }
    let empty = BTreeSet::new();
    let new = newly_pending(seen.unwrap_or(&empty), pending_requests);
    if let Some(first) = new.first() {
        let (tool, by, more) = (
            first.display_name.clone(),
            first.requested_by.clone(),
            new.len() - 1,
        );
        crate::tasks::notify_when_away(app, Some(first.conversation_id.clone()), |zh| {
            notification_text(&tool, &by, more, zh)
        });
    }
    pending
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(id: &str, created: &str, status: InboxStatus) -> InboxRequest {
        InboxRequest {
            id: id.into(),
            conversation_id: "c1".into(),
            tool: "update_portfolio".into(),
            display_name: "调整持仓".into(),
            args: json!({}),
            preview: None,
            requested_by: "schedule:收盘".into(),
            created_at: created.into(),
            expires_at: "2026-12-06T00:00:00Z".into(),
            status,
            decided_at: None,
            decided_by: None,
            result: None,
        }
    }

    #[test]
    fn the_notification_names_the_tool_who_asked_and_the_rest() {
        let cases = [
            (0, true, "需要审批：调整持仓", "来自 schedule:收盘"),
            (
                2,
                true,
                "需要审批：调整持仓",
                "来自 schedule:收盘；另有 2 个请求",
            ),
            (
                0,
                false,
                "Approval needed: 调整持仓",
                "Requested by schedule:收盘",
            ),
            (
                1,
                false,
                "Approval needed: 调整持仓",
                "Requested by schedule:收盘; 1 more waiting",
            ),
        ];
        for (more, zh, title, body) in cases {
            let (t, b) = notification_text("调整持仓", "schedule:收盘", more, zh);
            assert_eq!((t.as_str(), b.as_str()), (title, body), "{more} {zh}");
        }
        let (_, long) = notification_text("t", &"x".repeat(300), 0, false);
        assert_eq!(long.chars().count(), 200);
    }

    #[test]
    fn a_pass_tells_the_window_when_something_changed() {
        let set = |ids: &[&str]| ids.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        let (none, a, ab) = (set(&[]), set(&["a"]), set(&["a", "b"]));
        let cases = [
            (None, &none, false, true),
            (Some(&none), &none, false, false),
            (Some(&none), &none, true, true),
            (Some(&a), &a, false, false),
            (Some(&a), &ab, false, true),
            (Some(&ab), &a, false, true),
            (Some(&a), &a, true, true),
        ];
        for (seen, pending, expired, want) in cases {
            assert_eq!(
                should_announce(seen, pending, expired),
                want,
                "{seen:?} {pending:?} {expired}"
            );
        }
    }

    /// Only pending requests count and only unseen ones are new, oldest first; decided
    /// and expired ones are neither.
    #[test]
    fn new_pending_requests_are_the_unseen_pending_ones() {
        let requests = [
            request("c", "2026-12-05T03:00:00Z", InboxStatus::Pending),
            request("a", "2026-12-05T01:00:00Z", InboxStatus::Pending),
            request("b", "2026-12-05T02:00:00Z", InboxStatus::Pending),
            request("d", "2026-12-05T00:00:00Z", InboxStatus::Allowed),
            request("e", "2026-12-05T00:00:00Z", InboxStatus::Expired),
        ];
        assert_eq!(
            pending_ids(&requests).into_iter().collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        let cases: [(&[&str], &[&str]); 4] = [
            (&[], &["a", "b", "c"]),
            (&["a"], &["b", "c"]),
            (&["a", "b", "c"], &[]),
            (&["d", "e"], &["a", "b", "c"]),
        ];
        for (seen, want) in cases {
            let seen = seen.iter().map(|s| s.to_string()).collect();
            let got: Vec<&str> = newly_pending(&seen, &requests)
                .iter()
                .map(|r| r.id.as_str())
                .collect();
            assert_eq!(got, want, "seen {seen:?}");
        }
    }
}
