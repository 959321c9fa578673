//! Large tool results (REFERENCE §2.7): anything over ~8,000 characters is written to the
//! data home's tool-results directory and replaced, in the model's context, by a preview
//! and a reference that the `query_history` tool opens with `load_offloaded`.

use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::error::AgentError;

/// Results longer than this (in characters) leave the context.
pub const INLINE_RESULT_MAX_CHARS: usize = 8_000;
/// Characters of the result kept in the context as a preview.
pub const PREVIEW_CHARS: usize = 2_000;
/// Prefix of offloaded-result references.
pub const RESULT_REF_SCHEME: &str = "tool-result://";

/// Serializes a tool result the way the model sees it (JSON, non-ASCII kept as is).
pub fn serialize_result(result: &Value) -> String {
    match result {
        // A bare string result is given as text, not as a quoted JSON string.
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Stores large results under one directory.
#[derive(Debug, Clone)]
pub struct ResultStore {
    dir: PathBuf,
    inline_max: usize,
}

impl ResultStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ResultStore {
            dir: dir.into(),
            inline_max: INLINE_RESULT_MAX_CHARS,
        }
    }

    /// Overrides the inline limit (sub-agents and task summaries use smaller ones).
    pub fn with_inline_max(mut self, chars: usize) -> Self {
        self.inline_max = chars;
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Returns `content` unchanged when it is small, else stores it and returns the
    /// preview text with its reference.
    pub fn offload_if_large(
        &self,
        tool: &str,
        call_id: &str,
        content: String,
        now: DateTime<Utc>,
    ) -> Result<String, AgentError> {
        if content.chars().count() <= self.inline_max {
            return Ok(content);
        }
        std::fs::create_dir_all(&self.dir)?;
        let digest = hex10(&Sha256::digest(content.as_bytes()));
        let file_name = format!(
            "{}_{}_{}_{}.json",
            now.format("%Y-%m-%d-%H%M%S"),
            safe(tool, 32),
            safe(call_id, 32),
            digest
        );
        let path = self.dir.join(&file_name);
        std::fs::write(&path, content.as_bytes())?;
        let reference = format!("{RESULT_REF_SCHEME}{file_name}");
        let index_line = json!({
            "result_ref": reference,
            "path": path.display().to_string(),
            "tool_name": tool,
            "tool_call_id": call_id,
            "size_bytes": content.len(),
            "chars": content.chars().count(),
            "created_at": now.to_rfc3339(),
        });
        let mut index = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("index.jsonl"))?;
        writeln!(index, "{index_line}")?;

        let preview: String = compact_preview(&content)
            .chars()
            .take(PREVIEW_CHARS)
            .collect();
        let total = content.chars().count();
        Ok(format!(
            "{}\ntool: {tool}\nresult_ref: {reference}\npath: {}\nsize: {total} 字符\n\n预览（前 {} 字符）:\n{preview}\n\n如需完整内容，请调用 query_history(source=\"tool_result\", ref=result_ref)（可用 offset 分段读取）。",
            over_cap_notice(total, self.inline_max, &path),
            path.display(),
            preview.chars().count()
        ))
    }

    /// Loads part of an offloaded result. `reference` is either the `tool-result://`
    /// reference or the absolute path printed next to it; anything outside this store's
    /// directory is refused. Returns the text from `offset` (in characters), at most
    /// `max_chars` of it, and the total length.
    pub fn load(
        &self,
        reference: &str,
        offset: usize,
        max_chars: usize,
    ) -> Result<OffloadedPage, AgentError> {
        load_offloaded(&self.dir, reference, offset, max_chars)
    }
}

/// The first line of an offloaded result: the size, the cap it exceeded (so the model and
/// the user can tell a limit from a failure) and where the whole result is.
pub fn over_cap_notice(chars: usize, cap: usize, saved_to: &Path) -> String {
    format!(
        "[工具结果 {chars} 字符，超过上下文内 {cap} 字符的上限（tool result {chars} chars exceeds the {cap}-char cap）；完整结果已保存到 {}]",
        saved_to.display()
    )
}

/// Long arrays kept to their first items in a preview.
const PREVIEW_ARRAY_ITEMS: usize = 3;

/// What the preview shows of a large result: for JSON, every array cut to its first few
/// items (with how many there were), so the figures after a long list — a backtest's
/// metrics after its equity curve — still make it into the preview; other text as is.
pub fn compact_preview(content: &str) -> String {
    fn cut(v: &mut Value) {
        match v {
            Value::Array(items) => {
                let n = items.len();
                if n > PREVIEW_ARRAY_ITEMS {
                    items.truncate(PREVIEW_ARRAY_ITEMS);
                    items.push(Value::String(format!(
                        "…(共 {n} 项，完整内容见 result_ref)"
                    )));
                }
                items.iter_mut().for_each(cut);
            }
            Value::Object(map) => map.values_mut().for_each(cut),
            _ => {}
        }
    }
    match serde_json::from_str::<Value>(content) {
        Ok(mut v) if v.is_object() || v.is_array() => {
            cut(&mut v);
            v.to_string()
        }
        _ => content.to_owned(),
    }
}

/// A page of an offloaded result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffloadedPage {
    pub text: String,
    pub offset: usize,
    pub total_chars: usize,
    /// Where the next page starts, when there is more.
    pub next_offset: Option<usize>,
}

/// See [`ResultStore::load`]. A free function so tools can open references with only the
/// data home's directory at hand.
pub fn load_offloaded(
    dir: &Path,
    reference: &str,
    offset: usize,
    max_chars: usize,
) -> Result<OffloadedPage, AgentError> {
    let name = match reference.strip_prefix(RESULT_REF_SCHEME) {
        Some(name) => name.to_owned(),
        None => {
            let p = Path::new(reference);
            let parent_ok = match (p.parent(), dir.canonicalize()) {
                (Some(parent), Ok(root)) => {
                    parent.canonicalize().map(|c| c == root).unwrap_or(false)
                }
                _ => false,
            };
            if !parent_ok {
                return Err(AgentError::Invalid(format!(
                    "not a stored tool result: {reference}"
                )));
            }
            p.file_name()
                .and_then(|n| n.to_str())
                .map(str::to_owned)
                .unwrap_or_default()
        }
    };
    // Only plain file names produced by `offload_if_large`: no separators, no "..".
    let valid = !name.is_empty()
        && name.ends_with(".json")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !name.contains("..");
    if !valid {
        return Err(AgentError::Invalid(format!(
            "not a stored tool result: {reference}"
        )));
    }
    let content = std::fs::read_to_string(dir.join(&name))?;
    let total_chars = content.chars().count();
    let text: String = content.chars().skip(offset).take(max_chars).collect();
    let end = offset.saturating_add(text.chars().count());
    Ok(OffloadedPage {
        text,
        offset,
        total_chars,
        next_offset: (end < total_chars).then_some(end),
    })
}

fn hex10(bytes: &[u8]) -> String {
    bytes.iter().take(5).map(|b| format!("{b:02x}")).collect()
}

/// Keeps names usable in file names.
fn safe(s: &str, max: usize) -> String {
    s.chars()
        .take(max)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preview_of_a_large_json_result_keeps_what_follows_long_lists() {
        let curve: Vec<Value> = (0..400)
            .map(|i| json!({"date": i, "equity": 100_000 + i}))
            .collect();
        let result = json!({"equity_curve": curve, "metrics": {"total_return_pct": -0.94}});
        let preview = compact_preview(&result.to_string());
        assert!(preview.chars().count() < 400, "{preview}");
        assert!(preview.contains("total_return_pct"));
        assert!(preview.contains("共 400 项"));
        // the full result is still what gets stored and loaded
        let dir = tempfile::tempdir().unwrap();
        let store = ResultStore::new(dir.path());
        let out = store
            .offload_if_large("run_backtest", "c1", result.to_string(), Utc::now())
            .unwrap();
        assert!(out.contains("total_return_pct"), "{out}");
        // plain text is previewed as is
        assert_eq!(compact_preview("not json [1,2,3,4]"), "not json [1,2,3,4]");
    }

    #[test]
    fn small_results_stay_inline_large_ones_are_offloaded_and_loadable() {
        let dir = tempfile::tempdir().unwrap();
        let store = ResultStore::new(dir.path().join("tool-results"));
        let now = Utc::now();
        assert_eq!(
            store
                .offload_if_large("t", "c", "short".into(), now)
                .unwrap(),
            "short"
        );

        let big: String = (0..9_000)
            .map(|i| if i % 2 == 0 { '量' } else { 'a' })
            .collect();
        let out = store
            .offload_if_large("screen_stocks", "call/1", big.clone(), now)
            .unwrap();
        assert!(out.chars().count() < 3_000, "preview must be short");
        let first = out.lines().next().unwrap();
        assert!(
            first.contains("9000 字符")
                && first.contains(&format!("{INLINE_RESULT_MAX_CHARS} 字符的上限"))
                && first.contains(&format!("the {INLINE_RESULT_MAX_CHARS}-char cap")),
            "the notice names the size and the cap: {first}"
        );
        let reference = out
            .lines()
            .find_map(|l| l.strip_prefix("result_ref: "))
            .unwrap()
            .to_owned();
        assert!(reference.starts_with(RESULT_REF_SCHEME));
        let page = store.load(&reference, 0, 5_000).unwrap();
        assert_eq!(page.total_chars, 9_000);
        assert_eq!(page.next_offset, Some(5_000));
        let rest = store.load(&reference, 5_000, 5_000).unwrap();
        assert_eq!(rest.next_offset, None);
        assert_eq!(format!("{}{}", page.text, rest.text), big);
        // The absolute path works too.
        let path = out.lines().find_map(|l| l.strip_prefix("path: ")).unwrap();
        assert_eq!(store.load(path, 0, 10).unwrap().text.chars().count(), 10);
        let index = std::fs::read_to_string(dir.path().join("tool-results/index.jsonl")).unwrap();
        assert!(index.contains("screen_stocks"));
    }

    #[test]
    fn the_notice_names_the_cap_in_force() {
        let dir = tempfile::tempdir().unwrap();
        let store = ResultStore::new(dir.path().join("tool-results")).with_inline_max(100);
        let out = store
            .offload_if_large("exec_command", "c1", "x".repeat(101), Utc::now())
            .unwrap();
        let first = out.lines().next().unwrap();
        assert!(first.contains("101 字符"), "{first}");
        assert!(first.contains("100 字符的上限"), "{first}");
        assert!(
            first.contains(&dir.path().join("tool-results").display().to_string()),
            "{first}"
        );
        // at the cap exactly, nothing is offloaded
        assert_eq!(
            store
                .offload_if_large("exec_command", "c2", "x".repeat(100), Utc::now())
                .unwrap(),
            "x".repeat(100)
        );
    }

    #[test]
    fn refuses_paths_outside_the_store() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("secret.json"), "{}").unwrap();
        let store = ResultStore::new(dir.path().join("tool-results"));
        std::fs::create_dir_all(store.dir()).unwrap();
        for r in [
            "tool-result://../secret.json",
            "tool-result://a/b.json",
            dir.path().join("secret.json").to_str().unwrap(),
            "/etc/passwd",
        ] {
            assert!(store.load(r, 0, 10).is_err(), "{r}");
        }
    }
}
