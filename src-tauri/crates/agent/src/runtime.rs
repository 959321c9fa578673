//! The agent loop (seed §5): compaction hook → provider stream → chunks → tools →
//! results → next round, until the model answers. One turn ends with exactly one of
//! `done`, `turn_cancelled`, `turn_failed`, and leaves the conversation valid: every
//! tool call has a result, the runtime's own retry prompts are gone.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use wyckoff_config::settings::DEFAULT_TOOL_TIMEOUT_SECS;
use wyckoff_llm::{ChatRequest, FinishReason, LlmError, Provider, StreamChunk};
use wyckoff_protocol::{
    ErrorKind, Grounding, Message, RuntimeEvent, ToolCall, ToolSchema, Usage, UserOrigin,
};

use crate::approval::{ApprovalGate, Approver, DEFAULT_APPROVAL_TIMEOUT};
use crate::background::{BackgroundTaskManager, PendingNotice};
use crate::batch::{self, Batch, MAX_PARALLEL_TOOLS};
use crate::clock::Clock;
use crate::compaction::{Compactor, NoCompaction};
use crate::doom_loop::DoomLoopDetector;
use crate::grounding;
use crate::loop_guard::{self, TurnExpectation};
use crate::registry::{ExecEnv, ToolOutcome, ToolRegistry};
use crate::results::ResultStore;
use crate::scratchpad::{Scratchpad, ScratchpadRecord, TurnTrigger, error_chain};
use crate::sink::EventSink;
use crate::subagents::SubAgentToolProxy;
use crate::transcript::{NoTranscript, Transcript};

/// Tunables of the loop. Defaults follow the seed and DESIGN.md.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// Conversation id: scopes "always allow", background notifications, scratchpads.
    pub session_id: String,
    /// Tool rounds before the runtime nudges the model to wrap up.
    pub max_rounds_per_segment: u32,
    /// Model calls per turn, hard stop.
    pub max_total_rounds: u32,
    /// Re-runs of a round after a stream stall, per turn.
    pub stall_retries: u32,
    pub loop_guard: bool,
    pub loop_guard_retries: u32,
    pub max_parallel_tools: usize,
    pub approval_timeout: Duration,
    /// Foreground tool calls taking longer fail (background tools have no limit).
    pub tool_timeout: Option<Duration>,
    pub max_tokens: Option<u32>,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            session_id: uuid::Uuid::new_v4().to_string(),
            max_rounds_per_segment: 15,
            max_total_rounds: 32,
            stall_retries: 2,
            loop_guard: true,
            loop_guard_retries: loop_guard::MAX_RETRIES,
            max_parallel_tools: MAX_PARALLEL_TOOLS,
            approval_timeout: DEFAULT_APPROVAL_TIMEOUT,
            tool_timeout: Some(Duration::from_secs(u64::from(
                DEFAULT_TOOL_TIMEOUT_SECS.unsigned_abs(),
            ))),
            max_tokens: None,
        }
    }
}

/// How a turn ended (the same information as its terminal event).
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOutcome {
    Done {
        text: String,
        usage: Usage,
        rounds: u32,
    },
    Cancelled,
    Failed {
        kind: ErrorKind,
        message: String,
    },
}

impl TurnOutcome {
    /// The CLI's exit status: 0 done, 1 failed, 130 cancelled.
    pub fn exit_code(&self) -> i32 {
        match self {
            TurnOutcome::Done { .. } => 0,
            TurnOutcome::Failed { .. } => 1,
            TurnOutcome::Cancelled => 130,
        }
    }
}

/// The runtime of one session (conversation).
pub struct Runtime {
    provider: Arc<dyn Provider>,
    fallback: Option<Arc<dyn Provider>>,
    registry: Arc<ToolRegistry>,
    config: RuntimeConfig,
    gate: Arc<ApprovalGate>,
    compactor: Arc<dyn Compactor>,
    background: Option<Arc<BackgroundTaskManager>>,
    results: Option<ResultStore>,
    scratchpad_dir: Option<PathBuf>,
    clock: Arc<dyn Clock>,
    /// Set for a sub-agent's runtime: its calls and schemas go through the proxy.
    tool_proxy: Option<Arc<SubAgentToolProxy>>,
    /// `delegate_to_*` calls start sub-agents (a session's runtime; never a sub-agent's).
    delegation: Option<Arc<dyn crate::subagents::Delegator>>,
}

const CONTINUE_PROMPT: &str = "已连续执行多轮工具调用。请复用已经完成的工具结果，不要重复读取相同数据；如果信息已经足够，直接给出完整结论。";

impl Runtime {
    pub fn new(
        provider: Arc<dyn Provider>,
        registry: Arc<ToolRegistry>,
        config: RuntimeConfig,
        approver: Arc<dyn Approver>,
        scratchpad_dir: Option<PathBuf>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let gate = Arc::new(ApprovalGate::new(
            approver,
            config.approval_timeout,
            clock.clone(),
        ));
        Runtime {
            provider,
            fallback: None,
            registry,
            config,
            gate,
            compactor: Arc::new(NoCompaction),
            background: None,
            results: None,
            scratchpad_dir,
            clock,
            tool_proxy: None,
            delegation: None,
        }
    }

    /// Lets `delegate_to_*` calls start sub-agents that share this runtime's provider,
    /// tools, approval gate and background manager (seed 11_07).
    pub fn with_delegation(mut self) -> Self {
        self.delegation = Some(Arc::new(crate::subagents::SubAgentDelegator));
        self
    }

    /// One serial call: a delegation when this runtime delegates, else the registry.
    async fn execute_call(&self, call: &ToolCall, env: &ExecEnv) -> ToolOutcome {
        let role = crate::subagents::role_for_tool(&call.name);
        match (role, &self.delegation) {
            (Some(role), Some(delegator)) if self.tool_proxy.is_none() => {
                let deps = crate::subagents::SubAgentDeps {
                    provider: self.provider.clone(),
                    registry: self.registry.clone(),
                    gate: self.gate.clone(),
                    background: self.background.clone(),
                    clock: self.clock.clone(),
                    session_id: self.config.session_id.clone(),
                };
                let display = self.registry.display_name(&call.name);
                delegator.delegate(role, call, display, env, deps).await
            }
            _ => self.registry.execute(call, env).await,
        }
    }

    /// Shares another runtime's approval gate (a sub-agent asks the session's gate).
    pub fn with_gate(mut self, gate: Arc<ApprovalGate>) -> Self {
        self.gate = gate;
        self
    }

    /// Restricts tools to a sub-agent's whitelist (schemas and calls).
    pub fn with_tool_proxy(mut self, proxy: Arc<SubAgentToolProxy>) -> Self {
        self.tool_proxy = Some(proxy);
        self
    }

    /// A provider that takes over when the main one keeps failing (stalls after the
    /// retries, rate limits, server errors).
    pub fn with_fallback(mut self, provider: Arc<dyn Provider>) -> Self {
        self.fallback = Some(provider);
        self
    }

    pub fn with_compactor(mut self, compactor: Arc<dyn Compactor>) -> Self {
        self.compactor = compactor;
        self
    }

    /// Enables background tools and completion notifications for this session.
    pub fn with_background(mut self, manager: Arc<BackgroundTaskManager>) -> Self {
        self.background = Some(manager);
        self
    }

    /// Enables offloading of large tool results (the data home's tool-results dir).
    pub fn with_result_store(mut self, store: ResultStore) -> Self {
        self.results = Some(store);
        self
    }

    pub fn session_id(&self) -> &str {
        &self.config.session_id
    }

    pub fn config(&self) -> &RuntimeConfig {
        &self.config
    }

    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// The session's approval gate (e.g. to show which tools are always allowed).
    pub fn gate(&self) -> &Arc<ApprovalGate> {
        &self.gate
    }

    /// Whether background results are waiting for this session (the app may start a
    /// turn with empty input to let the agent handle them).
    pub fn has_pending_notifications(&self) -> bool {
        self.background
            .as_ref()
            .is_some_and(|b| b.has_notifications(&self.config.session_id))
    }

    /// Runs one turn. `user_input` is appended as the user's message; an empty input
    /// runs a turn on pending background notifications only. `messages` is the
    /// conversation, extended in place.
    pub async fn run_turn(
        &self,
        messages: &mut Vec<Message>,
        system_prompt: &str,
        user_input: &str,
        sink: Arc<dyn EventSink>,
        cancel: CancellationToken,
    ) -> TurnOutcome {
        self.run_turn_recorded(
            messages,
            system_prompt,
            user_input,
            sink,
            cancel,
            &NoTranscript,
        )
        .await
    }

    /// [`Runtime::run_turn`], handing each message the turn adds to `transcript` as it
    /// is added (see [`crate::transcript`] for what is left out).
    pub async fn run_turn_recorded(
        &self,
        messages: &mut Vec<Message>,
        system_prompt: &str,
        user_input: &str,
        sink: Arc<dyn EventSink>,
        cancel: CancellationToken,
        transcript: &dyn Transcript,
    ) -> TurnOutcome {
        let turn_id = uuid::Uuid::new_v4().simple().to_string();
        let span = tracing::info_span!("turn", session = %self.config.session_id, turn = %turn_id);
        let mut turn = Turn::new(self, sink, cancel, system_prompt, user_input, transcript);
        turn.run(messages).instrument(span).await
    }

    /// The execution environment of this session: the only way to run a registry tool
    /// (it carries the session's approval gate).
    pub fn exec_env(&self, sink: Arc<dyn EventSink>, cancel: CancellationToken) -> ExecEnv {
        ExecEnv {
            session_id: self.config.session_id.clone(),
            gate: self.gate.clone(),
            sink,
            cancel,
            background: self.background.clone(),
            results: self.results.clone(),
            clock: self.clock.clone(),
            tool_timeout: self.config.tool_timeout,
        }
    }

    /// Runs a round's calls in batches; outcomes come back in call order, one per call.
    async fn run_calls(&self, calls: &[ToolCall], env: &ExecEnv) -> Vec<ToolOutcome> {
        if let Some(proxy) = &self.tool_proxy {
            // A sub-agent's round goes through its proxy whole (rounds cap, deadline).
            return proxy.execute_round(calls, env).await;
        }
        let safe: Vec<bool> = calls
            .iter()
            .map(|c| c.args_error.is_none() && self.registry.is_concurrency_safe(&c.name))
            .collect();
        let mut slots: Vec<Option<ToolOutcome>> = vec![None; calls.len()];
        for b in batch::partition(&safe) {
            if env.cancel.is_cancelled() {
                break;
            }
            match b {
                Batch::Serial(i) => slots[i] = Some(self.execute_call(&calls[i], env).await),
                Batch::Concurrent(ids) => {
                    let permits = Arc::new(Semaphore::new(self.config.max_parallel_tools.max(1)));
                    let mut set = JoinSet::new();
                    let mut index_of = std::collections::HashMap::new();
                    for i in ids {
                        let (registry, env, call, permits) = (
                            self.registry.clone(),
                            env.clone(),
                            calls[i].clone(),
                            permits.clone(),
                        );
                        let handle = set.spawn(
                            async move {
                                // The permit lives until the call is done; closed never happens.
                                let _permit = permits.acquire_owned().await;
                                registry.execute(&call, &env).await
                            }
                            .instrument(tracing::Span::current()),
                        );
                        index_of.insert(handle.id(), i);
                    }
                    while let Some(joined) = set.join_next_with_id().await {
                        match joined {
                            Ok((id, outcome)) => {
                                if let Some(&i) = index_of.get(&id) {
                                    slots[i] = Some(outcome);
                                }
                            }
                            Err(e) => {
                                if let Some(&i) = index_of.get(&e.id()) {
                                    tracing::error!(tool = %calls[i].name, "tool task failed: {e}");
                                    let o = ToolOutcome::error(
                                        &calls[i],
                                        "工具执行异常中止",
                                        "tool_panic",
                                    );
                                    env.sink.emit(RuntimeEvent::ToolError {
                                        id: o.call_id.clone(),
                                        name: o.name.clone(),
                                        error: o.error_text(),
                                    });
                                    slots[i] = Some(o);
                                }
                            }
                        }
                    }
                }
            }
        }
        slots
            .into_iter()
            .zip(calls)
            .map(|(slot, call)| {
                slot.unwrap_or_else(|| {
                    let o = ToolOutcome::aborted(call);
                    env.sink.emit(RuntimeEvent::ToolError {
                        id: o.call_id.clone(),
                        name: o.name.clone(),
                        error: o.error_text(),
                    });
                    o
                })
            })
            .collect()
    }
}

/// What one model call produced.
#[derive(Debug, Default)]
struct RoundResult {
    text: String,
    thinking: String,
    signature: Option<String>,
    tool_calls: Vec<ToolCall>,
    usage: Usage,
    /// Text reached the listeners in this round.
    streamed_text: bool,
    finish: Option<FinishReason>,
}

enum RoundEnd {
    Complete(RoundResult),
    Cancelled,
    Failed {
        error: LlmError,
        streamed_text: bool,
    },
}

/// Consumes one provider stream, forwarding deltas as they arrive.
async fn stream_round(
    provider: &dyn Provider,
    request: &ChatRequest,
    sink: &dyn EventSink,
    cancel: &CancellationToken,
) -> RoundEnd {
    let started = tokio::select! {
        biased;
        _ = cancel.cancelled() => return RoundEnd::Cancelled,
        s = provider.stream(request) => s,
    };
    let mut stream = match started {
        Ok(s) => s,
        Err(error) => {
            return RoundEnd::Failed {
                error,
                streamed_text: false,
            };
        }
    };
    let mut r = RoundResult::default();
    loop {
        let item = tokio::select! {
            biased;
            _ = cancel.cancelled() => return RoundEnd::Cancelled,
            item = stream.next() => item,
        };
        match item {
            None => return RoundEnd::Complete(r),
            Some(Err(error)) => {
                return RoundEnd::Failed {
                    error,
                    streamed_text: r.streamed_text,
                };
            }
            Some(Ok(chunk)) => absorb(&mut r, chunk, sink),
        }
    }
}

fn absorb(r: &mut RoundResult, chunk: StreamChunk, sink: &dyn EventSink) {
    match chunk {
        StreamChunk::TextDelta(text) => {
            if !text.is_empty() {
                r.streamed_text = true;
                r.text.push_str(&text);
                sink.emit(RuntimeEvent::TextDelta { text });
            }
        }
        StreamChunk::ThinkingDelta(text) => {
            if !text.is_empty() {
                r.thinking.push_str(&text);
                sink.emit(RuntimeEvent::ThinkingDelta { text });
            }
        }
        StreamChunk::ThinkingSignature(s) => r.signature = Some(s),
        StreamChunk::ToolCalls(calls) => r.tool_calls.extend(calls),
        StreamChunk::Usage(u) => r.usage.add(&u),
        StreamChunk::Finish(f) => r.finish = Some(f),
        StreamChunk::Fallback {
            from,
            to,
            reason,
            discard_text,
        } => {
            // A wrapper provider switched vendors mid-round; what was streamed is void.
            if discard_text {
                r.text.clear();
                r.thinking.clear();
                r.signature = None;
                r.streamed_text = false;
            }
            sink.emit(RuntimeEvent::Fallback {
                from,
                to,
                reason,
                discard_text,
            });
        }
    }
}

/// State of one running turn.
struct Turn<'a> {
    rt: &'a Runtime,
    sink: Arc<dyn EventSink>,
    cancel: CancellationToken,
    env: ExecEnv,
    system_prompt: &'a str,
    user_input: &'a str,
    started: Instant,
    scratchpad: Option<Arc<Scratchpad>>,
    usage: Usage,
    rounds: u32,
    transcript: &'a dyn Transcript,
    /// This turn's tool results in full (the conversation may hold condensed copies):
    /// what the grounding check reads besides the conversation.
    results: std::sync::Mutex<Vec<(String, String, serde_json::Value)>>,
}

/// What a turn's loop carries from one model call to the next.
struct LoopState {
    /// The tool the loop guard wants called before a text answer.
    expectation: Option<TurnExpectation>,
    /// The main provider, until a failure moves the turn to the fallback.
    provider: Arc<dyn Provider>,
    on_fallback: bool,
    /// Every call of the turn, by name and arguments (what the loop guard checks).
    used: Vec<(String, serde_json::Value)>,
    doom: DoomLoopDetector,
    stall_attempts: u32,
    guard_retries: u32,
    /// The model was asked once to correct unsourced prices or codes.
    grounding_corrected: bool,
    /// Tool rounds since the last wrap-up prompt.
    segment_rounds: u32,
}

/// What a model call leaves the turn's loop to do.
enum ModelRound {
    /// The stream completed.
    Answered(RoundResult),
    /// Run the round again (after a stall, or on the fallback): not a new model call.
    Retry,
    /// The turn is over: cancelled or failed, its terminal event sent.
    Ended(TurnOutcome),
}

/// The turn's tool sink: every event to the listeners, and a delegated sub-agent's
/// progress into the turn's scratchpad too (it reaches the listeners without the turn).
struct SubAgentRecorder {
    inner: Arc<dyn EventSink>,
    pad: Arc<Scratchpad>,
    clock: Arc<dyn Clock>,
}

impl EventSink for SubAgentRecorder {
    fn emit(&self, event: RuntimeEvent) {
        if let RuntimeEvent::SubAgent {
            agent,
            call_id,
            kind,
            text,
        } = &event
        {
            self.pad.record(
                &ScratchpadRecord::SubAgent {
                    agent: agent.clone(),
                    call_id: call_id.clone(),
                    kind: kind.clone(),
                    text: text.clone(),
                },
                self.clock.now(),
            );
        }
        self.inner.emit(event);
    }

    fn record(&self, record: &ScratchpadRecord) {
        self.pad.record(record, self.clock.now());
    }
}

impl<'a> Turn<'a> {
    fn new(
        rt: &'a Runtime,
        sink: Arc<dyn EventSink>,
        cancel: CancellationToken,
        system_prompt: &'a str,
        user_input: &'a str,
        transcript: &'a dyn Transcript,
    ) -> Self {
        let env = rt.exec_env(sink.clone(), cancel.clone());
        Turn {
            rt,
            sink,
            cancel,
            env,
            system_prompt,
            user_input,
            started: Instant::now(),
            scratchpad: None,
            usage: Usage::default(),
            rounds: 0,
            transcript,
            results: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Adds a message to the conversation and the transcript.
    fn append(&self, messages: &mut Vec<Message>, message: Message) {
        self.transcript.append(&message);
        messages.push(message);
    }

    fn emit(&self, event: RuntimeEvent) {
        self.sink.emit(event);
    }

    fn record(&self, record: ScratchpadRecord) {
        if let Some(pad) = &self.scratchpad {
            pad.record(&record, self.rt.clock.now());
        }
    }

    fn elapsed_ms(&self) -> u32 {
        u32::try_from(self.started.elapsed().as_millis()).unwrap_or(u32::MAX)
    }

    /// The turn as a sequence of steps: open it, then round after round (limits,
    /// background completions, compaction, model call, tools) until an answer, a limit,
    /// a failure or a cancel ends it with exactly one terminal event.
    async fn run(&mut self, messages: &mut Vec<Message>) -> TurnOutcome {
        let mut state = self.start(messages);
        // A retried round (after a stall, or on the fallback) is not a new model call.
        let mut retrying = false;
        loop {
            if self.cancel.is_cancelled() {
                return self.cancelled(messages);
            }
            if !retrying && let ControlFlow::Break(outcome) = self.begin_round(messages, &mut state)
            {
                return outcome;
            }
            retrying = false;

            self.deliver_background_completions(messages).await;
            // The schemas go into the estimate and then into the request.
            let tools = self.tool_schemas();
            self.compact_context(messages, &tools, state.provider.as_ref())
                .await;
            let round = match self.call_model(messages, tools, &mut state).await {
                ModelRound::Answered(round) => round,
                ModelRound::Retry => {
                    retrying = true;
                    continue;
                }
                ModelRound::Ended(outcome) => return outcome,
            };
            self.count_round(&round);

            if !round.tool_calls.is_empty() {
                if let ControlFlow::Break(outcome) =
                    self.run_tool_round(messages, round, &mut state).await
                {
                    return outcome;
                }
                continue;
            }
            // A text answer. Did the model skip a tool the request needs?
            if self.retry_for_missing_tool(messages, &round, &mut state) {
                continue;
            }
            let mut grounding = self.ground(messages, &round.text);
            if self.correct_ungrounded(messages, &round, &grounding, &mut state) {
                continue;
            }
            grounding.corrected = state.grounding_corrected;
            return self.finish_with_answer(messages, round, grounding);
        }
    }

    /// Opens the turn: the scratchpad and its `init` record, then (on a user's turn) the
    /// user's message, after answering any call a killed turn left open. The loop
    /// starts on the main provider with nothing counted.
    fn start(&mut self, messages: &mut Vec<Message>) -> LoopState {
        let rt = self.rt;
        let has_input = !self.user_input.trim().is_empty();
        // Every turn leaves a trace, the ones a finished background task starts too.
        let trigger = if has_input {
            TurnTrigger::User
        } else {
            TurnTrigger::BackgroundCompletion
        };
        self.open_scratchpad(has_input);
        self.record(ScratchpadRecord::Init {
            session_id: rt.config.session_id.clone(),
            trigger,
            user_input: self.user_input.to_owned(),
            system_prompt: self.system_prompt.to_owned(),
            tools: rt.registry.names(),
            provider: rt.provider.name().to_owned(),
            model: rt.provider.model().to_owned(),
        });
        if has_input {
            // A turn killed mid-tool (crash, kill -9) left its call unanswered in the
            // stored history; vendors refuse such a conversation, so answer it first.
            self.answer_open_calls(messages);
            messages.push(Message::user(self.user_input));
        }
        let expectation: Option<TurnExpectation> = if rt.config.loop_guard && has_input {
            loop_guard::resolve_expectation(self.user_input)
                .filter(|e| rt.registry.contains(&e.tool))
        } else {
            None
        };
        LoopState {
            expectation,
            provider: rt.provider.clone(),
            on_fallback: false,
            used: Vec::new(),
            doom: DoomLoopDetector::new(),
            stall_attempts: 0,
            guard_retries: 0,
            grounding_corrected: false,
            segment_rounds: 0,
        }
    }

    /// Creates the turn's scratchpad (when the runtime keeps them) and routes the tools'
    /// events through it, so a delegated sub-agent's progress is recorded too. A
    /// scratchpad that can't be created costs a warning, never the turn.
    fn open_scratchpad(&mut self, has_input: bool) {
        let rt = self.rt;
        if let Some(dir) = &rt.scratchpad_dir {
            let named_after = if has_input {
                self.user_input
            } else {
                "background_completion"
            };
            match Scratchpad::create(dir, named_after, rt.clock.now()) {
                Ok(pad) => {
                    let pad = Arc::new(pad);
                    self.env.sink = Arc::new(SubAgentRecorder {
                        inner: self.sink.clone(),
                        pad: pad.clone(),
                        clock: rt.clock.clone(),
                    });
                    self.scratchpad = Some(pad);
                }
                Err(e) => tracing::warn!("scratchpad unavailable: {e}"),
            }
        }
    }

    /// Counts the next model call, or ends the turn (done, with a warning) once the
    /// turn's call limit is reached. After a segment's worth of tool rounds it first asks
    /// the model to wrap up, with an internal prompt the end of the turn removes.
    fn begin_round(
        &mut self,
        messages: &mut Vec<Message>,
        state: &mut LoopState,
    ) -> ControlFlow<TurnOutcome> {
        let rt = self.rt;
        if self.rounds >= rt.config.max_total_rounds {
            let text = format!(
                "（本轮已达到 {} 次模型调用上限，已停止。请输入「继续」完成剩余分析。）",
                rt.config.max_total_rounds
            );
            self.emit(RuntimeEvent::Warning {
                message: text.clone(),
            });
            return ControlFlow::Break(self.done(messages, text, String::new(), None, None));
        }
        if state.segment_rounds >= rt.config.max_rounds_per_segment {
            state.segment_rounds = 0;
            self.emit(RuntimeEvent::Warning {
                message: format!(
                    "已连续 {} 轮调用工具，提示模型收尾",
                    rt.config.max_rounds_per_segment
                ),
            });
            messages.push(Message::user_with_origin(
                CONTINUE_PROMPT,
                UserOrigin::InternalRetry,
            ));
        }
        self.rounds += 1;
        ControlFlow::Continue(())
    }

    /// Hands the session's finished background tasks to the model: per completion the
    /// task's state, a scratchpad record and the notice go out, then its message joins
    /// the conversation. Only the conversation's main agent takes them.
    async fn deliver_background_completions(&self, messages: &mut Vec<Message>) {
        let rt = self.rt;
        // Completions belong to the conversation's main agent: a sub-agent shares the
        // session id (its tasks notify the parent) but never takes the notes.
        if let Some(bg) = rt.background.as_ref().filter(|_| rt.tool_proxy.is_none()) {
            for PendingNotice { notice, message } in bg.take_pending(&rt.config.session_id).await {
                if let Some(task) = bg.get(&notice.task_id) {
                    self.emit(RuntimeEvent::BackgroundTask { task });
                }
                self.record(ScratchpadRecord::Notification {
                    task_id: notice.task_id.clone(),
                    content: message.text().to_owned(),
                });
                // The notice goes out before its message is handed over: the session
                // stores the message with it.
                self.emit(RuntimeEvent::TaskNotice { notice });
                self.append(messages, message);
            }
        }
    }

    /// The tools this turn offers the model: a sub-agent's whitelist, else the registry.
    fn tool_schemas(&self) -> Vec<ToolSchema> {
        match &self.rt.tool_proxy {
            Some(proxy) => proxy.schemas(),
            None => self.rt.registry.schemas(None),
        }
    }

    /// Lets the compactor shrink the conversation before the request is built. A failed
    /// compaction is a warning and the round goes on uncompacted; so is a request still
    /// larger than the model's window (the vendor has the last word).
    async fn compact_context(
        &self,
        messages: &mut Vec<Message>,
        tools: &[ToolSchema],
        provider: &dyn Provider,
    ) {
        let rt = self.rt;
        match rt
            .compactor
            .maybe_compact(messages, self.system_prompt, tools, provider)
            .await
        {
            Ok(Some(report)) => {
                self.record(ScratchpadRecord::Compaction {
                    before_messages: report.before_messages,
                    after_messages: report.after_messages,
                    archive_ref: report.archive_ref.clone(),
                    summary_fallback: report.summary_fallback,
                    before: report.before,
                    after: report.after,
                });
                self.emit(RuntimeEvent::Compaction {
                    before_messages: report.before_messages,
                    after_messages: report.after_messages,
                    archive_ref: report.archive_ref,
                    summary_fallback: report.summary_fallback,
                });
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!("compaction failed: {e}");
                self.emit(RuntimeEvent::Warning {
                    message: format!("上下文压缩失败: {e}"),
                });
            }
        }
        if let Some(message) =
            rt.compactor
                .over_window(messages, self.system_prompt, tools, provider)
        {
            tracing::warn!("{message}");
            self.emit(RuntimeEvent::Warning { message });
        }
    }

    /// One model call: the request from the conversation as it stands, `model_start`
    /// naming who serves it, then the stream forwarded to the listeners. A cancel ends
    /// the turn; a failure goes to [`Turn::recover`].
    async fn call_model(
        &self,
        messages: &mut Vec<Message>,
        tools: Vec<ToolSchema>,
        state: &mut LoopState,
    ) -> ModelRound {
        let rt = self.rt;
        let request = ChatRequest {
            system: self.system_prompt.to_owned(),
            messages: messages.clone(),
            tools,
            max_tokens: rt.config.max_tokens,
        };
        let serving = state.provider.serving(&request);
        self.emit(RuntimeEvent::ModelStart {
            round: self.rounds,
            provider: serving.provider,
            model: serving.model,
            tier: serving.tier,
        });
        match stream_round(
            state.provider.as_ref(),
            &request,
            self.sink.as_ref(),
            &self.cancel,
        )
        .await
        {
            RoundEnd::Complete(r) => ModelRound::Answered(r),
            RoundEnd::Cancelled => ModelRound::Ended(self.cancelled(messages)),
            RoundEnd::Failed {
                error,
                streamed_text,
            } => self.recover(messages, error, streamed_text, state),
        }
    }

    /// What a failed model call costs. A stall is retried up to `stall_retries` times;
    /// then a retryable failure moves the turn to the fallback provider (once, with a
    /// fresh stall budget). Both run the round again; anything else fails the turn with
    /// the error's cause chain.
    fn recover(
        &self,
        messages: &mut Vec<Message>,
        error: LlmError,
        streamed_text: bool,
        state: &mut LoopState,
    ) -> ModelRound {
        let rt = self.rt;
        tracing::warn!(kind = ?error.kind, "model call failed: {}", error.message);
        if error.kind == ErrorKind::Timeout && state.stall_attempts < rt.config.stall_retries {
            // The retry event also tells listeners to drop this round's text.
            state.stall_attempts += 1;
            self.emit(RuntimeEvent::Retry {
                reason: format!("stream_timeout: {}", error.message),
                attempt: state.stall_attempts,
            });
            return ModelRound::Retry;
        }
        if let (Some(fb), false) = (&rt.fallback, state.on_fallback)
            && error.kind.is_retryable()
        {
            state.on_fallback = true;
            self.emit(RuntimeEvent::Fallback {
                from: state.provider.name().to_owned(),
                to: fb.name().to_owned(),
                reason: error.message.clone(),
                discard_text: streamed_text,
            });
            state.provider = fb.clone();
            state.stall_attempts = 0;
            return ModelRound::Retry;
        }
        let causes = error_chain(&error);
        ModelRound::Ended(self.failed(messages, error.kind, error.to_string(), causes))
    }

    /// Adds the round's tokens to the turn's and reports both; the model's thinking goes
    /// into the scratchpad.
    fn count_round(&mut self, round: &RoundResult) {
        self.usage.add(&round.usage);
        self.emit(RuntimeEvent::Usage {
            round: self.rounds,
            usage: round.usage,
            turn: self.usage,
        });
        if !round.thinking.is_empty() {
            self.record(ScratchpadRecord::Thinking {
                round: self.rounds,
                content: round.thinking.clone(),
            });
        }
    }

    /// A round that called tools: the calls are announced and their assistant message
    /// joins the conversation, the doom-loop check may stop the turn, then the calls run.
    /// Every call ends with a result in the conversation, whichever way this goes.
    async fn run_tool_round(
        &mut self,
        messages: &mut Vec<Message>,
        round: RoundResult,
        state: &mut LoopState,
    ) -> ControlFlow<TurnOutcome> {
        state.segment_rounds += 1;
        let calls = round.tool_calls;
        self.emit(RuntimeEvent::ToolCalls {
            calls: calls.clone(),
            discard_text: round.streamed_text,
        });
        self.append(
            messages,
            Message::Assistant {
                content: round.text,
                tool_calls: calls.clone(),
                reasoning: (!round.thinking.is_empty()).then_some(round.thinking),
                reasoning_signature: round.signature,
            },
        );
        state
            .used
            .extend(calls.iter().map(|c| (c.name.clone(), c.args.clone())));
        self.stop_doom_loop(messages, &calls, &mut state.doom)?;
        self.execute_tool_calls(messages, &calls).await
    }

    /// Ends the turn (done, with an explanation) when the model repeats a call with the
    /// same arguments: instead of running, every call of the round gets a `doom_loop`
    /// error result.
    fn stop_doom_loop(
        &self,
        messages: &mut Vec<Message>,
        calls: &[ToolCall],
        doom: &mut DoomLoopDetector,
    ) -> ControlFlow<TurnOutcome> {
        let doomed = calls
            .iter()
            .enumerate()
            .find_map(|(i, c)| doom.record(&c.name, &c.args).map(|why| (i, why)));
        let Some((at, why)) = doomed else {
            return ControlFlow::Continue(());
        };
        for (i, call) in calls.iter().enumerate() {
            let msg = if i == at {
                why.clone()
            } else {
                "工具调用已因 doom-loop 中止".to_owned()
            };
            let o = ToolOutcome::error(call, msg, "doom_loop");
            self.emit(RuntimeEvent::ToolError {
                id: o.call_id.clone(),
                name: o.name.clone(),
                error: o.error_text(),
            });
            self.append_outcome(messages, o);
        }
        let name = &calls[at].name;
        let text = format!(
            "已中止：模型反复以相同参数调用工具 `{name}`，疑似陷入死循环，本轮已停止。请换个问法或补充信息后重试。"
        );
        self.emit(RuntimeEvent::Warning { message: why });
        ControlFlow::Break(self.done(messages, text, String::new(), None, None))
    }

    /// Runs the round's calls and appends their results in call order. An aborted call
    /// or a cancel ends the turn, with every result already in place.
    async fn execute_tool_calls(
        &mut self,
        messages: &mut Vec<Message>,
        calls: &[ToolCall],
    ) -> ControlFlow<TurnOutcome> {
        let outcomes = self.rt.run_calls(calls, &self.env).await;
        self.count_sub_agent_usage(&outcomes);
        let aborted = outcomes.iter().any(|o| o.aborted);
        for o in outcomes {
            self.append_outcome(messages, o);
        }
        if aborted || self.cancel.is_cancelled() {
            return ControlFlow::Break(self.cancelled(messages));
        }
        ControlFlow::Continue(())
    }

    /// A sub-agent's tokens count in the turn's totals (and its cost): each delegation's
    /// usage is added and reported like a round's.
    fn count_sub_agent_usage(&mut self, outcomes: &[ToolOutcome]) {
        for o in outcomes {
            let spent = crate::subagents::role_for_tool(&o.name)
                .and(o.result.get("usage"))
                .and_then(|u| serde_json::from_value::<Usage>(u.clone()).ok());
            if let Some(u) = spent {
                self.usage.add(&u);
                self.emit(RuntimeEvent::Usage {
                    round: self.rounds,
                    usage: u,
                    turn: self.usage,
                });
            }
        }
    }

    /// The loop guard on a text answer. When the request needs a tool the model never
    /// called, it queues an internal retry prompt (removed at the end of the turn) and
    /// returns `true` for another round, up to `loop_guard_retries` times; after that it
    /// warns and lets the answer stand.
    fn retry_for_missing_tool(
        &self,
        messages: &mut Vec<Message>,
        round: &RoundResult,
        state: &mut LoopState,
    ) -> bool {
        let rt = self.rt;
        if let Some(exp) = &state.expectation
            && !loop_guard::is_satisfied(exp, &state.used)
        {
            if state.guard_retries < rt.config.loop_guard_retries {
                state.guard_retries += 1;
                if !round.text.trim().is_empty() {
                    messages.push(Message::assistant(round.text.clone()));
                }
                messages.push(Message::user_with_origin(
                    loop_guard::retry_prompt(exp, &round.text),
                    UserOrigin::InternalRetry,
                ));
                self.emit(RuntimeEvent::Retry {
                    reason: format!("loop_guard: 需要先调用 {}", exp.tool),
                    attempt: state.guard_retries,
                });
                return true;
            }
            self.emit(RuntimeEvent::Warning {
                message: loop_guard::exhausted_warning(exp, state.guard_retries),
            });
        }
        false
    }

    /// Where the answer's numbers and codes came from: the conversation's tool results
    /// and user messages, with this turn's results in full.
    fn ground(&self, messages: &[Message], answer: &str) -> Grounding {
        let mut inputs = grounding::Inputs::from_messages(messages);
        if let Ok(results) = self.results.lock() {
            for (id, name, value) in results.iter() {
                inputs.put_tool(id, name, value.clone());
            }
        }
        inputs.check(answer)
    }

    /// The grounding check on a text answer. When it states a price or a stock code that
    /// no input holds, the model gets one internal note (removed at the end of the turn,
    /// with the answer it corrected) and another round; whatever it answers then stands,
    /// marked. A sub-agent's answer goes to its parent unchecked here.
    fn correct_ungrounded(
        &self,
        messages: &mut Vec<Message>,
        round: &RoundResult,
        grounding: &Grounding,
        state: &mut LoopState,
    ) -> bool {
        if state.grounding_corrected
            || self.rt.tool_proxy.is_some()
            || !grounding.needs_correction()
        {
            return false;
        }
        state.grounding_corrected = true;
        messages.push(Message::assistant(round.text.clone()));
        messages.push(Message::user_with_origin(
            grounding::correction_prompt(grounding),
            UserOrigin::InternalRetry,
        ));
        let listed: Vec<&str> = grounding
            .unsupported_claims()
            .map(|c| c.text.as_str())
            .collect();
        self.emit(RuntimeEvent::Retry {
            reason: format!("grounding: 无来源 {}", listed.join(", ")),
            attempt: 1,
        });
        true
    }

    /// Ends the turn with the model's text answer, warning first when the answer hit the
    /// model's output limit.
    fn finish_with_answer(
        &self,
        messages: &mut Vec<Message>,
        round: RoundResult,
        grounding: Grounding,
    ) -> TurnOutcome {
        if round.finish == Some(FinishReason::Length) {
            self.emit(RuntimeEvent::Warning {
                message: "模型输出达到单次长度上限，回答可能不完整。".to_owned(),
            });
        }
        self.done(
            messages,
            round.text,
            round.thinking,
            round.signature,
            Some(grounding),
        )
    }

    fn append_outcome(&self, messages: &mut Vec<Message>, o: ToolOutcome) {
        if !o.is_error
            && !o.aborted
            && let Ok(mut results) = self.results.lock()
        {
            results.push((o.call_id.clone(), o.name.clone(), o.result.clone()));
        }
        let status = if o.aborted {
            "aborted"
        } else if o.is_error {
            "error"
        } else {
            "ok"
        };
        self.record(ScratchpadRecord::ToolResult {
            id: o.call_id.clone(),
            tool_name: o.name.clone(),
            args: o.args.clone(),
            result: o.result.clone(),
            status: status.to_owned(),
            duration_ms: o.elapsed_ms,
        });
        self.append(
            messages,
            Message::Tool {
                tool_call_id: o.call_id,
                name: o.name,
                content: o.content,
                is_error: o.is_error,
            },
        );
    }

    fn done(
        &self,
        messages: &mut Vec<Message>,
        text: String,
        thinking: String,
        signature: Option<String>,
        grounding: Option<Grounding>,
    ) -> TurnOutcome {
        self.answer_open_calls(messages);
        remove_internal(messages);
        self.append(
            messages,
            Message::Assistant {
                content: text.clone(),
                tool_calls: Vec::new(),
                reasoning: (!thinking.is_empty()).then_some(thinking),
                reasoning_signature: signature,
            },
        );
        let elapsed_ms = self.elapsed_ms();
        self.record(ScratchpadRecord::Final {
            content: text.clone(),
            usage: self.usage,
            rounds: self.rounds,
            elapsed_ms,
        });
        tracing::info!(rounds = self.rounds, elapsed_ms, "turn done");
        self.emit(RuntimeEvent::Done {
            text: text.clone(),
            elapsed_ms,
            grounding,
        });
        TurnOutcome::Done {
            text,
            usage: self.usage,
            rounds: self.rounds,
        }
    }

    fn cancelled(&self, messages: &mut Vec<Message>) -> TurnOutcome {
        self.answer_open_calls(messages);
        remove_internal(messages);
        self.record(ScratchpadRecord::Error {
            kind: ErrorKind::Cancelled,
            message: "cancelled by user".to_owned(),
            causes: Vec::new(),
            elapsed_ms: self.elapsed_ms(),
        });
        tracing::info!("turn cancelled");
        self.emit(RuntimeEvent::TurnCancelled {});
        TurnOutcome::Cancelled
    }

    fn failed(
        &self,
        messages: &mut Vec<Message>,
        kind: ErrorKind,
        message: String,
        causes: Vec<String>,
    ) -> TurnOutcome {
        self.answer_open_calls(messages);
        remove_internal(messages);
        self.record(ScratchpadRecord::Error {
            kind,
            message: message.clone(),
            causes,
            elapsed_ms: self.elapsed_ms(),
        });
        tracing::warn!(?kind, "turn failed: {message}");
        self.emit(RuntimeEvent::TurnFailed {
            kind,
            message: message.clone(),
        });
        TurnOutcome::Failed { kind, message }
    }

    /// Gives every unanswered call of the last tool-calling message an aborted result.
    fn answer_open_calls(&self, messages: &mut Vec<Message>) {
        let Some(pos) = messages.iter().rposition(
            |m| matches!(m, Message::Assistant { tool_calls, .. } if !tool_calls.is_empty()),
        ) else {
            return;
        };
        let answered: Vec<String> = messages[pos + 1..]
            .iter()
            .filter_map(|m| match m {
                Message::Tool { tool_call_id, .. } => Some(tool_call_id.clone()),
                _ => None,
            })
            .collect();
        let open: Vec<ToolCall> = messages[pos]
            .tool_calls()
            .iter()
            .filter(|c| !answered.contains(&c.id))
            .cloned()
            .collect();
        for call in open {
            let o = ToolOutcome::aborted(&call);
            self.emit(RuntimeEvent::ToolError {
                id: o.call_id.clone(),
                name: o.name.clone(),
                error: o.error_text(),
            });
            self.append_outcome(messages, o);
        }
    }
}

/// Drops the loop guard's retry prompts (and the text answers they corrected) and the
/// runtime's continuation prompts: they were for this turn only.
pub fn remove_internal(messages: &mut Vec<Message>) {
    let mut keep = vec![true; messages.len()];
    for (i, m) in messages.iter().enumerate() {
        if let Message::User {
            origin: UserOrigin::InternalRetry,
            ..
        } = m
        {
            keep[i] = false;
            if i > 0
                && let Message::Assistant { tool_calls, .. } = &messages[i - 1]
                && tool_calls.is_empty()
            {
                keep[i - 1] = false;
            }
        }
    }
    let mut idx = 0;
    messages.retain(|_| {
        let k = keep[idx];
        idx += 1;
        k
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remove_internal_keeps_tool_exchange() {
        let call = ToolCall::new("c1", "analyze_stock", serde_json::json!({"code": "600519"}));
        let mut m = vec![
            Message::user("分析 600519"),
            Message::assistant("茅台不错"),
            Message::user_with_origin("必须先调用", UserOrigin::InternalRetry),
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![call.clone()],
                reasoning: None,
                reasoning_signature: None,
            },
            Message::tool_result(&call, "{}", false),
            Message::user_with_origin("继续", UserOrigin::InternalRetry),
            Message::user_with_origin("bg done", UserOrigin::SystemNotification),
        ];
        remove_internal(&mut m);
        assert_eq!(m.len(), 4);
        assert_eq!(m[0], Message::user("分析 600519"));
        assert_eq!(m[1].tool_calls().len(), 1);
        assert!(matches!(
            m[3],
            Message::User {
                origin: UserOrigin::SystemNotification,
                ..
            }
        ));
    }
}
