//! The conversation hub: the one place that decides when a turn may run in a conversation
//! (one at a time), cancels it, answers finished background tasks (seed §7.4: at once when
//! the conversation is idle, at the next round of a running turn, or right after it) and
//! ends a conversation's session (memory extraction). The app adapts it to IPC, `wyckoff
//! run` to stdout; neither decides anything itself. User turns and follow-up turns leave
//! through the same [`TurnOutput`].

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex as StdMutex, Weak};
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{Mutex, oneshot, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use wyckoff_agent::{ApprovalGate, Approver, EventSink, ToolOutcome, TurnOutcome};
use wyckoff_config::Settings;
use wyckoff_inbox::DecidedNotice;
use wyckoff_memory::ExtractionOutcome;
use wyckoff_protocol::{ErrorKind, RuntimeEvent, TaskInfo, ToolCall, TurnKind};

use crate::{ModelOverrides, Services, Session, SessionError, SessionOptions};

mod attendance;

pub use attendance::Attendance;
use attendance::TurnApprover;

/// A turn as its output sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnMeta {
    pub conversation_id: String,
    /// Tells this turn from every other turn of this process (1, 2, …).
    pub turn: u32,
    pub kind: TurnKind,
    /// What the caller of [`ConversationHub::start_turn`] passed to recognise its turn's
    /// events (the app's window tags its sends); `None` on follow-up turns.
    pub client_ref: Option<String>,
}

/// Where turns' events go: one sink per turn, user and follow-up turns alike.
pub trait TurnOutput: Send + Sync {
    fn sink(&self, turn: &TurnMeta) -> Arc<dyn EventSink>;
}

/// How a turn ended, once its messages and outcome were stored.
#[derive(Debug, Clone)]
pub struct TurnEnd {
    pub meta: TurnMeta,
    pub outcome: TurnOutcome,
    /// Set when storing the turn failed (its events, the terminal one too, went out).
    pub save_error: Option<String>,
}

/// What every session of the hub is built with.
pub struct HubOptions {
    /// The CLI's model flags; the app passes none (the settings' models).
    pub overrides: ModelOverrides,
    /// Answers approvals: `HeadlessApprover` in the CLI, `PendingApprovals` in the app.
    pub approver: Arc<dyn Approver>,
    pub output: Arc<dyn TurnOutput>,
}

/// A turn that started.
#[derive(Debug)]
pub struct StartedTurn {
    pub meta: TurnMeta,
    /// Resolves when the turn has ended and was stored.
    pub end: oneshot::Receiver<TurnEnd>,
}

/// How [`ConversationHub::settle`] ended.
#[derive(Debug)]
pub enum Settled {
    /// Nothing of the conversation runs and every completion was answered; the last
    /// follow-up turn that ended meanwhile, if any.
    Quiet(Option<TurnEnd>),
    /// The wait passed with these tasks still running; they were cancelled.
    TimedOut(Vec<TaskInfo>),
    /// Cancelled: the conversation's tasks and turn were cancelled.
    Cancelled,
}

/// A conversation's session, kept between its turns.
struct OpenSession {
    session: Mutex<Session>,
    gate: Arc<ApprovalGate>,
    approver: Arc<TurnApprover>,
}

struct RunningTurn {
    turn: u32,
    cancel: CancellationToken,
}

#[derive(Default)]
struct Conversations {
    open: HashMap<String, Arc<OpenSession>>,
    /// The turn each busy conversation runs: no other starts until its terminal event.
    running: HashMap<String, RunningTurn>,
    /// Turns started and not yet stored, per conversation.
    in_flight: HashMap<String, usize>,
    /// Each conversation's last stored turn.
    last_end: HashMap<String, TurnEnd>,
    /// Conversations whose completions are no longer answered (a cancelled or timed-out
    /// headless run is on its way out).
    held: HashSet<String>,
    /// Decided inbox calls waiting for a turn of their conversation, answered like task
    /// completions.
    notices: HashMap<String, Vec<DecidedNotice>>,
}

pub struct ConversationHub {
    services: Arc<Services>,
    options: HubOptions,
    state: StdMutex<Conversations>,
    next_turn: AtomicU32,
    /// Bumped whenever a turn starts or ends (waiters look again).
    changed: watch::Sender<u64>,
    turns: TaskTracker,
    closed: CancellationToken,
}

impl ConversationHub {
    /// A hub over the process's services. Must be called inside a tokio runtime: it
    /// starts watching the background tasks for completions to answer.
    pub fn new(services: Arc<Services>, options: HubOptions) -> Arc<ConversationHub> {
        let hub = Arc::new(ConversationHub {
            services,
            options,
            state: StdMutex::new(Conversations::default()),
            next_turn: AtomicU32::new(1),
            changed: watch::Sender::new(0),
            turns: TaskTracker::new(),
            closed: CancellationToken::new(),
        });
        hub.watch_tasks();
        hub
    }

    pub fn services(&self) -> &Arc<Services> {
        &self.services
    }

    /// The model flags every session of the hub is built with.
    pub fn overrides(&self) -> &ModelOverrides {
        &self.options.overrides
    }

    /// Starts the user's turn in `conversation` (a new conversation when `None`).
    /// Refused — before anything is stored — when a turn runs there, when `text` is empty
    /// or names an unknown `/skill`, or when the session cannot be built (no model, no key).
    pub async fn start_turn(
        self: &Arc<Self>,
        conversation: Option<&str>,
        text: &str,
        client_ref: Option<String>,
    ) -> Result<StartedTurn, SessionError> {
        self.start_turn_as(conversation, text, client_ref, Attendance::Attended)
            .await
    }

    /// [`Self::start_turn`] with who answers its approvals: a schedule's turn runs
    /// [`Attendance::Unattended`], its calls queued in the inbox. The conversation's
    /// follow-up turns keep the answerer of its last turn.
    pub async fn start_turn_as(
        self: &Arc<Self>,
        conversation: Option<&str>,
        text: &str,
        client_ref: Option<String>,
        attendance: Attendance,
    ) -> Result<StartedTurn, SessionError> {
        if text.trim().is_empty() {
            return Err(SessionError::InvalidOption("the message is empty".into()));
        }
        self.services.skills().current().expand(text)?;
        if let Some(id) = conversation
            && self.is_running(id)
        {
            return Err(SessionError::Busy(id.to_owned()));
        }
        let started = self
            .start(
                conversation,
                text,
                TurnKind::User,
                client_ref,
                Some(attendance),
            )
            .await?;
        // Someone is back in the conversation: its completions are answered again (a run
        // that timed out or was cancelled stopped answering them).
        let id = &started.meta.conversation_id;
        self.with_state(|s| s.held.remove(id));
        Ok(started)
    }

    /// Cancels the conversation's running turn; false when none runs.
    pub fn cancel(&self, conversation_id: &str) -> bool {
        let token = self.with_state(|s| s.running.get(conversation_id).map(|t| t.cancel.clone()));
        token.flatten().map(|t| t.cancel()).is_some()
    }

    /// A turn runs in the conversation (until its terminal event).
    pub fn is_running(&self, conversation_id: &str) -> bool {
        self.with_state(|s| s.running.contains_key(conversation_id))
            .unwrap_or(false)
    }

    /// The approval gate of the conversation's open session ("always allow" lives there).
    pub fn gate(&self, conversation_id: &str) -> Option<Arc<ApprovalGate>> {
        self.with_state(|s| s.open.get(conversation_id).map(|o| o.gate.clone()))
            .flatten()
    }

    /// Takes changed settings in place ([`Services::apply_settings`]); idle sessions, built
    /// from the old ones, are dropped so their next turn uses the new models and limits.
    pub async fn apply_settings(&self, settings: Settings) -> Result<bool, SessionError> {
        let changed = self.services.apply_settings(settings).await?;
        if changed {
            self.with_state(|s| {
                let running: HashSet<String> = s.running.keys().cloned().collect();
                s.open.retain(|id, _| running.contains(id));
            });
        }
        Ok(changed)
    }

    /// The user left the conversation: its session ends and what is worth remembering is
    /// extracted. `None` (nothing done) while a turn runs there or when it was not open.
    pub async fn leave(
        &self,
        conversation_id: &str,
    ) -> Option<Result<ExtractionOutcome, SessionError>> {
        let open = self
            .with_state(|s| {
                if s.running.contains_key(conversation_id) {
                    None
                } else {
                    s.open.remove(conversation_id)
                }
            })
            .flatten()?;
        Some(extract(&open).await)
    }

    /// Session end for every open conversation (the app quits), bounded by `deadline` so
    /// quitting never hangs on a slow model.
    pub async fn leave_all(&self, deadline: Duration) {
        let open: Vec<Arc<OpenSession>> = self
            .with_state(|s| s.open.drain().map(|(_, o)| o).collect())
            .unwrap_or_default();
        let all = extract_all(open);
        if tokio::time::timeout(deadline, all).await.is_err() {
            tracing::warn!("memory extraction on exit took over {deadline:?}; skipped the rest");
        }
    }

    /// Forgets the conversation's session without extracting anything (it was deleted).
    pub fn forget(&self, conversation_id: &str) {
        self.with_state(|s| s.open.remove(conversation_id));
    }

    /// Waits until nothing of the conversation runs — no turn, no task, no completion
    /// left to answer — running the follow-up turns completions need. Tasks still running
    /// after `wait` are cancelled ([`Settled::TimedOut`]); `cancel` cancels the tasks and
    /// the running turn. After either, the conversation's completions are not answered.
    pub async fn settle(
        self: &Arc<Self>,
        conversation_id: &str,
        wait: Duration,
        cancel: &CancellationToken,
    ) -> Result<Settled, SessionError> {
        let floor = self.next_turn.load(Ordering::SeqCst);
        let deadline = tokio::time::Instant::now() + wait;
        let tasks = self.services.background().clone();
        let mut task_changes = tasks.subscribe();
        let mut turn_changes = self.changed.subscribe();
        loop {
            turn_changes.borrow_and_update();
            if cancel.is_cancelled() {
                self.hold(conversation_id);
                tasks.cancel_session(conversation_id);
                self.cancel(conversation_id);
                self.wait_until_stored(conversation_id).await;
                return Ok(Settled::Cancelled);
            }
            let in_flight = self.in_flight(conversation_id);
            if !in_flight {
                // Only a turn that started is a reason to look again at once: a completion
                // that cannot be answered now (the conversation is held, or another turn
                // took it) is waited for below like any other change, never spun on.
                if (tasks.has_notifications(conversation_id) || self.has_notices(conversation_id))
                    && (self.deliver_now(conversation_id).await?.is_some()
                        || self.in_flight(conversation_id))
                {
                    continue;
                }
                if active(&tasks, conversation_id).is_empty() {
                    let last = self
                        .with_state(|s| s.last_end.get(conversation_id).cloned())
                        .flatten()
                        .filter(|e| e.meta.turn >= floor);
                    return Ok(Settled::Quiet(last));
                }
            }
            tokio::select! {
                _ = cancel.cancelled() => {}
                _ = turn_changes.changed() => {}
                r = task_changes.recv() => {
                    if let Err(RecvError::Closed) = r {
                        return Ok(Settled::Quiet(None));
                    }
                }
                // A follow-up turn under way is waited for, not cut.
                _ = tokio::time::sleep_until(deadline), if !in_flight => {
                    self.hold(conversation_id);
                    let still = active(&tasks, conversation_id);
                    tasks.cancel_session(conversation_id);
                    return Ok(Settled::TimedOut(still));
                }
            }
        }
    }

    /// Runs a call the approval inbox allowed in the conversation's session, outside any
    /// turn: through its registry and approval gate, preapproved for this call id only
    /// (the inbox decision is the approval; every other rule of the gate still applies).
    /// Refused while a turn runs there.
    pub async fn run_approved_call(
        &self,
        conversation_id: &str,
        call: &ToolCall,
        sink: Arc<dyn EventSink>,
        cancel: CancellationToken,
    ) -> Result<ToolOutcome, SessionError> {
        if self.is_running(conversation_id) {
            return Err(SessionError::Busy(conversation_id.to_owned()));
        }
        let (_, open) = self.open(Some(conversation_id)).await?;
        // The call's result joins the conversation's history: no other process may be
        // writing a turn there meanwhile.
        let lease = self.next_turn.fetch_add(1, Ordering::SeqCst);
        self.take_lease(conversation_id, lease).await?;
        let outcome = {
            let session = open.session.lock().await;
            let runtime = session.runtime();
            runtime.gate().preapprove(&call.id);
            let env = runtime.exec_env(sink, cancel);
            runtime.registry().execute(call, &env).await
        };
        self.release_lease(conversation_id, lease).await;
        Ok(outcome)
    }

    /// Hands the conversation a decided inbox call's notice and answers it in a follow-up
    /// turn: now when the conversation is idle (the turn is returned), else right after
    /// its running turn.
    pub async fn follow_up_with(
        self: &Arc<Self>,
        conversation_id: &str,
        notice: DecidedNotice,
    ) -> Result<Option<StartedTurn>, SessionError> {
        self.with_state(|s| {
            s.notices
                .entry(conversation_id.to_owned())
                .or_default()
                .push(notice)
        });
        self.deliver_now(conversation_id).await
    }

    fn has_notices(&self, conversation_id: &str) -> bool {
        self.with_state(|s| {
            s.notices
                .get(conversation_id)
                .is_some_and(|n| !n.is_empty())
        })
        .unwrap_or(false)
    }

    /// Stops answering completions, cancels every running turn and waits for them to be
    /// stored (a headless run exits; the app quits).
    pub async fn close(&self) {
        self.closed.cancel();
        let tokens: Vec<CancellationToken> = self
            .with_state(|s| s.running.values().map(|t| t.cancel.clone()).collect())
            .unwrap_or_default();
        for token in tokens {
            token.cancel();
        }
        self.turns.close();
        self.turns.wait().await;
    }

    fn with_state<T>(&self, f: impl FnOnce(&mut Conversations) -> T) -> Option<T> {
        match self.state.lock() {
            Ok(mut s) => Some(f(&mut s)),
            Err(poisoned) => Some(f(&mut poisoned.into_inner())),
        }
    }

    fn in_flight(&self, conversation_id: &str) -> bool {
        self.with_state(|s| s.in_flight.get(conversation_id).is_some_and(|n| *n > 0))
            .unwrap_or(false)
    }

    /// Holds the conversation for this process's `turn` across processes: the app, the
    /// daemon and other `wyckoff` commands share the data home.
    async fn take_lease(&self, conversation_id: &str, turn: u32) -> Result<(), SessionError> {
        let root = self.services.home().root().to_path_buf();
        let is_alive = move |owner: &str| wyckoff_config::lease::is_alive_at(&root, owner);
        match self
            .services
            .conversations()
            .take_lease(conversation_id, self.services.owner(), turn, &is_alive)
            .await?
        {
            None => Ok(()),
            Some(holder) => Err(SessionError::BusyElsewhere {
                conversation: conversation_id.to_owned(),
                since: holder.taken_at,
            }),
        }
    }

    /// Lets other processes run turns in the conversation again. A failure leaves a row
    /// that the next taker takes over once this process is gone.
    async fn release_lease(&self, conversation_id: &str, turn: u32) {
        if let Err(e) = self
            .services
            .conversations()
            .release_lease(conversation_id, self.services.owner(), turn)
            .await
        {
            tracing::warn!(conversation = %conversation_id, "cannot release the conversation's lease: {e}");
        }
    }

    fn hold(&self, conversation_id: &str) {
        self.with_state(|s| s.held.insert(conversation_id.to_owned()));
    }

    async fn wait_until_stored(&self, conversation_id: &str) {
        let mut changes = self.changed.subscribe();
        while self.in_flight(conversation_id) {
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    /// Answers the conversation's waiting completions in a follow-up turn, in the
    /// background, if it is idle (a running turn takes them at its next round, or this
    /// runs again when it ends).
    fn deliver(self: &Arc<Self>, conversation_id: &str) {
        let hub = Arc::downgrade(self);
        let id = conversation_id.to_owned();
        tokio::spawn(async move {
            let Some(hub) = hub.upgrade() else { return };
            if let Err(e) = hub.deliver_now(&id).await {
                tracing::warn!(conversation = %id, "cannot answer a task completion: {e}");
            }
        });
    }

    async fn deliver_now(
        self: &Arc<Self>,
        conversation_id: &str,
    ) -> Result<Option<StartedTurn>, SessionError> {
        let held = self
            .with_state(|s| s.held.contains(conversation_id))
            .unwrap_or(true);
        if held
            || self.closed.is_cancelled()
            || self.is_running(conversation_id)
            || !(self
                .services
                .background()
                .has_notifications(conversation_id)
                || self.has_notices(conversation_id))
        {
            return Ok(None);
        }
        match self
            .start(Some(conversation_id), "", TurnKind::FollowUp, None, None)
            .await
        {
            Ok(started) => Ok(Some(started)),
            // Another turn began meanwhile: it takes the completions (one of another
            // process leaves them for this process's next turn there).
            Err(SessionError::Busy(_) | SessionError::BusyElsewhere { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Follows the background tasks: a finished one is answered in its conversation.
    fn watch_tasks(self: &Arc<Self>) {
        let mut changes = self.services.background().subscribe();
        let hub: Weak<ConversationHub> = Arc::downgrade(self);
        let closed = self.closed.clone();
        tokio::spawn(async move {
            loop {
                let finished: Vec<String> = tokio::select! {
                    _ = closed.cancelled() => return,
                    r = changes.recv() => match r {
                        Ok(task) if task.status.is_finished() => {
                            task.session_id.into_iter().collect()
                        }
                        Ok(_) => continue,
                        // Missed changes: look at every conversation with a task.
                        Err(RecvError::Lagged(_)) => {
                            let Some(hub) = hub.upgrade() else { return };
                            let mut ids: Vec<String> = hub
                                .services
                                .background()
                                .list()
                                .into_iter()
                                .filter_map(|t| t.session_id)
                                .collect();
                            ids.dedup();
                            ids
                        }
                        Err(RecvError::Closed) => return,
                    },
                };
                let Some(hub) = hub.upgrade() else { return };
                for id in finished {
                    hub.deliver(&id);
                }
            }
        });
    }

    /// The conversation's open session, or a new one (a stored conversation, or a new
    /// conversation when `id` is `None`).
    async fn open(&self, id: Option<&str>) -> Result<(String, Arc<OpenSession>), SessionError> {
        if let Some(id) = id
            && let Some(open) = self.with_state(|s| s.open.get(id).cloned()).flatten()
        {
            return Ok((id.to_owned(), open));
        }
        let approver = Arc::new(TurnApprover::new(self.options.approver.clone()));
        let session = self
            .services
            .session(SessionOptions {
                overrides: self.options.overrides.clone(),
                continue_session: id.map(str::to_owned),
                approver: approver.clone(),
            })
            .await?;
        let id = session.id().to_owned();
        let open = Arc::new(OpenSession {
            gate: session.runtime().gate().clone(),
            session: Mutex::new(session),
            approver,
        });
        self.with_state(|s| s.open.insert(id.clone(), open.clone()));
        Ok((id, open))
    }

    /// The one rule: a conversation runs one turn at a time. `attendance` switches who
    /// answers its approvals (`None`: as in its last turn).
    async fn start(
        self: &Arc<Self>,
        conversation: Option<&str>,
        text: &str,
        kind: TurnKind,
        client_ref: Option<String>,
        attendance: Option<Attendance>,
    ) -> Result<StartedTurn, SessionError> {
        let (id, open) = self.open(conversation).await?;
        let cancel = CancellationToken::new();
        let turn = self
            .with_state(|s| {
                if s.running.contains_key(&id) {
                    return None;
                }
                let turn = self.next_turn.fetch_add(1, Ordering::SeqCst);
                s.running.insert(
                    id.clone(),
                    RunningTurn {
                        turn,
                        cancel: cancel.clone(),
                    },
                );
                *s.in_flight.entry(id.clone()).or_default() += 1;
                Some(turn)
            })
            .flatten()
            .ok_or_else(|| SessionError::Busy(id.clone()))?;
        if let Err(e) = self.take_lease(&id, turn).await {
            self.with_state(|s| {
                free(s, &id, turn);
                if let Some(n) = s.in_flight.get_mut(&id) {
                    *n = n.saturating_sub(1);
                }
            });
            self.changed.send_modify(|n| *n += 1);
            return Err(e);
        }
        // Only once the turn is this one's: a refused start changes nothing.
        match attendance {
            Some(Attendance::Attended) => open.approver.set(None),
            Some(Attendance::Unattended { requested_by }) => {
                open.approver
                    .set(Some(Arc::new(wyckoff_inbox::QueueApprover::new(
                        self.services.inbox().clone(),
                        self.services.clock().clone(),
                        wyckoff_inbox::policy::DEFAULT_EXPIRY,
                        requested_by,
                    ))))
            }
            None => {}
        }
        self.changed.send_modify(|n| *n += 1);
        let meta = TurnMeta {
            conversation_id: id,
            turn,
            kind,
            client_ref,
        };
        let (end_tx, end) = oneshot::channel();
        let hub = self.clone();
        let text = text.to_owned();
        let run_meta = meta.clone();
        self.turns.spawn(async move {
            let end = hub.run(run_meta, open, &text, cancel).await;
            let _ = end_tx.send(end);
        });
        Ok(StartedTurn { meta, end })
    }

    async fn run(
        self: Arc<Self>,
        meta: TurnMeta,
        open: Arc<OpenSession>,
        text: &str,
        cancel: CancellationToken,
    ) -> TurnEnd {
        let sink: Arc<dyn EventSink> = Arc::new(FreeOnTerminal {
            inner: self.options.output.sink(&meta),
            hub: Arc::downgrade(&self),
            conversation_id: meta.conversation_id.clone(),
            turn: meta.turn,
        });
        let result = {
            let mut session = open.session.lock().await;
            // Taken under the session lock: the turn that runs is the one that answers.
            let notices = self
                .with_state(|s| s.notices.remove(&meta.conversation_id))
                .flatten()
                .unwrap_or_default();
            for notice in notices {
                session.queue_notice(notice);
            }
            session.run_turn(text, sink.clone(), cancel).await
        };
        let (outcome, save_error) = match result {
            Ok(report) => (report.outcome, report.save_error.map(|e| e.to_string())),
            Err(e) => {
                // The turn never started: its output still gets its one terminal event.
                let message = e.to_string();
                sink.emit(RuntimeEvent::TurnFailed {
                    kind: ErrorKind::Internal,
                    message: message.clone(),
                });
                (
                    TurnOutcome::Failed {
                        kind: ErrorKind::Internal,
                        message,
                    },
                    None,
                )
            }
        };
        if let Some(e) = &save_error {
            tracing::error!(conversation = %meta.conversation_id, "turn not fully stored: {e}");
        }
        let id = meta.conversation_id.clone();
        self.release_lease(&id, meta.turn).await;
        let end = TurnEnd {
            meta,
            outcome,
            save_error,
        };
        self.with_state(|s| {
            free(s, &id, end.meta.turn);
            if let Some(n) = s.in_flight.get_mut(&id) {
                *n = n.saturating_sub(1);
            }
            s.last_end.insert(id.clone(), end.clone());
        });
        self.changed.send_modify(|n| *n += 1);
        // Completions that came too late for this turn.
        self.deliver(&id);
        end
    }
}

/// The conversation takes a new turn again (a later turn of it is left alone).
fn free(state: &mut Conversations, conversation_id: &str, turn: u32) {
    if state
        .running
        .get(conversation_id)
        .is_some_and(|r| r.turn == turn)
    {
        state.running.remove(conversation_id);
    }
}

/// Passes a turn's events on and frees its conversation at the terminal event, so the
/// user's next message is accepted at once (its turn then waits for this one's storage on
/// the session lock).
struct FreeOnTerminal {
    inner: Arc<dyn EventSink>,
    hub: Weak<ConversationHub>,
    conversation_id: String,
    turn: u32,
}

impl EventSink for FreeOnTerminal {
    fn emit(&self, event: RuntimeEvent) {
        let terminal = event.is_terminal();
        self.inner.emit(event);
        if terminal && let Some(hub) = self.hub.upgrade() {
            hub.with_state(|s| free(s, &self.conversation_id, self.turn));
            hub.changed.send_modify(|n| *n += 1);
        }
    }
}

fn active(tasks: &wyckoff_agent::BackgroundTaskManager, conversation_id: &str) -> Vec<TaskInfo> {
    tasks
        .list_for_session(conversation_id)
        .into_iter()
        .filter(|t| !t.status.is_finished())
        .collect()
}

/// Session end for one conversation (a failure costs the memories; it is logged).
async fn extract(open: &OpenSession) -> Result<ExtractionOutcome, SessionError> {
    let mut session = open.session.lock().await;
    let outcome = session.extract_memories().await;
    if let Err(e) = &outcome {
        tracing::warn!(conversation = %session.id(), "memory extraction failed: {e}");
    }
    outcome
}

/// Extracts every session's memories side by side.
async fn extract_all(open: Vec<Arc<OpenSession>>) {
    let mut set = tokio::task::JoinSet::new();
    for o in open {
        set.spawn(async move {
            let _ = extract(&o).await;
        });
    }
    while set.join_next().await.is_some() {}
}
