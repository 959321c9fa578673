//! Per-turn trace files (seed §10): one JSONL file per turn, tagged records in the same
//! style as runtime events, secrets masked before anything reaches the disk.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use wyckoff_protocol::{ErrorKind, Message, Usage};

use crate::error::AgentError;

/// Strings longer than this are cut in the scratchpad.
const MAX_STRING_CHARS: usize = 200_000;

/// One line of a scratchpad file.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ScratchpadRecord {
    Init {
        session_id: String,
        /// What started the turn: the user's input, or a finished background task (the
        /// input is then empty and the `notification` records say which task).
        trigger: TurnTrigger,
        user_input: String,
        system_prompt: String,
        tools: Vec<String>,
        provider: String,
        model: String,
    },
    Thinking {
        round: u32,
        content: String,
    },
    ToolResult {
        id: String,
        tool_name: String,
        args: Value,
        result: Value,
        status: String,
        duration_ms: u32,
    },
    /// A delegated sub-agent's progress (its `sub_agent` events).
    SubAgent {
        agent: String,
        call_id: String,
        kind: String,
        text: String,
    },
    /// A finished background task's notification entering the conversation.
    Notification {
        task_id: String,
        content: String,
    },
    /// What compaction removed and what replaced it: the whole conversation before and
    /// after (the summary is the first message after), and where the removed part went.
    Compaction {
        before_messages: u32,
        after_messages: u32,
        archive_ref: Option<String>,
        summary_fallback: bool,
        before: Vec<Message>,
        after: Vec<Message>,
    },
    Final {
        content: String,
        usage: Usage,
        rounds: u32,
        elapsed_ms: u32,
    },
    Error {
        kind: ErrorKind,
        message: String,
        /// The error's sources, outermost first ([`error_chain`]).
        causes: Vec<String>,
        elapsed_ms: u32,
    },
    /// One tool call of a delegated sub-agent, with its exact arguments and result (the
    /// parent only gets the sub-agent's budgeted summary; seed 11_07 sends it here for
    /// exact fields). `call_id` is the parent's delegate call, `id` the sub-agent's call.
    SubAgentToolResult {
        agent: String,
        call_id: String,
        id: String,
        tool_name: String,
        args: Value,
        result: Value,
        status: String,
        duration_ms: u32,
    },
}

/// What started a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnTrigger {
    User,
    /// A turn on pending background-task completions only (empty input).
    BackgroundCompletion,
}

/// The `source()` chain below `error`, outermost first — each cause's own text, so the
/// scratchpad shows why as well as what (masked like every string on the way out).
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut causes = Vec::new();
    let mut next = error.source();
    while let Some(cause) = next {
        causes.push(cause.to_string());
        next = cause.source();
    }
    causes
}

#[derive(Serialize)]
struct Line<'a> {
    timestamp: String,
    #[serde(flatten)]
    record: &'a ScratchpadRecord,
}

/// An open scratchpad file.
pub struct Scratchpad {
    path: PathBuf,
    out: Mutex<BufWriter<File>>,
}

impl Scratchpad {
    /// Creates `{dir}/{YYYY-MM-DD-HHMMSS}_{sha256(input)[:12]}_{random}.jsonl`.
    pub fn create(dir: &Path, user_input: &str, now: DateTime<Utc>) -> Result<Self, AgentError> {
        std::fs::create_dir_all(dir)?;
        let digest: String = Sha256::digest(user_input.as_bytes())
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect();
        // The suffix keeps two turns in the same second with the same input apart.
        let suffix: String = uuid::Uuid::new_v4()
            .simple()
            .to_string()
            .chars()
            .take(6)
            .collect();
        let path = dir.join(format!(
            "{}_{digest}_{suffix}.jsonl",
            now.format("%Y-%m-%d-%H%M%S")
        ));
        let file = File::create(&path)?;
        Ok(Scratchpad {
            path,
            out: Mutex::new(BufWriter::new(file)),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record, redacted. Failures are logged, never fatal to the turn.
    pub fn record(&self, record: &ScratchpadRecord, now: DateTime<Utc>) {
        let line = Line {
            timestamp: now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            record,
        };
        let mut value = match serde_json::to_value(&line) {
            Ok(v) => v,
            Err(e) => {
                tracing::warn!("scratchpad record not serializable: {e}");
                return;
            }
        };
        redact(&mut value);
        let written = self
            .out
            .lock()
            .map(|mut out| writeln!(out, "{value}").and_then(|_| out.flush()));
        if let Ok(Err(e)) | Err(e) =
            written.map_err(|_| std::io::Error::other("scratchpad lock poisoned"))
        {
            tracing::warn!(path = %self.path.display(), "scratchpad write failed: {e}");
        }
    }
}

const MASK: &str = "***REDACTED***";

/// Masks secrets anywhere in a record: values under secret-named keys, and
/// secret-shaped substrings (sk-…, Bearer …, api_key=…) in every string.
pub fn redact(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if is_secret_field(k) && !v.is_null() {
                    *v = Value::String(MASK.to_owned());
                } else {
                    redact(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        Value::String(s) => {
            let masked = wyckoff_config::redact::redact_secrets(s);
            let masked = if masked.chars().count() > MAX_STRING_CHARS {
                let head: String = masked.chars().take(MAX_STRING_CHARS).collect();
                format!(
                    "{head}\n...[truncated in scratchpad, original chars={}]",
                    masked.chars().count()
                )
            } else {
                masked
            };
            if masked != *s {
                *s = masked;
            }
        }
        _ => {}
    }
}

/// Secret-named fields; token counts ("input_tokens", "max_tokens") are not secrets.
fn is_secret_field(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    if lower.ends_with("tokens") || lower.ends_with("_ms") {
        return false;
    }
    wyckoff_config::redact::is_secret_key(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn redacts_secret_fields_and_shapes_but_not_token_counts() {
        let mut v = json!({
            "args": {"api_key": "CANARY-1", "headers": {"Authorization": "CANARY-2"}, "password": "CANARY-3"},
            "note": "key is sk-CANARYCANARY123 and Bearer CANARYTOKEN123456",
            "usage": {"input_tokens": 12, "output_tokens": 3},
            "list": [{"token": "CANARY-4"}]
        });
        redact(&mut v);
        let s = v.to_string();
        assert!(!s.contains("CANARY"), "{s}");
        assert_eq!(v["usage"]["input_tokens"], 12);
    }

    #[test]
    fn writes_one_tagged_json_object_per_line() {
        let dir = tempfile::tempdir().unwrap();
        let pad = Scratchpad::create(dir.path(), "分析 600519", Utc::now()).unwrap();
        pad.record(
            &ScratchpadRecord::Thinking {
                round: 1,
                content: "hmm".into(),
            },
            Utc::now(),
        );
        pad.record(
            &ScratchpadRecord::Error {
                kind: ErrorKind::Timeout,
                message: "stall".into(),
                causes: vec!["read timed out".into()],
                elapsed_ms: 5,
            },
            Utc::now(),
        );
        let text = std::fs::read_to_string(pad.path()).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["type"], "thinking");
        assert_eq!(lines[1]["type"], "error");
        assert_eq!(lines[1]["kind"], "timeout");
        assert!(lines[0]["timestamp"].as_str().unwrap().ends_with('Z'));
        assert_eq!(lines[1]["causes"], serde_json::json!(["read timed out"]));
    }

    #[derive(Debug, thiserror::Error)]
    #[error("{0}")]
    struct Layer(&'static str, #[source] Option<Box<Layer>>);

    #[test]
    fn the_error_chain_lists_every_source_outermost_first() {
        let err = Layer(
            "model call failed",
            Some(Box::new(Layer(
                "connection reset",
                Some(Box::new(Layer("os error 104", None))),
            ))),
        );
        assert_eq!(error_chain(&err), vec!["connection reset", "os error 104"]);
        assert!(error_chain(&Layer("alone", None)).is_empty());
    }
}
