//! Models that print tool calls (`<tool_call>{…}</tool_call>`) or reasoning
//! (`<think>…</think>`) as text: a streaming filter that turns them into real tool calls
//! and thinking, so the raw tags never reach the user. Text that could be the start of
//! a tag is held back until it is clear whether it is one.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;
use wyckoff_protocol::ToolCall;

use crate::args::parse_args;

/// What the filter lets through.
#[derive(Debug, Clone, PartialEq)]
pub enum Segment {
    Text(String),
    Thinking(String),
    Call(ToolCall),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    ToolCall,
    FunctionCall,
    Think,
}

impl Tag {
    const ALL: [Tag; 3] = [Tag::ToolCall, Tag::FunctionCall, Tag::Think];

    fn open(self) -> &'static str {
        match self {
            Tag::ToolCall => "<tool_call>",
            Tag::FunctionCall => "<function_call>",
            Tag::Think => "<think>",
        }
    }

    fn close(self) -> &'static str {
        match self {
            Tag::ToolCall => "</tool_call>",
            Tag::FunctionCall => "</function_call>",
            Tag::Think => "</think>",
        }
    }
}

#[derive(Debug, Default)]
pub struct TagFilter {
    /// Unprocessed text (a possible tag start, or the body of an open tag).
    buf: String,
    inside: Option<Tag>,
    calls: usize,
}

impl TagFilter {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, text: &str, out: &mut Vec<Segment>) {
        // Fast path: nothing pending and no tag can start in this piece.
        if self.buf.is_empty() && self.inside.is_none() && !text.contains('<') {
            if !text.is_empty() {
                out.push(Segment::Text(text.to_string()));
            }
            return;
        }
        self.buf.push_str(text);
        self.drain(out, false);
    }

    /// End of the response: whatever is held back is released.
    pub fn finish(&mut self, out: &mut Vec<Segment>) {
        self.drain(out, true);
        match self.inside.take() {
            Some(Tag::Think) => {
                if !self.buf.is_empty() {
                    out.push(Segment::Thinking(std::mem::take(&mut self.buf)));
                }
            }
            Some(tag) => {
                // An unclosed call at the very end: models often stop right there.
                let body = std::mem::take(&mut self.buf);
                match self.parse_call(&body) {
                    Some(call) => out.push(Segment::Call(call)),
                    None => out.push(Segment::Text(format!("{}{}", tag.open(), body))),
                }
            }
            None => {
                if !self.buf.is_empty() {
                    out.push(Segment::Text(std::mem::take(&mut self.buf)));
                }
            }
        }
    }

    fn drain(&mut self, out: &mut Vec<Segment>, at_end: bool) {
        loop {
            match self.inside {
                Some(tag) => {
                    if let Some(end) = self.buf.find(tag.close()) {
                        let body: String = self.buf[..end].to_string();
                        self.buf.drain(..end + tag.close().len());
                        self.inside = None;
                        match tag {
                            Tag::Think => {
                                if !body.is_empty() {
                                    out.push(Segment::Thinking(body));
                                }
                            }
                            _ => match self.parse_call(&body) {
                                Some(call) => out.push(Segment::Call(call)),
                                None => out.push(Segment::Text(format!(
                                    "{}{}{}",
                                    tag.open(),
                                    body,
                                    tag.close()
                                ))),
                            },
                        }
                        continue;
                    }
                    if tag == Tag::Think {
                        // Stream thinking as it comes, keeping a possible partial close tag.
                        let keep = partial_suffix_len(&self.buf, tag.close());
                        let emit_to = self.buf.len() - keep;
                        if emit_to > 0 {
                            let t: String = self.buf.drain(..emit_to).collect();
                            out.push(Segment::Thinking(t));
                        }
                    }
                    return;
                }
                None => {
                    let Some(lt) = self.buf.find('<') else {
                        if !self.buf.is_empty() {
                            out.push(Segment::Text(std::mem::take(&mut self.buf)));
                        }
                        return;
                    };
                    if lt > 0 {
                        let t: String = self.buf.drain(..lt).collect();
                        out.push(Segment::Text(t));
                    }
                    if let Some(tag) = Tag::ALL.iter().find(|t| self.buf.starts_with(t.open())) {
                        self.buf.drain(..tag.open().len());
                        self.inside = Some(*tag);
                        continue;
                    }
                    let maybe_tag = Tag::ALL.iter().any(|t| t.open().starts_with(&self.buf));
                    if maybe_tag && !at_end {
                        return; // wait for more text to decide
                    }
                    // Not a tag: let the '<' through and keep scanning after it.
                    let t: String = self.buf.drain(..1).collect();
                    out.push(Segment::Text(t));
                }
            }
        }
    }

    fn parse_call(&mut self, body: &str) -> Option<ToolCall> {
        self.calls += 1;
        let id = format!("call_text_{}", short_id());
        let trimmed = body.trim();
        if let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(trimmed) {
            let name = obj.get("name").and_then(Value::as_str)?.to_string();
            let raw = ["arguments", "parameters", "args", "input"]
                .iter()
                .find_map(|k| obj.get(*k));
            let (args, args_error) = match raw {
                None => (Value::Object(Default::default()), None),
                Some(Value::String(s)) => parse_args(s),
                Some(v @ Value::Object(_)) => (v.clone(), None),
                Some(other) => parse_args(&other.to_string()),
            };
            return Some(ToolCall {
                id,
                name,
                args,
                args_error,
                thought_signature: None,
            });
        }
        // Broken JSON: still a call if the name is readable, so the model can be told
        // exactly what to fix.
        static NAME_RE: LazyLock<Option<Regex>> =
            LazyLock::new(|| Regex::new(r#""name"\s*:\s*"([^"]+)""#).ok());
        let name = NAME_RE
            .as_ref()?
            .captures(trimmed)?
            .get(1)?
            .as_str()
            .to_string();
        let (_, err) = parse_args(trimmed);
        Some(ToolCall {
            id,
            name,
            args: Value::Null,
            args_error: err.or_else(|| Some(format!("could not read the tool call: {trimmed}"))),
            thought_signature: None,
        })
    }
}

/// Length of the longest suffix of `s` that is a proper prefix of `tag`.
fn partial_suffix_len(s: &str, tag: &str) -> usize {
    (1..tag.len())
        .rev()
        .find(|&n| {
            s.len() >= n && s.is_char_boundary(s.len() - n) && tag.starts_with(&s[s.len() - n..])
        })
        .unwrap_or(0)
}

pub(crate) fn short_id() -> String {
    let mut s = uuid::Uuid::new_v4().simple().to_string();
    s.truncate(16);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(pieces: &[&str]) -> Vec<Segment> {
        let mut f = TagFilter::new();
        let mut out = Vec::new();
        for p in pieces {
            f.push(p, &mut out);
        }
        f.finish(&mut out);
        out
    }

    fn text_of(segs: &[Segment]) -> String {
        segs.iter()
            .filter_map(|s| match s {
                Segment::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    fn calls_of(segs: &[Segment]) -> Vec<ToolCall> {
        segs.iter()
            .filter_map(|s| match s {
                Segment::Call(c) => Some(c.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn tool_call_tags_become_calls_at_any_split() {
        let full = "before <tool_call>{\"name\": \"analyze_stock\", \"arguments\": {\"code\": \"600519\"}}</tool_call> after";
        for n in 1..full.len() {
            let pieces: Vec<String> = crate::test_util::split_chars(full, n);
            let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
            let segs = run(&refs);
            assert_eq!(text_of(&segs), "before  after", "split {n}");
            assert!(
                !segs
                    .iter()
                    .any(|s| matches!(s, Segment::Text(t) if t.contains("tool_call")))
            );
            let calls = calls_of(&segs);
            assert_eq!(calls.len(), 1);
            assert_eq!(calls[0].name, "analyze_stock");
            assert_eq!(calls[0].args, json!({"code": "600519"}));
        }
    }

    #[test]
    fn lookalikes_pass_through_and_think_becomes_thinking() {
        let segs = run(&["a <b> 1<2 <tool", "s> x"]);
        assert_eq!(text_of(&segs), "a <b> 1<2 <tools> x");
        let segs = run(&["<thi", "nk>let me see</th", "ink>answer"]);
        let thinking: String = segs
            .iter()
            .filter_map(|s| match s {
                Segment::Thinking(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(thinking, "let me see");
        assert_eq!(text_of(&segs), "answer");
    }

    #[test]
    fn broken_json_with_a_name_is_a_correctable_call() {
        let segs =
            run(&["<tool_call>{\"name\": \"portfolio\", \"arguments\": {\"mode\": }</tool_call>"]);
        let calls = calls_of(&segs);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, "portfolio");
        assert_eq!(calls[0].args, Value::Null);
        assert!(calls[0].args_error.as_deref().unwrap().contains("\"mode\""));
        assert_eq!(text_of(&segs), "");
    }

    #[test]
    fn unclosed_call_at_end_and_string_arguments() {
        let segs = run(&["<function_call>{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"}"]);
        let calls = calls_of(&segs);
        assert_eq!(calls[0].name, "f");
        assert_eq!(calls[0].args, json!({"a": 1}));
    }

    #[test]
    fn trailing_partial_tag_is_released_at_end() {
        assert_eq!(text_of(&run(&["x <tool_"])), "x <tool_");
    }
}
