//! API keys and data-source tokens: environment overrides, the OS keychain, and a
//! session-only store for machines without a keychain. Values never leave this module
//! except through [`SecretValue::expose`], and never through `Debug`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use specta::Type;

use crate::settings::ProviderKind;

/// Keychain service name under which every entry is stored.
pub const KEYRING_SERVICE: &str = "wyckoff-desk";
/// A keychain call that takes longer than this is treated as unavailable (some Linux
/// setups block forever on an unlock prompt nobody can answer).
const KEYCHAIN_CALL_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Vendor {
    Anthropic,
    Openai,
    Gemini,
    Deepseek,
    Qwen,
    Kimi,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum DataSecret {
    Tushare,
    Tickflow,
}

/// Which secret: a vendor's API key, a custom endpoint's key, or a data-source token.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SecretId {
    Provider {
        vendor: Vendor,
    },
    /// Key of a custom OpenAI-compatible endpoint, by its model entry id.
    Custom {
        id: String,
    },
    DataSource {
        source: DataSecret,
    },
}

impl SecretId {
    /// The secret a model entry uses, if its provider needs one.
    pub fn for_provider(kind: ProviderKind, entry_id: &str) -> Option<SecretId> {
        let vendor = match kind {
            ProviderKind::Claude => Vendor::Anthropic,
            ProviderKind::Openai => Vendor::Openai,
            ProviderKind::Gemini => Vendor::Gemini,
            ProviderKind::Deepseek => Vendor::Deepseek,
            ProviderKind::Qwen => Vendor::Qwen,
            ProviderKind::Kimi => Vendor::Kimi,
            ProviderKind::Ollama => return None,
            ProviderKind::OpenaiCompatible => {
                return Some(SecretId::Custom {
                    id: entry_id.to_owned(),
                });
            }
        };
        Some(SecretId::Provider { vendor })
    }

    /// The keychain account name.
    pub fn account(&self) -> String {
        match self {
            SecretId::Provider { vendor } => format!("provider:{}", vendor_name(*vendor)),
            SecretId::Custom { id } => format!("custom:{id}"),
            SecretId::DataSource { source } => format!("data:{}", data_name(*source)),
        }
    }

    /// Environment variables that override the keychain, first match wins.
    pub fn env_vars(&self) -> Vec<String> {
        let fixed: &[&str] = match self {
            SecretId::Provider {
                vendor: Vendor::Anthropic,
            } => &["ANTHROPIC_API_KEY"],
            SecretId::Provider {
                vendor: Vendor::Openai,
            } => &["OPENAI_API_KEY"],
            SecretId::Provider {
                vendor: Vendor::Gemini,
            } => &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
            SecretId::Provider {
                vendor: Vendor::Deepseek,
            } => &["DEEPSEEK_API_KEY"],
            SecretId::Provider {
                vendor: Vendor::Qwen,
            } => &["DASHSCOPE_API_KEY", "QWEN_API_KEY"],
            SecretId::Provider {
                vendor: Vendor::Kimi,
            } => &["MOONSHOT_API_KEY", "KIMI_API_KEY"],
            SecretId::DataSource {
                source: DataSecret::Tushare,
            } => &["TUSHARE_TOKEN"],
            SecretId::DataSource {
                source: DataSecret::Tickflow,
            } => &["TICKFLOW_API_KEY"],
            SecretId::Custom { id } => {
                let var: String = id
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() {
                            c.to_ascii_uppercase()
                        } else {
                            '_'
                        }
                    })
                    .collect();
                return vec![format!("WYCKOFF_KEY_{var}")];
            }
        };
        fixed.iter().map(|s| (*s).to_owned()).collect()
    }

    /// Every secret the settings can use: the fixed ones plus one per custom
    /// OpenAI-compatible endpoint (for `wyckoff doctor` and the settings page).
    pub fn all_for(settings: &crate::settings::Settings) -> Vec<SecretId> {
        let mut ids = SecretId::known();
        ids.extend(
            settings
                .models
                .iter()
                .filter(|m| m.provider == ProviderKind::OpenaiCompatible)
                .map(|m| SecretId::Custom { id: m.id.clone() }),
        );
        ids
    }

    /// Every fixed (non-custom) secret.
    pub fn known() -> Vec<SecretId> {
        let vendors = [
            Vendor::Anthropic,
            Vendor::Openai,
            Vendor::Gemini,
            Vendor::Deepseek,
            Vendor::Qwen,
            Vendor::Kimi,
        ];
        let mut all: Vec<SecretId> = vendors
            .into_iter()
            .map(|vendor| SecretId::Provider { vendor })
            .collect();
        all.extend(
            [DataSecret::Tushare, DataSecret::Tickflow]
                .map(|source| SecretId::DataSource { source }),
        );
        all
    }
}

fn vendor_name(v: Vendor) -> &'static str {
    match v {
        Vendor::Anthropic => "anthropic",
        Vendor::Openai => "openai",
        Vendor::Gemini => "gemini",
        Vendor::Deepseek => "deepseek",
        Vendor::Qwen => "qwen",
        Vendor::Kimi => "kimi",
    }
}

fn data_name(d: DataSecret) -> &'static str {
    match d {
        DataSecret::Tushare => "tushare",
        DataSecret::Tickflow => "tickflow",
    }
}

/// A user-given name (an MCP secret, a push channel, a bot) as the tail of its
/// environment variable: ASCII letters and digits upper-cased, anything else `_`.
fn env_suffix(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// A secret referenced by name from the MCP server list (`mcp_servers.json` names it, never
/// holds it): keychain account `mcp:NAME`, overridden by `WYCKOFF_MCP_SECRET_<NAME>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NamedSecret(pub String);

impl NamedSecret {
    pub fn account(&self) -> String {
        format!("mcp:{}", self.0)
    }

    pub fn env_var(&self) -> String {
        format!("WYCKOFF_MCP_SECRET_{}", env_suffix(&self.0))
    }
}

/// A push channel's secret: its token (robot key, access token, hook token, bot
/// token) or, with `sign`, its signing secret. Keychain account `push:NAME` /
/// `push-sign:NAME`, overridden by `WYCKOFF_PUSH_TOKEN_<NAME>` / `WYCKOFF_PUSH_SIGN_<NAME>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PushSecret {
    pub channel: String,
    pub sign: bool,
}

impl PushSecret {
    pub fn account(&self) -> String {
        let kind = if self.sign { "push-sign" } else { "push" };
        format!("{kind}:{}", self.channel)
    }

    pub fn env_var(&self) -> String {
        let kind = if self.sign { "SIGN" } else { "TOKEN" };
        format!("WYCKOFF_PUSH_{kind}_{}", env_suffix(&self.channel))
    }
}

/// A chat bot's token (Telegram's bot token, a platform's app secret). Keychain account
/// `bot:NAME`, overridden by `WYCKOFF_BOT_TOKEN_<NAME>` for headless use.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BotSecret(pub String);

impl BotSecret {
    pub fn account(&self) -> String {
        format!("bot:{}", self.0)
    }

    pub fn env_var(&self) -> String {
        format!("WYCKOFF_BOT_TOKEN_{}", env_suffix(&self.0))
    }
}

/// A secret value. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(String);

impl SecretValue {
    pub fn new(value: impl Into<String>) -> Self {
        SecretValue(value.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretValue(***)")
    }
}

/// Where a key currently comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    Environment,
    Keychain,
    /// Held in memory for this session only (no keychain available).
    Session,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct KeyStatus {
    pub id: SecretId,
    pub set: bool,
    pub source: Option<KeySource>,
    /// The environment variable that would override the keychain.
    pub env_var: String,
}

/// Whether a keychain can be used, and if not, how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum KeychainState {
    Available,
    Unavailable { reason: String, fix: String },
}

#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SecretError {
    #[error("no keychain is available ({reason}). {fix}")]
    KeychainUnavailable { reason: String, fix: String },
    #[error("the keychain refused the operation: {reason}")]
    Keychain { reason: String },
    #[error("the key is empty")]
    Empty,
}

/// Errors from a keychain backend.
#[derive(Debug, Clone, PartialEq)]
pub enum BackendError {
    /// No Secret Service / keychain could be reached (or it hung).
    Unavailable(String),
    Other(String),
}

/// Storage behind [`Secrets`]: the OS keychain in the app, an in-memory map in tests.
pub trait SecretBackend: Send + Sync {
    fn get(&self, account: &str) -> Result<Option<String>, BackendError>;
    fn set(&self, account: &str, value: &str) -> Result<(), BackendError>;
    fn delete(&self, account: &str) -> Result<(), BackendError>;
}

/// The OS keychain through the keyring crate (Secret Service on Linux, Keychain on
/// macOS, Credential Manager on Windows).
#[derive(Default)]
pub struct KeyringBackend {
    /// Entries are reused: some backends (and keyring's mock) keep state per Entry.
    entries: Mutex<HashMap<String, Arc<keyring::Entry>>>,
}

impl KeyringBackend {
    fn entry(&self, account: &str) -> Result<Arc<keyring::Entry>, BackendError> {
        let mut map = self
            .entries
            .lock()
            .map_err(|_| BackendError::Other("keychain lock poisoned".into()))?;
        if let Some(e) = map.get(account) {
            return Ok(e.clone());
        }
        let entry =
            Arc::new(keyring::Entry::new(KEYRING_SERVICE, account).map_err(map_keyring_error)?);
        map.insert(account.to_owned(), entry.clone());
        Ok(entry)
    }

    /// Runs a keychain call on its own thread with a deadline, so a blocked D-Bus
    /// prompt cannot freeze the caller.
    fn with_deadline<T: Send + 'static>(
        &self,
        account: &str,
        op: impl FnOnce(&keyring::Entry) -> Result<T, keyring::Error> + Send + 'static,
    ) -> Result<T, BackendError> {
        let entry = self.entry(account)?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("keychain".into())
            .spawn(move || {
                let _ = tx.send(op(&entry));
            })
            .map_err(|e| BackendError::Other(e.to_string()))?;
        match rx.recv_timeout(KEYCHAIN_CALL_TIMEOUT) {
            Ok(result) => result.map_err(map_keyring_error),
            Err(_) => Err(BackendError::Unavailable(
                "the keychain did not answer within 5 s (locked or waiting for a prompt)".into(),
            )),
        }
    }
}

fn map_keyring_error(e: keyring::Error) -> BackendError {
    match e {
        keyring::Error::PlatformFailure(inner) => BackendError::Unavailable(inner.to_string()),
        keyring::Error::NoStorageAccess(inner) => BackendError::Unavailable(inner.to_string()),
        other => BackendError::Other(other.to_string()),
    }
}

impl SecretBackend for KeyringBackend {
    fn get(&self, account: &str) -> Result<Option<String>, BackendError> {
        self.with_deadline(account, |e| match e.get_password() {
            Ok(v) => Ok(Some(v)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(other) => Err(other),
        })
    }
    fn set(&self, account: &str, value: &str) -> Result<(), BackendError> {
        let value = value.to_owned();
        self.with_deadline(account, move |e| e.set_password(&value))
    }
    fn delete(&self, account: &str) -> Result<(), BackendError> {
        self.with_deadline(account, |e| match e.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(other) => Err(other),
        })
    }
}

/// An in-memory backend, for tests and for explicitly keychain-less setups.
#[derive(Default)]
pub struct MemoryBackend {
    map: Mutex<HashMap<String, String>>,
    unavailable: bool,
}

impl MemoryBackend {
    /// A backend that behaves like a machine without any keychain.
    pub fn unavailable() -> Self {
        MemoryBackend {
            map: Mutex::default(),
            unavailable: true,
        }
    }
    fn guard(&self) -> Result<std::sync::MutexGuard<'_, HashMap<String, String>>, BackendError> {
        if self.unavailable {
            return Err(BackendError::Unavailable(
                "no Secret Service on the session bus".into(),
            ));
        }
        self.map
            .lock()
            .map_err(|_| BackendError::Other("lock poisoned".into()))
    }
}

impl SecretBackend for MemoryBackend {
    fn get(&self, account: &str) -> Result<Option<String>, BackendError> {
        Ok(self.guard()?.get(account).cloned())
    }
    fn set(&self, account: &str, value: &str) -> Result<(), BackendError> {
        self.guard()?.insert(account.to_owned(), value.to_owned());
        Ok(())
    }
    fn delete(&self, account: &str) -> Result<(), BackendError> {
        self.guard()?.remove(account);
        Ok(())
    }
}

type EnvLookup = Box<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The one place that resolves secrets: environment first (headless use), then a key
/// held for this session, then the keychain.
pub struct Secrets {
    backend: Box<dyn SecretBackend>,
    session: Mutex<HashMap<String, String>>,
    env: EnvLookup,
}

fn fix_hint() -> String {
    if cfg!(target_os = "linux") {
        "Install and unlock a Secret Service keyring (for example gnome-keyring: `sudo apt install gnome-keyring`, \
         then log in to a desktop session or run `gnome-keyring-daemon --unlock --components=secrets` inside a D-Bus \
         session). Until then the key can be used for this session only, or set it in an environment variable."
            .to_owned()
    } else {
        "Unlock the system keychain and try again. Until then the key can be used for this session only, or set it \
         in an environment variable."
            .to_owned()
    }
}

impl Secrets {
    /// The OS keychain with real environment overrides.
    pub fn system() -> Self {
        Self::with_backend(
            Box::new(KeyringBackend::default()),
            Box::new(|k| std::env::var(k).ok()),
        )
    }

    pub fn with_backend(backend: Box<dyn SecretBackend>, env: EnvLookup) -> Self {
        Secrets {
            backend,
            session: Mutex::default(),
            env,
        }
    }

    /// The value to use for `id`, with where it came from. Keychain failures are
    /// logged (without the value) and treated as "not set".
    pub fn get(&self, id: &SecretId) -> Option<(SecretValue, KeySource)> {
        self.lookup(&id.account(), &id.env_vars())
    }

    /// A named secret (an MCP server's environment variable or header), resolved like
    /// [`Secrets::get`]: its environment variable, then the session, then the keychain.
    pub fn get_named(&self, secret: &NamedSecret) -> Option<(SecretValue, KeySource)> {
        self.lookup(&secret.account(), &[secret.env_var()])
    }

    /// Stores a named secret in the keychain (see [`Secrets::set`]).
    pub fn set_named(&self, secret: &NamedSecret, value: &str) -> Result<KeySource, SecretError> {
        self.store(&secret.account(), value)
    }

    /// Removes a named secret from the keychain.
    pub fn delete_named(&self, secret: &NamedSecret) -> Result<(), SecretError> {
        self.remove(&secret.account())
    }

    /// A push channel's secret, resolved like [`Secrets::get`].
    pub fn get_push(&self, secret: &PushSecret) -> Option<(SecretValue, KeySource)> {
        self.lookup(&secret.account(), &[secret.env_var()])
    }

    /// Stores a push channel's secret in the keychain (see [`Secrets::set`]).
    pub fn set_push(&self, secret: &PushSecret, value: &str) -> Result<KeySource, SecretError> {
        self.store(&secret.account(), value)
    }

    /// Removes a push channel's secret from the keychain.
    pub fn delete_push(&self, secret: &PushSecret) -> Result<(), SecretError> {
        self.remove(&secret.account())
    }

    /// A chat bot's token, resolved like [`Secrets::get`].
    pub fn get_bot(&self, secret: &BotSecret) -> Option<(SecretValue, KeySource)> {
        self.lookup(&secret.account(), &[secret.env_var()])
    }

    /// Stores a chat bot's token in the keychain (see [`Secrets::set`]).
    pub fn set_bot(&self, secret: &BotSecret, value: &str) -> Result<KeySource, SecretError> {
        self.store(&secret.account(), value)
    }

    /// Removes a chat bot's token from the keychain.
    pub fn delete_bot(&self, secret: &BotSecret) -> Result<(), SecretError> {
        self.remove(&secret.account())
    }

    fn lookup(&self, account: &str, env_vars: &[String]) -> Option<(SecretValue, KeySource)> {
        if let Some(v) = env_vars
            .iter()
            .find_map(|var| (self.env)(var).filter(|v| !v.trim().is_empty()))
        {
            return Some((SecretValue(v), KeySource::Environment));
        }
        if let Some(v) = self
            .session
            .lock()
            .ok()
            .and_then(|m| m.get(account).cloned())
        {
            return Some((SecretValue(v), KeySource::Session));
        }
        match self.backend.get(account) {
            Ok(Some(v)) => Some((SecretValue(v), KeySource::Keychain)),
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(account = %account, error = ?e, "keychain read failed");
                None
            }
        }
    }

    pub fn status(&self, id: &SecretId) -> KeyStatus {
        let source = self.get(id).map(|(_, s)| s);
        KeyStatus {
            id: id.clone(),
            set: source.is_some(),
            source,
            env_var: id.env_vars().into_iter().next().unwrap_or_default(),
        }
    }

    /// Stores the key in the keychain. When no keychain is reachable this fails with
    /// [`SecretError::KeychainUnavailable`]; the caller may then offer
    /// [`Secrets::set_for_session`]. Nothing is ever written to disk in plaintext.
    pub fn set(&self, id: &SecretId, value: &str) -> Result<KeySource, SecretError> {
        self.store(&id.account(), value)
    }

    fn store(&self, account: &str, value: &str) -> Result<KeySource, SecretError> {
        let value = value.trim();
        if value.is_empty() {
            return Err(SecretError::Empty);
        }
        match self.backend.set(account, value) {
            Ok(()) => {
                if let Ok(mut m) = self.session.lock() {
                    m.remove(account);
                }
                tracing::info!(account = %account, "key stored in the keychain");
                Ok(KeySource::Keychain)
            }
            Err(BackendError::Unavailable(reason)) => Err(SecretError::KeychainUnavailable {
                reason,
                fix: fix_hint(),
            }),
            Err(BackendError::Other(reason)) => Err(SecretError::Keychain { reason }),
        }
    }

    /// Keeps the key in memory until the process exits.
    pub fn set_for_session(&self, id: &SecretId, value: &str) -> Result<KeySource, SecretError> {
        let value = value.trim();
        if value.is_empty() {
            return Err(SecretError::Empty);
        }
        if let Ok(mut m) = self.session.lock() {
            m.insert(id.account(), value.to_owned());
        }
        tracing::info!(account = %id.account(), "key held for this session only");
        Ok(KeySource::Session)
    }

    /// Removes the key from the session store and the keychain.
    pub fn delete(&self, id: &SecretId) -> Result<(), SecretError> {
        self.remove(&id.account())
    }

    fn remove(&self, account: &str) -> Result<(), SecretError> {
        let in_session = self
            .session
            .lock()
            .ok()
            .and_then(|mut m| m.remove(account))
            .is_some();
        match self.backend.delete(account) {
            Ok(()) => Ok(()),
            Err(BackendError::Unavailable(_)) if in_session => Ok(()),
            Err(BackendError::Unavailable(reason)) => Err(SecretError::KeychainUnavailable {
                reason,
                fix: fix_hint(),
            }),
            Err(BackendError::Other(reason)) => Err(SecretError::Keychain { reason }),
        }
    }

    /// Checks whether the keychain answers at all.
    pub fn keychain_state(&self) -> KeychainState {
        match self.backend.get("probe") {
            Ok(_) => KeychainState::Available,
            Err(BackendError::Unavailable(reason)) | Err(BackendError::Other(reason)) => {
                KeychainState::Unavailable {
                    reason,
                    fix: fix_hint(),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANTHROPIC: SecretId = SecretId::Provider {
        vendor: Vendor::Anthropic,
    };

    fn no_env() -> EnvLookup {
        Box::new(|_| None)
    }

    #[test]
    fn keychain_round_trip_and_status() {
        let s = Secrets::with_backend(Box::new(MemoryBackend::default()), no_env());
        assert!(!s.status(&ANTHROPIC).set);
        assert_eq!(
            s.set(&ANTHROPIC, " sk-ant-123 ").unwrap(),
            KeySource::Keychain
        );
        let (v, src) = s.get(&ANTHROPIC).unwrap();
        assert_eq!(v.expose(), "sk-ant-123");
        assert_eq!(src, KeySource::Keychain);
        assert_eq!(s.status(&ANTHROPIC).source, Some(KeySource::Keychain));
        s.delete(&ANTHROPIC).unwrap();
        assert!(s.get(&ANTHROPIC).is_none());
        assert_eq!(s.set(&ANTHROPIC, "  "), Err(SecretError::Empty));
    }

    #[test]
    fn named_secrets_live_under_their_own_account_and_env_var() {
        let token = NamedSecret("tushare-mcp".into());
        assert_eq!(token.account(), "mcp:tushare-mcp");
        assert_eq!(token.env_var(), "WYCKOFF_MCP_SECRET_TUSHARE_MCP");
        let s = Secrets::with_backend(Box::new(MemoryBackend::default()), no_env());
        assert!(s.get_named(&token).is_none());
        assert_eq!(s.set_named(&token, " t0k ").unwrap(), KeySource::Keychain);
        let (v, src) = s.get_named(&token).unwrap();
        assert_eq!((v.expose(), src), ("t0k", KeySource::Keychain));
        // no other secret sees it
        assert!(s.get(&ANTHROPIC).is_none());
        s.delete_named(&token).unwrap();
        assert!(s.get_named(&token).is_none());

        let env: EnvLookup =
            Box::new(|k| (k == "WYCKOFF_MCP_SECRET_TUSHARE_MCP").then(|| "from-env".to_owned()));
        let s = Secrets::with_backend(Box::new(MemoryBackend::default()), env);
        s.set_named(&token, "from-keychain").unwrap();
        let (v, src) = s.get_named(&token).unwrap();
        assert_eq!((v.expose(), src), ("from-env", KeySource::Environment));
    }

    #[test]
    fn push_secrets_live_under_their_own_accounts_and_env_vars() {
        let token = PushSecret {
            channel: "team-wecom".into(),
            sign: false,
        };
        let sign = PushSecret {
            channel: "team-wecom".into(),
            sign: true,
        };
        assert_eq!(token.account(), "push:team-wecom");
        assert_eq!(sign.account(), "push-sign:team-wecom");
        assert_eq!(token.env_var(), "WYCKOFF_PUSH_TOKEN_TEAM_WECOM");
        assert_eq!(sign.env_var(), "WYCKOFF_PUSH_SIGN_TEAM_WECOM");
        // A bot's variable is named the same way (one rule for every user-given name).
        let bot = BotSecret("desk-dt.1".into());
        assert_eq!(bot.account(), "bot:desk-dt.1");
        assert_eq!(bot.env_var(), "WYCKOFF_BOT_TOKEN_DESK_DT_1");
        let s = Secrets::with_backend(Box::new(MemoryBackend::default()), no_env());
        s.set_push(&token, " k-1 ").unwrap();
        assert_eq!(s.get_push(&token).unwrap().0.expose(), "k-1");
        assert!(s.get_push(&sign).is_none());
        assert!(s.get_named(&NamedSecret("team-wecom".into())).is_none());
        s.delete_push(&token).unwrap();
        assert!(s.get_push(&token).is_none());
        let env: EnvLookup =
            Box::new(|k| (k == "WYCKOFF_PUSH_SIGN_TEAM_WECOM").then(|| "from-env".to_owned()));
        let s = Secrets::with_backend(Box::new(MemoryBackend::default()), env);
        let (v, src) = s.get_push(&sign).unwrap();
        assert_eq!((v.expose(), src), ("from-env", KeySource::Environment));
    }

    #[test]
    fn environment_overrides_the_keychain() {
        let env: EnvLookup =
            Box::new(|k| (k == "ANTHROPIC_API_KEY").then(|| "from-env".to_owned()));
        let s = Secrets::with_backend(Box::new(MemoryBackend::default()), env);
        s.set(&ANTHROPIC, "from-keychain").unwrap();
        let (v, src) = s.get(&ANTHROPIC).unwrap();
        assert_eq!((v.expose(), src), ("from-env", KeySource::Environment));
    }

    #[test]
    fn without_a_keychain_the_key_can_live_for_the_session() {
        let s = Secrets::with_backend(Box::new(MemoryBackend::unavailable()), no_env());
        assert!(matches!(
            s.keychain_state(),
            KeychainState::Unavailable { .. }
        ));
        let err = s.set(&ANTHROPIC, "sk-x").unwrap_err();
        assert!(matches!(err, SecretError::KeychainUnavailable { .. }));
        assert!(err.to_string().contains("session"), "{err}");
        s.set_for_session(&ANTHROPIC, "sk-x").unwrap();
        assert_eq!(s.get(&ANTHROPIC).unwrap().1, KeySource::Session);
        s.delete(&ANTHROPIC).unwrap();
        assert!(s.get(&ANTHROPIC).is_none());
    }

    #[test]
    fn debug_never_shows_the_value() {
        let v = SecretValue::new("sk-very-secret");
        assert_eq!(format!("{v:?}"), "SecretValue(***)");
    }

    #[test]
    fn accounts_and_env_vars() {
        assert_eq!(ANTHROPIC.account(), "provider:anthropic");
        let custom = SecretId::Custom {
            id: "my-llm".into(),
        };
        assert_eq!(custom.account(), "custom:my-llm");
        assert_eq!(custom.env_vars(), vec!["WYCKOFF_KEY_MY_LLM".to_owned()]);
        let tushare = SecretId::DataSource {
            source: DataSecret::Tushare,
        };
        assert_eq!(tushare.env_vars(), vec!["TUSHARE_TOKEN".to_owned()]);
        assert_eq!(SecretId::for_provider(ProviderKind::Ollama, "x"), None);
        assert_eq!(
            SecretId::for_provider(ProviderKind::OpenaiCompatible, "x"),
            Some(SecretId::Custom { id: "x".into() })
        );
        assert_eq!(SecretId::known().len(), 8);
    }

    #[test]
    fn keyring_mock_backend_round_trip() {
        // keyring's mock keeps state per Entry; the backend reuses entries, so this works.
        keyring::set_default_credential_builder(keyring::mock::default_credential_builder());
        let backend = KeyringBackend::default();
        backend.set("provider:openai", "sk-mock").unwrap();
        assert_eq!(
            backend.get("provider:openai").unwrap().as_deref(),
            Some("sk-mock")
        );
        backend.delete("provider:openai").unwrap();
        assert_eq!(backend.get("provider:openai").unwrap(), None);
    }

    /// Runs against the real Secret Service (CI starts gnome-keyring inside
    /// dbus-run-session): `cargo test -p wyckoff-config -- --ignored secret_service`.
    #[test]
    #[ignore = "needs a real Secret Service"]
    fn secret_service_round_trip() {
        let s = Secrets::with_backend(Box::new(KeyringBackend::default()), no_env());
        assert_eq!(s.keychain_state(), KeychainState::Available);
        let id = SecretId::Custom {
            id: format!("ci-{}", std::process::id()),
        };
        s.set(&id, "sk-ci-canary-123456").unwrap();
        let fresh = Secrets::with_backend(Box::new(KeyringBackend::default()), no_env());
        assert_eq!(fresh.get(&id).unwrap().0.expose(), "sk-ci-canary-123456");
        fresh.delete(&id).unwrap();
        assert!(
            Secrets::with_backend(Box::new(KeyringBackend::default()), no_env())
                .get(&id)
                .is_none()
        );
    }
}
