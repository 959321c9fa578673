//! Which model(s) a session talks to: the settings' main / light / fallback models, or
//! explicit overrides (CLI flags, a per-chat model picker). Keys come from the
//! environment or the keychain through [`Secrets`] and go straight into the provider;
//! they are never logged or returned.

use std::sync::Arc;
use std::time::Duration;

use wyckoff_config::Secrets;
use wyckoff_config::secrets::{SecretId, Vendor};
use wyckoff_config::settings::{ModelEntry, Settings};
use wyckoff_llm::{
    FallbackPolicy, FallbackProvider, HttpClient, Provider, ProviderKind, ProviderSpec,
    RoutingProvider, VendorDefaults, build, is_local_url,
};

use crate::SessionError;

/// Explicit choices that win over the settings. All optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelOverrides {
    /// Provider name as typed (`claude`, `openai`, `gemini`, `deepseek`, `qwen`, `kimi`,
    /// `ollama`, `openai-compatible`). When set, the session uses that one provider: no
    /// light-model routing, no fallbacks.
    pub provider: Option<String>,
    /// A model id of that provider; without `provider`, a settings entry id or a model
    /// name for the main entry's provider.
    pub model: Option<String>,
    /// Endpoint override (e.g. a local server in tests).
    pub base_url: Option<String>,
    /// Stream idle timeout (time allowed between two chunks).
    pub idle_timeout: Option<Duration>,
    /// Context window in tokens.
    pub context_window: Option<u32>,
}

/// The providers a runtime needs.
pub struct ResolvedProviders {
    /// The main provider (a heavy/light router when a light model is configured).
    pub main: Arc<dyn Provider>,
    /// Takes over when the main one keeps failing (settings' fallback models, in order).
    pub fallback: Option<Arc<dyn Provider>>,
}

impl std::fmt::Debug for ResolvedProviders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolvedProviders")
            .field(
                "main",
                &format!("{}/{}", self.main.name(), self.main.model()),
            )
            .field(
                "fallback",
                &self
                    .fallback
                    .as_ref()
                    .map(|p| format!("{}/{}", p.name(), p.model())),
            )
            .finish()
    }
}

/// Parses a provider name (aliases such as `anthropic` accepted).
pub fn parse_provider(name: &str) -> Result<ProviderKind, SessionError> {
    name.parse::<ProviderKind>()
        .map_err(|_| SessionError::UnknownProvider {
            given: name.to_owned(),
            expected: ProviderKind::ALL
                .iter()
                .map(|k| k.cli_name())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// One provider to build: kind, model, endpoint and the secret it uses.
#[derive(Debug, Clone)]
struct Choice {
    kind: ProviderKind,
    model: Option<String>,
    base_url: Option<String>,
    context_window: Option<u32>,
    /// Settings entry id (custom endpoints keep their key under it).
    entry_id: Option<String>,
}

impl Choice {
    fn from_entry(entry: &ModelEntry) -> Result<Choice, SessionError> {
        Ok(Choice {
            kind: entry.provider,
            model: Some(entry.model.clone()).filter(|m| !m.trim().is_empty()),
            base_url: entry.base_url.clone().filter(|u| !u.trim().is_empty()),
            context_window: entry.context_window.and_then(|w| u32::try_from(w).ok()),
            entry_id: Some(entry.id.clone()),
        })
    }

    fn effective_base_url(&self) -> Option<String> {
        self.base_url
            .clone()
            .or_else(|| self.kind.default_base_url().map(str::to_owned))
    }
}

/// The secrets to try for a choice, in order, and the env var to name when none is set.
fn key_ids(choice: &Choice) -> Result<(Vec<SecretId>, String), SessionError> {
    let kind = choice.kind;
    let mut ids = Vec::new();
    if kind == ProviderKind::OpenaiCompatible {
        let id = choice
            .entry_id
            .clone()
            .unwrap_or_else(|| "openai-compatible".to_owned());
        ids.push(SecretId::Custom { id });
        // A custom OpenAI-compatible endpoint without its own key may use the OpenAI one.
        ids.push(SecretId::Provider {
            vendor: Vendor::Openai,
        });
    } else if let Some(id) = SecretId::for_provider(kind, choice.entry_id.as_deref().unwrap_or(""))
    {
        ids.push(id);
    }
    let env_var = ids
        .first()
        .and_then(|id| id.env_vars().into_iter().next())
        .or_else(|| choice.kind.key_env_var().map(str::to_owned))
        .unwrap_or_default();
    Ok((ids, env_var))
}

fn build_choice(
    choice: &Choice,
    secrets: &Secrets,
    http: &HttpClient,
    idle_timeout: Duration,
    context_override: Option<u32>,
) -> Result<Arc<dyn Provider>, SessionError> {
    let (ids, env_var) = key_ids(choice)?;
    let key = ids.iter().find_map(|id| secrets.get(id)).map(|(v, _)| v);
    let base_url = choice.effective_base_url();
    let local = base_url.as_deref().is_some_and(is_local_url);
    if key.is_none() && choice.kind.needs_key() && !local {
        return Err(SessionError::MissingKey {
            provider: choice.kind.cli_name().to_owned(),
            env_var,
        });
    }
    let mut spec = ProviderSpec::new(choice.kind).idle_timeout(idle_timeout);
    if let Some(model) = &choice.model {
        spec = spec.model(model.clone());
    }
    if let Some(url) = &choice.base_url {
        spec = spec.base_url(url.clone());
    }
    if let Some(window) = context_override.or(choice.context_window) {
        spec = spec.context_window(window);
    }
    if let Some(key) = &key {
        spec = spec.api_key(key.expose());
    }
    let provider = build(&spec, http)?;
    tracing::info!(
        provider = provider.name(),
        model = provider.model(),
        key_set = key.is_some(),
        "provider ready"
    );
    Ok(provider)
}

/// The provider of one settings entry alone (no routing, no fallback), e.g. to test it.
pub fn entry_provider(
    entry: &ModelEntry,
    secrets: &Secrets,
    http: &HttpClient,
    idle_timeout: Duration,
) -> Result<Arc<dyn Provider>, SessionError> {
    build_choice(
        &Choice::from_entry(entry)?,
        secrets,
        http,
        idle_timeout,
        None,
    )
}

fn entry<'a>(settings: &'a Settings, id: &str) -> Result<&'a ModelEntry, SessionError> {
    settings
        .model(id)
        .ok_or_else(|| SessionError::UnknownModelEntry(id.to_owned()))
}

/// Builds the session's providers from `overrides`, else from the settings.
pub fn resolve(
    settings: &Settings,
    secrets: &Secrets,
    http: &HttpClient,
    overrides: &ModelOverrides,
) -> Result<ResolvedProviders, SessionError> {
    let idle = overrides.idle_timeout.unwrap_or_else(|| {
        Duration::from_secs(u64::try_from(settings.stream_idle_timeout_secs.max(1)).unwrap_or(60))
    });
    let window = overrides.context_window;

    if let Some(name) = overrides.provider.as_deref() {
        let kind = parse_provider(name)?;
        // A settings entry of the same vendor supplies defaults (model, endpoint, key id).
        let ck = kind;
        let configured = settings
            .main_model
            .as_deref()
            .and_then(|id| settings.model(id))
            .filter(|e| e.provider == ck)
            .or_else(|| settings.models.iter().find(|e| e.provider == ck));
        let mut choice = match configured {
            Some(e) => Choice::from_entry(e)?,
            None => Choice {
                kind,
                model: None,
                base_url: None,
                context_window: None,
                entry_id: None,
            },
        };
        if let Some(m) = overrides.model.clone().filter(|m| !m.trim().is_empty()) {
            choice.model = Some(m);
        }
        if let Some(u) = overrides.base_url.clone().filter(|u| !u.trim().is_empty()) {
            choice.base_url = Some(u);
        }
        let main = build_choice(&choice, secrets, http, idle, window)?;
        return Ok(ResolvedProviders {
            main,
            fallback: None,
        });
    }

    // From the settings: an explicit --model may name an entry id.
    let explicit_entry = overrides
        .model
        .as_deref()
        .and_then(|m| settings.model(m.trim()));
    let main_entry = match explicit_entry {
        Some(e) => e,
        None => {
            let id = settings
                .main_model
                .as_deref()
                .or_else(|| (settings.models.len() == 1).then(|| settings.models[0].id.as_str()))
                .ok_or(SessionError::NoModelConfigured)?;
            entry(settings, id)?
        }
    };
    let mut choice = Choice::from_entry(main_entry)?;
    if explicit_entry.is_none()
        && let Some(m) = overrides.model.clone().filter(|m| !m.trim().is_empty())
    {
        choice.model = Some(m);
    }
    if let Some(u) = overrides.base_url.clone().filter(|u| !u.trim().is_empty()) {
        choice.base_url = Some(u);
    }
    let heavy = build_choice(&choice, secrets, http, idle, window)?;

    let light = match settings.light_model.as_deref() {
        Some(id) if id != main_entry.id && overrides.base_url.is_none() => {
            let c = Choice::from_entry(entry(settings, id)?)?;
            match build_choice(&c, secrets, http, idle, None) {
                Ok(p) => Some(p),
                Err(e) => {
                    // A light model that cannot be used must not stop the session.
                    tracing::warn!("light model '{id}' unavailable, routing off: {e}");
                    None
                }
            }
        }
        _ => None,
    };
    let main = RoutingProvider::route(heavy, light);

    let mut fallbacks = Vec::new();
    if overrides.base_url.is_none() {
        for id in settings
            .fallback_models
            .iter()
            .filter(|id| **id != main_entry.id)
        {
            let c = Choice::from_entry(entry(settings, id)?)?;
            match build_choice(&c, secrets, http, idle, None) {
                Ok(p) => fallbacks.push(p),
                Err(e) => tracing::warn!("fallback model '{id}' unavailable, skipped: {e}"),
            }
        }
    }
    let fallback = if fallbacks.is_empty() {
        None
    } else {
        Some(FallbackProvider::wrap(
            fallbacks,
            FallbackPolicy::default(),
        )?)
    };
    Ok(ResolvedProviders { main, fallback })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wyckoff_config::secrets::MemoryBackend;

    fn secrets(env: &'static [(&'static str, &'static str)]) -> Secrets {
        Secrets::with_backend(
            Box::new(MemoryBackend::default()),
            Box::new(move |k| {
                env.iter()
                    .find(|(name, _)| *name == k)
                    .map(|(_, v)| (*v).to_owned())
            }),
        )
    }

    fn entry(id: &str, provider: ProviderKind, model: &str) -> ModelEntry {
        ModelEntry {
            id: id.into(),
            provider,
            model: model.into(),
            base_url: None,
            context_window: None,
            input_price_per_mtok: None,
            output_price_per_mtok: None,
        }
    }

    fn http() -> HttpClient {
        HttpClient::from_env().unwrap()
    }

    #[test]
    fn explicit_provider_needs_its_key_unless_local() {
        let s = Settings::default();
        let err = resolve(
            &s,
            &secrets(&[]),
            &http(),
            &ModelOverrides {
                provider: Some("deepseek".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(err.is_user_error());
        assert!(err.to_string().contains("DEEPSEEK_API_KEY"), "{err}");

        let local = resolve(
            &s,
            &secrets(&[]),
            &http(),
            &ModelOverrides {
                provider: Some("openai".into()),
                base_url: Some("http://127.0.0.1:9/v1".into()),
                model: Some("gpt-test".into()),
                context_window: Some(4096),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(local.main.name(), "openai");
        assert_eq!(local.main.model(), "gpt-test");
        assert_eq!(local.main.context_window(), 4096);
        assert!(local.fallback.is_none());

        let with_key = resolve(
            &s,
            &secrets(&[("OPENAI_API_KEY", "sk-test-abcdef")]),
            &http(),
            &ModelOverrides {
                provider: Some("openai".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(with_key.main.model(), "gpt-4o");
        assert!(!format!("{with_key:?}").contains("sk-test"));
    }

    #[test]
    fn unknown_provider_lists_the_names() {
        let err = resolve(
            &Settings::default(),
            &secrets(&[]),
            &http(),
            &ModelOverrides {
                provider: Some("nope".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(err.is_user_error());
        let text = err.to_string();
        assert!(
            text.contains("'nope'") && text.contains("openai-compatible"),
            "{text}"
        );
    }

    #[test]
    fn settings_main_light_and_fallbacks() {
        let err = resolve(
            &Settings::default(),
            &secrets(&[]),
            &http(),
            &ModelOverrides::default(),
        )
        .unwrap_err();
        assert!(matches!(err, SessionError::NoModelConfigured));
        assert!(err.to_string().contains("--provider"));

        let s = Settings {
            models: vec![
                entry("ds", ProviderKind::Deepseek, "deepseek-chat"),
                entry("local", ProviderKind::Ollama, "qwen3"),
                entry("kimi", ProviderKind::Kimi, ""),
            ],
            main_model: Some("ds".into()),
            light_model: Some("local".into()),
            fallback_models: vec!["local".into(), "kimi".into()],
            ..Settings::default()
        };
        let env = secrets(&[("DEEPSEEK_API_KEY", "sk-ds-123456")]);
        let r = resolve(&s, &env, &http(), &ModelOverrides::default()).unwrap();
        assert_eq!(r.main.model(), "deepseek-chat");
        // kimi has no key: skipped with a warning, ollama stays.
        let fb = r.fallback.unwrap();
        assert_eq!((fb.name(), fb.model()), ("ollama", "qwen3"));

        // --model naming an entry picks it.
        let r = resolve(
            &s,
            &env,
            &http(),
            &ModelOverrides {
                model: Some("local".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(r.main.name(), "ollama");

        // Without the main key: a clear error.
        let err = resolve(&s, &secrets(&[]), &http(), &ModelOverrides::default()).unwrap_err();
        assert!(matches!(err, SessionError::MissingKey { .. }), "{err}");
    }
}
