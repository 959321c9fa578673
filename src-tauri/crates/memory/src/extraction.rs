//! Writing memories with the model (seed 记忆写入):
//!
//! - [`extract_session_memories`]: at the end of a session the last 40 messages are sent
//!   with an extraction prompt; lines tagged `[偏好]` become preferences, every other
//!   non-empty line a session memory (the seed's rule).
//! - [`flush_before_compaction`]: before compaction drops old messages, the preference
//!   signals in them are saved the same way (Memory Flush).
//!
//! Both de-duplicate against what is stored: equal after normalisation, or character
//! bigram Jaccard ≥ 0.9. Rendering and reply parsing are pure functions.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use tracing::{debug, warn};
use wyckoff_llm::{ChatRequest, Provider};
use wyckoff_protocol::{Message, UserOrigin};

use crate::{MemoryStore, MemoryType, NewMemory, Result, SaveOutcome, capacity};

/// Messages of a session sent to extraction.
pub const SESSION_WINDOW: usize = 40;
/// Tool results are cut to this many characters in the extraction text.
pub const TOOL_CHARS: usize = 200;
/// Messages of the compacted head sent to the flush.
pub const FLUSH_WINDOW: usize = 20;
/// Each flushed message is cut to this many characters.
pub const FLUSH_CHARS: usize = 300;
/// Near-duplicate threshold for character-bigram Jaccard similarity.
pub const DUPLICATE_JACCARD: f64 = 0.9;
/// At most this many memories are taken from one reply.
pub const MAX_ITEMS: usize = 10;

pub const SESSION_PROMPT: &str = "你负责为一个 A 股威科夫分析助手整理长期记忆。阅读下面的对话，找出下次会话仍然有用的信息，用中文每条写一行：\n\
- 用户的投资偏好、风险边界、操作习惯和禁忌（例如“不追涨”“单只仓位不超过 20%”），这一行以“[偏好]”开头；\n\
- 其他值得记住的结论，例如对某只股票或板块的判断、用户做某个决定的理由，直接写内容，不加前缀；涉及具体股票时写上代码或名称。\n\
不要记录工具调用过程、临时指令、寒暄或行情快照。最多 5 条。没有值得记住的内容时只回复“无”。";

pub const FLUSH_PROMPT: &str = "下面这段对话即将被压缩，压缩后细节会丢失。请找出其中用户的持久偏好和重要事实，每条一行：\n\
- 投资偏好（例如“不买 ST 股”“偏好大盘蓝筹”“不追涨”）；\n\
- 风险偏好（例如“止损线 8%”“仓位不超过 20%”）；\n\
- 重要结论（例如“000001 适合长期持有”“看好银行板块”）。\n\
不要提取临时操作指令或工具调用细节。没有值得记住的内容时只回复“无”。";

/// A memory parsed from a model reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extracted {
    pub memory_type: MemoryType,
    pub content: String,
}

/// What an extraction or flush did.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ExtractionOutcome {
    /// False when there was nothing worth sending (no model call was made).
    pub called_model: bool,
    pub saved: Vec<i64>,
    /// Parsed items dropped as duplicates of stored memories (or of each other).
    pub duplicates: usize,
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() > max {
        let head: String = s.chars().take(max).collect();
        format!("{head}...")
    } else {
        s.to_string()
    }
}

/// The last `SESSION_WINDOW` messages as `[role] text` lines for the extraction prompt.
/// Loop-guard retries are runtime noise and left out; tool results are cut.
pub fn render_session(messages: &[Message]) -> String {
    let start = messages.len().saturating_sub(SESSION_WINDOW);
    let mut lines = Vec::new();
    for m in &messages[start..] {
        match m {
            Message::User { content, origin } => {
                let role = match origin {
                    UserOrigin::User => "user",
                    UserOrigin::SystemNotification => "notification",
                    UserOrigin::Summary => "summary",
                    UserOrigin::InternalRetry => continue,
                };
                if !content.trim().is_empty() {
                    lines.push(format!("[{role}] {}", content.trim()));
                }
            }
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                if !content.trim().is_empty() {
                    lines.push(format!("[assistant] {}", content.trim()));
                }
                for call in tool_calls {
                    lines.push(format!(
                        "[assistant:tool_call] {}({})",
                        call.name,
                        cut(&call.args.to_string(), 80)
                    ));
                }
            }
            Message::Tool { name, content, .. } => {
                if !content.trim().is_empty() {
                    lines.push(format!("[tool:{name}] {}", cut(content.trim(), TOOL_CHARS)));
                }
            }
        }
    }
    lines.join("\n")
}

/// The flush text: user and assistant messages with more than 10 characters, each cut
/// to 300, the last 20 of them. `None` when fewer than two qualify (nothing to learn).
pub fn render_flush(messages: &[Message]) -> Option<String> {
    let lines: Vec<String> = messages
        .iter()
        .filter_map(|m| {
            let role = match m {
                Message::User {
                    origin: UserOrigin::InternalRetry,
                    ..
                } => return None,
                Message::User { .. } => "user",
                Message::Assistant { .. } => "assistant",
                Message::Tool { .. } => return None,
            };
            let text = m.text().trim();
            (text.chars().count() > 10).then(|| format!("[{role}] {}", cut(text, FLUSH_CHARS)))
        })
        .collect();
    if lines.len() < 2 {
        return None;
    }
    let start = lines.len().saturating_sub(FLUSH_WINDOW);
    Some(lines[start..].join("\n"))
}

/// Strips list markers the model likes to add: "- ", "* ", "• ", "1. ", "2、", "(3) ".
fn strip_marker(line: &str) -> &str {
    let mut s = line.trim_start_matches(|c: char| c.is_whitespace() || "-*•·".contains(c));
    let digits = s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits > 0 {
        let rest = &s[digits..];
        if let Some(r) = rest
            .strip_prefix('.')
            .or_else(|| rest.strip_prefix('、'))
            .or_else(|| rest.strip_prefix(')'))
            .or_else(|| rest.strip_prefix('）'))
        {
            s = r;
        }
    }
    s.trim()
}

/// Splits a leading `[tag]` or `【tag】` (≤ 8 characters) off a line.
fn split_tag(line: &str) -> (Option<&str>, &str) {
    for (open, close) in [('[', ']'), ('【', '】')] {
        if let Some(rest) = line.strip_prefix(open)
            && let Some(end) = rest.find(close)
        {
            let tag = &rest[..end];
            if tag.chars().count() <= 8 {
                let body = rest[end + close.len_utf8()..]
                    .trim_start_matches(|c: char| c.is_whitespace() || c == ':' || c == '：');
                return (Some(tag.trim()), body.trim());
            }
        }
    }
    (None, line)
}

/// "无", "没有", "暂无" (with punctuation) mean "nothing to remember".
fn is_none_line(s: &str) -> bool {
    let core: String = s.chars().filter(|c| c.is_alphanumeric()).collect();
    matches!(core.as_str(), "无" | "没有" | "暂无" | "none")
}

/// A header such as "提取结果：" introduces items; it is not one.
fn is_header(s: &str) -> bool {
    s.ends_with(':') || s.ends_with('：')
}

/// Parses the session-extraction reply: `[偏好]` → preference, other non-empty lines →
/// session (other tags are stripped). List markers, headers and "无" are ignored;
/// repeats are dropped; at most [`MAX_ITEMS`].
pub fn parse_session_reply(reply: &str) -> Vec<Extracted> {
    let mut out: Vec<Extracted> = Vec::new();
    let mut seen = HashSet::new();
    for raw in reply.lines() {
        let line = strip_marker(raw);
        if line.is_empty() || is_none_line(line) || is_header(line) {
            continue;
        }
        let (tag, body) = split_tag(line);
        let memory_type = match tag {
            Some("偏好") => MemoryType::Preference,
            _ => MemoryType::Session,
        };
        if body.chars().count() < 2 || is_none_line(body) {
            continue;
        }
        if seen.insert(normalise(body)) {
            out.push(Extracted {
                memory_type,
                content: body.to_string(),
            });
        }
        if out.len() >= MAX_ITEMS {
            break;
        }
    }
    out
}

/// Words that mark a line as talk about the conversation itself, not a preference.
const META_WORDS: [&str; 6] = ["摘要", "压缩", "总结", "对话历史", "分析讨论", "上下文"];

/// Parses the flush reply into preference contents: lines of at least 5 characters, no
/// "无", no talk about the conversation itself; an optional `[偏好]` tag is stripped.
pub fn parse_flush_reply(reply: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for raw in reply.lines() {
        let line = strip_marker(raw);
        let (_, body) = split_tag(line);
        if body.chars().count() < 5
            || is_none_line(body)
            || is_header(body)
            || META_WORDS.iter().any(|w| body.contains(w))
        {
            continue;
        }
        if seen.insert(normalise(body)) {
            out.push(body.to_string());
        }
        if out.len() >= MAX_ITEMS {
            break;
        }
    }
    out
}

/// Lower-cased letters and digits only (CJK included): punctuation and spacing do not
/// make two memories different.
pub fn normalise(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn char_bigrams(s: &str) -> HashSet<(char, char)> {
    let chars: Vec<char> = s.chars().collect();
    chars.windows(2).map(|w| (w[0], w[1])).collect()
}

/// Jaccard similarity of the character-bigram sets of two normalised strings.
pub fn bigram_jaccard(a: &str, b: &str) -> f64 {
    let (x, y) = (char_bigrams(&normalise(a)), char_bigrams(&normalise(b)));
    if x.is_empty() && y.is_empty() {
        return if normalise(a) == normalise(b) {
            1.0
        } else {
            0.0
        };
    }
    let inter = x.intersection(&y).count() as f64;
    let union = x.union(&y).count() as f64;
    inter / union
}

pub fn is_near_duplicate(a: &str, b: &str) -> bool {
    normalise(a) == normalise(b) || bigram_jaccard(a, b) >= DUPLICATE_JACCARD
}

async fn ask(provider: &dyn Provider, system: &str, text: String) -> Result<String> {
    let request = ChatRequest {
        system: system.to_string(),
        messages: vec![Message::user(text)],
        tools: Vec::new(),
        max_tokens: Some(1024),
    };
    Ok(provider.complete(&request).await?.text)
}

/// Saves items unless they nearly duplicate a stored memory of the same type (or an
/// earlier item of this batch).
async fn save_new(
    store: &MemoryStore,
    items: Vec<Extracted>,
    source_ref: &str,
    extractor: &str,
) -> Result<ExtractionOutcome> {
    let mut outcome = ExtractionOutcome {
        called_model: true,
        ..Default::default()
    };
    let mut known: Vec<(MemoryType, String)> = Vec::new();
    for t in MemoryType::ALL {
        if items.iter().any(|i| i.memory_type == t) {
            for m in store.list(Some(t), capacity::cap(t)).await? {
                known.push((t, m.content));
            }
        }
    }
    for item in items {
        if known
            .iter()
            .any(|(t, c)| *t == item.memory_type && is_near_duplicate(c, &item.content))
        {
            outcome.duplicates += 1;
            continue;
        }
        let new = NewMemory::new(item.memory_type, item.content.clone())
            .with_source_ref(source_ref)
            .with_metadata(serde_json::json!({ "extractor": extractor }));
        match store.save(new).await? {
            SaveOutcome::Inserted(id) => outcome.saved.push(id),
            SaveOutcome::Duplicate(_) => outcome.duplicates += 1,
        }
        known.push((item.memory_type, item.content));
    }
    Ok(outcome)
}

/// Session-end extraction: the last 40 messages to the model with [`SESSION_PROMPT`];
/// `[偏好]` lines become preferences, others session memories. `source_ref` names the
/// conversation (e.g. `conversation:{id}`). No model call when the user never spoke.
pub async fn extract_session_memories(
    store: &MemoryStore,
    messages: &[Message],
    provider: &dyn Provider,
    source_ref: &str,
) -> Result<ExtractionOutcome> {
    let user_spoke = messages.iter().any(|m| {
        matches!(m, Message::User { origin: UserOrigin::User, content } if !content.trim().is_empty())
    });
    if !user_spoke {
        return Ok(ExtractionOutcome::default());
    }
    let reply = ask(provider, SESSION_PROMPT, render_session(messages)).await?;
    let items = parse_session_reply(&reply);
    debug!(items = items.len(), "session extraction parsed");
    save_new(store, items, source_ref, "session_end").await
}

/// Memory Flush before compaction: preference signals in the messages about to be
/// compressed are saved as preferences. The caller (compaction) should log a failure and
/// go on compacting: losing a flush must not block the turn.
pub async fn flush_before_compaction(
    store: &MemoryStore,
    messages: &[Message],
    provider: &dyn Provider,
) -> Result<ExtractionOutcome> {
    let Some(text) = render_flush(messages) else {
        return Ok(ExtractionOutcome::default());
    };
    let reply = match ask(provider, FLUSH_PROMPT, text).await {
        Ok(r) => r,
        Err(e) => {
            warn!(error = %e, "memory flush before compaction failed");
            return Err(e);
        }
    };
    let items = parse_flush_reply(&reply)
        .into_iter()
        .map(|content| Extracted {
            memory_type: MemoryType::Preference,
            content,
        })
        .collect();
    save_new(store, items, "compaction_flush", "compaction_flush").await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wyckoff_protocol::ToolCall;

    fn ex(t: MemoryType, c: &str) -> Extracted {
        Extracted {
            memory_type: t,
            content: c.to_string(),
        }
    }

    #[test]
    fn session_reply_table() {
        use MemoryType::{Preference as P, Session as S};
        let cases: Vec<(&str, Vec<Extracted>)> = vec![
            ("无", vec![]),
            ("无。", vec![]),
            ("", vec![]),
            ("[偏好] 不追涨", vec![ex(P, "不追涨")]),
            (
                "【偏好】：单只仓位不超过20%",
                vec![ex(P, "单只仓位不超过20%")],
            ),
            (
                "- [偏好] 只做威科夫形态\n- 600519 处于吸筹末期\n",
                vec![ex(P, "只做威科夫形态"), ex(S, "600519 处于吸筹末期")],
            ),
            (
                "提取结果：\n1. [偏好] 不做创业板\n2、[决策] 因板块轮动加速缩短持仓周期\n3) 看好银行板块",
                vec![
                    ex(P, "不做创业板"),
                    ex(S, "因板块轮动加速缩短持仓周期"),
                    ex(S, "看好银行板块"),
                ],
            ),
            ("[偏好] 不追涨\n* [偏好] 不追涨。", vec![ex(P, "不追涨")]),
            ("[偏好]\n[偏好] 无", vec![]),
            ("  \n\n用户偏好尾盘买入\n", vec![ex(S, "用户偏好尾盘买入")]),
        ];
        for (reply, want) in cases {
            assert_eq!(parse_session_reply(reply), want, "reply: {reply:?}");
        }
    }

    #[test]
    fn session_reply_is_capped() {
        let reply: String = (0..20).map(|i| format!("结论第{i}条\n")).collect();
        assert_eq!(parse_session_reply(&reply).len(), MAX_ITEMS);
    }

    #[test]
    fn flush_reply_table() {
        let cases: Vec<(&str, Vec<&str>)> = vec![
            ("无", vec![]),
            ("没有。", vec![]),
            (
                "- 不买ST股票\n- 止损线8%以内",
                vec!["不买ST股票", "止损线8%以内"],
            ),
            ("[偏好] 偏好大盘蓝筹股", vec!["偏好大盘蓝筹股"]),
            (
                "短句\n- 以上是对话摘要的内容\n- 根据上下文用户偏好短线",
                vec![],
            ),
            ("用户偏好如下：\n1. 仓位不超过20%", vec!["仓位不超过20%"]),
            (
                "000001适合长期持有\n000001适合长期持有！",
                vec!["000001适合长期持有"],
            ),
        ];
        for (reply, want) in cases {
            assert_eq!(parse_flush_reply(reply), want, "reply: {reply:?}");
        }
    }

    #[test]
    fn near_duplicate_table() {
        let cases = [
            ("不追涨", "不追涨。", true),
            ("Only Wyckoff setups", "only wyckoff setups!", true),
            (
                "单只股票仓位不超过百分之二十",
                "单只股票仓位不超过百分之二十。",
                true,
            ),
            (
                "单只股票仓位不超过百分之二十",
                "单只股票仓位不超过百分之三十",
                false,
            ),
            ("不追涨", "不杀跌", false),
            ("偏好大盘蓝筹", "偏好小盘成长", false),
        ];
        for (a, b, want) in cases {
            assert_eq!(
                is_near_duplicate(a, b),
                want,
                "{a} / {b}: {}",
                bigram_jaccard(a, b)
            );
        }
        assert!((bigram_jaccard("abcd", "abce") - 0.5).abs() < 1e-9);
    }

    #[test]
    fn render_session_keeps_the_last_40_and_cuts_tool_results() {
        let mut msgs = vec![Message::user("最早的一条不应出现")];
        for i in 0..38 {
            msgs.push(Message::assistant(format!("回复{i}")));
        }
        let call = ToolCall::new("c1", "analyze_stock", json!({"code": "600519"}));
        msgs.push(Message::Assistant {
            content: String::new(),
            tool_calls: vec![call.clone()],
            reasoning: None,
            reasoning_signature: None,
        });
        msgs.push(Message::tool_result(&call, "x".repeat(500), false));
        msgs.push(Message::user_with_origin(
            "请调用工具",
            UserOrigin::InternalRetry,
        ));
        let text = render_session(&msgs);
        assert!(!text.contains("最早的一条"));
        assert!(text.starts_with("[assistant] 回复1\n"));
        assert!(text.contains("[assistant:tool_call] analyze_stock({\"code\":\"600519\"})"));
        assert!(text.contains(&format!("[tool:analyze_stock] {}...", "x".repeat(200))));
        assert!(!text.contains("请调用工具"));
    }

    #[test]
    fn render_flush_needs_two_substantial_messages() {
        let short = vec![
            Message::user("好的"),
            Message::assistant("收到，马上分析600519的走势"),
        ];
        assert_eq!(render_flush(&short), None);
        let ok = vec![
            Message::user("我一般不买ST股，止损线设在8%"),
            Message::assistant("明白，以后筛选会排除ST股票并按8%止损"),
        ];
        assert_eq!(
            render_flush(&ok).unwrap(),
            "[user] 我一般不买ST股，止损线设在8%\n[assistant] 明白，以后筛选会排除ST股票并按8%止损"
        );
    }
}
