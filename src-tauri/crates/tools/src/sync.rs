//! The data tasks the overview's buttons and schedules start as background tools (the
//! model is never given them): the whole-market sync — every benchmark index and every
//! listed stock, progress by symbol, cancellable between symbols (what was fetched stays),
//! then the ledger's open positions the list leaves out — and the CSV
//! import of a file or folder, progress by file.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};
use specta::Type;
use wyckoff_agent::{FnTool, Tool, ToolContext, ToolError, ToolSpec};
use wyckoff_market::facade::{SyncReport, SyncTarget};
use wyckoff_market::history::{HistorySync, SnapshotInfo};
use wyckoff_market::{ImportEvent, ImportReport, MarketData, SyncEvent, SyncStatus};

pub const SYNC_ALL: &str = "sync_market";
pub const SYNC_ALL_DISPLAY: &str = "全市场同步";
pub const IMPORT: &str = "import_bars";
pub const IMPORT_DISPLAY: &str = "导入行情 CSV";
/// File outcomes listed in the import result (the rest are counted).
const FILES_LISTED: usize = 50;
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

/// The whole-market sync's result: counts, and the first failures by code.
pub fn sync_all_summary(report: &SyncReport) -> Value {
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

/// The stock list's and the name history's part of the sync's result: what was recorded,
/// or why not (`stock_list.error`, `stock_history.error`: the bars' counts stand apart);
/// `stock_history` is null when no configured source has the history (Tushare, token).
pub fn add_stock_history(
    summary: &mut Value,
    list: &Result<(usize, &'static str), String>,
    snapshot: Option<&SnapshotInfo>,
    history: Option<&Result<Option<HistorySync>, String>>,
) {
    summary["stock_list"] = match list {
        Ok((stocks, source)) => json!({
            "ok": true,
            "stocks": stocks,
            "source": source,
            "snapshot": snapshot,
        }),
        Err(e) => json!({"ok": false, "error": e}),
    };
    summary["stock_history"] = match history {
        Some(Ok(Some(h))) => serde_json::to_value(h).unwrap_or(Value::Null),
        Some(Ok(None)) | None => Value::Null,
        Some(Err(e)) => json!({ "error": e }),
    };
}

/// The sync behind the full-market task, over `target` (the task's is every symbol):
/// the vendor's dated name history first, so the day's stock list, recorded next as its
/// snapshot, marks as "first seen" only names the history lacks; the list before the bars,
/// so new listings are synced too; then the bars and, when any came through, the alert
/// rules. A failed list or history is said in the result and stops nothing. `report` gets
/// (stage, detail, fraction) for the task panel.
pub async fn sync_market(
    md: &MarketData,
    target: SyncTarget,
    report: &mut (dyn FnMut(&str, &str, Option<f32>) + Send),
) -> Result<Value, ToolError> {
    let history = if md.has_stock_history_source() {
        report("股票历史", "", None);
        Some(md.sync_stock_history().await.map_err(|e| e.to_string()))
    } else {
        None
    };
    report("股票列表", "", None);
    let list = md.sync_stock_list().await.map_err(|e| e.to_string());
    let snapshot = match &list {
        Ok(_) => md
            .history()
            .snapshots()
            .await
            .ok()
            .and_then(|s| s.last().cloned()),
        Err(_) => None,
    };
    let bars = md
        .sync(target, &mut |e: SyncEvent| {
            let (stage, detail, fraction) = panel_progress(&SyncProgress::from(&e));
            report(&stage, &detail, Some(fraction));
        })
        .await
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let mut summary = sync_all_summary(&bars);
    add_stock_history(&mut summary, &list, snapshot.as_ref(), history.as_ref());
    // New bars: what the alert rules (and the holdings' stops) say about them.
    if summary.get("error").is_none() {
        report("检查提醒", "", None);
        summary["alerts"] = crate::alerts::after_sync(md).await;
    }
    Ok(summary)
}

/// The full-market sync as a background tool (started by the overview's button or a
/// schedule, never by the model): [`sync_market`] over every symbol, then the ledger's
/// open positions the market's list leaves out, their outcomes under `ledger` in the
/// result ([`crate::ledger_sync::ledger_part`]).
pub fn sync_all_tool(md: Arc<MarketData>) -> Arc<dyn Tool> {
    Arc::new(FnTool::new(
        ToolSpec::new(SYNC_ALL, SYNC_ALL_DISPLAY).background(),
        "同步全市场日线（基准指数 + 股票列表中的每只股票），再同步账本持仓中列表之外的代码",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
        move |_args, ctx: ToolContext| {
            let md = md.clone();
            async move {
                let mut summary =
                    sync_market(&md, SyncTarget::All, &mut |stage, detail, fraction| {
                        ctx.progress.report(stage, detail, fraction);
                    })
                    .await?;
                summary["ledger"] = crate::ledger_sync::ledger_part(&md, &ctx.progress).await;
                Ok(summary)
            }
        },
    ))
}

/// The import's result: the report with its file list cut to [`FILES_LISTED`]; an error
/// when no file could be imported (the task then reads failed, with the first reason).
pub fn import_summary(report: &ImportReport) -> Value {
    let mut v = json!({
        "files": report.files,
        "files_imported": report.files_imported,
        "files_rejected": report.files_rejected,
        "stocks": report.stocks,
        "bars": report.bars,
        "bad_rows": report.bad_rows,
        "not_in_stock_list": report.not_in_stock_list,
        "outcomes": report.outcomes.iter().take(FILES_LISTED).collect::<Vec<_>>(),
    });
    if report.files > 0 && report.files_imported == 0 {
        let first = report
            .outcomes
            .iter()
            .find_map(|o| match &o.status {
                wyckoff_market::FileStatus::Rejected { errors, .. } => errors
                    .first()
                    .map(|e| format!("{} line {}: {}", o.path, e.line, e.message)),
                wyckoff_market::FileStatus::Imported { .. } => None,
            })
            .unwrap_or_default();
        v["error"] = json!(format!(
            "none of the {} file(s) could be imported; {first}",
            report.files
        ));
    }
    v
}

/// Imports a CSV file or a folder of them (the format `wyckoff data import` reads) as a
/// background tool with progress by file.
pub fn import_tool(md: Arc<MarketData>) -> Arc<dyn Tool> {
    Arc::new(FnTool::new(
        ToolSpec::new(IMPORT, IMPORT_DISPLAY).background(),
        "把本地 CSV 日线（文件或文件夹）导入行情缓存",
        json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": false
        }),
        move |args, ctx: ToolContext| {
            let md = md.clone();
            async move {
                let path = args
                    .get("path")
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(PathBuf::from)
                    .ok_or_else(|| {
                        ToolError::InvalidArgs("path must be a file or folder".into())
                    })?;
                let report = md
                    .import_csv(&path, &mut |e: ImportEvent| match e {
                        ImportEvent::FileDone {
                            index,
                            total,
                            outcome,
                        } => {
                            let done = index + 1;
                            let name = std::path::Path::new(&outcome.path)
                                .file_name()
                                .map(|n| n.to_string_lossy().into_owned())
                                .unwrap_or(outcome.path);
                            ctx.progress.report(
                                "导入",
                                &format!("{name} ({done}/{total})"),
                                Some(done as f32 / total.max(1) as f32),
                            );
                        }
                    })
                    .await
                    .map_err(|e| ToolError::Failed(e.to_string()))?;
                Ok(import_summary(&report))
            }
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wyckoff_market::SyncOutcome;

    #[test]
    fn panel_progress_counts_finished_symbols() {
        // (index, total, done) → (detail, fraction)
        let cases = [
            (0, 4, false, "600519 (0/4)", 0.0),
            (0, 4, true, "600519 (1/4)", 0.25),
            (3, 4, true, "600519 (4/4)", 1.0),
            (0, 0, false, "600519 (0/0)", 0.0),
        ];
        for (index, total, done, detail, fraction) in cases {
            let (stage, d, f) = panel_progress(&SyncProgress {
                index,
                total,
                code: "600519".into(),
                done,
            });
            assert_eq!(stage, "同步");
            assert_eq!((d.as_str(), f), (detail, fraction));
        }
    }

    #[test]
    fn sync_all_fails_only_when_nothing_came_through() {
        let outcome = |code: &str, status| SyncOutcome {
            code: code.into(),
            status,
            last_date: None,
        };
        let failed = || SyncStatus::Failed {
            error: "timeout".into(),
        };
        let report = |outcomes: Vec<SyncOutcome>, updated, failed| wyckoff_market::SyncReport {
            outcomes,
            updated,
            up_to_date: 0,
            failed,
            invalid: vec![],
        };
        let all_failed = sync_all_summary(&report(
            vec![outcome("a", failed()), outcome("b", failed())],
            0,
            2,
        ));
        assert_eq!(all_failed["error"], "所有 2 个代码同步失败：timeout");
        assert_eq!(all_failed["failures"][1]["code"], "b");
        let partly = sync_all_summary(&report(
            vec![outcome("a", failed()), outcome("b", SyncStatus::UpToDate)],
            0,
            1,
        ));
        assert!(partly.get("error").is_none());
        assert_eq!(partly["failed"], 1);
    }
}
