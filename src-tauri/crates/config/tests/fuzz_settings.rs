//! Hostile settings files. Any bytes in `settings.json` load to valid
//! settings or give a clear error (never a panic, never invalid settings); valid settings
//! round-trip through save + load; secrets in an old-format file never survive a save.
//! Cases per property: 512; `PROPTEST_CASES=N` for more.

#![allow(clippy::unwrap_used, reason = "test helpers outside #[test] fns")]

use proptest::prelude::*;
use serde_json::{Value, json};
use wyckoff_config::settings::{self, Settings, SettingsError};

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1.0e12f64..1.0e12).prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z_]{0,10}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Field names the loader knows, current and legacy, so mutations hit real code paths.
fn field_name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("version"),
        Just("language"),
        Just("theme"),
        Just("models"),
        Just("main_model"),
        Just("light_model"),
        Just("fallback_models"),
        Just("stream_idle_timeout_secs"),
        Just("tool_timeout_secs"),
        Just("approval_timeout_secs"),
        Just("proxy"),
        Just("data_sources"),
        Just("retention_days"),
        Just("risk"),
        Just("default"),
        Just("fallback"),
        Just("light"),
        Just("stream_chunk_timeout_seconds"),
        Just("tool_timeout_seconds"),
        Just("api_key"),
    ]
    .prop_map(str::to_owned)
}

fn write_and_load(text: &[u8]) -> Result<(Settings, Vec<String>), SettingsError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(&path, text).unwrap();
    settings::load(&path)
}

fn assert_sane(
    result: &Result<(Settings, Vec<String>), SettingsError>,
) -> Result<(), TestCaseError> {
    match result {
        Ok((s, _notes)) => prop_assert!(s.validate().is_ok(), "loaded invalid settings: {s:?}"),
        Err(e) => prop_assert!(e.to_string().len() > 10, "unclear error: {e}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// Arbitrary bytes as the settings file.
    #[test]
    fn any_bytes_load_or_fail_clearly(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let result = write_and_load(&bytes);
        assert_sane(&result)?;
    }

    /// A valid file with any of its fields (current or legacy) replaced by any JSON.
    #[test]
    fn mutated_files_load_valid_or_fail_clearly(
        version in prop_oneof![Just(None), Just(Some(0u64)), Just(Some(1)), any::<u64>().prop_map(Some)],
        edits in proptest::collection::vec((field_name(), json_value()), 1..5),
    ) {
        let mut doc = serde_json::to_value(Settings::default()).unwrap();
        let map = doc.as_object_mut().unwrap();
        match version {
            Some(v) => { map.insert("version".into(), json!(v)); }
            None => { map.remove("version"); }
        }
        for (field, value) in edits {
            map.insert(field, value);
        }
        let result = write_and_load(doc.to_string().as_bytes());
        assert_sane(&result)?;
    }

    /// Valid settings come back exactly after save + load.
    #[test]
    fn valid_settings_round_trip(
        idle in 10i32..=600,
        tool in 5i32..=300,
        approval in 10i32..=600,
        retention in 1i32..=3650,
        close_to_tray in any::<bool>(),
        notifications in any::<bool>(),
        private_fetch in any::<bool>(),
    ) {
        let original = Settings {
            stream_idle_timeout_secs: idle,
            tool_timeout_secs: tool,
            approval_timeout_secs: approval,
            retention_days: retention,
            close_to_tray,
            notifications,
            allow_private_web_fetch: private_fetch,
            file_roots: Vec::new(),
            ..Settings::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        settings::save(&path, &original).unwrap();
        let (loaded, notes) = settings::load(&path).unwrap();
        prop_assert_eq!(loaded, original);
        prop_assert!(notes.is_empty(), "{notes:?}");
    }

    /// An old-format file holding secrets: after load + save, no secret is in the file.
    #[test]
    fn legacy_secrets_never_survive_a_save(
        secret in "[A-Za-z0-9]{24,40}",
        which in prop_oneof![Just("api_key"), Just("tushare_token"), Just("tickflow_api_key"), Just("password")],
        in_model in any::<bool>(),
    ) {
        let mut doc = json!({"theme": "dark", "tool_timeout_seconds": 30});
        if in_model {
            doc["models"] = json!([{"id": "ds", "provider_name": "deepseek", "model": "deepseek-chat", "api_key": secret}]);
            doc["default"] = json!("ds");
        } else {
            doc[which] = json!(secret);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, doc.to_string()).unwrap();
        let (loaded, notes) = settings::load(&path).unwrap();
        prop_assert!(notes.iter().any(|n| n.contains("keychain")), "{notes:?}");
        settings::save(&path, &loaded).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        prop_assert!(!written.contains(&secret), "secret kept in {written}");
    }
}
