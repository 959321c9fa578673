//! The account's portfolio as the front ends show it: one free-cash figure. Once the
//! ledger records a bank transfer its cash governs, and the figure stated with `set_cash`
//! is neither shown nor settable (the tool refuses it, naming the ledger's cash).

use wyckoff_agent::ToolError;
use wyckoff_market::PortfolioView;
use wyckoff_tools::portfolio;

use crate::Desk;

impl Desk {
    /// The portfolio with its free cash as the account has it, and whether that cash is
    /// the ledger's (`true`) rather than the stated figure.
    pub async fn account_view(&self) -> Result<(PortfolioView, bool), ToolError> {
        portfolio::account_view(self.market()).await
    }
}
