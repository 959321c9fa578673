//! How a scheduled run ended, as every front end reports it.

use serde::{Deserialize, Serialize};
use specta::Type;

/// Where a scheduled run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Done,
    Failed,
    /// The process running it ended mid-run.
    Interrupted,
    /// Its turn was cancelled before it answered.
    Cancelled,
    /// The background tasks its turn started were still running at the wait's end and
    /// were cancelled: the answer, if any, does not cover them.
    TimedOut,
}

/// One run a schedule pass made (or "run now"): what the CLI prints, the app shows and a
/// push channel is told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct RunReport {
    pub schedule: String,
    pub run_id: i64,
    /// Beijing `YYYY-MM-DD HH:MM`; `None` for "run now".
    pub occurrence: Option<String>,
    pub catch_up: bool,
    /// Its due day was past the known trading calendar: a weekday was assumed to be a
    /// trading day.
    pub assumed_trading_day: bool,
    pub status: RunStatus,
    pub summary: Option<String>,
    pub error: Option<String>,
    pub task_id: Option<String>,
    pub conversation_id: Option<String>,
}
