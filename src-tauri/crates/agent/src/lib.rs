//! The agent runtime: ReAct loop, tool registry, approvals, guards, background tasks,
//! scratchpad.
//!
//! Build a [`Runtime`] per session from a provider, a [`ToolRegistry`], a
//! [`RuntimeConfig`] and an [`Approver`]; run turns with [`Runtime::run_turn`], which
//! streams [`wyckoff_protocol::RuntimeEvent`]s into an [`EventSink`] and ends each turn
//! with exactly one terminal event.

pub mod approval;
pub mod background;
pub mod batch;
pub mod clock;
pub mod compaction;
pub mod doom_loop;
mod error;
pub mod loop_guard;
pub mod registry;
pub mod results;
pub mod runtime;
pub mod scratchpad;
pub mod scripted;
pub mod sink;
pub mod tool;
pub mod validation;

pub use approval::{ApprovalGate, Approver, GateDecision, HeadlessApprover, PendingApprovals};
pub use background::{BackgroundTaskManager, report_progress};
pub use clock::{Clock, ManualClock, SystemClock};
pub use compaction::{CompactionReport, Compactor, NoCompaction};
pub use error::AgentError;
pub use registry::{ExecEnv, ToolOutcome, ToolRegistry};
pub use results::{ResultStore, load_offloaded};
pub use runtime::{Runtime, RuntimeConfig, TurnOutcome};
pub use sink::{CollectingSink, EventSink, FnSink, NullSink};
pub use tool::{FnTool, Tool, ToolContext, ToolError, ToolSpec};
