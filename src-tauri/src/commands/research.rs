//! The research page: sweeps and walk-forwards started without a model, as the
//! same `run_backtest` background task the agent starts, with the CLI's spec strings.

use serde::Serialize;
use specta::Type;
use tauri::State;
use wyckoff_protocol::TaskInfo;
use wyckoff_tools::backtest::{self, ResearchPlan, ResearchRequest};

use crate::chat::ChatState;
use crate::commands::chat::services;
use crate::commands::error::CommandError;
use crate::state::AppState;

fn today(md: &wyckoff_market::MarketData) -> u32 {
    wyckoff_market::date::to_yyyymmdd(md.clock().now_beijing().date())
}

/// What `request` would run (combinations, each axis's values), or the CLI's error for it.
#[tauri::command]
#[specta::specta]
pub async fn research_plan(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    request: ResearchRequest,
) -> Result<ResearchPlan, CommandError> {
    let services = services(&state, &chat).await?;
    backtest::plan(&request.to_args(), today(services.market())).map_err(CommandError::invalid)
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
    let services = services(&state, &chat).await?;
    let md = services.market().clone();
    let args = request.to_args();
    backtest::plan(&args, today(&md)).map_err(CommandError::invalid)?;
    let tool = wyckoff_tools::market_tools(md)
        .into_iter()
        .find(|t| t.spec().name == backtest::NAME)
        .ok_or_else(|| CommandError::internal(format!("no tool {}", backtest::NAME)))?;
    services
        .background()
        .start_for_user(tool, args)
        .await
        .map_err(CommandError::invalid)
}

/// A stored sweep or walk-forward result, for the research page's list.
#[derive(Debug, Clone, Serialize, Type)]
pub struct ResearchRun {
    pub task: TaskInfo,
    /// `sweep` or `walk_forward`.
    pub kind: String,
    pub period: Option<String>,
    pub combinations: Option<u32>,
    pub best_by: Option<String>,
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
        if task.tool_name != backtest::NAME || !task.status.is_finished() {
            continue;
        }
        let Ok(Some(result)) = tasks.result(&task.task_id).await else {
            continue;
        };
        let kind = result.get("kind").and_then(|k| k.as_str()).unwrap_or("");
        if kind != "sweep" && kind != "walk_forward" {
            continue;
        }
        let text = |k: &str| result.get(k).and_then(|v| v.as_str()).map(str::to_owned);
        runs.push(ResearchRun {
            kind: kind.to_owned(),
            period: text("period"),
            combinations: result
                .get("combinations")
                .and_then(|v| v.as_u64())
                .and_then(|n| u32::try_from(n).ok()),
            best_by: text("best_by"),
            task,
        });
    }
    Ok(runs)
}

/// The best row of a stored sweep by `metric` (a `best_by` name) and its stability, by the
/// engine's rule: the heatmap's metric may differ from the one the sweep was run with.
#[tauri::command]
#[specta::specta]
pub fn sweep_best(
    dims: Vec<u32>,
    values: Vec<Option<f64>>,
    metric: String,
) -> Result<backtest::BestOf, CommandError> {
    backtest::best_of(&dims, &values, &metric).map_err(CommandError::invalid)
}
