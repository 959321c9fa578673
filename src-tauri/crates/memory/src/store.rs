//! The `agent_memory` table: saving (validation, de-duplication, capacity), the CLI
//! operations (list, search, add, update, delete) and pruning.

use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::{AssertSqlSafe, Sqlite, SqliteConnection, SqlitePool, Transaction};
use tracing::debug;
use wyckoff_engine::codes::stock_codes;

use crate::capacity;
use crate::tokenize::{fts_expression, index_text, is_cjk, search_terms};
use crate::{Clock, MemoryError, MemoryType, Result, SystemClock, time};

/// At most this many codes are attached to one memory.
const MAX_CODES: usize = 20;

/// A memory to save.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMemory {
    pub memory_type: MemoryType,
    pub content: String,
    /// Codes beyond those written in the content (which are always attached).
    pub codes: Vec<String>,
    /// Where it came from, e.g. `conversation:{id}`.
    pub source_ref: String,
    pub metadata: Value,
    /// Defaults to the store's clock; set for imports and tests.
    pub created_at: Option<DateTime<Utc>>,
}

impl NewMemory {
    pub fn new(memory_type: MemoryType, content: impl Into<String>) -> Self {
        NewMemory {
            memory_type,
            content: content.into(),
            codes: Vec::new(),
            source_ref: String::new(),
            metadata: Value::Object(Default::default()),
            created_at: None,
        }
    }

    pub fn with_codes(mut self, codes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.codes = codes.into_iter().map(Into::into).collect();
        self
    }

    pub fn with_source_ref(mut self, source_ref: impl Into<String>) -> Self {
        self.source_ref = source_ref.into();
        self
    }

    pub fn with_metadata(mut self, metadata: Value) -> Self {
        self.metadata = metadata;
        self
    }

    pub fn at(mut self, created_at: DateTime<Utc>) -> Self {
        self.created_at = Some(created_at);
        self
    }
}

/// A stored memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    pub id: i64,
    pub memory_type: MemoryType,
    pub content: String,
    pub codes: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub source_ref: String,
    pub metadata: Value,
}

/// Result of [`MemoryStore::save`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveOutcome {
    Inserted(i64),
    /// The same type and content was already stored under this id; nothing was written.
    Duplicate(i64),
}

impl SaveOutcome {
    pub fn id(self) -> i64 {
        match self {
            SaveOutcome::Inserted(id) | SaveOutcome::Duplicate(id) => id,
        }
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct MemoryRow {
    id: i64,
    memory_type: String,
    content: String,
    codes: String,
    created_at: String,
    source_ref: String,
    metadata: String,
}

pub(crate) const MEMORY_COLUMNS: &str =
    "m.id, m.memory_type, m.content, m.codes, m.created_at, m.source_ref, m.metadata";

impl TryFrom<MemoryRow> for Memory {
    type Error = MemoryError;

    fn try_from(r: MemoryRow) -> Result<Self> {
        Ok(Memory {
            id: r.id,
            memory_type: r.memory_type.parse()?,
            content: r.content,
            codes: split_codes(&r.codes),
            created_at: time::from_db(&r.created_at)?,
            source_ref: r.source_ref,
            // Metadata is advisory; a broken value must not hide the memory.
            metadata: serde_json::from_str(&r.metadata).unwrap_or(Value::Null),
        })
    }
}

/// The codes of a `codes` column value (comma-separated): trimmed, empty parts skipped.
pub(crate) fn code_parts(s: &str) -> impl Iterator<Item = &str> {
    s.split(',').map(str::trim).filter(|c| !c.is_empty())
}

pub(crate) fn split_codes(s: &str) -> Vec<String> {
    code_parts(s).map(str::to_string).collect()
}

/// Validates explicit codes and merges them with the codes written in the content.
fn resolve_codes(content: &str, explicit: &[String]) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for c in explicit {
        let c = c.trim();
        if c.len() != 6 || !c.bytes().all(|b| b.is_ascii_digit()) {
            return Err(MemoryError::InvalidCode(c.to_string()));
        }
        if !out.iter().any(|o| o == c) {
            out.push(c.to_string());
        }
    }
    for c in stock_codes(content) {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out.truncate(MAX_CODES);
    Ok(out)
}

fn rows_to_memories(rows: Vec<MemoryRow>) -> Result<Vec<Memory>> {
    rows.into_iter().map(Memory::try_from).collect()
}

/// Long-term memory over the shared SQLite pool.
#[derive(Clone)]
pub struct MemoryStore {
    pool: SqlitePool,
    clock: Arc<dyn Clock>,
    /// Recall's own connection, opened from the pool's options on first use and shared by
    /// the clones of this store. Recall runs before every turn; through the pool,
    /// consecutive recalls landed on different connections (sqlx gives a connection back
    /// from a spawned task, after a ping), each with a cold page and statement cache.
    pub(crate) recall_conn: Arc<tokio::sync::Mutex<Option<SqliteConnection>>>,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore").finish_non_exhaustive()
    }
}

impl MemoryStore {
    /// A store over an already-migrated pool (see [`crate::open_pool`]), on the wall clock.
    pub fn new(pool: SqlitePool) -> Self {
        Self::with_clock(pool, Arc::new(SystemClock))
    }

    pub fn with_clock(pool: SqlitePool, clock: Arc<dyn Clock>) -> Self {
        MemoryStore {
            pool,
            clock,
            recall_conn: Arc::default(),
        }
    }

    /// Opens the database file and runs the migrations.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self> {
        Ok(Self::new(crate::open_pool(path).await?))
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// Saves a memory unless the same (type, content) exists, then trims the type to its
    /// cap (oldest first).
    pub async fn save(&self, memory: NewMemory) -> Result<SaveOutcome> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        let outcome = self.insert_in(&mut tx, &memory).await?;
        if let SaveOutcome::Inserted(_) = outcome {
            let trimmed = trim_type(&mut tx, memory.memory_type).await?;
            if trimmed > 0 {
                debug!(memory_type = %memory.memory_type, trimmed, "memory cap reached, oldest trimmed");
            }
        }
        tx.commit().await?;
        Ok(outcome)
    }

    async fn insert_in(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        memory: &NewMemory,
    ) -> Result<SaveOutcome> {
        let content = memory.content.trim();
        if content.is_empty() {
            return Err(MemoryError::EmptyContent);
        }
        let codes = resolve_codes(content, &memory.codes)?;
        let created_at = memory.created_at.unwrap_or_else(|| self.clock.now());
        let inserted: Option<i64> = sqlx::query_scalar(
            "INSERT INTO agent_memory
                 (memory_type, content, codes, created_at, source_ref, metadata, content_tokens)
             VALUES (?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (memory_type, content) DO NOTHING
             RETURNING id",
        )
        .bind(memory.memory_type.as_str())
        .bind(content)
        .bind(codes.join(","))
        .bind(time::to_db(created_at))
        .bind(memory.source_ref.trim())
        .bind(memory.metadata.to_string())
        .bind(index_text(content, &codes))
        .fetch_optional(&mut **tx)
        .await?;
        let Some(id) = inserted else {
            let id: i64 = sqlx::query_scalar(
                "SELECT id FROM agent_memory WHERE memory_type = ? AND content = ?",
            )
            .bind(memory.memory_type.as_str())
            .bind(content)
            .fetch_one(&mut **tx)
            .await?;
            return Ok(SaveOutcome::Duplicate(id));
        };
        write_codes(tx, id, &codes).await?;
        Ok(SaveOutcome::Inserted(id))
    }

    /// Inserts many memories in one transaction **without** enforcing caps (imports and
    /// benchmarks; call [`MemoryStore::enforce_capacity`] afterwards to apply them).
    /// Duplicates are skipped. Returns how many were inserted.
    pub async fn bulk_insert_uncapped(&self, memories: &[NewMemory]) -> Result<usize> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        let mut inserted = 0;
        for m in memories {
            if let SaveOutcome::Inserted(_) = self.insert_in(&mut tx, m).await? {
                inserted += 1;
            }
        }
        tx.commit().await?;
        Ok(inserted)
    }

    /// Trims every type to its cap. Returns how many memories were removed.
    pub async fn enforce_capacity(&self) -> Result<u64> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        let mut removed = 0;
        for t in MemoryType::ALL {
            removed += trim_type(&mut tx, t).await?;
        }
        tx.commit().await?;
        Ok(removed)
    }

    /// `wyckoff memory add TYPE TEXT`: validates the type; an exact duplicate is an error.
    pub async fn add(&self, memory_type: &str, text: &str) -> Result<Memory> {
        let memory_type: MemoryType = memory_type.parse()?;
        match self.save(NewMemory::new(memory_type, text)).await? {
            SaveOutcome::Inserted(id) => self.get(id).await,
            SaveOutcome::Duplicate(id) => Err(MemoryError::Duplicate { memory_type, id }),
        }
    }

    pub async fn get(&self, id: i64) -> Result<Memory> {
        let row: Option<MemoryRow> = sqlx::query_as(AssertSqlSafe(format!(
            "SELECT {MEMORY_COLUMNS} FROM agent_memory m WHERE m.id = ?"
        )))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.ok_or(MemoryError::NotFound(id))?.try_into()
    }

    /// Memories newest first, optionally of one type.
    pub async fn list(&self, memory_type: Option<MemoryType>, limit: usize) -> Result<Vec<Memory>> {
        let rows: Vec<MemoryRow> = sqlx::query_as(AssertSqlSafe(format!(
            "SELECT {MEMORY_COLUMNS} FROM agent_memory m
             WHERE ?1 IS NULL OR m.memory_type = ?1
             ORDER BY m.created_at DESC, m.id DESC LIMIT ?2"
        )))
        .bind(memory_type.map(MemoryType::as_str))
        .bind(limit_i64(limit))
        .fetch_all(&self.pool)
        .await?;
        rows_to_memories(rows)
    }

    pub async fn count(&self, memory_type: Option<MemoryType>) -> Result<i64> {
        Ok(sqlx::query_scalar(
            "SELECT COUNT(*) FROM agent_memory WHERE ?1 IS NULL OR memory_type = ?1",
        )
        .bind(memory_type.map(MemoryType::as_str))
        .fetch_one(&self.pool)
        .await?)
    }

    /// `wyckoff memory search QUERY`: memories containing all the query's terms (CJK
    /// bigrams, words — the last one as a prefix — and codes), best bm25 first. A query
    /// with a lone Chinese character cannot use the bigram index and falls back to a
    /// substring match.
    pub async fn search(&self, query: &str, limit: usize) -> Result<Vec<Memory>> {
        let query = query.trim();
        let terms = search_terms(query);
        let lone_cjk = terms
            .iter()
            .any(|t| t.chars().count() == 1 && t.chars().all(is_cjk));
        let rows: Vec<MemoryRow> = if terms.is_empty() || lone_cjk {
            if query.is_empty() {
                return Ok(Vec::new());
            }
            sqlx::query_as(AssertSqlSafe(format!(
                "SELECT {MEMORY_COLUMNS} FROM agent_memory m
                 WHERE m.content LIKE '%' || ?1 || '%' ESCAPE '\\'
                 ORDER BY m.created_at DESC, m.id DESC LIMIT ?2"
            )))
            .bind(escape_like(query))
            .bind(limit_i64(limit))
            .fetch_all(&self.pool)
            .await?
        } else {
            let Some(expr) = search_expression(&terms) else {
                return Ok(Vec::new());
            };
            sqlx::query_as(AssertSqlSafe(format!(
                "SELECT {MEMORY_COLUMNS} FROM agent_memory_fts
                 JOIN agent_memory m ON m.id = agent_memory_fts.rowid
                 WHERE agent_memory_fts MATCH ?1
                 ORDER BY bm25(agent_memory_fts), m.created_at DESC LIMIT ?2"
            )))
            .bind(expr)
            .bind(limit_i64(limit))
            .fetch_all(&self.pool)
            .await?
        };
        rows_to_memories(rows)
    }

    /// Replaces a memory's content (codes written in the new text are re-derived; codes
    /// attached explicitly are kept).
    pub async fn update(&self, id: i64, text: &str) -> Result<Memory> {
        let content = text.trim();
        if content.is_empty() {
            return Err(MemoryError::EmptyContent);
        }
        let old = self.get(id).await?;
        if let Some(other) = sqlx::query_scalar::<_, i64>(
            "SELECT id FROM agent_memory WHERE memory_type = ? AND content = ? AND id <> ?",
        )
        .bind(old.memory_type.as_str())
        .bind(content)
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        {
            return Err(MemoryError::Duplicate {
                memory_type: old.memory_type,
                id: other,
            });
        }
        let old_content_codes = stock_codes(&old.content);
        let explicit: Vec<String> = old
            .codes
            .into_iter()
            .filter(|c| !old_content_codes.contains(c))
            .collect();
        let codes = resolve_codes(content, &explicit)?;
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        sqlx::query(
            "UPDATE agent_memory SET content = ?, codes = ?, content_tokens = ? WHERE id = ?",
        )
        .bind(content)
        .bind(codes.join(","))
        .bind(index_text(content, &codes))
        .bind(id)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM agent_memory_code WHERE memory_id = ?")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        write_codes(&mut tx, id, &codes).await?;
        tx.commit().await?;
        self.get(id).await
    }

    pub async fn delete(&self, id: i64) -> Result<()> {
        let done = sqlx::query("DELETE FROM agent_memory WHERE id = ?")
            .bind(id)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(MemoryError::NotFound(id));
        }
        Ok(())
    }

    /// Removes non-preference memories older than 90 days. Returns how many.
    pub async fn prune(&self, now: DateTime<Utc>) -> Result<u64> {
        let cutoff = time::to_db(capacity::prune_cutoff(now));
        let done = sqlx::query(
            "DELETE FROM agent_memory WHERE memory_type <> 'preference' AND created_at < ?",
        )
        .bind(cutoff)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }
}

async fn write_codes(tx: &mut Transaction<'_, Sqlite>, id: i64, codes: &[String]) -> Result<()> {
    for code in codes {
        sqlx::query("INSERT OR IGNORE INTO agent_memory_code (code, memory_id) VALUES (?, ?)")
            .bind(code)
            .bind(id)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

async fn trim_type(tx: &mut Transaction<'_, Sqlite>, memory_type: MemoryType) -> Result<u64> {
    let done = sqlx::query(
        "DELETE FROM agent_memory WHERE memory_type = ?1 AND id NOT IN (
             SELECT id FROM agent_memory WHERE memory_type = ?1
             ORDER BY created_at DESC, id DESC LIMIT ?2)",
    )
    .bind(memory_type.as_str())
    .bind(limit_i64(capacity::cap(memory_type)))
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected())
}

/// AND of all terms; ASCII words as prefixes so a search box finds "spring" from "spr".
pub(crate) fn search_expression(terms: &[String]) -> Option<String> {
    let parts: Vec<String> = terms
        .iter()
        .map(|t| {
            let quoted = fts_expression(std::slice::from_ref(t), "").unwrap_or_default();
            if t.chars().all(|c| c.is_ascii_alphabetic()) {
                format!("{quoted}*")
            } else {
                quoted
            }
        })
        .collect();
    if parts.is_empty() {
        None
    } else {
        Some(parts.join(" AND "))
    }
}

pub(crate) fn escape_like(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

pub(crate) fn limit_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_codes_validates_and_merges() {
        assert_eq!(
            resolve_codes("看好600519", &["000001".into()]).unwrap(),
            vec!["000001", "600519"]
        );
        assert!(matches!(
            resolve_codes("x", &["60051".into()]),
            Err(MemoryError::InvalidCode(c)) if c == "60051"
        ));
    }

    #[test]
    fn search_expression_ands_terms_and_prefixes_words() {
        let terms = vec!["茅台".to_string(), "spr".to_string(), "600519".to_string()];
        assert_eq!(
            search_expression(&terms).unwrap(),
            "\"茅台\" AND \"spr\"* AND \"600519\""
        );
    }

    #[test]
    fn escape_like_escapes_wildcards() {
        assert_eq!(escape_like("5%_a\\"), "5\\%\\_a\\\\");
    }
}
