//! `wyckoff approvals list|allow ID|deny ID|log [--json]`: the approval inbox from the
//! command line (issue 24 item 4).
//!
//! `allow` runs the queued call with its stored arguments through the conversation's
//! session (registry and approval gate; the inbox decision is the approval) and hands its
//! result to that conversation as a follow-up turn; `deny` tells the model likewise. An
//! answer at or after the request's expiry expires it: refused (exit 2), the model told.
//! Unknown or already decided ids: a clear error, exit 2, nothing changed. `--now` sets
//! the clock ("YYYY-MM-DD HH:MM[:SS]" Beijing time, or RFC 3339).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chrono::{DateTime, FixedOffset, NaiveDateTime, Utc};
use clap::{Args, Subcommand};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wyckoff_agent::{EventSink, SystemClock, TurnOutcome};
use wyckoff_config::{DataHome, Secrets};
use wyckoff_inbox::policy::{Answer, DEFAULT_EXPIRY};
use wyckoff_inbox::{InboxStore, QueueApprover};
use wyckoff_protocol::{ApprovalPreview, Decider, InboxRequest, InboxStatus, RuntimeEvent};
use wyckoff_session::{
    ConversationHub, HubOptions, ModelOverrides, Services, SessionError, Settled, TurnMeta,
    TurnOutput, approvals,
};

#[derive(Debug, Args)]
pub struct ApprovalsArgs {
    #[command(subcommand)]
    command: ApprovalsCommand,
}

#[derive(Debug, Args)]
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

/// Parses `--now`: RFC 3339, or a Beijing wall time to the minute or second.
fn clock(now: Option<&str>) -> anyhow::Result<DateTime<Utc>> {
    let Some(text) = now.map(str::trim) else {
        return Ok(Utc::now());
    };
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.to_utc());
    }
    let beijing = FixedOffset::east_opt(8 * 3600).context("Beijing offset")?;
    ["%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
        .and_then(|naive| naive.and_local_timezone(beijing).single())
        .map(|t| t.to_utc())
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
        let services = Services::open(home, settings, Arc::new(Secrets::system())).await?;
        match args.command {
            ApprovalsCommand::List { json, now } => {
                list(services.inbox(), json, clock(now.as_deref())?).await
            }
            ApprovalsCommand::Log { json } => log(services.inbox(), json).await,
            ApprovalsCommand::Expire { json, now, model } => {
                let now = clock(now.as_deref())?;
                expire(services, json, now, model).await
            }
            ApprovalsCommand::Allow {
                id,
                json,
                now,
                model,
            } => {
                let now = clock(now.as_deref())?;
                answer(services, &id, Answer::Allow, None, json, now, model).await
            }
            ApprovalsCommand::Deny {
                id,
                reason,
                json,
                now,
                model,
            } => {
                let now = clock(now.as_deref())?;
                answer(services, &id, Answer::Deny, reason, json, now, model).await
            }
        }
    })
}

async fn list(inbox: &InboxStore, json: bool, now: DateTime<Utc>) -> anyhow::Result<ExitCode> {
    let requests = inbox.list(now).await?;
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
    }
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
            "{}  {}  {}  by {}  call {}{}  args {}",
            e.at,
            e.tool,
            e.decision.as_str(),
            decider_label(&e.decided_by),
            e.call_id,
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
    }
}

/// The follow-up turn's events: its answer is kept for the report; `--json` never mixes
/// them into the one object printed.
struct FollowUpOutput {
    answer: Arc<std::sync::Mutex<Option<String>>>,
}

impl TurnOutput for FollowUpOutput {
    fn sink(&self, _turn: &TurnMeta) -> Arc<dyn EventSink> {
        let answer = self.answer.clone();
        Arc::new(wyckoff_agent::FnSink(move |event: RuntimeEvent| {
            if let RuntimeEvent::Done { text, .. } = event
                && let Ok(mut a) = answer.lock()
            {
                *a = Some(text);
            }
        }))
    }
}

/// A hub for the follow-up turns: nobody is at the window here either, so calls that
/// need approval in them are queued.
fn hub(
    services: Arc<Services>,
    overrides: ModelOverrides,
    answer: &AnswerSlot,
) -> Arc<ConversationHub> {
    let approver = Arc::new(QueueApprover::new(
        services.inbox().clone(),
        Arc::new(SystemClock),
        DEFAULT_EXPIRY,
        "conversation",
    ));
    ConversationHub::new(
        services,
        HubOptions {
            overrides,
            approver,
            output: Arc::new(FollowUpOutput {
                answer: answer.clone(),
            }),
        },
    )
}

type AnswerSlot = Arc<std::sync::Mutex<Option<String>>>;

#[allow(clippy::too_many_arguments)]
async fn answer(
    services: Services,
    id: &str,
    answer: Answer,
    reason: Option<String>,
    json: bool,
    now: DateTime<Utc>,
    model: ModelFlags,
) -> anyhow::Result<ExitCode> {
    let overrides = ModelOverrides {
        provider: model.provider,
        model: model.model,
        base_url: model.base_url,
        ..ModelOverrides::default()
    };
    // The follow-up turn needs a model: checked before anything is decided.
    if services.inbox().get(id).await?.status == InboxStatus::Pending {
        services.check_model(&overrides)?;
    }
    let services = Arc::new(services);
    let answer_text: AnswerSlot = Arc::default();
    let hub = hub(services.clone(), overrides, &answer_text);
    let decided = approvals::answer(&hub, id, answer, Decider::Cli, reason, now).await;
    let decided = match decided {
        Ok(d) => d,
        Err(e) => {
            hub.close().await;
            return Err(e.into());
        }
    };
    let mut decided = decided;
    let told = follow_up(&hub, &mut decided).await;
    hub.close().await;
    services.background().shutdown().await;
    let answer = answer_text.lock().ok().and_then(|a| a.clone());
    let request = &decided.request;
    report(
        request,
        decided.tool_result.as_deref(),
        answer.as_deref(),
        json,
    )?;
    if let Err(e) = told {
        eprintln!("wyckoff: the conversation was not told: {e}");
        return Ok(ExitCode::from(1));
    }
    if request.status == InboxStatus::Expired {
        eprintln!(
            "wyckoff: approval request {} expired at {}: refused (the conversation was told)",
            request.id, request.expires_at
        );
        return Ok(ExitCode::from(2));
    }
    Ok(if decided.failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `approvals expire`: every pending request past its expiry is refused and its
/// conversation told.
async fn expire(
    services: Services,
    json: bool,
    now: DateTime<Utc>,
    model: ModelFlags,
) -> anyhow::Result<ExitCode> {
    let overrides = ModelOverrides {
        provider: model.provider,
        model: model.model,
        base_url: model.base_url,
        ..ModelOverrides::default()
    };
    let services = Arc::new(services);
    let answer_text: AnswerSlot = Arc::default();
    let hub = hub(services.clone(), overrides, &answer_text);
    let mut expired = approvals::expire_due(&hub, now).await;
    let mut failed = false;
    let mut requests = Vec::new();
    if let Ok(expired) = &mut expired {
        for decided in expired.iter_mut() {
            if let Err(e) = follow_up(&hub, decided).await {
                eprintln!(
                    "wyckoff: conversation {} was not told: {e}",
                    decided.request.conversation_id
                );
                failed = true;
            }
            requests.push(decided.request.clone());
        }
    }
    hub.close().await;
    services.background().shutdown().await;
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

/// Waits for the follow-up turn that tells the conversation, then settles it (its own
/// tasks answered too).
async fn follow_up(
    hub: &Arc<ConversationHub>,
    decided: &mut approvals::Decided,
) -> Result<(), SessionError> {
    let conversation = decided.request.conversation_id.clone();
    let Some(started) = decided.follow_up.take() else {
        return Err(SessionError::InvalidOption(format!(
            "conversation {conversation} is busy; the decision waits for its next turn"
        )));
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
