//! Bringing the closes the ledger is valued at up to date, for every code it has held
//! (stocks through the market's sync, ETFs, LOFs and bonds from Eastmoney; the work is
//! [`wyckoff_tools::ledger_sync`]'s). The CLI runs it in the foreground (`wyckoff portfolio
//! sync`); the app as a background task with progress ([`Desk::start_ledger_closes_sync`]).
//! The app's full-market sync ([`Desk::start_full_sync`]) brings the ledger's open
//! positions along, as a scheduled one and the CLI's full `data sync` do: a user expects a
//! full sync to value what they hold.

use std::sync::Arc;

use serde_json::json;
use wyckoff_agent::{ProgressHandle, Tool};
use wyckoff_journal::JournalError;
/// The account's lines at the last day valued, as the report carries them.
pub use wyckoff_journal::{HoldingValue, Instrument as LineInstrument, Valuation};
pub use wyckoff_market::instrument_bars::{InstrumentSyncOutcome, InstrumentSyncStatus};
use wyckoff_protocol::TaskInfo;
pub use wyckoff_tools::ledger_sync::{LEDGER_CLOSES_TASK, full_sync_extras, open_codes};
use wyckoff_tools::ledger_sync::{ledger_closes_tool, sync_ledger};
use wyckoff_tools::sync::sync_all_tool;

use crate::Desk;
use crate::reports::JobError;

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
        let tool = ledger_closes_tool(self.market().clone(), self.journal().clone());
        self.start_sync_task(tool).await
    }

    /// Starts the full-market sync (the overview's button) as a background task of no
    /// conversation: every benchmark index and stock, then the ledger's open positions the
    /// market's list leaves out ([`full_sync_extras`]), their outcomes under `ledger` in
    /// the result — the tool a scheduled full sync runs. Refused offline and while one is
    /// running.
    pub async fn start_full_sync(&self) -> Result<TaskInfo, JobError> {
        let tool = sync_all_tool(self.market().clone());
        self.start_sync_task(tool).await
    }

    /// Starts a sync `tool` for the user, refused offline (no source enabled) and while a
    /// task of the same tool runs (two would ask the source twice).
    async fn start_sync_task(&self, tool: Arc<dyn Tool>) -> Result<TaskInfo, JobError> {
        if self.market().source_names().is_empty() {
            return Err(JobError::Offline);
        }
        let tasks = self.services().background();
        let name = tool.spec().name.clone();
        if let Some(running) = tasks.active().into_iter().find(|t| t.tool_name == name) {
            return Err(JobError::Refused(format!(
                "{} is already running ({})",
                running.display_name, running.task_id
            )));
        }
        tasks
            .start_for_user(tool, json!({}))
            .await
            .map_err(|e| JobError::Refused(e.to_string()))
    }
}
