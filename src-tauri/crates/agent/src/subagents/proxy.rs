//! The sub-agent's view of the session's tool registry: only its role's tools are
//! visible or callable, and every call is bounded by the per-tool timeout and by what
//! is left of the sub-agent's deadline. Calls still go through
//! [`ToolRegistry::execute`], so validation, the approval gate and the background
//! manager are the session's own.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use tokio::time::Instant;
use wyckoff_protocol::{RuntimeEvent, ToolCall, ToolSchema};

use super::roles::SubAgentRole;
use crate::registry::{ExecEnv, ToolOutcome, ToolRegistry};
use crate::scratchpad::ScratchpadRecord;

/// The `sub_agent` progress kind that says a tool round started (its number in `text`).
pub const TOOL_ROUND: &str = "tool_round";

pub struct SubAgentToolProxy {
    registry: Arc<ToolRegistry>,
    role: &'static SubAgentRole,
    deadline: Instant,
    /// Tool rounds asked for so far.
    rounds: AtomicU32,
    /// Set once a round past the max was refused.
    exhausted: AtomicBool,
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
            rounds: AtomicU32::new(0),
            exhausted: AtomicBool::new(false),
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

    /// Runs one round of the sub-agent's calls, one after another. Rounds past the
    /// role's `max_tool_rounds` are refused whole: the mini loop may ask the model once
    /// more, for its answer, but no tool runs in that round. Every outcome also goes to
    /// the parent's scratchpad (through `env.sink`), with its exact arguments and result.
    pub async fn execute_round(&self, calls: &[ToolCall], env: &ExecEnv) -> Vec<ToolOutcome> {
        let round = self.rounds.fetch_add(1, Ordering::SeqCst) + 1;
        let over_cap = round > self.role.max_tool_rounds;
        if !over_cap {
            // The pane's "tool rounds n/max"; the forwarding sink tags it with the call.
            env.sink.emit(RuntimeEvent::SubAgent {
                agent: self.role.name.to_owned(),
                call_id: String::new(),
                kind: TOOL_ROUND.to_owned(),
                text: round.to_string(),
            });
        }
        if over_cap {
            self.exhausted.store(true, Ordering::SeqCst);
            tracing::info!(
                agent = self.role.name,
                round,
                "sub-agent round past its max refused"
            );
        }
        let mut outcomes = Vec::with_capacity(calls.len());
        for call in calls {
            let outcome = if env.cancel.is_cancelled() {
                ToolOutcome::aborted(call)
            } else if over_cap {
                self.refuse(
                    call,
                    env,
                    format!(
                        "sub-agent 已用完 {} 轮工具调用，不再执行工具: {}",
                        self.role.max_tool_rounds, call.name
                    ),
                    "max_tool_rounds",
                )
            } else {
                self.execute(call, env).await
            };
            env.sink.record(&ScratchpadRecord::ToolResult {
                id: outcome.call_id.clone(),
                tool_name: outcome.name.clone(),
                args: outcome.args.clone(),
                result: outcome.result.clone(),
                status: outcome_status(&outcome).to_owned(),
                duration_ms: outcome.elapsed_ms,
            });
            outcomes.push(outcome);
        }
        outcomes
    }

    /// Tool rounds run: those asked for, up to the role's `max_tool_rounds` (a refused
    /// round past it ran nothing).
    pub fn tool_rounds(&self) -> u32 {
        self.rounds
            .load(Ordering::SeqCst)
            .min(self.role.max_tool_rounds)
    }

    /// Whether the model asked for a tool round past the role's `max_tool_rounds`.
    pub fn rounds_exhausted(&self) -> bool {
        self.exhausted.load(Ordering::SeqCst)
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

    /// A call that never runs: no `tool_start`, only the error that says why, so the
    /// pane shows it refused and the result lists it apart from what ran.
    fn refuse(&self, call: &ToolCall, env: &ExecEnv, message: String, code: &str) -> ToolOutcome {
        env.sink.emit(RuntimeEvent::ToolError {
            id: call.id.clone(),
            name: call.name.clone(),
            error: message.clone(),
        });
        ToolOutcome::error(call, message, code)
    }
}

/// The scratchpad's status of an outcome, as the runtime writes it for its own calls.
fn outcome_status(o: &ToolOutcome) -> &'static str {
    if o.aborted {
        "aborted"
    } else if o.is_error {
        "error"
    } else {
        "ok"
    }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}
