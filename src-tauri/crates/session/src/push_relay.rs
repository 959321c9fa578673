//! The one outbox sender of a process: finished background tasks, finished schedule runs
//! and approvals waiting in the inbox are queued in the durable outbox (one row per channel
//! and part, split to the channel's limit) through the same path as fired alerts, and
//! [`PushRelay::deliver`] sends every row that is due — fired alerts included, keeping each
//! alert's delivery status. A message that cannot be queued or sent is logged, never fails
//! the work it reports on; a send that fails is retried from the outbox by the next
//! unattended pass (the app's timer and the daemon's), whether or not anything is checked
//! again.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use wyckoff_alerts::AlertStore;
use wyckoff_config::Secrets;
use wyckoff_protocol::{InboxRequest, TaskInfo, TaskStatus};
use wyckoff_push::{Delivery, KeychainSecrets, Outbox, PushEvent};

use crate::SessionError;
use wyckoff_protocol::RunReport;

/// How long one send may take.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// Characters of a result summary or error a message quotes; the rest is in the app.
const QUOTED_CHARS: usize = 400;
const TITLE: &str = "Wyckoff Desk";

pub struct PushRelay {
    outbox: Outbox,
    /// The fired alerts, whose delivery status follows their outbox rows.
    alerts: AlertStore,
    /// One delivery at a time: a caller that waits for delivery (a schedule's end) gets
    /// the lock only after a send already under way (a task's end) has finished.
    sending: tokio::sync::Mutex<()>,
}

fn quote(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= QUOTED_CHARS {
        return flat;
    }
    let head: String = flat.chars().take(QUOTED_CHARS).collect();
    format!("{head}…（全文见应用 / full text in the app）")
}

/// What a channel is sent when a background task finishes.
pub fn task_message(task: &TaskInfo) -> Value {
    let (verdict, detail) = match task.status {
        TaskStatus::Completed => ("完成 / done", task.result_summary.as_deref()),
        TaskStatus::Cancelled => ("已取消 / cancelled", task.error.as_deref()),
        _ => ("失败 / failed", task.error.as_deref()),
    };
    let mut text = format!(
        "后台任务 {} {verdict} (task {}, {})",
        task.display_name,
        task.task_id,
        task.finished_at.as_deref().unwrap_or("")
    );
    if let Some(d) = detail.filter(|d| !d.trim().is_empty()) {
        text.push_str(&format!("\n{}", quote(d)));
    }
    json!({
        "type": "task",
        "title": TITLE,
        "text": text,
        "task": {
            "task_id": task.task_id,
            "tool_name": task.tool_name,
            "status": task.status,
            "finished_at": task.finished_at,
        },
    })
}

/// What a channel is sent when a schedule run ends.
pub fn schedule_message(run: &RunReport, finished_at: &str) -> Value {
    let status = serde_json::to_value(run.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let when = run
        .occurrence
        .as_deref()
        .map_or_else(|| "run now".to_owned(), |o| format!("due {o} Beijing"));
    let mut text = format!(
        "定时任务 {} {status} ({when}{}, finished {finished_at})",
        run.schedule,
        if run.catch_up { ", catch-up" } else { "" }
    );
    if let Some(d) = run
        .error
        .as_deref()
        .or(run.summary.as_deref())
        .filter(|d| !d.trim().is_empty())
    {
        text.push_str(&format!("\n{}", quote(d)));
    }
    json!({
        "type": "schedule",
        "title": TITLE,
        "text": text,
        "schedule": {
            "name": run.schedule,
            "run_id": run.run_id,
            "occurrence": run.occurrence,
            "status": status,
            "task_id": run.task_id,
            "conversation_id": run.conversation_id,
        },
    })
}

/// What a channel is sent when a call waits for approval in the inbox (the call's name and
/// who asked, never its arguments: they may carry what the user keeps to the desk).
pub fn approval_message(request: &InboxRequest) -> Value {
    let text = format!(
        "待审批 / approval waiting: {} ({}), asked by {}; answer by {} with `wyckoff approvals` or in the app (request {})",
        request.display_name, request.tool, request.requested_by, request.expires_at, request.id
    );
    json!({
        "type": "approval",
        "title": TITLE,
        "text": text,
        "approval": {
            "id": request.id,
            "tool": request.tool,
            "requested_by": request.requested_by,
            "expires_at": request.expires_at,
        },
    })
}

impl PushRelay {
    /// The outbox on the shared `wyckoff.db`, with channel secrets from `secrets`.
    pub async fn open(
        pool: sqlx::SqlitePool,
        secrets: Arc<Secrets>,
    ) -> Result<PushRelay, SessionError> {
        let outbox = Outbox::new(pool.clone(), SEND_TIMEOUT)
            .await?
            .with_secrets(Arc::new(KeychainSecrets(secrets)));
        let alerts = AlertStore::new(pool).await?;
        Ok(PushRelay {
            outbox,
            alerts,
            sending: tokio::sync::Mutex::new(()),
        })
    }

    /// The process's one outbox (channels, rows and their sends).
    pub fn outbox(&self) -> &Outbox {
        &self.outbox
    }

    /// The fired alerts, whose delivery status follows their outbox rows.
    pub fn alerts(&self) -> &AlertStore {
        &self.alerts
    }

    /// Queues `body` for every channel that takes `event`; the channels' names.
    pub async fn queue(&self, event: PushEvent, body: &Value, now: DateTime<Utc>) -> Vec<String> {
        match self.outbox.enqueue_event(event, body, now).await {
            Ok(names) => names,
            Err(e) => {
                tracing::warn!(event = event.as_str(), "cannot queue a push message: {e}");
                Vec::new()
            }
        }
    }

    /// Sends every row due at `now` (alerts, tasks, schedules, approvals) and updates the
    /// delivery status of the alerts concerned; the attempts made. A row another process
    /// holds is left to it (the outbox claims each row in the database).
    pub async fn deliver(&self, now: DateTime<Utc>) -> Vec<Delivery> {
        let _one = self.sending.lock().await;
        match wyckoff_alerts::deliver::deliver(&self.alerts, &self.outbox, None, now).await {
            Ok(done) => done,
            Err(e) => {
                tracing::warn!("cannot deliver push messages: {e}");
                Vec::new()
            }
        }
    }

    /// A task finished: queued at once (before anyone sees it finished), sent in the
    /// background so the task's end does not wait on a channel.
    pub async fn task_finished(self: &Arc<Self>, task: &TaskInfo, now: DateTime<Utc>) {
        if self
            .queue(PushEvent::Tasks, &task_message(task), now)
            .await
            .is_empty()
        {
            return;
        }
        let relay = self.clone();
        tokio::spawn(async move {
            relay.deliver(now).await;
        });
    }

    /// A schedule run ended: queued and sent before the run is reported.
    pub async fn schedule_finished(&self, run: &RunReport, now: DateTime<Utc>) {
        let stamp = now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        self.queue(PushEvent::Schedules, &schedule_message(run, &stamp), now)
            .await;
        self.deliver(now).await;
    }

    /// A call was queued in the inbox: queued and sent in the background.
    pub async fn approval_queued(self: &Arc<Self>, request: &InboxRequest, now: DateTime<Utc>) {
        if self
            .queue(PushEvent::Approvals, &approval_message(request), now)
            .await
            .is_empty()
        {
            return;
        }
        let relay = self.clone();
        tokio::spawn(async move {
            relay.deliver(now).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wyckoff_protocol::{InboxStatus, TaskProgress};

    fn task(status: TaskStatus, summary: Option<&str>, error: Option<&str>) -> TaskInfo {
        TaskInfo {
            task_id: "t-1".into(),
            tool_name: "screen_stocks".into(),
            display_name: "全市场筛选".into(),
            status,
            progress: TaskProgress::default(),
            started_at: "2026-12-05T07:00:00Z".into(),
            finished_at: Some("2026-12-05T07:01:00Z".into()),
            session_id: None,
            result_summary: summary.map(Into::into),
            result: None,
            error: error.map(Into::into),
        }
    }

    #[test]
    fn a_task_message_says_how_it_ended_and_quotes_at_most_a_few_hundred_characters() {
        let done = task_message(&task(TaskStatus::Completed, Some("12 candidates"), None));
        assert_eq!(
            done["text"],
            "后台任务 全市场筛选 完成 / done (task t-1, 2026-12-05T07:01:00Z)\n12 candidates"
        );
        assert_eq!(done["type"], "task");
        assert_eq!(done["task"]["status"], "completed");
        let failed = task_message(&task(TaskStatus::Failed, Some("{}"), Some("no bars")));
        assert!(
            failed["text"]
                .as_str()
                .unwrap()
                .ends_with("失败 / failed (task t-1, 2026-12-05T07:01:00Z)\nno bars")
        );
        let long = "x".repeat(5000);
        let cut = task_message(&task(TaskStatus::Completed, Some(&long), None));
        let text = cut["text"].as_str().unwrap();
        assert!(
            text.ends_with("…（全文见应用 / full text in the app）"),
            "{text}"
        );
        assert!(text.contains(&"x".repeat(QUOTED_CHARS)), "{text}");
        assert!(!text.contains(&"x".repeat(QUOTED_CHARS + 1)), "{text}");
    }

    #[test]
    fn an_approval_message_names_the_call_not_its_arguments() {
        let r = InboxRequest {
            id: "apr-1".into(),
            conversation_id: "c".into(),
            tool: "update_portfolio".into(),
            display_name: "修改持仓".into(),
            args: json!({"code": "600519", "secret_note": "keep me"}),
            preview: None,
            requested_by: "schedule:close".into(),
            created_at: "2026-12-05T07:00:00Z".into(),
            expires_at: "2026-12-06T07:00:00Z".into(),
            status: InboxStatus::Pending,
            decided_at: None,
            decided_by: None,
            result: None,
        };
        let m = approval_message(&r);
        let text = m["text"].as_str().unwrap();
        assert!(
            text.contains("修改持仓 (update_portfolio), asked by schedule:close"),
            "{text}"
        );
        assert!(!m.to_string().contains("keep me"));
    }
}
