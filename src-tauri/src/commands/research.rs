//! The research page: sweeps and walk-forwards started without a model, as the
//! same `run_backtest` background task the agent starts, with the CLI's spec strings.

use serde::Serialize;
use specta::Type;
use tauri::State;
use wyckoff_protocol::TaskInfo;
use wyckoff_session::reports::{
    BACKTEST_TASK, BestOf, ResearchPlan, ResearchReport, ResearchRequest, sweep_best_of,
};

use crate::chat::ChatState;
use crate::commands::chat::{desk, services};
use crate::commands::error::CommandError;
use crate::state::AppState;

/// What `request` would run (combinations, each axis's values), or the CLI's error for it.
#[tauri::command]
#[specta::specta]
pub async fn research_plan(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    request: ResearchRequest,
) -> Result<ResearchPlan, CommandError> {
    desk(&state, &chat)
        .await?
        .research_plan(&request.to_args())
        .map_err(CommandError::invalid)
}

/// Starts `request` as a `run_backtest` background task of no conversation (progress,
/// cancel and the stored result are the task panel's). Checked first: a typo is said here
/// rather than becoming a failed task.
#[tauri::command]
#[specta::specta]
pub async fn start_research(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    request: ResearchRequest,
) -> Result<TaskInfo, CommandError> {
    let desk = desk(&state, &chat).await?;
    Ok(desk.start_research(request.to_args()).await?)
}

/// sweep or walk_forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ResearchKind {
    Sweep,
    WalkForward,
}

/// A stored sweep or walk-forward result, for the research page's list.
#[derive(Debug, Clone, Serialize, Type)]
pub struct ResearchRun {
    pub task: TaskInfo,
    pub kind: ResearchKind,
    /// `YYYY-MM-DD ~ YYYY-MM-DD`.
    pub period: String,
    pub combinations: u32,
    pub best_by: String,
}

impl ResearchRun {
    pub fn of(task: TaskInfo, report: &ResearchReport) -> Self {
        let (kind, period, combinations, best_by) = match report {
            ResearchReport::Sweep(s) => {
                (ResearchKind::Sweep, &s.period, s.combinations, &s.best_by)
            }
            ResearchReport::WalkForward(w) => (
                ResearchKind::WalkForward,
                &w.period,
                w.combinations,
                &w.best_by,
            ),
        };
        ResearchRun {
            task,
            kind,
            period: period.clone(),
            combinations,
            best_by: best_by.clone(),
        }
    }
}

/// Every finished `run_backtest` task whose stored result is a sweep or a walk-forward,
/// newest first.
#[tauri::command]
#[specta::specta]
pub async fn research_runs(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Vec<ResearchRun>, CommandError> {
    let services = services(&state, &chat).await?;
    let tasks = services.background();
    let mut runs = Vec::new();
    for task in tasks.list().into_iter().rev() {
        if task.tool_name != BACKTEST_TASK || !task.status.is_finished() {
            continue;
        }
        // A single backtest, or a result that cannot be read, is not listed.
        let Ok(Some(result)) = tasks.result(&task.task_id).await else {
            continue;
        };
        if let Ok(report) = serde_json::from_value::<ResearchReport>(result) {
            runs.push(ResearchRun::of(task, &report));
        }
    }
    Ok(runs)
}

/// A stored sweep or walk-forward, as the research page shows it.
#[tauri::command]
#[specta::specta]
pub async fn research_report(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    task_id: String,
) -> Result<ResearchReport, CommandError> {
    let services = services(&state, &chat).await?;
    let tasks = services.background();
    if tasks.get(&task_id).is_none() {
        return Err(CommandError::not_found(format!(
            "no background task {task_id}"
        )));
    }
    let result = tasks
        .result(&task_id)
        .await
        .map_err(|e| CommandError::internal(format!("cannot read the result of {task_id}: {e}")))?
        .ok_or_else(|| CommandError::not_found(format!("task {task_id} has no result")))?;
    serde_json::from_value(result).map_err(|e| {
        CommandError::invalid(format!(
            "task {task_id} is not a sweep or walk-forward: {e}"
        ))
    })
}

/// The best row of a stored sweep by `metric` (a `best_by` name) and its stability, by the
/// engine's rule: the heatmap's metric may differ from the one the sweep was run with.
#[tauri::command]
#[specta::specta]
pub fn sweep_best(
    dims: Vec<u32>,
    values: Vec<Option<f64>>,
    metric: String,
) -> Result<BestOf, CommandError> {
    sweep_best_of(&dims, &values, &metric).map_err(CommandError::invalid)
}
