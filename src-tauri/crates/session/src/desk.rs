//! The one door to the core. The app, `wyckoff run`, `wyckoff daemon`, `wyckoff
//! approvals` and `wyckoff schedule` open a [`Desk`] the same way ([`Desk::open`]): one
//! settings resolution (command-line flags over the environment over `settings.json` over
//! the defaults), one `wyckoff.db` pool whose every crate's migrations run once, every
//! store built once, one clock, one HTTP client, one secrets handle, one outbox and one
//! approver per attendance mode. Unattended work runs in [`Desk::tick`], which the app's
//! timer and the daemon's loop only call.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use wyckoff_agent::{Approver, Clock, HeadlessApprover, PendingApprovals, SystemClock};
use wyckoff_alerts::AlertStore;
use wyckoff_annotations::AnnotationStore;
use wyckoff_config::settings::{Settings, SharedSettings};
use wyckoff_config::{DataHome, Secrets};
use wyckoff_inbox::QueueApprover;
use wyckoff_journal::JournalStore;
use wyckoff_market::watchlist::WatchlistStore;
use wyckoff_protocol::{DeskEvent, InboxRequest, InboxStatus, RunReport};
use wyckoff_push::Outbox;
use wyckoff_track::TrackStore;

use crate::events::{DeskEvents, StreamOutput};
use crate::scheduler::{Scheduler, SchedulerError, Stop};
use crate::{ConversationHub, HubOptions, ModelOverrides, Services, SessionError, StartedTurn};

/// Who answers a call that needs approval on the desk's attended turns. Scheduled turns
/// are never attended: theirs wait in the inbox whatever this says.
pub enum Answerer {
    /// Someone at the window answers in its dialog (the app).
    Window(Arc<PendingApprovals>),
    /// A fixed policy (`wyckoff run --approve never|all|TOOL,…`).
    Policy(HeadlessApprover),
    /// Nobody: each call waits in the approval inbox for `expiry`, asked for by
    /// `requested_by` (`conversation`, `schedule`).
    Inbox {
        requested_by: String,
        expiry: Duration,
    },
}

/// How to open a desk. [`DeskOptions::new`] gives what a plain command wants: the
/// settings file, the OS keychain, the system clock, no approvals.
pub struct DeskOptions {
    pub home: DataHome,
    /// Settings the caller already holds, shared with the desk (the app's one copy); `None`
    /// reads `settings.json` (its migration notes are kept: [`Desk::settings_notes`]).
    pub settings: Option<SharedSettings>,
    /// The command line's model flags, over every other source.
    pub overrides: ModelOverrides,
    pub answerer: Answerer,
    pub secrets: Arc<Secrets>,
    pub clock: Arc<dyn Clock>,
    /// How long a scheduled prompt waits for the background tasks its turn started.
    pub task_wait: Duration,
}

impl DeskOptions {
    pub fn new(home: DataHome) -> DeskOptions {
        DeskOptions {
            home,
            settings: None,
            overrides: ModelOverrides::default(),
            answerer: Answerer::Policy(HeadlessApprover::Never),
            secrets: Arc::new(Secrets::system()),
            clock: Arc::new(SystemClock),
            task_wait: crate::scheduler::SETTLE_WAIT,
        }
    }

    /// The data home of `$WYCKOFF_HOME` (or the default).
    pub fn from_env() -> DeskOptions {
        DeskOptions::new(DataHome::from_env())
    }
}

/// Every store of the data home, built once for the process.
struct Stores {
    alerts: AlertStore,
    tracking: TrackStore,
    notes: AnnotationStore,
    journal: JournalStore,
    watchlist: WatchlistStore,
    outbox: Outbox,
}

/// The core as one process sees it.
pub struct Desk {
    hub: Arc<ConversationHub>,
    scheduler: Arc<Scheduler>,
    stores: Stores,
    settings_notes: Vec<String>,
    events: DeskEvents,
}

/// What one [`Desk::tick`] did.
#[derive(Debug, Default)]
pub struct TickReport {
    /// Scheduled runs that ended in this tick, in the order they ran.
    pub runs: Vec<RunReport>,
    /// Approval requests refused because nobody answered in time.
    pub expired: usize,
    /// Earlier decisions whose conversations were told in this tick.
    pub told: usize,
    /// Requests waiting for an answer once the tick was over.
    pub pending: Vec<InboxRequest>,
    /// The schedule pass could not run (the other steps still did).
    pub pass_failed: Option<String>,
    /// Steps that failed without stopping the tick, each said in one line.
    pub problems: Vec<String>,
    /// The intraday alerts check (run or why skipped); `None` when it could not run.
    pub intraday: Option<crate::desk_quotes::IntradayOutcome>,
}

impl Desk {
    /// Opens the data home (creating it) with everything a front end reaches through
    /// the desk. Nothing here needs a model: a missing key fails only the first turn.
    pub async fn open(options: DeskOptions) -> Result<Arc<Desk>, SessionError> {
        let DeskOptions {
            home,
            settings,
            overrides,
            answerer,
            secrets,
            clock,
            task_wait,
        } = options;
        let stage = tracing::info_span!(target: "wyckoff::stage", "settings");
        let (settings, settings_notes) = match settings {
            Some(s) => (s, Vec::new()),
            None => {
                let (s, notes) = wyckoff_config::settings::load(&home.settings_path())?;
                (SharedSettings::new(s), notes)
            }
        };
        drop(stage);
        let stage = tracing::info_span!(target: "wyckoff::stage", "open");
        let services =
            Arc::new(Services::open_shared(home, settings, secrets, clock.clone()).await?);
        match services.recover_interrupted_turns().await {
            Ok(ids) if !ids.is_empty() => {
                tracing::info!(turns = ids.len(), "marked interrupted turns")
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("cannot mark interrupted turns: {e}"),
        }
        let approver: Arc<dyn Approver> = match answerer {
            Answerer::Window(pending) => pending,
            Answerer::Policy(policy) => Arc::new(policy),
            Answerer::Inbox {
                requested_by,
                expiry,
            } => Arc::new(QueueApprover::new(
                services.inbox().clone(),
                clock.clone(),
                expiry,
                requested_by,
            )),
        };
        let pool = services.pool().clone();
        let now = clock.now();
        let stores = Stores {
            // The relay's: one outbox and one alert store per process.
            alerts: services.push().alerts().clone(),
            tracking: TrackStore::new(pool.clone()).await?,
            notes: AnnotationStore::new(pool.clone()).await?,
            journal: JournalStore::new(pool.clone(), now).await?,
            outbox: services.push().outbox().clone(),
            watchlist: WatchlistStore::new(pool),
        };
        let events = DeskEvents::default();
        events.follow_tasks(services.background());
        let hub = ConversationHub::new(
            services,
            HubOptions {
                overrides,
                approver,
                output: Arc::new(StreamOutput(events.clone())),
            },
        );
        let scheduler = Scheduler::open(hub.clone(), now)
            .await
            .map_err(Box::new)?
            .with_settle_wait(task_wait);
        drop(stage);
        Ok(Arc::new(Desk {
            hub,
            scheduler: Arc::new(scheduler),
            stores,
            settings_notes,
            events,
        }))
    }

    /// What reading `settings.json` changed or ignored (an old layout migrated).
    pub fn settings_notes(&self) -> &[String] {
        &self.settings_notes
    }

    /// Every turn's events, task changes, scheduled runs and the inbox after each tick,
    /// from now on (see [`DeskEvents`]).
    pub fn subscribe(&self) -> tokio::sync::mpsc::UnboundedReceiver<DeskEvent> {
        self.events.subscribe()
    }

    pub fn hub(&self) -> &Arc<ConversationHub> {
        &self.hub
    }

    pub fn services(&self) -> &Arc<Services> {
        self.hub.services()
    }

    pub fn scheduler(&self) -> &Arc<Scheduler> {
        &self.scheduler
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        self.services().clock()
    }

    pub fn home(&self) -> &DataHome {
        self.services().home()
    }

    /// The settings in use now.
    pub fn settings(&self) -> Settings {
        self.services().settings()
    }

    /// Takes changed settings in place (see [`Services::apply_settings`]).
    pub async fn apply_settings(&self, settings: Settings) -> Result<bool, SessionError> {
        self.hub.apply_settings(settings).await
    }

    pub fn market(&self) -> &Arc<wyckoff_market::MarketData> {
        self.services().market()
    }

    pub fn alerts(&self) -> &AlertStore {
        &self.stores.alerts
    }

    pub fn tracking(&self) -> &TrackStore {
        &self.stores.tracking
    }

    pub fn notes(&self) -> &AnnotationStore {
        &self.stores.notes
    }

    pub fn journal(&self) -> &JournalStore {
        &self.stores.journal
    }

    /// The journal's ledger against every balance an imported broker statement stated
    /// (each day's 资金余额, each holding's 股份余额), every difference named; empty when
    /// no statement had balance columns.
    pub async fn journal_reconciliation(
        &self,
    ) -> Result<wyckoff_journal::Reconciliation, wyckoff_journal::JournalError> {
        self.stores
            .journal
            .reconciliation(self.market().clock().now())
            .await
    }

    pub fn watchlist(&self) -> &WatchlistStore {
        &self.stores.watchlist
    }

    /// The push channels and the durable outbox, for a front end that manages them or
    /// waits on a delivery's outcome ([`Services::push`] only logs a failed send).
    pub fn outbox(&self) -> &Outbox {
        &self.stores.outbox
    }

    /// Everything unattended that is due at `now`, in one pass: requests nobody answered
    /// in time are refused and their conversations told; decisions made with no model,
    /// or by a process that ended first, are told; the schedules due run; every due push
    /// message goes out (fired alerts included, whether or not anything is checked
    /// again). Follow-up turns are waited for (a `stop.abort` cuts the wait), so a
    /// process that exits after a tick does not cancel them.
    pub async fn tick(&self, now: DateTime<Utc>, stop: &Stop) -> TickReport {
        let mut report = TickReport::default();
        match crate::approvals::expire_due(&self.hub, now).await {
            Ok(expired) => {
                report.expired = expired.len();
                wait_for_turns(
                    expired.into_iter().filter_map(|d| d.follow_up),
                    stop,
                    &mut report,
                )
                .await;
            }
            Err(e) => report
                .problems
                .push(format!("cannot expire approval requests: {e}")),
        }
        match crate::approvals::tell_waiting(&self.hub).await {
            Ok(waiting) => {
                report.told = waiting.told.len();
                let turns = waiting.told.into_iter().filter_map(|(_, _, turn)| turn);
                wait_for_turns(turns, stop, &mut report).await;
            }
            Err(e) => report
                .problems
                .push(format!("cannot tell decided approval requests: {e}")),
        }
        match self.scheduler.pass_until(now, stop).await {
            Ok(runs) => report.runs = runs,
            Err(e) => report.pass_failed = Some(pass_failure(&e)),
        }
        for run in &report.runs {
            self.events
                .publish(DeskEvent::ScheduleRan { run: run.clone() });
        }
        match self.intraday_alerts(now).await {
            Ok(outcome) => report.intraday = Some(outcome),
            Err(e) => report
                .problems
                .push(format!("intraday alerts check failed: {e}")),
        }
        match self.services().inbox().list(now).await {
            Ok(requests) => {
                report.pending = requests
                    .into_iter()
                    .filter(|r| r.status == InboxStatus::Pending)
                    .collect();
                self.events.publish(DeskEvent::Inbox {
                    pending: report.pending.clone(),
                    expired: u32::try_from(report.expired).unwrap_or(u32::MAX),
                });
            }
            Err(e) => report
                .problems
                .push(format!("cannot read the approval inbox: {e}")),
        }
        for problem in &report.problems {
            tracing::warn!("{problem}");
        }
        report
    }

    /// Ends the process's work: turns are cancelled and stored, the event stream ends
    /// (subscribers read what was sent, then `None`), background tasks stop, and the
    /// database is closed clean: its write-ahead log checkpointed into the file and
    /// truncated, every connection closed (a process that wrote leaves no log behind).
    /// The desk is not used after this.
    pub async fn close(&self) {
        let _stage = tracing::info_span!(target: "wyckoff::stage", "close");
        self.hub.close().await;
        self.events.close();
        self.services().background().shutdown().await;
        let pool = self.services().pool();
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(pool)
            .await
        {
            // another process reading holds the log: it checkpoints when it closes
            tracing::warn!(error = %e, "write-ahead log not checkpointed at close");
        }
        pool.close().await;
    }
}

fn pass_failure(e: &SchedulerError) -> String {
    format!("schedule pass failed: {e}")
}

/// Waits for follow-up turns to end; one that failed is said as a problem of the tick.
async fn wait_for_turns(
    turns: impl Iterator<Item = StartedTurn>,
    stop: &Stop,
    report: &mut TickReport,
) {
    for turn in turns {
        let conversation = turn.meta.conversation_id.clone();
        let told = tokio::select! {
            ended = turn.end => ended,
            () = stop.abort.cancelled() => return,
        };
        if let Ok(end) = told
            && let wyckoff_agent::TurnOutcome::Failed { message, .. } = end.outcome
        {
            report.problems.push(format!(
                "conversation {conversation} was not told of a decision: {message}"
            ));
        }
    }
}
