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

/// Character counts of some text: what the estimate is computed from. Counts add up over
/// pieces cut on character boundaries, so a JSON value is counted as it is written out,
/// without building its text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    cjk: u64,
    chars: u64,
    bytes: u64,
}

/// Whether the 3-byte UTF-8 sequence `b0 b1 b2` encodes an [`is_cjk`] character, read
/// off the bytes (the ranges' bounds in UTF-8) rather than decoded. Non-short-circuit
/// operators keep it free of branches.
fn cjk_sequence(b0: u8, b1: u8, b2: u8) -> bool {
    // U+3000..=U+30FF, U+3400..=U+3FFF
    (b0 == 0xE3) & ((b1 <= 0x83) | (b1 >= 0x90))
        // U+4000..=U+4DBF, U+4E00..=U+4FFF (U+4DC0..=U+4DFF is not)
        | (b0 == 0xE4) & (b1 != 0xB7)
        // U+5000..=U+9FFF
        | (0xE5..=0xE9).contains(&b0)
        // U+AC00..=U+AFFF
        | (b0 == 0xEA) & (b1 >= 0xB0)
        // U+B000..=U+CFFF
        | (b0 == 0xEB) | (b0 == 0xEC)
        // U+D000..=U+D7AF
        | (b0 == 0xED) & ((b1 < 0x9E) | (b1 == 0x9E) & (b2 <= 0xAF))
        // U+F900..=U+FAFF, U+FF00..=U+FFEF
        | (b0 == 0xEF)
            & ((0xA4..=0xAB).contains(&b1)
                | (0xBC..=0xBE).contains(&b1)
                | (b1 == 0xBF) & (b2 <= 0xAF))
}

/// Bytes counted per round of a `u8` counter (at most 255).
const BLOCK: usize = 64;

impl Counts {
    fn of(text: &str) -> Self {
        let mut c = Counts::default();
        c.add(text);
        c
    }

    fn add(&mut self, text: &str) {
        let bytes = text.as_bytes();
        self.bytes += bytes.len() as u64;
        // Every byte but a continuation byte (0b10xx_xxxx) starts a character, and every
        // CJK range above is a 3-byte sequence led by a byte in 0xE3..=0xEF, a value no
        // continuation byte has, so each position is tested on its own. Both are counted
        // without branches in blocks the compiler turns into vector instructions; a block
        // without a byte that high (most of a JSON tool result) is not tested for CJK.
        let last_start = bytes.len().saturating_sub(2);
        let mut at = 0;
        while at < bytes.len() {
            let end = (at + BLOCK).min(bytes.len());
            let mut starts = 0u8;
            let mut high = 0u8;
            for &b in &bytes[at..end] {
                starts += u8::from((b as i8) >= -0x40);
                high = high.max(b);
            }
            self.chars += u64::from(starts);
            let seq_end = end.min(last_start);
            if high >= 0xE3 && at < seq_end {
                let lead = &bytes[at..seq_end];
                let second = &bytes[at + 1..seq_end + 1];
                let third = &bytes[at + 2..seq_end + 2];
                let mut found = 0u8;
                for ((&x, &y), &z) in lead.iter().zip(second).zip(third) {
                    found += u8::from(cjk_sequence(x, y, z));
                }
                self.cjk += u64::from(found);
            }
            at = end;
        }
    }

    /// (CJK chars, other chars, UTF-8 bytes of the other chars).
    fn split(self) -> (u64, u64, u64) {
        (self.cjk, self.chars - self.cjk, self.bytes - 3 * self.cjk)
    }

    /// [`text_tokens`] of the counted text.
    fn tokens(self) -> u64 {
        if self.bytes == 0 {
            return 0;
        }
        let (cjk, rest, rest_bytes) = self.split();
        (cjk * 13).div_ceil(10) + rest.div_ceil(2).max(rest_bytes.div_ceil(3))
    }
}

impl std::fmt::Write for Counts {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.add(s);
        Ok(())
    }
}

/// [`text_tokens`] of a JSON value's compact text (`value.to_string()`), without building it.
fn json_tokens(value: &serde_json::Value) -> u64 {
    use std::fmt::Write;
    let mut c = Counts::default();
    // Writing into `Counts` cannot fail; if it ever did, count the text the slow way.
    if write!(c, "{value}").is_err() {
        return text_tokens(&value.to_string());
    }
    c.tokens()
}

/// The reference formula, `int(#CJK × 1.3) + max(len(rest)//2, utf8_len(rest)//3)`: the
/// floor [`text_tokens`] never goes below (kept for tests and comparisons).
pub fn reference_text_tokens(text: &str) -> u64 {
    let (cjk, rest, rest_bytes) = Counts::of(text).split();
    cjk * 13 / 10 + (rest / 2).max(rest_bytes / 3)
}

/// Tokens of one text: 1.3 per CJK character, and for the rest the larger of one per two
/// characters and one per three UTF-8 bytes, every fraction rounded up.
pub fn text_tokens(text: &str) -> u64 {
    Counts::of(text).tokens()
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
                n += json_tokens(&c.args);
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
                + json_tokens(&t.parameters)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The byte walk before the word-at-a-time fast path, kept as the oracle.
    fn counts_by_char(text: &str) -> (u64, u64, u64) {
        let cjk = text.chars().filter(|c| is_cjk(*c)).count() as u64;
        let chars = text.chars().count() as u64;
        let cjk_bytes: usize = text
            .chars()
            .filter(|c| is_cjk(*c))
            .map(char::len_utf8)
            .sum();
        (cjk, chars - cjk, (text.len() - cjk_bytes) as u64)
    }

    #[test]
    fn counts_match_a_char_by_char_count() {
        let samples = [
            "",
            "a",
            "abcdefgh",
            "abcdefghi",
            "贵州茅台",
            "0123456贵州茅台abcdefghijklmnop，。！ｈｅｌｌｏ😀é",
            "ひらがなカタカナ한국어 emoji 😀😀 mixed 中文 text",
            "{\"code\":\"000001\",\"name\":\"平安银行\",\"l2_channel\":\"主升\"}",
        ];
        for s in samples {
            for k in [1, 3, 17] {
                let t = s.repeat(k);
                for skip in 0..t.chars().count().min(9) {
                    let u: String = t.chars().skip(skip).collect();
                    assert_eq!(Counts::of(&u).split(), counts_by_char(&u), "{u:?}");
                }
            }
        }
    }

    #[test]
    fn cjk_sequences_are_the_cjk_characters() {
        for c in '\u{800}'..='\u{FFFF}' {
            let mut buf = [0u8; 4];
            if let [b0, b1, b2] = *c.encode_utf8(&mut buf).as_bytes() {
                assert_eq!(
                    cjk_sequence(b0, b1, b2),
                    is_cjk(c),
                    "{c:?} U+{:04X}",
                    c as u32
                );
            }
        }
    }

    #[test]
    fn json_values_count_as_their_text() {
        let values = [
            json!(null),
            json!({"code": "600519", "mode": "price", "days": 30}),
            json!({"text": "放量突破\n\"引号\"", "n": [1.5, -2, 3e10], "e": {}, "z": "😀é"}),
            json!("纯文本"),
        ];
        for v in values {
            assert_eq!(json_tokens(&v), text_tokens(&v.to_string()), "{v}");
        }
    }
}
