//! Background tasks of a headless run (seed §7, REFERENCE §7.4): after the user's turn,
//! `wyckoff run` waits for the tasks its session started, shows their progress, and lets
//! the model answer each completion before it exits — bounded by `--wait-timeout`.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;
use wyckoff_agent::{BackgroundTaskManager, EventSink};
use wyckoff_protocol::{RuntimeEvent, TaskInfo};
use wyckoff_session::{Session, SessionError, TurnReport};

/// How the follow-up ended.
pub enum FollowUp {
    /// Nothing left running; every completion was answered (the last report, if any).
    Settled(Option<TurnReport>),
    /// `--wait-timeout` passed with these tasks still running; they were cancelled.
    TimedOut(Vec<TaskInfo>),
    /// Ctrl-C: the session's tasks were cancelled.
    Cancelled,
}

/// Forwards every state change of this session's tasks to `sink` as `background_task`
/// events (progress lines in text mode), until the returned token is cancelled.
pub fn forward_progress(
    tasks: &Arc<BackgroundTaskManager>,
    session_id: &str,
    sink: Arc<dyn EventSink>,
) -> CancellationToken {
    let stop = CancellationToken::new();
    let mut rx = tasks.subscribe();
    let (session_id, stopped) = (session_id.to_owned(), stop.clone());
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
            if task.session_id.as_deref() == Some(session_id.as_str()) {
                sink.emit(RuntimeEvent::BackgroundTask { task });
            }
        }
    });
    stop
}

fn running(tasks: &BackgroundTaskManager, session_id: &str) -> Vec<TaskInfo> {
    tasks
        .list_for_session(session_id)
        .into_iter()
        .filter(|t| !t.status.is_finished())
        .collect()
}

/// Waits for the session's background tasks and runs a notification turn (empty input:
/// no recall, not the user's words) whenever completions are pending.
pub async fn follow_up(
    session: &mut Session,
    tasks: &Arc<BackgroundTaskManager>,
    sink: Arc<dyn EventSink>,
    wait: Duration,
    cancel: CancellationToken,
) -> Result<FollowUp, SessionError> {
    let session_id = session.id().to_owned();
    let deadline = tokio::time::Instant::now() + wait;
    let mut changes = tasks.subscribe();
    let mut last = None;
    loop {
        if cancel.is_cancelled() {
            tasks.cancel_session(&session_id);
            return Ok(FollowUp::Cancelled);
        }
        if session.runtime().has_pending_notifications() {
            let report = session.run_turn("", sink.clone(), cancel.clone()).await?;
            last = Some(report);
            continue;
        }
        let still = running(tasks, &session_id);
        if still.is_empty() {
            return Ok(FollowUp::Settled(last));
        }
        tokio::select! {
            _ = cancel.cancelled() => {}
            _ = tokio::time::sleep_until(deadline) => {
                let still = running(tasks, &session_id);
                tasks.cancel_session(&session_id);
                return Ok(FollowUp::TimedOut(still));
            }
            // Any change (progress or an end) is a reason to look again.
            r = changes.recv() => {
                if let Err(RecvError::Closed) = r {
                    return Ok(FollowUp::Settled(last));
                }
            }
        }
    }
}
