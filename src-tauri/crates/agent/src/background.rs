//! Background tasks (seed §7): heavy tools run on tokio while the conversation goes on.
//!
//! A background tool call returns `{"status":"background","task_id":…}` at once. The task
//! reports progress through its context's [`ProgressHandle`], its
//! result is persisted in SQLite, listeners get every state change on a broadcast
//! channel, and a synthetic system-notification message is queued for the session so the
//! next round (or turn) continues with the result. On open, tasks that were running when
//! the app stopped are marked failed, and undelivered notifications are queued again.
//!
//! Result bodies (a full-market screen, a backtest's curve) stay in the database: the
//! task list in memory carries status, progress and the short summary only, and
//! [`BackgroundTaskManager::result`] reads a body when someone asks for it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use sqlx::Row;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;
use wyckoff_protocol::{Message, TaskInfo, TaskNotice, TaskProgress, TaskStatus, UserOrigin};

use crate::clock::Clock;
use crate::error::AgentError;
use crate::results::{ResultStore, serialize_result};
use crate::tool::{ProgressHandle, Tool, ToolContext, ToolError};

/// Background tasks that run at once; more are accepted and wait their turn as
/// [`TaskStatus::Queued`] (the heavy tools each use every core: running more at once only
/// makes all of them slower).
pub const MAX_RUNNING_TASKS: usize = 3;

/// Called with a task as it finishes, before anyone can see it finished: what the hook does
/// (the push relay queues a message for the channels that take finished tasks) is done by
/// the time a waiter sees the task end.
pub type FinishHook =
    Arc<dyn Fn(TaskInfo) -> futures::future::BoxFuture<'static, ()> + Send + Sync>;

/// Characters of a task result included in its completion notification.
pub const SUMMARY_MAX_CHARS: usize = 3_000;
/// Error recorded for tasks that were running when the app stopped.
pub const INTERRUPTED: &str = "interrupted by restart";

/// A finished task's notice waiting for a turn of its conversation: the message the model
/// reads and the same notice typed, for readers.
#[derive(Debug, Clone)]
pub struct PendingNotice {
    pub notice: TaskNotice,
    pub message: Message,
}

#[derive(Default)]
struct State {
    /// In start order.
    tasks: Vec<TaskInfo>,
    /// Completion notifications waiting for a turn of their session.
    pending: HashMap<String, Vec<PendingNotice>>,
    /// Cancellation of each running task (removed when it finishes).
    cancels: HashMap<String, CancellationToken>,
}

/// Who runs this process's tasks, and whether another owner is still running — so a
/// process starting up marks only orphaned tasks interrupted.
#[derive(Clone)]
pub struct TaskOwner {
    pub id: String,
    pub is_alive: Arc<dyn Fn(&str) -> bool + Send + Sync>,
}

pub struct BackgroundTaskManager {
    pool: SqlitePool,
    owner: Option<String>,
    /// One permit per task allowed to run at once ([`MAX_RUNNING_TASKS`]).
    slots: Arc<tokio::sync::Semaphore>,
    state: Mutex<State>,
    events: broadcast::Sender<TaskInfo>,
    clock: Arc<dyn Clock>,
    results: Option<ResultStore>,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    on_finish: Mutex<Option<FinishHook>>,
}

impl BackgroundTaskManager {
    /// Runs `hook` for every task that finishes from now on (replacing an earlier hook).
    pub fn on_finish(&self, hook: FinishHook) {
        if let Ok(mut h) = self.on_finish.lock() {
            *h = Some(hook);
        }
    }

    /// Opens (or creates) the database file and loads the task history.
    pub async fn open(
        db_path: &Path,
        clock: Arc<dyn Clock>,
        results: Option<ResultStore>,
    ) -> Result<Arc<Self>, AgentError> {
        if let Some(parent) = db_path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let options = SqliteConnectOptions::new()
            .filename(db_path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(Duration::from_secs(5));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await?;
        Self::with_pool(pool, clock, results).await
    }

    /// Uses a pool the app already has (the shared `wyckoff.db`). Every task still
    /// marked running is taken as interrupted: for a process that is the only user of the
    /// database (tests); the app and the CLI use [`Self::with_owner`].
    pub async fn with_pool(
        pool: SqlitePool,
        clock: Arc<dyn Clock>,
        results: Option<ResultStore>,
    ) -> Result<Arc<Self>, AgentError> {
        Self::open_pool(pool, clock, results, None).await
    }

    /// [`Self::with_pool`] for a process sharing the database: its tasks carry `owner`,
    /// and only running tasks whose owner is gone are marked interrupted.
    pub async fn with_owner(
        pool: SqlitePool,
        clock: Arc<dyn Clock>,
        results: Option<ResultStore>,
        owner: TaskOwner,
    ) -> Result<Arc<Self>, AgentError> {
        Self::open_pool(pool, clock, results, Some(owner)).await
    }

    async fn open_pool(
        pool: SqlitePool,
        clock: Arc<dyn Clock>,
        results: Option<ResultStore>,
        owner: Option<TaskOwner>,
    ) -> Result<Arc<Self>, AgentError> {
        // Other crates keep their own migrations in the same database.
        let mut migrator = sqlx::migrate!("./migrations");
        migrator.set_ignore_missing(true);
        migrator.run(&pool).await?;

        let now = clock.now().to_rfc3339();
        // A queued task of a dead process is as lost as a running one: its arguments
        // lived only in that process.
        let running: Vec<(String, Option<String>)> = sqlx::query_as(
            "SELECT task_id, owner FROM agent_background_task WHERE status IN ('running', 'queued')",
        )
        .fetch_all(&pool)
        .await?;
        for (task_id, task_owner) in running {
            let orphaned = match (&owner, task_owner.as_deref()) {
                (Some(me), Some(o)) => !(me.is_alive)(o),
                _ => true,
            };
            if orphaned {
                sqlx::query(
                    "UPDATE agent_background_task SET status = 'failed', error = ?, finished_at = ?, notified = 0 WHERE task_id = ? AND status IN ('running', 'queued')",
                )
                .bind(INTERRUPTED)
                .bind(&now)
                .bind(&task_id)
                .execute(&pool)
                .await?;
            }
        }

        let rows = sqlx::query(
            "SELECT task_id, session_id, tool_name, display_name, status, progress_json, started_at, finished_at, summary, error, notified FROM agent_background_task ORDER BY started_at, rowid",
        )
        .fetch_all(&pool)
        .await?;

        let (events, _) = broadcast::channel(256);
        let manager = Arc::new(BackgroundTaskManager {
            pool,
            owner: owner.map(|o| o.id),
            state: Mutex::new(State::default()),
            events,
            clock,
            results,
            shutdown: CancellationToken::new(),
            tracker: TaskTracker::new(),
            on_finish: Mutex::new(None),
            slots: Arc::new(tokio::sync::Semaphore::new(MAX_RUNNING_TASKS)),
        });
        let mut state = State::default();
        for row in rows {
            let task = row_to_task(&row)?;
            let notified: i64 = row.try_get("notified")?;
            if notified == 0
                && let Some(session) = task.session_id.clone()
                && let Some(notice) = pending_notice(&task)
            {
                state.pending.entry(session).or_default().push(notice);
            }
            state.tasks.push(task);
        }
        if let Ok(mut s) = manager.state.lock() {
            *s = state;
        }
        Ok(manager)
    }

    /// Every change of every task (submitted, progress, finished).
    pub fn subscribe(&self) -> broadcast::Receiver<TaskInfo> {
        self.events.subscribe()
    }

    pub fn list(&self) -> Vec<TaskInfo> {
        self.state
            .lock()
            .map(|s| s.tasks.clone())
            .unwrap_or_default()
    }

    pub fn list_for_session(&self, session_id: &str) -> Vec<TaskInfo> {
        self.list()
            .into_iter()
            .filter(|t| t.session_id.as_deref() == Some(session_id))
            .collect()
    }

    /// The task as listed (its result body left out: see [`Self::result`]).
    pub fn get(&self, task_id: &str) -> Option<TaskInfo> {
        self.state
            .lock()
            .ok()
            .and_then(|s| s.tasks.iter().find(|t| t.task_id == task_id).cloned())
    }

    /// A finished task's whole result, read from the database when asked (the list in
    /// memory never holds result bodies). `None` while running, and for a task that
    /// ended without a result (cancelled, failed before producing one) or is unknown.
    pub async fn result(&self, task_id: &str) -> Result<Option<Value>, AgentError> {
        let stored: Option<Option<String>> =
            sqlx::query_scalar("SELECT result_json FROM agent_background_task WHERE task_id = ?")
                .bind(task_id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(stored.flatten().and_then(|r| serde_json::from_str(&r).ok()))
    }

    /// Tasks not finished yet: running, and queued for a slot.
    pub fn active(&self) -> Vec<TaskInfo> {
        self.list()
            .into_iter()
            .filter(|t| !t.status.is_finished())
            .collect()
    }

    /// Tasks running now (at most [`MAX_RUNNING_TASKS`]); queued ones are left out.
    pub fn running(&self) -> Vec<TaskInfo> {
        self.list()
            .into_iter()
            .filter(|t| t.status == TaskStatus::Running)
            .collect()
    }

    pub fn has_notifications(&self, session_id: &str) -> bool {
        self.state
            .lock()
            .map(|s| s.pending.get(session_id).is_some_and(|v| !v.is_empty()))
            .unwrap_or(false)
    }

    /// Takes the session's queued completion notifications (as system-notification
    /// user messages) and marks them delivered.
    pub async fn take_notifications(&self, session_id: &str) -> Vec<Message> {
        self.take_pending(session_id)
            .await
            .into_iter()
            .map(|p| p.message)
            .collect()
    }

    /// Like `take_notifications`, with each message's notice.
    pub async fn take_pending(&self, session_id: &str) -> Vec<PendingNotice> {
        let taken = self
            .state
            .lock()
            .ok()
            .and_then(|mut s| s.pending.remove(session_id))
            .unwrap_or_default();
        for pending in &taken {
            let task_id = pending.notice.task_id.as_str();
            if let Err(e) =
                sqlx::query("UPDATE agent_background_task SET notified = 1 WHERE task_id = ?")
                    .bind(task_id)
                    .execute(&self.pool)
                    .await
            {
                tracing::warn!(task_id, "could not mark notification delivered: {e}");
            }
        }
        taken
    }

    /// Waits until the task has finished or `timeout` passes; returns its final state,
    /// with its result body read back (the caller waited for exactly that).
    pub async fn wait_for(&self, task_id: &str, timeout: Duration) -> Option<TaskInfo> {
        let mut task = self.wait_until_finished(task_id, timeout).await?;
        if task.status.is_finished() {
            match self.result(task_id).await {
                Ok(result) => task.result = result,
                Err(e) => tracing::warn!(task_id, "cannot read the task's result: {e}"),
            }
        }
        Some(task)
    }

    async fn wait_until_finished(&self, task_id: &str, timeout: Duration) -> Option<TaskInfo> {
        let mut rx = self.subscribe();
        let wait = async {
            loop {
                match self.get(task_id) {
                    Some(t) if t.status.is_finished() => return Some(t),
                    None => return None,
                    _ => {}
                }
                match rx.recv().await {
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return self.get(task_id),
                }
            }
        };
        tokio::time::timeout(timeout, wait).await.ok().flatten()
    }

    /// Cancels running tasks and waits for them to record their end.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        self.tracker.close();
        self.tracker.wait().await;
    }

    /// Starts a background run of `tool`. Only the registry calls this, after the
    /// approval gate, so nothing can start a tool in the background unapproved.
    pub(crate) async fn submit(
        self: &Arc<Self>,
        tool: Arc<dyn Tool>,
        args: Value,
        session_id: &str,
    ) -> Result<TaskInfo, AgentError> {
        self.submit_as(tool, args, Some(session_id)).await
    }

    /// Starts a task the user asked for directly (the app's own buttons, no model): the
    /// click is the approval. The arguments are checked against the tool's schema first;
    /// the task belongs to no conversation, so its completion is shown in the task panel
    /// and notified, but never delivered into a chat.
    pub async fn start_for_user(
        self: &Arc<Self>,
        tool: Arc<dyn Tool>,
        args: Value,
    ) -> Result<TaskInfo, AgentError> {
        let args = crate::validation::validate_args(&tool.schema().parameters, &args)
            .map_err(|e| AgentError::Invalid(format!("{}: {e}", tool.spec().name)))?;
        self.submit_as(tool, args, None).await
    }

    async fn submit_as(
        self: &Arc<Self>,
        tool: Arc<dyn Tool>,
        args: Value,
        session_id: Option<&str>,
    ) -> Result<TaskInfo, AgentError> {
        let spec = tool.spec().clone();
        let short: String = uuid::Uuid::new_v4()
            .simple()
            .to_string()
            .chars()
            .take(12)
            .collect();
        let task_id = format!("bg_{short}_{}", spec.name);
        // Taken here, not in the task, so the order of submission is the order of slots;
        // without one the task is queued until a running one ends.
        let slots = self.slots.clone();
        let slot = slots.clone().try_acquire_owned().ok();
        let status = if slot.is_some() {
            TaskStatus::Running
        } else {
            TaskStatus::Queued
        };
        let task = TaskInfo {
            task_id: task_id.clone(),
            tool_name: spec.name.clone(),
            display_name: spec.display_name.clone(),
            status,
            progress: TaskProgress {
                stage: "已提交".into(),
                ..TaskProgress::default()
            },
            started_at: self.clock.now().to_rfc3339(),
            finished_at: None,
            session_id: session_id.map(str::to_owned),
            result_summary: None,
            result: None,
            error: None,
        };
        sqlx::query(
            "INSERT INTO agent_background_task (task_id, session_id, tool_name, display_name, status, progress_json, started_at, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&task.task_id)
        .bind(session_id)
        .bind(&task.tool_name)
        .bind(&task.display_name)
        .bind(status_str(status))
        .bind(serde_json::to_string(&task.progress)?)
        .bind(&task.started_at)
        .bind(&self.owner)
        .execute(&self.pool)
        .await?;
        if let Ok(mut s) = self.state.lock() {
            s.tasks.push(task.clone());
        }
        let _ = self.events.send(task.clone());

        let progress = {
            // Weak: a tool still reporting must not keep a closed manager alive.
            let manager = Arc::downgrade(self);
            let task_id = task_id.clone();
            ProgressHandle::new(move |p| {
                if let Some(m) = manager.upgrade() {
                    m.set_progress(&task_id, p);
                }
            })
        };
        let cancel = self.shutdown.child_token();
        if let Ok(mut s) = self.state.lock() {
            s.cancels.insert(task_id.clone(), cancel.clone());
        }
        let ctx = ToolContext {
            session_id: session_id.unwrap_or_default().to_owned(),
            call_id: task_id.clone(),
            cancel,
            background: Some(self.clone()),
            progress,
        };
        let manager = self.clone();
        let span = tracing::info_span!("background_task", task_id = %task_id, tool = %spec.name);
        let submitted = task_id.clone();
        self.tracker.spawn(
            async move {
                let cancel = ctx.cancel.clone();
                // Waiting for a slot can be cancelled like the work itself.
                let slot = match slot {
                    Some(p) => Some(p),
                    None => {
                        let permit = tokio::select! {
                            permit = slots.acquire_owned() => permit.ok(),
                            _ = cancel.cancelled() => None,
                        };
                        if permit.is_some() {
                            manager.mark_running(&task_id).await;
                        }
                        permit
                    }
                };
                let outcome = match slot {
                    None => Err(ToolError::Cancelled),
                    Some(_) => tokio::select! {
                        r = tool.call(args, ctx) => r,
                        _ = cancel.cancelled() => Err(ToolError::Cancelled),
                    },
                };
                // The slot is held until the end is recorded, so a queued task never
                // shows running beside three that have not yet shown finished.
                manager.finish(&task_id, outcome).await;
                drop(slot);
            }
            .instrument(span),
        );
        Ok(self.get(&submitted).unwrap_or(task))
    }

    /// Asks a running task to stop: its tool sees the cancellation and the task ends as
    /// `cancelled` (its future is dropped, so what it holds is freed). False when no such
    /// task is running.
    pub fn cancel(&self, task_id: &str) -> bool {
        let token = self
            .state
            .lock()
            .ok()
            .and_then(|s| s.cancels.get(task_id).cloned());
        match token {
            Some(t) => {
                tracing::info!(task_id, "background task cancel requested");
                t.cancel();
                true
            }
            None => false,
        }
    }

    /// Cancels every running task a session started (e.g. Ctrl-C of a headless run).
    pub fn cancel_session(&self, session_id: &str) -> usize {
        let ids: Vec<String> = self
            .list_for_session(session_id)
            .into_iter()
            .filter(|t| !t.status.is_finished())
            .map(|t| t.task_id)
            .collect();
        ids.iter().filter(|id| self.cancel(id)).count()
    }

    /// A queued task got its slot: it is running from now on.
    async fn mark_running(&self, task_id: &str) {
        if let Err(e) = sqlx::query(
            "UPDATE agent_background_task SET status = 'running' WHERE task_id = ? AND status = 'queued'",
        )
        .bind(task_id)
        .execute(&self.pool)
        .await
        {
            tracing::warn!(task_id, "could not record the task running: {e}");
        }
        let updated = self.state.lock().ok().and_then(|mut s| {
            s.tasks
                .iter_mut()
                .find(|t| t.task_id == task_id && t.status == TaskStatus::Queued)
                .map(|t| {
                    t.status = TaskStatus::Running;
                    t.clone()
                })
        });
        if let Some(t) = updated {
            tracing::info!(task_id, "queued background task started");
            let _ = self.events.send(t);
        }
    }

    fn set_progress(&self, task_id: &str, progress: TaskProgress) {
        let updated = self.state.lock().ok().and_then(|mut s| {
            s.tasks
                .iter_mut()
                .find(|t| t.task_id == task_id && !t.status.is_finished())
                .map(|t| {
                    t.progress = progress;
                    t.clone()
                })
        });
        if let Some(t) = updated {
            let _ = self.events.send(t);
        }
    }

    async fn finish(&self, task_id: &str, outcome: Result<Value, ToolError>) {
        let now = self.clock.now().to_rfc3339();
        let (status, result, error) = match outcome {
            Ok(v) => match v.get("error") {
                // Tools report failure either way; a result carrying "error" failed too.
                Some(e) => (
                    TaskStatus::Failed,
                    Some(v.clone()),
                    Some(
                        e.as_str()
                            .map(str::to_owned)
                            .unwrap_or_else(|| e.to_string()),
                    ),
                ),
                None => (TaskStatus::Completed, Some(v), None),
            },
            Err(ToolError::Cancelled) => {
                (TaskStatus::Cancelled, None, Some("cancelled".to_owned()))
            }
            Err(e) => (TaskStatus::Failed, None, Some(e.to_string())),
        };
        let summary = result.as_ref().map(|r| self.summarize(task_id, r));
        let Some(mut progress) = self.get(task_id).map(|t| t.progress) else {
            return;
        };
        if status == TaskStatus::Completed {
            progress.fraction = Some(1.0);
            progress.stage = "完成".into();
            // Done is no step of the work (a failed or cancelled task keeps where it stopped).
            progress.step = None;
        }
        // The body goes to the database before anyone can see the task finished, so
        // whoever sees it finished can read its result.
        let status_text = status_str(status);
        let stored = sqlx::query(
            "UPDATE agent_background_task SET status = ?, finished_at = ?, result_json = ?, summary = ?, error = ?, progress_json = ? WHERE task_id = ?",
        )
        .bind(status_text)
        .bind(&now)
        .bind(result.as_ref().map(|r| r.to_string()))
        .bind(&summary)
        .bind(&error)
        .bind(serde_json::to_string(&progress).unwrap_or_default())
        .bind(task_id)
        .execute(&self.pool)
        .await;
        if let Err(e) = stored {
            tracing::error!(task_id, "could not persist background task result: {e}");
        }
        let hook = self.on_finish.lock().ok().and_then(|h| h.clone());
        if let Some(hook) = hook
            && let Some(mut task) = self.get(task_id)
        {
            task.status = status;
            task.finished_at = Some(now.clone());
            task.result_summary = summary.clone();
            task.error = error.clone();
            task.progress = progress.clone();
            hook(task).await;
        }
        // Status and notification change under one lock, so whoever sees the task
        // finished also finds its notification.
        let updated = self.state.lock().ok().and_then(|mut s| {
            s.cancels.remove(task_id);
            let task = s.tasks.iter_mut().find(|t| t.task_id == task_id).map(|t| {
                t.status = status;
                t.finished_at = Some(now.clone());
                t.result_summary = summary.clone();
                t.error = error.clone();
                t.progress = progress.clone();
                t.clone()
            })?;
            if let Some(session) = task.session_id.clone()
                && let Some(notice) = pending_notice(&task)
            {
                s.pending.entry(session).or_default().push(notice);
            }
            Some(task)
        });
        let Some(task) = updated else { return };
        tracing::info!(task_id, status = status_text, "background task finished");
        let _ = self.events.send(task);
    }

    /// The result as the model sees it in the notification: serialized, and offloaded
    /// with a preview when long.
    fn summarize(&self, task_id: &str, result: &Value) -> String {
        let content = serialize_result(result);
        if content.chars().count() <= SUMMARY_MAX_CHARS {
            return content;
        }
        if let Some(store) = &self.results {
            let store = store.clone().with_inline_max(SUMMARY_MAX_CHARS);
            match store.offload_if_large("background", task_id, content.clone(), self.clock.now()) {
                Ok(s) => return s,
                Err(e) => tracing::warn!(task_id, "could not offload task result: {e}"),
            }
        }
        let head: String = content.chars().take(SUMMARY_MAX_CHARS).collect();
        format!(
            "{head}\n...(结果已截断，共 {} 字符)",
            content.chars().count()
        )
    }
}

/// The notice a finished task leaves for its conversation (`None` while it runs).
fn pending_notice(task: &TaskInfo) -> Option<PendingNotice> {
    Some(PendingNotice {
        notice: TaskNotice::of(task)?,
        message: Message::user_with_origin(notification_text(task), UserOrigin::SystemNotification),
    })
}

fn status_str(s: TaskStatus) -> &'static str {
    match s {
        TaskStatus::Queued => "queued",
        TaskStatus::Running => "running",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
    }
}

fn parse_status(s: &str) -> TaskStatus {
    match s {
        "queued" => TaskStatus::Queued,
        "running" => TaskStatus::Running,
        "completed" => TaskStatus::Completed,
        "cancelled" => TaskStatus::Cancelled,
        _ => TaskStatus::Failed,
    }
}

fn row_to_task(row: &sqlx::sqlite::SqliteRow) -> Result<TaskInfo, AgentError> {
    let progress: String = row.try_get("progress_json")?;
    let status: String = row.try_get("status")?;
    Ok(TaskInfo {
        task_id: row.try_get("task_id")?,
        tool_name: row.try_get("tool_name")?,
        display_name: row.try_get("display_name")?,
        status: parse_status(&status),
        progress: serde_json::from_str(&progress).unwrap_or_default(),
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
        session_id: row.try_get("session_id")?,
        result_summary: row.try_get("summary")?,
        // Bodies are read on demand (`result`).
        result: None,
        error: row.try_get("error")?,
    })
}

/// The synthetic message a finished task leaves for its session (REFERENCE §7.4).
pub fn notification_text(task: &TaskInfo) -> String {
    let status = match task.status {
        TaskStatus::Completed => "completed",
        _ => "failed",
    };
    let summary = match (&task.result_summary, &task.error) {
        (Some(s), None) => s.clone(),
        (Some(s), Some(e)) => format!("{e}\n{s}"),
        (None, Some(e)) => e.clone(),
        (None, None) => String::new(),
    };
    format!(
        "[SYSTEM NOTIFICATION - NOT USER INPUT]\nThis is an automated background-task event, NOT a message from the user.\nDo NOT interpret this as user acknowledgement, confirmation, or response to any pending question.\n\n<system-reminder>\n<task-notification>\n<task-id>{}</task-id>\n<tool-name>{}</tool-name>\n<status>{status}</status>\n<summary>{summary}</summary>\n</task-notification>\n</system-reminder>",
        task.task_id, task.tool_name
    )
}

/// What `check_background_tasks` returns.
pub fn tasks_report(tasks: &[TaskInfo], now: chrono::DateTime<chrono::Utc>) -> Value {
    if tasks.is_empty() {
        return json!({"tasks": [], "message": "无后台任务"});
    }
    let items: Vec<Value> = tasks
        .iter()
        .map(|t| {
            let started = chrono::DateTime::parse_from_rfc3339(&t.started_at).ok();
            let end = t
                .finished_at
                .as_deref()
                .and_then(|f| chrono::DateTime::parse_from_rfc3339(f).ok())
                .map(|d| d.with_timezone(&chrono::Utc))
                .unwrap_or(now);
            let elapsed =
                started.map(|s| (end - s.with_timezone(&chrono::Utc)).num_seconds().max(0));
            let mut item = json!({
                "task_id": t.task_id,
                "tool_name": t.tool_name,
                "display_name": t.display_name,
                "status": status_str(t.status),
                "stage": t.progress.stage,
                "detail": t.progress.detail,
                "progress": t.progress.fraction,
                "elapsed": elapsed.map(|e| format!("{e}s")),
            });
            if let Some(s) = &t.result_summary {
                item["result_summary"] = json!(s);
            }
            if let Some(e) = &t.error {
                item["error"] = json!(e);
            }
            if t.status == TaskStatus::Queued {
                item["queued"] = json!(format!(
                    "同时最多运行 {MAX_RUNNING_TASKS} 个后台任务，等待空位后自动开始"
                ));
            }
            item
        })
        .collect();
    json!({ "tasks": items })
}

/// The built-in `check_background_tasks` tool.
pub struct CheckBackgroundTasks {
    spec: crate::tool::ToolSpec,
    schema: wyckoff_protocol::ToolSchema,
}

pub const CHECK_BACKGROUND_TASKS: &str = "check_background_tasks";

impl Default for CheckBackgroundTasks {
    fn default() -> Self {
        CheckBackgroundTasks {
            spec: crate::tool::ToolSpec::new(CHECK_BACKGROUND_TASKS, "任务状态"),
            schema: wyckoff_protocol::ToolSchema {
                name: CHECK_BACKGROUND_TASKS.into(),
                description:
                    "查看本会话后台任务（全市场扫描、AI 研报、回测等）的状态、进度和结果摘要。"
                        .into(),
                parameters: json!({"type": "object", "properties": {}}),
            },
        }
    }
}

#[async_trait::async_trait]
impl Tool for CheckBackgroundTasks {
    fn spec(&self) -> &crate::tool::ToolSpec {
        &self.spec
    }

    fn schema(&self) -> &wyckoff_protocol::ToolSchema {
        &self.schema
    }

    async fn call(&self, _args: Value, ctx: ToolContext) -> Result<Value, ToolError> {
        match &ctx.background {
            None => Ok(json!({"tasks": [], "message": "无后台任务"})),
            Some(m) => Ok(tasks_report(
                &m.list_for_session(&ctx.session_id),
                m.clock.now(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::SystemClock;
    use crate::tool::{FnTool, ToolSpec};

    fn slow_tool(gate: Arc<tokio::sync::Notify>) -> Arc<dyn Tool> {
        Arc::new(FnTool::new(
            ToolSpec::new("screen_stocks", "全市场扫描").background(),
            "scan",
            json!({"type": "object", "properties": {}}),
            move |_args, ctx: ToolContext| {
                let gate = gate.clone();
                async move {
                    ctx.progress.report("日线拉取", "2/3", Some(0.5));
                    gate.notified().await;
                    Ok(json!({"candidates": ["600519"]}))
                }
            },
        ))
    }

    #[tokio::test]
    async fn progress_completion_persistence_and_notification() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("wyckoff.db");
        let m = BackgroundTaskManager::open(&db, Arc::new(SystemClock), None)
            .await
            .unwrap();
        let mut rx = m.subscribe();
        let gate = Arc::new(tokio::sync::Notify::new());
        let task = m
            .submit(slow_tool(gate.clone()), json!({}), "s1")
            .await
            .unwrap();
        assert_eq!(task.status, TaskStatus::Running);
        // submitted, then progress from inside the task
        let first = rx.recv().await.unwrap();
        assert_eq!(first.status, TaskStatus::Running);
        let progress = rx.recv().await.unwrap();
        assert_eq!(progress.progress.stage, "日线拉取");
        assert_eq!(progress.progress.fraction, Some(0.5));
        assert!(!m.has_notifications("s1"));
        gate.notify_one();
        let done = m
            .wait_for(&task.task_id, Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(done.status, TaskStatus::Completed);
        assert!(done.result_summary.as_deref().unwrap().contains("600519"));
        assert!(!m.has_notifications("other"));
        let notes = m.take_notifications("s1").await;
        assert_eq!(notes.len(), 1);
        match &notes[0] {
            Message::User { content, origin } => {
                assert_eq!(*origin, UserOrigin::SystemNotification);
                assert!(content.starts_with("[SYSTEM NOTIFICATION - NOT USER INPUT]"));
                assert!(content.contains(&format!("<task-id>{}</task-id>", task.task_id)));
                assert!(content.contains("<status>completed</status>"));
            }
            other => panic!("{other:?}"),
        }
        assert!(m.take_notifications("s1").await.is_empty());
        drop(m);

        // Reopen: the result is still there (read when asked, never loaded with the
        // list); the notification was delivered already.
        let m2 = BackgroundTaskManager::open(&db, Arc::new(SystemClock), None)
            .await
            .unwrap();
        let t = m2.get(&task.task_id).unwrap();
        assert_eq!(t.status, TaskStatus::Completed);
        assert!(t.result_summary.as_deref().unwrap().contains("600519"));
        assert_eq!(t.result, None);
        assert!(m2.list().iter().all(|t| t.result.is_none()));
        assert_eq!(
            m2.result(&task.task_id).await.unwrap(),
            Some(json!({"candidates": ["600519"]}))
        );
        assert!(!m2.has_notifications("s1"));
    }

    #[tokio::test]
    async fn cancel_reaches_the_task_which_ends_cancelled_and_persisted() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("wyckoff.db");
        let m = BackgroundTaskManager::open(&db, Arc::new(SystemClock), None)
            .await
            .unwrap();
        // The tool holds this Arc while it runs; dropping its future must release it.
        let held = Arc::new(tokio::sync::Notify::new());
        let task = m
            .submit(slow_tool(held.clone()), json!({}), "s1")
            .await
            .unwrap();
        assert!(Arc::strong_count(&held) > 1);
        assert!(!m.cancel("bg_unknown"));
        assert!(m.cancel(&task.task_id));
        let done = m
            .wait_for(&task.task_id, Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(done.status, TaskStatus::Cancelled);
        // finished tasks cannot be cancelled again
        assert!(!m.cancel(&task.task_id));
        assert_eq!(m.cancel_session("s1"), 0);
        // resources of the task are freed
        tokio::time::timeout(Duration::from_secs(5), async {
            while Arc::strong_count(&held) > 1 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .unwrap();
        let notes = m.take_notifications("s1").await;
        assert_eq!(notes.len(), 1);
        // §7.4 knows completed|failed only; the summary says it was cancelled.
        assert!(notes[0].text().contains("<status>failed</status>"));
        assert!(notes[0].text().contains("<summary>cancelled</summary>"));
        drop(m);
        let m2 = BackgroundTaskManager::open(&db, Arc::new(SystemClock), None)
            .await
            .unwrap();
        assert_eq!(m2.get(&task.task_id).unwrap().status, TaskStatus::Cancelled);
    }

    #[tokio::test]
    async fn cancel_session_stops_only_that_sessions_running_tasks() {
        let dir = tempfile::tempdir().unwrap();
        let m = BackgroundTaskManager::open(&dir.path().join("db"), Arc::new(SystemClock), None)
            .await
            .unwrap();
        let never = Arc::new(tokio::sync::Notify::new());
        let a = m
            .submit(slow_tool(never.clone()), json!({}), "s1")
            .await
            .unwrap();
        let b = m
            .submit(slow_tool(never.clone()), json!({}), "s2")
            .await
            .unwrap();
        assert_eq!(m.cancel_session("s1"), 1);
        let a = m
            .wait_for(&a.task_id, Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(a.status, TaskStatus::Cancelled);
        assert_eq!(m.get(&b.task_id).unwrap().status, TaskStatus::Running);
        m.shutdown().await;
    }

    #[tokio::test]
    async fn restart_marks_running_tasks_interrupted_and_requeues_notice() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("wyckoff.db");
        let m = BackgroundTaskManager::open(&db, Arc::new(SystemClock), None)
            .await
            .unwrap();
        let never = Arc::new(tokio::sync::Notify::new());
        let task = m.submit(slow_tool(never), json!({}), "s1").await.unwrap();
        // Simulate the process dying: the task never records an end.
        std::mem::forget(m);

        let m2 = BackgroundTaskManager::open(&db, Arc::new(SystemClock), None)
            .await
            .unwrap();
        let t = m2.get(&task.task_id).unwrap();
        assert_eq!(t.status, TaskStatus::Failed);
        assert_eq!(t.error.as_deref(), Some(INTERRUPTED));
        let notes = m2.take_notifications("s1").await;
        assert_eq!(notes.len(), 1);
        assert!(notes[0].text().contains(INTERRUPTED));
    }

    #[tokio::test]
    async fn a_second_process_leaves_a_live_owners_running_task_alone() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("wyckoff.db");
        let alive: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
        let owner = |id: &str| {
            let alive = alive.clone();
            TaskOwner {
                id: id.to_owned(),
                is_alive: Arc::new(move |o: &str| alive.lock().unwrap().iter().any(|a| a == o)),
            }
        };
        let pool = |db: &std::path::Path| {
            let db = db.to_path_buf();
            async move {
                SqlitePoolOptions::new()
                    .connect_with(
                        SqliteConnectOptions::new()
                            .filename(db)
                            .create_if_missing(true),
                    )
                    .await
                    .unwrap()
            }
        };
        alive.lock().unwrap().push("app".into());
        let app = BackgroundTaskManager::with_owner(
            pool(&db).await,
            Arc::new(SystemClock),
            None,
            owner("app"),
        )
        .await
        .unwrap();
        let never = Arc::new(tokio::sync::Notify::new());
        let task = app.submit(slow_tool(never), json!({}), "s1").await.unwrap();

        // The CLI starts while the app still runs the task: it stays running.
        let cli = BackgroundTaskManager::with_owner(
            pool(&db).await,
            Arc::new(SystemClock),
            None,
            owner("cli"),
        )
        .await
        .unwrap();
        assert_eq!(cli.get(&task.task_id).unwrap().status, TaskStatus::Running);

        // The app dies; the next start marks its task interrupted.
        std::mem::forget(app);
        alive.lock().unwrap().clear();
        let next = BackgroundTaskManager::with_owner(
            pool(&db).await,
            Arc::new(SystemClock),
            None,
            owner("next"),
        )
        .await
        .unwrap();
        let t = next.get(&task.task_id).unwrap();
        assert_eq!(t.status, TaskStatus::Failed);
        assert_eq!(t.error.as_deref(), Some(INTERRUPTED));
    }

    async fn stored_status(m: &BackgroundTaskManager, task_id: &str) -> String {
        sqlx::query_scalar("SELECT status FROM agent_background_task WHERE task_id = ?")
            .bind(task_id)
            .fetch_one(&m.pool)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_task_beyond_the_cap_is_queued_and_runs_when_a_slot_frees() {
        let dir = tempfile::tempdir().unwrap();
        let m = BackgroundTaskManager::open(&dir.path().join("db"), Arc::new(SystemClock), None)
            .await
            .unwrap();
        let mut events = m.subscribe();
        let gates: Vec<_> = (0..=MAX_RUNNING_TASKS)
            .map(|_| Arc::new(tokio::sync::Notify::new()))
            .collect();
        let mut tasks = Vec::new();
        for g in &gates {
            tasks.push(
                m.submit(slow_tool(g.clone()), json!({}), "s1")
                    .await
                    .unwrap(),
            );
        }
        let fourth = tasks.last().unwrap().task_id.clone();
        for t in &tasks[..MAX_RUNNING_TASKS] {
            assert_eq!(t.status, TaskStatus::Running);
        }
        assert_eq!(tasks[MAX_RUNNING_TASKS].status, TaskStatus::Queued);
        assert_eq!(stored_status(&m, &fourth).await, "queued");
        assert_eq!(m.running().len(), MAX_RUNNING_TASKS);
        assert_eq!(m.active().len(), MAX_RUNNING_TASKS + 1);
        // The model sees it queued, and why.
        let report = tasks_report(&m.list_for_session("s1"), chrono::Utc::now());
        assert_eq!(report["tasks"][MAX_RUNNING_TASKS]["status"], "queued");
        assert!(
            report["tasks"][MAX_RUNNING_TASKS]["queued"]
                .as_str()
                .unwrap()
                .contains(&MAX_RUNNING_TASKS.to_string())
        );

        // One ends: the fourth turns running, then its tool reports its first stage.
        gates[0].notify_one();
        let mut seen = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                let t = events.recv().await.unwrap();
                if t.task_id == fourth {
                    seen.push((t.status, t.progress.stage.clone()));
                    if t.progress.stage == "日线拉取" {
                        break;
                    }
                }
            }
        })
        .await
        .unwrap();
        assert_eq!(
            seen,
            [
                (TaskStatus::Queued, "已提交".to_owned()),
                (TaskStatus::Running, "已提交".to_owned()),
                (TaskStatus::Running, "日线拉取".to_owned()),
            ]
        );
        assert_eq!(
            m.get(&tasks[0].task_id).unwrap().status,
            TaskStatus::Completed
        );
        assert_eq!(stored_status(&m, &fourth).await, "running");
        assert_eq!(m.running().len(), MAX_RUNNING_TASKS);
        m.shutdown().await;
    }

    #[tokio::test]
    async fn restart_marks_a_queued_task_interrupted() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("wyckoff.db");
        let m = BackgroundTaskManager::open(&db, Arc::new(SystemClock), None)
            .await
            .unwrap();
        let never = Arc::new(tokio::sync::Notify::new());
        for _ in 0..MAX_RUNNING_TASKS {
            m.submit(slow_tool(never.clone()), json!({}), "s1")
                .await
                .unwrap();
        }
        let queued = m.submit(slow_tool(never), json!({}), "s1").await.unwrap();
        assert_eq!(queued.status, TaskStatus::Queued);
        std::mem::forget(m);

        let m2 = BackgroundTaskManager::open(&db, Arc::new(SystemClock), None)
            .await
            .unwrap();
        let t = m2.get(&queued.task_id).unwrap();
        assert_eq!(t.status, TaskStatus::Failed);
        assert_eq!(t.error.as_deref(), Some(INTERRUPTED));
        assert!(m2.active().is_empty());
    }

    #[tokio::test]
    async fn a_queued_task_can_be_cancelled_before_it_starts() {
        let dir = tempfile::tempdir().unwrap();
        let m = BackgroundTaskManager::open(&dir.path().join("db"), Arc::new(SystemClock), None)
            .await
            .unwrap();
        let never = Arc::new(tokio::sync::Notify::new());
        for _ in 0..MAX_RUNNING_TASKS {
            m.submit(slow_tool(never.clone()), json!({}), "s1")
                .await
                .unwrap();
        }
        let queued = m
            .submit(slow_tool(never.clone()), json!({}), "s1")
            .await
            .unwrap();
        assert!(m.cancel(&queued.task_id));
        let done = m
            .wait_for(&queued.task_id, Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(done.status, TaskStatus::Cancelled);
        m.shutdown().await;
    }

    #[tokio::test]
    async fn check_tool_lists_session_tasks() {
        let dir = tempfile::tempdir().unwrap();
        let m = BackgroundTaskManager::open(&dir.path().join("db"), Arc::new(SystemClock), None)
            .await
            .unwrap();
        let gate = Arc::new(tokio::sync::Notify::new());
        let task = m.submit(slow_tool(gate), json!({}), "s1").await.unwrap();
        let tool = CheckBackgroundTasks::default();
        let ctx = |s: &str| ToolContext {
            session_id: s.into(),
            call_id: "c".into(),
            cancel: CancellationToken::new(),
            background: Some(m.clone()),
            progress: ProgressHandle::silent(),
        };
        let out = tool.call(json!({}), ctx("s1")).await.unwrap();
        assert_eq!(out["tasks"][0]["task_id"], task.task_id);
        assert_eq!(out["tasks"][0]["status"], "running");
        let other = tool.call(json!({}), ctx("s2")).await.unwrap();
        assert_eq!(other["message"], "无后台任务");
        m.shutdown().await;
        assert_eq!(m.get(&task.task_id).unwrap().status, TaskStatus::Cancelled);
    }

    /// A task the user starts from a button belongs to no conversation: it runs, is
    /// stored and listed, but leaves no notification for any chat; arguments that do not
    /// fit the tool's schema start nothing.
    #[tokio::test]
    async fn user_started_task_has_no_conversation() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("wyckoff.db");
        let m = BackgroundTaskManager::open(&db, Arc::new(SystemClock), None)
            .await
            .unwrap();
        let typed: Arc<dyn Tool> = Arc::new(FnTool::new(
            ToolSpec::new("run_backtest", "策略回测").background(),
            "bt",
            json!({"type": "object", "properties": {"hold_days": {"type": "integer"}},
                "additionalProperties": false}),
            |args, _ctx| async move { Ok(json!({"hold_days": args["hold_days"]})) },
        ));
        let refused = m
            .start_for_user(typed.clone(), json!({"hold_days": "ten"}))
            .await;
        assert!(refused.is_err(), "{refused:?}");
        assert!(m.list().is_empty(), "nothing started");

        let task = m
            .start_for_user(typed, json!({"hold_days": 5}))
            .await
            .unwrap();
        assert_eq!(task.session_id, None);
        let done = m
            .wait_for(&task.task_id, Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(done.status, TaskStatus::Completed);
        assert_eq!(done.result, Some(json!({"hold_days": 5})));
        m.shutdown().await;

        let reopened = BackgroundTaskManager::open(&db, Arc::new(SystemClock), None)
            .await
            .unwrap();
        let stored = reopened.get(&task.task_id).unwrap();
        assert_eq!(stored.session_id, None);
        assert_eq!(stored.status, TaskStatus::Completed);
        assert!(reopened.state.lock().unwrap().pending.is_empty());
    }
}
