//! `wyckoff run`: one headless agent turn (the contract the end-to-end
//! tests drive).
//!
//! `wyckoff run [--json] [--provider NAME] [--model ID] [--base-url URL]
//! [--approve never|all|queue|TOOL[,TOOL…]] [--approval-expiry DURATION] [--session ID] [--idle-timeout SECS]
//! [--context-window TOKENS] PROMPT`
//!
//! - `--json`: every RuntimeEvent as one JSON object per line on stdout, a `session`
//!   event first; otherwise the final answer on stdout, progress and warnings on stderr.
//! - Exit status: 0 `done`, 1 `turn_failed` (or an internal failure), 130 cancelled
//!   (Ctrl-C cancels the turn and its background tasks; a second Ctrl-C exits at once),
//!   2 bad input (unknown provider, idle timeout outside 1–600, missing key, unknown
//!   session, bad settings), 124 background tasks still running after `--wait-timeout`
//!   (they are cancelled).
//! - Background tasks the turn starts are waited for (`--wait-timeout`, default 600 s):
//!   their progress is shown (`background_task` events), and each completion goes to the
//!   model as a system notification, which it answers before the command exits. The
//!   conversation hub (`wyckoff_session::hub`) runs those follow-up turns, as in the app.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;
use wyckoff_config::{DataHome, SharedSettings};
use wyckoff_protocol::{DeskEvent, RuntimeEvent};
use wyckoff_session::domain::agent::{HeadlessApprover, TurnOutcome};
use wyckoff_session::{
    Answerer, Desk, DeskOptions, ModelOverrides, SessionError, Settled, approvals,
};

/// Prints the desk's stream: every turn's events (a `session` event before the first)
/// and the progress of the run's background tasks (the only ones in this process),
/// until the desk closes it. A strategy decision that completes is followed by its
/// suggested sizes (read from the task's stored result): lines in text, a
/// `decision_sizes` event in JSON.
async fn print(
    mut events: UnboundedReceiver<DeskEvent>,
    json: bool,
    tasks: std::sync::Arc<wyckoff_session::domain::agent::BackgroundTaskManager>,
) {
    let mut announced = false;
    let mut sized = std::collections::HashSet::new();
    while let Some(event) = events.recv().await {
        match event {
            DeskEvent::Turn {
                conversation_id,
                event,
                ..
            } => {
                if !announced {
                    announced = true;
                    render(
                        &RuntimeEvent::Session {
                            session_id: conversation_id,
                        },
                        json,
                    );
                }
                render(&event, json);
            }
            DeskEvent::Task { task } => {
                let decided = task.tool_name == crate::decision::STRATEGY
                    && task.status == wyckoff_protocol::TaskStatus::Completed
                    && sized.insert(task.task_id.clone());
                let id = task.task_id.clone();
                render(&RuntimeEvent::BackgroundTask { task }, json);
                if decided {
                    match tasks.result(&id).await {
                        Ok(Some(result)) => {
                            let sizes = crate::decision::sized_buys(&result);
                            if json && !sizes.is_empty() {
                                render(&RuntimeEvent::DecisionSizes { task_id: id, sizes }, json);
                            } else if !json {
                                for line in crate::decision::size_lines(&sizes) {
                                    emit_line(&mut std::io::stdout().lock(), &line);
                                }
                            }
                        }
                        Ok(None) => {}
                        Err(e) => eprintln!("wyckoff: the decision's result not read: {e}"),
                    }
                }
            }
            DeskEvent::ScheduleRan { .. } | DeskEvent::Inbox { .. } => {}
        }
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Print every runtime event as one JSON object per line on stdout.
    #[arg(long)]
    json: bool,
    /// claude, openai, gemini, deepseek, qwen, kimi, ollama or openai-compatible
    /// (default: the main model of the settings).
    #[arg(long, value_name = "NAME")]
    provider: Option<String>,
    /// Model id (with --provider), or a model entry id from the settings.
    #[arg(long, value_name = "ID")]
    model: Option<String>,
    /// Endpoint override, e.g. http://127.0.0.1:8080/v1.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Tools that need approval: never (deny all), all, a comma-separated list, or queue
    /// (put each call in the approval inbox: `wyckoff approvals list|allow|deny`).
    #[arg(
        long,
        value_name = "never|all|queue|TOOL[,TOOL…]",
        default_value = "never"
    )]
    approve: String,
    /// With --approve queue: how long a queued call waits for an answer (24h, 90m, 30s, 2d).
    #[arg(long, value_name = "DURATION", default_value = "24h")]
    approval_expiry: String,
    /// Continue this stored conversation (default: start a new one).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// Stream idle timeout in seconds (1–600).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=600))]
    idle_timeout: Option<u64>,
    /// Override the model's context window (tokens).
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u32).range(1..))]
    context_window: Option<u32>,
    /// After the turn, extract long-term memories from the conversation (one more model
    /// call; the desktop app does this when you leave a conversation).
    #[arg(long)]
    remember: bool,
    /// Longest wait for the background tasks this run started (seconds).
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    wait_timeout: u64,
    /// What to ask.
    #[arg(value_name = "PROMPT", required = true, num_args = 1..)]
    prompt: Vec<String>,
}

/// Prints one line and flushes, so a reader sees each event as it happens. A closed
/// stdout (reader gone) is not an error worth stopping the turn for.
fn emit_line(out: &mut impl Write, line: &str) {
    let _ = writeln!(out, "{line}").and_then(|_| out.flush());
}

/// Renders events: JSON lines, or the answer on stdout and progress on stderr.
fn render(event: &RuntimeEvent, json: bool) {
    if json {
        match serde_json::to_string(event) {
            Ok(line) => emit_line(&mut std::io::stdout().lock(), &line),
            Err(e) => eprintln!("wyckoff: event not serializable: {e}"),
        }
        return;
    }
    let mut err = std::io::stderr().lock();
    match event {
        RuntimeEvent::Session { session_id } => {
            emit_line(&mut err, &format!("session {session_id}"))
        }
        RuntimeEvent::ToolStart {
            display_name, args, ..
        } => emit_line(&mut err, &format!("… {display_name} {args}")),
        RuntimeEvent::ToolError { name, error, .. } => {
            emit_line(&mut err, &format!("tool {name} failed: {error}"))
        }
        RuntimeEvent::ApprovalResolved { id, outcome } => {
            emit_line(&mut err, &format!("approval {id}: {outcome}"))
        }
        RuntimeEvent::Retry { reason, attempt } => {
            emit_line(&mut err, &format!("retry {attempt}: {reason}"))
        }
        RuntimeEvent::Fallback {
            from, to, reason, ..
        } => emit_line(&mut err, &format!("fallback {from} → {to}: {reason}")),
        RuntimeEvent::Warning { message } => emit_line(&mut err, &format!("warning: {message}")),
        RuntimeEvent::MemoryRecall { items } => {
            emit_line(&mut err, &format!("recalled {} memories", items.len()))
        }
        RuntimeEvent::BackgroundTask { task } => emit_line(&mut err, &task_line(task)),
        RuntimeEvent::Done {
            text, grounding, ..
        } => {
            emit_line(&mut std::io::stdout().lock(), text);
            if let Some(g) = grounding.as_ref().filter(|g| !g.claims.is_empty()) {
                emit_line(&mut err, &grounding_line(g));
            }
        }
        RuntimeEvent::TurnCancelled {} => emit_line(&mut err, "cancelled"),
        RuntimeEvent::TurnFailed { kind, message } => {
            let kind = serde_json::to_value(kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            emit_line(&mut err, &format!("error ({kind}): {message}"))
        }
        _ => {}
    }
}

/// The answer's numbers in one line: `numbers: 14 sourced, 1 unsupported (「36.10 元」)`.
pub(crate) fn grounding_line(g: &wyckoff_protocol::Grounding) -> String {
    let mut line = format!("numbers: {} sourced", g.sourced);
    if g.derived > 0 {
        line.push_str(&format!(", {} derived", g.derived));
    }
    line.push_str(&format!(", {} unsupported", g.unsupported));
    let missing: Vec<String> = g
        .unsupported_claims()
        .map(|c| format!("「{}」", c.text))
        .collect();
    if !missing.is_empty() {
        line.push_str(&format!(" ({})", missing.join(" ")));
    }
    if g.corrected {
        line.push_str(", after one correction");
    }
    line
}

/// One progress line for a background task: `⟳ 全市场扫描 [bg_…] L2 强势通道 5640 → 1234 62%`,
/// or `⋯ 全市场扫描 [bg_…] 排队中（同时最多运行 3 个）` while it waits for a slot.
fn task_line(task: &wyckoff_protocol::TaskInfo) -> String {
    use wyckoff_protocol::TaskStatus;
    let (mark, what) = match task.status {
        TaskStatus::Queued => (
            "⋯",
            format!(
                "排队中（同时最多运行 {} 个）",
                wyckoff_session::domain::agent::background::MAX_RUNNING_TASKS
            ),
        ),
        TaskStatus::Running => {
            let pct = task
                .progress
                .fraction
                .map(|f| format!(" {:.0}%", f * 100.0))
                .unwrap_or_default();
            let detail = if task.progress.detail.is_empty() {
                String::new()
            } else {
                format!(" {}", task.progress.detail)
            };
            ("⟳", format!("{}{detail}{pct}", task.progress.stage))
        }
        TaskStatus::Completed => ("✓", "完成".to_owned()),
        TaskStatus::Failed => ("✗", task.error.clone().unwrap_or_else(|| "失败".into())),
        TaskStatus::Cancelled => ("✗", "已取消".to_owned()),
    };
    format!("{mark} {} [{}] {what}", task.display_name, task.task_id)
}

/// Turns a session error into the exit status: bad input goes back to `main`, which
/// prints it and exits with 2; anything else is printed here and exits with 1.
fn fail(e: SessionError) -> anyhow::Result<ExitCode> {
    if e.is_user_error() {
        return Err(anyhow::Error::new(e));
    }
    eprintln!("wyckoff: {e}");
    Ok(ExitCode::from(1))
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let prompt = args.prompt.join(" ");
    if prompt.trim().is_empty() {
        anyhow::bail!("PROMPT is empty");
    }
    approvals::parse_expiry(&args.approval_expiry)
        .map_err(|e| anyhow::anyhow!("--approval-expiry: {e}"))?;
    if let Some(name) = args.provider.as_deref() {
        // Unknown names fail before the data home is touched.
        wyckoff_session::providers::parse_provider(name)?;
    }
    let home = DataHome::from_env();
    let (settings, notes) = wyckoff_config::settings::load(&home.settings_path())
        .with_context(|| format!("reading {}", home.settings_path().display()))?;
    for note in notes {
        eprintln!("wyckoff: settings: {note}");
    }
    let _log_guard = wyckoff_config::logging::init(&home.logs_dir(), "wyckoff-cli", false).ok();
    announce_skill(&home, &prompt)?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(run_async(args, prompt, home, settings))
}

/// Says which skill `/name args` will run as (the session expands it and stores what was
/// typed) and names skipped skill files; an unknown `/word` is bad input and never
/// reaches the model.
fn announce_skill(home: &DataHome, prompt: &str) -> anyhow::Result<()> {
    let skills = wyckoff_session::domain::agent::skills::load_skills(&home.skills_dir());
    for warning in &skills.warnings {
        eprintln!(
            "wyckoff: skills: {}: {}",
            warning.path.display(),
            warning.message
        );
    }
    if let Some(expansion) = skills.expand(prompt)? {
        let origin = match &expansion.source {
            wyckoff_session::domain::agent::SkillSource::Builtin => "built-in".to_string(),
            wyckoff_session::domain::agent::SkillSource::User { path } => {
                path.display().to_string()
            }
        };
        eprintln!("wyckoff: /{} expanded ({origin})", expansion.skill);
    }
    Ok(())
}

/// Who answers the run's approvals: `queue` puts calls in the inbox (nobody is at the
/// window); anything else is a headless policy.
fn answerer(args: &RunArgs) -> Answerer {
    if args.approve.trim() != approvals::QUEUE_POLICY {
        return Answerer::Policy(HeadlessApprover::parse(&args.approve));
    }
    Answerer::Inbox {
        requested_by: "conversation".into(),
        expiry: approvals::parse_expiry(&args.approval_expiry).unwrap_or(approvals::DEFAULT_EXPIRY),
    }
}

async fn run_async(
    args: RunArgs,
    prompt: String,
    home: DataHome,
    settings: wyckoff_config::Settings,
) -> anyhow::Result<ExitCode> {
    let mut options = DeskOptions::new(home);
    options.settings = Some(SharedSettings::new(settings));
    options.overrides = ModelOverrides {
        provider: args.provider.clone(),
        model: args.model.clone(),
        base_url: args.base_url.clone(),
        idle_timeout: args.idle_timeout.map(Duration::from_secs),
        context_window: args.context_window,
    };
    options.answerer = answerer(&args);
    let desk = match Desk::open(options).await {
        Ok(d) => d,
        Err(e) => return fail(e),
    };
    let printer = tokio::spawn(print(
        desk.subscribe(),
        args.json,
        desk.hub().services().background().clone(),
    ));
    let hub = desk.hub().clone();

    let cancel = CancellationToken::new();
    let on_signal = cancel.clone();
    let signals = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        eprintln!("wyckoff: cancelling… (Ctrl-C again to exit now)");
        on_signal.cancel();
        if tokio::signal::ctrl_c().await.is_ok() {
            // `exit` drops nothing: kill the commands' groups here, or they outlive us.
            wyckoff_session::reports::kill_running_commands();
            std::process::exit(130);
        }
    });

    let started = match hub.start_turn(args.session.as_deref(), &prompt, None).await {
        Ok(s) => s,
        Err(e) => {
            desk.close().await;
            return fail(e);
        }
    };
    let id = started.meta.conversation_id.clone();
    let mut end = started.end;
    let first = tokio::select! {
        e = &mut end => e,
        _ = cancel.cancelled() => {
            hub.cancel(&id);
            (&mut end).await
        }
    };
    let first = first.context("the turn ended without a report")?;
    let (mut outcome, mut save_error) = (first.outcome, first.save_error);
    let mut exit_override = None;
    let mut failure = None;
    if matches!(outcome, TurnOutcome::Done { .. }) || cancel.is_cancelled() {
        let wait = Duration::from_secs(args.wait_timeout);
        match hub.settle(&id, wait, &cancel).await {
            Ok(Settled::Quiet(Some(last))) => {
                outcome = last.outcome;
                save_error = last.save_error;
            }
            Ok(Settled::Quiet(None)) => {}
            Ok(Settled::TimedOut(still)) => {
                for t in &still {
                    eprintln!(
                        "wyckoff: background task {} ({}) still running after {} s; cancelled",
                        t.task_id, t.display_name, args.wait_timeout
                    );
                }
                exit_override = Some(124);
            }
            Ok(Settled::Cancelled) => exit_override = Some(130),
            Err(e) => failure = Some(e),
        }
    }
    if args.remember
        && failure.is_none()
        && matches!(outcome, TurnOutcome::Done { .. })
        && let Some(extracted) = hub.leave(&id).await
    {
        // Session end. A failure costs the memories, not the answer already printed.
        match extracted {
            Ok(o) => eprintln!(
                "wyckoff: remembered {} new memories ({} already known)",
                o.saved.len(),
                o.duplicates
            ),
            Err(e) => eprintln!("wyckoff: warning: memory extraction failed: {e}"),
        }
    }
    // The stream ends with the desk: the printer has printed every event of the run.
    drop(hub);
    desk.close().await;
    let _ = tokio::time::timeout(Duration::from_secs(5), printer).await;
    signals.abort();

    if let Some(e) = failure {
        return fail(e);
    }
    if let Some(e) = &save_error {
        eprintln!("wyckoff: warning: the conversation was not fully saved: {e}");
    }
    let code = exit_override.unwrap_or_else(|| u8::try_from(outcome.exit_code()).unwrap_or(1));
    Ok(ExitCode::from(code))
}

#[cfg(test)]
mod tests {
    use super::task_line;
    use wyckoff_protocol::{TaskInfo, TaskProgress, TaskStatus, TaskStep};

    fn task(status: TaskStatus, progress: TaskProgress, error: Option<&str>) -> TaskInfo {
        TaskInfo {
            task_id: "bg_1_screen_stocks".into(),
            tool_name: "screen_stocks".into(),
            display_name: "全市场扫描".into(),
            status,
            progress,
            started_at: "2026-12-04T09:00:00+00:00".into(),
            finished_at: None,
            session_id: Some("s1".into()),
            result_summary: None,
            result: None,
            error: error.map(str::to_owned),
        }
    }

    #[test]
    fn task_lines_by_status_and_progress() {
        let submitted = TaskProgress {
            stage: "已提交".into(),
            ..TaskProgress::default()
        };
        let layer = TaskProgress {
            stage: "L2 强势通道".into(),
            detail: "5640 → 1234".into(),
            fraction: Some(0.62),
            step: Some(TaskStep::ScreenLayer {
                layer: 2,
                input: 5640,
                passed: 1234,
            }),
        };
        let cases = [
            (
                task(TaskStatus::Queued, submitted.clone(), None),
                "⋯ 全市场扫描 [bg_1_screen_stocks] 排队中（同时最多运行 3 个）",
            ),
            (
                task(TaskStatus::Running, submitted.clone(), None),
                "⟳ 全市场扫描 [bg_1_screen_stocks] 已提交",
            ),
            (
                task(TaskStatus::Running, layer, None),
                "⟳ 全市场扫描 [bg_1_screen_stocks] L2 强势通道 5640 → 1234 62%",
            ),
            (
                task(TaskStatus::Completed, submitted.clone(), None),
                "✓ 全市场扫描 [bg_1_screen_stocks] 完成",
            ),
            (
                task(
                    TaskStatus::Failed,
                    submitted.clone(),
                    Some("interrupted by restart"),
                ),
                "✗ 全市场扫描 [bg_1_screen_stocks] interrupted by restart",
            ),
            (
                task(TaskStatus::Failed, submitted.clone(), None),
                "✗ 全市场扫描 [bg_1_screen_stocks] 失败",
            ),
            (
                task(TaskStatus::Cancelled, submitted, Some("cancelled")),
                "✗ 全市场扫描 [bg_1_screen_stocks] 已取消",
            ),
        ];
        for (t, want) in cases {
            assert_eq!(task_line(&t), want, "{:?}", t.status);
        }
    }
}
