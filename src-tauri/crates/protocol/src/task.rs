use serde::{Deserialize, Serialize};
use serde_json::Value;
use specta::Type;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Running,
    Completed,
    Failed,
    Cancelled,
}

impl TaskStatus {
    pub fn is_finished(self) -> bool {
        !matches!(self, TaskStatus::Running)
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
