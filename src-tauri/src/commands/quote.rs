//! Live quotes: the stock page's day's partial bar while the session is under way, drawn
//! as today's candle in its own style, and the watchlist's and holdings' prices as of their
//! quotes. The work is the desk's; the pages only draw it.

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

/// Live quotes of many stocks at once (the watchlist's rows, the holdings), each with
/// whether its session is under way today; codes no source knows are left out.
#[tauri::command]
#[specta::specta]
pub async fn live_quotes(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    codes: Vec<String>,
) -> Result<Vec<LiveQuote>, CommandError> {
    Ok(desk(&state, &chat)
        .await?
        .quotes(&codes)
        .await
        .map_err(quote_err)?
        .quotes)
}
