//! Bringing the closes the ledger is valued at up to date, for every code it has held:
//! a stock's daily bars (with their unadjusted closes) through the market's sync, an ETF's,
//! LOF's or bond's unadjusted bars from Eastmoney ([`wyckoff_market::instrument_bars`]) —
//! a bond whose exchange its digits do not settle from the exchange its statement named.
//! Repos need none (valued at their principal) and are listed as such. The CLI runs it in
//! the foreground (`wyckoff portfolio sync`); the app as a background task with progress
//! ([`Desk::start_ledger_closes_sync`]).

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Value, json};
use wyckoff_agent::{FnTool, ProgressHandle, Tool, ToolContext, ToolError, ToolSpec};
use wyckoff_engine::Instrument;
/// The account's lines at the last day valued, as the report carries them.
pub use wyckoff_journal::{HoldingValue, Instrument as LineInstrument, Valuation};
use wyckoff_journal::{JournalError, JournalStore};
pub use wyckoff_market::instrument_bars::{InstrumentSyncOutcome, InstrumentSyncStatus};
use wyckoff_market::instrument_bars::{LedgerCode, fund_source, sync_instruments};
use wyckoff_market::sync::SyncStatus;
use wyckoff_market::{MarketData, SyncTarget};
use wyckoff_protocol::TaskInfo;

use crate::Desk;
use crate::reports::JobError;

/// The background task's tool name (the task panel and the portfolio page know it by it).
pub const LEDGER_CLOSES_TASK: &str = "sync_ledger_closes";

impl Desk {
    /// Syncs the closes of every code the ledger has held, stocks first; one outcome per
    /// code, in code order within each kind.
    pub async fn sync_ledger_closes(&self) -> Result<Vec<InstrumentSyncOutcome>, JournalError> {
        sync_ledger(self.market(), self.journal(), &ProgressHandle::silent()).await
    }

    /// Starts [`Desk::sync_ledger_closes`] as a background task of no conversation: the
    /// task panel shows each code as it is asked for, and the task's result is the list of
    /// outcomes. Refused offline (no source enabled) and while one is running (two would
    /// ask the source twice).
    pub async fn start_ledger_closes_sync(&self) -> Result<TaskInfo, JobError> {
        if self.market().source_names().is_empty() {
            return Err(JobError::Offline);
        }
        let tasks = self.services().background();
        if let Some(running) = tasks
            .active()
            .into_iter()
            .find(|t| t.tool_name == LEDGER_CLOSES_TASK)
        {
            return Err(JobError::Refused(format!(
                "{} is already running ({})",
                running.display_name, running.task_id
            )));
        }
        let tool = ledger_closes_tool(self.market().clone(), self.journal().clone());
        tasks
            .start_for_user(tool, json!({}))
            .await
            .map_err(|e| JobError::Refused(e.to_string()))
    }
}

/// The task that runs the sync (not offered to the model: the user starts it).
fn ledger_closes_tool(md: Arc<MarketData>, journal: JournalStore) -> Arc<dyn Tool> {
    Arc::new(FnTool::new(
        ToolSpec::new(LEDGER_CLOSES_TASK, "同步持仓收盘价"),
        "Fetches the daily closes of every code the account ledger has held.",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
        move |_args: Value, ctx: ToolContext| {
            let md = md.clone();
            let journal = journal.clone();
            async move {
                let out = sync_ledger(&md, &journal, &ctx.progress)
                    .await
                    .map_err(|e| ToolError::Failed(e.to_string()))?;
                Ok(outcomes_value(&out))
            }
        },
    ))
}

/// The task's result: each code's outcome and a one-line summary.
fn outcomes_value(out: &[InstrumentSyncOutcome]) -> Value {
    let count = |f: fn(&InstrumentSyncStatus) -> bool| out.iter().filter(|o| f(&o.status)).count();
    let updated = count(|s| matches!(s, InstrumentSyncStatus::Updated { .. }));
    let current = count(|s| matches!(s, InstrumentSyncStatus::UpToDate));
    let failed = count(|s| matches!(s, InstrumentSyncStatus::Failed { .. }));
    let none = count(|s| matches!(s, InstrumentSyncStatus::NotSupported { .. }));
    json!({
        "summary": format!(
            "{} 个代码：{updated} 个更新，{current} 个已是最新，{failed} 个失败，{none} 个不取日线",
            out.len()
        ),
        "outcomes": out,
    })
}

/// The sync itself; `progress` hears each step (the stocks as one, then each fund or bond).
async fn sync_ledger(
    md: &MarketData,
    journal: &JournalStore,
    progress: &ProgressHandle,
) -> Result<Vec<InstrumentSyncOutcome>, JournalError> {
    let entries = journal.entries(md.clock().now()).await?;
    let stated = journal.stated_exchanges().await?;
    let codes: BTreeSet<String> = entries
        .iter()
        .filter_map(|e| e.kind.code())
        .map(str::to_owned)
        .collect();
    let (stocks, others): (Vec<String>, Vec<String>) = codes
        .into_iter()
        .partition(|c| Instrument::of_code(c) == Instrument::Stock);
    let steps = usize::from(!stocks.is_empty()) + others.len();
    let fraction = |done: usize| (steps > 0).then(|| done as f32 / steps as f32);
    let mut out = Vec::with_capacity(stocks.len() + others.len());
    if !stocks.is_empty() {
        progress.report("股票日线", &format!("{} 只", stocks.len()), fraction(0));
        let report = md
            .sync(SyncTarget::Codes(stocks), &mut |_| {})
            .await
            .map_err(|e| JournalError::Market(e.to_string()))?;
        out.extend(report.outcomes.into_iter().map(|o| InstrumentSyncOutcome {
            code: o.code,
            status: match o.status {
                SyncStatus::UpToDate | SyncStatus::NoNewData => InstrumentSyncStatus::UpToDate,
                SyncStatus::Updated { new_bars, .. } => InstrumentSyncStatus::Updated {
                    new_bars: u32::try_from(new_bars).unwrap_or(u32::MAX),
                    fetched: u32::try_from(new_bars).unwrap_or(u32::MAX),
                    rejected: Vec::new(),
                },
                SyncStatus::Failed { error } => InstrumentSyncStatus::Failed { error },
            },
            last_close: o.last_date.map(wyckoff_market::date::iso),
        }));
    }
    let done_before = steps - others.len();
    let ledger_codes: Vec<LedgerCode> = others
        .iter()
        .map(|c| LedgerCode {
            code: c.clone(),
            stated: stated.get(c).copied(),
        })
        .collect();
    let source = fund_source(md);
    let total = others.len();
    out.extend(
        sync_instruments(md, &ledger_codes, source.as_ref(), &mut |i, code| {
            progress.report(
                "基金、债券日线",
                &format!("{code}（{}/{total}）", i + 1),
                fraction(done_before + i),
            )
        })
        .await
        .map_err(|e| JournalError::Market(e.to_string()))?,
    );
    progress.report("完成", "", fraction(steps));
    Ok(out)
}
