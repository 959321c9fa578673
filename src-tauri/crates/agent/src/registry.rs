//! The tool registry (seed §2): definitions for the model, and the one execute path.
//!
//! `ToolRegistry::execute` is the only way a tool runs: it checks the arguments
//! (malformed JSON, unknown tool, schema), passes the approval gate, then either submits
//! the call to the background manager or runs it with a cancel token and a timeout, and
//! finally serializes (and offloads) the result. Tools are never handed out, so a parallel
//! batch, a background tool or a sub-agent cannot skip the gate.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use wyckoff_protocol::{RuntimeEvent, ToolCall, ToolSchema};

use crate::approval::{ApprovalGate, GateOutcome};
use crate::background::{BackgroundTaskManager, CheckBackgroundTasks};
use crate::clock::Clock;
use crate::results::{ResultStore, serialize_result};
use crate::sink::EventSink;
use crate::tool::{Tool, ToolContext, ToolError, ToolSpec};
use crate::validation::validate_args;

/// Everything one execution needs from the session and the turn. Built only by the
/// runtime (and derived for sub-tasks with [`ExecEnv::child`]), so every execution
/// carries the session's approval gate.
#[derive(Clone)]
pub struct ExecEnv {
    pub(crate) session_id: String,
    pub(crate) gate: Arc<ApprovalGate>,
    pub(crate) sink: Arc<dyn EventSink>,
    pub(crate) cancel: CancellationToken,
    pub(crate) background: Option<Arc<BackgroundTaskManager>>,
    pub(crate) results: Option<ResultStore>,
    pub(crate) clock: Arc<dyn Clock>,
    /// Foreground calls taking longer fail with a timeout error.
    pub(crate) tool_timeout: Option<Duration>,
}

impl ExecEnv {
    /// The same session and gate with another event sink and a child cancel token
    /// (for sub-agents: their events go to their own listener, cancelling the parent
    /// cancels them, approvals still go through the session's gate).
    pub fn child(&self, sink: Arc<dyn EventSink>) -> ExecEnv {
        ExecEnv {
            sink,
            cancel: self.cancel.child_token(),
            ..self.clone()
        }
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    pub fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }
}

/// How one call ended, as the runtime needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    pub call_id: String,
    pub name: String,
    /// The arguments the tool ran with (validated, possibly edited), or the raw ones.
    pub args: Value,
    /// The full result (for events and the scratchpad).
    pub result: Value,
    /// What the model sees (serialized; a preview and a reference when large).
    pub content: String,
    pub is_error: bool,
    /// The call never finished because the turn was cancelled.
    pub aborted: bool,
    pub elapsed_ms: u32,
}

impl ToolOutcome {
    /// An error result for a call that did not run.
    pub fn error(call: &ToolCall, message: impl Into<String>, code: &str) -> Self {
        let result = json!({"error": message.into(), "code": code});
        ToolOutcome {
            call_id: call.id.clone(),
            name: call.name.clone(),
            args: call.args.clone(),
            content: result.to_string(),
            result,
            is_error: true,
            aborted: false,
            elapsed_ms: 0,
        }
    }

    pub fn aborted(call: &ToolCall) -> Self {
        let mut o = ToolOutcome::error(call, "Operation aborted", "aborted");
        o.aborted = true;
        o
    }

    /// The error text of a failed call.
    pub fn error_text(&self) -> String {
        match self.result.get("error") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => self.content.clone(),
        }
    }
}

/// Tools that may change while a session is open (an MCP server's list can): the registry
/// asks for them at every model request and every call, after its own tools.
pub trait ToolSource: Send + Sync {
    /// The tools now, in the order the model is offered them.
    fn tools(&self) -> Arc<Vec<Arc<dyn Tool>>>;
}

/// Tells the tools that change something from those that only read.
pub type WriterCheck = Arc<dyn Fn(&ToolSpec) -> bool + Send + Sync>;

#[derive(Default)]
pub struct ToolRegistry {
    order: Vec<String>,
    tools: HashMap<String, Arc<dyn Tool>>,
    sources: Vec<Arc<dyn ToolSource>>,
    /// Set for a reader's registry (a chat bot's): writers are not offered to the model,
    /// and a call of one all the same must pass the approval gate.
    writers_gated: Option<WriterCheck>,
}

impl ToolRegistry {
    /// A registry with the built-in `check_background_tasks`.
    pub fn new() -> Self {
        let mut r = ToolRegistry::empty();
        r.register(Arc::new(CheckBackgroundTasks::default()));
        r
    }

    pub fn empty() -> Self {
        ToolRegistry::default()
    }

    /// Adds (or replaces) a tool.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let name = tool.spec().name.clone();
        if self.tools.insert(name.clone(), tool).is_none() {
            self.order.push(name);
        }
    }

    /// Adds tools that come and go (see [`ToolSource`]); a name registered here wins.
    pub fn add_source(&mut self, source: Arc<dyn ToolSource>) {
        self.sources.push(source);
    }

    /// Offers the model only the tools `is_writer` says read, and sends every call of a
    /// writer through the approval gate, whatever its own spec says.
    pub fn gate_writers(&mut self, is_writer: WriterCheck) {
        self.writers_gated = Some(is_writer);
    }

    fn gated(&self, spec: &ToolSpec) -> bool {
        self.writers_gated.as_ref().is_some_and(|w| w(spec))
    }

    /// Every tool now: the registered ones in order, then the sources'.
    fn all(&self) -> Vec<Arc<dyn Tool>> {
        let mut all: Vec<Arc<dyn Tool>> = self
            .order
            .iter()
            .filter_map(|n| self.tools.get(n).cloned())
            .collect();
        for source in &self.sources {
            all.extend(
                source
                    .tools()
                    .iter()
                    .filter(|t| !self.tools.contains_key(&t.spec().name))
                    .cloned(),
            );
        }
        all
    }

    fn tool(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools.get(name).cloned().or_else(|| {
            self.sources
                .iter()
                .find_map(|s| s.tools().iter().find(|t| t.spec().name == name).cloned())
        })
    }

    pub fn spec(&self, name: &str) -> Option<ToolSpec> {
        self.tool(name).map(|t| t.spec().clone())
    }

    pub fn contains(&self, name: &str) -> bool {
        self.tool(name).is_some()
    }

    pub fn names(&self) -> Vec<String> {
        self.all().iter().map(|t| t.spec().name.clone()).collect()
    }

    /// Definitions for the model, in registration order; `allowed` filters by name.
    pub fn schemas(&self, allowed: Option<&[String]>) -> Vec<ToolSchema> {
        self.all()
            .iter()
            .filter(|t| allowed.is_none_or(|a| a.iter().any(|x| *x == t.spec().name)))
            .filter(|t| !self.gated(t.spec()))
            .map(|t| t.schema().clone())
            .collect()
    }

    /// Whether a call may join a concurrent batch (unknown tools may not).
    pub fn is_concurrency_safe(&self, name: &str) -> bool {
        self.spec(name).is_some_and(|s| s.concurrency_safe)
    }

    pub fn display_name(&self, name: &str) -> String {
        self.spec(name)
            .map(|s| s.display_name)
            .unwrap_or_else(|| name.to_owned())
    }

    /// Runs one call through validation, the approval gate and the tool, emitting
    /// `tool_start` and then `tool_result` or `tool_error`.
    pub async fn execute(&self, call: &ToolCall, env: &ExecEnv) -> ToolOutcome {
        let span = tracing::info_span!("tool_call", tool = %call.name, call_id = %call.id);
        async {
            let started = Instant::now();
            env.sink.emit(RuntimeEvent::ToolStart {
                id: call.id.clone(),
                name: call.name.clone(),
                display_name: self.display_name(&call.name),
                args: call.args.clone(),
            });
            let mut outcome = self.execute_inner(call, env).await;
            if outcome.elapsed_ms == 0 && !outcome.is_error {
                outcome.elapsed_ms = elapsed_ms(started);
            }
            if outcome.is_error {
                tracing::info!(error = %outcome.error_text(), "tool failed");
                env.sink.emit(RuntimeEvent::ToolError {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    error: outcome.error_text(),
                });
            } else {
                env.sink.emit(RuntimeEvent::ToolResult {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    elapsed_ms: outcome.elapsed_ms,
                    result: outcome.result.clone(),
                });
            }
            outcome
        }
        .instrument(span)
        .await
    }

    async fn execute_inner(&self, call: &ToolCall, env: &ExecEnv) -> ToolOutcome {
        if let Some(err) = &call.args_error {
            return ToolOutcome::error(
                call,
                format!(
                    "工具 {} 的参数不是合法的 JSON（{err}）。请修正参数 JSON 后重新调用。",
                    call.name
                ),
                "invalid_json",
            );
        }
        let Some(tool) = self.tool(&call.name) else {
            let known = self.names().join(", ");
            return ToolOutcome::error(
                call,
                format!("未知工具: {}（可用工具: {known}）", call.name),
                "tool_not_found",
            );
        };
        let mut spec = tool.spec().clone();
        if self.gated(&spec) {
            spec.requires_approval = true;
        }
        let parameters = &tool.schema().parameters;
        let mut args = match validate_args(parameters, &call.args) {
            Ok(a) => a,
            Err(e) => {
                return ToolOutcome::error(
                    call,
                    format!("工具 {} 参数无效: {e}", call.name),
                    "invalid_arguments",
                );
            }
        };
        let has_args = parameters
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());

        let preview = if spec.requires_approval {
            tool.approval_preview(&args).await
        } else {
            None
        };
        match env
            .gate
            .check(
                &env.session_id,
                &spec,
                has_args,
                &call.id,
                args.clone(),
                preview,
                env.sink.as_ref(),
                &env.cancel,
            )
            .await
        {
            GateOutcome::Proceed {
                args: approved,
                edited,
            } => {
                if edited {
                    // Edited arguments are the user's, but they still have to fit the schema.
                    match validate_args(parameters, &approved) {
                        Ok(a) => args = a,
                        Err(e) => {
                            return ToolOutcome::error(
                                call,
                                format!("修改后的参数无效，操作 [{}] 没有执行: {e}", call.name),
                                "invalid_arguments",
                            );
                        }
                    }
                }
            }
            GateOutcome::Refused(message) => {
                let mut o = ToolOutcome::error(call, message, "not_approved");
                o.args = args;
                return o;
            }
            // Waiting in the inbox is the call's result for now, not an error.
            GateOutcome::Queued(result) => {
                return ToolOutcome {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    args,
                    content: result.to_string(),
                    result,
                    is_error: false,
                    aborted: false,
                    elapsed_ms: 0,
                };
            }
            GateOutcome::Cancelled => return ToolOutcome::aborted(call),
        }

        let started = Instant::now();
        if spec.background
            && let Some(manager) = &env.background
        {
            return match manager.submit(tool, args.clone(), &env.session_id).await {
                Ok(task) => {
                    env.sink
                        .emit(RuntimeEvent::BackgroundTask { task: task.clone() });
                    let result = json!({
                        "status": "background",
                        "task_id": task.task_id,
                        "message": format!("{}已提交后台执行，您可以继续提问。任务完成后会自动通知。", spec.display_name),
                    });
                    self.finish(call, args, result, false, started, env)
                }
                Err(e) => {
                    ToolOutcome::error(call, format!("后台任务提交失败: {e}"), "background_error")
                }
            };
        }
        // Without a task manager (e.g. a one-shot CLI run) the tool runs in the foreground.

        let ctx = ToolContext {
            session_id: env.session_id.clone(),
            call_id: call.id.clone(),
            cancel: env.cancel.child_token(),
            background: env.background.clone(),
            // A foreground call is no task: there is nowhere to show its progress.
            progress: crate::tool::ProgressHandle::silent(),
        };
        // A tool's own declared limit governs; the session's tool timeout is the default.
        let limit = tool.time_limit(&args).or(env.tool_timeout);
        let timeout = async {
            match limit {
                Some(t) => env.clock.sleep(t).await,
                None => std::future::pending().await,
            }
        };
        let result = tokio::select! {
            biased;
            _ = env.cancel.cancelled() => Err(ToolError::Cancelled),
            r = tool.call(args.clone(), ctx) => r,
            // Named, so the model knows which tool (an MCP tool: which server) hung.
            _ = timeout => Err(ToolError::Failed(format!(
                "{} ({}) timed out after {}s.",
                tool.spec().display_name,
                call.name,
                limit.map(|t| t.as_secs()).unwrap_or_default()
            ))),
        };
        match result {
            Ok(value) => {
                let is_error = value.get("error").is_some();
                self.finish(call, args, value, is_error, started, env)
            }
            Err(ToolError::Cancelled) => ToolOutcome::aborted(call),
            Err(e) => {
                let mut o = ToolOutcome::error(call, e.to_string(), "tool_error");
                o.args = args;
                o.elapsed_ms = elapsed_ms(started);
                o
            }
        }
    }

    fn finish(
        &self,
        call: &ToolCall,
        args: Value,
        result: Value,
        is_error: bool,
        started: Instant,
        env: &ExecEnv,
    ) -> ToolOutcome {
        let serialized = serialize_result(&result);
        let content = match &env.results {
            Some(store) => store
                .offload_if_large(&call.name, &call.id, serialized.clone(), env.clock.now())
                .unwrap_or_else(|e| {
                    tracing::warn!("could not offload a large tool result: {e}");
                    serialized
                }),
            None => serialized,
        };
        ToolOutcome {
            call_id: call.id.clone(),
            name: call.name.clone(),
            args,
            result,
            content,
            is_error,
            aborted: false,
            elapsed_ms: elapsed_ms(started),
        }
    }
}

fn elapsed_ms(since: Instant) -> u32 {
    u32::try_from(since.elapsed().as_millis()).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Mutex;

    use super::*;
    use crate::tool::FnTool;

    struct Changing(Mutex<Arc<Vec<Arc<dyn Tool>>>>);

    impl ToolSource for Changing {
        fn tools(&self) -> Arc<Vec<Arc<dyn Tool>>> {
            self.0.lock().unwrap().clone()
        }
    }

    fn tool(name: &str, display: &str) -> Arc<dyn Tool> {
        Arc::new(FnTool::new(
            ToolSpec::new(name, display),
            "d",
            json!({"type": "object", "properties": {}}),
            |_, _| async { Ok(json!({})) },
        ))
    }

    #[test]
    fn a_sources_tools_are_seen_as_they_are_at_each_look() {
        let source = Arc::new(Changing(Mutex::new(Arc::new(vec![
            tool("mcp__a__x", "source x"),
            tool("own", "source own"),
        ]))));
        let mut reg = ToolRegistry::empty();
        reg.register(tool("own", "registered own"));
        reg.add_source(source.clone());
        assert_eq!(reg.names(), ["own", "mcp__a__x"]);
        // a registered name wins over a source's
        assert_eq!(reg.display_name("own"), "registered own");
        *source.0.lock().unwrap() = Arc::new(vec![tool("mcp__a__y", "source y")]);
        assert_eq!(reg.names(), ["own", "mcp__a__y"]);
        assert!(reg.contains("mcp__a__y") && !reg.contains("mcp__a__x"));
        let schemas: Vec<String> = reg.schemas(None).into_iter().map(|s| s.name).collect();
        assert_eq!(schemas, ["own", "mcp__a__y"]);
    }

    #[tokio::test]
    async fn gated_writers_are_not_offered_and_their_calls_pass_the_gate() {
        let ran = Arc::new(Mutex::new(0));
        let counter = ran.clone();
        // A writer that asks for nothing itself (an MCP server's trusted tool).
        let writer: Arc<dyn Tool> = Arc::new(FnTool::new(
            ToolSpec::new("mcp__s__put", "put"),
            "d",
            json!({"type": "object", "properties": {}}),
            move |_, _| {
                *counter.lock().unwrap() += 1;
                async { Ok(json!({})) }
            },
        ));
        let mut reg = ToolRegistry::empty();
        reg.register(tool("reader", "r"));
        reg.register(writer);
        reg.gate_writers(Arc::new(|spec: &ToolSpec| spec.name.starts_with("mcp__")));
        let offered: Vec<String> = reg.schemas(None).into_iter().map(|s| s.name).collect();
        assert_eq!(offered, ["reader"]);
        assert!(
            reg.contains("mcp__s__put"),
            "still callable through the gate"
        );

        let clock: Arc<dyn Clock> = Arc::new(crate::SystemClock);
        let env = ExecEnv {
            session_id: "s".into(),
            gate: Arc::new(ApprovalGate::new(
                Arc::new(crate::HeadlessApprover::Never),
                Duration::from_secs(1),
                clock.clone(),
            )),
            sink: Arc::new(crate::NullSink),
            cancel: CancellationToken::new(),
            background: None,
            results: None,
            clock,
            tool_timeout: None,
        };
        let call = ToolCall::new("c1".to_owned(), "mcp__s__put".to_owned(), json!({}));
        let outcome = reg.execute(&call, &env).await;
        assert!(outcome.is_error, "{outcome:?}");
        assert_eq!(*ran.lock().unwrap(), 0, "the writer ran without approval");
        let call = ToolCall::new("c2".to_owned(), "reader".to_owned(), json!({}));
        assert!(!reg.execute(&call, &env).await.is_error);
    }
}
