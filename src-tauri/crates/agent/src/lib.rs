//! The agent runtime: ReAct loop, tool registry, approvals, guards, background tasks,
//! scratchpad.
//!
//! Build a [`Runtime`] per session from a provider, a [`ToolRegistry`], a
//! [`RuntimeConfig`] and an [`Approver`]; run turns with [`Runtime::run_turn`], which
//! streams [`wyckoff_protocol::RuntimeEvent`]s into an [`EventSink`] and ends each turn
//! with exactly one terminal event (`done`, `turn_cancelled` or `turn_failed`).
//!
//! ```no_run
//! use std::sync::Arc;
//! use tokio_util::sync::CancellationToken;
//! use wyckoff_agent::*;
//! use wyckoff_protocol::RuntimeEvent;
//!
//! # async fn demo(provider: Arc<dyn wyckoff_llm::Provider>, home: std::path::PathBuf) -> Result<(), AgentError> {
//! let mut registry = ToolRegistry::new(); // includes check_background_tasks
//! // registry.register(Arc::new(my_tool));
//! let clock: Arc<dyn Clock> = Arc::new(SystemClock);
//! let tasks = BackgroundTaskManager::open(&home.join("wyckoff.db"), clock.clone(),
//!     Some(ResultStore::new(home.join("tool-results")))).await?;
//! let config = RuntimeConfig { session_id: "s-1".into(), ..RuntimeConfig::default() };
//! let runtime = Runtime::new(provider, Arc::new(registry), config,
//!         Arc::new(HeadlessApprover::parse("never")), Some(home.join("scratchpad")), clock)
//!     .with_background(tasks.clone())
//!     .with_result_store(ResultStore::new(home.join("tool-results")));
//!
//! let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<RuntimeEvent>();
//! let printer = tokio::spawn(async move {
//!     while let Some(event) = rx.recv().await {
//!         let _line = serde_json::to_string(&event);
//!     }
//! });
//! let mut messages = Vec::new();
//! let outcome = runtime
//!     .run_turn(&mut messages, "system prompt", "分析 600519", Arc::new(tx), CancellationToken::new())
//!     .await;
//! drop(runtime);
//! let _ = printer.await;
//! std::process::exit(outcome.exit_code());
//! # }
//! ```

pub mod approval;
pub mod background;
pub mod batch;
pub mod clock;
pub mod compaction;
pub mod doom_loop;
mod error;
pub mod grounding;
mod history;
pub mod loop_guard;
pub mod registry;
pub mod results;
pub mod runtime;
pub mod scratchpad;
pub mod scripted;
pub mod sink;
pub mod skills;
pub mod subagents;
pub mod tool;
pub mod transcript;
pub mod validation;

pub use approval::{
    ApprovalAudit, ApprovalGate, Approver, AuditRecord, GateDecision, HeadlessApprover,
    PendingApprovals, Queued,
};
pub use background::{BackgroundTaskManager, FinishHook, PendingNotice, TaskOwner};
pub use clock::{Clock, ManualClock, SystemClock};
pub use compaction::{
    CompactionArchive, CompactionReport, Compactor, FileArchive, LlmCompactor, MemoryFlush,
    NoCompaction,
};
pub use error::AgentError;
pub use history::QueryHistory;
pub use registry::{ExecEnv, ToolOutcome, ToolRegistry, ToolSource};
pub use results::{ResultStore, load_offloaded};
pub use runtime::{Runtime, RuntimeConfig, TurnOutcome};
pub use sink::{CollectingSink, EventSink, FnSink, NullSink};
pub use skills::{
    Skill, SkillCatalog, SkillError, SkillExpansion, SkillSet, SkillSource, SkillWarning,
};
pub use tool::{FnTool, ProgressHandle, Tool, ToolContext, ToolError, ToolSpec};
pub use transcript::{NoTranscript, Transcript};
