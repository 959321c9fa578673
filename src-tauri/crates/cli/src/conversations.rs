//! `wyckoff conversations list|show|fork`: the stored conversations
//! from the shell, and forking one at a message. `wyckoff run --session ID` continues any
//! of them, a fork included.
//!
//! Message ids are the messages' sequence numbers in their conversation (1, 2, …); a fork
//! keeps them, so message #3 of a fork is message #3 of its source.
//!
//! Exit status: 0 done; 2 an unknown conversation or message (nothing is written);
//! 1 anything else (a tool round still running at the fork point, storage errors).

use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::market::print_json;
use serde::Serialize;
use serde_json::Value;
use wyckoff_config::DataHome;
use wyckoff_protocol::{Message, UserOrigin};
use wyckoff_session::Desk;
use wyckoff_session::domain::memory::{
    Conversation, ConversationStore, MemoryError, MessageStatus, StoredMessage,
};

#[derive(Debug, Args)]
pub struct ConversationsArgs {
    #[command(subcommand)]
    command: ConversationsCommand,
}

#[derive(Debug, Subcommand)]
enum ConversationsCommand {
    /// Most recently active first: id, updated, message count, title, and for a fork the
    /// conversation and message it came from.
    List {
        /// Also list archived conversations.
        #[arg(long)]
        all: bool,
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// One conversation's messages with their ids, roles, text and tool calls.
    Show {
        id: String,
        /// Print JSON (full texts and tool arguments) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Copy a conversation up to and including one of its messages into a new
    /// conversation, and print the new conversation's id (continue it with `wyckoff run
    /// --session ID`). Forking at a message that called tools, or at one of their
    /// results, takes the whole tool round. The original is not changed.
    Fork {
        /// The conversation to fork.
        id: String,
        /// The message to fork at (its id from `wyckoff conversations show`, `7` or `#7`).
        #[arg(long = "from", value_name = "MESSAGE_ID", value_parser = parse_message_id)]
        from: i64,
        /// Print JSON instead of the bare id.
        #[arg(long)]
        json: bool,
    },
}

fn parse_message_id(text: &str) -> Result<i64, String> {
    let digits = text.trim().trim_start_matches('#');
    digits
        .parse::<i64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| format!("`{text}` is not a message id (a positive number, e.g. 7 or #7)"))
}

/// Where a fork came from, as printed.
#[derive(Debug, Serialize)]
struct ForkedFrom {
    conversation_id: String,
    message_id: i64,
}

#[derive(Debug, Serialize)]
struct ConversationRow {
    id: String,
    title: String,
    model: String,
    archived: bool,
    created_at: String,
    updated_at: String,
    message_count: i64,
    forked_from: Option<ForkedFrom>,
}

impl ConversationRow {
    fn new(c: Conversation, message_count: i64) -> Self {
        ConversationRow {
            forked_from: c.forked_from.map(|f| ForkedFrom {
                conversation_id: f.conversation_id,
                message_id: f.message_seq,
            }),
            id: c.id,
            title: c.title,
            model: c.model,
            archived: c.archived,
            created_at: c.created_at.to_rfc3339(),
            updated_at: c.updated_at.to_rfc3339(),
            message_count,
        }
    }
}

#[derive(Debug, Serialize)]
struct ToolCallRow {
    id: String,
    name: String,
    args: Value,
}

#[derive(Debug, Serialize)]
struct MessageRow {
    id: i64,
    role: &'static str,
    /// `user` (typed), `system_notification`, `internal_retry` or `summary`; user
    /// messages only.
    #[serde(skip_serializing_if = "Option::is_none")]
    origin: Option<UserOrigin>,
    text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCallRow>,
    /// A tool result: the call it answers, the tool, and whether it is an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_name: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    is_error: bool,
    /// Written during a turn that never finished.
    interrupted: bool,
    created_at: String,
    /// What was typed, for a message a skill expanded.
    #[serde(skip_serializing_if = "Option::is_none")]
    typed: Option<String>,
    /// A delegate result's sub-agent steps.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    sub_agent: Vec<wyckoff_protocol::SubAgentStep>,
    /// A background task's notification: which task, how it ended, its summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    task_notice: Option<wyckoff_protocol::TaskNotice>,
    /// An approval-inbox notification: which queued call, how it was decided, by whom.
    #[serde(skip_serializing_if = "Option::is_none")]
    approval_notice: Option<wyckoff_protocol::ApprovalNotice>,
    /// A final answer's grounding: where each number and code came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    grounding: Option<wyckoff_protocol::Grounding>,
}

/// `conversations show --json`.
#[derive(Debug, Serialize)]
struct Shown {
    conversation: ConversationRow,
    messages: Vec<MessageRow>,
}

/// `conversations fork --json`.
#[derive(Debug, Serialize)]
struct Forked {
    /// The new conversation's id.
    id: String,
    /// The last message copied: the fork point, or the end of its tool round.
    through_message_id: i64,
    conversation: ConversationRow,
}

impl From<StoredMessage> for MessageRow {
    fn from(m: StoredMessage) -> Self {
        let role = match &m.message {
            Message::User { .. } => "user",
            Message::Assistant { .. } => "assistant",
            Message::Tool { .. } => "tool",
        };
        let (origin, tool_call_id, tool_name, is_error) = match &m.message {
            Message::User { origin, .. } => (Some(*origin), None, None, false),
            Message::Assistant { .. } => (None, None, None, false),
            Message::Tool {
                tool_call_id,
                name,
                is_error,
                ..
            } => (
                None,
                Some(tool_call_id.clone()),
                Some(name.clone()),
                *is_error,
            ),
        };
        MessageRow {
            id: m.seq,
            role,
            origin,
            text: m.message.text().to_owned(),
            tool_calls: m
                .message
                .tool_calls()
                .iter()
                .map(|c| ToolCallRow {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    args: c.args.clone(),
                })
                .collect(),
            tool_call_id,
            tool_name,
            is_error,
            interrupted: m.status == MessageStatus::Interrupted,
            created_at: m.created_at.to_rfc3339(),
            typed: m.skill.map(|s| s.typed),
            sub_agent: m.sub_agent,
            task_notice: m.task_notice,
            approval_notice: m.approval_notice,
            grounding: m.grounding,
        }
    }
}

pub fn run(args: ConversationsArgs) -> anyhow::Result<ExitCode> {
    crate::market::runtime()?.block_on(execute(args))
}

async fn execute(args: ConversationsArgs) -> anyhow::Result<ExitCode> {
    let home = DataHome::from_env();
    // Reading commands never create a data home: with no database there is nothing
    // stored yet, and the desk is opened only over one that exists.
    let desk = if home.db_path().is_file() {
        Some(crate::market::desk().await?)
    } else {
        None
    };
    let outcome = command(args, desk.as_deref()).await;
    if let Some(desk) = &desk {
        desk.close().await;
    }
    outcome
}

async fn command(args: ConversationsArgs, desk: Option<&Desk>) -> anyhow::Result<ExitCode> {
    let outcome = match (args.command, desk) {
        (ConversationsCommand::List { all, limit, json }, desk) => {
            let rows = match desk {
                Some(desk) => list(desk.services().conversations(), all, limit).await,
                None => Ok(Vec::new()),
            };
            rows.map(|rows| print_list(&rows, json))
        }
        (ConversationsCommand::Show { id, .. } | ConversationsCommand::Fork { id, .. }, None) => {
            Err(MemoryError::ConversationNotFound(id))
        }
        (ConversationsCommand::Show { id, json }, Some(desk)) => {
            show(desk.services().conversations(), &id, json).await
        }
        (ConversationsCommand::Fork { id, from, json }, Some(desk)) => {
            fork(
                desk.home(),
                desk.services().conversations(),
                &id,
                from,
                json,
            )
            .await
        }
    };
    match outcome {
        Ok(printed) => {
            printed?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("wyckoff conversations: {e}");
            let code = match e {
                MemoryError::ConversationNotFound(_) | MemoryError::MessageNotFound { .. } => 2,
                _ => 1,
            };
            Ok(ExitCode::from(code))
        }
    }
}

async fn list(
    store: &ConversationStore,
    all: bool,
    limit: usize,
) -> Result<Vec<ConversationRow>, MemoryError> {
    let mut rows = Vec::new();
    for c in store.list(all, limit).await? {
        let count = store.message_count(&c.id).await?;
        rows.push(ConversationRow::new(c, count));
    }
    Ok(rows)
}

/// The outer result is the store's (decides the exit status), the inner one printing's.
type Printed = Result<anyhow::Result<()>, MemoryError>;

async fn show(store: &ConversationStore, id: &str, json: bool) -> Printed {
    let conversation = store.get(id).await?;
    let messages: Vec<MessageRow> = store
        .load_messages(id)
        .await?
        .into_iter()
        .map(MessageRow::from)
        .collect();
    let row = ConversationRow::new(conversation, i64::try_from(messages.len()).unwrap_or(0));
    if json {
        let shown = Shown {
            conversation: row,
            messages,
        };
        return Ok(print_json(&shown));
    }
    println!("{}", conversation_line(&row));
    for m in &messages {
        println!("{}", message_text(m));
    }
    Ok(Ok(()))
}

async fn fork(
    home: &DataHome,
    store: &ConversationStore,
    id: &str,
    at: i64,
    json: bool,
) -> Printed {
    let fork = match store.fork(id, at).await {
        // A round left open by a process that died is not "still running": its turn is
        // marked interrupted (as `wyckoff run` does at start-up; a live app's or run's
        // turns are left alone) and the fork tried once more.
        Err(MemoryError::ForkInRunningToolRound { .. }) => {
            let root = home.root().to_path_buf();
            let alive = move |owner: &str| wyckoff_config::lease::is_alive_at(&root, owner);
            store.mark_orphaned_turns_interrupted(&alive).await?;
            store.fork(id, at).await?
        }
        other => other?,
    };
    let new_id = fork.conversation.id.clone();
    if json {
        let forked = Forked {
            id: new_id,
            through_message_id: fork.through_seq,
            conversation: ConversationRow::new(fork.conversation, fork.message_count),
        };
        return Ok(print_json(&forked));
    }
    println!("{new_id}");
    let round = if fork.through_seq > at {
        format!(" (its tool round through #{})", fork.through_seq)
    } else {
        String::new()
    };
    eprintln!(
        "wyckoff conversations: forked {id} at #{at}{round}: {} messages; continue with `wyckoff run --session {new_id} …`",
        fork.message_count
    );
    Ok(Ok(()))
}

fn print_list(rows: &[ConversationRow], json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(&rows);
    }
    if rows.is_empty() {
        println!("(no conversations)");
    }
    for row in rows {
        println!("{}", conversation_line(row));
    }
    Ok(())
}

/// `ID  2026-12-04 16:40  3 msgs  title  (forked from SRC at #2)`.
fn conversation_line(row: &ConversationRow) -> String {
    // RFC 3339 in UTC: `2026-12-04T16:40:12.345+00:00` → `2026-12-04 16:40`.
    let updated = row
        .updated_at
        .get(..16)
        .map_or_else(|| row.updated_at.clone(), |t| t.replacen('T', " ", 1));
    let title = if row.title.is_empty() {
        "(untitled)"
    } else {
        row.title.as_str()
    };
    let mut line = format!("{}  {updated}  {} msgs  {title}", row.id, row.message_count);
    if row.archived {
        line.push_str("  [archived]");
    }
    if let Some(from) = &row.forked_from {
        line.push_str(&format!(
            "  (forked from {} at #{})",
            from.conversation_id, from.message_id
        ));
    }
    line
}

/// Characters of a tool result or tool arguments shown in text mode.
const BRIEF_CHARS: usize = 160;

fn brief(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= BRIEF_CHARS {
        return flat;
    }
    let mut cut: String = flat.chars().take(BRIEF_CHARS).collect();
    cut.push('…');
    cut
}

/// `全市场扫描 [bg_1_screen_stocks] completed`, with why it failed or was cancelled.
fn notice_text(n: &wyckoff_protocol::TaskNotice) -> String {
    let outcome = match n.outcome {
        wyckoff_protocol::TaskOutcome::Completed => "completed",
        wyckoff_protocol::TaskOutcome::Failed => "failed",
        wyckoff_protocol::TaskOutcome::Cancelled => "cancelled",
    };
    match n.error.as_deref().filter(|e| !e.is_empty()) {
        Some(e) => format!("{} [{}] {outcome}: {}", n.display_name, n.task_id, brief(e)),
        None => format!("{} [{}] {outcome}", n.display_name, n.task_id),
    }
}

/// `更新持仓 [call_1] allowed by the app: <result>`, with why it did not run.
fn approval_text(n: &wyckoff_protocol::ApprovalNotice) -> String {
    use wyckoff_protocol::{Decider, InboxStatus};
    let by = match &n.decided_by {
        Some(Decider::App) => " in the app",
        Some(Decider::Cli) => " with wyckoff approvals",
        _ => "",
    };
    let status = match n.status {
        InboxStatus::Allowed if n.reason.is_some() => format!("allowed{by}, could not run"),
        InboxStatus::Allowed => format!("allowed{by}"),
        InboxStatus::Denied => format!("denied{by}"),
        InboxStatus::Expired => "expired unanswered".to_owned(),
        InboxStatus::Pending => "pending".to_owned(),
    };
    let detail = n
        .reason
        .as_deref()
        .or(n.summary.as_deref())
        .filter(|d| !d.is_empty());
    match detail {
        Some(d) => format!(
            "{} [{}] {status}: {}",
            n.display_name,
            n.request_id,
            brief(d)
        ),
        None => format!("{} [{}] {status}", n.display_name, n.request_id),
    }
}

/// `#3 assistant: text` and a `  → tool {args}` line per call; tool results in brief.
fn message_text(m: &MessageRow) -> String {
    let who = match (m.role, m.origin) {
        ("user", Some(UserOrigin::SystemNotification)) => "notification",
        ("user", Some(UserOrigin::Summary)) => "summary",
        ("tool", _) => "tool",
        (role, _) => role,
    };
    let mut head = format!("#{} {who}", m.id);
    if m.interrupted {
        head.push_str(" (interrupted)");
    }
    let mut out = match (m.tool_name.as_deref(), m.tool_call_id.as_deref()) {
        // The notice, not the text the model read.
        _ if m.task_notice.is_some() => {
            let n = m.task_notice.as_ref().map(notice_text).unwrap_or_default();
            format!("{head}: {n}")
        }
        _ if m.approval_notice.is_some() => {
            let n = m
                .approval_notice
                .as_ref()
                .map(approval_text)
                .unwrap_or_default();
            format!("{head}: {n}")
        }
        (Some(name), Some(call)) => {
            let error = if m.is_error { " error" } else { "" };
            format!("{head} ← {name} [{call}]{error}: {}", brief(&m.text))
        }
        _ => match m.typed.as_deref().unwrap_or(&m.text) {
            // a tool-calling message often says nothing: its calls follow
            "" => head,
            text => format!("{head}: {text}"),
        },
    };
    for call in &m.tool_calls {
        out.push_str(&format!(
            "\n    → {} [{}] {}",
            call.name,
            call.id,
            brief(&call.args.to_string())
        ));
    }
    if !m.sub_agent.is_empty() {
        out.push_str(&format!("\n    (sub-agent: {} steps)", m.sub_agent.len()));
    }
    if let Some(g) = m.grounding.as_ref().filter(|g| !g.claims.is_empty()) {
        out.push_str(&format!("\n    ({})", crate::run::grounding_line(g)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_ids_parse_with_or_without_the_hash() {
        let cases: [(&str, Option<i64>); 7] = [
            ("7", Some(7)),
            ("#7", Some(7)),
            (" 12 ", Some(12)),
            ("0", None),
            ("-3", None),
            ("seven", None),
            ("", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_message_id(text).ok(), want, "{text:?}");
        }
    }

    #[test]
    fn long_tool_text_is_cut_to_the_brief_length() {
        assert_eq!(brief("a  b\n c"), "a b c");
        let long = "字".repeat(BRIEF_CHARS + 5);
        let cut = brief(&long);
        assert_eq!(cut.chars().count(), BRIEF_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(
            brief(&"字".repeat(BRIEF_CHARS)).chars().count(),
            BRIEF_CHARS
        );
    }

    #[test]
    fn a_notification_shows_its_notice_not_the_text_the_model_read() {
        use wyckoff_protocol::{TaskNotice, TaskOutcome};
        let notice = |outcome, error: Option<&str>| TaskNotice {
            task_id: "bg_1_screen_stocks".into(),
            tool_name: "screen_stocks".into(),
            display_name: "全市场扫描".into(),
            outcome,
            summary: Some("{}".into()),
            error: error.map(str::to_owned),
        };
        let row = |task_notice| MessageRow {
            id: 5,
            role: "user",
            origin: Some(UserOrigin::SystemNotification),
            text: "[SYSTEM NOTIFICATION - NOT USER INPUT] <status>completed</status>".into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            is_error: false,
            interrupted: false,
            created_at: String::new(),
            typed: None,
            sub_agent: Vec::new(),
            task_notice,
            approval_notice: None,
            grounding: None,
        };
        let cases = [
            (
                Some(notice(TaskOutcome::Completed, None)),
                "#5 notification: 全市场扫描 [bg_1_screen_stocks] completed",
            ),
            (
                Some(notice(TaskOutcome::Failed, Some("数据缺失"))),
                "#5 notification: 全市场扫描 [bg_1_screen_stocks] failed: 数据缺失",
            ),
            (
                None,
                "#5 notification: [SYSTEM NOTIFICATION - NOT USER INPUT] <status>completed</status>",
            ),
        ];
        for (n, want) in cases {
            assert_eq!(message_text(&row(n)), want);
        }
    }

    #[test]
    fn an_approval_notification_says_how_the_queued_call_was_decided() {
        use wyckoff_protocol::{ApprovalNotice, Decider, InboxStatus};
        let notice = |status, by, summary: Option<&str>, reason: Option<&str>| ApprovalNotice {
            request_id: "call_1".into(),
            tool_name: "update_portfolio".into(),
            display_name: "调仓".into(),
            status,
            decided_by: by,
            summary: summary.map(str::to_owned),
            reason: reason.map(str::to_owned),
        };
        let cases = [
            (
                notice(
                    InboxStatus::Allowed,
                    Some(Decider::App),
                    Some("现金 5000"),
                    None,
                ),
                "调仓 [call_1] allowed in the app: 现金 5000",
            ),
            (
                notice(
                    InboxStatus::Allowed,
                    Some(Decider::Cli),
                    None,
                    Some("持仓表被锁"),
                ),
                "调仓 [call_1] allowed with wyckoff approvals, could not run: 持仓表被锁",
            ),
            (
                notice(InboxStatus::Denied, Some(Decider::Cli), None, Some("不调")),
                "调仓 [call_1] denied with wyckoff approvals: 不调",
            ),
            (
                notice(InboxStatus::Expired, Some(Decider::Expiry), None, None),
                "调仓 [call_1] expired unanswered",
            ),
        ];
        for (n, want) in cases {
            assert_eq!(approval_text(&n), want);
        }
    }
}
