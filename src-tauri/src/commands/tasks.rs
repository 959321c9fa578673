//! The background-task panel's commands: list, cancel, fetch a finished task's result.

use serde_json::Value;
use tauri::State;
use wyckoff_protocol::TaskInfo;

use crate::chat::ChatState;
use crate::commands::chat::services;
use crate::commands::error::CommandError;
use crate::state::AppState;

/// Every task the data home knows, newest first (results left out; see `task_result`).
#[tauri::command]
#[specta::specta]
pub async fn list_tasks(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Vec<TaskInfo>, CommandError> {
    let services = services(&state, &chat).await?;
    // The manager's list carries no result bodies (`task_result` reads one).
    let mut tasks: Vec<TaskInfo> = services.background().list();
    tasks.reverse();
    Ok(tasks)
}

/// Cancels a running task; false when it is not running.
#[tauri::command]
#[specta::specta]
pub async fn cancel_task(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    task_id: String,
) -> Result<bool, CommandError> {
    let services = services(&state, &chat).await?;
    Ok(services.background().cancel(&task_id))
}

/// A finished task's whole result (what the panel's result view shows).
#[tauri::command]
#[specta::specta]
pub async fn task_result(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    task_id: String,
) -> Result<Option<Value>, CommandError> {
    let services = services(&state, &chat).await?;
    let tasks = services.background();
    if tasks.get(&task_id).is_none() {
        return Err(CommandError::not_found(format!(
            "no background task {task_id}"
        )));
    }
    // The body is read from the task store now: the list never carries it.
    tasks
        .result(&task_id)
        .await
        .map_err(|e| CommandError::internal(format!("cannot read the result of {task_id}: {e}")))
}
