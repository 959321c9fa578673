//! The app's timer for unattended work: every [`TICK`] while the app runs (the window
//! open or closed to the tray), one `Desk::tick` — due schedules, approval expiry and its
//! follow-up turns, every due push message — and what it did goes to the window.

use std::collections::BTreeSet;
use std::time::Duration;

use tauri::{AppHandle, Manager};
use wyckoff_session::scheduler::Stop;

use crate::chat::ChatState;
use crate::state::AppState;

/// How often the desk ticks.
const TICK: Duration = Duration::from_secs(15);

/// Ticks until the app exits. The first tick opens the desk.
pub fn watch(app: AppHandle) {
    tauri::async_runtime::spawn(async move {
        // `None` until the first tick: the inbox count is sent once at start whatever it is.
        let mut seen: Option<BTreeSet<String>> = None;
        loop {
            match tick(&app, seen.as_ref()).await {
                Ok(pending) => seen = Some(pending),
                Err(e) => tracing::warn!("unattended work not run: {e}"),
            }
            tokio::time::sleep(TICK).await;
        }
    });
}

async fn tick(
    app: &AppHandle,
    seen: Option<&BTreeSet<String>>,
) -> Result<BTreeSet<String>, String> {
    let state = app.state::<AppState>();
    let chat = app.state::<ChatState>();
    let desk = chat
        .desk(&state.home, state.settings(), state.secrets.clone())
        .await
        .map_err(|e| e.to_string())?;
    let report = desk.tick(chrono::Utc::now(), &Stop::default()).await;
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
    for run in &report.runs {
        crate::schedules::announce(app, run);
    }
    Ok(crate::inbox::tell_window(
        app,
        seen,
        &report.pending,
        report.expired > 0,
    ))
}
