use serde::{Deserialize, Serialize};
use specta::Type;

/// Failure categories, classified once where the failure happens (providers, tools,
/// runtime) and carried unchanged to the UI and the CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Authentication,
    Permission,
    RateLimit,
    Overloaded,
    ContextTooLong,
    InvalidRequest,
    Timeout,
    Network,
    Server,
    /// The stream broke the vendor's protocol (malformed JSON, cut without a final event).
    Protocol,
    Cancelled,
    Internal,
}

impl ErrorKind {
    /// Whether trying again (same or another provider) may succeed.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ErrorKind::RateLimit
                | ErrorKind::Overloaded
                | ErrorKind::Timeout
                | ErrorKind::Network
                | ErrorKind::Server
                | ErrorKind::Protocol
        )
    }
}
