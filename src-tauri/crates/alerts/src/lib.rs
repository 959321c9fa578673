//! Alerts on the watchlist and holdings.
//!
//! Rules (one stock, the watchlist or the portfolio; a condition; a cooldown) and the alerts
//! they fired live in `wyckoff.db` (migration 7000). [`check`] loads the enabled rules,
//! expands the watchlist and portfolio targets, adds every holding's stop-loss and target
//! price (from the portfolio, no rule needed), evaluates them over the bar cache as of a date with the
//! engine's pure checks ([`wyckoff_engine::alerts`]), applies the cooldowns and records what
//! fired with its figures. [`deliver`] hands what fired to the push outbox
//! ([`wyckoff_push`]) and keeps each alert's delivery status from it.

mod check;
pub mod deliver;
pub mod describe;
pub mod intraday;
mod rule;
mod store;

pub use check::{STOP_LOSS_KEY, TARGET_KEY, check, has_work};
pub use rule::{MAX_COOLDOWN_DAYS, NewRule, RuleError, validate};
pub use store::{AlertStore, StoreError};

/// Why a check could not run.
#[derive(Debug, thiserror::Error)]
pub enum AlertsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("market data: {0}")]
    Market(String),
    #[error("push: {0}")]
    Push(String),
    #[error("the check stopped before every stock was evaluated")]
    Interrupted,
}
