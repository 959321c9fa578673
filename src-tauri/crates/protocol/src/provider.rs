use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use specta::Type;

/// Model vendors. Several speak the OpenAI wire format; they differ in endpoint, default
/// model and key (those facts live with the providers, in `wyckoff-llm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    Claude,
    Openai,
    Gemini,
    Deepseek,
    Qwen,
    Kimi,
    Ollama,
    OpenaiCompatible,
}

impl ProviderKind {
    pub const ALL: [ProviderKind; 8] = [
        ProviderKind::Claude,
        ProviderKind::Openai,
        ProviderKind::Gemini,
        ProviderKind::Deepseek,
        ProviderKind::Qwen,
        ProviderKind::Kimi,
        ProviderKind::Ollama,
        ProviderKind::OpenaiCompatible,
    ];

    /// The name used by the CLI (`--provider`), in messages and in the status bar.
    pub fn cli_name(self) -> &'static str {
        match self {
            ProviderKind::Claude => "claude",
            ProviderKind::Openai => "openai",
            ProviderKind::Gemini => "gemini",
            ProviderKind::Deepseek => "deepseek",
            ProviderKind::Qwen => "qwen",
            ProviderKind::Kimi => "kimi",
            ProviderKind::Ollama => "ollama",
            ProviderKind::OpenaiCompatible => "openai-compatible",
        }
    }

    /// A CLI name, a serde name or a common alias (anthropic, google, moonshot, …),
    /// case-insensitive.
    pub fn from_cli_name(name: &str) -> Option<Self> {
        let norm = name.trim().to_ascii_lowercase().replace('_', "-");
        let canonical = match norm.as_str() {
            "anthropic" => "claude",
            "gpt" => "openai",
            "google" => "gemini",
            "dashscope" => "qwen",
            "moonshot" => "kimi",
            "custom" => "openai-compatible",
            other => other,
        };
        Self::ALL.into_iter().find(|k| k.cli_name() == canonical)
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.cli_name())
    }
}

impl FromStr for ProviderKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::from_cli_name(s).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|k| k.cli_name()).collect();
            format!(
                "unknown provider '{s}'; expected one of: {}",
                names.join(", ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_aliases_resolve() {
        for k in ProviderKind::ALL {
            assert_eq!(ProviderKind::from_cli_name(k.cli_name()), Some(k));
            let serde_name = serde_json::to_value(k).unwrap();
            assert_eq!(
                ProviderKind::from_cli_name(serde_name.as_str().unwrap()),
                Some(k)
            );
        }
        for (alias, kind) in [
            ("Anthropic", ProviderKind::Claude),
            ("gpt", ProviderKind::Openai),
            ("GOOGLE", ProviderKind::Gemini),
            ("dashscope", ProviderKind::Qwen),
            ("moonshot", ProviderKind::Kimi),
            ("custom", ProviderKind::OpenaiCompatible),
            ("openai_compatible", ProviderKind::OpenaiCompatible),
        ] {
            assert_eq!(ProviderKind::from_cli_name(alias), Some(kind), "{alias}");
        }
        let err = "mistral".parse::<ProviderKind>().unwrap_err();
        assert!(err.contains("expected one of: claude, openai"), "{err}");
    }
}
