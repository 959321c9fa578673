//! Export of a conversation as Markdown (for people) and JSON (lossless).

use serde::{Deserialize, Serialize};
use wyckoff_protocol::{Message, UserOrigin};

use crate::conversations::{MessageStatus, StoredMessage};
use crate::{Conversation, ConversationStore, MemoryError, Result, Turn};

/// Everything stored about a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationExport {
    pub conversation: Conversation,
    pub turns: Vec<Turn>,
    pub messages: Vec<StoredMessage>,
}

/// A fence longer than any backtick run in `content`, so tool output cannot close it.
fn fence(content: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in content.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// Renders a conversation as Markdown.
pub fn to_markdown(export: &ConversationExport) -> String {
    let c = &export.conversation;
    let title = if c.title.is_empty() {
        "未命名对话"
    } else {
        &c.title
    };
    let mut out = format!(
        "# {title}\n\n- 会话：{}\n- 模型：{}\n- 创建：{}\n- 更新：{}\n",
        c.id,
        if c.model.is_empty() { "-" } else { &c.model },
        c.created_at.to_rfc3339(),
        c.updated_at.to_rfc3339()
    );
    if let Some(origin) = &c.forked_from {
        out.push_str(&if origin.message_seq == crate::fork::BEFORE_FIRST {
            format!("- 分叉自：{} 的开头\n", origin.conversation_id)
        } else {
            format!(
                "- 分叉自：{} 的第 {} 条消息\n",
                origin.conversation_id, origin.message_seq
            )
        });
    }
    for m in &export.messages {
        let heading = match &m.message {
            Message::User { origin, .. } => match origin {
                UserOrigin::User => "用户".to_string(),
                UserOrigin::SystemNotification => "系统通知".to_string(),
                UserOrigin::InternalRetry => "运行时提示".to_string(),
                UserOrigin::Summary => "对话摘要".to_string(),
            },
            Message::Assistant { .. } => "助手".to_string(),
            Message::Tool { name, is_error, .. } => {
                format!(
                    "工具结果 `{name}`{}",
                    if *is_error { "（错误）" } else { "" }
                )
            }
        };
        let status = match m.status {
            MessageStatus::Interrupted => "（中断）",
            MessageStatus::Complete => "",
        };
        out.push_str(&format!("\n## {} · #{}{status}\n\n", heading, m.seq));
        if let Some(skill) = &m.skill {
            // What was typed; the expansion the model got follows.
            out.push_str(&format!(
                "> 输入 `{}`（技能 /{} 展开为下文）\n\n",
                skill.typed.trim(),
                skill.name
            ));
        }
        match &m.message {
            Message::Tool { content, .. } => {
                let f = fence(content);
                out.push_str(&format!("{f}text\n{content}\n{f}\n"));
            }
            other => {
                if !other.text().trim().is_empty() {
                    out.push_str(other.text().trim());
                    out.push('\n');
                }
                for call in other.tool_calls() {
                    out.push_str(&format!("\n> 调用工具 `{}` `{}`\n", call.name, call.args));
                }
            }
        }
        if let Some(g) = &m.grounding {
            out.push_str(&grounding_line(g));
        }
    }
    out
}

/// The answer's grounding in one line: the counts and the figures without a source.
fn grounding_line(g: &wyckoff_protocol::Grounding) -> String {
    let mut line = format!(
        "\n> 数字核对：{} 处有来源，{} 处由来源计算，{} 处无来源",
        g.sourced, g.derived, g.unsupported
    );
    let missing: Vec<String> = g
        .unsupported_claims()
        .map(|c| format!("「{}」", c.text))
        .collect();
    if !missing.is_empty() {
        line.push_str(&format!("（{}）", missing.join("")));
    }
    if g.corrected {
        line.push_str("；已请模型更正一次");
    }
    line.push('\n');
    line
}

impl ConversationStore {
    pub async fn export(&self, conversation_id: &str) -> Result<ConversationExport> {
        Ok(ConversationExport {
            conversation: self.get(conversation_id).await?,
            turns: self.turns(conversation_id).await?,
            messages: self.load_messages(conversation_id).await?,
        })
    }

    pub async fn export_markdown(&self, conversation_id: &str) -> Result<String> {
        Ok(to_markdown(&self.export(conversation_id).await?))
    }

    /// Pretty JSON of [`ConversationExport`]; messages keep the protocol's shape.
    pub async fn export_json(&self, conversation_id: &str) -> Result<String> {
        serde_json::to_string_pretty(&self.export(conversation_id).await?)
            .map_err(|e| MemoryError::Corrupt(format!("export: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fence_outgrows_backtick_runs() {
        assert_eq!(fence("plain"), "```");
        assert_eq!(fence("a ``` b"), "````");
        assert_eq!(fence("`````"), "``````");
    }
}
