//! Long-term memory around a session (seed §4): recall before every user turn, Memory
//! Flush before compaction, extraction at the end of a session. The algorithms are the
//! memory crate's; this module connects them to the runtime.

use async_trait::async_trait;
use wyckoff_agent::{AgentError, MemoryFlush};
use wyckoff_llm::Provider;
use wyckoff_memory::{MemoryStore, Recall};
use wyckoff_protocol::{Message, RecalledItem};

/// Memory Flush: preference signals in messages about to be compacted become preferences.
pub(crate) struct StoreFlush(pub MemoryStore);

#[async_trait]
impl MemoryFlush for StoreFlush {
    async fn flush(&self, messages: &[Message], provider: &dyn Provider) -> Result<(), AgentError> {
        wyckoff_memory::flush_before_compaction(&self.0, messages, provider)
            .await
            .map(|outcome| {
                tracing::info!(
                    saved = outcome.saved.len(),
                    "memory flush before compaction"
                );
            })
            .map_err(|e| AgentError::Invalid(format!("memory flush: {e}")))
    }
}

/// The system prompt of one turn: the base prompt, then the recalled block (the seed's
/// `# 用户偏好` / `# 历史记忆` sections) when anything was recalled.
pub fn prompt_with_recall(base: &str, recall: &Recall) -> String {
    if recall.block.is_empty() {
        base.to_owned()
    } else {
        format!("{base}\n\n{}", recall.block)
    }
}

/// What the UI shows under "what the agent remembered this turn": the recalled
/// memories, preferences first, in the order they were injected.
pub fn recall_items(recall: &Recall) -> Vec<RecalledItem> {
    recall
        .preferences
        .iter()
        .chain(&recall.memories)
        .map(|r| RecalledItem {
            id: r.memory.id,
            memory_type: r.memory.memory_type.as_str().to_owned(),
            content: r.memory.content.trim().to_owned(),
            date: wyckoff_time::beijing_date(r.memory.created_at),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};
    use wyckoff_memory::{Memory, MemoryType, RecalledMemory};

    fn recalled(t: MemoryType, content: &str) -> RecalledMemory {
        RecalledMemory {
            memory: Memory {
                id: 1,
                memory_type: t,
                content: content.into(),
                codes: vec![],
                created_at: Utc.with_ymd_and_hms(2026, 4, 20, 2, 0, 0).unwrap(),
                source_ref: String::new(),
                metadata: serde_json::Value::Null,
            },
            score: 1.0,
            signals: Default::default(),
        }
    }

    #[test]
    fn nothing_recalled_leaves_the_prompt_alone() {
        assert_eq!(prompt_with_recall("base", &Recall::default()), "base");
        assert!(recall_items(&Recall::default()).is_empty());
    }

    #[test]
    fn recalled_block_follows_the_prompt_and_items_list_preferences_first() {
        let recall = Recall {
            block: "# 用户偏好\n- 不做创业板".into(),
            preferences: vec![recalled(MemoryType::Preference, "不做创业板")],
            memories: vec![recalled(MemoryType::StockOpinion, "600519 吸筹末期 ")],
            query: Default::default(),
        };
        assert_eq!(
            prompt_with_recall("你是助手。", &recall),
            "你是助手。\n\n# 用户偏好\n- 不做创业板"
        );
        let items = recall_items(&recall);
        let got: Vec<(&str, &str, &str)> = items
            .iter()
            .map(|i| (i.memory_type.as_str(), i.content.as_str(), i.date.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("preference", "不做创业板", "2026-04-20"),
                ("stock_opinion", "600519 吸筹末期", "2026-04-20"),
            ]
        );
    }
}
