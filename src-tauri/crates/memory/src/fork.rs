//! Forking a conversation at one of its messages: a new conversation
//! with the history up to and including that message, recorded as forked from it. The
//! source is only read.
//!
//! What is copied is exactly what a turn on the source would have sent the model at that
//! point: the stored conversation keeps every message (compaction shortens only the live
//! context of a running turn and is never written back; its archives are files under
//! the data home, cited only from that context), so the copied messages are the history
//! and the fork's first turn compacts them again if they are too long. Each copied
//! message keeps its seq (its id), time, status, the skill it was typed as and a delegate
//! result's sub-agent steps. Turns are not copied: they record what ran in a
//! conversation, and nothing has run in the fork yet.
//!
//! A fork point inside a tool round takes the whole round: forking at an assistant
//! message that called tools, or at one of its results, also copies the results of its
//! other calls, so the fork never holds a call the model would see unanswered. While the
//! round is still running (some results not stored yet) the fork is refused.
//!
//! [`BEFORE_FIRST`] forks before the first message: a conversation with no history that
//! still says where it came from (editing the first question, regenerating the answer of
//! a one-turn conversation).

use uuid::Uuid;
use wyckoff_protocol::Message;

use crate::conversations::{Conversation, StoredMessage};
use crate::{ConversationStore, MemoryError, Result};

/// What [`ConversationStore::fork`] made.
#[derive(Debug, Clone, PartialEq)]
pub struct Fork {
    pub conversation: Conversation,
    /// The last message copied: the fork point, or the end of its tool round.
    pub through_seq: i64,
    pub message_count: i64,
}

/// Where a fork at a message ends, decided from the source's messages alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkCut {
    /// The last message to copy.
    pub through_seq: i64,
    /// Calls of the fork point's tool round with no result stored (empty outside a round
    /// or when every call was answered).
    pub unanswered: Vec<String>,
    /// The turn of the tool-calling message, when there are unanswered calls.
    pub round_turn: Option<String>,
}

/// The fork point before a conversation's first message (messages count from 1).
pub const BEFORE_FIRST: i64 = 0;

/// The cut for a fork at `at_seq`: that message, extended to the end of its tool round
/// when it is a tool-calling assistant message or one of the results answering it;
/// nothing at [`BEFORE_FIRST`]. `None` when no message has that seq.
pub fn fork_cut(messages: &[StoredMessage], at_seq: i64) -> Option<ForkCut> {
    if at_seq == BEFORE_FIRST {
        return Some(ForkCut {
            through_seq: BEFORE_FIRST,
            unanswered: Vec::new(),
            round_turn: None,
        });
    }
    let at = messages.iter().position(|m| m.seq == at_seq)?;
    // The tool-calling message whose round `at` belongs to: itself, or the one before
    // the run of results `at` sits in.
    let round_start = match &messages[at].message {
        Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => Some(at),
        Message::Tool { .. } => messages[..at]
            .iter()
            .rposition(|m| !matches!(m.message, Message::Tool { .. }))
            .filter(|&i| !messages[i].message.tool_calls().is_empty()),
        _ => None,
    };
    let Some(start) = round_start else {
        return Some(ForkCut {
            through_seq: at_seq,
            unanswered: Vec::new(),
            round_turn: None,
        });
    };
    let calls = messages[start].message.tool_calls();
    let answers_round = |m: &StoredMessage| {
        matches!(&m.message, Message::Tool { tool_call_id, .. }
            if calls.iter().any(|c| &c.id == tool_call_id))
    };
    let round_end = messages[start + 1..]
        .iter()
        .take_while(|m| answers_round(m))
        .count()
        + start;
    let through = round_end.max(at);
    let answered: Vec<&str> = messages[start + 1..=through]
        .iter()
        .filter_map(|m| match &m.message {
            Message::Tool { tool_call_id, .. } => Some(tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    let unanswered: Vec<String> = calls
        .iter()
        .filter(|c| !answered.contains(&c.id.as_str()))
        .map(|c| c.id.clone())
        .collect();
    Some(ForkCut {
        through_seq: messages[through].seq,
        round_turn: if unanswered.is_empty() {
            None
        } else {
            messages[start].turn_id.clone()
        },
        unanswered,
    })
}

impl ConversationStore {
    /// Forks `source_id` at its message `at_seq` into a new conversation with the same
    /// title and model, recorded as forked from it (see the module docs for what is
    /// copied). The source is not changed.
    ///
    /// Errors: [`MemoryError::ConversationNotFound`], [`MemoryError::MessageNotFound`],
    /// and [`MemoryError::ForkInRunningToolRound`] when the fork point's tool round has
    /// calls without results and its turn has not ended. Nothing is written on error.
    pub async fn fork(&self, source_id: &str, at_seq: i64) -> Result<Fork> {
        let source = self.get(source_id).await?;
        let messages = self.load_messages(source_id).await?;
        let cut = fork_cut(&messages, at_seq).ok_or_else(|| MemoryError::MessageNotFound {
            conversation: source_id.to_owned(),
            seq: at_seq,
        })?;
        if let Some(turn_id) = &cut.round_turn
            && self.turn(turn_id).await?.ended_at.is_none()
        {
            return Err(MemoryError::ForkInRunningToolRound {
                conversation: source_id.to_owned(),
                seq: at_seq,
            });
        }
        // A turn that ended with calls unanswered (the process died mid-tool) is copied as
        // it is: the runtime answers such calls as aborted before the next turn, on the
        // source and on the fork alike.

        let id = Uuid::new_v4().to_string();
        let now = self.now_db();
        let mut tx = wyckoff_db::begin_write(self.pool()).await?;
        sqlx::query(
            "INSERT INTO conversation (id, title, model, archived, created_at, updated_at,
                                       forked_from_conversation, forked_from_message)
             VALUES (?, ?, ?, 0, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(&source.title)
        .bind(&source.model)
        .bind(&now)
        .bind(&now)
        .bind(source_id)
        .bind(at_seq)
        .execute(&mut *tx)
        .await?;
        // Row for row, in one statement: the search index picks the copies up through its
        // insert trigger.
        let copied = sqlx::query(
            "INSERT INTO conversation_message
                 (conversation_id, seq, turn_id, role, message, status, created_at,
                  text_tokens, skill, sub_agent, task_notice, approval_notice, grounding)
             SELECT ?1, seq, NULL, role, message, status, created_at, text_tokens, skill,
                    sub_agent, task_notice, approval_notice, grounding
             FROM conversation_message
             WHERE conversation_id = ?2 AND seq <= ?3
             ORDER BY seq",
        )
        .bind(&id)
        .bind(source_id)
        .bind(cut.through_seq)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        let message_count = i64::try_from(copied.rows_affected()).unwrap_or(i64::MAX);
        tracing::info!(
            source = %source_id,
            fork = %id,
            at_seq,
            through_seq = cut.through_seq,
            message_count,
            "conversation forked"
        );
        Ok(Fork {
            conversation: self.get(&id).await?,
            through_seq: cut.through_seq,
            message_count,
        })
    }

    /// How many messages a conversation holds.
    pub async fn message_count(&self, conversation_id: &str) -> Result<i64> {
        self.get(conversation_id).await?;
        Ok(sqlx::query_scalar(
            "SELECT COUNT(*) FROM conversation_message WHERE conversation_id = ?",
        )
        .bind(conversation_id)
        .fetch_one(self.pool())
        .await?)
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use serde_json::json;
    use wyckoff_protocol::ToolCall;

    use super::*;
    use crate::MessageStatus;

    fn stored(messages: Vec<Message>) -> Vec<StoredMessage> {
        messages
            .into_iter()
            .zip(1..)
            .map(|(message, seq)| StoredMessage {
                seq,
                message,
                created_at: Utc::now(),
                turn_id: Some("t".into()),
                status: MessageStatus::Complete,
                skill: None,
                sub_agent: Vec::new(),
                task_notice: None,
                approval_notice: None,
                grounding: None,
            })
            .collect()
    }

    fn calls(ids: &[&str]) -> Message {
        Message::Assistant {
            content: String::new(),
            tool_calls: ids
                .iter()
                .map(|id| ToolCall::new(*id, "analyze_stock", json!({})))
                .collect(),
            reasoning: None,
            reasoning_signature: None,
        }
    }

    fn result(id: &str) -> Message {
        Message::tool_result(&ToolCall::new(id, "analyze_stock", json!({})), "{}", false)
    }

    #[test]
    fn a_cut_takes_the_whole_tool_round_of_its_message() {
        // 1 user, 2 calls a+b, 3 result a, 4 result b, 5 answer, 6 user, 7 call c (no
        // result yet)
        let history = stored(vec![
            Message::user("q"),
            calls(&["a", "b"]),
            result("a"),
            result("b"),
            Message::assistant("answer"),
            Message::user("again"),
            calls(&["c"]),
        ]);
        // (fork at, copied through, unanswered calls)
        let cases: [(i64, i64, &[&str]); 7] = [
            (1, 1, &[]),
            (2, 4, &[]),
            (3, 4, &[]),
            (4, 4, &[]),
            (5, 5, &[]),
            (6, 6, &[]),
            (7, 7, &["c"]),
        ];
        for (at, through, open) in cases {
            let cut = fork_cut(&history, at).unwrap();
            assert_eq!(cut.through_seq, through, "fork at #{at}");
            assert_eq!(cut.unanswered, open, "fork at #{at}");
            assert_eq!(cut.round_turn.is_some(), !open.is_empty(), "fork at #{at}");
        }
        assert_eq!(fork_cut(&history, 8), None);
        assert_eq!(fork_cut(&history, -1), None);
        // Before the first message: nothing is copied.
        let start = fork_cut(&history, BEFORE_FIRST).unwrap();
        assert_eq!((start.through_seq, start.unanswered.len()), (0, 0));
    }

    #[test]
    fn a_round_answered_in_part_is_cut_after_its_last_result() {
        // The turn died after a's result: the copy ends there, b open.
        let history = stored(vec![Message::user("q"), calls(&["a", "b"]), result("a")]);
        let cut = fork_cut(&history, 2).unwrap();
        assert_eq!(cut.through_seq, 3);
        assert_eq!(cut.unanswered, vec!["b".to_owned()]);
        assert_eq!(cut.round_turn.as_deref(), Some("t"));
    }
}
