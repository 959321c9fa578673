//! Masking of anything shaped like a secret, for logs, scratchpads and exports.

use std::sync::LazyLock;

use regex::Regex;

const MASK: &str = "***";

static PATTERNS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    let specs: [(&str, &str); 4] = [
        // OpenAI/DeepSeek/Anthropic style keys: sk-..., sk-ant-..., sk-proj-...
        (r"\bsk-[A-Za-z0-9_\-]{6,}", "sk-***"),
        // Google API keys.
        (r"\bAIza[0-9A-Za-z_\-]{12,}", "AIza***"),
        (r"(?i)\bBearer\s+[A-Za-z0-9._~+/=\-]{6,}", "Bearer ***"),
        // key=value / "key": "value" shapes for the usual secret names.
        (
            r#"(?i)\b((?:x-)?api[_-]?key|access[_-]?token|refresh[_-]?token|token|password|passwd|secret|authorization|x-goog-api-key)(["']?\s*[:=]\s*["']?)((?:Bearer\s+)?[^\s"'&,;]{3,})"#,
            "$1$2***",
        ),
    ];
    specs
        .into_iter()
        .filter_map(|(p, r)| match Regex::new(p) {
            Ok(re) => Some((re, r)),
            Err(e) => {
                // The patterns are constants; a failure is a programming error caught by tests.
                tracing::error!("invalid redaction pattern {p}: {e}");
                None
            }
        })
        .collect()
});

static SECRET_KEY_NAME: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)(api[_-]?key|token|password|passwd|secret|authorization|cookie|credential)")
        .ok()
});

/// Returns `text` with every secret-shaped substring masked.
pub fn redact_secrets(text: &str) -> String {
    let mut out = text.to_owned();
    for (re, replacement) in PATTERNS.iter() {
        if re.is_match(&out) {
            out = re.replace_all(&out, *replacement).into_owned();
        }
    }
    out
}

/// Whether a field or header named `name` holds a secret (its value should be masked
/// whatever it looks like).
pub fn is_secret_key(name: &str) -> bool {
    SECRET_KEY_NAME.as_ref().is_some_and(|re| re.is_match(name))
}

/// Masks secret fields and secret-shaped strings inside a JSON value, recursively.
pub fn redact_json(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if is_secret_key(k) && !v.is_null() {
                    *v = serde_json::Value::String(MASK.to_owned());
                } else {
                    redact_json(v);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(redact_json),
        serde_json::Value::String(s) => {
            let r = redact_secrets(s);
            if r != *s {
                *s = r;
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn masks_key_shapes() {
        let cases = [
            ("key sk-abcdef1234567890 here", "key sk-*** here"),
            ("sk-ant-api03-XYZxyz_123", "sk-***"),
            ("Authorization: Bearer eyJhbGciOi.abc", "Authorization: ***"),
            ("Bearer abcdefghijkl", "Bearer ***"),
            ("url?api_key=s3cr3tvalue&x=1", "url?api_key=***&x=1"),
            (r#"{"token": "abcd1234"}"#, r#"{"token": "***"}"#),
            ("password=hunter22", "password=***"),
            ("AIzaSyA1234567890abcdef", "AIza***"),
            (
                "plain: 600519 平安银行, 1200 tokens used",
                "plain: 600519 平安银行, 1200 tokens used",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(redact_secrets(input), want, "input: {input}");
        }
    }

    #[test]
    fn secret_field_names() {
        for k in [
            "api_key",
            "apiKey",
            "TUSHARE_TOKEN",
            "password",
            "Authorization",
            "cookie",
        ] {
            assert!(is_secret_key(k), "{k}");
        }
        for k in ["code", "name", "content", "model"] {
            assert!(!is_secret_key(k), "{k}");
        }
    }

    #[test]
    fn json_redaction_is_recursive() {
        let mut v = json!({"args": {"api_key": "abc", "note": "use sk-1234567890abcdef"}, "list": ["Bearer 1234567890ab"], "n": 1});
        redact_json(&mut v);
        assert_eq!(
            v,
            json!({"args": {"api_key": "***", "note": "use sk-***"}, "list": ["Bearer ***"], "n": 1})
        );
    }
}
