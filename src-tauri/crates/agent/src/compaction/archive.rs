//! Where compacted messages go, and the memory flush before they leave the context. Both
//! are traits so the app and the CLI can plug in the memory crate (its conversation
//! archive and `flush_before_compaction`); [`FileArchive`] is a self-contained archive
//! under the data home.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use sha2::{Digest, Sha256};
use wyckoff_llm::Provider;
use wyckoff_protocol::Message;

use crate::clock::{Clock, SystemClock};
use crate::error::AgentError;

/// Prefix of archive references (the memory crate's archive uses the same scheme).
pub const ARCHIVE_SCHEME: &str = "archive://";

/// Keeps messages compaction removed, so the user and `query_history` can reopen them.
#[async_trait]
pub trait CompactionArchive: Send + Sync {
    /// Stores the messages; returns their reference, `archive://{conversation}/{id}`.
    async fn archive(
        &self,
        conversation_id: &str,
        messages: &[Message],
    ) -> Result<String, AgentError>;

    /// Reopens a reference returned by [`CompactionArchive::archive`].
    async fn load(&self, reference: &str) -> Result<Vec<Message>, AgentError>;
}

/// Saves what is worth remembering (preferences) from messages about to be compacted.
/// A failure is logged and compaction goes on.
#[async_trait]
pub trait MemoryFlush: Send + Sync {
    async fn flush(&self, messages: &[Message], provider: &dyn Provider) -> Result<(), AgentError>;
}

/// Archives as files: `<root>/<conversation>/<id>.jsonl`, one `{"index","message"}` per
/// line, and `<id>.json` with metadata (count, codes) for listings.
#[derive(Clone)]
pub struct FileArchive {
    root: PathBuf,
    clock: Arc<dyn Clock>,
}

impl FileArchive {
    /// `root` is usually `<WYCKOFF_HOME>/context-archive`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        FileArchive {
            root: root.into(),
            clock: Arc::new(SystemClock),
        }
    }

    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn paths(&self, conversation: &str, id: &str) -> (PathBuf, PathBuf) {
        let dir = self.root.join(conversation);
        (
            dir.join(format!("{id}.jsonl")),
            dir.join(format!("{id}.json")),
        )
    }
}

/// A path-safe name: ASCII letters, digits, `-` and `_`; others become `_`.
fn safe_name(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "default".to_owned()
    } else {
        cleaned
    }
}

/// `archive://{conversation}/{id}` → its parts, refusing anything that could leave the
/// archive root.
pub fn parse_reference(reference: &str) -> Result<(String, String), AgentError> {
    let bad = || AgentError::Invalid(format!("not an archive reference: {reference}"));
    let rest = reference
        .trim()
        .strip_prefix(ARCHIVE_SCHEME)
        .ok_or_else(bad)?;
    let (conversation, id) = rest.split_once('/').ok_or_else(bad)?;
    if conversation.is_empty()
        || id.is_empty()
        || safe_name(conversation) != conversation
        || safe_name(id) != id
    {
        return Err(bad());
    }
    Ok((conversation.to_owned(), id.to_owned()))
}

#[async_trait]
impl CompactionArchive for FileArchive {
    async fn archive(
        &self,
        conversation_id: &str,
        messages: &[Message],
    ) -> Result<String, AgentError> {
        let conversation = safe_name(conversation_id);
        let lines: Vec<String> = messages
            .iter()
            .enumerate()
            .map(|(i, m)| json!({"index": i, "message": m}).to_string())
            .collect();
        let body = lines.join("\n") + "\n";
        let now = self.clock.now();
        let digest = Sha256::digest(body.as_bytes());
        let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
        let id = format!("ctx_{}_{hex}", now.format("%Y%m%d%H%M%S"));
        let reference = format!("{ARCHIVE_SCHEME}{conversation}/{id}");
        let meta = json!({
            "compaction_id": id,
            "session_id": conversation_id,
            "created_at": now.to_rfc3339(),
            "message_count": messages.len(),
            "codes": super::summary::codes_in(messages, 24),
            "archive_ref": reference,
        });
        let (data, meta_path) = self.paths(&conversation, &id);
        // File I/O off the async threads; small files, but the disk may be slow.
        tokio::task::spawn_blocking(move || -> Result<(), AgentError> {
            if let Some(dir) = data.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let mut f = std::fs::File::create(&data)?;
            f.write_all(body.as_bytes())?;
            f.sync_data()?;
            std::fs::write(&meta_path, meta.to_string())?;
            Ok(())
        })
        .await
        .map_err(|e| AgentError::Invalid(format!("archive task: {e}")))??;
        Ok(reference)
    }

    async fn load(&self, reference: &str) -> Result<Vec<Message>, AgentError> {
        let (conversation, id) = parse_reference(reference)?;
        let (data, _) = self.paths(&conversation, &id);
        let text = tokio::fs::read_to_string(&data).await?;
        let mut out = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let mut v: serde_json::Value = serde_json::from_str(line)?;
            out.push(serde_json::from_value(v["message"].take())?);
        }
        Ok(out)
    }
}
