//! The archive of messages that compaction removed from the live context. Compaction
//! stores them under `archive://{conversation}/{id}` and puts the reference in its
//! summary, so the user and the `query_history` tool can reopen them.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;
use wyckoff_protocol::Message;

use crate::{ConversationStore, MemoryError, Result, time};

const SCHEME: &str = "archive://";

/// `archive://{conversation}/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ArchiveRef {
    pub conversation_id: String,
    pub id: String,
}

impl fmt::Display for ArchiveRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.conversation_id, self.id)
    }
}

impl FromStr for ArchiveRef {
    type Err = MemoryError;

    fn from_str(s: &str) -> Result<Self> {
        let bad = || MemoryError::InvalidArchiveRef(s.to_string());
        let rest = s.trim().strip_prefix(SCHEME).ok_or_else(bad)?;
        let (conversation_id, id) = rest.split_once('/').ok_or_else(bad)?;
        if conversation_id.is_empty() || id.is_empty() || id.contains('/') {
            return Err(bad());
        }
        Ok(ArchiveRef {
            conversation_id: conversation_id.to_string(),
            id: id.to_string(),
        })
    }
}

/// An archive, reopened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArchivedMessages {
    pub reference: ArchiveRef,
    pub created_at: DateTime<Utc>,
    pub messages: Vec<Message>,
}

/// An archive without its messages, for listings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveInfo {
    pub reference: ArchiveRef,
    pub created_at: DateTime<Utc>,
    pub message_count: i64,
}

impl ConversationStore {
    /// Stores messages compaction is about to drop; returns the reference to cite.
    pub async fn archive_messages(
        &self,
        conversation_id: &str,
        messages: &[Message],
    ) -> Result<ArchiveRef> {
        self.get(conversation_id).await?;
        let reference = ArchiveRef {
            conversation_id: conversation_id.to_string(),
            id: Uuid::new_v4().simple().to_string(),
        };
        let json = serde_json::to_string(messages)
            .map_err(|e| MemoryError::Corrupt(format!("archive messages: {e}")))?;
        sqlx::query(
            "INSERT INTO conversation_archive (id, conversation_id, created_at, message_count, messages)
             VALUES (?, ?, ?, ?, ?)",
        )
        .bind(&reference.id)
        .bind(conversation_id)
        .bind(self.now_db())
        .bind(i64::try_from(messages.len()).unwrap_or(i64::MAX))
        .bind(json)
        .execute(self.pool())
        .await?;
        Ok(reference)
    }

    /// Reopens `archive://{conversation}/{id}`.
    pub async fn load_archive(&self, reference: &str) -> Result<ArchivedMessages> {
        let parsed: ArchiveRef = reference.parse()?;
        let row: Option<(String, String)> = sqlx::query_as(
            "SELECT created_at, messages FROM conversation_archive
             WHERE id = ? AND conversation_id = ?",
        )
        .bind(&parsed.id)
        .bind(&parsed.conversation_id)
        .fetch_optional(self.pool())
        .await?;
        let (created_at, json) =
            row.ok_or_else(|| MemoryError::ArchiveNotFound(reference.trim().to_string()))?;
        Ok(ArchivedMessages {
            created_at: time::from_db(&created_at)?,
            messages: serde_json::from_str(&json)
                .map_err(|e| MemoryError::Corrupt(format!("archive {parsed}: {e}")))?,
            reference: parsed,
        })
    }

    /// The archives of a conversation, oldest first.
    pub async fn list_archives(&self, conversation_id: &str) -> Result<Vec<ArchiveInfo>> {
        let rows: Vec<(String, String, i64)> = sqlx::query_as(
            "SELECT id, created_at, message_count FROM conversation_archive
             WHERE conversation_id = ? ORDER BY created_at, rowid",
        )
        .bind(conversation_id)
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|(id, created, count)| {
                Ok(ArchiveInfo {
                    reference: ArchiveRef {
                        conversation_id: conversation_id.to_string(),
                        id,
                    },
                    created_at: time::from_db(&created)?,
                    message_count: count,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archive_refs_parse_and_print() {
        let r: ArchiveRef = "archive://c-1/abc".parse().unwrap();
        assert_eq!(
            r,
            ArchiveRef {
                conversation_id: "c-1".into(),
                id: "abc".into()
            }
        );
        assert_eq!(r.to_string(), "archive://c-1/abc");
        for bad in [
            "archive://c-1",
            "archive:///abc",
            "archive://c/",
            "http://c/abc",
            "archive://c/a/b",
            "",
        ] {
            assert!(
                matches!(
                    bad.parse::<ArchiveRef>(),
                    Err(MemoryError::InvalidArchiveRef(_))
                ),
                "{bad}"
            );
        }
    }
}
