//! Tool-call argument text → JSON, never silently `{}` on garbage.

use serde_json::{Map, Value};

/// Deserializes `null` like a missing field (some servers send `"choices": null`).
pub(crate) fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + serde::Deserialize<'de>,
{
    use serde::Deserialize;
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

const RAW_MAX_CHARS: usize = 2000;

/// Parses the model's argument text. Empty text is an empty object (tools without
/// parameters); anything unreadable gives `(Null, Some(error with the raw text))` so the
/// runtime can hand the model a precise, correctable error.
pub fn parse_args(raw: &str) -> (Value, Option<String>) {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return (Value::Object(Map::new()), None);
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(v @ Value::Object(_)) => (v, None),
        Ok(Value::Null) => (Value::Object(Map::new()), None),
        // Some models double-encode: the arguments are a JSON string holding the object.
        Ok(Value::String(inner)) => match serde_json::from_str::<Value>(&inner) {
            Ok(v @ Value::Object(_)) => (v, None),
            _ => (Value::Null, Some(not_object(trimmed))),
        },
        Ok(_) => (Value::Null, Some(not_object(trimmed))),
        Err(e) => (
            Value::Null,
            Some(format!(
                "tool arguments are not valid JSON ({e}); raw text: {}",
                clip(trimmed)
            )),
        ),
    }
}

fn not_object(raw: &str) -> String {
    format!(
        "tool arguments must be a JSON object; raw text: {}",
        clip(raw)
    )
}

fn clip(raw: &str) -> String {
    if raw.chars().count() <= RAW_MAX_CHARS {
        raw.to_string()
    } else {
        let mut s: String = raw.chars().take(RAW_MAX_CHARS).collect();
        s.push('…');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn table() {
        assert_eq!(parse_args(""), (json!({}), None));
        assert_eq!(parse_args(" {\"a\":1} "), (json!({"a":1}), None));
        assert_eq!(parse_args("\"{\\\"a\\\":1}\""), (json!({"a":1}), None));
        let (v, e) = parse_args("{\"a\":");
        assert_eq!(v, Value::Null);
        let e = e.unwrap();
        assert!(e.contains("not valid JSON") && e.contains("{\"a\":"), "{e}");
        let (v, e) = parse_args("[1,2]");
        assert_eq!(v, Value::Null);
        assert!(e.unwrap().contains("must be a JSON object"));
    }
}
