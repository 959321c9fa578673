//! Building a provider from configuration.

use std::sync::Arc;
use std::time::Duration;

use std::fmt;
use wyckoff_protocol::ErrorKind;

use crate::claude::ClaudeProvider;
use crate::context::context_window;
use crate::gemini::GeminiProvider;
use crate::http::{HttpClient, is_local_url};
use crate::openai::OpenAiProvider;
use crate::timeout::DEFAULT_IDLE_TIMEOUT;
use crate::{LlmError, Provider, ProviderConfig};

pub use wyckoff_protocol::ProviderKind;

/// What the provider layer knows about each vendor: endpoint, default model, key.
pub trait VendorDefaults {
    /// The vendor's public endpoint; `None` when the user must give one.
    fn default_base_url(self) -> Option<&'static str>;
    /// A sensible model when the user did not pick one.
    fn default_model(self) -> &'static str;
    /// Whether the vendor needs an API key (local servers never do).
    fn needs_key(self) -> bool;
    /// The environment variable a headless run reads the key from.
    fn key_env_var(self) -> Option<&'static str>;
}

impl VendorDefaults for ProviderKind {
    fn default_base_url(self) -> Option<&'static str> {
        match self {
            ProviderKind::Claude => Some("https://api.anthropic.com"),
            ProviderKind::Openai => Some("https://api.openai.com/v1"),
            ProviderKind::Gemini => Some("https://generativelanguage.googleapis.com"),
            ProviderKind::Deepseek => Some("https://api.deepseek.com/v1"),
            ProviderKind::Qwen => Some("https://dashscope.aliyuncs.com/compatible-mode/v1"),
            ProviderKind::Kimi => Some("https://api.moonshot.cn/v1"),
            ProviderKind::Ollama => Some("http://localhost:11434/v1"),
            ProviderKind::OpenaiCompatible => None,
        }
    }

    fn default_model(self) -> &'static str {
        match self {
            ProviderKind::Claude => "claude-sonnet-4-5",
            ProviderKind::Openai => "gpt-4o",
            ProviderKind::Gemini => "gemini-2.5-flash",
            ProviderKind::Deepseek => "deepseek-chat",
            ProviderKind::Qwen => "qwen-plus",
            ProviderKind::Kimi => "kimi-k2-0905-preview",
            ProviderKind::Ollama => "qwen3",
            ProviderKind::OpenaiCompatible => "",
        }
    }

    fn needs_key(self) -> bool {
        !matches!(self, ProviderKind::Ollama | ProviderKind::OpenaiCompatible)
    }

    fn key_env_var(self) -> Option<&'static str> {
        match self {
            ProviderKind::Claude => Some("ANTHROPIC_API_KEY"),
            ProviderKind::Openai => Some("OPENAI_API_KEY"),
            ProviderKind::Gemini => Some("GEMINI_API_KEY"),
            ProviderKind::Deepseek => Some("DEEPSEEK_API_KEY"),
            ProviderKind::Qwen => Some("DASHSCOPE_API_KEY"),
            ProviderKind::Kimi => Some("MOONSHOT_API_KEY"),
            ProviderKind::Ollama => None,
            ProviderKind::OpenaiCompatible => Some("OPENAI_API_KEY"),
        }
    }
}

/// Everything needed to build one provider.
#[derive(Clone, PartialEq, Eq)]
pub struct ProviderSpec {
    pub kind: ProviderKind,
    /// Empty: the kind's default model.
    pub model: String,
    /// `None`: the kind's default endpoint.
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    /// User override of the context window.
    pub context_window: Option<u32>,
    /// Time allowed between two chunks (users: 10–600 s, see `user_idle_timeout`).
    pub idle_timeout: Duration,
    /// Tools in OpenAI strict form; `None`: only on OpenAI's own API
    /// ([`crate::strict_by_default`]).
    pub strict_tools: Option<bool>,
}

// Hand-written so a key never appears in debug output or logs.
impl fmt::Debug for ProviderSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderSpec")
            .field("kind", &self.kind)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[set]"))
            .field("context_window", &self.context_window)
            .field("idle_timeout", &self.idle_timeout)
            .field("strict_tools", &self.strict_tools)
            .finish()
    }
}

impl ProviderSpec {
    /// A spec with the kind's defaults and no key.
    pub fn new(kind: ProviderKind) -> Self {
        ProviderSpec {
            kind,
            model: kind.default_model().to_string(),
            base_url: None,
            api_key: None,
            context_window: None,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            strict_tools: None,
        }
    }

    /// Forces strict tool schemas on or off (OpenAI-format endpoints only).
    pub fn strict_tools(mut self, on: bool) -> Self {
        self.strict_tools = Some(on);
        self
    }

    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    pub fn context_window(mut self, window: u32) -> Self {
        self.context_window = Some(window);
        self
    }
}

fn invalid(kind: ProviderKind, message: String) -> LlmError {
    LlmError::new(ErrorKind::InvalidRequest, kind.cli_name(), message)
}

/// Builds the provider a spec describes, sharing `http`.
pub fn build(spec: &ProviderSpec, http: &HttpClient) -> Result<Arc<dyn Provider>, LlmError> {
    let kind = spec.kind;
    let name = kind.cli_name().to_string();
    let base_url = match spec
        .base_url
        .as_deref()
        .map(str::trim)
        .filter(|u| !u.is_empty())
    {
        Some(u) => u.trim_end_matches('/').to_string(),
        None => kind
            .default_base_url()
            .ok_or_else(|| {
                invalid(
                    kind,
                    "A base URL is required for an OpenAI-compatible endpoint (e.g. http://localhost:1234/v1): set it in the model settings.".into(),
                )
            })?
            .to_string(),
    };
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(invalid(
            kind,
            format!("The base URL '{base_url}' must start with http:// or https://."),
        ));
    }
    let model = if spec.model.trim().is_empty() {
        kind.default_model().to_string()
    } else {
        spec.model.trim().to_string()
    };
    if model.is_empty() {
        return Err(invalid(
            kind,
            "A model name is required for an OpenAI-compatible endpoint: set it in the model settings.".into(),
        ));
    }
    let api_key = spec
        .api_key
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_string);
    if api_key.is_none() && kind.needs_key() && !is_local_url(&base_url) {
        let env_hint = kind
            .key_env_var()
            .map(|v| format!(" (or set {v} for headless runs)"))
            .unwrap_or_default();
        return Err(LlmError::new(
            ErrorKind::Authentication,
            name,
            format!(
                "No API key is set for {}: add it in Settings → Models{env_hint}.",
                kind.cli_name()
            ),
        ));
    }
    let window = context_window(&model, spec.context_window);
    let strict = spec
        .strict_tools
        .unwrap_or_else(|| crate::strict::strict_by_default(kind, &base_url));
    let provider: Arc<dyn Provider> = match kind {
        ProviderKind::Claude => Arc::new(ClaudeProvider::new(
            ProviderConfig {
                name,
                model,
                base_url,
                api_key,
                context_window: window,
                idle_timeout: spec.idle_timeout,
            },
            http.clone(),
        )),
        ProviderKind::Gemini => Arc::new(GeminiProvider::new(
            ProviderConfig {
                name,
                model,
                base_url,
                api_key,
                context_window: window,
                idle_timeout: spec.idle_timeout,
            },
            http.clone(),
        )),
        _ => Arc::new(
            OpenAiProvider::new(
                ProviderConfig {
                    name,
                    model,
                    base_url,
                    api_key,
                    context_window: window,
                    idle_timeout: spec.idle_timeout,
                },
                http.clone(),
            )
            .with_strict_tools(strict),
        ),
    };
    Ok(provider)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_key_is_an_authentication_error_unless_local() {
        let http = HttpClient::from_env().unwrap();
        let err = build(&ProviderSpec::new(ProviderKind::Deepseek), &http)
            .err()
            .unwrap();
        assert_eq!(err.kind, ErrorKind::Authentication);
        assert!(err.message.contains("DEEPSEEK_API_KEY"), "{}", err.message);

        let local = ProviderSpec::new(ProviderKind::Openai).base_url("http://127.0.0.1:8080/v1");
        assert!(build(&local, &http).is_ok());
        let ollama = build(&ProviderSpec::new(ProviderKind::Ollama), &http).unwrap();
        assert_eq!(ollama.name(), "ollama");
        assert_eq!(ollama.model(), "qwen3");

        let custom = ProviderSpec::new(ProviderKind::OpenaiCompatible);
        assert_eq!(
            build(&custom, &http).err().unwrap().kind,
            ErrorKind::InvalidRequest
        );
    }

    #[test]
    fn defaults_and_context_windows() {
        let http = HttpClient::from_env().unwrap();
        let p = build(&ProviderSpec::new(ProviderKind::Claude).api_key("k"), &http).unwrap();
        assert_eq!(
            (p.name(), p.model(), p.context_window()),
            ("claude", "claude-sonnet-4-5", 200_000)
        );
        let p = build(
            &ProviderSpec::new(ProviderKind::Deepseek)
                .api_key("k")
                .context_window(128_000),
            &http,
        )
        .unwrap();
        assert_eq!(p.context_window(), 128_000);
        let spec = ProviderSpec::new(ProviderKind::Kimi).api_key("sk-secret-value");
        assert!(!format!("{spec:?}").contains("sk-secret-value"));
    }
}
