//! The alerts check as a model-free job: a schedule's `alerts` job evaluates
//! every alert rule (and every holding's stop-loss and target) over the cache as of the
//! latest bars, records what fired and hands it to the push outbox, as `wyckoff alerts check` does. A
//! whole-market sync runs the same check when it is done ([`after_sync`]).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use wyckoff_agent::{FnTool, Tool, ToolContext, ToolError, ToolSpec};
use wyckoff_alerts::deliver::CheckRun;
use wyckoff_alerts::{AlertStore, deliver, describe};
use wyckoff_market::MarketData;
use wyckoff_push::{KeychainSecrets, Outbox, OutboxStatus};

pub const NAME: &str = "check_alerts";
const DISPLAY: &str = "检查提醒";
/// How long one push may take.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// Alerts named in the result (all of them are stored).
const LISTED: usize = 50;

/// The task's result: the counts, the data's date, the check's data notes (what fell back
/// to today's data, the delisted stocks left out), each alert in words, and any stored push
/// channel that could not be read (skipped).
pub fn summary(run: &CheckRun) -> Value {
    let (report, deliveries) = (&run.report, &run.deliveries);
    let count = |s: OutboxStatus| deliveries.iter().filter(|d| d.status == s).count();
    json!({
        "data_date": report.data_date,
        "rules": report.rules,
        "stocks": report.stocks,
        "fired": report.fired.len(),
        "suppressed": report.suppressed.len(),
        "unevaluated": report.unevaluated.len(),
        "as_of_notes": report.as_of_notes,
        "notes": report.notes,
        "alerts": report.fired.iter().take(LISTED).map(describe::alert_text).collect::<Vec<_>>(),
        "pushed": {
            "sent": count(OutboxStatus::Sent),
            "pending": count(OutboxStatus::Pending),
            "failed": count(OutboxStatus::Failed),
        },
        "damaged_channels": run.damaged_channels,
    })
}

/// The alert store and the push outbox on the data home's database.
async fn open(md: &MarketData) -> Result<(AlertStore, Outbox), String> {
    let store = AlertStore::new(md.pool().clone())
        .await
        .map_err(|e| e.to_string())?;
    let outbox = Outbox::new(md.pool().clone(), SEND_TIMEOUT)
        .await
        .map_err(|e| e.to_string())?
        .with_secrets(Arc::new(KeychainSecrets::system()));
    Ok((store, outbox))
}

/// The alerts check a sync runs once it has updated bars ([`deliver::after_sync`]), for the
/// sync's result: [`summary`]'s figures, `null` when there was nothing to check, or
/// `{"error": …}` when the check could not run (the sync itself still succeeded).
pub async fn after_sync(md: &MarketData) -> Value {
    let now = md.clock().now();
    let ran = match open(md).await {
        Ok((store, outbox)) => deliver::after_sync(md, &store, &outbox, now)
            .await
            .map_err(|e| e.to_string()),
        Err(e) => Err(e),
    };
    match ran {
        Ok(Some(run)) => summary(&run),
        Ok(None) => Value::Null,
        Err(e) => {
            tracing::warn!("the alerts check after the sync failed: {e}");
            json!({ "error": e })
        }
    }
}

fn failed(e: impl std::fmt::Display) -> ToolError {
    ToolError::Failed(e.to_string())
}

/// Runs one check over the cache as of the latest bars and pushes what fired.
pub fn check_alerts_tool(md: Arc<MarketData>) -> Arc<dyn Tool> {
    Arc::new(FnTool::new(
        ToolSpec::new(NAME, DISPLAY).background(),
        "按提醒规则检查自选股与持仓（最新收盘），记录并推送触发的提醒",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
        move |_args, _ctx: ToolContext| {
            let md = md.clone();
            async move {
                let now = md.clock().now();
                let (store, outbox) = open(&md).await.map_err(failed)?;
                let run = deliver::check_and_push(&md, &store, &outbox, None, now)
                    .await
                    .map_err(failed)?;
                Ok(summary(&run))
            }
        },
    ))
}
