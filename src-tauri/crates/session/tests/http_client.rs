//! The shared HTTP client is built when something first needs the network: a desk opens
//! (and works offline) whatever the proxy setting says, a bad proxy is named where the
//! network is wanted, and changing the settings to a bad proxy is refused.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use wyckoff_config::secrets::MemoryBackend;
use wyckoff_config::settings::Settings;
use wyckoff_config::{DataHome, Secrets};
use wyckoff_session::{ModelOverrides, Services};

const BAD_PROXY: &str = "http://[not a proxy";

fn overrides() -> ModelOverrides {
    ModelOverrides {
        provider: Some("openai-compatible".into()),
        model: Some("some-model".into()),
        base_url: Some("http://127.0.0.1:9/v1".into()),
        ..ModelOverrides::default()
    }
}

#[tokio::test]
async fn a_bad_proxy_fails_what_needs_the_network_not_the_desk() {
    let home = tempfile::tempdir().unwrap();
    let settings = Settings {
        data_sources: Vec::new(),
        proxy: Some(BAD_PROXY.into()),
        ..Settings::default()
    };
    let secrets = Secrets::with_backend(Box::new(MemoryBackend::default()), Box::new(|_| None));
    let services = Services::open(DataHome::new(home.path()), settings, Arc::new(secrets))
        .await
        .expect("the desk opens with a bad proxy setting");
    // the offline market works
    assert!(
        !services
            .market()
            .store()
            .load_stocks()
            .await
            .unwrap()
            .is_empty()
    );
    // the model needs the network: the proxy is named
    let err = services.check_model(&overrides()).unwrap_err().to_string();
    assert!(err.contains("proxy"), "{err}");

    // a good proxy in the settings replaces it, and the model resolves
    let good = Settings {
        proxy: Some("http://127.0.0.1:3128".into()),
        ..services.settings()
    };
    assert!(services.apply_settings(good).await.unwrap());
    assert_eq!(
        services.check_model(&overrides()).unwrap(),
        "openai-compatible/some-model"
    );
    // and a bad one is refused with the settings that name it, the good one kept
    let bad = Settings {
        proxy: Some(BAD_PROXY.into()),
        ..services.settings()
    };
    let err = services.apply_settings(bad).await.unwrap_err().to_string();
    assert!(err.contains("proxy"), "{err}");
    assert_eq!(
        services.settings().proxy.as_deref(),
        Some("http://127.0.0.1:3128")
    );
}
