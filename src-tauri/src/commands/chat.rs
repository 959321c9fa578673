//! Chat commands: one turn = one `Channel<RuntimeEvent>`; conversations from the store.
//! Thin adapters over `wyckoff-session`, `wyckoff-memory` and `wyckoff-agent`.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};
use tokio_util::sync::CancellationToken;
use wyckoff_memory::MessageStatus;
use wyckoff_protocol::{ApprovalDecision, ErrorKind, Message, RuntimeEvent, Usage};
use wyckoff_session::{Services, SessionError};

use wyckoff_agent::EventSink;

use crate::chat::{ChannelSink, ChatState, OpenSession};
use crate::state::AppState;

#[derive(Debug, Clone, Serialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChatError {
    /// No model is configured (or its key is missing): the UI leads to Settings.
    Setup {
        message: String,
    },
    /// A turn is already running in this conversation.
    Busy,
    NotFound {
        message: String,
    },
    /// `/word` names no skill: nothing was stored or sent.
    UnknownSkill {
        message: String,
    },
    Other {
        message: String,
    },
}

impl From<SessionError> for ChatError {
    fn from(e: SessionError) -> Self {
        let message = e.to_string();
        match e {
            SessionError::NoModelConfigured
            | SessionError::UnknownModelEntry(_)
            | SessionError::MissingKey { .. }
            | SessionError::UnknownProvider { .. } => ChatError::Setup { message },
            SessionError::SessionNotFound(_) => ChatError::NotFound { message },
            SessionError::Skill(_) => ChatError::UnknownSkill { message },
            _ => ChatError::Other { message },
        }
    }
}

impl From<wyckoff_memory::MemoryError> for ChatError {
    fn from(e: wyckoff_memory::MemoryError) -> Self {
        match e {
            wyckoff_memory::MemoryError::ConversationNotFound(_)
            | wyckoff_memory::MemoryError::NotFound(_) => ChatError::NotFound {
                message: e.to_string(),
            },
            _ => ChatError::Other {
                message: e.to_string(),
            },
        }
    }
}

pub(crate) async fn services(
    state: &AppState,
    chat: &ChatState,
) -> Result<Arc<Services>, ChatError> {
    Ok(chat
        .services(&state.home, state.settings(), state.secrets.clone())
        .await?)
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct TurnStarted {
    pub conversation_id: String,
}

/// Starts a turn in a conversation (a new one when `conversation_id` is `None`). Events
/// stream over `on_event` until exactly one terminal event.
#[tauri::command]
#[specta::specta]
pub async fn start_turn(
    app: AppHandle,
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    conversation_id: Option<String>,
    text: String,
    on_event: Channel<RuntimeEvent>,
) -> Result<TurnStarted, ChatError> {
    let services = services(&state, &chat).await?;
    // Refused before a conversation is made for it (the turn expands it again).
    services
        .skills()
        .current()
        .expand(&text)
        .map_err(|e| ChatError::UnknownSkill {
            message: e.to_string(),
        })?;
    let (id, open) = chat.session(&services, conversation_id.as_deref()).await?;
    let token = CancellationToken::new();
    let Some(turn) = chat.begin(&id, token.clone()) else {
        return Err(ChatError::Busy);
    };
    spawn_turn(
        app,
        id.clone(),
        turn,
        open,
        text,
        TurnOutput::Channel(on_event),
        token,
    );
    Ok(TurnStarted {
        conversation_id: id,
    })
}

/// Events of a turn the app started itself to deliver background-task completions
/// (§7.4): there is no per-turn channel, so they go out app-wide, tagged with the
/// conversation; the chat shows them if that conversation is open.
#[derive(Debug, Clone, Serialize, Deserialize, Type, tauri_specta::Event)]
pub struct NotificationTurnEvent {
    pub conversation_id: String,
    pub event: RuntimeEvent,
}

/// Where a turn's events go.
enum TurnOutput {
    Channel(Channel<RuntimeEvent>),
    AppEvent,
}

struct AppEventSink {
    app: AppHandle,
    conversation_id: String,
    on_terminal: Box<dyn Fn() + Send + Sync>,
}

impl EventSink for AppEventSink {
    fn emit(&self, event: RuntimeEvent) {
        let terminal = event.is_terminal();
        let e = NotificationTurnEvent {
            conversation_id: self.conversation_id.clone(),
            event,
        };
        if let Err(err) = tauri_specta::Event::emit(&e, &self.app) {
            tracing::debug!("notification turn event not sent: {err}");
        }
        if terminal {
            (self.on_terminal)();
        }
    }
}

/// Runs a turn registered as `turn` in the background; afterwards delivers any
/// background-task completions that arrived too late for it.
fn spawn_turn(
    app: AppHandle,
    id: String,
    turn: u64,
    open: Arc<OpenSession>,
    text: String,
    output: TurnOutput,
    token: CancellationToken,
) {
    let finish = {
        let (app, id) = (app.clone(), id.clone());
        move || app.state::<ChatState>().finish(&id, turn)
    };
    tauri::async_runtime::spawn(async move {
        let (sink, channel): (Arc<dyn EventSink>, _) = match output {
            TurnOutput::Channel(c) => (Arc::new(ChannelSink::new(c.clone(), finish)), Some(c)),
            TurnOutput::AppEvent => (
                Arc::new(AppEventSink {
                    app: app.clone(),
                    conversation_id: id.clone(),
                    on_terminal: Box::new(finish),
                }),
                None,
            ),
        };
        let result = open
            .session
            .lock()
            .await
            .run_turn(&text, sink.clone(), token)
            .await;
        match result {
            Ok(report) => {
                if let Some(e) = report.save_error {
                    tracing::error!(conversation = %id, "turn not fully stored: {e}");
                }
            }
            Err(e) => {
                // The turn never started: the UI still gets its one terminal event.
                let failed = RuntimeEvent::TurnFailed {
                    kind: ErrorKind::Internal,
                    message: e.to_string(),
                };
                match channel {
                    Some(c) => {
                        let _ = c.send(failed);
                    }
                    None => sink.emit(failed),
                }
            }
        }
        app.state::<ChatState>().finish(&id, turn);
        deliver_notifications(app.clone(), id);
    });
}

/// Delivers waiting background-task completions into their conversation (§7.4): at once
/// when it is idle; a running turn takes them at its next round, or this runs again
/// when it ends.
pub(crate) fn deliver_notifications(app: AppHandle, conversation_id: String) {
    tauri::async_runtime::spawn(async move {
        let chat = app.state::<ChatState>();
        let state = app.state::<AppState>();
        if chat.is_running(&conversation_id) {
            return;
        }
        let Ok(services) = services(&state, &chat).await else {
            return;
        };
        if !services.background().has_notifications(&conversation_id) {
            return;
        }
        let open = match chat.session(&services, Some(&conversation_id)).await {
            Ok((_, open)) => open,
            Err(e) => {
                tracing::warn!(conversation = %conversation_id, "cannot deliver a task completion: {e}");
                return;
            }
        };
        let token = CancellationToken::new();
        let Some(turn) = chat.begin(&conversation_id, token.clone()) else {
            return;
        };
        spawn_turn(
            app.clone(),
            conversation_id,
            turn,
            open,
            String::new(),
            TurnOutput::AppEvent,
            token,
        );
    });
}

/// Cancels the running turn of a conversation; false when none is running.
#[tauri::command]
#[specta::specta]
pub fn cancel_turn(chat: State<'_, ChatState>, conversation_id: String) -> bool {
    chat.cancel(&conversation_id)
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
    chat.open_session(&conversation_id)
        .is_some_and(|o| o.gate.revoke(&tool))
}

/// The user left a conversation (new chat, another conversation): its session ends and
/// what is worth remembering is extracted in the background. A running turn keeps its
/// session; the next turn in the conversation opens a fresh one.
#[tauri::command]
#[specta::specta]
pub fn end_session(chat: State<'_, ChatState>, conversation_id: String) {
    if chat.is_running(&conversation_id) {
        return;
    }
    if let Some(open) = chat.forget_session(&conversation_id) {
        tauri::async_runtime::spawn(crate::chat::extract_memories(open));
    }
}

/// Tools the user allowed "always" in this conversation's session.
#[tauri::command]
#[specta::specta]
pub fn always_allowed(chat: State<'_, ChatState>, conversation_id: String) -> Vec<String> {
    let mut tools: Vec<String> = chat
        .open_session(&conversation_id)
        .map(|o| o.gate.always_allowed().into_iter().collect())
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

impl From<wyckoff_memory::Conversation> for ConversationSummary {
    fn from(c: wyckoff_memory::Conversation) -> Self {
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
) -> Result<Vec<ConversationSummary>, ChatError> {
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
) -> Result<(), ChatError> {
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
) -> Result<(), ChatError> {
    if chat.is_running(&id) {
        return Err(ChatError::Busy);
    }
    let services = services(&state, &chat).await?;
    services.conversations().delete(&id).await?;
    chat.forget_session(&id);
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
) -> Result<Vec<SearchHit>, ChatError> {
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
) -> Result<ConversationHistory, ChatError> {
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
    let last_turn_interrupted = turns
        .last()
        .is_some_and(|t| t.outcome == Some(wyckoff_memory::TurnOutcome::Interrupted));
    Ok(ConversationHistory {
        conversation: conversation.into(),
        messages: stored
            .into_iter()
            .map(|m| HistoryMessage {
                seq: m.seq,
                interrupted: m.status == MessageStatus::Interrupted,
                skill: m.skill,
                sub_agent: m.sub_agent,
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
) -> Result<String, ChatError> {
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
    written.map_err(|e| ChatError::Other {
        message: format!("{}: {e}", path.display()),
    })?;
    Ok(path.display().to_string())
}
