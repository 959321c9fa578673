//! "Test connection" in model setup: one tiny request to one settings entry's provider,
//! alone (no routing, no fallback), so a wrong key, model or endpoint shows up here with
//! its classified error instead of in the first chat.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wyckoff_config::Secrets;
use wyckoff_config::settings::{ModelEntry, Settings};
use wyckoff_llm::{ChatRequest, HttpClient, HttpSettings, LlmError, Provider};
use wyckoff_protocol::Message;

use crate::error::SessionError;
use crate::providers;

/// How long the test waits between chunks (a healthy endpoint answers "ping" at once).
const TEST_IDLE_TIMEOUT: Duration = Duration::from_secs(20);
/// Characters of the reply shown back.
const REPLY_CHARS: usize = 80;

/// A successful test.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionCheck {
    pub provider: String,
    pub model: String,
    pub elapsed: Duration,
    /// The start of the model's reply.
    pub reply: String,
}

/// Why a test failed: the entry could not be built (missing key, bad settings) or the
/// vendor answered with an error (classified, with what to do).
#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    #[error(transparent)]
    Setup(#[from] SessionError),
    #[error("{}", .0.message)]
    Vendor(LlmError),
}

/// Tests `entry` with the settings' proxy and the keys in `secrets`.
pub async fn test_entry(
    settings: &Settings,
    secrets: &Secrets,
    entry: &ModelEntry,
) -> Result<ConnectionCheck, ConnectionError> {
    let http = HttpClient::new(&HttpSettings {
        proxy: settings.proxy.clone(),
        ..HttpSettings::default()
    })
    .map_err(SessionError::from)?;
    let provider = providers::entry_provider(entry, secrets, &http, TEST_IDLE_TIMEOUT)?;
    test_provider(provider).await
}

/// One "ping" with a tiny output budget.
pub async fn test_provider(
    provider: Arc<dyn Provider>,
) -> Result<ConnectionCheck, ConnectionError> {
    let request = ChatRequest {
        system: String::new(),
        messages: vec![Message::user("ping")],
        tools: Vec::new(),
        max_tokens: Some(16),
    };
    let started = Instant::now();
    let completion = provider
        .complete(&request)
        .await
        .map_err(ConnectionError::Vendor)?;
    Ok(ConnectionCheck {
        provider: provider.name().to_owned(),
        model: provider.model().to_owned(),
        elapsed: started.elapsed(),
        reply: completion.text.trim().chars().take(REPLY_CHARS).collect(),
    })
}
