//! Shared types that cross a boundary (IPC, `wyckoff run --json`, scratchpads, the
//! provider layer). Pure data: serde + specta derives, no I/O.
//!
//! Every enum that goes over a wire is tagged with `type` (or `role` for messages) in
//! snake_case so the same JSON is produced everywhere.

mod alerts;
mod approval;
mod desk_event;
mod error_kind;
mod event;
mod grounding;
mod inbox;
mod message;
mod provider;
mod risk;
mod schedule;
mod subagent;
mod task;
mod usage;

pub use alerts::{
    AlertAsOfNotes, AlertCheckReport, AlertCondition, AlertFigures, AlertRule, AlertTarget,
    DeliveryStatus, FiredAlert, KnownEvent, MissingData, PhaseState, SuppressedAlert,
    UnevaluatedAlert,
};
pub use approval::{
    AlwaysAllows, ApprovalDecision, ApprovalPreview, ApprovalRequest, DecisionKind,
};
pub use desk_event::DeskEvent;
pub use error_kind::ErrorKind;
pub use event::{RecalledItem, RuntimeEvent, Tier, TurnKind};
pub use grounding::{Claim, ClaimKind, DerivedOp, Grounding, Source, Support};
pub use inbox::{ApprovalNotice, AuditDecision, AuditEntry, Decider, InboxRequest, InboxStatus};
pub use message::{Message, SkillUse, SubAgentStep, ToolCall, ToolSchema, UserOrigin};
pub use provider::ProviderKind;
pub use risk::{
    BatchLine, BatchPreview, BuyPreview, BuySizing, RiskBreach, SizedBuy, SizedBuyKind,
};
pub use schedule::{RunReport, RunStatus};
pub use subagent::{SubAgentPolicy, SubAgentResult, SubAgentStatus};
pub use task::{
    TaskInfo, TaskNotice, TaskOutcome, TaskProgress, TaskRequest, TaskStatus, TaskStep,
};
pub use usage::Usage;
