//! Property tests over hostile model/vendor input — the
//! SSE parser, the XML/text tool-call filter and tool-argument parsing. Properties: no
//! panic on any input, the same result however the network splits the bytes, round-trips
//! where they exist, and unreadable input gives a clear error instead of garbage.
//! Cases per property: 512 here; `PROPTEST_CASES=20000 cargo test --test fuzz_sse` for more.

#![allow(clippy::unwrap_used, reason = "test helpers outside #[test] fns")]

use proptest::prelude::*;
use serde_json::Value;
use wyckoff_llm::sse::{SseEvent, SseParser};
use wyckoff_llm::{OpenAiDecoder, Segment, TagFilter, decode_all, parse_args};

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512);
    ProptestConfig {
        cases,
        // Shrunk failures are reported in the test output; nothing is written to the repo.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Feeds `bytes` to a fresh parser in pieces cut at `cuts` (positions, any order).
fn parse_split(bytes: &[u8], cuts: &[usize]) -> Vec<SseEvent> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    let mut start = 0;
    for cut in cuts {
        parser.feed(&bytes[start..cut], &mut |e| events.push(e));
        start = cut;
    }
    parser.feed(&bytes[start..], &mut |e| events.push(e));
    parser.finish(&mut |e| events.push(e));
    events
}

/// Bytes that look like SSE often enough to reach every branch.
fn sse_like_bytes() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(b"data:".to_vec()),
        Just(b"data: ".to_vec()),
        Just(b"event: ".to_vec()),
        Just(b": comment".to_vec()),
        Just(b"id: 7".to_vec()),
        Just(b"retry: 10".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\n\n".to_vec()),
        Just(
            "{\"choices\":[{\"delta\":{\"content\":\"量价\"}}]}"
                .as_bytes()
                .to_vec()
        ),
        Just(b"[DONE]".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..8),
    ];
    proptest::collection::vec(token, 0..40).prop_map(|parts| parts.concat())
}

#[derive(Debug, Clone, Copy)]
enum LineEnd {
    Lf,
    CrLf,
    Cr,
}

impl LineEnd {
    fn as_str(self) -> &'static str {
        match self {
            LineEnd::Lf => "\n",
            LineEnd::CrLf => "\r\n",
            LineEnd::Cr => "\r",
        }
    }
}

fn line_end() -> impl Strategy<Value = LineEnd> {
    prop_oneof![Just(LineEnd::Lf), Just(LineEnd::CrLf), Just(LineEnd::Cr)]
}

/// An event as a well-behaved server would send it.
fn event() -> impl Strategy<Value = SseEvent> {
    (
        proptest::option::of("[a-z_]{1,16}"),
        proptest::collection::vec("[^\r\n]{0,24}", 1..4),
    )
        .prop_map(|(event, lines)| SseEvent {
            event,
            data: lines.join("\n"),
        })
}

/// One line-end style per stream, as servers send (CR then LF would read as one CRLF).
fn to_wire(events: &[SseEvent], line_end: LineEnd) -> String {
    let mut out = String::new();
    let end = || line_end.as_str();
    for e in events {
        if let Some(name) = &e.event {
            out.push_str("event: ");
            out.push_str(name);
            out.push_str(end());
        }
        for line in e.data.split('\n') {
            out.push_str("data: ");
            out.push_str(line);
            out.push_str(end());
        }
        out.push_str(end());
    }
    out
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        // Decimals as tools see them (prices, ratios). Full-precision floats may differ in
        // the last bit after a parse (serde_json without `float_roundtrip`), which no
        // tool argument depends on.
        (-1_000_000_000i64..1_000_000_000).prop_map(|cents| Value::from(cents as f64 / 100.0)),
        "\\PC{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map("\\PC{0,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Value> {
    proptest::collection::btree_map("\\PC{0,8}", json_value(), 0..6)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

/// Text a model might produce around tool-call and think tags, including broken ones.
fn tagged_text() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("<tool_call>".to_string()),
        Just("</tool_call>".to_string()),
        Just("<function_call>".to_string()),
        Just("</function_call>".to_string()),
        Just("<think>".to_string()),
        Just("</think>".to_string()),
        Just("<".to_string()),
        Just("</".to_string()),
        Just("<tool".to_string()),
        Just(r#"{"name": "analyze_stock", "arguments": {"code": "600519"}}"#.to_string()),
        Just(r#"{"name": "portfolio", "arguments": "{\"mode\": \"view\"}"}"#.to_string()),
        Just(r#"{"name": "x", "arguments": {"#.to_string()),
        Just("吸筹阶段".to_string()),
        "\\PC{0,10}",
    ];
    proptest::collection::vec(token, 0..20).prop_map(|t| t.concat())
}

/// Segments with adjacent text (and thinking) merged, calls as (name, args): what the
/// user and the runtime see, independent of how the text was split.
fn normalized(segments: Vec<Segment>) -> Vec<(u8, String, Value)> {
    let mut out: Vec<(u8, String, Value)> = Vec::new();
    for s in segments {
        let (tag, text, args) = match s {
            Segment::Text(t) => (0, t, Value::Null),
            Segment::Thinking(t) => (1, t, Value::Null),
            Segment::Call(c) => (2, c.name, c.args),
        };
        if tag < 2
            && let Some(last) = out.last_mut()
            && last.0 == tag
        {
            last.1.push_str(&text);
            continue;
        }
        if tag < 2 && text.is_empty() {
            continue;
        }
        out.push((tag, text, args));
    }
    out
}

fn filter_split(text: &str, cuts: &[usize]) -> Vec<Segment> {
    let boundaries: Vec<usize> = {
        let mut b: Vec<usize> = cuts
            .iter()
            .map(|c| c % (text.len() + 1))
            .filter(|&c| text.is_char_boundary(c))
            .collect();
        b.sort_unstable();
        b
    };
    let mut filter = TagFilter::new();
    let mut out = Vec::new();
    let mut start = 0;
    for cut in boundaries {
        filter.push(&text[start..cut], &mut out);
        start = cut;
    }
    filter.push(&text[start..], &mut out);
    filter.finish(&mut out);
    out
}

proptest! {
    #![proptest_config(config())]

    /// Any bytes, any split: no panic, and the events do not depend on the split.
    #[test]
    fn sse_parser_is_split_invariant(
        bytes in sse_like_bytes(),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let whole = parse_split(&bytes, &[]);
        let split = parse_split(&bytes, &cuts);
        prop_assert_eq!(whole, split);
    }

    /// Events written with LF, CRLF or CR line ends come back exactly, however split.
    #[test]
    fn sse_events_round_trip(
        events in proptest::collection::vec(event(), 0..8),
        end in line_end(),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let wire = to_wire(&events, end);
        let parsed = parse_split(wire.as_bytes(), &cuts);
        prop_assert_eq!(parsed, events);
    }

    /// The OpenAI-compatible decoder over arbitrary event payloads: an answer or an
    /// error with a message, never a panic.
    #[test]
    fn openai_decoder_never_panics(
        payloads in proptest::collection::vec(
            prop_oneof![
                json_value().prop_map(|v| v.to_string()),
                "\\PC{0,40}",
                Just("[DONE]".to_string()),
            ],
            0..10,
        ),
    ) {
        let wire: String = payloads.iter().map(|p| format!("data: {p}\n\n")).collect();
        match decode_all(OpenAiDecoder::new("fuzz", None), [wire.as_bytes()]) {
            Ok(_) => {}
            Err(e) => prop_assert!(!e.message.trim().is_empty(), "empty error for {wire:?}"),
        }
    }

    /// Any text, any split: no panic, and what comes out does not depend on the split.
    #[test]
    fn tag_filter_is_split_invariant(
        text in tagged_text(),
        cuts in proptest::collection::vec(any::<usize>(), 0..10),
    ) {
        let whole = normalized(filter_split(&text, &[]));
        let split = normalized(filter_split(&text, &cuts));
        prop_assert_eq!(whole, split);
    }

    /// Text that cannot hold a tag passes through unchanged (nothing lost or invented).
    #[test]
    fn text_without_tags_passes_through(text in "[^<]{0,200}") {
        let out = normalized(filter_split(&text, &[3, 17, 40]));
        let expected = if text.is_empty() {
            Vec::new()
        } else {
            vec![(0, text.clone(), Value::Null)]
        };
        prop_assert_eq!(out, expected);
    }

    /// A well-formed tagged call is found with its exact arguments, text around it kept.
    #[test]
    fn tagged_call_round_trips(
        before in "[^<]{0,30}",
        after in "[^<]{0,30}",
        name in "[a-z_]{1,20}",
        args in json_object(),
        cuts in proptest::collection::vec(any::<usize>(), 0..6),
    ) {
        let call = serde_json::json!({"name": name, "arguments": args});
        let text = format!("{before}<tool_call>{call}</tool_call>{after}");
        let out = normalized(filter_split(&text, &cuts));
        let mut expected = Vec::new();
        if !before.is_empty() {
            expected.push((0, before.clone(), Value::Null));
        }
        expected.push((2, name.clone(), args.clone()));
        if !after.is_empty() {
            expected.push((0, after.clone(), Value::Null));
        }
        prop_assert_eq!(out, expected);
    }

    /// Any argument text: an object and no error, or Null and a clear error naming the
    /// raw text — never garbage.
    #[test]
    fn args_are_an_object_or_a_clear_error(raw in prop_oneof![
        "\\PC{0,60}",
        json_value().prop_map(|v| v.to_string()),
    ]) {
        match parse_args(&raw) {
            (Value::Object(_), None) => {}
            (Value::Null, Some(err)) => {
                prop_assert!(err.contains("tool arguments"), "{err}");
                let head: String = raw.trim().chars().take(20).collect();
                prop_assert!(err.contains(&head), "error does not show the raw text: {err}");
            }
            other => prop_assert!(false, "neither object nor error: {other:?}"),
        }
    }

    /// Objects round-trip, plain and double-encoded.
    #[test]
    fn args_round_trip(args in json_object()) {
        let text = args.to_string();
        prop_assert_eq!(parse_args(&text), (args.clone(), None));
        let doubly = Value::String(text).to_string();
        prop_assert_eq!(parse_args(&doubly), (args, None));
    }
}
