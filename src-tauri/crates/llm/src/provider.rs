use std::pin::Pin;

use async_trait::async_trait;
use futures::{Stream, StreamExt};
use wyckoff_protocol::{Message, Tier, ToolSchema};

use crate::{Completion, LlmError, StreamChunk};

pub type ChunkStream = Pin<Box<dyn Stream<Item = Result<StreamChunk, LlmError>> + Send>>;

/// One request to a model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatRequest {
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSchema>,
    pub max_tokens: Option<u32>,
}

/// Where and how one vendor endpoint is called: the same for every wire format.
#[derive(Clone)]
pub struct ProviderConfig {
    /// Provider name for messages and the UI ("claude", "deepseek", "ollama", …).
    pub name: String,
    pub model: String,
    /// The endpoint; each provider's `new` says whether it includes the version path.
    pub base_url: String,
    /// `None` or empty: no key is sent (keyless local servers).
    pub api_key: Option<String>,
    pub context_window: u32,
    /// Allowed between two chunks of a stream.
    pub idle_timeout: std::time::Duration,
}

impl ProviderConfig {
    /// The key, when one is set.
    pub(crate) fn secret(&self) -> Option<&str> {
        self.api_key.as_deref().filter(|k| !k.is_empty())
    }
}

// Hand-written so the key never reaches debug output or logs.
impl std::fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("name", &self.name)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[set]"))
            .field("context_window", &self.context_window)
            .field("idle_timeout", &self.idle_timeout)
            .finish()
    }
}

/// The provider, model and tier that will serve a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Serving {
    pub provider: String,
    pub model: String,
    pub tier: Option<Tier>,
}

/// A model family behind one streaming interface.
#[async_trait]
pub trait Provider: Send + Sync {
    /// Provider name as configured ("claude", "deepseek", "ollama", …).
    fn name(&self) -> &str;
    fn model(&self) -> &str;
    /// Context window in tokens (known-model table, user override, or a conservative default).
    fn context_window(&self) -> u32;
    /// The tier that served the last request, when this provider routes between tiers.
    fn last_tier(&self) -> Option<Tier> {
        None
    }

    /// Who will serve `request` if it is sent now: a router decides per request, so
    /// listeners learn the model (and its price) before the call, not after.
    fn serving(&self, _request: &ChatRequest) -> Serving {
        Serving {
            provider: self.name().to_owned(),
            model: self.model().to_owned(),
            tier: None,
        }
    }

    /// Starts a streaming call. Errors before the first byte are returned here; errors
    /// during the stream (including the idle timeout) arrive as stream items.
    async fn stream(&self, request: &ChatRequest) -> Result<ChunkStream, LlmError>;

    /// Non-streaming call: collects the stream.
    async fn complete(&self, request: &ChatRequest) -> Result<Completion, LlmError> {
        let mut stream = self.stream(request).await?;
        let mut out = Completion::default();
        while let Some(item) = stream.next().await {
            out.push(item?);
        }
        Ok(out)
    }
}
