//! Schedules in the app: while the app runs — the window open or closed to the tray —
//! the desk's tick (the app's timer) runs what is due (the same passes `wyckoff daemon`
//! makes; a due time either takes is never run by the other). A finished run goes to the
//! window as `ScheduleRan` and, when the window is not in front, as a desktop
//! notification.

use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::AppHandle;
use tauri_specta::Event;
use wyckoff_protocol::{RunReport, RunStatus};

/// One run of a schedule, as the window shows it.
#[derive(Debug, Clone, Serialize, Deserialize, Type)]
pub struct ScheduleRunView {
    pub id: i64,
    pub schedule: String,
    /// Beijing `YYYY-MM-DD HH:MM`; none for "run now".
    pub occurrence: Option<String>,
    pub catch_up: bool,
    pub status: RunStatus,
    pub summary: Option<String>,
    pub error: Option<String>,
    pub task_id: Option<String>,
    pub conversation_id: Option<String>,
    /// RFC 3339.
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
}

impl From<&RunReport> for ScheduleRunView {
    fn from(r: &RunReport) -> Self {
        ScheduleRunView {
            id: r.run_id,
            schedule: r.schedule.clone(),
            occurrence: r.occurrence.clone(),
            catch_up: r.catch_up,
            status: r.status,
            summary: r.summary.clone(),
            error: r.error.clone(),
            task_id: r.task_id.clone(),
            conversation_id: r.conversation_id.clone(),
            started_at: None,
            finished_at: None,
        }
    }
}

impl From<wyckoff_session::domain::schedule::ScheduleRun> for ScheduleRunView {
    fn from(r: wyckoff_session::domain::schedule::ScheduleRun) -> Self {
        ScheduleRunView {
            id: r.id,
            schedule: r.schedule,
            occurrence: r.occurrence,
            catch_up: r.catch_up,
            status: r.status,
            summary: r.summary,
            error: r.error,
            task_id: r.task_id,
            conversation_id: r.conversation_id,
            started_at: Some(r.started_at.to_rfc3339()),
            finished_at: r.finished_at.map(|t| t.to_rfc3339()),
        }
    }
}

/// A scheduled run finished (the Schedules page refreshes).
#[derive(Debug, Clone, Serialize, Deserialize, Type, Event)]
pub struct ScheduleRan {
    pub run: ScheduleRunView,
}

/// Tells the window (and the desktop, when the window is not in front) that a run ended.
pub fn announce(app: &AppHandle, r: &RunReport) {
    if let Err(e) = (ScheduleRan { run: r.into() }).emit(app) {
        tracing::warn!("cannot emit a schedule event: {e}");
    }
    let (name, ok) = (r.schedule.clone(), r.status == RunStatus::Done);
    let detail = r
        .error
        .clone()
        .or_else(|| r.summary.clone())
        .unwrap_or_default();
    crate::tasks::notify_when_away(app, r.conversation_id.clone(), |zh| {
        notification_text(&name, ok, &detail, zh)
    });
}

/// The notification's title and body.
pub fn notification_text(name: &str, ok: bool, detail: &str, zh: bool) -> (String, String) {
    let title = match (ok, zh) {
        (true, true) => format!("定时任务完成：{name}"),
        (false, true) => format!("定时任务失败：{name}"),
        (true, false) => format!("Scheduled run finished: {name}"),
        (false, false) => format!("Scheduled run failed: {name}"),
    };
    (title, detail.chars().take(200).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notification_names_the_schedule_and_its_outcome() {
        let cases = [
            (true, true, "定时任务完成：收盘扫描"),
            (false, true, "定时任务失败：收盘扫描"),
            (true, false, "Scheduled run finished: 收盘扫描"),
            (false, false, "Scheduled run failed: 收盘扫描"),
        ];
        for (ok, zh, title) in cases {
            let (t, body) = notification_text("收盘扫描", ok, &"x".repeat(300), zh);
            assert_eq!(t, title);
            assert_eq!(body.chars().count(), 200);
        }
    }
}
