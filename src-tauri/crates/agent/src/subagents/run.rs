//! The sub-agent mini loop: the session's own [`Runtime`] loop, run with the role's
//! prompt and limits, the session's provider, approval gate and background manager,
//! and tools behind a [`SubAgentToolProxy`]. Every event it produces is forwarded to
//! the parent's stream as `RuntimeEvent::SubAgent`, tagged with the role and the
//! parent's delegate call id.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use wyckoff_llm::Provider;
use wyckoff_protocol::{ErrorKind, Message, RuntimeEvent, SubAgentResult, SubAgentStatus, Usage};

use super::budget::fit_context;
use super::policy::{SubAgentRun, build_result};
use super::proxy::SubAgentToolProxy;
use super::roles::SubAgentRole;
use crate::approval::{ApprovalGate, HeadlessApprover};
use crate::background::BackgroundTaskManager;
use crate::clock::Clock;
use crate::registry::ToolRegistry;
use crate::runtime::{Runtime, RuntimeConfig, TurnOutcome};
use crate::scratchpad::ScratchpadRecord;
use crate::sink::EventSink;

/// What a sub-agent borrows from the session that delegates to it.
#[derive(Clone)]
pub struct SubAgentDeps {
    pub provider: Arc<dyn Provider>,
    pub registry: Arc<ToolRegistry>,
    pub gate: Arc<ApprovalGate>,
    pub background: Option<Arc<BackgroundTaskManager>>,
    pub clock: Arc<dyn Clock>,
    pub session_id: String,
}

/// Where the sub-agent's progress goes and who can stop it.
pub struct SubAgentParent {
    pub sink: Arc<dyn EventSink>,
    pub call_id: String,
    pub cancel: CancellationToken,
}

/// Forwards the mini loop's events to the parent and notes what the result needs.
struct ForwardingSink {
    parent: Arc<dyn EventSink>,
    agent: String,
    /// Shown in the approval dialog: which sub-agent asks.
    label: String,
    call_id: String,
    seen: Mutex<Seen>,
}

#[derive(Default)]
struct Seen {
    /// Calls that started (a refused call ends in an error without starting).
    started: Vec<String>,
    tool_calls: Vec<String>,
    refused_calls: Vec<String>,
    task_ids: Vec<String>,
    /// The mini loop's running totals, so a run that fails still reports what it spent.
    usage: Usage,
    rounds: u32,
}

impl EventSink for ForwardingSink {
    fn emit(&self, event: RuntimeEvent) {
        if let Ok(mut seen) = self.seen.lock() {
            match &event {
                RuntimeEvent::ToolStart { id, name, .. } => {
                    seen.started.push(id.clone());
                    seen.tool_calls.push(name.clone());
                }
                RuntimeEvent::ToolError { id, name, .. } if !seen.started.contains(id) => {
                    seen.refused_calls.push(name.clone());
                }
                RuntimeEvent::ModelStart { round, .. } => seen.rounds = *round,
                RuntimeEvent::Usage { turn, .. } => seen.usage = *turn,
                RuntimeEvent::ToolResult { result, .. }
                    if result.get("status").and_then(|s| s.as_str()) == Some("background") =>
                {
                    if let Some(id) = result.get("task_id").and_then(|s| s.as_str()) {
                        seen.task_ids.push(id.to_owned());
                    }
                }
                _ => {}
            }
        }
        // An approval the sub-agent needs is the user's to answer: the parent's dialog
        // shows it, saying which sub-agent asks.
        let event = match event {
            RuntimeEvent::ApprovalRequest { mut request } => {
                request.display_name = format!("{}（{} 请求）", request.display_name, self.label);
                self.parent.emit(RuntimeEvent::ApprovalRequest { request });
                return;
            }
            resolved @ RuntimeEvent::ApprovalResolved { .. } => {
                self.parent.emit(resolved);
                return;
            }
            // The proxy's own progress (a tool round started), tagged with this call.
            RuntimeEvent::SubAgent { kind, text, .. } => {
                self.parent.emit(RuntimeEvent::SubAgent {
                    agent: self.agent.clone(),
                    call_id: self.call_id.clone(),
                    kind,
                    text,
                });
                return;
            }
            other => other,
        };
        let Some((kind, text)) = progress(&event) else {
            return;
        };
        self.parent.emit(RuntimeEvent::SubAgent {
            agent: self.agent.clone(),
            call_id: self.call_id.clone(),
            kind: kind.to_owned(),
            text,
        });
    }

    /// The mini loop's tool calls go to the parent turn's scratchpad, tagged.
    fn record(&self, record: &ScratchpadRecord) {
        let record = match record {
            ScratchpadRecord::ToolResult {
                id,
                tool_name,
                args,
                result,
                status,
                duration_ms,
            } => ScratchpadRecord::SubAgentToolResult {
                agent: self.agent.clone(),
                call_id: self.call_id.clone(),
                id: id.clone(),
                tool_name: tool_name.clone(),
                args: args.clone(),
                result: result.clone(),
                status: status.clone(),
                duration_ms: *duration_ms,
            },
            other => other.clone(),
        };
        self.parent.record(&record);
    }
}

/// The progress line for one mini-loop event (`None`: not worth showing).
fn progress(event: &RuntimeEvent) -> Option<(&'static str, String)> {
    Some(match event {
        RuntimeEvent::TextDelta { text } => ("text", text.clone()),
        RuntimeEvent::ToolStart { name, .. } => ("tool_start", name.clone()),
        RuntimeEvent::ToolResult {
            name, elapsed_ms, ..
        } => ("tool_result", format!("{name} {elapsed_ms}ms")),
        RuntimeEvent::ToolError { name, error, .. } => ("tool_error", format!("{name}: {error}")),
        RuntimeEvent::Retry { reason, .. } => ("retry", reason.clone()),
        RuntimeEvent::Warning { message } => ("warning", message.clone()),
        RuntimeEvent::TurnFailed { message, .. } => ("failed", message.clone()),
        RuntimeEvent::Done { text, .. } => ("done", text.clone()),
        _ => return None,
    })
}

/// Whether the runtime stopped the turn for a doom loop: its calls carry the code.
fn doom_loop_aborted(messages: &[Message]) -> bool {
    messages.iter().any(|m| match m {
        Message::Tool { content, .. } => serde_json::from_str::<serde_json::Value>(content)
            .is_ok_and(|v| v.get("code").and_then(|c| c.as_str()) == Some("doom_loop")),
        _ => false,
    })
}

/// Runs one delegated task to its end and returns the structured result. Never hangs
/// past the role's deadline; the parent's cancel ends it as `cancelled`.
pub async fn run_sub_agent(
    role: &'static SubAgentRole,
    task: &str,
    context: &str,
    deps: SubAgentDeps,
    parent: SubAgentParent,
) -> SubAgentResult {
    let started = Instant::now();
    let deadline = started + role.timeout;
    let fitted = fit_context(context, role.context_budget_tokens);
    let first_message = if fitted.text.is_empty() {
        task.to_owned()
    } else {
        format!("{task}\n\n上下文:\n{}", fitted.text)
    };
    let proxy = Arc::new(SubAgentToolProxy::new(
        deps.registry.clone(),
        role,
        deadline,
    ));
    let config = RuntimeConfig {
        session_id: deps.session_id.clone(),
        // After the role's tool rounds the model is told to conclude; the proxy refuses
        // any further round, so this last model call can only answer.
        max_rounds_per_segment: role.max_tool_rounds,
        max_total_rounds: role.max_tool_rounds + 1,
        // a stall is reported as the sub-agent's timeout instead of re-running the round
        stall_retries: 0,
        // the parent already chose this task; turn expectations are the parent's guard
        loop_guard: false,
        tool_timeout: None,
        ..RuntimeConfig::default()
    };
    let mut runtime = Runtime::new(
        deps.provider.clone(),
        deps.registry.clone(),
        config,
        Arc::new(HeadlessApprover::Never),
        None,
        deps.clock.clone(),
    )
    .with_gate(deps.gate.clone())
    .with_tool_proxy(proxy.clone());
    if let Some(bg) = &deps.background {
        runtime = runtime.with_background(bg.clone());
    }
    let sink = Arc::new(ForwardingSink {
        parent: parent.sink.clone(),
        agent: role.name.to_owned(),
        label: role.label.to_owned(),
        call_id: parent.call_id.clone(),
        seen: Mutex::new(Seen::default()),
    });
    let cancel = parent.cancel.child_token();
    let deadline_timer = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep_until(deadline).await;
            cancel.cancel();
        })
    };
    let mut messages = Vec::new();
    let outcome = runtime
        .run_turn(
            &mut messages,
            &role.system_prompt(),
            &first_message,
            sink.clone(),
            cancel,
        )
        .await;
    deadline_timer.abort();

    let past_deadline = Instant::now() >= deadline;
    let (status, mut run) = match outcome {
        TurnOutcome::Done {
            text,
            usage,
            rounds,
        } => {
            let doom_loop = doom_loop_aborted(&messages);
            let status = if proxy.rounds_exhausted() {
                SubAgentStatus::Timeout
            } else if doom_loop {
                // the runtime's abort text explains the stop; it is no conclusion
                SubAgentStatus::Error
            } else if text.trim().is_empty() {
                SubAgentStatus::Empty
            } else {
                SubAgentStatus::Completed
            };
            let error = match status {
                SubAgentStatus::Timeout => format!(
                    "sub-agent timeout: 已用完 {} 轮工具调用",
                    role.max_tool_rounds
                ),
                SubAgentStatus::Empty => "sub-agent empty".to_owned(),
                SubAgentStatus::Error => format!("sub-agent error: {text}"),
                _ => String::new(),
            };
            let run = SubAgentRun {
                final_text: text,
                usage,
                rounds,
                error,
                ..SubAgentRun::default()
            };
            (status, run)
        }
        TurnOutcome::Cancelled => {
            let status = if past_deadline && !parent.cancel.is_cancelled() {
                SubAgentStatus::Timeout
            } else {
                SubAgentStatus::Cancelled
            };
            let error = match status {
                SubAgentStatus::Timeout => "sub-agent timeout".to_owned(),
                _ => "sub-agent cancelled".to_owned(),
            };
            (
                status,
                SubAgentRun {
                    error,
                    ..SubAgentRun::default()
                },
            )
        }
        TurnOutcome::Failed { kind, message } => {
            let status = match kind {
                ErrorKind::Timeout => SubAgentStatus::Timeout,
                ErrorKind::Cancelled if past_deadline => SubAgentStatus::Timeout,
                ErrorKind::Cancelled => SubAgentStatus::Cancelled,
                _ => SubAgentStatus::Error,
            };
            (
                status,
                SubAgentRun {
                    error: message,
                    ..SubAgentRun::default()
                },
            )
        }
    };
    run.tool_rounds = proxy.tool_rounds();
    if let Ok(seen) = sink.seen.lock() {
        run.tool_calls = seen.tool_calls.clone();
        run.refused_calls = seen.refused_calls.clone();
        run.background_task_ids = seen.task_ids.clone();
        // A run that did not finish still spent tokens and rounds (the turn's cost and
        // the pane count them); a finished one reported its own totals.
        if run.rounds == 0 {
            run.usage = seen.usage;
            run.rounds = seen.rounds;
        }
    }
    run.context_truncated = fitted.truncated;
    run.elapsed_secs = round_secs(Instant::now() - started);
    tracing::info!(
        agent = role.name,
        ?status,
        rounds = run.rounds,
        "sub-agent finished"
    );
    build_result(role, status, run)
}

/// Seconds with two decimals, as the result shows them.
fn round_secs(d: Duration) -> f64 {
    (d.as_secs_f64() * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::CollectingSink;
    use wyckoff_protocol::{ApprovalRequest, DecisionKind};

    #[test]
    fn approvals_reach_the_parent_naming_the_sub_agent_and_progress_is_tagged() {
        let parent = CollectingSink::new();
        let sink = ForwardingSink {
            parent: parent.clone(),
            agent: "research".into(),
            label: "研究 agent".into(),
            call_id: "call_d".into(),
            seen: Mutex::new(Seen::default()),
        };
        sink.emit(RuntimeEvent::ApprovalRequest {
            request: ApprovalRequest {
                id: "x1".into(),
                tool: "write_file".into(),
                display_name: "写入文件".into(),
                args: serde_json::json!({}),
                available_decisions: vec![DecisionKind::AllowOnce, DecisionKind::Deny],
                preview: None,
                always_allows: None,
            },
        });
        sink.emit(RuntimeEvent::TextDelta {
            text: "分析中".into(),
        });
        let events = parent.events();
        match &events[0] {
            RuntimeEvent::ApprovalRequest { request } => {
                assert_eq!(request.display_name, "写入文件（研究 agent 请求）");
                assert_eq!(request.id, "x1");
            }
            other => panic!("{other:?}"),
        }
        match &events[1] {
            RuntimeEvent::SubAgent {
                agent,
                call_id,
                kind,
                text,
            } => {
                assert_eq!(
                    (
                        agent.as_str(),
                        call_id.as_str(),
                        kind.as_str(),
                        text.as_str()
                    ),
                    ("research", "call_d", "text", "分析中")
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_proxys_tool_rounds_reach_the_parent_tagged_with_the_delegate_call() {
        let parent = CollectingSink::new();
        let sink = ForwardingSink {
            parent: parent.clone(),
            agent: "trading".into(),
            label: "交易 agent".into(),
            call_id: "call_t".into(),
            seen: Mutex::new(Seen::default()),
        };
        sink.emit(RuntimeEvent::SubAgent {
            agent: "trading".into(),
            call_id: String::new(),
            kind: crate::subagents::proxy::TOOL_ROUND.into(),
            text: "2".into(),
        });
        match &parent.events()[..] {
            [
                RuntimeEvent::SubAgent {
                    agent,
                    call_id,
                    kind,
                    text,
                },
            ] => assert_eq!(
                (
                    agent.as_str(),
                    call_id.as_str(),
                    kind.as_str(),
                    text.as_str()
                ),
                ("trading", "call_t", "tool_round", "2")
            ),
            other => panic!("{other:?}"),
        }
    }
}
