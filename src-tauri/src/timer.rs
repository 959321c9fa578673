//! The app's timer for unattended work: every [`TICK`] while the app runs (the window
//! open or closed to the tray), one `Desk::tick` — due schedules, approval expiry and its
//! follow-up turns, every due push message.

use std::time::Duration;

use tauri::{AppHandle, Manager};
use wyckoff_session::desk_quotes::IntradayOutcome;
use wyckoff_session::domain::alerts::describe;
use wyckoff_session::scheduler::Stop;

use crate::chat::ChatState;
use crate::state::AppState;

/// How often the desk ticks.
const TICK: Duration = Duration::from_secs(15);

/// Ticks until the app exits. The first tick opens the desk; what a tick did reaches the
/// window through the desk's event stream.
pub fn watch(app: AppHandle) {
    tauri::async_runtime::spawn(async move {
        loop {
            if let Err(e) = tick(&app).await {
                tracing::warn!("unattended work not run: {e}");
            }
            tokio::time::sleep(TICK).await;
        }
    });
}

async fn tick(app: &AppHandle) -> Result<(), String> {
    let state = app.state::<AppState>();
    let chat = app.state::<ChatState>();
    let desk = chat
        .desk(&state.home, &state.settings, state.secrets.clone())
        .await
        .map_err(|e| e.to_string())?;
    let report = desk.tick(desk.clock().now(), &Stop::default()).await;
    if report.expired > 0 {
        tracing::info!(requests = report.expired, "expired approval requests");
    }
    if report.told > 0 {
        tracing::info!(
            decisions = report.told,
            "told conversations of earlier decisions"
        );
    }
    if let Some(why) = &report.pass_failed {
        tracing::warn!("{why}");
    }
    notify_intraday(app, report.intraday.as_ref());
    Ok(())
}

/// Alerts the session's intraday check fired reach the desktop as the task ends do (when
/// the setting is on and the window is not in front); the alert centre lists them.
fn notify_intraday(app: &AppHandle, outcome: Option<&IntradayOutcome>) {
    let Some(IntradayOutcome::Ran { run }) = outcome else {
        return;
    };
    for alert in &run.report.fired {
        let body = describe::alert_text(alert);
        crate::tasks::notify_when_away(app, None, |zh| {
            let title = if zh { "盘中提醒" } else { "Intraday alert" };
            (title.to_owned(), body)
        });
    }
}
