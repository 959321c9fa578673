//! The automatic update check: once a little after start (never in the way of it), then
//! once a day while the app runs (the window open or closed to the tray). What it finds is
//! kept for the window (`pending_update`) and announced once per version (`UpdateFound`);
//! it never downloads or installs: that waits for the user's click.
//!
//! Silent by design: `WYCKOFF_OFFLINE=1` means no check at all, the Settings switch
//! (`check_for_updates`) is read before every check, and a server that cannot be reached
//! is a line in the log, not a dialog. `WYCKOFF_UPDATE_INTERVAL_SECS` replaces both the
//! delay after start and the day between checks, in debug builds only (the end-to-end test
//! runs on seconds); a release build checks daily whatever the environment says.

use std::time::Duration;

use tauri::{AppHandle, Manager};

use crate::commands::updater::{self, PendingUpdate};
use crate::state::AppState;

/// The first check waits this long after start: the desk opens its data first.
const FIRST_CHECK_AFTER: Duration = Duration::from_secs(30);
/// Then once a day.
const CHECK_EVERY: Duration = Duration::from_secs(24 * 60 * 60);

/// When the automatic check runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Never while the app runs, and why (for the log).
    Off(String),
    Every {
        first: Duration,
        every: Duration,
    },
}

/// The plan from the environment: `offline` is `WYCKOFF_OFFLINE`, `interval` is
/// `WYCKOFF_UPDATE_INTERVAL_SECS`, honoured only when `debug_build`. A malformed or zero
/// interval is ignored with a note (the daily default stays).
pub fn plan(
    offline: Option<&str>,
    interval: Option<&str>,
    debug_build: bool,
) -> (Plan, Option<String>) {
    let offline = offline
        .map(str::trim)
        .is_some_and(|v| !v.is_empty() && !matches!(v, "0" | "false" | "no"));
    if offline {
        return (
            Plan::Off("WYCKOFF_OFFLINE is set: no automatic update check".into()),
            None,
        );
    }
    let daily = Plan::Every {
        first: FIRST_CHECK_AFTER,
        every: CHECK_EVERY,
    };
    let Some(raw) = interval.map(str::trim).filter(|v| !v.is_empty()) else {
        return (daily, None);
    };
    if !debug_build {
        return (
            daily,
            Some(
                "WYCKOFF_UPDATE_INTERVAL_SECS is ignored in a release build: checking daily".into(),
            ),
        );
    }
    match raw.parse::<u64>() {
        Ok(secs) if secs > 0 => (
            Plan::Every {
                first: Duration::from_secs(secs),
                every: Duration::from_secs(secs),
            },
            None,
        ),
        _ => (
            daily,
            Some(format!(
                "WYCKOFF_UPDATE_INTERVAL_SECS={raw:?} is not a positive number of seconds: checking daily"
            )),
        ),
    }
}

/// Starts the automatic check for the life of the app.
pub fn watch(app: AppHandle) {
    let env = |k: &str| std::env::var(k).ok();
    let (plan, note) = plan(
        env("WYCKOFF_OFFLINE").as_deref(),
        env("WYCKOFF_UPDATE_INTERVAL_SECS").as_deref(),
        cfg!(debug_assertions),
    );
    if let Some(note) = note {
        tracing::warn!("{note}");
    }
    let (first, every) = match plan {
        Plan::Off(why) => {
            tracing::info!("{why}");
            return;
        }
        Plan::Every { first, every } => (first, every),
    };
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(first).await;
        loop {
            check_once(&app).await;
            tokio::time::sleep(every).await;
        }
    });
}

async fn check_once(app: &AppHandle) {
    if !app.state::<AppState>().settings().check_for_updates {
        tracing::debug!("automatic update check turned off in Settings");
        return;
    }
    match updater::check(app).await {
        Ok(check) if !check.server_configured => {
            tracing::debug!("automatic update check: {}", updater::NO_SERVER);
        }
        Ok(check) => {
            match &check.available {
                Some(a) => tracing::info!(version = %a.version, "a newer version is available"),
                None => tracing::debug!("automatic update check: this is the latest version"),
            }
            app.state::<PendingUpdate>().remember(app, &check);
        }
        // Offline, a proxy, a server down: the next check tries again; nothing to show.
        Err(e) => tracing::info!("automatic update check not done: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_table() {
        let daily = Plan::Every {
            first: FIRST_CHECK_AFTER,
            every: CHECK_EVERY,
        };
        let secs = |n| Plan::Every {
            first: Duration::from_secs(n),
            every: Duration::from_secs(n),
        };
        // (offline, interval, debug build) -> plan, whether a note is logged
        type Case<'a> = (Option<&'a str>, Option<&'a str>, bool, Plan, bool);
        let cases: [Case; 10] = [
            (None, None, false, daily.clone(), false),
            (None, None, true, daily.clone(), false),
            (Some("0"), None, false, daily.clone(), false),
            (Some("no"), None, false, daily.clone(), false),
            (Some(""), None, false, daily.clone(), false),
            (None, Some("5"), true, secs(5), false),
            (None, Some("5"), false, daily.clone(), true),
            (None, Some("0"), true, daily.clone(), true),
            (None, Some("soon"), true, daily.clone(), true),
            (None, Some(" "), true, daily.clone(), false),
        ];
        for (offline, interval, debug, want, noted) in cases {
            let (got, note) = plan(offline, interval, debug);
            assert_eq!(got, want, "{offline:?} {interval:?} debug={debug}");
            assert_eq!(
                note.is_some(),
                noted,
                "{offline:?} {interval:?} debug={debug}: {note:?}"
            );
        }
        for offline in ["1", "true", "yes"] {
            let (got, _) = plan(Some(offline), Some("5"), true);
            assert!(
                matches!(got, Plan::Off(ref why) if why.contains("WYCKOFF_OFFLINE")),
                "{got:?}"
            );
        }
    }
}
