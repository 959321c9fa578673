//! Work started without any model — the overview's buttons, schedules: a screen, a
//! backtest, a full-market sync, a CSV import or an alerts check as a background task of
//! no conversation.

use std::sync::Arc;

use serde_json::{Value, json};
use wyckoff_agent::{BackgroundTaskManager, Tool};
use wyckoff_market::MarketData;
use wyckoff_protocol::TaskInfo;
use wyckoff_protocol::TaskRequest;

/// Why a job did not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    #[error("no data source is enabled (or WYCKOFF_OFFLINE is set): nothing to sync from")]
    Offline,
    #[error("{0}")]
    Refused(String),
}

/// The tool and its arguments for a request (the sync-all tool exists only here: the
/// agent cannot start a 1.5 h sync on its own).
pub fn task_for(
    md: &Arc<MarketData>,
    request: &TaskRequest,
) -> Result<(Arc<dyn Tool>, Value), JobError> {
    let named = |name: &str| {
        crate::market_tools(md.clone())
            .into_iter()
            .find(|t| t.spec().name == name)
            .ok_or_else(|| JobError::Refused(format!("no tool {name}")))
    };
    Ok(match request {
        TaskRequest::Screen {
            as_of,
            board,
            limit,
        } => {
            let mut args = json!({});
            if let Some(d) = as_of.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
                args["as_of"] = json!(d);
            }
            if let Some(b) = board.as_deref().map(str::trim).filter(|b| !b.is_empty()) {
                args["board"] = json!(b);
            }
            if let Some(n) = limit {
                args["limit"] = json!(n);
            }
            (named(crate::screen::NAME)?, args)
        }
        TaskRequest::Backtest {
            start,
            end,
            hold_days,
            top_n,
        } => (
            named(crate::backtest::NAME)?,
            json!({"start": start, "end": end, "hold_days": hold_days, "top_n": top_n}),
        ),
        TaskRequest::SyncAll => {
            if md.source_names().is_empty() {
                return Err(JobError::Offline);
            }
            (crate::sync::sync_all_tool(md.clone()), json!({}))
        }
        TaskRequest::Alerts => (crate::alerts::check_alerts_tool(md.clone()), json!({})),
        TaskRequest::Import { path } => {
            let path = path.trim();
            if path.is_empty() {
                return Err(JobError::Refused(
                    "give the path of a CSV file or of a folder of them".into(),
                ));
            }
            // Said before a task starts: a typo should not become a failed task.
            if !std::path::Path::new(path).exists() {
                return Err(JobError::Refused(format!("{path} does not exist")));
            }
            (
                crate::sync::import_tool(md.clone()),
                json!({ "path": path }),
            )
        }
    })
}

/// Arguments the request's tool would refuse at every run, refused when it is stored
/// (a schedule): a screen's board and limit, as `wyckoff screen` checks them.
pub fn check(request: &TaskRequest) -> Result<(), JobError> {
    if let TaskRequest::Screen { board, limit, .. } = request {
        wyckoff_engine::funnel::ScreenArgs::parse(board.as_deref().map(str::trim), *limit, None)
            .map_err(|e| JobError::Refused(format!("screen job: {e}")))?;
    }
    Ok(())
}

/// Starts a request as a background task of no conversation.
pub async fn start(
    md: &Arc<MarketData>,
    tasks: &Arc<BackgroundTaskManager>,
    request: &TaskRequest,
) -> Result<TaskInfo, JobError> {
    start_under(md, tasks, request, None).await
}

/// [`start`] with the user's risk rules: a screen's candidates then carry their suggested
/// sizes, a risk-sized backtest runs under their limits.
pub async fn start_under(
    md: &Arc<MarketData>,
    tasks: &Arc<BackgroundTaskManager>,
    request: &TaskRequest,
    rules: Option<crate::risk::RiskRules>,
) -> Result<TaskInfo, JobError> {
    let (tool, args) = task_for(md, request)?;
    let tool = match (rules, tool.spec().name.as_str()) {
        (Some(r), crate::screen::NAME) => crate::screen::tool_under(md.clone(), r),
        (Some(r), crate::backtest::NAME) => crate::backtest::tool_under(md.clone(), r),
        _ => tool,
    };
    if let Some(running) = tasks
        .active()
        .into_iter()
        .find(|t| t.tool_name == tool.spec().name)
        .filter(|_| matches!(request, TaskRequest::SyncAll | TaskRequest::Import { .. }))
    {
        // Two whole-market syncs would only fetch everything twice; two imports would
        // write the same cache at once.
        return Err(JobError::Refused(format!(
            "{} is already running ({})",
            running.display_name, running.task_id
        )));
    }
    tasks
        .start_for_user(tool, args)
        .await
        .map_err(|e| JobError::Refused(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_screen_board_and_limit_are_checked_as_the_screen_checks_them() {
        let screen = |board: Option<&str>, limit: Option<i64>| TaskRequest::Screen {
            as_of: None,
            board: board.map(str::to_owned),
            limit,
        };
        assert_eq!(check(&screen(None, None)), Ok(()));
        assert_eq!(check(&screen(Some("chinext"), Some(300))), Ok(()));
        for bad in [
            screen(Some("weekend"), None),
            screen(None, Some(-1)),
            screen(None, Some(3001)),
        ] {
            let Err(JobError::Refused(why)) = check(&bad) else {
                panic!("{bad:?} was not refused");
            };
            assert!(why.starts_with("screen job: "), "{why}");
        }
        assert_eq!(check(&TaskRequest::SyncAll), Ok(()));
    }
}
