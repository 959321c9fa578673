//! Background task progress of a headless run (seed §7): shown while `wyckoff run` waits
//! for its tasks (the hub answers their completions; `ConversationHub::settle`).

use std::sync::Arc;

use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;
use wyckoff_protocol::RuntimeEvent;
use wyckoff_session::domain::agent::{BackgroundTaskManager, EventSink};

/// Forwards every state change of the process's tasks (a run's tasks are the only ones
/// that change in it) to `sink` as `background_task` events (progress lines in text
/// mode), until the returned token is cancelled.
pub fn forward_progress(
    tasks: &Arc<BackgroundTaskManager>,
    sink: Arc<dyn EventSink>,
) -> CancellationToken {
    let stop = CancellationToken::new();
    let mut rx = tasks.subscribe();
    let stopped = stop.clone();
    tokio::spawn(async move {
        loop {
            let task = tokio::select! {
                _ = stopped.cancelled() => return,
                r = rx.recv() => match r {
                    Ok(task) => task,
                    // A slow printer missed some progress; the next change still comes.
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => return,
                },
            };
            sink.emit(RuntimeEvent::BackgroundTask { task });
        }
    });
    stop
}
