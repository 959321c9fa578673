//! Runs schedules: each pass takes every enabled schedule's latest due time
//! that no process has run yet and runs it — a model-free job as a background task, a
//! prompt as a turn of the schedule's own conversation through the hub, as a typed message
//! is. A due time the process missed runs once, late, marked as a catch-up (never one per
//! missed day); the claim on an occurrence is stored, so the app and a daemon on one data
//! home never both run it.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::TurnOutcome;
use wyckoff_market::TradingCalendar;
use wyckoff_protocol::TaskStatus;
use wyckoff_protocol::{RunReport, RunStatus};
use wyckoff_schedule::store::RunEnd;
use wyckoff_schedule::when::format_minute;
use wyckoff_schedule::{Job, Occurrence, Schedule, ScheduleStore, StoreError};
use wyckoff_time::to_beijing;

use crate::{Attendance, ConversationHub, SessionError};

/// How far back a pass looks for a missed due time.
const LOOKBACK_DAYS: i64 = 31;
/// A run that starts later than this after its due time is a catch-up (a running daemon
/// looks every 30 s; a pass this late means the due time found no process running).
const LATE_AFTER_MINUTES: i64 = 15;
/// Longest wait for a model-free job's task.
const TASK_WAIT: Duration = Duration::from_secs(4 * 3600);
/// Longest wait, by default, for the background tasks a prompt run started.
pub const SETTLE_WAIT: Duration = Duration::from_secs(600);
/// Characters of an answer or a task summary kept with the run.
const SUMMARY_CHARS: usize = 300;
/// Longest wait for a cancelled run (turn or task) to record its end.
const CANCEL_WAIT: Duration = Duration::from_secs(15);
/// The reason kept with a run the process cancelled because it was asked to stop.
pub const STOPPED: &str =
    "cancelled: the process was asked to stop (SIGTERM or Ctrl-C) before the run finished";

/// How a pass is asked to stop (the daemon got SIGTERM or Ctrl-C): first no new run is
/// claimed (`draining`), then the run in flight is cancelled (`abort`) — the caller
/// chooses how long a run may go on in between.
#[derive(Debug, Clone, Default)]
pub struct Stop {
    pub draining: CancellationToken,
    pub abort: CancellationToken,
}

#[derive(Debug, thiserror::Error)]
pub enum SchedulerError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("trading calendar: {0}")]
    Calendar(String),
}

pub struct Scheduler {
    hub: Arc<ConversationHub>,
    store: ScheduleStore,
    /// The stored calendar, read again at every pass so days another process learned
    /// (`data sync`) count in a long-running daemon.
    calendar: std::sync::RwLock<Arc<TradingCalendar>>,
    settle_wait: Duration,
}

impl Scheduler {
    /// The scheduler over the hub's services; runs left `running` by a process that is
    /// gone are marked interrupted (their due times are not run again).
    pub async fn open(
        hub: Arc<ConversationHub>,
        now: DateTime<Utc>,
    ) -> Result<Scheduler, SchedulerError> {
        let store = ScheduleStore::new(hub.services().pool().clone()).await?;
        let (calendar, _) = hub
            .services()
            .market()
            .current_calendar()
            .await
            .map_err(|e| SchedulerError::Calendar(e.to_string()))?;
        let root = hub.services().home().root().to_path_buf();
        let mine = hub.services().owner().to_owned();
        let alive =
            move |owner: &str| owner == mine || wyckoff_config::lease::is_alive_at(&root, owner);
        let marked = store.mark_interrupted(&alive, now).await?;
        if marked > 0 {
            tracing::info!(runs = marked, "scheduled runs marked interrupted");
        }
        Ok(Scheduler {
            hub,
            store,
            calendar: std::sync::RwLock::new(Arc::new(calendar)),
            settle_wait: SETTLE_WAIT,
        })
    }

    /// How long a prompt run waits for the background tasks its turn started before it
    /// cancels them and is recorded timed out.
    pub fn with_settle_wait(mut self, wait: Duration) -> Scheduler {
        self.settle_wait = wait;
        self
    }

    pub fn store(&self) -> &ScheduleStore {
        &self.store
    }

    pub fn calendar(&self) -> Arc<TradingCalendar> {
        match self.calendar.read() {
            Ok(c) => c.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Reads the stored calendar again; on failure the one held is kept (and logged).
    async fn refresh_calendar(&self) {
        match self.hub.services().market().current_calendar().await {
            Ok((calendar, _)) => {
                let mut held = match self.calendar.write() {
                    Ok(c) => c,
                    Err(poisoned) => poisoned.into_inner(),
                };
                *held = Arc::new(calendar);
            }
            Err(e) => tracing::warn!("cannot read the stored trading calendar: {e}"),
        }
    }

    /// Refuses, before anything is stored, a job that would fail at every due time: a
    /// prompt that is empty or names an unknown `/skill`, a task request that
    /// `wyckoff screen` (or its kind's command) would refuse.
    pub fn check_job(&self, job: &Job) -> Result<(), SessionError> {
        match job {
            Job::Task { request } => wyckoff_tools::jobs::check(request)
                .map_err(|e| SessionError::InvalidOption(e.to_string())),
            Job::Prompt { text } if text.trim().is_empty() => {
                Err(SessionError::InvalidOption("the prompt is empty".into()))
            }
            Job::Prompt { text } => {
                self.hub.services().skills().current().expand(text)?;
                Ok(())
            }
        }
    }

    /// The due time a pass at `now` would run for `schedule`, if any: its latest due time
    /// at or before `now`, not before the schedule was added.
    pub fn due(
        &self,
        schedule: &Schedule,
        now: DateTime<Utc>,
    ) -> Result<Option<Occurrence>, SchedulerError> {
        if !schedule.enabled {
            return Ok(None);
        }
        let latest = schedule
            .when
            .latest_at_or_before(to_beijing(now), &self.calendar(), LOOKBACK_DAYS)
            .map_err(StoreError::from)?;
        Ok(latest.filter(|o| o.at >= schedule.counted_from))
    }

    /// The next due time after `now`.
    pub fn next(
        &self,
        schedule: &Schedule,
        now: DateTime<Utc>,
    ) -> Result<Option<Occurrence>, SchedulerError> {
        Ok(schedule
            .when
            .next_after(to_beijing(now), &self.calendar())
            .map_err(StoreError::from)?)
    }

    /// One pass at `now`: every schedule due and not yet run, one after the other; then
    /// every push message that is due (fired alerts included).
    pub async fn pass(&self, now: DateTime<Utc>) -> Result<Vec<RunReport>, SchedulerError> {
        self.pass_until(now, &Stop::default()).await
    }

    /// [`Scheduler::pass`] that claims nothing more once `stop.draining` is cancelled and
    /// cancels its run in flight once `stop.abort` is; that run is recorded interrupted
    /// with [`STOPPED`] as its reason (its due time is not run again).
    pub async fn pass_until(
        &self,
        now: DateTime<Utc>,
        stop: &Stop,
    ) -> Result<Vec<RunReport>, SchedulerError> {
        let clock = moving_clock(now);
        let runs = self.run_due(now, stop, &clock).await;
        // Whatever a channel refused for a while (5xx, timeouts) goes out again once its
        // backoff is over, alerts as much as task, schedule and approval messages: in the
        // app's timer and the daemon's pass alike, even when no schedule could run, and
        // with no new alerts check.
        self.hub.services().push().deliver(clock()).await;
        runs
    }

    /// The schedules due at `now` and not yet run, one after the other.
    async fn run_due(
        &self,
        now: DateTime<Utc>,
        stop: &Stop,
        clock: &(dyn Fn() -> DateTime<Utc> + Sync),
    ) -> Result<Vec<RunReport>, SchedulerError> {
        self.refresh_calendar().await;
        let mut reports = Vec::new();
        let listing = self.store.list().await?;
        for damaged in &listing.damaged {
            // One damaged row never stops the others; it is named in `schedule list` too.
            tracing::warn!(schedule = %damaged.name, why = %damaged.why, "damaged schedule skipped");
        }
        for schedule in listing.schedules {
            if stop.draining.is_cancelled() {
                break;
            }
            let Some(due) = self.due(&schedule, now)? else {
                continue;
            };
            let late = to_beijing(now) - due.at > chrono::Duration::minutes(LATE_AFTER_MINUTES);
            let owner = self.hub.services().owner().to_owned();
            let Some(run_id) = self
                .store
                .claim(&schedule.name, &due, late, &owner, now)
                .await?
            else {
                continue;
            };
            tracing::info!(schedule = %schedule.name, due = %format_minute(due.at), catch_up = late, "scheduled run");
            let mut report = self.execute(&schedule, run_id, &stop.abort, clock).await?;
            report.occurrence = Some(format_minute(due.at));
            report.catch_up = late;
            report.assumed_trading_day = due.assumed_trading_day;
            reports.push(self.pushed(report, clock()).await);
        }
        Ok(reports)
    }

    /// Runs `name` now, outside its schedule (enabled or not).
    pub async fn run_now(
        &self,
        name: &str,
        now: DateTime<Utc>,
    ) -> Result<RunReport, SchedulerError> {
        let schedule = self.store.get(name).await?;
        let run_id = self
            .store
            .start_manual(name, self.hub.services().owner(), now)
            .await?;
        let clock = moving_clock(now);
        let report = self
            .execute(&schedule, run_id, &CancellationToken::new(), &clock)
            .await?;
        Ok(self.pushed(report, clock()).await)
    }

    async fn execute(
        &self,
        schedule: &Schedule,
        run_id: i64,
        abort: &CancellationToken,
        clock: &(dyn Fn() -> DateTime<Utc> + Sync),
    ) -> Result<RunReport, SchedulerError> {
        let (mut status, mut end) = match &schedule.job {
            Job::Task { request } => self.run_task(request, abort).await,
            Job::Prompt { text } => self.run_prompt(schedule, text, abort).await,
        };
        if abort.is_cancelled() && status != RunStatus::Done {
            // Cut short by a stop, not by a fault of the job: said as such.
            status = RunStatus::Interrupted;
            end.error = Some(STOPPED.to_owned());
        }
        self.store.finish(run_id, status, &end, clock()).await?;
        Ok(RunReport {
            schedule: schedule.name.clone(),
            run_id,
            occurrence: None,
            catch_up: false,
            assumed_trading_day: false,
            status,
            summary: end.summary,
            error: end.error,
            task_id: end.task_id,
            conversation_id: end.conversation_id,
        })
    }

    /// Tells the push channels that take finished schedules (queued and sent before the
    /// run is reported).
    async fn pushed(&self, report: RunReport, now: DateTime<Utc>) -> RunReport {
        self.hub
            .services()
            .push()
            .schedule_finished(&report, now)
            .await;
        report
    }

    async fn run_task(
        &self,
        request: &wyckoff_protocol::TaskRequest,
        abort: &CancellationToken,
    ) -> (RunStatus, RunEnd) {
        let services = self.hub.services();
        let started =
            wyckoff_tools::jobs::start(services.market(), services.background(), request).await;
        let task = match started {
            Ok(t) => t,
            Err(e) => {
                return (
                    RunStatus::Failed,
                    RunEnd {
                        error: Some(e.to_string()),
                        ..RunEnd::default()
                    },
                );
            }
        };
        let background = services.background();
        let finished = tokio::select! {
            finished = background.wait_for(&task.task_id, TASK_WAIT) => finished,
            () = abort.cancelled() => {
                background.cancel(&task.task_id);
                background.wait_for(&task.task_id, CANCEL_WAIT).await
            }
        };
        let mut end = RunEnd {
            task_id: Some(task.task_id.clone()),
            ..RunEnd::default()
        };
        let status = match finished {
            Some(t) if t.status == TaskStatus::Completed => {
                // The job's figures in a line (`wait_for` read the result); the start of
                // the stored result otherwise.
                let line = t
                    .result
                    .as_ref()
                    .and_then(|v| wyckoff_tools::job_summary::run_summary(request, v));
                end.summary = line.or_else(|| t.result_summary.as_deref().map(brief));
                RunStatus::Done
            }
            Some(t) => {
                end.error = Some(t.error.unwrap_or_else(|| format!("{:?}", t.status)));
                RunStatus::Failed
            }
            None => {
                end.error = Some(format!(
                    "still running after {} h",
                    TASK_WAIT.as_secs() / 3600
                ));
                RunStatus::Failed
            }
        };
        (status, end)
    }

    async fn run_prompt(
        &self,
        schedule: &Schedule,
        text: &str,
        abort: &CancellationToken,
    ) -> (RunStatus, RunEnd) {
        let fail = |e: SessionError, conversation_id: Option<String>| {
            (
                RunStatus::Failed,
                RunEnd {
                    error: Some(e.to_string()),
                    conversation_id,
                    ..RunEnd::default()
                },
            )
        };
        // Nobody is asked: what needs approval waits in the inbox, named after the schedule.
        let unattended = Attendance::Unattended {
            requested_by: format!("schedule:{}", schedule.name),
        };
        let started = match self
            .hub
            .start_turn_as(schedule.conversation_id.as_deref(), text, None, unattended)
            .await
        {
            Ok(s) => s,
            Err(e) => return fail(e, schedule.conversation_id.clone()),
        };
        let id = started.meta.conversation_id.clone();
        if schedule.conversation_id.as_deref() != Some(id.as_str())
            && let Err(e) = self.store.set_conversation(&schedule.name, &id).await
        {
            tracing::warn!(schedule = %schedule.name, "cannot keep its conversation: {e}");
        }
        let mut ended = started.end;
        let ended = tokio::select! {
            ended = &mut ended => ended,
            () = abort.cancelled() => {
                // The turn stops at its next step and is stored as cancelled.
                self.hub.cancel(&id);
                match tokio::time::timeout(CANCEL_WAIT, &mut ended).await {
                    Ok(ended) => ended,
                    Err(_) => return fail(
                        SessionError::InvalidOption("the cancelled turn did not end".into()),
                        Some(id),
                    ),
                }
            }
        };
        let Ok(mut end) = ended else {
            return fail(
                SessionError::InvalidOption("the turn ended without a report".into()),
                Some(id),
            );
        };
        let mut unsettled = None;
        if matches!(end.outcome, TurnOutcome::Done { .. }) {
            // Tasks the turn started are waited for and answered, as `wyckoff run` does.
            match self.hub.settle(&id, self.settle_wait, abort).await {
                Ok(crate::Settled::Quiet(Some(last))) => end = last,
                Ok(crate::Settled::Quiet(None)) => {}
                Ok(crate::Settled::TimedOut(still)) => unsettled = Some(still),
                Ok(crate::Settled::Cancelled) => end.outcome = TurnOutcome::Cancelled,
                Err(e) => return fail(e, Some(id)),
            }
        }
        let conversation_id = Some(id);
        if let (Some(still), TurnOutcome::Done { text, .. }) = (unsettled, &end.outcome) {
            let names: Vec<String> = still.iter().map(|t| t.task_id.clone()).collect();
            return (
                RunStatus::TimedOut,
                RunEnd {
                    summary: Some(brief(text)),
                    error: Some(format!(
                        "timed out: after {} s these background tasks were still running and were cancelled: {}",
                        self.settle_wait.as_secs(),
                        names.join(", ")
                    )),
                    conversation_id,
                    ..RunEnd::default()
                },
            );
        }
        match end.outcome {
            TurnOutcome::Done { text, .. } => (
                RunStatus::Done,
                RunEnd {
                    summary: Some(brief(&text)),
                    conversation_id,
                    ..RunEnd::default()
                },
            ),
            TurnOutcome::Cancelled => (
                RunStatus::Cancelled,
                RunEnd {
                    error: Some("cancelled".into()),
                    conversation_id,
                    ..RunEnd::default()
                },
            ),
            TurnOutcome::Failed { message, .. } => (
                RunStatus::Failed,
                RunEnd {
                    error: Some(message),
                    conversation_id,
                    ..RunEnd::default()
                },
            ),
        }
    }
}

/// One clock for everything a pass records: `now` (the daemon's `--now`, or the wall
/// clock), moved on by the time spent since.
fn moving_clock(now: DateTime<Utc>) -> impl Fn() -> DateTime<Utc> + Sync {
    let started = tokio::time::Instant::now();
    move || now + chrono::Duration::from_std(started.elapsed()).unwrap_or_default()
}

fn brief(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= SUMMARY_CHARS {
        return flat;
    }
    let mut cut: String = flat.chars().take(SUMMARY_CHARS).collect();
    cut.push('…');
    cut
}
