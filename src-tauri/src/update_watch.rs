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
//!
//! The schedule reads the app's clock ([`crate::clock_override::app_clock`]), never the
//! runtime's timer directly: when each check is due is [`next_check_at`] of the clock's
//! now, and the waits are the clock's own.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tauri::{AppHandle, Manager};
use wyckoff_session::time::{Clock, SystemClock};

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
    let clock = crate::clock_override::app_clock().unwrap_or_else(|e| {
        tracing::warn!("update check on the system clock: {e}");
        Arc::new(SystemClock)
    });
    let started = clock.now();
    tauri::async_runtime::spawn(async move {
        run_schedule(clock.as_ref(), started, first, every, || check_once(&app)).await
    });
}

/// When the next automatic check is due: `first` after `started` until one has run, then
/// `every` after the last one began.
pub fn next_check_at(
    started: DateTime<Utc>,
    last_check: Option<DateTime<Utc>>,
    first: Duration,
    every: Duration,
) -> DateTime<Utc> {
    let after = |at: DateTime<Utc>, by: Duration| {
        chrono::Duration::from_std(by)
            .ok()
            .and_then(|d| at.checked_add_signed(d))
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    };
    match last_check {
        None => after(started, first),
        Some(last) => after(last, every),
    }
}

/// Runs `check` at every [`next_check_at`] of `clock`, for ever: waits on the clock until
/// the time is due (woken early, it waits again for the rest).
async fn run_schedule<F, Fut>(
    clock: &dyn Clock,
    started: DateTime<Utc>,
    first: Duration,
    every: Duration,
    mut check: F,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let mut last = None;
    loop {
        let due = next_check_at(started, last, first, every);
        loop {
            let now = clock.now();
            if now >= due {
                break;
            }
            clock.sleep((due - now).to_std().unwrap_or_default()).await;
        }
        last = Some(clock.now());
        check().await;
    }
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
    use std::sync::atomic::{AtomicU32, Ordering};
    use wyckoff_session::time::ManualClock;

    #[test]
    fn next_check_table() {
        let t0 = DateTime::<Utc>::from_timestamp(1_765_000_000, 0).unwrap();
        let s = |n: i64| t0 + chrono::Duration::seconds(n);
        // (last check, first, every) -> due
        let cases = [
            (None, FIRST_CHECK_AFTER, CHECK_EVERY, s(30)),
            (Some(s(30)), FIRST_CHECK_AFTER, CHECK_EVERY, s(30 + 86_400)),
            (
                Some(s(90_000)),
                FIRST_CHECK_AFTER,
                CHECK_EVERY,
                s(90_000 + 86_400),
            ),
            (None, Duration::from_secs(5), Duration::from_secs(5), s(5)),
            (
                Some(s(5)),
                Duration::from_secs(5),
                Duration::from_secs(5),
                s(10),
            ),
        ];
        for (last, first, every, want) in cases {
            assert_eq!(next_check_at(t0, last, first, every), want, "{last:?}");
        }
        // an absurd interval saturates instead of panicking
        assert_eq!(
            next_check_at(t0, None, Duration::MAX, CHECK_EVERY),
            DateTime::<Utc>::MAX_UTC
        );
    }

    /// Lets the spawned schedule run until it waits on the clock again.
    async fn settle() {
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn the_checks_follow_the_clock_30_s_after_start_then_daily() {
        let clock = Arc::new(ManualClock::default());
        let started = clock.now();
        let checks = Arc::new(AtomicU32::new(0));
        let (c, n) = (clock.clone(), checks.clone());
        let task = tokio::spawn(async move {
            run_schedule(c.as_ref(), started, FIRST_CHECK_AFTER, CHECK_EVERY, || {
                n.fetch_add(1, Ordering::SeqCst);
                async {}
            })
            .await
        });
        let count = || checks.load(Ordering::SeqCst);
        settle().await;
        assert_eq!(count(), 0, "nothing at start");
        clock.advance(Duration::from_secs(29));
        settle().await;
        assert_eq!(count(), 0, "not before 30 s");
        clock.advance(Duration::from_secs(1));
        settle().await;
        assert_eq!(count(), 1, "the first check 30 s after start");
        clock.advance(CHECK_EVERY - Duration::from_secs(1));
        settle().await;
        assert_eq!(count(), 1, "not again within the day");
        clock.advance(Duration::from_secs(1));
        settle().await;
        assert_eq!(count(), 2, "a day after the first");
        // a clock moved on by two days (a machine asleep) checks once, then daily again
        clock.advance(2 * CHECK_EVERY);
        settle().await;
        assert_eq!(count(), 3);
        task.abort();
    }

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
