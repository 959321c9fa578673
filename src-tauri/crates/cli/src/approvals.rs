//! `wyckoff approvals list|allow ID|deny ID|log [--json]`: the approval inbox from the
//! command line.
//!
//! `allow` runs the queued call with its stored arguments through the conversation's
//! session (registry and approval gate; the inbox decision is the approval) and hands its
//! result to that conversation as a follow-up turn; `deny` tells the model likewise. An
//! allow that cannot run now (the conversation runs a turn, no model, what the call would
//! do changed since it was queued) is refused with why, exit 2, the request left pending.
//! An answer at or after the request's expiry expires it: refused (exit 2), the model
//! told. A decision needs no model: with none, it is recorded and the conversation is
//! told by a later `approvals tell` (or the app). Unknown or already decided ids: a clear
//! error, exit 2, nothing changed. `--now` judges the expiry at a later time ("YYYY-MM-DD
//! HH:MM[:SS]" Beijing time, or RFC 3339), never an earlier one; decisions are recorded
//! at the real time.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chrono::{DateTime, NaiveDateTime, Utc};
use clap::{Args, Subcommand};
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use wyckoff_config::{DataHome, SharedSettings};
use wyckoff_protocol::{
    ApprovalPreview, Decider, DeskEvent, InboxRequest, InboxStatus, RuntimeEvent,
};
use wyckoff_session::approvals::{self, Answer, Telling};
use wyckoff_session::domain::agent::TurnOutcome;
use wyckoff_session::domain::inbox::{InboxError, InboxStore};
use wyckoff_session::{
    Answerer, ConversationHub, Desk, DeskOptions, ModelOverrides, SessionError, Settled,
    StartedTurn,
};

#[derive(Debug, Args)]
pub struct ApprovalsArgs {
    #[command(subcommand)]
    command: ApprovalsCommand,
}

#[derive(Debug, Clone, Args)]
struct ModelFlags {
    /// Provider for the follow-up turn (default: the settings' main model).
    #[arg(long, value_name = "NAME")]
    provider: Option<String>,
    /// Model id (with --provider), or a model entry id from the settings.
    #[arg(long, value_name = "ID")]
    model: Option<String>,
    /// Endpoint override, e.g. http://127.0.0.1:8080/v1.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
}

#[derive(Debug, Subcommand)]
enum ApprovalsCommand {
    /// Queued calls, newest first, with their arguments, preview and status.
    List {
        #[arg(long)]
        json: bool,
        /// The clock ("YYYY-MM-DD HH:MM[:SS]" Beijing time, or RFC 3339).
        #[arg(long, value_name = "TIME")]
        now: Option<String>,
    },
    /// Run a queued call with its stored arguments; the result goes to its conversation.
    Allow {
        id: String,
        #[arg(long)]
        json: bool,
        #[arg(long, value_name = "TIME")]
        now: Option<String>,
        #[command(flatten)]
        model: ModelFlags,
    },
    /// Refuse a queued call; its conversation is told.
    Deny {
        id: String,
        /// Why (the model reads it).
        #[arg(long)]
        reason: Option<String>,
        #[arg(long)]
        json: bool,
        #[arg(long, value_name = "TIME")]
        now: Option<String>,
        #[command(flatten)]
        model: ModelFlags,
    },
    /// Tell the conversations of decisions they have not heard of yet (made with no model
    /// to run the follow-up turn, or by a process that ended first).
    Tell {
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        model: ModelFlags,
    },
    /// Refuse every pending request past its expiry and tell each conversation.
    Expire {
        #[arg(long)]
        json: bool,
        #[arg(long, value_name = "TIME")]
        now: Option<String>,
        #[command(flatten)]
        model: ModelFlags,
    },
    /// Every approval decision from every path (dialog, always-allow, --approve, inbox,
    /// expiry), oldest first, secrets masked.
    Log {
        #[arg(long)]
        json: bool,
    },
}

/// Parses `--now`: RFC 3339, or a Beijing wall time to the minute or second. Answers are
/// judged at it only when it is later than the clock (see `AnswerTime`).
fn clock(now: Option<&str>) -> anyhow::Result<DateTime<Utc>> {
    let Some(text) = now.map(str::trim) else {
        return Ok(Utc::now());
    };
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.to_utc());
    }
    ["%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
        .map(wyckoff_session::time::from_beijing)
        .with_context(|| {
            format!("--now {text:?}: expected \"YYYY-MM-DD HH:MM[:SS]\" (Beijing time) or RFC 3339")
        })
}

pub fn run(args: ApprovalsArgs) -> anyhow::Result<ExitCode> {
    let home = DataHome::from_env();
    let (settings, notes) = wyckoff_config::settings::load(&home.settings_path())
        .with_context(|| format!("reading {}", home.settings_path().display()))?;
    for note in notes {
        eprintln!("wyckoff: settings: {note}");
    }
    let _log_guard = wyckoff_config::logging::init(&home.logs_dir(), "wyckoff-cli", false).ok();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        // Follow-up turns have nobody at the window either: their calls that need
        // approval are queued. Their answers are kept for the report.
        let mut options = DeskOptions::new(home);
        options.settings = Some(SharedSettings::new(settings));
        options.overrides = match &args.command {
            ApprovalsCommand::Tell { model, .. }
            | ApprovalsCommand::Expire { model, .. }
            | ApprovalsCommand::Allow { model, .. }
            | ApprovalsCommand::Deny { model, .. } => overrides_of(model.clone()),
            ApprovalsCommand::List { .. } | ApprovalsCommand::Log { .. } => {
                ModelOverrides::default()
            }
        };
        options.answerer = Answerer::Inbox {
            requested_by: "conversation".into(),
            expiry: approvals::DEFAULT_EXPIRY,
        };
        let desk = Desk::open(options).await?;
        let answer_text = tokio::spawn(last_answer(desk.subscribe()));
        match args.command {
            ApprovalsCommand::List { json, now } => {
                let listed = list(desk.services().inbox(), json, clock(now.as_deref())?).await;
                desk.close().await;
                listed
            }
            ApprovalsCommand::Log { json } => {
                let logged = log(desk.services().inbox(), json).await;
                desk.close().await;
                logged
            }
            ApprovalsCommand::Tell { json, .. } => tell(&desk, json).await,
            ApprovalsCommand::Expire { json, now, .. } => {
                let now = clock(now.as_deref())?;
                expire(&desk, json, now).await
            }
            ApprovalsCommand::Allow { id, json, now, .. } => {
                let now = clock(now.as_deref())?;
                answer(&desk, &id, Answer::Allow, None, json, now, answer_text).await
            }
            ApprovalsCommand::Deny {
                id,
                reason,
                json,
                now,
                ..
            } => {
                let now = clock(now.as_deref())?;
                answer(&desk, &id, Answer::Deny, reason, json, now, answer_text).await
            }
        }
    })
}

async fn list(inbox: &InboxStore, json: bool, now: DateTime<Utc>) -> anyhow::Result<ExitCode> {
    let requests = inbox.list(now).await?;
    let untold: Vec<String> = inbox
        .untold()
        .await?
        .into_iter()
        .map(|u| u.request.id)
        .collect();
    if json {
        crate::market::print_json(&requests)?;
        return Ok(ExitCode::SUCCESS);
    }
    if requests.is_empty() {
        println!("the approval inbox is empty");
    }
    for r in &requests {
        println!(
            "{}  {}  {} ({})  conversation {}  asked by {}  created {}  expires {}",
            r.id,
            r.status.as_str(),
            r.tool,
            r.display_name,
            r.conversation_id,
            r.requested_by,
            r.created_at,
            r.expires_at
        );
        println!("    args {}", r.args);
        if let Some(preview) = &r.preview {
            println!("    {}", preview_line(preview));
        }
        if untold.contains(&r.id) {
            println!(
                "    its conversation was not told yet (no model then): `wyckoff approvals tell`"
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The preview the app's dialog shows, on one or more lines.
fn preview_line(preview: &ApprovalPreview) -> String {
    match preview {
        ApprovalPreview::Command {
            command,
            cwd,
            timeout_secs,
            ..
        } => format!("command {command:?} in {cwd} (limit {timeout_secs} s)"),
        ApprovalPreview::FileWrite {
            path,
            created,
            diff,
        } => {
            let verb = if *created { "creates" } else { "changes" };
            format!("{verb} {path}\n{}", diff.trim_end().replace('\n', "\n    "))
        }
        ApprovalPreview::Invalid { reason } => format!("will be refused: {reason}"),
        ApprovalPreview::BuySizing(b) => buy_sizing_line(b),
        ApprovalPreview::BatchSizing(b) => batch_sizing_lines(b),
    }
}

/// A batch: each line (an add with its sizing and breaches), then the batch's total effect
/// on heat and positions and the limits it breaks.
fn batch_sizing_lines(b: &wyckoff_protocol::BatchPreview) -> String {
    let mut out = format!(
        "batch of {}: heat {:.2}% -> {:.2}% (limit {:.2}%), positions {} -> {} (limit {})",
        b.lines.len(),
        b.heat_before_pct,
        b.heat_after_pct,
        b.max_heat_pct,
        b.positions_before,
        b.positions_after,
        b.max_positions
    );
    if let Some(why) = &b.unavailable {
        out.push_str(&format!("; not sized: {why}"));
    }
    for breach in &b.breaches {
        out.push_str(&format!(
            "\n    batch breaks {}: {}",
            breach.name(),
            breach.describe()
        ));
    }
    for l in &b.lines {
        let line = match &l.buy {
            Some(buy) => buy_sizing_line(buy),
            None => format!(
                "{} {}: {} shares held, {}",
                l.action,
                l.code,
                l.held_shares,
                l.shares.map_or("—".to_owned(), |s| format!("{s} shares"))
            ),
        };
        out.push_str(&format!("\n  {}. {}", l.line, line.replace('\n', "\n  ")));
    }
    out
}

/// A buy's sizing: the rules' shares, stop and risk beside the proposed, and each breached
/// limit.
fn buy_sizing_line(b: &wyckoff_protocol::BuyPreview) -> String {
    let yuan = |fen: i64| format!("{:.2}", fen as f64 / 100.0);
    let mut out = match &b.sizing {
        Some(s) => format!(
            "buy {} {}: proposed {} shares (risk {} yuan, {:.2}%); rules give {} shares, stop {:.2} ({}), risk {} yuan ({:.2}%)",
            b.code,
            b.name,
            b.proposed_shares,
            yuan(s.proposed_risk_fen),
            s.proposed_risk_pct,
            s.shares,
            s.stop_e6 as f64 / 1e6,
            s.stop_from,
            yuan(s.risk_fen),
            s.risk_pct
        ),
        None => format!(
            "buy {} {}: {} shares, not sized: {}",
            b.code,
            b.name,
            b.proposed_shares,
            b.unavailable.as_deref().unwrap_or("")
        ),
    };
    for breach in &b.breaches {
        out.push_str(&format!(
            "\n    breaks {}: {}",
            breach.name(),
            breach.describe()
        ));
    }
    out
}

async fn log(inbox: &InboxStore, json: bool) -> anyhow::Result<ExitCode> {
    let entries = inbox.log().await?;
    if json {
        crate::market::print_json(&entries)?;
        return Ok(ExitCode::SUCCESS);
    }
    if entries.is_empty() {
        println!("no approval decisions yet");
    }
    for e in &entries {
        println!(
            "{}  {}  {}  by {}  call {}{}{}  args {}",
            e.at,
            e.tool,
            e.decision.as_str(),
            decider_label(&e.decided_by),
            e.call_id,
            e.request_id
                .as_deref()
                .map(|r| format!("  request {r}"))
                .unwrap_or_default(),
            e.conversation_id
                .as_deref()
                .map(|c| format!("  conversation {c}"))
                .unwrap_or_default(),
            e.args
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn decider_label(by: &Decider) -> String {
    match by {
        Decider::Dialog => "the dialog".to_owned(),
        Decider::AlwaysAllow => "always-allow".to_owned(),
        Decider::Policy { approve } => format!("--approve {approve}"),
        Decider::Cli => "wyckoff approvals".to_owned(),
        Decider::App => "the app's inbox".to_owned(),
        Decider::Expiry => "expiry".to_owned(),
        Decider::Bot { bot, sender, label } => format!("bot {bot}: {label} ({sender})"),
    }
}

/// The follow-up turn's answer, kept for the report (`--json` never mixes turn events
/// into the one object printed): the last `done` text of the desk's stream until it ends.
async fn last_answer(mut events: UnboundedReceiver<DeskEvent>) -> Option<String> {
    let mut answer = None;
    while let Some(event) = events.recv().await {
        if let DeskEvent::Turn {
            event: RuntimeEvent::Done { text, .. },
            ..
        } = event
        {
            answer = Some(text);
        }
    }
    answer
}

fn overrides_of(model: ModelFlags) -> ModelOverrides {
    ModelOverrides {
        provider: model.provider,
        model: model.model,
        base_url: model.base_url,
        ..ModelOverrides::default()
    }
}

#[allow(clippy::too_many_arguments)]
async fn answer(
    desk: &Desk,
    id: &str,
    answer: Answer,
    reason: Option<String>,
    json: bool,
    now: DateTime<Utc>,
    answer_text: JoinHandle<Option<String>>,
) -> anyhow::Result<ExitCode> {
    let hub = desk.hub();
    let decided = approvals::answer(hub, id, answer, Decider::Cli, reason, now).await;
    let mut decided = match decided {
        Ok(d) => d,
        Err(e) => {
            // the changed preview is read back before the desk (and its database) closes
            let shown = match &e {
                SessionError::Inbox(InboxError::PreviewChanged { id, preview }) => Some(
                    preview_changed(desk.services().inbox(), id, preview.as_deref(), json).await,
                ),
                _ => None,
            };
            desk.close().await;
            return match shown {
                Some(shown) => shown,
                None => Err(e.into()),
            };
        }
    };
    let told = follow_up(hub, &decided.request, decided.follow_up.take()).await;
    desk.close().await;
    let answer = answer_text.await.ok().flatten();
    let request = &decided.request;
    report(
        request,
        decided.tool_result.as_deref(),
        answer.as_deref(),
        json,
    )?;
    let mut code = if decided.failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    };
    match (&decided.told, told) {
        (_, Err(e)) => {
            eprintln!("wyckoff: the conversation was not told: {e}");
            code = ExitCode::from(1);
        }
        (Telling::WaitsForModel(why), Ok(())) => eprintln!(
            "wyckoff: the decision is recorded; conversation {} is told once a model is available (run `wyckoff approvals tell` then; the app does it by itself): {why}",
            request.conversation_id
        ),
        (Telling::AfterTurn, Ok(())) => eprintln!(
            "wyckoff: the decision is recorded; conversation {} runs a turn elsewhere and is told after it (`wyckoff approvals tell`, or the app by itself)",
            request.conversation_id
        ),
        (Telling::Failed(why), Ok(())) => {
            eprintln!(
                "wyckoff: the decision is recorded, but the conversation was not told: {why} (`wyckoff approvals tell` tries again)"
            );
            code = ExitCode::from(1);
        }
        (Telling::Now, Ok(())) => {}
    }
    if request.status == InboxStatus::Expired {
        eprintln!(
            "wyckoff: approval request {} expired at {}: refused",
            request.id, request.expires_at
        );
        return Ok(ExitCode::from(2));
    }
    Ok(code)
}

/// An allow refused because what the call would do changed: the new preview, to be
/// looked at and allowed again (exit 2, the request still pending).
async fn preview_changed(
    inbox: &InboxStore,
    id: &str,
    preview: Option<&ApprovalPreview>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    if json {
        let request = inbox.get(id).await?;
        crate::market::print_json(&json!({
            "request": request,
            "preview_changed": true,
        }))?;
    }
    let now = preview
        .map(preview_line)
        .unwrap_or_else(|| "no preview".to_owned());
    eprintln!(
        "wyckoff: approval request {id} is still pending: what it would do changed since it was queued. Now it\n    {}\nAllow it again (`wyckoff approvals allow {id}`) if you still want that.",
        now.replace('\n', "\n    ")
    );
    Ok(ExitCode::from(2))
}

/// `approvals tell`: the conversations of decisions not told yet get their follow-up
/// turns now (exit 2 when there is no model to run them).
async fn tell(desk: &Desk, json: bool) -> anyhow::Result<ExitCode> {
    let hub = desk.hub();
    let mut waiting = approvals::tell_waiting(hub).await;
    let mut failed = false;
    let mut told = Vec::new();
    if let Ok(waiting) = &mut waiting {
        for (request, how, started) in waiting.told.iter_mut() {
            let ended = follow_up(hub, request, started.take()).await;
            let ok = ended.is_ok() && matches!(how, Telling::Now);
            if let Err(e) = ended {
                eprintln!(
                    "wyckoff: conversation {} was not told: {e}",
                    request.conversation_id
                );
            }
            failed |= !ok;
            told.push((request.clone(), ok));
        }
    }
    desk.close().await;
    let waiting = waiting?;
    if json {
        crate::market::print_json(&json!({
            "told": told.iter().filter(|(_, ok)| *ok).map(|(r, _)| r).collect::<Vec<_>>(),
            "waiting": waiting.still_waiting,
            "no_model": waiting.no_model,
        }))?;
    } else {
        for (r, ok) in &told {
            let verb = if *ok { "told" } else { "could not tell" };
            println!(
                "{verb} conversation {} that {} ({}) was {}",
                r.conversation_id,
                r.id,
                r.tool,
                r.status.as_str()
            );
        }
        if told.is_empty() && waiting.still_waiting.is_empty() {
            println!("no decision waits to be told");
        }
    }
    if let Some(why) = &waiting.no_model {
        eprintln!(
            "wyckoff: {} decision(s) wait to be told, and there is no model to tell them: {why}",
            waiting.still_waiting.len()
        );
        return Ok(ExitCode::from(2));
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `approvals expire`: every pending request past its expiry is refused and its
/// conversation told.
async fn expire(desk: &Desk, json: bool, now: DateTime<Utc>) -> anyhow::Result<ExitCode> {
    let hub = desk.hub();
    let mut expired = approvals::expire_due(hub, now).await;
    let mut failed = false;
    let mut requests = Vec::new();
    if let Ok(expired) = &mut expired {
        for decided in expired.iter_mut() {
            let started = decided.follow_up.take();
            let ended = follow_up(hub, &decided.request, started)
                .await
                .map_err(|e| e.to_string());
            match (decided.told.clone(), ended) {
                (_, Err(e)) | (Telling::Failed(e), Ok(())) => {
                    eprintln!(
                        "wyckoff: conversation {} was not told: {e}",
                        decided.request.conversation_id
                    );
                    failed = true;
                }
                (Telling::WaitsForModel(why), Ok(())) => eprintln!(
                    "wyckoff: conversation {} is told once a model is available (`wyckoff approvals tell`): {why}",
                    decided.request.conversation_id
                ),
                (Telling::Now | Telling::AfterTurn, Ok(())) => {}
            }
            requests.push(decided.request.clone());
        }
    }
    desk.close().await;
    expired?;
    if json {
        crate::market::print_json(&requests)?;
    } else {
        for r in &requests {
            println!(
                "expired {} ({}) in conversation {}",
                r.id, r.tool, r.conversation_id
            );
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Waits for the follow-up turn that tells the conversation, if one started, then
/// settles it (its own tasks answered too).
async fn follow_up(
    hub: &Arc<ConversationHub>,
    request: &InboxRequest,
    started: Option<StartedTurn>,
) -> Result<(), SessionError> {
    let conversation = request.conversation_id.clone();
    let Some(started) = started else {
        return Ok(());
    };
    let end = started.end.await.map_err(|_| {
        SessionError::InvalidOption("the follow-up turn ended without a report".into())
    })?;
    if let TurnOutcome::Failed { message, .. } = &end.outcome {
        return Err(SessionError::InvalidOption(format!(
            "the follow-up turn failed: {message}"
        )));
    }
    if let Settled::TimedOut(still) = hub
        .settle(
            &conversation,
            Duration::from_secs(600),
            &CancellationToken::new(),
        )
        .await?
    {
        for t in still {
            eprintln!(
                "wyckoff: background task {} ({}) still running; cancelled",
                t.task_id, t.display_name
            );
        }
    }
    Ok(())
}

fn report(
    request: &InboxRequest,
    tool_result: Option<&str>,
    answer: Option<&str>,
    json: bool,
) -> anyhow::Result<()> {
    if json {
        let value = json!({
            "request": request,
            "tool_result": tool_result,
            "answer": answer,
        });
        crate::market::print_json(&value)?;
        return Ok(());
    }
    println!(
        "{} {} ({}) in conversation {}",
        request.status.as_str(),
        request.id,
        request.tool,
        request.conversation_id
    );
    if let Some(result) = tool_result {
        println!("result: {result}");
    }
    if let Some(answer) = answer {
        println!("{answer}");
    }
    Ok(())
}
