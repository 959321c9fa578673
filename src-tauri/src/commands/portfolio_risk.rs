//! The portfolio page's risk section: open risk to the stops ("heat"), the largest
//! industry's share, positions against the limit and the drawdown brake, under the limits in
//! Settings. The work is the desk's; the page only draws it.

use tauri::State;
use wyckoff_session::domain::agent::ToolError;
use wyckoff_session::reports::AccountRisk;

use crate::chat::ChatState;
use crate::commands::chat::desk;
use crate::commands::error::CommandError;
use crate::state::AppState;

/// The account's risk now.
#[tauri::command]
#[specta::specta]
pub async fn portfolio_risk(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<AccountRisk, CommandError> {
    desk(&state, &chat)
        .await?
        .portfolio_risk()
        .await
        .map_err(|e| match e {
            ToolError::InvalidArgs(m) => CommandError::invalid(m),
            // the portfolio, the ledger or a close could not be read: the message says which
            ToolError::Failed(m) => CommandError::unavailable(m),
            ToolError::Cancelled => CommandError::internal(e),
        })
}
