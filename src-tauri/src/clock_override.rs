//! The app's clock. Normally the system clock; `WYCKOFF_NOW` (a test and diagnostic
//! override, never for trading) starts it at another instant — RFC 3339
//! (`2020-06-17T10:42:00+08:00`) or a Beijing wall time `YYYY-MM-DD HH:MM[:SS]` — from
//! which it runs on in real time, so the app can be put inside (or outside) a trading
//! session over any data. Every part of the desk reads this one clock.

use std::sync::{Arc, OnceLock};

use wyckoff_session::time::{Clock, ShiftedClock, SystemClock, parse_instant, to_beijing};

/// The variable that moves the app's clock.
pub const NOW_VAR: &str = "WYCKOFF_NOW";

/// What `WYCKOFF_NOW` asks for: `Ok(None)` when unset or empty, an error naming the
/// variable and the forms it takes when it is neither.
pub fn parse_override(value: Option<&str>) -> Result<Option<ShiftedClock>, String> {
    match value.map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => parse_instant(text)
            .map(|t| Some(ShiftedClock::starting_at(t)))
            .ok_or_else(|| {
                format!(
                    "{NOW_VAR}={text:?} is not a time: use RFC 3339 (2020-06-17T10:42:00+08:00) or Beijing time \"YYYY-MM-DD HH:MM[:SS]\""
                )
            }),
    }
}

/// The process's clock, read from the environment once (the first call, at start-up,
/// logs a warning when the override is set).
pub fn app_clock() -> Result<Arc<dyn Clock>, String> {
    static CLOCK: OnceLock<Result<Arc<dyn Clock>, String>> = OnceLock::new();
    CLOCK
        .get_or_init(|| {
            let value = std::env::var(NOW_VAR).ok();
            match parse_override(value.as_deref())? {
                None => Ok(Arc::new(SystemClock) as Arc<dyn Clock>),
                Some(clock) => {
                    tracing::warn!(
                        now = %clock.now(),
                        beijing = %to_beijing(clock.now()).format("%Y-%m-%d %H:%M:%S"),
                        "{NOW_VAR} is set: the app's clock starts at this time instead of now (a test and diagnostic override; quotes, alerts and timestamps all follow it)"
                    );
                    Ok(Arc::new(clock) as Arc<dyn Clock>)
                }
            }
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_override_is_off_unset_or_empty_and_clear_when_malformed() {
        assert!(parse_override(None).unwrap().is_none());
        assert!(parse_override(Some("  ")).unwrap().is_none());
        let at = |v: &str| {
            let c = parse_override(Some(v)).unwrap().unwrap();
            to_beijing(c.now()).format("%Y-%m-%d %H:%M").to_string()
        };
        assert_eq!(at("2020-06-17T10:42:00+08:00"), "2020-06-17 10:42");
        assert_eq!(at("2020-06-17 10:42"), "2020-06-17 10:42");
        let err = parse_override(Some("yesterday")).unwrap_err();
        assert!(
            err.contains("WYCKOFF_NOW=\"yesterday\" is not a time"),
            "{err}"
        );
        assert!(err.contains("RFC 3339"), "{err}");
    }
}
