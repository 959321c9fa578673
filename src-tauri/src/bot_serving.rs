//! The chat bots, served while the app runs (the window open or hidden to the tray).
//!
//! Every bot with a token is served by one process: whichever of the app and the daemon
//! (or `wyckoff bot run`) took its lease first keeps it while it lives; the other stands
//! by and takes over when it stops. So the app started beside a running daemon leaves
//! the daemon's bots to it, and serves them once the daemon is gone. Following the bot
//! list (a bot added, given its token or removed in the settings is served or stopped
//! from the next look; the settings nudge it) is the bot front end's, as the daemon's
//! (`wyckoff_bot::serve_watching`); the lease, the gate and every decision are the desk's.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tauri::{AppHandle, Manager};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::chat::ChatState;
use crate::state::AppState;

/// How often the app tries again to open the desk the bots are served from.
const OPEN_RETRY: Duration = Duration::from_secs(15);

/// The app's bot watcher.
#[derive(Default)]
pub struct BotServing {
    stop: CancellationToken,
    nudge: Arc<Notify>,
    watcher: Mutex<Option<tauri::async_runtime::JoinHandle<()>>>,
}

impl BotServing {
    /// Looks for bots to serve now (after one was added, given a token or removed).
    pub fn nudge(&self) {
        self.nudge.notify_one();
    }

    /// Stops every loop and waits a little for their leases to be given back (a process
    /// gone frees its leases anyway: the daemon takes over either way).
    pub async fn stop(&self) {
        self.stop.cancel();
        let watcher = self.watcher.lock().ok().and_then(|mut w| w.take());
        if let Some(watcher) = watcher {
            let wait = wyckoff_bot::WatchTiming::default().stop_wait + Duration::from_secs(1);
            if tokio::time::timeout(wait, watcher).await.is_err() {
                tracing::warn!("bot loops still running at exit");
            }
        }
    }
}

/// Serves the bots until the app exits, once the desk opens.
pub fn watch(app: AppHandle) {
    let handle = app.clone();
    let task = tauri::async_runtime::spawn(async move {
        let serving = app.state::<BotServing>();
        let desk = loop {
            let state = app.state::<AppState>();
            let chat = app.state::<ChatState>();
            match chat
                .desk(&state.home, &state.settings, state.secrets.clone())
                .await
            {
                Ok(desk) => break desk,
                Err(e) => tracing::warn!("bots not served: {e}"),
            }
            tokio::select! {
                () = serving.stop.cancelled() => return,
                () = serving.nudge.notified() => {}
                () = tokio::time::sleep(OPEN_RETRY) => {}
            }
        };
        let options = wyckoff_bot::ServeOptions {
            front: "app",
            ..wyckoff_bot::ServeOptions::default()
        };
        wyckoff_bot::serve_watching(
            desk,
            options,
            serving.stop.clone(),
            serving.nudge.clone(),
            wyckoff_bot::WatchTiming::default(),
        )
        .await;
    });
    let serving = handle.state::<BotServing>();
    if let Ok(mut w) = serving.watcher.lock() {
        *w = Some(task);
    }
}
