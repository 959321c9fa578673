//! Extraction and flush against a real SQLite file. The provider is a tiny in-test
//! `Provider` returning a fixed reply: the wire formats are tested in wyckoff-llm, here
//! only the prompt we send and what we do with the reply matter.

mod common;

use std::sync::Mutex;

use async_trait::async_trait;
use common::store;
use futures::stream;
use wyckoff_llm::{ChatRequest, ChunkStream, LlmError, Provider, StreamChunk};
use wyckoff_memory::extraction::{FLUSH_PROMPT, SESSION_PROMPT};
use wyckoff_memory::{MemoryType, NewMemory, extract_session_memories, flush_before_compaction};
use wyckoff_protocol::{ErrorKind, Message};

struct FixedReply {
    reply: Result<String, LlmError>,
    seen: Mutex<Vec<ChatRequest>>,
}

impl FixedReply {
    fn new(reply: &str) -> Self {
        FixedReply {
            reply: Ok(reply.to_string()),
            seen: Mutex::new(Vec::new()),
        }
    }
    fn requests(&self) -> Vec<ChatRequest> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

#[async_trait]
impl Provider for FixedReply {
    fn name(&self) -> &str {
        "fixed"
    }
    fn model(&self) -> &str {
        "fixed-1"
    }
    fn context_window(&self) -> u32 {
        64_000
    }
    async fn stream(&self, request: &ChatRequest) -> Result<ChunkStream, LlmError> {
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(request.clone());
        let reply = self.reply.clone()?;
        // split in two deltas so the collected text is really assembled from chunks
        let mid = reply
            .char_indices()
            .nth(reply.chars().count() / 2)
            .map_or(0, |(i, _)| i);
        let chunks = vec![
            Ok(StreamChunk::TextDelta(reply[..mid].to_string())),
            Ok(StreamChunk::TextDelta(reply[mid..].to_string())),
        ];
        Ok(Box::pin(stream::iter(chunks)))
    }
}

fn conversation(n: usize) -> Vec<Message> {
    let mut v = Vec::new();
    for i in 0..n {
        v.push(Message::user(format!(
            "第{i}个问题：我不追涨，帮我看看600519"
        )));
        v.push(Message::assistant(format!(
            "第{i}个回答：600519处于吸筹阶段"
        )));
    }
    v
}

#[tokio::test]
async fn session_end_saves_preferences_and_session_memories() {
    let (_d, s, _c) = store().await;
    s.save(NewMemory::new(MemoryType::Preference, "不做创业板"))
        .await
        .unwrap();
    let p = FixedReply::new(
        "[偏好] 不追涨，只在回调时买入\n[偏好] 不做创业板。\n600519 处于吸筹末期，等待Spring确认\n",
    );
    let out = extract_session_memories(&s, &conversation(30), &p, "conversation:c1")
        .await
        .unwrap();
    assert!(out.called_model);
    assert_eq!(out.saved.len(), 2);
    assert_eq!(out.duplicates, 1, "不做创业板 was already stored");

    let req = &p.requests()[0];
    assert_eq!(req.system, SESSION_PROMPT);
    let text = req.messages[0].text();
    assert_eq!(text.lines().count(), 40, "last 40 messages");
    assert!(text.contains("[user] 第29个问题") && !text.contains("第9个问题"));

    let prefs = s.list(Some(MemoryType::Preference), 10).await.unwrap();
    assert!(prefs.iter().any(|m| m.content == "不追涨，只在回调时买入"));
    let sessions = s.list(Some(MemoryType::Session), 10).await.unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].content, "600519 处于吸筹末期，等待Spring确认");
    assert_eq!(sessions[0].codes, vec!["600519"]);
    assert_eq!(sessions[0].source_ref, "conversation:c1");

    // the same reply again adds nothing
    let again = extract_session_memories(&s, &conversation(3), &p, "conversation:c2")
        .await
        .unwrap();
    assert!(again.saved.is_empty());
    assert_eq!(again.duplicates, 3);
}

#[tokio::test]
async fn near_duplicates_are_not_saved_twice() {
    let (_d, s, _c) = store().await;
    s.save(NewMemory::new(
        MemoryType::Preference,
        "单只股票仓位不超过总资金的百分之二十",
    ))
    .await
    .unwrap();
    let p = FixedReply::new("[偏好] 单只股票仓位不超过总资金的百分之二十！");
    let out = extract_session_memories(&s, &conversation(2), &p, "")
        .await
        .unwrap();
    assert_eq!((out.saved.len(), out.duplicates), (0, 1));
    assert_eq!(s.count(Some(MemoryType::Preference)).await.unwrap(), 1);
}

#[tokio::test]
async fn no_model_call_without_user_input_and_none_saves_nothing() {
    let (_d, s, _c) = store().await;
    let p = FixedReply::new("无");
    let out = extract_session_memories(&s, &[Message::assistant("你好")], &p, "")
        .await
        .unwrap();
    assert!(!out.called_model);
    assert!(p.requests().is_empty());
    let out = extract_session_memories(&s, &conversation(2), &p, "")
        .await
        .unwrap();
    assert!(out.called_model && out.saved.is_empty());
    assert_eq!(s.count(None).await.unwrap(), 0);
}

#[tokio::test]
async fn flush_saves_preference_signals_and_is_recalled() {
    let (_d, s, _c) = store().await;
    let p = FixedReply::new("- 不买ST股票\n- 止损线设在8%\n- 以上为对话摘要\n- 短");
    let head = vec![
        Message::user("我的规矩是不买ST股票，止损线设在8%"),
        Message::assistant("好的，后续分析都会排除ST并按8%止损处理"),
        Message::user("那再看看000001平安银行"),
    ];
    let out = flush_before_compaction(&s, &head, &p).await.unwrap();
    assert_eq!(out.saved.len(), 2);
    assert_eq!(p.requests()[0].system, FLUSH_PROMPT);
    let prefs = s.list(Some(MemoryType::Preference), 10).await.unwrap();
    let mut got: Vec<&str> = prefs.iter().map(|m| m.content.as_str()).collect();
    got.sort();
    assert_eq!(got, vec!["不买ST股票", "止损线设在8%"]);
    assert_eq!(prefs[0].source_ref, "compaction_flush");

    // a later, unrelated turn still sees the preferences
    let r = s.recall("今天大盘怎么样").await.unwrap();
    assert!(r.block.starts_with("# 用户偏好\n- "), "{}", r.block);
    assert!(r.block.contains("- 不买ST股票") && r.block.contains("- 止损线设在8%"));
}

#[tokio::test]
async fn flush_skips_trivial_heads_and_reports_model_errors() {
    let (_d, s, _c) = store().await;
    let p = FixedReply::new("- 不买ST股票");
    let out = flush_before_compaction(&s, &[Message::user("好")], &p)
        .await
        .unwrap();
    assert!(!out.called_model && p.requests().is_empty());

    let failing = FixedReply {
        reply: Err(LlmError::new(ErrorKind::Timeout, "fixed", "idle timeout")),
        seen: Mutex::new(Vec::new()),
    };
    let head = conversation(2);
    let err = flush_before_compaction(&s, &head, &failing)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("idle timeout"), "{err}");
    assert_eq!(s.count(None).await.unwrap(), 0);
}
