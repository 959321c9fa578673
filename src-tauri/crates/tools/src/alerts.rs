//! The alerts check as a model-free job (issue 25): a schedule's `alerts` job evaluates
//! every alert rule (and every holding's stop-loss) over the cache as of the latest bars,
//! records what fired and hands it to the push outbox, as `wyckoff alerts check` does.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use wyckoff_agent::{FnTool, Tool, ToolContext, ToolError, ToolSpec};
use wyckoff_alerts::{AlertStore, check, deliver, describe};
use wyckoff_market::MarketData;
use wyckoff_protocol::AlertCheckReport;
use wyckoff_push::{Delivery, KeychainSecrets, Outbox, OutboxStatus};

pub const NAME: &str = "check_alerts";
const DISPLAY: &str = "检查提醒";
/// How long one push may take.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// Alerts named in the result (all of them are stored).
const LISTED: usize = 50;

/// The task's result: the counts, the data's date and each alert in words.
pub fn summary(report: &AlertCheckReport, deliveries: &[Delivery]) -> Value {
    let count = |s: OutboxStatus| deliveries.iter().filter(|d| d.status == s).count();
    json!({
        "data_date": report.data_date,
        "rules": report.rules,
        "stocks": report.stocks,
        "fired": report.fired.len(),
        "suppressed": report.suppressed.len(),
        "unevaluated": report.unevaluated.len(),
        "alerts": report.fired.iter().take(LISTED).map(describe::alert_text).collect::<Vec<_>>(),
        "pushed": {
            "sent": count(OutboxStatus::Sent),
            "pending": count(OutboxStatus::Pending),
            "failed": count(OutboxStatus::Failed),
        },
    })
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
                let store = AlertStore::new(md.pool().clone()).await.map_err(failed)?;
                let outbox = Outbox::new(md.pool().clone(), SEND_TIMEOUT)
                    .await
                    .map_err(failed)?
                    .with_secrets(Arc::new(KeychainSecrets::system()));
                let mut report = check(&md, &store, None, now).await.map_err(failed)?;
                deliver::enqueue(&store, &outbox, &mut report, now)
                    .await
                    .map_err(failed)?;
                let done = deliver::deliver(&store, &outbox, Some(&mut report), now)
                    .await
                    .map_err(failed)?;
                Ok(summary(&report, &done))
            }
        },
    ))
}
