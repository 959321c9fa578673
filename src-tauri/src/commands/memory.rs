//! The Memory page: long-term memories by type, search, add, edit, delete. Thin adapters
//! over `wyckoff_session::domain::memory::MemoryStore` (the same store recall reads).

use std::str::FromStr;

use serde::Serialize;
use specta::Type;
use tauri::State;
use wyckoff_session::domain::memory::{Memory, MemoryType};

use crate::chat::ChatState;
use crate::commands::chat::services;
use crate::commands::error::CommandError;
use crate::state::AppState;

/// Memories listed or searched at once (the caps keep the store far below this).
const PAGE: usize = 500;

#[derive(Debug, Clone, Serialize, Type)]
pub struct MemoryItem {
    pub id: i64,
    /// preference, session, stock_opinion, decision or market_view.
    pub memory_type: String,
    pub content: String,
    /// Six-digit stock codes the memory is about.
    pub codes: Vec<String>,
    /// RFC 3339.
    pub created_at: String,
    /// Where it came from: `conversation:{id}`, `compaction_flush`, `cli`, ….
    pub source: String,
}

impl From<Memory> for MemoryItem {
    fn from(m: Memory) -> Self {
        MemoryItem {
            id: m.id,
            memory_type: m.memory_type.as_str().to_owned(),
            content: m.content,
            codes: m.codes,
            created_at: m.created_at.to_rfc3339(),
            source: m.source_ref,
        }
    }
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct MemoryCount {
    pub memory_type: String,
    pub count: i64,
}

fn parse_type(memory_type: Option<&str>) -> Result<Option<MemoryType>, CommandError> {
    memory_type
        .filter(|t| !t.trim().is_empty())
        .map(MemoryType::from_str)
        .transpose()
        .map_err(CommandError::from)
}

/// Memories newest first, of one type or all; with a query, those matching it (Chinese
/// two-character words, stock codes and mixed text work).
#[tauri::command]
#[specta::specta]
pub async fn list_memories(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    memory_type: Option<String>,
    query: Option<String>,
) -> Result<Vec<MemoryItem>, CommandError> {
    let memory_type = parse_type(memory_type.as_deref())?;
    let services = services(&state, &chat).await?;
    let store = services.memories();
    let found = match query.as_deref().map(str::trim).filter(|q| !q.is_empty()) {
        Some(q) => store
            .search(q, PAGE)
            .await?
            .into_iter()
            .filter(|m| memory_type.is_none_or(|t| m.memory_type == t))
            .collect(),
        None => store.list(memory_type, PAGE).await?,
    };
    Ok(found.into_iter().map(Into::into).collect())
}

/// How many memories of each type are stored (every type, zero included).
#[tauri::command]
#[specta::specta]
pub async fn memory_counts(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Vec<MemoryCount>, CommandError> {
    let services = services(&state, &chat).await?;
    let mut counts = Vec::new();
    for t in MemoryType::ALL {
        counts.push(MemoryCount {
            memory_type: t.as_str().to_owned(),
            count: services.memories().count(Some(t)).await?,
        });
    }
    Ok(counts)
}

#[tauri::command]
#[specta::specta]
pub async fn add_memory(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    memory_type: String,
    content: String,
) -> Result<MemoryItem, CommandError> {
    let services = services(&state, &chat).await?;
    Ok(services
        .memories()
        .add(&memory_type, &content)
        .await?
        .into())
}

#[tauri::command]
#[specta::specta]
pub async fn update_memory(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    id: i64,
    content: String,
) -> Result<MemoryItem, CommandError> {
    let services = services(&state, &chat).await?;
    Ok(services.memories().update(id, &content).await?.into())
}

#[tauri::command]
#[specta::specta]
pub async fn delete_memory(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    id: i64,
) -> Result<(), CommandError> {
    let services = services(&state, &chat).await?;
    services.memories().delete(id).await?;
    Ok(())
}
