use std::sync::Arc;
use std::time::Duration;

use wyckoff_protocol::ErrorKind;

/// A provider failure, classified once where it happens. `to_string()` is the text for
/// the user: the provider, what happened, and what to do.
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
    /// The lower-level failure this was classified from (transport, I/O), kept so a
    /// trace can walk the whole `source()` chain; `message` is already the user's text.
    #[source]
    pub cause: Option<Arc<dyn std::error::Error + Send + Sync>>,
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
            cause: None,
        }
    }

    pub fn with_cause(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.cause = Some(Arc::new(cause));
        self
    }

    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    pub fn with_retry_after(mut self, retry_after: Option<Duration>) -> Self {
        self.retry_after = retry_after;
        self
    }

    pub fn with_after_content(mut self, after_content: bool) -> Self {
        self.after_content = after_content;
        self
    }

    /// Whether trying again (same or another provider) may succeed.
    pub fn is_retryable(&self) -> bool {
        self.kind.is_retryable()
    }
}
