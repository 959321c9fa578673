//! The stock page's live quote: the day's partial bar while the session is under way,
//! drawn as today's candle in its own style. The work is the desk's; the page only draws it.

use tauri::State;
use wyckoff_session::desk_quotes::{LiveQuote, QuoteError};

use crate::chat::ChatState;
use crate::commands::chat::desk;
use crate::commands::error::CommandError;
use crate::state::AppState;

fn quote_err(e: QuoteError) -> CommandError {
    match e {
        QuoteError::BadCode { .. } | QuoteError::NoCodes => CommandError::invalid(e),
        QuoteError::Db(_) => CommandError::internal(e),
        QuoteError::Offline | QuoteError::AllFailed(_) => CommandError::unavailable(e),
    }
}

/// One stock's live quote with the day's partial bar (never stored as a daily bar) and
/// whether the session is under way, so the page knows to draw it.
#[tauri::command]
#[specta::specta]
pub async fn live_quote(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    code: String,
) -> Result<LiveQuote, CommandError> {
    desk(&state, &chat)
        .await?
        .live_quote(&code)
        .await
        .map_err(quote_err)
}
