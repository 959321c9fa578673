//! `wyckoff schedule …` and `wyckoff daemon`: schedules on the trading
//! calendar, run by a foreground daemon (or one pass of it). Every command takes `--now
//! "YYYY-MM-DD HH:MM"` (Beijing time) to set the clock, so a setup can be checked without
//! waiting for the day.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use wyckoff_config::DataHome;
use wyckoff_protocol::TaskRequest;
use wyckoff_protocol::{RunReport, RunStatus};
use wyckoff_session::domain::schedule::when::{
    format_minute, parse_days, parse_minute, parse_time,
};
use wyckoff_session::domain::schedule::{Days, Job, Schedule, ScheduleRun, StoreError, When};
use wyckoff_session::scheduler::{Scheduler, SchedulerError, Stop};
use wyckoff_session::time::{from_beijing, to_beijing};
use wyckoff_session::{Answerer, Desk, DeskOptions, ModelOverrides};

use crate::market::{EXIT_BAD_INPUT, print_json};

/// How often the daemon looks for due schedules.
const POLL: Duration = Duration::from_secs(30);

#[derive(Debug, Args)]
pub struct ScheduleArgs {
    #[command(subcommand)]
    command: ScheduleCommand,
    /// The clock for this command, Beijing time: "YYYY-MM-DD HH:MM".
    #[arg(long, global = true, value_name = "YYYY-MM-DD HH:MM")]
    now: Option<String>,
    /// JSON on stdout.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum JobKind {
    /// Sync every listed stock and the indices from the live sources.
    Sync,
    /// The Wyckoff funnel over the cache, as of the latest close.
    Screen,
    /// The funnel strategy backtested from --start to --end.
    Backtest,
    /// Every alert rule (and holding's stop-loss) checked on the latest bars; what fires is
    /// recorded and pushed.
    Alerts,
}

// Parsed once per process: the size of `Add` costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum ScheduleCommand {
    /// Add a schedule: --at HH:MM [--days …] or --cron EXPR, and --job or --prompt.
    Add {
        name: String,
        /// Time of day, Beijing time (盘前 09:25, 收盘后 15:05).
        #[arg(
            long,
            value_name = "HH:MM",
            conflicts_with = "cron",
            required_unless_present = "cron"
        )]
        at: Option<String>,
        /// trading (default: Shanghai exchange trading days), daily, or mon,tue,…
        #[arg(long, value_name = "trading|daily|mon,tue,…", requires = "at")]
        days: Option<String>,
        /// A five-field cron expression, Beijing time: "minute hour day month weekday".
        #[arg(long, value_name = "EXPR")]
        cron: Option<String>,
        /// A model-free job.
        #[arg(
            long,
            value_enum,
            conflicts_with = "prompt",
            required_unless_present = "prompt"
        )]
        job: Option<JobKind>,
        /// What to ask the agent (a prompt or a /skill), in the schedule's own conversation.
        #[arg(long, value_name = "TEXT")]
        prompt: Option<String>,
        /// Backtest: first day (YYYY-MM-DD).
        #[arg(long, value_name = "YYYY-MM-DD")]
        start: Option<String>,
        /// Backtest: last day (YYYY-MM-DD).
        #[arg(long, value_name = "YYYY-MM-DD")]
        end: Option<String>,
        /// Backtest: days each position is held.
        #[arg(long, default_value_t = 10)]
        hold_days: i64,
        /// Backtest: positions bought per signal day.
        #[arg(long, default_value_t = 5)]
        top_n: i64,
        /// Screen: all (default), main, chinext, star or bse.
        #[arg(long)]
        board: Option<String>,
        /// Screen: scan the N most liquid stocks (at most 3000); 0 = the whole board.
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        limit: Option<i64>,
    },
    /// Every schedule with its next due time and recent runs.
    List,
    Remove {
        name: String,
    },
    Enable {
        name: String,
    },
    Disable {
        name: String,
    },
    /// Run a schedule now, outside its times.
    Run {
        name: String,
    },
}

#[derive(Debug, Args)]
pub struct DaemonArgs {
    #[command(subcommand)]
    command: Option<DaemonCommand>,
    /// One pass over the schedules, then exit.
    #[arg(long)]
    once: bool,
    /// The clock for one pass, Beijing time: "YYYY-MM-DD HH:MM" (implies --once).
    #[arg(long, value_name = "YYYY-MM-DD HH:MM")]
    now: Option<String>,
    /// One JSON object per run on stdout.
    #[arg(long)]
    json: bool,
    /// On SIGTERM or Ctrl-C, how long a run in flight may go on before it is cancelled
    /// (recorded interrupted); a second signal cancels it at once.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    stop_grace: u64,
    /// How long a scheduled prompt waits for the background tasks its turn started; past
    /// it they are cancelled and the run is recorded timed out.
    #[arg(long, value_name = "SECONDS", default_value_t = wyckoff_session::scheduler::SETTLE_WAIT.as_secs(), value_parser = clap::value_parser!(u64).range(1..=86_400))]
    task_wait: u64,
}

#[derive(Debug, Subcommand)]
enum DaemonCommand {
    /// Write a systemd user unit that runs `wyckoff daemon` (and say how to enable it).
    Install,
}

fn clock(now: Option<&str>) -> anyhow::Result<DateTime<Utc>> {
    match now {
        None => Ok(Utc::now()),
        Some(text) => parse_minute(text).map(from_beijing).with_context(|| {
            format!(
                "--now {text:?}: expected \"YYYY-MM-DD HH:MM\" (Beijing time, years {}–{})",
                wyckoff_session::domain::schedule::when::YEARS.start(),
                wyckoff_session::domain::schedule::when::YEARS.end()
            )
        }),
    }
}

/// The desk of a schedule command or the daemon: nobody is at the window, so a call
/// that needs approval waits in the inbox (the run goes on), answered later with
/// `wyckoff approvals` or in the app; turns of scheduled prompts go nowhere live (their
/// conversations keep them).
async fn open(task_wait: Duration) -> anyhow::Result<Arc<Desk>> {
    let mut options = DeskOptions::from_env();
    options.answerer = Answerer::Inbox {
        requested_by: "schedule".into(),
        expiry: wyckoff_session::approvals::DEFAULT_EXPIRY,
    };
    options.task_wait = task_wait;
    let desk = Desk::open(options).await?;
    for note in desk.settings_notes() {
        eprintln!("wyckoff: settings: {note}");
    }
    Ok(desk)
}

/// Bad input (exit 2) for store errors the user caused; anything else exits 1.
fn store_failure(e: anyhow::Error) -> anyhow::Result<ExitCode> {
    let caused_by_user = |s: &StoreError| {
        matches!(
            s,
            StoreError::Exists(_)
                | StoreError::NotFound(_)
                | StoreError::BadName(_)
                | StoreError::When(_)
        )
    };
    let user = e.downcast_ref::<StoreError>().is_some_and(caused_by_user)
        || e.downcast_ref::<wyckoff_session::SessionError>()
            .is_some_and(wyckoff_session::SessionError::is_user_error)
        || matches!(
            e.downcast_ref::<SchedulerError>(),
            Some(SchedulerError::Store(s)) if caused_by_user(s)
        );
    if user {
        return Err(e);
    }
    eprintln!("wyckoff: {e:#}");
    Ok(ExitCode::from(1))
}

pub fn run(args: ScheduleArgs) -> anyhow::Result<ExitCode> {
    let now = clock(args.now.as_deref())?;
    let rt = crate::market::runtime()?;
    rt.block_on(async move {
        let add = match &args.command {
            ScheduleCommand::Add {
                name,
                at,
                days,
                cron,
                job,
                prompt,
                start,
                end,
                hold_days,
                top_n,
                board,
                limit,
            } => Some(schedule_of(
                name,
                at,
                days,
                cron,
                *job,
                prompt,
                (start, end, *hold_days, *top_n),
                (board, *limit),
                now,
            )?),
            _ => None,
        };
        let desk = open(wyckoff_session::scheduler::SETTLE_WAIT).await?;
        if let Some(schedule) = add.as_ref().filter(|s| s.job.needs_model()) {
            // A prompt schedule with no model would only fail later: say so now (bad input).
            if let Err(e) = desk.services().check_model(&ModelOverrides::default()) {
                desk.close().await;
                bail!("schedule {}: a prompt needs a model: {e}", schedule.name);
            }
        }
        if let Some(schedule) = add.as_ref().filter(|s| {
            matches!(
                s.job,
                Job::Task {
                    request: TaskRequest::Alerts
                }
            )
        }) {
            // An alerts job with no rule would only check nothing, every day: say so now.
            let nothing = !wyckoff_session::domain::alerts::has_work(desk.market(), desk.alerts()).await?;
            if nothing {
                desk.close().await;
                bail!(
                    "schedule {}: no alert rule exists (add one with `wyckoff alerts add`) and no holding has a stop-loss or target: an alerts job would check nothing",
                    schedule.name
                );
            }
        }
        let result = command(&args, add, desk.scheduler(), now).await;
        desk.close().await;
        match result {
            Ok(code) => Ok(code),
            Err(e) => store_failure(e),
        }
    })
}

#[allow(clippy::too_many_arguments)]
fn schedule_of(
    name: &str,
    at: &Option<String>,
    days: &Option<String>,
    cron: &Option<String>,
    job: Option<JobKind>,
    prompt: &Option<String>,
    (start, end, hold_days, top_n): (&Option<String>, &Option<String>, i64, i64),
    (board, limit): (&Option<String>, Option<i64>),
    now: DateTime<Utc>,
) -> anyhow::Result<Schedule> {
    let when = match (at, cron) {
        (Some(at), None) => {
            parse_time(at)?;
            When::At {
                time: at.trim().to_owned(),
                days: days
                    .as_deref()
                    .map(parse_days)
                    .transpose()?
                    .unwrap_or(Days::Trading),
            }
        }
        (None, Some(expr)) => When::Cron {
            expr: expr.trim().to_owned(),
        },
        _ => bail!("give --at HH:MM or --cron EXPR"),
    };
    when.validate()?;
    if (board.is_some() || limit.is_some())
        && (prompt.is_some() || !matches!(job, Some(JobKind::Screen)))
    {
        bail!("--board and --limit are for --job screen");
    }
    let job = match (job, prompt) {
        (_, Some(text)) if text.trim().is_empty() => bail!("--prompt is empty"),
        (_, Some(text)) => Job::Prompt {
            text: text.trim().to_owned(),
        },
        (Some(JobKind::Sync), None) => Job::Task {
            request: TaskRequest::SyncAll,
        },
        (Some(JobKind::Screen), None) => {
            let request = TaskRequest::Screen {
                as_of: None,
                board: board.as_deref().map(str::trim).map(str::to_owned),
                limit,
            };
            // Refused now as `wyckoff screen` would refuse it, not at every run.
            wyckoff_session::reports::check_job(&request)?;
            Job::Task { request }
        }
        (Some(JobKind::Alerts), None) => Job::Task {
            request: TaskRequest::Alerts,
        },
        (Some(JobKind::Backtest), None) => {
            let (Some(start), Some(end)) = (start, end) else {
                bail!("a backtest job needs --start YYYY-MM-DD and --end YYYY-MM-DD");
            };
            for d in [start, end] {
                if chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").is_err() {
                    bail!("'{d}' is not a date: use YYYY-MM-DD");
                }
            }
            Job::Task {
                request: TaskRequest::Backtest {
                    start: start.clone(),
                    end: end.clone(),
                    hold_days,
                    top_n,
                },
            }
        }
        (None, None) => bail!("give --job sync|screen|backtest|alerts or --prompt TEXT"),
    };
    Ok(Schedule {
        name: name.to_owned(),
        when,
        job,
        enabled: true,
        counted_from: to_beijing(now),
        conversation_id: None,
    })
}

/// `schedule list --json`: a schedule with its next due time and its runs.
#[derive(Debug, Serialize)]
struct Listed {
    #[serde(flatten)]
    schedule: Schedule,
    /// Beijing `YYYY-MM-DD HH:MM`.
    next_due: Option<String>,
    /// The next due time is past the known trading calendar: a weekday was assumed.
    next_due_assumed_trading_day: bool,
    runs: Vec<ScheduleRun>,
}

async fn command(
    args: &ScheduleArgs,
    add: Option<Schedule>,
    scheduler: &Scheduler,
    now: DateTime<Utc>,
) -> anyhow::Result<ExitCode> {
    let store = scheduler.store();
    match &args.command {
        ScheduleCommand::Add { .. } => {
            let Some(schedule) = add else {
                bail!("nothing to add");
            };
            scheduler.check_job(&schedule.job)?;
            store.add(&schedule).await?;
            let next = scheduler.next(&schedule, now)?;
            if args.json {
                print_json(&schedule)?;
            } else {
                println!(
                    "added {}; next run {}",
                    schedule.name,
                    next.map(|o| describe_due(o.at, o.assumed_trading_day))
                        .unwrap_or_else(|| "never within a year".into())
                );
            }
        }
        ScheduleCommand::List => {
            let mut listed = Vec::new();
            let listing = store.list().await?;
            for damaged in &listing.damaged {
                eprintln!(
                    "wyckoff: schedule '{}' is damaged and skipped by every run: {} (remove it with `wyckoff schedule remove {}` and add it again)",
                    damaged.name, damaged.why, damaged.name
                );
            }
            for schedule in listing.schedules {
                let next = scheduler.next(&schedule, now)?;
                let runs = store.runs(&schedule.name, 20).await?;
                listed.push(Listed {
                    next_due: next.map(|o| format_minute(o.at)),
                    next_due_assumed_trading_day: next.is_some_and(|o| o.assumed_trading_day),
                    schedule,
                    runs,
                });
            }
            if args.json {
                print_json(&listed)?;
            } else if listed.is_empty() {
                println!("no schedules (add one with `wyckoff schedule add`)");
            }
            for l in listed.iter().filter(|_| !args.json) {
                let next = l
                    .next_due
                    .as_deref()
                    .map(|n| {
                        if l.next_due_assumed_trading_day {
                            format!("{n}{ASSUMED_DAY}")
                        } else {
                            n.to_owned()
                        }
                    })
                    .unwrap_or_else(|| "—".into());
                println!(
                    "{}  {}  {}  {}  next {}",
                    l.schedule.name,
                    when_text(&l.schedule.when),
                    job_text(&l.schedule.job),
                    if l.schedule.enabled { "on" } else { "off" },
                    next
                );
                for r in &l.runs {
                    println!("    {}", run_text(r));
                }
            }
        }
        ScheduleCommand::Remove { name } => {
            store.remove(name).await?;
            println!("removed {name}");
        }
        ScheduleCommand::Enable { name } => {
            store.set_enabled(name, true, to_beijing(now)).await?;
            println!("{name} on");
        }
        ScheduleCommand::Disable { name } => {
            store.set_enabled(name, false, to_beijing(now)).await?;
            println!("{name} off");
        }
        ScheduleCommand::Run { name } => {
            let report = scheduler.run_now(name, now).await?;
            print_report(&report, args.json)?;
            if report.status != RunStatus::Done {
                return Ok(ExitCode::from(1));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn describe_due(at: chrono::NaiveDateTime, assumed: bool) -> String {
    let text = format_minute(at);
    if assumed {
        format!("{text}{ASSUMED_DAY}")
    } else {
        text
    }
}

fn when_text(w: &When) -> String {
    match w {
        When::At { time, days } => {
            let days = match days {
                Days::Trading => "trading days".to_owned(),
                Days::Daily => "daily".to_owned(),
                Days::Weekdays { days } => {
                    let names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
                    days.iter()
                        .filter_map(|d| names.get(usize::from(*d).saturating_sub(1)))
                        .copied()
                        .collect::<Vec<_>>()
                        .join(",")
                }
            };
            format!("{time} {days}")
        }
        When::Cron { expr } => format!("cron \"{expr}\""),
    }
}

fn job_text(j: &Job) -> String {
    match j {
        Job::Prompt { text } => format!("prompt \"{text}\""),
        Job::Task { request } => match request {
            TaskRequest::Screen { board, limit, .. } => {
                let mut text = "screen".to_owned();
                if let Some(b) = board {
                    text.push_str(&format!(" --board {b}"));
                }
                if let Some(n) = limit {
                    text.push_str(&format!(" --limit {n}"));
                }
                text
            }
            TaskRequest::SyncAll => "sync".into(),
            TaskRequest::Backtest { start, end, .. } => format!("backtest {start}..{end}"),
            TaskRequest::Import { path } => format!("import {path}"),
            TaskRequest::Alerts => "alerts".into(),
        },
    }
}

fn status_text(s: RunStatus) -> &'static str {
    match s {
        RunStatus::Running => "running",
        RunStatus::Done => "done",
        RunStatus::Failed => "failed",
        RunStatus::Interrupted => "interrupted",
        RunStatus::Cancelled => "cancelled",
        RunStatus::TimedOut => "timed out",
    }
}

fn run_text(r: &ScheduleRun) -> String {
    let when = r.occurrence.as_deref().unwrap_or("run now");
    let late = if r.catch_up { " (catch-up)" } else { "" };
    let assumed = if r.assumed_trading_day {
        ASSUMED_DAY
    } else {
        ""
    };
    let what = r
        .error
        .as_deref()
        .or(r.summary.as_deref())
        .unwrap_or_default();
    format!(
        "#{} {when}{late}{assumed} {} {what}",
        r.id,
        status_text(r.status)
    )
}

/// Said of a run or due time past the known trading calendar.
const ASSUMED_DAY: &str = " (past the known trading calendar: a weekday assumed)";

fn print_report(r: &RunReport, json: bool) -> anyhow::Result<()> {
    if json {
        let line = serde_json::to_string(r)?;
        println!("{line}");
        return Ok(());
    }
    let when = r.occurrence.as_deref().unwrap_or("run now");
    let late = if r.catch_up { " (catch-up)" } else { "" };
    let assumed = if r.assumed_trading_day {
        ASSUMED_DAY
    } else {
        ""
    };
    let made = r
        .task_id
        .as_deref()
        .map(|t| format!(" task {t}"))
        .or_else(|| {
            r.conversation_id
                .as_deref()
                .map(|c| format!(" conversation {c}"))
        })
        .unwrap_or_default();
    let what = r
        .error
        .as_deref()
        .or(r.summary.as_deref())
        .unwrap_or_default();
    println!(
        "{} {when}{late}{assumed}: {}{made} {what}",
        r.schedule,
        status_text(r.status)
    );
    Ok(())
}

/// The daemon's lock: one daemon per data home.
fn daemon_lock(home: &DataHome) -> anyhow::Result<Option<File>> {
    let dir = home.root().join("run");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("daemon.lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| path.display().to_string())?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e).context(path.display().to_string()),
    }
}

pub fn daemon(args: DaemonArgs) -> anyhow::Result<ExitCode> {
    if let Some(DaemonCommand::Install) = args.command {
        return install();
    }
    let fixed = args.now.is_some();
    let first = clock(args.now.as_deref())?;
    let home = DataHome::from_env();
    home.ensure()?;
    let Some(_lock) = daemon_lock(&home)? else {
        eprintln!(
            "wyckoff: another daemon is running on {}; this one exits",
            home.root().display()
        );
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    };
    let _log = wyckoff_config::logging::init(&home.logs_dir(), "wyckoff-daemon", false).ok();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async move {
        // Before anything runs, so a stop at any moment ends the daemon cleanly.
        let stop = Stop::default();
        watch_stop_signals(stop.clone(), Duration::from_secs(args.stop_grace))?;
        let desk = open(Duration::from_secs(args.task_wait)).await?;
        // A pass (`--once`, `--now`) exits 1 when one of its runs did not end done, for
        // scripts; the long-running daemon keeps its runs' ends in their records and exits
        // 1 only for its own failure (a pass that could not run).
        let single = args.once || fixed;
        // The long-running daemon serves the chat bots beside its schedules, those added
        // or given a token while it runs too.
        let bots = (!single).then(|| {
            let options = wyckoff_bot::ServeOptions {
                front: "daemon",
                ..wyckoff_bot::ServeOptions::default()
            };
            tokio::spawn(wyckoff_bot::serve_watching(
                desk.clone(),
                options,
                stop.draining.clone(),
                Arc::default(),
                wyckoff_bot::WatchTiming::default(),
            ))
        });
        let mut failed = false;
        loop {
            let now = if fixed { first } else { Utc::now() };
            let tick = desk.tick(now, &stop).await;
            for problem in &tick.problems {
                eprintln!("wyckoff: {problem}");
            }
            for r in &tick.runs {
                // A run a stop cut short is no failure of the daemon's.
                failed |= single
                    && matches!(
                        r.status,
                        RunStatus::Failed | RunStatus::TimedOut | RunStatus::Cancelled
                    );
                print_report(r, args.json)?;
            }
            crate::quote::print_intraday(tick.intraday.as_ref(), args.json)?;
            if let Some(why) = &tick.pass_failed {
                eprintln!("wyckoff: {why}");
                failed = true;
            }
            if single || stop.draining.is_cancelled() {
                break;
            }
            tokio::select! {
                _ = tokio::time::sleep(POLL) => {}
                _ = stop.draining.cancelled() => break,
            }
        }
        if let Some(bots) = bots
            && let Err(e) = bots.await
        {
            eprintln!("wyckoff: chat bots: {e}");
        }
        desk.close().await;
        drop(desk);
        // Everything it ran has ended and is recorded: the lease goes with the daemon.
        wyckoff_config::lease::release(&home);
        if stop.draining.is_cancelled() {
            tracing::info!("daemon stopped");
        }
        Ok(ExitCode::from(u8::from(failed)))
    })
}

/// SIGTERM (`systemctl stop`) and SIGINT (Ctrl-C) stop the daemon: no new run is claimed,
/// the run in flight gets `grace` to finish, then it is cancelled; a second signal
/// cancels it at once.
fn watch_stop_signals(stop: Stop, grace: Duration) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("listening for SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("listening for SIGINT")?;
    tokio::spawn(async move {
        loop {
            let name = tokio::select! {
                Some(()) = term.recv() => "SIGTERM",
                Some(()) = int.recv() => "SIGINT",
                else => return,
            };
            if stop.draining.is_cancelled() {
                tracing::info!(
                    signal = name,
                    "second stop signal: cancelling the run in flight"
                );
                stop.abort.cancel();
                continue;
            }
            tracing::info!(
                signal = name,
                ?grace,
                "stopping: no new runs; a run in flight may finish"
            );
            stop.draining.cancel();
            let abort = stop.abort.clone();
            tokio::spawn(async move {
                tokio::time::sleep(grace).await;
                abort.cancel();
            });
        }
    });
    Ok(())
}

/// Writes `~/.config/systemd/user/wyckoff-daemon.service`.
fn install() -> anyhow::Result<ExitCode> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".config")))
        .context("neither XDG_CONFIG_HOME nor HOME is set")?;
    let dir = config.join("systemd").join("user");
    std::fs::create_dir_all(&dir).with_context(|| dir.display().to_string())?;
    let exe = std::env::current_exe().context("locating the wyckoff binary")?;
    let home = DataHome::from_env();
    let exe = unit_path(&exe)?;
    let root = unit_path(home.root())?;
    let unit = format!(
        "[Unit]\nDescription=Wyckoff Desk schedules (wyckoff daemon)\n\n[Service]\nExecStart={} daemon\nEnvironment={}\nRestart=on-failure\nRestartSec=30\nTimeoutStopSec=90\n\n[Install]\nWantedBy=default.target\n",
        systemd_quote(&exe, Field::Command),
        systemd_quote(&format!("WYCKOFF_HOME={root}"), Field::Assignment),
    );
    let path = dir.join("wyckoff-daemon.service");
    std::fs::write(&path, unit).with_context(|| path.display().to_string())?;
    println!("wrote {}", path.display());
    println!(
        "enable it with: systemctl --user daemon-reload && systemctl --user enable --now wyckoff-daemon"
    );
    let user = std::env::var("USER").or_else(|_| std::env::var("LOGNAME"));
    if let Ok(user) = user
        && !Path::new("/var/lib/systemd/linger").join(&user).exists()
    {
        println!(
            "lingering is off for {user}: the daemon stops when you log out; keep it running with: loginctl enable-linger {user}"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A path as a unit file can hold it: UTF-8 and on one line.
fn unit_path(path: &Path) -> anyhow::Result<String> {
    let text = path.to_str().with_context(|| {
        format!(
            "{} is not UTF-8: a systemd unit cannot name it",
            path.display()
        )
    })?;
    if text.contains(['\n', '\r']) {
        bail!("{text:?} holds a line break: a systemd unit cannot name it");
    }
    Ok(text.to_owned())
}

/// What a quoted unit-file value is: `ExecStart=`'s command also expands `$VARIABLES`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Command,
    Assignment,
}

/// One value, double-quoted the way systemd reads it back whole: a space stays inside
/// the word, `\\` and `"` are escaped, `%` specifiers (and `$` in a command) are doubled.
fn systemd_quote(value: &str, field: Field) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '%' => out.push_str("%%"),
            '$' if field == Field::Command => out.push_str("$$"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_value_is_one_quoted_word_with_specifiers_and_escapes_doubled() {
        let cases = [
            (
                "/home/a b/.wyckoff",
                Field::Assignment,
                r#""/home/a b/.wyckoff""#,
            ),
            ("/opt/wyckoff", Field::Command, r#""/opt/wyckoff""#),
            ("/h/100%", Field::Assignment, r#""/h/100%%""#),
            ("/h/$HOME", Field::Command, r#""/h/$$HOME""#),
            ("/h/$HOME", Field::Assignment, r#""/h/$HOME""#),
            (r#"/h/"q"\x"#, Field::Assignment, r#""/h/\"q\"\\x""#),
        ];
        for (value, field, quoted) in cases {
            assert_eq!(systemd_quote(value, field), quoted, "{value}");
        }
    }

    #[test]
    fn a_path_with_a_line_break_cannot_go_in_a_unit() {
        assert!(unit_path(Path::new("/a\nb")).is_err());
        assert_eq!(unit_path(Path::new("/a b")).unwrap(), "/a b");
    }
}
