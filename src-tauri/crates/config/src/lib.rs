//! Data home, typed settings, keychain secrets and logging, shared by the desktop app
//! and the `wyckoff` CLI so both read the same files and the same keychain entries.

mod home;
pub mod lease;
pub mod logging;
pub mod mcp;
pub mod redact;
pub mod secrets;
pub mod settings;
pub mod timings;

pub use home::DataHome;
pub use lease::ProcessLease;
pub use secrets::{
    BotSecret, KeySource, KeyStatus, NamedSecret, PushSecret, SecretError, SecretId, Secrets,
};
pub use settings::{Settings, SettingsError, SharedSettings};
