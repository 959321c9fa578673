//! The sub-agent's view of the session's tool registry: only its role's tools are
//! visible or callable, and every call is bounded by the per-tool timeout and by what
//! is left of the sub-agent's deadline. Calls still go through
//! [`ToolRegistry::execute`], so validation, the approval gate and the background
//! manager are the session's own.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use wyckoff_protocol::{RuntimeEvent, ToolCall, ToolSchema};

use super::roles::SubAgentRole;
use crate::registry::{ExecEnv, ToolOutcome, ToolRegistry};

pub struct SubAgentToolProxy {
    registry: Arc<ToolRegistry>,
    role: &'static SubAgentRole,
    deadline: Instant,
}

impl SubAgentToolProxy {
    pub fn new(
        registry: Arc<ToolRegistry>,
        role: &'static SubAgentRole,
        deadline: Instant,
    ) -> Self {
        SubAgentToolProxy {
            registry,
            role,
            deadline,
        }
    }

    pub fn role(&self) -> &'static SubAgentRole {
        self.role
    }

    /// The role's tools the session actually has, in registration order.
    pub fn allowed_tools(&self) -> Vec<String> {
        self.registry
            .names()
            .into_iter()
            .filter(|n| self.role.allows(n))
            .collect()
    }

    /// What the sub-agent's model is shown.
    pub fn schemas(&self) -> Vec<ToolSchema> {
        self.registry.schemas(Some(&self.allowed_tools()))
    }

    pub fn is_concurrency_safe(&self, name: &str) -> bool {
        self.role.allows(name) && self.registry.is_concurrency_safe(name)
    }

    /// Runs one call for the sub-agent. A tool outside the role's list is refused
    /// without touching the registry; a call that outlives min(per-tool timeout, time
    /// to deadline) is dropped and comes back as a tool error.
    pub async fn execute(&self, call: &ToolCall, env: &ExecEnv) -> ToolOutcome {
        if !self.role.allows(&call.name) {
            tracing::info!(agent = self.role.name, tool = %call.name, "sub-agent tool refused");
            return self.refuse(
                call,
                env,
                format!("sub-agent 无权调用工具: {}", call.name),
                "forbidden",
            );
        }
        let now = Instant::now();
        let left = self.deadline.saturating_duration_since(now);
        let limit = self.role.tool_timeout.min(left);
        if limit.is_zero() {
            return self.refuse(
                call,
                env,
                format!("sub-agent 工具调用超时: {}", call.name),
                "timeout",
            );
        }
        match tokio::time::timeout(limit, self.registry.execute(call, env)).await {
            Ok(outcome) => outcome,
            Err(_) => {
                let message = format!(
                    "sub-agent 工具调用超时: {} > {:.0}s",
                    call.name,
                    secs(limit)
                );
                let mut outcome = ToolOutcome::error(call, message.clone(), "timeout");
                outcome.elapsed_ms = u32::try_from(limit.as_millis()).unwrap_or(u32::MAX);
                env.sink.emit(RuntimeEvent::ToolError {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    error: message,
                });
                outcome
            }
        }
    }

    fn refuse(&self, call: &ToolCall, env: &ExecEnv, message: String, code: &str) -> ToolOutcome {
        env.sink.emit(RuntimeEvent::ToolStart {
            id: call.id.clone(),
            name: call.name.clone(),
            display_name: call.name.clone(),
            args: call.args.clone(),
        });
        env.sink.emit(RuntimeEvent::ToolError {
            id: call.id.clone(),
            name: call.name.clone(),
            error: message.clone(),
        });
        ToolOutcome::error(call, message, code)
    }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}
