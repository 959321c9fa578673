//! Chat commands: start, cancel and leave turns through the conversation hub (events go
//! out as `ConversationEvent`s, see `crate::stream`); conversations from the store.
//! Thin adapters over `wyckoff-session`, `wyckoff-memory` and `wyckoff-agent`.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::State;
use wyckoff_protocol::{ApprovalDecision, Message, Usage};
use wyckoff_session::domain::memory::MessageStatus;
use wyckoff_session::{ConversationHub, Desk, Services};

use crate::chat::ChatState;
use crate::commands::error::{CommandError, CommandErrorKind};
use crate::state::AppState;

pub(crate) async fn services(
    state: &AppState,
    chat: &ChatState,
) -> Result<Arc<Services>, CommandError> {
    Ok(chat
        .services(&state.home, &state.settings, state.secrets.clone())
        .await?)
}

/// The process's desk (opened on first use, the current settings applied).
pub(crate) async fn desk(state: &AppState, chat: &ChatState) -> Result<Arc<Desk>, CommandError> {
    Ok(chat
        .desk(&state.home, &state.settings, state.secrets.clone())
        .await?)
}

pub(crate) async fn hub(
    state: &AppState,
    chat: &ChatState,
) -> Result<Arc<ConversationHub>, CommandError> {
    Ok(chat
        .hub(&state.home, &state.settings, state.secrets.clone())
        .await?)
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct TurnStarted {
    pub conversation_id: String,
    pub turn: u32,
}

/// Starts the user's turn in a conversation (a new one when `conversation_id` is
/// `None`). Its events go out as `ConversationEvent`s tagged with `client_ref`, until
/// exactly one terminal event; follow-up turns come the same way, untagged.
#[tauri::command]
#[specta::specta]
pub async fn start_turn(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    conversation_id: Option<String>,
    text: String,
    client_ref: String,
) -> Result<TurnStarted, CommandError> {
    let hub = hub(&state, &chat).await?;
    let started = hub
        .start_turn(conversation_id.as_deref(), &text, Some(client_ref))
        .await?;
    Ok(TurnStarted {
        conversation_id: started.meta.conversation_id,
        turn: started.meta.turn,
    })
}

/// Cancels the running turn of a conversation; false when none is running.
#[tauri::command]
#[specta::specta]
pub fn cancel_turn(chat: State<'_, ChatState>, conversation_id: String) -> bool {
    chat.opened_hub()
        .is_some_and(|h| h.cancel(&conversation_id))
}

/// Answers a pending approval; false when it is no longer pending (answered, timed out).
#[tauri::command]
#[specta::specta]
pub fn answer_approval(chat: State<'_, ChatState>, id: String, decision: ApprovalDecision) -> bool {
    chat.approvals().answer(&id, decision)
}

/// Takes back an "always allow": the tool asks again from its next call in this
/// conversation. False when it was not always-allowed.
#[tauri::command]
#[specta::specta]
pub fn revoke_always_allowed(
    chat: State<'_, ChatState>,
    conversation_id: String,
    tool: String,
) -> bool {
    chat.opened_hub()
        .and_then(|h| h.gate(&conversation_id))
        .is_some_and(|g| g.revoke(&tool))
}

/// The user left a conversation (new chat, another conversation): its session ends and
/// what is worth remembering is extracted in the background. A running turn keeps its
/// session.
#[tauri::command]
#[specta::specta]
pub fn end_session(chat: State<'_, ChatState>, conversation_id: String) {
    if let Some(hub) = chat.opened_hub().cloned() {
        tauri::async_runtime::spawn(async move {
            hub.leave(&conversation_id).await;
        });
    }
}

/// Tools the user allowed "always" in this conversation's session.
#[tauri::command]
#[specta::specta]
pub fn always_allowed(chat: State<'_, ChatState>, conversation_id: String) -> Vec<String> {
    let mut tools: Vec<String> = chat
        .opened_hub()
        .and_then(|h| h.gate(&conversation_id))
        .map(|g| g.always_allowed().into_iter().collect())
        .unwrap_or_default();
    tools.sort();
    tools
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct ConversationSummary {
    pub id: String,
    pub title: String,
    pub model: String,
    /// RFC 3339.
    pub updated_at: String,
    /// Set on a fork: where it was taken (the source may since have been deleted).
    pub forked_from: Option<ForkedFrom>,
}

/// The conversation and message (its seq) a fork was taken at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ForkedFrom {
    pub conversation_id: String,
    pub message_seq: i64,
}

impl From<wyckoff_session::domain::memory::Conversation> for ConversationSummary {
    fn from(c: wyckoff_session::domain::memory::Conversation) -> Self {
        ConversationSummary {
            id: c.id,
            title: c.title,
            model: c.model,
            updated_at: c.updated_at.to_rfc3339(),
            forked_from: c.forked_from.map(|f| ForkedFrom {
                conversation_id: f.conversation_id,
                message_seq: f.message_seq,
            }),
        }
    }
}

#[tauri::command]
#[specta::specta]
pub async fn list_conversations(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Vec<ConversationSummary>, CommandError> {
    let services = services(&state, &chat).await?;
    let list = services.conversations().list(false, 500).await?;
    Ok(list.into_iter().map(Into::into).collect())
}

#[tauri::command]
#[specta::specta]
pub async fn rename_conversation(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    id: String,
    title: String,
) -> Result<(), CommandError> {
    let services = services(&state, &chat).await?;
    services.conversations().rename(&id, title.trim()).await?;
    Ok(())
}

#[tauri::command]
#[specta::specta]
pub async fn delete_conversation(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    id: String,
) -> Result<(), CommandError> {
    let hub = hub(&state, &chat).await?;
    if hub.is_running(&id) {
        return Err(CommandError::new(
            CommandErrorKind::Busy,
            "a turn is running in this conversation",
        ));
    }
    hub.services().conversations().delete(&id).await?;
    hub.forget(&id);
    Ok(())
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct SearchHit {
    pub conversation_id: String,
    pub conversation_title: String,
    pub snippet: String,
}

#[tauri::command]
#[specta::specta]
pub async fn search_conversations(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    query: String,
) -> Result<Vec<SearchHit>, CommandError> {
    let services = services(&state, &chat).await?;
    let hits = services.conversations().search(&query, 50).await?;
    Ok(hits
        .into_iter()
        .map(|h| SearchHit {
            conversation_id: h.conversation_id,
            conversation_title: h.conversation_title,
            snippet: h.snippet,
        })
        .collect())
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct HistoryMessage {
    /// The message's id in its conversation (its seq: 1, 2, …; a fork keeps them).
    pub seq: i64,
    pub message: Message,
    /// Written during a turn that never finished (the app stopped mid-turn).
    pub interrupted: bool,
    /// A user message a skill expanded: what was typed (shown) and the skill.
    pub skill: Option<wyckoff_protocol::SkillUse>,
    /// A delegate call's result: its sub-agent's progress steps (the pane's tool rows).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sub_agent: Vec<wyckoff_protocol::SubAgentStep>,
    /// A background task's notification: the notice the chat words (the model's text is
    /// `message`).
    pub task_notice: Option<wyckoff_protocol::TaskNotice>,
    /// A decided approval-inbox call's notification: the notice the chat words.
    pub approval_notice: Option<wyckoff_protocol::ApprovalNotice>,
    /// A final answer: where its numbers and codes came from (the marks and the status
    /// line under it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grounding: Option<wyckoff_protocol::Grounding>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct ConversationHistory {
    pub conversation: ConversationSummary,
    pub messages: Vec<HistoryMessage>,
    /// Token totals over the conversation's finished turns.
    pub usage: Usage,
    /// Whether the last turn was interrupted.
    pub last_turn_interrupted: bool,
}

#[tauri::command]
#[specta::specta]
pub async fn load_conversation(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    id: String,
) -> Result<ConversationHistory, CommandError> {
    let services = services(&state, &chat).await?;
    let store = services.conversations();
    let conversation = store.get(&id).await?;
    let stored = store.load_messages(&id).await?;
    let turns = store.turns(&id).await?;
    let mut usage = Usage::default();
    for t in &turns {
        if let Some(u) = &t.usage {
            usage.add(u);
        }
    }
    let last_turn_interrupted = turns.last().is_some_and(|t| {
        t.outcome == Some(wyckoff_session::domain::memory::TurnOutcome::Interrupted)
    });
    Ok(ConversationHistory {
        conversation: conversation.into(),
        messages: stored
            .into_iter()
            .map(|m| HistoryMessage {
                seq: m.seq,
                interrupted: m.status == MessageStatus::Interrupted,
                skill: m.skill,
                sub_agent: m.sub_agent,
                task_notice: m.task_notice,
                approval_notice: m.approval_notice,
                grounding: m.grounding,
                message: m.message,
            })
            .collect(),
        usage,
        last_turn_interrupted,
    })
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    Markdown,
    Json,
}

/// Writes the conversation to `<data home>/exports/` and returns the file's path.
#[tauri::command]
#[specta::specta]
pub async fn export_conversation(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    id: String,
    format: ExportFormat,
) -> Result<String, CommandError> {
    let services = services(&state, &chat).await?;
    let store = services.conversations();
    let (text, ext) = match format {
        ExportFormat::Markdown => (store.export_markdown(&id).await?, "md"),
        ExportFormat::Json => (store.export_json(&id).await?, "json"),
    };
    let dir = state.home.root().join("exports");
    let safe: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let path = dir.join(format!("{safe}.{ext}"));
    let written = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, text));
    written.map_err(|e| CommandError::internal(format!("{}: {e}", path.display())))?;
    Ok(path.display().to_string())
}
