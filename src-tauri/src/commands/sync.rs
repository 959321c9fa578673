//! Data sync from the app: one stock from its page (progress over a channel, then the
//! page reloads), or the whole market as a background task (progress by symbol in the
//! task panel, cancellable). Offline — `WYCKOFF_OFFLINE=1` or no source enabled — is said
//! as such before anything starts.

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};
use specta::Type;
use tauri::State;
use tauri::ipc::Channel;
use wyckoff_agent::{FnTool, Tool, ToolError, ToolSpec, report_progress};
use wyckoff_market::facade::SyncTarget;
use wyckoff_market::{MarketData, StockCode, SyncEvent, SyncOutcome, SyncStatus};

use crate::chat::ChatState;
use crate::commands::overview::{WorkspaceError, market};
use crate::state::AppState;

pub const SYNC_ALL: &str = "sync_market";
pub const SYNC_ALL_DISPLAY: &str = "全市场同步";
/// Failed codes listed in the sync-all result (the rest are counted).
const FAILURES_LISTED: usize = 20;

/// One step of a sync: `done` is false when a symbol starts, true when it is finished.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct SyncProgress {
    pub index: u32,
    pub total: u32,
    pub code: String,
    pub done: bool,
}

impl From<&SyncEvent> for SyncProgress {
    fn from(e: &SyncEvent) -> Self {
        let n = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
        match e {
            SyncEvent::Started { index, total, code } => SyncProgress {
                index: n(*index),
                total: n(*total),
                code: code.clone(),
                done: false,
            },
            SyncEvent::Finished {
                index,
                total,
                outcome,
            } => SyncProgress {
                index: n(*index),
                total: n(*total),
                code: outcome.code.clone(),
                done: true,
            },
        }
    }
}

/// The task panel's stage, detail and fraction for a step.
pub fn panel_progress(p: &SyncProgress) -> (String, String, f32) {
    let finished = p.index + u32::from(p.done);
    let fraction = if p.total == 0 {
        0.0
    } else {
        finished as f32 / p.total as f32
    };
    (
        "同步".to_owned(),
        format!("{} ({finished}/{})", p.code, p.total),
        fraction,
    )
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct StockSyncResult {
    pub code: String,
    /// updated / up_to_date / no_new_data.
    pub status: String,
    pub new_bars: u32,
    pub source: Option<String>,
    /// The newest cached bar after the sync (YYYY-MM-DD).
    pub last_date: Option<String>,
}

fn result_of(o: &SyncOutcome) -> Result<StockSyncResult, WorkspaceError> {
    let (status, new_bars, source) = match &o.status {
        SyncStatus::Updated {
            source, new_bars, ..
        } => (
            "updated",
            u32::try_from(*new_bars).unwrap_or(u32::MAX),
            Some(source.clone()),
        ),
        SyncStatus::UpToDate => ("up_to_date", 0, None),
        SyncStatus::NoNewData => ("no_new_data", 0, None),
        SyncStatus::Failed { error } => {
            return Err(WorkspaceError::SyncFailed {
                code: o.code.clone(),
                message: error.clone(),
            });
        }
    };
    Ok(StockSyncResult {
        code: o.code.clone(),
        status: status.to_owned(),
        new_bars,
        source,
        last_date: o.last_date.map(wyckoff_market::date::iso),
    })
}

/// Syncs one stock, reporting each step.
pub async fn sync_one(
    md: &MarketData,
    code: &str,
    progress: &mut (dyn FnMut(SyncProgress) + Send),
) -> Result<StockSyncResult, WorkspaceError> {
    let parsed = StockCode::parse(code).map_err(|e| WorkspaceError::Refused {
        message: e.to_string(),
    })?;
    if md.source_names().is_empty() {
        return Err(WorkspaceError::Offline);
    }
    let report = md
        .sync(
            SyncTarget::Codes(vec![parsed.digits().to_owned()]),
            &mut |e: SyncEvent| progress(SyncProgress::from(&e)),
        )
        .await?;
    match report.outcomes.first() {
        Some(o) => result_of(o),
        None => Err(WorkspaceError::Other {
            message: format!("nothing synced for {}", parsed.digits()),
        }),
    }
}

/// Syncs the stock shown on its page; progress goes out over `on_progress`.
#[tauri::command]
#[specta::specta]
pub async fn sync_stock(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    code: String,
    on_progress: Channel<SyncProgress>,
) -> Result<StockSyncResult, WorkspaceError> {
    let md = market(&state, &chat).await?;
    sync_one(&md, &code, &mut |p| {
        if let Err(e) = on_progress.send(p) {
            tracing::debug!("sync progress channel closed: {e}");
        }
    })
    .await
}

/// The whole-market sync's result: counts, and the first failures by code.
pub fn sync_all_summary(report: &wyckoff_market::facade::SyncReport) -> Value {
    let failures: Vec<Value> = report
        .outcomes
        .iter()
        .filter_map(|o| match &o.status {
            SyncStatus::Failed { error } => Some(json!({"code": o.code, "error": error})),
            _ => None,
        })
        .take(FAILURES_LISTED)
        .collect();
    let total = report.outcomes.len();
    let mut v = json!({
        "total": total,
        "updated": report.updated,
        "up_to_date": report.up_to_date,
        "failed": report.failed,
        "failures": failures,
    });
    if total > 0 && report.failed == total {
        // Nothing came through: the task failed, and says why.
        let first = failures
            .first()
            .and_then(|f| f["error"].as_str())
            .unwrap_or("")
            .to_owned();
        v["error"] = json!(format!("所有 {total} 个代码同步失败：{first}"));
    }
    v
}

/// The full-market sync as a background tool (started only by the overview's button).
pub fn sync_all_tool(md: Arc<MarketData>) -> Arc<dyn Tool> {
    Arc::new(FnTool::new(
        ToolSpec::new(SYNC_ALL, SYNC_ALL_DISPLAY).background(),
        "同步全市场日线（基准指数 + 股票列表中的每只股票）",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
        move |_args, _ctx| {
            let md = md.clone();
            async move {
                let report = md
                    .sync(SyncTarget::All, &mut |e: SyncEvent| {
                        let (stage, detail, fraction) = panel_progress(&SyncProgress::from(&e));
                        report_progress(&stage, &detail, Some(fraction));
                    })
                    .await
                    .map_err(|e| ToolError::Failed(e.to_string()))?;
                Ok(sync_all_summary(&report))
            }
        },
    ))
}

#[cfg(test)]
mod tests;
