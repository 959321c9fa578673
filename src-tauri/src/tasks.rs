//! Background tasks in the app (seed §7): every change goes out as an app-wide
//! `TaskChanged` event for the panel, the tray says how many run, and a finished task
//! raises a desktop notification when the window is not in front. Answering the
//! completion in its conversation is the hub's (`wyckoff_session::hub`); this file only
//! forwards.

use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::{AppHandle, Manager};
use tauri_specta::Event;
use wyckoff_protocol::{TaskInfo, TaskStatus};

use crate::state::AppState;

/// A task changed (submitted, progress, finished). The manager's events carry no result
/// body; the panel fetches one on demand (`task_result`), so progress events stay small.
#[derive(Debug, Clone, Serialize, Deserialize, Type, Event)]
pub struct TaskChanged {
    pub task: TaskInfo,
}

/// A task changed: the panel hears of it, the tray says how many run (`running`: queued
/// tasks are not counted until they start) and a finished task raises a notification
/// when the window is not in front.
pub fn changed(app: &AppHandle, task: TaskInfo, running: usize) {
    crate::tray::set_running_tasks(app, running, task.session_id.as_deref());
    let finished = task.status.is_finished();
    if let Err(e) = (TaskChanged { task: task.clone() }).emit(app) {
        tracing::warn!("cannot emit a task event: {e}");
    }
    if finished {
        notify_if_away(app, &task);
    }
}

/// The notification's title and body, in the UI language.
pub fn notification_text(task: &TaskInfo, zh: bool) -> (String, String) {
    let outcome = match (task.status, zh) {
        (TaskStatus::Completed, true) => "已完成".to_owned(),
        (TaskStatus::Completed, false) => "finished".to_owned(),
        (TaskStatus::Cancelled, true) => "已取消".to_owned(),
        (TaskStatus::Cancelled, false) => "cancelled".to_owned(),
        (_, true) => format!("失败：{}", task.error.as_deref().unwrap_or("")),
        (_, false) => format!("failed: {}", task.error.as_deref().unwrap_or("")),
    };
    let title = if zh {
        format!("后台任务{}", outcome.split('：').next().unwrap_or(""))
    } else {
        "Background task".to_owned()
    };
    let body: String = format!("{} {outcome}", task.display_name)
        .chars()
        .take(200)
        .collect();
    (title, body)
}

/// Notify only when the setting is on and the user is not looking at the window.
pub fn should_notify(enabled: bool, visible: bool, focused: bool) -> bool {
    enabled && !(visible && focused)
}

/// Raises a desktop notification when the setting is on and the window is hidden or not
/// focused. A desktop without a notification service is logged; the panel still shows it.
fn notify_if_away(app: &AppHandle, task: &TaskInfo) {
    notify_when_away(app, task.session_id.clone(), |zh| {
        notification_text(task, zh)
    });
}

/// The desktop notification `text` words (in the UI language) when the setting is on and
/// the user is not looking at the window; clicking it opens `conversation`.
pub fn notify_when_away(
    app: &AppHandle,
    conversation: Option<String>,
    text: impl FnOnce(bool) -> (String, String),
) {
    let settings = app.state::<AppState>().settings();
    let (visible, focused) = app
        .get_webview_window("main")
        .map(|w| {
            (
                w.is_visible().unwrap_or(false),
                w.is_focused().unwrap_or(false),
            )
        })
        .unwrap_or((false, false));
    if !should_notify(settings.notifications, visible, focused) {
        return;
    }
    let zh = matches!(settings.language, wyckoff_config::settings::Language::Zh);
    let (title, body) = text(zh);
    let app = app.clone();
    // notify-rust blocks on D-Bus (and on the user's click): keep it off the runtime.
    std::thread::spawn(move || match send_desktop(&title, &body) {
        Ok(sent) => {
            tracing::info!(title, "desktop notification sent");
            sent.on_activate(move || crate::tray::open_conversation(&app, conversation.as_deref()));
        }
        Err(e) => tracing::warn!("no desktop notification ({e}); the window shows it"),
    });
}

/// A notification on screen.
pub struct Sent(#[allow(dead_code)] notify_rust::NotificationHandle);

impl Sent {
    /// Runs `f` when the user activates the notification (Linux/BSD desktops; elsewhere
    /// the system offers no callback and this returns at once).
    fn on_activate(self, f: impl FnOnce()) {
        #[cfg(all(unix, not(target_os = "macos")))]
        self.0.wait_for_action(|action| {
            if action == "default" {
                f();
            }
        });
        #[cfg(not(all(unix, not(target_os = "macos"))))]
        let _ = f;
    }
}

/// Sends one desktop notification (D-Bus org.freedesktop.Notifications on Linux).
pub fn send_desktop(title: &str, body: &str) -> Result<Sent, notify_rust::error::Error> {
    let mut n = notify_rust::Notification::new();
    n.appname("Wyckoff Desk").summary(title).body(body);
    #[cfg(all(unix, not(target_os = "macos")))]
    n.action("default", "打开");
    n.show().map(Sent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wyckoff_protocol::TaskProgress;

    fn task(status: TaskStatus, error: Option<&str>) -> TaskInfo {
        TaskInfo {
            task_id: "bg_1_screen_stocks".into(),
            tool_name: "screen_stocks".into(),
            display_name: "全市场扫描".into(),
            status,
            progress: TaskProgress::default(),
            started_at: "2026-12-03T06:00:00Z".into(),
            finished_at: None,
            session_id: Some("c1".into()),
            result_summary: None,
            result: Some(serde_json::json!({"big": true})),
            error: error.map(str::to_owned),
        }
    }

    #[test]
    fn notification_names_the_task_and_its_outcome() {
        let cases = [
            (
                TaskStatus::Completed,
                None,
                true,
                "后台任务已完成",
                "全市场扫描 已完成",
            ),
            (
                TaskStatus::Failed,
                Some("数据缺失"),
                true,
                "后台任务失败",
                "全市场扫描 失败：数据缺失",
            ),
            (
                TaskStatus::Cancelled,
                None,
                false,
                "Background task",
                "全市场扫描 cancelled",
            ),
        ];
        for (status, error, zh, title, body) in cases {
            let (t, b) = notification_text(&task(status, error), zh);
            assert_eq!((t.as_str(), b.as_str()), (title, body));
        }
    }

    #[test]
    fn notify_only_when_on_and_the_window_is_not_in_front() {
        // (enabled, visible, focused, notify)
        let cases = [
            (true, true, true, false),
            (true, true, false, true),
            (true, false, false, true),
            (true, false, true, true),
            (false, false, false, false),
            (false, true, false, false),
        ];
        for (enabled, visible, focused, want) in cases {
            assert_eq!(
                should_notify(enabled, visible, focused),
                want,
                "{enabled} {visible} {focused}"
            );
        }
    }

    /// Real D-Bus: run inside `dbus-run-session` (scripts/test does). Without a
    /// notification service the send fails with an error (logged by the app, no panic);
    /// with one (a stand-in daemon) the notification arrives with the task and outcome.
    #[test]
    #[ignore = "needs a session D-Bus (scripts/test runs it under dbus-run-session)"]
    fn desktop_notification_reaches_the_session_bus() {
        assert!(
            std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some(),
            "no session bus"
        );
        let (title, body) = notification_text(&task(TaskStatus::Completed, None), true);
        assert!(
            send_desktop(&title, &body).is_err(),
            "no daemon yet: must fail"
        );

        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("notifications.jsonl");
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/support/fake-notifyd.py");
        let mut daemon = std::process::Command::new("/usr/bin/python3")
            .arg(&script)
            .arg(&record)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(daemon.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        assert_eq!(line.trim(), "ready");
        let sent = send_desktop(&title, &body);
        let _ = daemon.kill();
        let _ = daemon.wait();
        assert!(sent.is_ok(), "{:?}", sent.err());
        let recorded: serde_json::Value =
            serde_json::from_str(std::fs::read_to_string(&record).unwrap().trim()).unwrap();
        assert_eq!(recorded["app_name"], "Wyckoff Desk");
        assert_eq!(recorded["summary"], "后台任务已完成");
        assert_eq!(recorded["body"], "全市场扫描 已完成");
        assert_eq!(recorded["actions"], serde_json::json!(["default", "打开"]));
    }
}
