use serde::{Deserialize, Serialize};
use serde_json::Value;
use specta::Type;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Accepted, waiting for one of the running slots (at most three run at once).
    Queued,
    Running,
    Completed,
    Failed,
    Cancelled,
}

impl TaskStatus {
    /// Completed, failed or cancelled: nothing more will change.
    pub fn is_finished(self) -> bool {
        !matches!(self, TaskStatus::Queued | TaskStatus::Running)
    }
}

/// Progress reported by a running background task.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, Type)]
pub struct TaskProgress {
    pub stage: String,
    #[serde(default)]
    pub detail: String,
    /// 0.0..=1.0, or `None` when the task cannot tell.
    #[serde(default)]
    pub fraction: Option<f32>,
    /// The same step typed, for readers that word it themselves (the panel, in its
    /// language); `stage`/`detail` keep a Chinese wording for readers that do not.
    #[serde(default)]
    pub step: Option<TaskStep>,
}

/// A step of a task that readers can word themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TaskStep {
    /// `screen_stocks` finished funnel layer `layer` (1 = L1 … 5 = L5): `input` stocks
    /// went in, `passed` came out.
    ScreenLayer { layer: u8, input: u32, passed: u32 },
}

/// How a finished task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum TaskOutcome {
    Completed,
    Failed,
    Cancelled,
}

/// A finished background task's completion notice in the conversation that started it:
/// the model reads the notification text; readers (the chat, `wyckoff conversations
/// show`) word the notice themselves from these fields, in their language.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct TaskNotice {
    pub task_id: String,
    pub tool_name: String,
    pub display_name: String,
    pub outcome: TaskOutcome,
    /// The result as the model got it (a preview when long); none for a failure.
    #[serde(default)]
    pub summary: Option<String>,
    /// Why it failed or was cancelled.
    #[serde(default)]
    pub error: Option<String>,
}

impl TaskNotice {
    /// The notice of a finished task; `None` while it is queued or running.
    pub fn of(task: &TaskInfo) -> Option<TaskNotice> {
        let outcome = match task.status {
            TaskStatus::Queued | TaskStatus::Running => return None,
            TaskStatus::Completed => TaskOutcome::Completed,
            TaskStatus::Failed => TaskOutcome::Failed,
            TaskStatus::Cancelled => TaskOutcome::Cancelled,
        };
        Some(TaskNotice {
            task_id: task.task_id.clone(),
            tool_name: task.tool_name.clone(),
            display_name: task.display_name.clone(),
            outcome,
            summary: task.result_summary.clone(),
            error: task.error.clone(),
        })
    }
}

/// A background task as listeners (UI panel, `check_background_tasks`) see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct TaskInfo {
    pub task_id: String,
    pub tool_name: String,
    pub display_name: String,
    pub status: TaskStatus,
    pub progress: TaskProgress,
    /// RFC 3339.
    pub started_at: String,
    #[serde(default)]
    pub finished_at: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    /// Short text for the model and the panel; present once finished.
    #[serde(default)]
    pub result_summary: Option<String>,
    #[serde(default)]
    pub result: Option<Value>,
    #[serde(default)]
    pub error: Option<String>,
}

/// A background task started without any model: the overview's buttons, schedules.
#[derive(Debug, Clone, Serialize, Deserialize, Type, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TaskRequest {
    /// `screen_stocks` over the cache; `as_of` YYYY-MM-DD replays a past day; `board`
    /// (all|main|chinext|star|bse) and `limit` (the N most liquid, 0 = all) as
    /// `wyckoff screen` takes them (absent in schedules stored before they existed).
    Screen {
        as_of: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        board: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<i64>,
    },
    /// `run_backtest` from `start` to `end` (YYYY-MM-DD).
    Backtest {
        start: String,
        end: String,
        hold_days: i64,
        top_n: i64,
    },
    /// Every listed stock and the benchmark indices from the live sources.
    SyncAll,
    /// Daily bars from a CSV file or a folder of them (`wyckoff data import`'s format).
    Import { path: String },
    /// Every alert rule (and holding's stop-loss) checked as of the latest bars; what
    /// fires is recorded and pushed (`wyckoff alerts check`).
    Alerts,
}
