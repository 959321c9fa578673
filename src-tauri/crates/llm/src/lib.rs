//! LLM providers behind one streaming interface (seed §6, §11, §12).
//!
//! - [`Provider`]: `stream()` yields [`StreamChunk`]s; `complete()` collects them.
//! - Vendors: [`ClaudeProvider`] (Messages API), [`OpenAiProvider`] (any
//!   chat-completions endpoint: GPT, DeepSeek, Qwen, Kimi, Ollama, …),
//!   [`GeminiProvider`] (`streamGenerateContent`).
//! - Build one from configuration with [`build`] and a [`ProviderSpec`], sharing one
//!   [`HttpClient`].
//! - Wrappers: [`FallbackProvider`] (ordered fallback), [`RoutingProvider`] (heavy/light).
//! - Every stream has an idle timeout between chunks ([`with_idle_timeout`]); every
//!   failure is one classified [`LlmError`].
//!
//! ```no_run
//! # async fn demo() -> Result<(), wyckoff_llm::LlmError> {
//! use std::time::Duration;
//! use futures::StreamExt;
//! use wyckoff_llm::*;
//! use wyckoff_protocol::Message;
//!
//! let http = HttpClient::new(&HttpSettings::default())?; // once per process
//! let spec = ProviderSpec::new(ProviderKind::Deepseek)
//!     .api_key("sk-…")
//!     .idle_timeout(user_idle_timeout(60));
//! let main = build(&spec, &http)?;
//! let backup = build(&ProviderSpec::new(ProviderKind::Ollama).model("qwen3"), &http)?;
//! let provider = FallbackProvider::wrap(vec![main, backup], FallbackPolicy::default())?;
//!
//! let request = ChatRequest {
//!     system: "…".into(),
//!     messages: vec![Message::user("分析 600519")],
//!     tools: vec![],
//!     max_tokens: None,
//! };
//! let mut stream = provider.stream(&request).await?;
//! while let Some(chunk) = stream.next().await {
//!     match chunk? {
//!         StreamChunk::TextDelta(t) => print!("{t}"),
//!         StreamChunk::Fallback { discard_text: true, .. } => { /* erase partial text */ }
//!         _ => {}
//!     }
//! }
//! # Ok(()) }
//! ```

mod args;
mod chunk;
pub mod classify;
pub mod claude;
mod context;
mod error;
mod factory;
pub mod fallback;
pub mod gemini;
mod http;
pub mod openai;
mod provider;
pub mod router;
pub mod sse;
mod stream;
pub mod strict;
mod tagged;
mod timeout;

pub use args::parse_args;
pub use chunk::{Completion, FinishReason, StreamChunk};
pub use claude::ClaudeProvider;
pub use context::{UNKNOWN_MODEL_CONTEXT_WINDOW, context_window, infer_context_window};
pub use error::LlmError;
pub use factory::{ProviderKind, ProviderSpec, VendorDefaults, build};
pub use fallback::{FallbackPolicy, FallbackProvider};
pub use gemini::GeminiProvider;
pub use http::{HttpClient, HttpSettings, is_local_url};
pub use openai::{OpenAiDecoder, OpenAiProvider};
pub use provider::{ChatRequest, ChunkStream, Provider, ProviderConfig, Serving};
pub use router::{RoutingProvider, classify_turn};
pub use stream::{Decoder, decode_all};
pub use strict::{
    NotStrict, NullPlan, StrictSchema, strict_by_default, strict_schema, strip_added_nulls,
};
pub use tagged::{Segment, TagFilter};
pub use timeout::{
    DEFAULT_IDLE_TIMEOUT, USER_IDLE_TIMEOUT_RANGE, user_idle_timeout, with_idle_timeout,
};

#[cfg(test)]
pub(crate) mod test_util {
    /// Splits into pieces of `n` characters.
    pub fn split_chars(s: &str, n: usize) -> Vec<String> {
        let chars: Vec<char> = s.chars().collect();
        chars.chunks(n.max(1)).map(|c| c.iter().collect()).collect()
    }
}
