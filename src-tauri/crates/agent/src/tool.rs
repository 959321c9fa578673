//! What a tool is: behaviour flags (`ToolSpec`), a JSON-Schema definition, and an async
//! call that receives validated arguments and a `ToolContext`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use wyckoff_protocol::{ApprovalPreview, TaskProgress, TaskStep, ToolSchema};

use crate::background::BackgroundTaskManager;

/// Behaviour flags of a tool (seed §2 `ToolSpec`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSpec {
    pub name: String,
    /// Shown in the UI (Chinese display name).
    pub display_name: String,
    /// May run at the same time as other concurrency-safe calls of the same round.
    pub concurrency_safe: bool,
    /// Must pass the approval gate before every run.
    pub requires_approval: bool,
    /// Runs on the background task manager; the model gets a task id at once.
    pub background: bool,
    /// Changes what the owner keeps (chart notes) without asking: run freely in the
    /// owner's own conversations, but a writer where someone else talks (a chat bot).
    pub writes: bool,
}

impl ToolSpec {
    pub fn new(name: impl Into<String>, display_name: impl Into<String>) -> Self {
        ToolSpec {
            name: name.into(),
            display_name: display_name.into(),
            concurrency_safe: false,
            requires_approval: false,
            background: false,
            writes: false,
        }
    }

    pub fn concurrency_safe(mut self) -> Self {
        self.concurrency_safe = true;
        self
    }

    pub fn requires_approval(mut self) -> Self {
        self.requires_approval = true;
        self
    }

    pub fn background(mut self) -> Self {
        self.background = true;
        self
    }

    pub fn writes(mut self) -> Self {
        self.writes = true;
        self
    }
}

/// A failed tool call. The message goes to the model as `{"error": …}`.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ToolError {
    #[error("{0}")]
    Failed(String),
    /// Arguments were well-formed but unusable (the model can fix them).
    #[error("invalid arguments: {0}")]
    InvalidArgs(String),
    #[error("Operation aborted")]
    Cancelled,
}

/// Everything a running tool may use besides its arguments.
#[derive(Clone)]
pub struct ToolContext {
    pub session_id: String,
    pub call_id: String,
    /// Cancelled when the turn is cancelled (foreground tools) or the app shuts down
    /// (background tools). Long tools should check it between steps.
    pub cancel: CancellationToken,
    /// The task manager, for tools that inspect background work.
    pub background: Option<Arc<BackgroundTaskManager>>,
    /// Where the tool says how far it is: the task's progress for a background run,
    /// nowhere for a foreground call.
    pub progress: ProgressHandle,
}

type ReportFn = dyn Fn(TaskProgress) + Send + Sync;

/// The one way a tool reports progress. Cheap to clone and `Send`, so engine work on a
/// thread of its own can hold one. A background task's handle updates that task (panel,
/// CLI line, `check_background_tasks`); [`ProgressHandle::silent`] drops every report.
#[derive(Clone, Default)]
pub struct ProgressHandle(Option<Arc<ReportFn>>);

impl ProgressHandle {
    /// Reports nothing (foreground calls, tests).
    pub fn silent() -> Self {
        ProgressHandle(None)
    }

    /// Hands every report to `report` (the background manager, a CLI spinner).
    pub fn new(report: impl Fn(TaskProgress) + Send + Sync + 'static) -> Self {
        ProgressHandle(Some(Arc::new(report)))
    }

    /// A stage in words (`fraction` 0..=1, `None` when the tool cannot tell).
    pub fn report(&self, stage: &str, detail: &str, fraction: Option<f32>) {
        self.send(stage, detail, fraction, None);
    }

    /// A typed step, with its Chinese wording for readers that show `stage`/`detail`.
    pub fn report_step(&self, step: TaskStep, stage: &str, detail: &str, fraction: Option<f32>) {
        self.send(stage, detail, fraction, Some(step));
    }

    fn send(&self, stage: &str, detail: &str, fraction: Option<f32>, step: Option<TaskStep>) {
        if let Some(report) = &self.0 {
            report(TaskProgress {
                stage: stage.to_owned(),
                detail: detail.to_owned(),
                fraction: fraction.map(|f| f.clamp(0.0, 1.0)),
                step,
            });
        }
    }
}

impl std::fmt::Debug for ProgressHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "ProgressHandle(reporting)"
        } else {
            "ProgressHandle(silent)"
        })
    }
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("session_id", &self.session_id)
            .field("call_id", &self.call_id)
            .finish_non_exhaustive()
    }
}

#[async_trait]
pub trait Tool: Send + Sync {
    fn spec(&self) -> &ToolSpec;
    /// The definition sent to the model; `parameters` is a JSON Schema object.
    fn schema(&self) -> &ToolSchema;
    /// Runs the tool. `args` have been validated against `schema().parameters`.
    async fn call(&self, args: Value, ctx: ToolContext) -> Result<Value, ToolError>;
    /// What the approval dialog shows of a call's effect (validated `args`), for tools
    /// that need approval and can tell before running.
    async fn approval_preview(&self, _args: &Value) -> Option<ApprovalPreview> {
        None
    }
    /// How long a foreground call with these (validated) `args` may run before the
    /// registry cuts it. `None`: the session's tool timeout. A tool with its own limit
    /// (exec_command's `timeout` argument) declares it here, with room for the tool to
    /// report its own timeout first.
    fn time_limit(&self, _args: &Value) -> Option<Duration> {
        None
    }
}

type BoxFuture = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send>>;
type Handler = dyn Fn(Value, ToolContext) -> BoxFuture + Send + Sync;
type PreviewFn = dyn Fn(&Value) -> ApprovalPreview + Send + Sync;
type TimeLimitFn = dyn Fn(&Value) -> Duration + Send + Sync;

/// A tool made from a spec, a schema and an async closure.
pub struct FnTool {
    spec: ToolSpec,
    schema: ToolSchema,
    handler: Box<Handler>,
    preview: Option<Box<PreviewFn>>,
    time_limit: Option<Box<TimeLimitFn>>,
}

impl FnTool {
    pub fn new<F, Fut>(
        spec: ToolSpec,
        description: impl Into<String>,
        parameters: Value,
        f: F,
    ) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        let schema = ToolSchema {
            name: spec.name.clone(),
            description: description.into(),
            parameters,
        };
        FnTool {
            spec,
            schema,
            handler: Box::new(move |args, ctx| Box::pin(f(args, ctx))),
            preview: None,
            time_limit: None,
        }
    }

    /// Adds the approval preview (see [`Tool::approval_preview`]); `f` must not change
    /// anything and should be quick (it runs before the dialog opens).
    pub fn with_preview(
        mut self,
        f: impl Fn(&Value) -> ApprovalPreview + Send + Sync + 'static,
    ) -> Self {
        self.preview = Some(Box::new(f));
        self
    }

    /// Declares the call's own time limit (see [`Tool::time_limit`]).
    pub fn with_time_limit(
        mut self,
        f: impl Fn(&Value) -> Duration + Send + Sync + 'static,
    ) -> Self {
        self.time_limit = Some(Box::new(f));
        self
    }
}

#[async_trait]
impl Tool for FnTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn schema(&self) -> &ToolSchema {
        &self.schema
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<Value, ToolError> {
        (self.handler)(args, ctx).await
    }

    async fn approval_preview(&self, args: &Value) -> Option<ApprovalPreview> {
        self.preview.as_ref().map(|f| f(args))
    }

    fn time_limit(&self, args: &Value) -> Option<Duration> {
        self.time_limit.as_ref().map(|f| f(args))
    }
}
