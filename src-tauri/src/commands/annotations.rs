//! Chart notes on the stock page: the notes the agent (`annotate_chart`)
//! and the user drew on a stock's chart, the user's own drawing, and removal (the user
//! removes anyone's). A thin adapter over `wyckoff_annotations`.

use tauri::State;
use wyckoff_session::domain::annotations::{
    Annotation, AnnotationStore, Author, NotePeriod, Remover, Shape,
};
use wyckoff_session::domain::market::MarketData;

use crate::chat::ChatState;
use crate::commands::chat::desk;
use crate::commands::error::CommandError;
use crate::state::AppState;

async fn open(
    state: &State<'_, AppState>,
    chat: &State<'_, ChatState>,
) -> Result<(std::sync::Arc<MarketData>, AnnotationStore), CommandError> {
    let desk = desk(state, chat).await?;
    Ok((desk.market().clone(), desk.notes().clone()))
}

/// The notes on `code`'s chart of `period`, oldest first.
#[tauri::command]
#[specta::specta]
pub async fn chart_notes(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    code: String,
    period: NotePeriod,
) -> Result<Vec<Annotation>, CommandError> {
    let (md, store) = open(&state, &chat).await?;
    let code = wyckoff_session::domain::annotations::known_code(&md, &code)?;
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
) -> Result<Annotation, CommandError> {
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
) -> Result<Annotation, CommandError> {
    let (_, store) = open(&state, &chat).await?;
    Ok(store.remove(i64::from(id), Remover::User).await?)
}
