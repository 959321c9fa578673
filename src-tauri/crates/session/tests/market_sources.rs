//! The settings' data-source list decides where market data comes from, in its order; a
//! list with no usable source means no live source at all, never the defaults.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use wyckoff_config::secrets::{DataSecret, MemoryBackend, SecretId};
use wyckoff_config::settings::{DataSourceKind, Settings};
use wyckoff_config::{DataHome, Secrets};

fn names(sources: &[DataSourceKind], tushare_token: bool) -> Vec<String> {
    // The environment outranks the settings: this test is about the settings alone.
    assert!(
        std::env::var_os("WYCKOFF_OFFLINE").is_none()
            && std::env::var_os("WYCKOFF_DATA_SOURCES").is_none(),
        "run without WYCKOFF_OFFLINE and WYCKOFF_DATA_SOURCES"
    );
    let dir = tempfile::tempdir().unwrap();
    let secrets = Secrets::with_backend(Box::new(MemoryBackend::default()), Box::new(|_| None));
    if tushare_token {
        secrets
            .set_for_session(
                &SecretId::DataSource {
                    source: DataSecret::Tushare,
                },
                "tushare-token-for-test",
            )
            .unwrap();
    }
    let settings = Settings {
        data_sources: sources.to_vec(),
        ..Settings::default()
    };
    let cfg =
        wyckoff_session::market_config(&DataHome::new(dir.path()), &settings, &secrets).unwrap();
    assert_eq!(cfg.fetch_on_read, !cfg.sources.is_empty());
    cfg.sources.iter().map(|s| s.name().to_owned()).collect()
}

#[test]
fn the_settings_list_is_the_source_order_and_an_empty_one_fetches_nothing() {
    use DataSourceKind::{Eastmoney, Tencent, Tushare};
    let cases: [(&[DataSourceKind], bool, &[&str]); 6] = [
        (&[Tencent, Eastmoney], false, &["tencent", "eastmoney"]),
        (&[Eastmoney], false, &["eastmoney"]),
        (&[Tushare, Eastmoney], false, &["eastmoney"]),
        (&[Tushare, Eastmoney], true, &["tushare", "eastmoney"]),
        // Nothing usable listed: no live source, not the defaults.
        (&[], false, &[]),
        (&[Tushare], false, &[]),
    ];
    for (sources, token, want) in cases {
        assert_eq!(names(sources, token), want, "{sources:?} token {token}");
    }
}
