//! The chat bots, served while the app runs (the window open or hidden to the tray).
//!
//! Every bot with a token is served by one process: whichever of the app and the daemon
//! (or `wyckoff bot run`) took its lease first keeps it while it lives; the other stands
//! by and takes over when it stops. So the app started beside a running daemon leaves
//! the daemon's bots to it, and serves them once the daemon is gone. The serve loops are
//! the bot front end's (`wyckoff_bot`); the lease, the gate and every decision are the
//! desk's. A bot added or given its token in the settings is served from the next look.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tauri::{AppHandle, Manager};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::chat::ChatState;
use crate::state::AppState;

/// How often the app looks for bots to serve (a nudge looks at once).
const LOOK: Duration = Duration::from_secs(15);
/// A bot whose loop ended by itself (a refused token, a kind the app cannot serve) is
/// tried again after this long.
const RETRY: Duration = Duration::from_secs(120);
/// How long quitting waits for the loops to give their leases back.
const STOP_WAIT: Duration = Duration::from_secs(3);

/// The app's bot loops.
#[derive(Default)]
pub struct BotServing {
    stop: CancellationToken,
    nudge: Notify,
    loops: Mutex<HashMap<String, Loop>>,
}

struct Loop {
    stop: CancellationToken,
    task: Option<JoinHandle<()>>,
    /// Set when the loop ended by itself: not started again before this.
    retry_at: Option<Instant>,
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
        let tasks: Vec<JoinHandle<()>> = match self.loops.lock() {
            Ok(mut loops) => loops.values_mut().filter_map(|l| l.task.take()).collect(),
            Err(_) => Vec::new(),
        };
        let all = futures::future::join_all(tasks);
        if tokio::time::timeout(STOP_WAIT, all).await.is_err() {
            tracing::warn!("bot loops still running at exit");
        }
    }
}

/// Serves the bots until the app exits.
pub fn watch(app: AppHandle) {
    tauri::async_runtime::spawn(async move {
        let serving = app.state::<BotServing>();
        loop {
            if let Err(e) = look(&app).await {
                tracing::warn!("bots not served: {e}");
            }
            tokio::select! {
                () = serving.stop.cancelled() => return,
                () = serving.nudge.notified() => {}
                () = tokio::time::sleep(LOOK) => {}
            }
        }
    });
}

/// Starts a loop for each bot with a token that has none, stops the loops of bots that
/// are gone or lost their token.
async fn look(app: &AppHandle) -> Result<(), String> {
    let state = app.state::<AppState>();
    let chat = app.state::<ChatState>();
    let serving = app.state::<BotServing>();
    if serving.stop.is_cancelled() {
        return Ok(());
    }
    let desk = chat
        .desk(&state.home, &state.settings, state.secrets.clone())
        .await
        .map_err(|e| e.to_string())?;
    let bots = desk.bot_list().await.map_err(|e| e.to_string())?;
    let mut loops = serving.loops.lock().map_err(|e| e.to_string())?;
    let wanted: Vec<String> = bots
        .iter()
        .filter(|b| b.token_set)
        .map(|b| b.bot.name.clone())
        .collect();
    loops.retain(|name, l| {
        let keep = wanted.contains(name);
        if !keep {
            l.stop.cancel();
        }
        keep
    });
    let now = Instant::now();
    for name in wanted {
        if let Some(l) = loops.get_mut(&name) {
            let ended = l.task.as_ref().is_none_or(JoinHandle::is_finished);
            if !ended {
                continue;
            }
            match l.retry_at {
                None => {
                    l.retry_at = Some(now + RETRY);
                    continue;
                }
                Some(at) if at > now => continue,
                Some(_) => {}
            }
        }
        let stop = serving.stop.child_token();
        let task = {
            let (desk, stop, name) = (desk.clone(), stop.clone(), name.clone());
            // Inside the app's runtime (this runs in its task): a plain tokio task.
            tokio::spawn(async move {
                let options = wyckoff_bot::ServeOptions {
                    front: "app",
                    ..wyckoff_bot::ServeOptions::default()
                };
                if let Err(e) =
                    wyckoff_bot::serve_all(desk, std::slice::from_ref(&name), options, stop).await
                {
                    tracing::warn!(bot = %name, "not served: {e}");
                }
            })
        };
        loops.insert(
            name,
            Loop {
                stop,
                task: Some(task),
                retry_at: None,
            },
        );
    }
    Ok(())
}
