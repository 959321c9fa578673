use std::time::Duration;

use wyckoff_protocol::ErrorKind;

/// A provider failure, classified once where it happens.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{provider}: {message}")]
pub struct LlmError {
    pub kind: ErrorKind,
    /// Provider name as the user configured it (e.g. "deepseek").
    pub provider: String,
    /// User-facing text: what happened and what to do.
    pub message: String,
    pub status: Option<u16>,
    pub retry_after: Option<Duration>,
    /// True once any content of the response reached the consumer.
    pub after_content: bool,
}

impl LlmError {
    pub fn new(kind: ErrorKind, provider: impl Into<String>, message: impl Into<String>) -> Self {
        LlmError {
            kind,
            provider: provider.into(),
            message: message.into(),
            status: None,
            retry_after: None,
            after_content: false,
        }
    }
}
