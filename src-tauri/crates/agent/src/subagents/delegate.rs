//! The delegate tools `delegate_to_research` / `_analysis` / `_trading` (seed 11_07): the
//! parent's model calls one like any tool; the runtime that delegates (see
//! `Runtime::with_delegation`) runs the role's mini loop with the session's provider,
//! registry, approval gate and background manager, streams its progress as `sub_agent`
//! events between the call's `tool_start` and `tool_result`, and hands the structured
//! result back as the tool result. A sub-agent's own runtime has no delegation (its
//! whitelist names no delegate tool), so a sub-agent cannot delegate.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use wyckoff_protocol::{RuntimeEvent, ToolCall};

use super::roles::{ROLES, SubAgentRole};
use super::run::{SubAgentDeps, SubAgentParent, run_sub_agent};
use crate::registry::{ExecEnv, ToolOutcome};
use crate::tool::{FnTool, Tool, ToolError, ToolSpec};

/// How a runtime starts a sub-agent. A trait object, so the runtime's future does not
/// contain the sub-agent's (which contains a runtime of its own).
#[async_trait::async_trait]
pub trait Delegator: Send + Sync {
    async fn delegate(
        &self,
        role: &'static SubAgentRole,
        call: &ToolCall,
        display_name: String,
        env: &ExecEnv,
        deps: SubAgentDeps,
    ) -> ToolOutcome;
}

/// The delegator of a session: [`run_delegate`].
pub struct SubAgentDelegator;

#[async_trait::async_trait]
impl Delegator for SubAgentDelegator {
    async fn delegate(
        &self,
        role: &'static SubAgentRole,
        call: &ToolCall,
        display_name: String,
        env: &ExecEnv,
        deps: SubAgentDeps,
    ) -> ToolOutcome {
        run_delegate(role, call, display_name, env, deps).await
    }
}

/// The reference's error when a delegate tool runs where no sub-agent can be started.
pub const NOT_WIRED: &str = "provider/registry 未注入，无法启动 sub-agent";

/// The role a delegate tool starts, if `name` is one.
pub fn role_for_tool(name: &str) -> Option<&'static SubAgentRole> {
    ROLES.iter().find(|r| r.delegate_tool == name)
}

fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "task": {"type": "string", "minLength": 1, "description": "交给子 Agent 的具体任务（要做什么、要回答什么）"},
            "context": {"type": "string", "description": "可选：任务需要的背景材料；超出子 Agent 预算时只保留最近部分"}
        },
        "required": ["task"],
        "additionalProperties": false
    })
}

/// The three delegate tools, for the registry (their schemas reach the parent's model).
/// Run outside a delegating runtime they fail with [`NOT_WIRED`].
pub fn delegate_tools() -> Vec<Arc<dyn Tool>> {
    ROLES
        .iter()
        .map(|r| {
            Arc::new(FnTool::new(
                ToolSpec::new(r.delegate_tool, r.label),
                format!("委派给 {} 子 Agent：{}", r.name, r.description),
                parameters(),
                |_args, _ctx| async { Err(ToolError::Failed(NOT_WIRED.into())) },
            )) as Arc<dyn Tool>
        })
        .collect()
}

/// Runs one delegate call: validates the arguments, runs the sub-agent to its end and
/// returns its structured result as the call's outcome. Never fails the parent's turn: a
/// failed sub-agent is a result with its status and policy.
pub async fn run_delegate(
    role: &'static SubAgentRole,
    call: &ToolCall,
    display_name: String,
    env: &ExecEnv,
    deps: SubAgentDeps,
) -> ToolOutcome {
    let started = Instant::now();
    env.sink.emit(RuntimeEvent::ToolStart {
        id: call.id.clone(),
        name: call.name.clone(),
        display_name,
        args: call.args.clone(),
    });
    let task = call
        .args
        .get("task")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let context = call
        .args
        .get("context")
        .and_then(Value::as_str)
        .unwrap_or("");
    let Some(task) = task.filter(|_| call.args_error.is_none()) else {
        let o = ToolOutcome::error(
            call,
            format!("工具 {} 参数无效: 缺少非空的 task 字符串", call.name),
            "invalid_arguments",
        );
        env.sink.emit(RuntimeEvent::ToolError {
            id: call.id.clone(),
            name: call.name.clone(),
            error: o.error_text(),
        });
        return o;
    };
    let parent = SubAgentParent {
        sink: env.sink.clone(),
        call_id: call.id.clone(),
        cancel: env.cancel.clone(),
    };
    let result = run_sub_agent(role, task, context, deps, parent).await;
    let value = serde_json::to_value(&result).unwrap_or_else(|e| json!({"error": e.to_string()}));
    let elapsed_ms = u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX);
    env.sink.emit(RuntimeEvent::ToolResult {
        id: call.id.clone(),
        name: call.name.clone(),
        elapsed_ms,
        result: value.clone(),
    });
    ToolOutcome {
        call_id: call.id.clone(),
        name: call.name.clone(),
        args: call.args.clone(),
        // within the role's result budget already
        content: value.to_string(),
        result: value,
        is_error: false,
        aborted: false,
        elapsed_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_role_has_its_delegate_tool() {
        for (tool, role) in [
            ("delegate_to_research", "research"),
            ("delegate_to_analysis", "analysis"),
            ("delegate_to_trading", "trading"),
        ] {
            assert_eq!(role_for_tool(tool).map(|r| r.name), Some(role));
        }
        assert!(role_for_tool("update_portfolio").is_none());
        let names: Vec<String> = delegate_tools()
            .iter()
            .map(|t| t.spec().name.clone())
            .collect();
        assert_eq!(
            names,
            [
                "delegate_to_research",
                "delegate_to_analysis",
                "delegate_to_trading"
            ]
        );
        for t in delegate_tools() {
            let spec = t.spec();
            assert!(!spec.concurrency_safe && !spec.background && !spec.requires_approval);
        }
    }
}
