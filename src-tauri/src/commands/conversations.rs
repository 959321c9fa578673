//! Forking a conversation from the window: the store copies the history
//! up to a message into a new conversation recorded as forked from it; the source is
//! never changed. Edit and regenerate in the chat are a fork followed by an ordinary turn.

use tauri::State;
use wyckoff_session::domain::memory::ConversationStore;

use crate::chat::ChatState;
use crate::commands::chat::{ConversationSummary, hub};
use crate::commands::error::{CommandError, CommandErrorKind};
use crate::state::AppState;

/// Forks `source_id` at its message `from_message` (a seq from `load_conversation`).
/// `running` says whether a turn is running in the source: a fork is then refused, since
/// the history it would copy is still being written.
pub async fn fork(
    store: &ConversationStore,
    running: bool,
    source_id: &str,
    from_message: i64,
) -> Result<ConversationSummary, CommandError> {
    if running {
        return Err(CommandError::new(
            CommandErrorKind::Busy,
            "a turn is running in this conversation",
        ));
    }
    // An open tool round with no turn of this app running belongs to another process (a
    // `wyckoff run` on the same conversation): the store's error says busy, like a running
    // turn here.
    let fork = store.fork(source_id, from_message).await?;
    Ok(fork.conversation.into())
}

/// Forks a conversation at one of its messages and returns the new conversation.
#[tauri::command]
#[specta::specta]
pub async fn fork_conversation(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    id: String,
    from_message: i64,
) -> Result<ConversationSummary, CommandError> {
    let hub = hub(&state, &chat).await?;
    fork(
        hub.services().conversations(),
        hub.is_running(&id),
        &id,
        from_message,
    )
    .await
}

#[cfg(test)]
mod tests;
