//! The texts of a compaction: the head as the summary request sees it, the deterministic
//! fallback summary (REFERENCE §3.7) and the block that replaces the head (§3.5 step 11).

use wyckoff_engine::codes::stock_codes;
use wyckoff_protocol::{Message, UserOrigin};

use super::condense::{condense_tool_result, truncate_chars};

/// System prompt of the summary request (REFERENCE §3.5 step 8).
pub const COMPACTION_PROMPT: &str = "请将以下对话历史总结为简洁的上下文摘要，保留关键信息：1. 用户的目标和意图 2. 已完成的操作和结果（保留具体股票代码、价格、信号等数据） 3. 工具调用的关键发现和结论 4. 未完成的任务 — 用中文输出，控制在 500 字以内。只输出摘要，不要其他内容。";
/// The assistant's reply after the summary, so the tail reads as a continuation.
pub const SUMMARY_ACK: &str = "好的，我已了解之前的对话上下文，请继续。";
/// An LLM summary is cut to this many characters.
pub const MAX_SUMMARY_CHARS: usize = 500;
/// A shorter LLM summary is treated as a failure.
pub const MIN_SUMMARY_CHARS: usize = 20;
/// The deterministic summary is cut to this many characters.
pub const MAX_LOCAL_SUMMARY_CHARS: usize = 1200;
/// Characters of a tool result in the summary request.
const TOOL_LINE_CHARS: usize = 400;
/// Characters of tool-call arguments in the summary request.
const ARGS_CHARS: usize = 80;
/// Distinct stock codes listed in the summary block.
const MAX_CODES: usize = 8;

/// The head as one text for the summary request: roles in brackets, large tool results
/// condensed per tool. The messages themselves are not touched.
pub fn serialize_head(head: &[Message]) -> String {
    serialize_head_within(head, usize::MAX)
}

/// Like [`serialize_head`], at most about `max_chars`: the newest messages win (an
/// earlier summary at the start is always kept); what does not fit is only in the archive.
/// Older messages are never condensed when they will not be sent.
pub fn serialize_head_within(head: &[Message], max_chars: usize) -> String {
    let (first, rest) = match head.split_first() {
        Some((
            m @ Message::User {
                origin: UserOrigin::Summary,
                ..
            },
            rest,
        )) => (Some(m), rest),
        _ => (None, head),
    };
    let mut used = first.map_or(0, |m| head_lines(m).chars().count());
    let mut newest_first: Vec<String> = Vec::new();
    let mut omitted = 0;
    for (i, m) in rest.iter().enumerate().rev() {
        let line = head_lines(m);
        let n = line.chars().count() + 1;
        if used + n > max_chars {
            omitted = i + 1;
            break;
        }
        used += n;
        newest_first.push(line);
    }
    let mut lines: Vec<String> = Vec::with_capacity(newest_first.len() + 2);
    if let Some(m) = first {
        lines.push(head_lines(m));
    }
    if omitted > 0 {
        lines.push(format!("[更早的 {omitted} 条消息未列出，已归档]"));
    }
    lines.extend(newest_first.into_iter().rev().filter(|l| !l.is_empty()));
    lines.join("\n")
}

/// One message as summary-request lines.
fn head_lines(m: &Message) -> String {
    match m {
        Message::User { content, origin } => {
            let role = match origin {
                UserOrigin::Summary => "summary",
                UserOrigin::SystemNotification => "notification",
                UserOrigin::User | UserOrigin::InternalRetry => "user",
            };
            format!("[{role}] {content}")
        }
        Message::Assistant {
            content,
            tool_calls,
            ..
        } => {
            let mut out = String::new();
            if !tool_calls.is_empty() {
                let calls: Vec<String> = tool_calls
                    .iter()
                    .map(|c| {
                        format!(
                            "{}({})",
                            c.name,
                            truncate_chars(&c.args.to_string(), ARGS_CHARS)
                        )
                    })
                    .collect();
                out.push_str(&format!("[assistant:tool_call] {}", calls.join(", ")));
            }
            if !content.trim().is_empty() {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&format!("[assistant] {content}"));
            }
            out
        }
        // One pass straight to the line budget (the reference's intermediate
        // 600-character shrink changes nothing the line keeps).
        Message::Tool { name, content, .. } => format!(
            "[tool:{name}] {}",
            condense_tool_result(name, content, TOOL_LINE_CHARS)
        ),
    }
}

/// Stock codes mentioned anywhere in the messages (texts and tool-call arguments), distinct,
/// in order, at most `max`.
pub fn codes_in(messages: &[Message], max: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in messages {
        let mut texts = vec![m.text().to_owned()];
        texts.extend(m.tool_calls().iter().map(|c| c.args.to_string()));
        for t in texts {
            for c in stock_codes(&t) {
                if out.len() < max && !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        if out.len() >= max {
            break;
        }
    }
    out
}

/// The deterministic summary used when the model's fails (REFERENCE §3.7): codes, what the
/// user asked, what was concluded, what the tools found; at most 1,200 characters.
pub fn local_summary(head: &[Message]) -> String {
    if head.is_empty() {
        return "无前序对话。".to_owned();
    }
    let mut lines = vec!["前序对话已压缩为摘要。".to_owned()];
    let codes = codes_in(head, 12);
    if !codes.is_empty() {
        lines.push(format!("涉及标的：{}", codes.join(", ")));
    }
    // Earlier summaries carry what came before them.
    for m in head {
        if let Message::User {
            content,
            origin: UserOrigin::Summary,
        } = m
        {
            lines.push(format!(
                "更早的摘要：{}",
                truncate_chars(&summary_of_block(content), 300)
            ));
        }
    }
    let users: Vec<&str> = head
        .iter()
        .filter_map(|m| match m {
            Message::User {
                content,
                origin: UserOrigin::User,
            } if !content.trim().is_empty() => Some(content.as_str()),
            _ => None,
        })
        .collect();
    if !users.is_empty() {
        lines.push("用户关注：".to_owned());
        for u in &users[users.len().saturating_sub(6)..] {
            lines.push(format!("- {}", truncate_chars(u.trim(), 180)));
        }
    }
    let answers: Vec<&str> = head
        .iter()
        .filter_map(|m| match m {
            Message::Assistant { content, .. } if !content.trim().is_empty() => {
                Some(content.as_str())
            }
            _ => None,
        })
        .filter(|c| *c != SUMMARY_ACK)
        .collect();
    if !answers.is_empty() {
        lines.push("已给出的主要结论：".to_owned());
        for a in &answers[answers.len().saturating_sub(6)..] {
            lines.push(format!("- {}", truncate_chars(a.trim(), 220)));
        }
    }
    let tools: Vec<(&str, &str)> = head
        .iter()
        .filter_map(|m| match m {
            Message::Tool { name, content, .. } => Some((name.as_str(), content.as_str())),
            _ => None,
        })
        .collect();
    if !tools.is_empty() {
        lines.push("工具结果要点：".to_owned());
        for (name, content) in &tools[tools.len().saturating_sub(4)..] {
            lines.push(format!(
                "- {name}: {}",
                condense_tool_result(name, content, 220)
            ));
        }
    }
    truncate_chars(&lines.join("\n"), MAX_LOCAL_SUMMARY_CHARS)
}

/// The summary part of an earlier summary block (without its archive list).
fn summary_of_block(block: &str) -> String {
    let body = block.strip_prefix("[对话摘要]").unwrap_or(block);
    let body = body.split("\n\n[可恢复归档]").next().unwrap_or(body);
    body.trim().to_owned()
}

/// Archive references quoted by earlier summaries in the head, so they stay reachable.
pub fn earlier_archive_refs(head: &[Message]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in head {
        if let Message::User {
            content,
            origin: UserOrigin::Summary,
        } = m
        {
            for word in content.split_whitespace() {
                if super::archive::parse_reference(word).is_ok() && !out.iter().any(|r| r == word) {
                    out.push(word.to_owned());
                }
            }
        }
    }
    out
}

/// The user-role message that replaces the head.
pub fn summary_block(summary: &str, archive_refs: &[String], codes: &[String]) -> String {
    let mut s = format!("[对话摘要]\n{}", summary.trim());
    if !archive_refs.is_empty() || !codes.is_empty() {
        s.push_str("\n\n[可恢复归档]");
        for r in archive_refs {
            s.push_str("\n- ");
            s.push_str(r);
        }
        if !archive_refs.is_empty() {
            s.push_str("\n- 原始消息可用 query_history 按上述 archive:// 引用重新打开");
        }
        if !codes.is_empty() {
            let shown = &codes[..codes.len().min(MAX_CODES)];
            s.push_str(&format!("\n- 涉及标的：{}", shown.join(", ")));
        }
    }
    s
}
