//! Chart notes on the stock page: the notes the agent (`annotate_chart`)
//! and the user drew on a stock's chart, the user's own drawing, and removal (the user
//! removes anyone's). A thin adapter over `wyckoff_annotations`.

use serde::Serialize;
use specta::Type;
use tauri::State;
use wyckoff_annotations::{
    Annotation, AnnotationError, AnnotationStore, Author, NotePeriod, Remover, Shape,
};
use wyckoff_market::MarketData;

use crate::chat::ChatState;
use crate::commands::chat::services;
use crate::state::AppState;

#[derive(Debug, Clone, Serialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum NoteCommandError {
    /// The note was refused as drawn (unknown code, a bad date, low above high …): the
    /// message says which; nothing was stored.
    Invalid {
        message: String,
    },
    Other {
        message: String,
    },
}

impl From<AnnotationError> for NoteCommandError {
    fn from(e: AnnotationError) -> Self {
        match e {
            AnnotationError::Db(_) | AnnotationError::Migrate(_) => NoteCommandError::Other {
                message: e.to_string(),
            },
            other => NoteCommandError::Invalid {
                message: other.to_string(),
            },
        }
    }
}

async fn open(
    state: &State<'_, AppState>,
    chat: &State<'_, ChatState>,
) -> Result<(std::sync::Arc<MarketData>, AnnotationStore), NoteCommandError> {
    let md = services(state, chat)
        .await
        .map_err(|e| NoteCommandError::Other {
            message: format!("{e:?}"),
        })?
        .market()
        .clone();
    let store = AnnotationStore::new(md.pool().clone()).await?;
    Ok((md, store))
}

/// The notes on `code`'s chart of `period`, oldest first.
#[tauri::command]
#[specta::specta]
pub async fn chart_notes(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    code: String,
    period: NotePeriod,
) -> Result<Vec<Annotation>, NoteCommandError> {
    let (md, store) = open(&state, &chat).await?;
    let code = wyckoff_annotations::known_code(&md, &code)?;
    Ok(store.list(&code, period).await?)
}

/// The user draws a note on `code`'s chart of `period`.
#[tauri::command]
#[specta::specta]
pub async fn chart_note_add(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    code: String,
    period: NotePeriod,
    shape: Shape,
) -> Result<Annotation, NoteCommandError> {
    let (md, store) = open(&state, &chat).await?;
    let now = md.clock().now();
    Ok(store
        .add(&md, &code, period, &shape, Author::User, now)
        .await?)
}

/// The user removes a note, whoever drew it.
#[tauri::command]
#[specta::specta]
pub async fn chart_note_remove(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    id: i32,
) -> Result<Annotation, NoteCommandError> {
    let (_, store) = open(&state, &chat).await?;
    Ok(store.remove(i64::from(id), Remover::User).await?)
}
