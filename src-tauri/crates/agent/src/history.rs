//! `query_history`: reopens what was moved out of the model's context — tool results
//! offloaded for size (`tool-result://…`) and messages compaction archived
//! (`archive://…`). The previews and summaries the model sees point here.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use wyckoff_protocol::{Message, ToolSchema};

use crate::compaction::CompactionArchive;
use crate::results::load_offloaded;
use crate::tool::{Tool, ToolContext, ToolError, ToolSpec};

/// Characters returned per page of an offloaded result.
const PAGE_CHARS: usize = 8_000;
/// Characters kept per archived message.
const ARCHIVED_MESSAGE_CHARS: usize = 2_000;

pub struct QueryHistory {
    spec: ToolSpec,
    schema: ToolSchema,
    tool_results_dir: PathBuf,
    archive: Arc<dyn CompactionArchive>,
}

impl QueryHistory {
    pub fn new(tool_results_dir: impl Into<PathBuf>, archive: Arc<dyn CompactionArchive>) -> Self {
        QueryHistory {
            spec: ToolSpec::new("query_history", "历史查询").concurrency_safe(),
            schema: ToolSchema {
                name: "query_history".into(),
                description: "重新打开已移出上下文的内容：source='tool_result' 读取被卸载的大工具结果（ref 为 tool-result://…，可用 offset 分段读取）；source='archive' 读取上下文压缩时归档的原始消息（ref 为 archive://…）。".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "source": {"type": "string", "enum": ["tool_result", "archive"], "description": "tool_result 或 archive"},
                        "ref": {"type": "string", "description": "tool-result://… 或 archive://… 引用"},
                        "offset": {"type": "integer", "minimum": 0, "description": "仅 tool_result：从第几个字符开始读，默认 0"}
                    },
                    "required": ["source", "ref"],
                    "additionalProperties": false
                }),
            },
            tool_results_dir: tool_results_dir.into(),
            archive,
        }
    }
}

fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

fn archived(message: &Message) -> Value {
    let (role, name) = match message {
        Message::User { .. } => ("user", None),
        Message::Assistant { .. } => ("assistant", None),
        Message::Tool { name, .. } => ("tool", Some(name.as_str())),
    };
    let calls: Vec<&str> = message
        .tool_calls()
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    json!({"role": role, "name": name, "tool_calls": calls, "content": truncate(message.text(), ARCHIVED_MESSAGE_CHARS)})
}

#[async_trait]
impl Tool for QueryHistory {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn schema(&self) -> &ToolSchema {
        &self.schema
    }

    async fn call(&self, args: Value, _ctx: ToolContext) -> Result<Value, ToolError> {
        let reference = args["ref"].as_str().unwrap_or_default().trim();
        match args["source"].as_str() {
            Some("tool_result") => {
                let offset = args["offset"].as_u64().unwrap_or(0);
                let offset = usize::try_from(offset)
                    .map_err(|_| ToolError::InvalidArgs("offset is too large".into()))?;
                let page = load_offloaded(&self.tool_results_dir, reference, offset, PAGE_CHARS)
                    .map_err(|e| ToolError::Failed(e.to_string()))?;
                Ok(json!({
                    "source": "tool_result", "ref": reference, "offset": page.offset,
                    "total_chars": page.total_chars, "next_offset": page.next_offset, "text": page.text,
                }))
            }
            Some("archive") => {
                let messages = self
                    .archive
                    .load(reference)
                    .await
                    .map_err(|e| ToolError::Failed(e.to_string()))?;
                Ok(json!({
                    "source": "archive", "ref": reference, "message_count": messages.len(),
                    "messages": messages.iter().map(archived).collect::<Vec<_>>(),
                }))
            }
            other => Err(ToolError::InvalidArgs(format!(
                "unknown source {other:?}: use tool_result or archive"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::FileArchive;
    use crate::results::ResultStore;
    use tokio_util::sync::CancellationToken;

    fn ctx() -> ToolContext {
        ToolContext {
            session_id: "s".into(),
            call_id: "c".into(),
            cancel: CancellationToken::new(),
            background: None,
            progress: crate::tool::ProgressHandle::silent(),
        }
    }

    fn tool(dir: &std::path::Path) -> QueryHistory {
        QueryHistory::new(
            dir.join("tool-results"),
            Arc::new(FileArchive::new(dir.join("context-archive"))),
        )
    }

    #[tokio::test]
    async fn reopens_an_offloaded_result_page_by_page() {
        let dir = tempfile::tempdir().unwrap();
        let store = ResultStore::new(dir.path().join("tool-results"));
        let big = format!("{{\"rows\":\"{}\"}}", "量价".repeat(6_000));
        let preview = store
            .offload_if_large("analyze_stock", "call_1", big.clone(), chrono::Utc::now())
            .unwrap();
        assert!(preview.contains("query_history"), "{preview}");
        let reference = preview
            .lines()
            .find_map(|l| l.strip_prefix("result_ref: "))
            .unwrap()
            .to_owned();

        let q = tool(dir.path());
        let first = q
            .call(json!({"source": "tool_result", "ref": reference}), ctx())
            .await
            .unwrap();
        assert_eq!(first["total_chars"], big.chars().count());
        let next = first["next_offset"].as_u64().unwrap();
        let second = q
            .call(
                json!({"source": "tool_result", "ref": reference, "offset": next}),
                ctx(),
            )
            .await
            .unwrap();
        let joined = format!(
            "{}{}",
            first["text"].as_str().unwrap(),
            second["text"].as_str().unwrap()
        );
        assert_eq!(joined, big);

        let outside = q
            .call(
                json!({"source": "tool_result", "ref": "/etc/passwd"}),
                ctx(),
            )
            .await;
        assert!(outside.is_err());
    }

    #[tokio::test]
    async fn reopens_archived_messages() {
        let dir = tempfile::tempdir().unwrap();
        let archive = FileArchive::new(dir.path().join("context-archive"));
        let reference = archive
            .archive(
                "conv-1",
                &[
                    Message::user("不追涨，只做主板"),
                    Message::assistant("记住了"),
                ],
            )
            .await
            .unwrap();
        let got = tool(dir.path())
            .call(json!({"source": "archive", "ref": reference}), ctx())
            .await
            .unwrap();
        assert_eq!(got["message_count"], 2);
        assert_eq!(got["messages"][0]["role"], "user");
        assert_eq!(got["messages"][0]["content"], "不追涨，只做主板");
        let missing = tool(dir.path())
            .call(
                json!({"source": "archive", "ref": "archive://conv-1/ctx_nope"}),
                ctx(),
            )
            .await;
        assert!(missing.is_err());
    }
}
