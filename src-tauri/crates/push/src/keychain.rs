//! Channel secrets from the keychain (or `WYCKOFF_PUSH_TOKEN_<NAME>` /
//! `WYCKOFF_PUSH_SIGN_<NAME>` headless), through the one secrets resolver.

use std::sync::Arc;

use wyckoff_config::{PushSecret, Secrets};

use crate::ChannelSecrets;

pub struct KeychainSecrets(pub Arc<Secrets>);

impl KeychainSecrets {
    /// The OS keychain with the environment overrides.
    pub fn system() -> KeychainSecrets {
        KeychainSecrets(Arc::new(Secrets::system()))
    }

    fn get(&self, channel: &str, sign: bool) -> Option<String> {
        self.0
            .get_push(&PushSecret {
                channel: channel.to_owned(),
                sign,
            })
            .map(|(v, _)| v.expose().to_owned())
    }
}

impl ChannelSecrets for KeychainSecrets {
    fn token(&self, channel: &str) -> Option<String> {
        self.get(channel, false)
    }
    fn sign_secret(&self, channel: &str) -> Option<String> {
        self.get(channel, true)
    }
}
