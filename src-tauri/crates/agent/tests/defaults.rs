//! One source of truth for defaults: the runtime and Settings agree on the tool timeout
//! (one constant, `DEFAULT_TOOL_TIMEOUT_SECS`, so the two cannot drift apart).

use std::time::Duration;

use wyckoff_agent::RuntimeConfig;
use wyckoff_config::settings::{DEFAULT_TOOL_TIMEOUT_SECS, Settings, TOOL_TIMEOUT_RANGE};

#[test]
fn runtime_tool_timeout_default_is_the_settings_default() {
    let settings = Settings::default();
    let runtime = RuntimeConfig::default();
    assert_eq!(settings.tool_timeout_secs, DEFAULT_TOOL_TIMEOUT_SECS);
    let settings_secs = u64::try_from(settings.tool_timeout_secs).unwrap();
    assert_eq!(
        runtime.tool_timeout,
        Some(Duration::from_secs(settings_secs))
    );
}

#[test]
fn default_tool_timeout_is_a_value_settings_accept() {
    let (min, max) = TOOL_TIMEOUT_RANGE;
    assert!((min..=max).contains(&DEFAULT_TOOL_TIMEOUT_SECS));
    // A file that names no timeout is completed with the same default.
    let (loaded, _notes) = Settings::from_value(serde_json::json!({})).unwrap();
    assert_eq!(loaded.tool_timeout_secs, DEFAULT_TOOL_TIMEOUT_SECS);
}
