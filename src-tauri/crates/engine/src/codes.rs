//! A-share stock codes written in free text — a user's message, a memory, a conversation
//! being compacted, a chat answer. One rule for the agent's loop guard and compaction
//! summary and for long-term memory; the chat's stock links (`ui/src/chat/stockLinks.ts`)
//! scan the rendered answer in the webview with the same rule, and both sides are tested
//! against one set of cases (`ui/src/chat/fixtures/stock_codes.json`) so they cannot drift.
//!
//! A mention is a run of exactly six digits (ASCII, or full-width ０–９ as an IME types
//! them) that
//! * is a stock's code ([`Board::of_stock`]): an ETF such as 510300, an index such as
//!   399001 or an amount such as 123456 is not;
//! * is not part of a decimal number: no `.` with a digit on its other side (`1.600519`,
//!   `600519.5`), while `600519.SH` and a sentence's final `600519.` are codes;
//! * is not a JSON number value (`"volume":600000,` in a tool's output).
//!
//! Letters and CJK around it are fine (`sh600519`, `茅台600519`).

use crate::Board;

/// The ASCII digit of an ASCII or full-width digit.
fn digit(c: char) -> Option<char> {
    match c {
        '0'..='9' => Some(c),
        '０'..='９' => char::from_u32(u32::from(c) - 0xFEE0),
        _ => None,
    }
}

/// Every code mentioned in `text`, in order, repeats included, as six ASCII digits.
pub fn code_mentions(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: Option<usize>| i.and_then(|i| chars.get(i)).copied();
    let is_digit = |c: Option<char>| c.and_then(digit).is_some();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        let mut run = String::new();
        while let Some(d) = chars.get(i).copied().and_then(digit) {
            run.push(d);
            i += 1;
        }
        if run.is_empty() {
            i += 1;
            continue;
        }
        let (before, before2) = (at(start.checked_sub(1)), at(start.checked_sub(2)));
        let (after, after2) = (at(Some(i)), at(Some(i + 1)));
        let decimal =
            (before == Some('.') && is_digit(before2)) || (after == Some('.') && is_digit(after2));
        let json_number =
            before == Some(':') && before2 == Some('"') && matches!(after, Some(',' | '}' | ']'));
        if !decimal && !json_number && Board::of_stock(&run).is_some() {
            out.push(run);
        }
    }
    out
}

/// The distinct codes mentioned in `text`, in order of first mention.
pub fn stock_codes(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in code_mentions(text) {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cases the webview's scanner is tested against too.
    const SHARED: &str = include_str!("../../../../ui/src/chat/fixtures/stock_codes.json");

    #[derive(serde::Deserialize)]
    struct Case {
        text: String,
        codes: Vec<String>,
    }

    #[test]
    fn the_shared_cases() {
        let cases: Vec<Case> = serde_json::from_str(SHARED).unwrap();
        assert!(cases.len() >= 20, "{}", cases.len());
        for c in cases {
            assert_eq!(code_mentions(&c.text), c.codes, "text: {}", c.text);
        }
    }

    #[test]
    fn distinct_in_order_of_first_mention() {
        let cases: &[(&str, &[&str])] = &[
            ("600519 again 600519", &["600519"]),
            ("看看000001和600519，再看000001", &["000001", "600519"]),
            ("６００５１９和600519", &["600519"]),
            ("无代码", &[]),
        ];
        for (text, want) in cases {
            assert_eq!(stock_codes(text), *want, "text: {text}");
        }
    }
}
