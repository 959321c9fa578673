//! Serving the bots the desk has now, whatever it had at start: the app and the daemon
//! each look at the bot list now and then (and at once when nudged), start a loop for a
//! bot given a token, stop the loop of a bot removed or left without one, and start a
//! loop that ended by itself (a refused token, a kind that cannot be served) again after
//! a while. Each loop is [`serve_all`] for one bot, under its own child of `stop`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use wyckoff_session::Desk;

use crate::serve::{ServeOptions, serve_all};

/// How often the bot list is looked at, and how long a loop that ended by itself waits.
#[derive(Debug, Clone, Copy)]
pub struct WatchTiming {
    /// Between two looks (a nudge looks at once).
    pub look: Duration,
    /// A bot whose loop ended by itself is started again after this long.
    pub retry: Duration,
    /// At `stop`, how long the loops get to give their leases back.
    pub stop_wait: Duration,
}

impl Default for WatchTiming {
    fn default() -> Self {
        WatchTiming {
            look: Duration::from_secs(15),
            retry: Duration::from_secs(120),
            stop_wait: Duration::from_secs(3),
        }
    }
}

/// One bot's loop.
struct Loop {
    stop: CancellationToken,
    task: JoinHandle<()>,
    /// Set once the loop was seen ended by itself: not started again before this.
    retry_at: Option<Instant>,
}

/// Serves every bot with a token until `stop`, following the list as it changes (see
/// the module doc); `nudge` makes it look at once (a bot added, given a token, removed).
/// Returns once every loop ended, or `timing.stop_wait` after `stop`.
pub async fn serve_watching(
    desk: Arc<Desk>,
    options: ServeOptions,
    stop: CancellationToken,
    nudge: Arc<Notify>,
    timing: WatchTiming,
) {
    let mut loops: HashMap<String, Loop> = HashMap::new();
    loop {
        if stop.is_cancelled() {
            break;
        }
        if let Err(e) = look(&desk, &options, &stop, &timing, &mut loops).await {
            tracing::warn!("bots not served: {e}");
        }
        tokio::select! {
            () = stop.cancelled() => break,
            () = nudge.notified() => {}
            () = tokio::time::sleep(timing.look) => {}
        }
    }
    let all = futures::future::join_all(loops.into_values().map(|l| l.task));
    if tokio::time::timeout(timing.stop_wait, all).await.is_err() {
        tracing::warn!("bot loops still running at exit");
    }
}

/// Starts a loop for each bot with a token that has none (or whose loop ended by itself
/// long enough ago), stops the loops of bots that are gone or lost their token.
async fn look(
    desk: &Arc<Desk>,
    options: &ServeOptions,
    stop: &CancellationToken,
    timing: &WatchTiming,
    loops: &mut HashMap<String, Loop>,
) -> Result<(), wyckoff_session::SessionError> {
    let wanted: Vec<String> = desk
        .bot_list()
        .await?
        .into_iter()
        .filter(|b| b.token_set)
        .map(|b| b.bot.name)
        .collect();
    loops.retain(|name, l| {
        let keep = wanted.contains(name);
        if !keep {
            tracing::info!(bot = %name, "no longer served: removed or without a token");
            l.stop.cancel();
        }
        keep
    });
    let now = Instant::now();
    for name in wanted {
        if let Some(l) = loops.get_mut(&name) {
            if !l.task.is_finished() {
                continue;
            }
            match l.retry_at {
                None => {
                    l.retry_at = Some(now + timing.retry);
                    continue;
                }
                Some(at) if at > now => continue,
                Some(_) => {}
            }
        }
        let bot_stop = stop.child_token();
        let task = {
            let (desk, options, bot_stop, name) = (
                desk.clone(),
                options.clone(),
                bot_stop.clone(),
                name.clone(),
            );
            tokio::spawn(async move {
                if let Err(e) =
                    serve_all(desk, std::slice::from_ref(&name), options, bot_stop).await
                {
                    tracing::warn!(bot = %name, "not served: {e}");
                }
            })
        };
        loops.insert(
            name,
            Loop {
                stop: bot_stop,
                task,
                retry_at: None,
            },
        );
    }
    Ok(())
}
