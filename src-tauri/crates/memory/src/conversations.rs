//! The conversation store: conversations, turns and their messages as they happen, text
//! search over messages (the same CJK-bigram index as memories), and startup recovery of
//! turns that never ended. Used by `wyckoff run --session ID` and the desktop chat.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::{AssertSqlSafe, SqlitePool};
use tracing::info;
use uuid::Uuid;
use wyckoff_protocol::{
    ApprovalNotice, Grounding, Message, SkillUse, SubAgentStep, TaskNotice, Usage, UserOrigin,
};

use crate::store::{escape_like, limit_i64, search_expression};
use crate::tokenize::{index_text, is_cjk, search_terms};
use crate::{Clock, MemoryError, Result, SystemClock, time};

/// Characters of a first user message used as the title of an untitled conversation.
const AUTO_TITLE_CHARS: usize = 30;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conversation {
    pub id: String,
    pub title: String,
    pub model: String,
    pub archived: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Set on a fork: the conversation and message it was taken at (see
    /// [`ConversationStore::fork`]).
    pub forked_from: Option<ForkOrigin>,
}

/// Where a forked conversation came from: its source and the message (seq) it was
/// forked at. The source may since have been deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkOrigin {
    pub conversation_id: String,
    pub message_seq: i64,
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnOutcome {
    Done,
    Cancelled,
    Failed,
    /// The process stopped mid-turn (found unfinished at the next startup).
    Interrupted,
}

impl TurnOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            TurnOutcome::Done => "done",
            TurnOutcome::Cancelled => "cancelled",
            TurnOutcome::Failed => "failed",
            TurnOutcome::Interrupted => "interrupted",
        }
    }

    fn parse(s: &str) -> Result<Self> {
        match s {
            "done" => Ok(TurnOutcome::Done),
            "cancelled" => Ok(TurnOutcome::Cancelled),
            "failed" => Ok(TurnOutcome::Failed),
            "interrupted" => Ok(TurnOutcome::Interrupted),
            other => Err(MemoryError::Corrupt(format!("turn outcome `{other}`"))),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub id: String,
    pub conversation_id: String,
    pub started_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    pub outcome: Option<TurnOutcome>,
    pub usage: Option<Usage>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageStatus {
    Complete,
    /// Written during a turn that never finished.
    Interrupted,
}

/// A message as stored, with its place in the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredMessage {
    pub seq: i64,
    pub message: Message,
    pub created_at: DateTime<Utc>,
    pub turn_id: Option<String>,
    pub status: MessageStatus,
    /// Set on a user message a skill expanded.
    pub skill: Option<SkillUse>,
    /// On a delegate call's result: its sub-agent's progress steps (empty otherwise).
    pub sub_agent: Vec<SubAgentStep>,
    /// On a background task's notification message: the notice, typed.
    pub task_notice: Option<TaskNotice>,
    /// On a decided approval-inbox request's notification message: the notice, typed.
    pub approval_notice: Option<ApprovalNotice>,
    /// On a final answer: where its numbers and codes came from.
    #[serde(default)]
    pub grounding: Option<Grounding>,
}

/// What is stored beside a message (each only on the messages it belongs to).
#[derive(Debug, Clone, Copy, Default)]
pub struct MessageExtras<'a> {
    /// A user message a skill expanded.
    pub skill: Option<&'a SkillUse>,
    /// A delegate call's result: its sub-agent's progress steps.
    pub sub_agent: &'a [SubAgentStep],
    /// A background task's notification message.
    pub task_notice: Option<&'a TaskNotice>,
    /// A decided approval-inbox request's notification message.
    pub approval_notice: Option<&'a ApprovalNotice>,
}

/// A message that matched a search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageSearchHit {
    pub conversation_id: String,
    pub conversation_title: String,
    pub seq: i64,
    pub role: String,
    /// Up to ~80 characters around the first match.
    pub snippet: String,
    pub created_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct ConversationRow {
    id: String,
    title: String,
    model: String,
    archived: bool,
    created_at: String,
    updated_at: String,
    forked_from_conversation: Option<String>,
    forked_from_message: Option<i64>,
}

impl TryFrom<ConversationRow> for Conversation {
    type Error = MemoryError;
    fn try_from(r: ConversationRow) -> Result<Self> {
        Ok(Conversation {
            id: r.id,
            title: r.title,
            model: r.model,
            archived: r.archived,
            created_at: time::from_db(&r.created_at)?,
            updated_at: time::from_db(&r.updated_at)?,
            forked_from: r.forked_from_conversation.zip(r.forked_from_message).map(
                |(conversation_id, message_seq)| ForkOrigin {
                    conversation_id,
                    message_seq,
                },
            ),
        })
    }
}

#[derive(sqlx::FromRow)]
struct TurnRow {
    id: String,
    conversation_id: String,
    started_at: String,
    ended_at: Option<String>,
    outcome: Option<String>,
    usage: Option<String>,
}

impl TryFrom<TurnRow> for Turn {
    type Error = MemoryError;
    fn try_from(r: TurnRow) -> Result<Self> {
        Ok(Turn {
            id: r.id,
            conversation_id: r.conversation_id,
            started_at: time::from_db(&r.started_at)?,
            ended_at: r.ended_at.as_deref().map(time::from_db).transpose()?,
            outcome: r.outcome.as_deref().map(TurnOutcome::parse).transpose()?,
            usage: r
                .usage
                .as_deref()
                .map(serde_json::from_str)
                .transpose()
                .map_err(|e| MemoryError::Corrupt(format!("turn usage: {e}")))?,
        })
    }
}

#[derive(sqlx::FromRow)]
struct MessageRow {
    seq: i64,
    message: String,
    created_at: String,
    turn_id: Option<String>,
    status: String,
    skill: Option<String>,
    sub_agent: Option<String>,
    task_notice: Option<String>,
    approval_notice: Option<String>,
    grounding: Option<String>,
}

impl TryFrom<MessageRow> for StoredMessage {
    type Error = MemoryError;
    fn try_from(r: MessageRow) -> Result<Self> {
        Ok(StoredMessage {
            seq: r.seq,
            message: serde_json::from_str(&r.message)
                .map_err(|e| MemoryError::Corrupt(format!("message #{}: {e}", r.seq)))?,
            created_at: time::from_db(&r.created_at)?,
            turn_id: r.turn_id,
            status: if r.status == "interrupted" {
                MessageStatus::Interrupted
            } else {
                MessageStatus::Complete
            },
            skill: r
                .skill
                .as_deref()
                .map(serde_json::from_str)
                .transpose()
                .map_err(|e| MemoryError::Corrupt(format!("message #{} skill: {e}", r.seq)))?,
            sub_agent: r
                .sub_agent
                .as_deref()
                .map(serde_json::from_str)
                .transpose()
                .map_err(|e| MemoryError::Corrupt(format!("message #{} sub_agent: {e}", r.seq)))?
                .unwrap_or_default(),
            task_notice: r
                .task_notice
                .as_deref()
                .map(serde_json::from_str)
                .transpose()
                .map_err(|e| {
                    MemoryError::Corrupt(format!("message #{} task_notice: {e}", r.seq))
                })?,
            approval_notice: r
                .approval_notice
                .as_deref()
                .map(serde_json::from_str)
                .transpose()
                .map_err(|e| {
                    MemoryError::Corrupt(format!("message #{} approval_notice: {e}", r.seq))
                })?,
            grounding: r
                .grounding
                .as_deref()
                .map(serde_json::from_str)
                .transpose()
                .map_err(|e| MemoryError::Corrupt(format!("message #{} grounding: {e}", r.seq)))?,
        })
    }
}

pub(crate) fn role(m: &Message) -> &'static str {
    match m {
        Message::User { .. } => "user",
        Message::Assistant { .. } => "assistant",
        Message::Tool { .. } => "tool",
    }
}

/// Searchable text of a message: its text plus the names of tools it called.
fn searchable_text(m: &Message) -> String {
    let mut text = m.text().to_string();
    for call in m.tool_calls() {
        text.push(' ');
        text.push_str(&call.name);
    }
    if let Message::Tool { name, .. } = m {
        text.push(' ');
        text.push_str(name);
    }
    text
}

/// About 80 characters of `text` around the first occurrence of any term.
pub fn snippet(text: &str, terms: &[String]) -> String {
    let flat: Vec<char> = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .collect();
    let lower: String = flat.iter().flat_map(|c| c.to_lowercase()).collect();
    // Byte offset → char offset on the lower-cased copy; lower-casing can change lengths,
    // so fall back to the start when the mapping is ambiguous.
    let first = terms
        .iter()
        .filter_map(|t| lower.find(t.as_str()))
        .min()
        .map(|b| lower[..b].chars().count())
        .unwrap_or(0)
        .min(flat.len());
    let start = first.saturating_sub(20);
    let end = (start + 80).min(flat.len());
    let mut s: String = flat[start..end].iter().collect();
    if start > 0 {
        s.insert(0, '…');
    }
    if end < flat.len() {
        s.push('…');
    }
    s
}

/// Conversations over the shared SQLite pool.
#[derive(Clone)]
pub struct ConversationStore {
    pool: SqlitePool,
    clock: Arc<dyn Clock>,
    /// This process's lease id, stored with the turns it runs.
    owner: Option<String>,
}

impl std::fmt::Debug for ConversationStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConversationStore").finish_non_exhaustive()
    }
}

const CONVERSATION_COLUMNS: &str = "id, title, model, archived, created_at, updated_at, \
     forked_from_conversation, forked_from_message";
const TURN_COLUMNS: &str = "id, conversation_id, started_at, ended_at, outcome, usage";

impl ConversationStore {
    /// A store over an already-migrated pool (see [`crate::open_pool`]).
    pub fn new(pool: SqlitePool) -> Self {
        Self::with_clock(pool, Arc::new(SystemClock))
    }

    pub fn with_clock(pool: SqlitePool, clock: Arc<dyn Clock>) -> Self {
        ConversationStore {
            pool,
            clock,
            owner: None,
        }
    }

    /// Turns begun through this store carry `owner` (see
    /// [`ConversationStore::mark_orphaned_turns_interrupted`]).
    pub fn with_owner(mut self, owner: impl Into<String>) -> Self {
        self.owner = Some(owner.into());
        self
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    pub(crate) fn now_db(&self) -> String {
        time::to_db(self.clock.now())
    }

    pub async fn create(&self, title: &str, model: &str) -> Result<Conversation> {
        let id = Uuid::new_v4().to_string();
        let now = self.now_db();
        sqlx::query(
            "INSERT INTO conversation (id, title, model, archived, created_at, updated_at)
             VALUES (?, ?, ?, 0, ?, ?)",
        )
        .bind(&id)
        .bind(title.trim())
        .bind(model)
        .bind(&now)
        .bind(&now)
        .execute(&self.pool)
        .await?;
        self.get(&id).await
    }

    pub async fn get(&self, id: &str) -> Result<Conversation> {
        let row: Option<ConversationRow> = sqlx::query_as(AssertSqlSafe(format!(
            "SELECT {CONVERSATION_COLUMNS} FROM conversation WHERE id = ?"
        )))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.ok_or_else(|| MemoryError::ConversationNotFound(id.to_string()))?
            .try_into()
    }

    /// Conversations, most recently active first.
    pub async fn list(&self, include_archived: bool, limit: usize) -> Result<Vec<Conversation>> {
        let rows: Vec<ConversationRow> = sqlx::query_as(AssertSqlSafe(format!(
            "SELECT {CONVERSATION_COLUMNS} FROM conversation
             WHERE ?1 OR archived = 0
             ORDER BY updated_at DESC, created_at DESC LIMIT ?2"
        )))
        .bind(include_archived)
        .bind(limit_i64(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(Conversation::try_from).collect()
    }

    pub async fn rename(&self, id: &str, title: &str) -> Result<()> {
        let done = sqlx::query("UPDATE conversation SET title = ? WHERE id = ?")
            .bind(title.trim())
            .bind(id)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(MemoryError::ConversationNotFound(id.to_string()));
        }
        Ok(())
    }

    pub async fn set_archived(&self, id: &str, archived: bool) -> Result<()> {
        let done = sqlx::query("UPDATE conversation SET archived = ? WHERE id = ?")
            .bind(archived)
            .bind(id)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(MemoryError::ConversationNotFound(id.to_string()));
        }
        Ok(())
    }

    /// Deletes a conversation with its turns, messages (and their search index entries)
    /// and archives. Children are deleted explicitly so this holds even on a connection
    /// where foreign keys are off.
    pub async fn delete(&self, id: &str) -> Result<()> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        for sql in [
            "DELETE FROM conversation_message WHERE conversation_id = ?",
            "DELETE FROM conversation_turn WHERE conversation_id = ?",
            "DELETE FROM conversation_archive WHERE conversation_id = ?",
        ] {
            sqlx::query(sql).bind(id).execute(&mut *tx).await?;
        }
        let done = sqlx::query("DELETE FROM conversation WHERE id = ?")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() == 0 {
            return Err(MemoryError::ConversationNotFound(id.to_string()));
        }
        tx.commit().await?;
        Ok(())
    }

    pub async fn begin_turn(&self, conversation_id: &str) -> Result<Turn> {
        self.get(conversation_id).await?;
        let id = Uuid::new_v4().to_string();
        sqlx::query(
            "INSERT INTO conversation_turn (id, conversation_id, started_at, owner) VALUES (?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(conversation_id)
        .bind(self.now_db())
        .bind(&self.owner)
        .execute(&self.pool)
        .await?;
        self.turn(&id).await
    }

    /// Records how a turn ended. An `Interrupted` outcome also marks its messages.
    pub async fn end_turn(
        &self,
        turn_id: &str,
        outcome: TurnOutcome,
        usage: Option<&Usage>,
    ) -> Result<Turn> {
        let usage = usage
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| MemoryError::Corrupt(format!("usage: {e}")))?;
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        let done = sqlx::query(
            "UPDATE conversation_turn SET ended_at = ?, outcome = ?, usage = ? WHERE id = ?",
        )
        .bind(self.now_db())
        .bind(outcome.as_str())
        .bind(usage)
        .bind(turn_id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(MemoryError::TurnNotFound(turn_id.to_string()));
        }
        if outcome == TurnOutcome::Interrupted {
            sqlx::query("UPDATE conversation_message SET status = 'interrupted' WHERE turn_id = ?")
                .bind(turn_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        self.turn(turn_id).await
    }

    pub async fn turn(&self, turn_id: &str) -> Result<Turn> {
        let row: Option<TurnRow> = sqlx::query_as(AssertSqlSafe(format!(
            "SELECT {TURN_COLUMNS} FROM conversation_turn WHERE id = ?"
        )))
        .bind(turn_id)
        .fetch_optional(&self.pool)
        .await?;
        row.ok_or_else(|| MemoryError::TurnNotFound(turn_id.to_string()))?
            .try_into()
    }

    pub async fn turns(&self, conversation_id: &str) -> Result<Vec<Turn>> {
        let rows: Vec<TurnRow> = sqlx::query_as(AssertSqlSafe(format!(
            "SELECT {TURN_COLUMNS} FROM conversation_turn WHERE conversation_id = ?
             ORDER BY started_at, id"
        )))
        .bind(conversation_id)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(Turn::try_from).collect()
    }

    /// At startup: every turn that never ended (the app died mid-turn) becomes
    /// `interrupted`, and so do its messages. Returns the ids of the turns marked.
    pub async fn mark_unfinished_turns_interrupted(&self) -> Result<Vec<String>> {
        self.mark_orphaned_turns_interrupted(&|_| false).await
    }

    /// Like [`ConversationStore::mark_unfinished_turns_interrupted`], but a turn whose
    /// owner `is_alive` is still running in another process (the app and the CLI share
    /// the data home) and is left alone; turns without an owner are orphans.
    pub async fn mark_orphaned_turns_interrupted(
        &self,
        is_alive: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<Vec<String>> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        let open: Vec<(String, Option<String>)> =
            sqlx::query_as("SELECT id, owner FROM conversation_turn WHERE ended_at IS NULL")
                .fetch_all(&mut *tx)
                .await?;
        let ids: Vec<String> = open
            .into_iter()
            .filter(|(_, owner)| owner.as_deref().is_none_or(|o| !is_alive(o)))
            .map(|(id, _)| id)
            .collect();
        let now = self.now_db();
        for id in &ids {
            sqlx::query(
                "UPDATE conversation_turn SET ended_at = ?, outcome = 'interrupted' WHERE id = ?",
            )
            .bind(&now)
            .bind(id)
            .execute(&mut *tx)
            .await?;
            sqlx::query("UPDATE conversation_message SET status = 'interrupted' WHERE turn_id = ?")
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        if !ids.is_empty() {
            info!(count = ids.len(), "marked unfinished turns as interrupted");
        }
        Ok(ids)
    }

    /// Appends a message (as it happens) and returns its sequence number (1, 2, …). The
    /// first user message names an untitled conversation.
    pub async fn append_message(
        &self,
        conversation_id: &str,
        turn_id: Option<&str>,
        message: &Message,
    ) -> Result<i64> {
        self.append_message_with_skill(conversation_id, turn_id, message, None)
            .await
    }

    /// [`append_message`](Self::append_message) for a user message a skill expanded: the
    /// skill and what was typed are stored with it, and name the conversation.
    pub async fn append_message_with_skill(
        &self,
        conversation_id: &str,
        turn_id: Option<&str>,
        message: &Message,
        skill: Option<&SkillUse>,
    ) -> Result<i64> {
        let extras = MessageExtras {
            skill,
            ..MessageExtras::default()
        };
        self.append_message_with(conversation_id, turn_id, message, extras)
            .await
    }

    /// [`append_message`](Self::append_message) for a delegate call's result: the
    /// sub-agent's progress steps are stored with it (none: stored as for any message).
    pub async fn append_message_with_sub_agent(
        &self,
        conversation_id: &str,
        turn_id: Option<&str>,
        message: &Message,
        steps: &[SubAgentStep],
    ) -> Result<i64> {
        let extras = MessageExtras {
            sub_agent: steps,
            ..MessageExtras::default()
        };
        self.append_message_with(conversation_id, turn_id, message, extras)
            .await
    }

    /// [`append_message`](Self::append_message) with what belongs beside the message.
    pub async fn append_message_with(
        &self,
        conversation_id: &str,
        turn_id: Option<&str>,
        message: &Message,
        extras: MessageExtras<'_>,
    ) -> Result<i64> {
        let MessageExtras {
            skill,
            sub_agent: steps,
            task_notice,
            approval_notice,
        } = extras;
        let json = serde_json::to_string(message)
            .map_err(|e| MemoryError::Corrupt(format!("message: {e}")))?;
        let skill_json = skill
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| MemoryError::Corrupt(format!("skill: {e}")))?;
        let steps_json = if steps.is_empty() {
            None
        } else {
            Some(
                serde_json::to_string(steps)
                    .map_err(|e| MemoryError::Corrupt(format!("sub_agent: {e}")))?,
            )
        };
        let notice_json = task_notice
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| MemoryError::Corrupt(format!("task_notice: {e}")))?;
        let approval_json = approval_notice
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| MemoryError::Corrupt(format!("approval_notice: {e}")))?;
        let now = self.now_db();
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        // Touching the conversation first takes the write lock, so seq allocation below
        // cannot race with another writer.
        let done = sqlx::query("UPDATE conversation SET updated_at = ? WHERE id = ?")
            .bind(&now)
            .bind(conversation_id)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() == 0 {
            return Err(MemoryError::ConversationNotFound(
                conversation_id.to_string(),
            ));
        }
        let seq: i64 = sqlx::query_scalar(
            "INSERT INTO conversation_message
                 (conversation_id, seq, turn_id, role, message, status, created_at, text_tokens,
                  skill, sub_agent, task_notice, approval_notice)
             VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM conversation_message
                          WHERE conversation_id = ?1), ?2, ?3, ?4, 'complete', ?5, ?6, ?7, ?8, ?9,
                     ?10)
             RETURNING seq",
        )
        .bind(conversation_id)
        .bind(turn_id)
        .bind(role(message))
        .bind(json)
        .bind(&now)
        .bind(index_text(&searchable_text(message), &[]))
        .bind(skill_json)
        .bind(steps_json)
        .bind(notice_json)
        .bind(approval_json)
        .fetch_one(&mut *tx)
        .await?;
        if let Message::User {
            content,
            origin: UserOrigin::User,
        } = message
        {
            let named_by = skill.map_or(content.as_str(), |s| s.typed.as_str());
            let title: String = named_by
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .chars()
                .take(AUTO_TITLE_CHARS)
                .collect();
            sqlx::query("UPDATE conversation SET title = ? WHERE id = ? AND title = ''")
                .bind(title)
                .bind(conversation_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(seq)
    }

    /// Stores `grounding` with the turn's final answer: its last assistant message.
    /// Returns the message's seq, or `None` when the turn stored no answer.
    pub async fn set_answer_grounding(
        &self,
        turn_id: &str,
        grounding: &Grounding,
    ) -> Result<Option<i64>> {
        let json = serde_json::to_string(grounding)
            .map_err(|e| MemoryError::Corrupt(format!("grounding: {e}")))?;
        let seq: Option<i64> = sqlx::query_scalar(
            "UPDATE conversation_message SET grounding = ?1
             WHERE rowid = (SELECT rowid FROM conversation_message
                            WHERE turn_id = ?2 AND role = 'assistant'
                            ORDER BY seq DESC LIMIT 1)
             RETURNING seq",
        )
        .bind(json)
        .bind(turn_id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(seq)
    }

    /// All messages of a conversation in order.
    pub async fn load_messages(&self, conversation_id: &str) -> Result<Vec<StoredMessage>> {
        self.get(conversation_id).await?;
        let rows: Vec<MessageRow> = sqlx::query_as(
            "SELECT seq, message, created_at, turn_id, status, skill, sub_agent, task_notice, approval_notice, grounding FROM conversation_message
             WHERE conversation_id = ? ORDER BY seq",
        )
        .bind(conversation_id)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(StoredMessage::try_from).collect()
    }

    /// Just the protocol messages, to resume a session.
    pub async fn messages(&self, conversation_id: &str) -> Result<Vec<Message>> {
        Ok(self
            .load_messages(conversation_id)
            .await?
            .into_iter()
            .map(|m| m.message)
            .collect())
    }

    /// Messages containing all terms of `query` (CJK bigrams, words as prefixes, codes),
    /// best first. A lone Chinese character falls back to a substring match.
    pub async fn search(&self, query: &str, limit: usize) -> Result<Vec<MessageSearchHit>> {
        let query = query.trim();
        let terms = search_terms(query);
        if query.is_empty() {
            return Ok(Vec::new());
        }
        let lone_cjk = terms
            .iter()
            .any(|t| t.chars().count() == 1 && t.chars().all(is_cjk));
        let rows: Vec<(String, String, i64, String, String, String)> =
            match search_expression(&terms) {
                Some(expr) if !lone_cjk => {
                    sqlx::query_as(
                        "SELECT c.id, c.title, m.seq, m.role, m.message, m.created_at
                         FROM conversation_message_fts
                         JOIN conversation_message m ON m.id = conversation_message_fts.rowid
                         JOIN conversation c ON c.id = m.conversation_id
                         WHERE conversation_message_fts MATCH ?1
                         ORDER BY bm25(conversation_message_fts), m.created_at DESC LIMIT ?2",
                    )
                    .bind(expr)
                    .bind(limit_i64(limit))
                    .fetch_all(&self.pool)
                    .await?
                }
                _ => {
                    sqlx::query_as(
                        "SELECT c.id, c.title, m.seq, m.role, m.message, m.created_at
                         FROM conversation_message m
                         JOIN conversation c ON c.id = m.conversation_id
                         WHERE m.message LIKE '%' || ?1 || '%' ESCAPE '\\'
                         ORDER BY m.created_at DESC LIMIT ?2",
                    )
                    .bind(escape_like(query))
                    .bind(limit_i64(limit))
                    .fetch_all(&self.pool)
                    .await?
                }
            };
        let snippet_terms: Vec<String> = if lone_cjk {
            vec![query.to_lowercase()]
        } else {
            terms
        };
        rows.into_iter()
            .map(
                |(conversation_id, conversation_title, seq, role, json, created)| {
                    let message: Message = serde_json::from_str(&json)
                        .map_err(|e| MemoryError::Corrupt(format!("message #{seq}: {e}")))?;
                    Ok(MessageSearchHit {
                        conversation_id,
                        conversation_title,
                        seq,
                        role,
                        snippet: snippet(&searchable_text(&message), &snippet_terms),
                        created_at: time::from_db(&created)?,
                    })
                },
            )
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippet_centres_on_the_first_match() {
        let text = format!("{}贵州茅台出现Spring{}", "甲".repeat(40), "乙".repeat(100));
        let s = snippet(&text, &["茅台".to_string()]);
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(s.contains("贵州茅台出现Spring"));
        assert_eq!(s.chars().filter(|c| *c != '…').count(), 80);
        assert_eq!(snippet("short text", &["zzz".to_string()]), "short text");
        assert_eq!(
            snippet("Wyckoff SPRING", &["spring".to_string()]),
            "Wyckoff SPRING"
        );
    }

    #[test]
    fn outcomes_round_trip() {
        for o in [
            TurnOutcome::Done,
            TurnOutcome::Cancelled,
            TurnOutcome::Failed,
            TurnOutcome::Interrupted,
        ] {
            assert_eq!(TurnOutcome::parse(o.as_str()).unwrap(), o);
        }
        assert!(TurnOutcome::parse("exploded").is_err());
    }
}
