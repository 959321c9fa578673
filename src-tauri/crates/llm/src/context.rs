//! Context windows of known models (REFERENCE §6.6), with a user override.

use std::sync::LazyLock;

use regex::{Regex, RegexBuilder};

/// Used when a model is not recognised: small enough that compaction starts early.
pub const UNKNOWN_MODEL_CONTEXT_WINDOW: u32 = 64_000;

/// First match wins; patterns are matched case-insensitively against the model name.
const TABLE: &[(&str, u32)] = &[
    (r"gemini-2", 1_000_000),
    (r"gemini-3", 128_000),
    (r"claude-(?:opus|sonnet|haiku)|claude", 200_000),
    (r"minimax-m3", 1_000_000),
    (
        r"gpt-4o|gpt-4\.1|gpt-4|\bo[34](?:-|$)|gpt-5|reasoning",
        128_000,
    ),
    (r"gpt-3\.5", 16_000),
    (r"deepseek", 64_000),
    (r"qwen|kimi|moonshot|minimax|mistral", 128_000),
    (r"longcat|step", 64_000),
];

static COMPILED: LazyLock<Vec<(Regex, u32)>> = LazyLock::new(|| {
    TABLE
        .iter()
        .filter_map(|(p, w)| {
            RegexBuilder::new(p)
                .case_insensitive(true)
                .build()
                .ok()
                .map(|r| (r, *w))
        })
        .collect()
});

/// The window inferred from the model name alone.
pub fn infer_context_window(model: &str) -> u32 {
    COMPILED
        .iter()
        .find(|(re, _)| re.is_match(model))
        .map(|(_, w)| *w)
        .unwrap_or(UNKNOWN_MODEL_CONTEXT_WINDOW)
}

/// The user's override (when set and positive) wins over the table.
pub fn context_window(model: &str, user_override: Option<u32>) -> u32 {
    match user_override {
        Some(w) if w > 0 => w,
        _ => infer_context_window(model),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let cases = [
            ("gemini-2.5-flash", 1_000_000),
            ("gemini-3-pro-preview", 128_000),
            ("claude-sonnet-4-5", 200_000),
            ("Claude-3-Haiku", 200_000),
            ("gpt-4o-mini", 128_000),
            ("o3-mini", 128_000),
            ("o4", 128_000),
            ("gpt-5", 128_000),
            ("gpt-3.5-turbo", 16_000),
            ("deepseek-chat", 64_000),
            ("deepseek-reasoner", 64_000),
            ("qwen-plus", 128_000),
            ("kimi-k2-0905-preview", 128_000),
            ("moonshot-v1-128k", 128_000),
            ("MiniMax-M3", 1_000_000),
            ("llama3.1:8b", UNKNOWN_MODEL_CONTEXT_WINDOW),
            ("", UNKNOWN_MODEL_CONTEXT_WINDOW),
        ];
        for (model, window) in cases {
            assert_eq!(infer_context_window(model), window, "{model}");
        }
    }

    #[test]
    fn override_wins_unless_zero() {
        assert_eq!(context_window("deepseek-chat", Some(128_000)), 128_000);
        assert_eq!(context_window("deepseek-chat", Some(0)), 64_000);
        assert_eq!(context_window("mystery", None), 64_000);
    }
}
