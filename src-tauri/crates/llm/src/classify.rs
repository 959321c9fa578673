//! Turns HTTP statuses, vendor error bodies, in-stream error events and transport
//! failures into one [`LlmError`] with a message that names the provider and the fix.

use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;
use reqwest::header::HeaderMap;
use serde_json::Value;
use wyckoff_protocol::ErrorKind;

use crate::LlmError;

const DETAIL_MAX_CHARS: usize = 300;

/// Masks anything that looks like a credential in vendor-supplied text.
static SECRET_RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)(sk-[A-Za-z0-9_\-*]{6,}|AIza[0-9A-Za-z_\-]{10,}|bearer\s+[A-Za-z0-9._\-]{8,}|x-api-key[:=]\s*\S+)").ok()
});

/// Removes credentials from text that may be shown or logged: the configured key
/// verbatim, plus key-shaped tokens (vendors sometimes echo part of a key).
pub fn redact(text: &str, secret: Option<&str>) -> String {
    let mut out = text.to_string();
    if let Some(s) = secret.filter(|s| s.len() >= 4) {
        out = out.replace(s, "[redacted]");
    }
    if let Some(re) = SECRET_RE.as_ref() {
        out = re.replace_all(&out, "[redacted]").into_owned();
    }
    out
}

fn truncate(text: &str) -> String {
    let t = text.trim();
    if t.chars().count() <= DETAIL_MAX_CHARS {
        t.to_string()
    } else {
        let mut s: String = t.chars().take(DETAIL_MAX_CHARS).collect();
        s.push('…');
        s
    }
}

/// The vendor's own error text from a body (OpenAI, Claude, Gemini, Ollama shapes), or
/// the body itself when it is not JSON.
pub fn vendor_detail(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let from_json = parsed.as_ref().and_then(|v| {
        let err = v.get("error").unwrap_or(v);
        err.get("message")
            .and_then(Value::as_str)
            .or_else(|| err.as_str())
            .or_else(|| v.get("message").and_then(Value::as_str))
            .or_else(|| v.get("detail").and_then(Value::as_str))
            .map(str::to_string)
    });
    truncate(&from_json.unwrap_or_else(|| body.to_string()))
}

/// The vendor's error type/status string (`overloaded_error`, `RESOURCE_EXHAUSTED`,
/// `insufficient_quota`, …), if the body has one.
fn vendor_type(body: &str) -> Option<String> {
    let v: Value = serde_json::from_str(body).ok()?;
    let err = v.get("error").unwrap_or(&v);
    ["type", "status", "code"]
        .iter()
        .find_map(|k| err.get(k).and_then(Value::as_str).map(str::to_string))
}

/// Maps a vendor error type string to a category.
pub fn kind_from_vendor_type(t: &str) -> Option<ErrorKind> {
    let t = t.to_ascii_lowercase();
    let kind = match t.as_str() {
        "overloaded_error" | "overloaded" | "unavailable" | "server_overloaded" => {
            ErrorKind::Overloaded
        }
        "rate_limit_error"
        | "rate_limit_exceeded"
        | "resource_exhausted"
        | "rate_limit"
        | "insufficient_quota"
        | "tokens"
        | "requests" => ErrorKind::RateLimit,
        "authentication_error" | "unauthenticated" | "invalid_api_key" => ErrorKind::Authentication,
        "permission_error" | "permission_denied" | "billing_error" => ErrorKind::Permission,
        "request_too_large" | "context_length_exceeded" => ErrorKind::ContextTooLong,
        "invalid_request_error"
        | "invalid_argument"
        | "not_found_error"
        | "not_found"
        | "failed_precondition" => ErrorKind::InvalidRequest,
        "deadline_exceeded" | "timeout_error" => ErrorKind::Timeout,
        "api_error" | "server_error" | "internal" | "internal_error" => ErrorKind::Server,
        _ => return None,
    };
    Some(kind)
}

static CONTEXT_RE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)context_length_exceeded|context length|context window|maximum context|prompt is too long|input is too long|too many tokens|input token count|reduce the length of the messages|string_above_max_length",
    )
    .ok()
});

fn mentions_context_overflow(text: &str) -> bool {
    CONTEXT_RE.as_ref().is_some_and(|re| re.is_match(text))
}

/// `retry-after-ms`, `retry-after` (seconds), or Gemini's `RetryInfo.retryDelay` ("17s").
pub fn retry_after(headers: &HeaderMap, body: &str) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    if let Some(s) = header("retry-after").and_then(|v| v.trim().parse::<f64>().ok()) {
        return Some(Duration::from_secs_f64(s.max(0.0)));
    }
    static DELAY_RE: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r#""retryDelay"\s*:\s*"([0-9.]+)s""#).ok());
    let caps = DELAY_RE.as_ref()?.captures(body)?;
    let secs: f64 = caps.get(1)?.as_str().parse().ok()?;
    Some(Duration::from_secs_f64(secs.max(0.0)))
}

/// What the user should do about each category.
fn advice(kind: ErrorKind, retry_after: Option<Duration>) -> String {
    match kind {
        ErrorKind::Authentication => {
            "The API key was rejected: check the key for this model in Settings (or the environment variable).".into()
        }
        ErrorKind::Permission => {
            "The key is not allowed to use this model, or the account has no balance: check the account, plan and model name.".into()
        }
        ErrorKind::RateLimit => match retry_after {
            Some(d) => format!(
                "Rate limited: wait about {} s, or switch to another model.",
                d.as_secs().max(1)
            ),
            None => "Rate limited or out of quota: wait a moment, check the plan's quota, or switch to another model.".into(),
        },
        ErrorKind::Overloaded => {
            "The service is overloaded: retry in a little while or switch to another model.".into()
        }
        ErrorKind::ContextTooLong => {
            "The conversation is longer than the model's context window: start a new conversation, let it compact, or choose a model with a larger window.".into()
        }
        ErrorKind::InvalidRequest => {
            "The request was rejected: check the model name, base URL and model settings.".into()
        }
        ErrorKind::Timeout => {
            "The model stopped responding: check the network or proxy, or raise the stream timeout in Settings.".into()
        }
        ErrorKind::Network => {
            "Could not reach the service: check the network, proxy settings and base URL.".into()
        }
        ErrorKind::Server => {
            "The service had an internal error: retry, or switch to another model.".into()
        }
        ErrorKind::Protocol => {
            "The response stream was malformed or ended early: retry; if it persists, the endpoint may not be compatible.".into()
        }
        ErrorKind::Cancelled => "Cancelled.".into(),
        ErrorKind::Internal => "Internal error in the app; please report it.".into(),
    }
}

fn message(kind: ErrorKind, what: &str, detail: &str, retry: Option<Duration>) -> String {
    if detail.is_empty() {
        format!("{what}. {}", advice(kind, retry))
    } else {
        format!("{what}: {detail}. {}", advice(kind, retry))
    }
}

/// Classifies a non-success HTTP response.
pub fn from_http(
    provider: &str,
    status: u16,
    headers: &HeaderMap,
    body: &str,
    secret: Option<&str>,
) -> LlmError {
    let detail = redact(&vendor_detail(body), secret);
    let vtype = vendor_type(body).and_then(|t| kind_from_vendor_type(&t));
    let overloaded_text = body.contains("overloaded");
    let kind = match status {
        401 => ErrorKind::Authentication,
        402 | 403 => ErrorKind::Permission,
        408 => ErrorKind::Timeout,
        413 => ErrorKind::ContextTooLong,
        429 => ErrorKind::RateLimit,
        503 | 529 => ErrorKind::Overloaded,
        400 | 404 | 422 if mentions_context_overflow(body) => ErrorKind::ContextTooLong,
        400..=499 => match vtype {
            Some(
                k @ (ErrorKind::ContextTooLong | ErrorKind::Authentication | ErrorKind::Permission),
            ) => k,
            _ => ErrorKind::InvalidRequest,
        },
        500..=599 if overloaded_text || vtype == Some(ErrorKind::Overloaded) => {
            ErrorKind::Overloaded
        }
        500..=599 => ErrorKind::Server,
        _ => ErrorKind::Protocol,
    };
    let retry = if matches!(kind, ErrorKind::RateLimit | ErrorKind::Overloaded) {
        retry_after(headers, body)
    } else {
        None
    };
    let what = format!("HTTP {status}");
    LlmError::new(kind, provider, message(kind, &what, &detail, retry))
        .with_status(status)
        .with_retry_after(retry)
}

/// Classifies an error object that arrived inside a 200 stream.
pub fn from_stream_error(provider: &str, payload: &Value, secret: Option<&str>) -> LlmError {
    let err = payload.get("error").unwrap_or(payload);
    let vtype = ["type", "status", "code"]
        .iter()
        .find_map(|k| err.get(k).and_then(Value::as_str));
    let text = err
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| err.to_string());
    let code = err.get("code").and_then(Value::as_u64);
    let by_code = match code {
        Some(429) => Some(ErrorKind::RateLimit),
        Some(503 | 529) => Some(ErrorKind::Overloaded),
        Some(401) => Some(ErrorKind::Authentication),
        Some(403) => Some(ErrorKind::Permission),
        Some(400) => Some(ErrorKind::InvalidRequest),
        _ => None,
    };
    let kind = vtype.and_then(kind_from_vendor_type).or(by_code).unwrap_or(
        if mentions_context_overflow(&text) {
            ErrorKind::ContextTooLong
        } else {
            ErrorKind::Server
        },
    );
    let detail = redact(&truncate(&text), secret);
    LlmError::new(
        kind,
        provider,
        message(kind, "error in the response stream", &detail, None),
    )
}

/// Classifies a transport failure (connect, TLS, reset, read timeout).
pub fn from_transport(provider: &str, err: reqwest::Error, secret: Option<&str>) -> LlmError {
    let kind = if err.is_timeout() {
        ErrorKind::Timeout
    } else {
        ErrorKind::Network
    };
    let what = if err.is_connect() {
        "could not connect"
    } else if err.is_body() || err.is_decode() {
        "the connection broke while streaming"
    } else {
        "request failed"
    };
    // The source chain carries the useful part ("connection refused", "unexpected EOF").
    let err = err.without_url();
    let mut detail = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(s) = source {
        let t = s.to_string();
        if !detail.contains(&t) {
            detail.push_str(": ");
            detail.push_str(&t);
        }
        source = s.source();
    }
    let detail = redact(&detail, secret);
    LlmError::new(
        kind,
        provider,
        message(kind, what, &truncate(&detail), None),
    )
    .with_cause(err)
}

/// The stream went quiet for longer than the idle timeout.
pub fn idle_timeout(provider: &str, timeout: Duration) -> LlmError {
    let secs = timeout.as_secs_f64();
    let what = if secs >= 1.0 {
        format!("no data from the model for {secs:.0} s")
    } else {
        format!("no data from the model for {} ms", timeout.as_millis())
    };
    LlmError::new(
        ErrorKind::Timeout,
        provider,
        message(ErrorKind::Timeout, &what, "", None),
    )
}

/// The stream broke the vendor's protocol.
pub fn protocol(provider: &str, what: &str) -> LlmError {
    LlmError::new(
        ErrorKind::Protocol,
        provider,
        message(ErrorKind::Protocol, what, "", None),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn classify(status: u16, body: &str) -> LlmError {
        from_http("p", status, &HeaderMap::new(), body, None)
    }

    #[test]
    fn statuses_map_to_categories() {
        let table = [
            (401, "{}", ErrorKind::Authentication),
            (403, "{}", ErrorKind::Permission),
            (
                402,
                r#"{"error":{"message":"Insufficient Balance"}}"#,
                ErrorKind::Permission,
            ),
            (429, "{}", ErrorKind::RateLimit),
            (
                529,
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                ErrorKind::Overloaded,
            ),
            (503, "busy", ErrorKind::Overloaded),
            (500, r#"{"error":{"message":"boom"}}"#, ErrorKind::Server),
            (
                500,
                r#"{"error":{"type":"overloaded_error"}}"#,
                ErrorKind::Overloaded,
            ),
            (
                400,
                r#"{"error":{"message":"This model's maximum context length is 8192 tokens"}}"#,
                ErrorKind::ContextTooLong,
            ),
            (
                400,
                r#"{"error":{"message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
                ErrorKind::ContextTooLong,
            ),
            (
                400,
                r#"{"error":{"message":"bad tool schema"}}"#,
                ErrorKind::InvalidRequest,
            ),
            (413, "", ErrorKind::ContextTooLong),
            (
                404,
                r#"{"error":{"message":"model not found"}}"#,
                ErrorKind::InvalidRequest,
            ),
            (408, "", ErrorKind::Timeout),
        ];
        for (status, body, kind) in table {
            let e = classify(status, body);
            assert_eq!(e.kind, kind, "status {status} body {body}");
            assert_eq!(e.status, Some(status));
            assert!(
                e.message.starts_with(&format!("HTTP {status}")),
                "{}",
                e.message
            );
        }
    }

    #[test]
    fn retry_after_from_headers_and_gemini_body() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("7"));
        let e = from_http("deepseek", 429, &h, "{}", None);
        assert_eq!(e.retry_after, Some(Duration::from_secs(7)));
        assert!(e.message.contains("wait about 7 s"), "{}", e.message);

        let mut h = HeaderMap::new();
        h.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(retry_after(&h, ""), Some(Duration::from_millis(1500)));

        let body = r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"17s"}]}}"#;
        assert_eq!(
            retry_after(&HeaderMap::new(), body),
            Some(Duration::from_secs(17))
        );
    }

    #[test]
    fn keys_never_reach_messages() {
        let body = r#"{"error":{"message":"Incorrect API key provided: sk-proj-abcdef123456. Also mysecretkey999"}}"#;
        let e = from_http(
            "openai",
            401,
            &HeaderMap::new(),
            body,
            Some("mysecretkey999"),
        );
        assert!(!e.message.contains("sk-proj-abcdef123456"), "{}", e.message);
        assert!(!e.message.contains("mysecretkey999"), "{}", e.message);
        assert!(e.message.contains("[redacted]"));
        assert!(e.to_string().starts_with("openai: "));
    }

    #[test]
    fn stream_error_objects_are_classified() {
        let v: Value = serde_json::from_str(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )
        .unwrap();
        assert_eq!(
            from_stream_error("claude", &v, None).kind,
            ErrorKind::Overloaded
        );
        let v: Value = serde_json::from_str(
            r#"{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}"#,
        )
        .unwrap();
        assert_eq!(
            from_stream_error("gemini", &v, None).kind,
            ErrorKind::RateLimit
        );
    }
}
