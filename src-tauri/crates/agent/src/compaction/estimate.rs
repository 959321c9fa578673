//! Token estimate for the compaction trigger. Errs on the high side: triggering a little
//! early costs a summary; triggering late overflows the model's window.

use wyckoff_protocol::{Message, ToolSchema};

/// Tokens of framing per message (role markers, separators) that no text shows.
const MESSAGE_OVERHEAD: u64 = 4;
/// Tokens of framing per tool call and per tool schema (ids, type tags).
const CALL_OVERHEAD: u64 = 8;

/// CJK ideographs, CJK punctuation, full-width forms, kana and hangul: the ranges the
/// reference counts at 1.3 tokens per character (REFERENCE §3.3).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0xF900..=0xFAFF
        | 0x3000..=0x303F
        | 0xFF00..=0xFFEF
        | 0x3040..=0x30FF
        | 0xAC00..=0xD7AF)
}

/// (CJK chars, other chars, UTF-8 bytes of the other chars). Walks bytes: ASCII is one
/// compare, and every CJK range above is a 3-byte sequence, decoded only then.
fn counts(text: &str) -> (u64, u64, u64) {
    let bytes = text.as_bytes();
    let (mut cjk, mut chars) = (0u64, 0u64);
    let mut cjk_bytes = 0u64;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        chars += 1;
        if b < 0x80 {
            i += 1;
        } else if b < 0xE0 {
            i += 2;
        } else if b < 0xF0 {
            // valid UTF-8 (a &str): two continuation bytes follow
            let c = (u32::from(b & 0x0F) << 12)
                | (u32::from(bytes[i + 1] & 0x3F) << 6)
                | u32::from(bytes[i + 2] & 0x3F);
            if char::from_u32(c).is_some_and(is_cjk) {
                cjk += 1;
                cjk_bytes += 3;
            }
            i += 3;
        } else {
            i += 4;
        }
    }
    let rest = chars - cjk;
    let rest_bytes = bytes.len() as u64 - cjk_bytes;
    (cjk, rest, rest_bytes)
}

/// The reference formula, `int(#CJK × 1.3) + max(len(rest)//2, utf8_len(rest)//3)`: the
/// floor [`text_tokens`] never goes below (kept for tests and comparisons).
pub fn reference_text_tokens(text: &str) -> u64 {
    let (cjk, rest, rest_bytes) = counts(text);
    cjk * 13 / 10 + (rest / 2).max(rest_bytes / 3)
}

/// Tokens of one text: 1.3 per CJK character, and for the rest the larger of one per two
/// characters and one per three UTF-8 bytes, every fraction rounded up.
pub fn text_tokens(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    let (cjk, rest, rest_bytes) = counts(text);
    (cjk * 13).div_ceil(10) + rest.div_ceil(2).max(rest_bytes.div_ceil(3))
}

/// Tokens of one message: its text, reasoning (some vendors need it sent back), and each
/// tool call's name, id and arguments.
pub fn message_tokens(m: &Message) -> u64 {
    let mut n = MESSAGE_OVERHEAD + text_tokens(m.text());
    match m {
        Message::Assistant {
            tool_calls,
            reasoning,
            ..
        } => {
            if let Some(r) = reasoning {
                n += text_tokens(r);
            }
            for c in tool_calls {
                n += CALL_OVERHEAD + text_tokens(&c.name) + text_tokens(&c.id);
                n += text_tokens(&c.args.to_string());
            }
        }
        Message::Tool {
            name, tool_call_id, ..
        } => n += text_tokens(name) + text_tokens(tool_call_id),
        Message::User { .. } => {}
    }
    n
}

/// Tokens of the tool definitions sent with every request.
pub fn tools_tokens(tools: &[ToolSchema]) -> u64 {
    tools
        .iter()
        .map(|t| {
            CALL_OVERHEAD
                + text_tokens(&t.name)
                + text_tokens(&t.description)
                + text_tokens(&t.parameters.to_string())
        })
        .sum()
}

/// Tokens of a whole request: system prompt, tool schemas and messages.
pub fn request_tokens(system_prompt: &str, tools: &[ToolSchema], messages: &[Message]) -> u64 {
    text_tokens(system_prompt)
        + tools_tokens(tools)
        + messages.iter().map(message_tokens).sum::<u64>()
}

/// Compaction is due when the request fills at least 25 % of the context window.
pub fn should_compact(estimate: u64, context_window: u32) -> bool {
    estimate.saturating_mul(4) >= u64::from(context_window)
}
