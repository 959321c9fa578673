//! Helpers shared by the tools: argument access, dates, freshness fields, rounding and
//! error mapping.

use serde_json::{Map, Value, json};
use wyckoff_agent::ToolError;
use wyckoff_market::{BarsResult, DataStatus, MarketError};
use wyckoff_time::iso;

/// An optional string argument, trimmed; empty counts as absent.
pub fn opt_str<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

pub fn opt_f64(args: &Value, key: &str) -> Option<f64> {
    args.get(key).and_then(Value::as_f64)
}

pub fn opt_i64(args: &Value, key: &str) -> Option<i64> {
    args.get(key).and_then(Value::as_i64)
}

/// A strict date argument (`YYYYMMDD` or `YYYY-MM-DD`, a real calendar day).
pub fn opt_date(args: &Value, key: &str, message: &str) -> Result<Option<u32>, ToolError> {
    match opt_str(args, key) {
        None => Ok(None),
        Some(s) => wyckoff_market::date::parse_date(s)
            .map(Some)
            .ok_or_else(|| ToolError::InvalidArgs(message.to_string())),
    }
}

pub fn status_str(s: DataStatus) -> &'static str {
    match s {
        DataStatus::Ok => "ok",
        DataStatus::Stale => "stale",
        DataStatus::Partial => "partial",
        DataStatus::Unavailable => "unavailable",
    }
}

/// The worst of several statuses (unavailable > partial > stale > ok).
pub fn worst(statuses: impl IntoIterator<Item = DataStatus>) -> Option<DataStatus> {
    let rank = |s: &DataStatus| match s {
        DataStatus::Ok => 0,
        DataStatus::Stale => 1,
        DataStatus::Partial => 2,
        DataStatus::Unavailable => 3,
    };
    statuses.into_iter().max_by_key(rank)
}

/// The freshness every bar-based result carries, typed: the fields [`freshness`] writes.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BarsFreshness {
    /// ok / stale / partial / unavailable.
    pub data_status: String,
    pub source: Option<String>,
    /// The last bar's date (YYYY-MM-DD).
    pub as_of: Option<String>,
    /// The last closed trading day the bars should reach.
    pub expected_last_date: Option<String>,
    pub notes: Vec<String>,
}

impl BarsFreshness {
    pub fn of(r: &BarsResult) -> Self {
        BarsFreshness {
            data_status: status_str(r.data_status).to_owned(),
            source: r.source.clone(),
            as_of: r.as_of.map(iso),
            expected_last_date: r.expected_last_date.map(iso),
            notes: wyckoff_market::notes::texts(&r.notes),
        }
    }
}

/// The freshness fields every bar-based result carries.
pub fn freshness(r: &BarsResult) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("data_status".into(), json!(status_str(r.data_status)));
    m.insert("source".into(), json!(r.source));
    m.insert("as_of".into(), json!(r.as_of.map(iso)));
    m.insert(
        "expected_last_date".into(),
        json!(r.expected_last_date.map(iso)),
    );
    m.insert(
        "notes".into(),
        json!(wyckoff_market::notes::texts(&r.notes)),
    );
    m
}

/// Bad codes and index names are the caller's to fix; anything else is a failure.
pub fn market_err(e: MarketError) -> ToolError {
    match e {
        MarketError::Code(c) => ToolError::InvalidArgs(c.to_string()),
        other => ToolError::Failed(other.to_string()),
    }
}

/// Rounds to `dp` decimals; non-finite values become `null` upstream, never NaN.
pub fn round(x: f64, dp: i32) -> f64 {
    let f = 10f64.powi(dp);
    (x * f).round() / f
}

/// Rounds every non-integer number in a JSON tree to 4 decimals: the engine's full-precision
/// floats only cost the model tokens.
pub fn round_tree(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            if let Some(x) = n.as_f64()
                && let Some(r) = serde_json::Number::from_f64(round(x, 4))
            {
                *n = r;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(round_tree),
        Value::Object(o) => o.values_mut().for_each(round_tree),
        _ => {}
    }
}

/// Percent change; `None` when the base is not positive.
pub fn pct(from: f64, to: f64) -> Option<f64> {
    (from > 0.0).then(|| (to / from - 1.0) * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_keeps_integers_and_trims_floats() {
        let mut v = json!({"a": 1.234567, "b": [2, 3.000049], "c": {"d": -0.123456}, "e": "x"});
        round_tree(&mut v);
        assert_eq!(
            v,
            json!({"a": 1.2346, "b": [2, 3.0], "c": {"d": -0.1235}, "e": "x"})
        );
    }

    #[test]
    fn worst_status_wins() {
        use DataStatus::*;
        assert_eq!(worst([Ok, Stale, Ok]), Some(Stale));
        assert_eq!(worst([Partial, Stale]), Some(Partial));
        assert_eq!(worst([Ok, Unavailable, Partial]), Some(Unavailable));
        assert_eq!(worst([]), None);
    }

    #[test]
    fn dates_are_strict() {
        let a = json!({"d": "2020-06-16", "bad": "2020-02-30", "empty": " "});
        assert_eq!(opt_date(&a, "d", "m").ok().flatten(), Some(20200616));
        assert_eq!(opt_date(&a, "empty", "m").ok().flatten(), None);
        assert!(matches!(opt_date(&a, "bad", "m"), Err(ToolError::InvalidArgs(m)) if m == "m"));
    }
}
