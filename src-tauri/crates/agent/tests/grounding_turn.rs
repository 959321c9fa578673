#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The grounding check in the loop: the final answer's numbers traced to the turn's tool
//! results, and one correction round for an unsourced price or an invented code.

mod common;

use common::*;
use serde_json::json;
use wyckoff_agent::scripted::{self, Step};
use wyckoff_agent::{ToolRegistry, ToolSpec, TurnOutcome};
use wyckoff_protocol::{ClaimKind, Grounding, Message, RuntimeEvent, Source, Support, UserOrigin};

fn price_registry() -> ToolRegistry {
    let mut reg = ToolRegistry::new();
    reg.register(tool(
        ToolSpec::new("get_stock_price", "行情").concurrency_safe(),
        obj(json!({"code": {"type": "string"}}), &["code"]),
        |args, _| async move {
            Ok(
                json!({"code": args["code"], "latest_date": "2024-01-05", "latest_close": 12.345,
                      "pct_chg": 0.0523}),
            )
        },
    ));
    reg
}

fn script(answers: &[&str]) -> Vec<Vec<Step>> {
    let mut s = vec![scripted::tool_calls(
        "",
        vec![call("c1", "get_stock_price", json!({"code": "600519"}))],
    )];
    s.extend(answers.iter().map(|a| scripted::text(a)));
    s
}

fn done_grounding(events: &[RuntimeEvent]) -> Grounding {
    events
        .iter()
        .find_map(|e| match e {
            RuntimeEvent::Done { grounding, .. } => grounding.clone(),
            _ => None,
        })
        .expect("done with grounding")
}

fn grounding_retries(events: &[RuntimeEvent]) -> usize {
    events
        .iter()
        .filter(
            |e| matches!(e, RuntimeEvent::Retry { reason, .. } if reason.starts_with("grounding")),
        )
        .count()
}

#[tokio::test]
async fn a_close_quoted_from_the_tool_is_sourced_without_a_correction() {
    let h = harness(
        script(&["600519 最新收盘 12.35 元（2024-01-05），涨 5.23%。"]),
        price_registry(),
    );
    let mut messages = Vec::new();
    let out = h.turn(&mut messages, "看看茅台").await;
    assert!(
        matches!(out, TurnOutcome::Done { rounds: 2, .. }),
        "{out:?}"
    );
    let events = h.events();
    assert_one_terminal(&events);
    assert_eq!(grounding_retries(&events), 0);
    let g = done_grounding(&events);
    assert_eq!((g.sourced, g.unsupported, g.corrected), (4, 0, false));
    let close = g
        .claims
        .iter()
        .find(|c| c.kind == ClaimKind::Price)
        .unwrap();
    assert_eq!(close.text, "12.35 元");
    assert_eq!(
        close.support,
        Support::Sourced {
            source: Source::Tool {
                call_id: "c1".into(),
                tool: "get_stock_price".into(),
                path: "latest_close".into(),
            }
        }
    );
}

#[tokio::test]
async fn a_wrong_close_gets_one_correction_round_and_what_remains_is_marked() {
    // Both answers misquote: the second stands, marked, with no third round.
    let h = harness(
        script(&[
            "600519 最新收盘 36.00 元，可关注 601318。",
            "600519 最新收盘 36.10 元。",
        ]),
        price_registry(),
    );
    let mut messages = Vec::new();
    let out = h.turn(&mut messages, "看看 600519").await;
    match &out {
        TurnOutcome::Done { text, rounds, .. } => {
            assert_eq!(text, "600519 最新收盘 36.10 元。");
            assert_eq!(*rounds, 3);
        }
        other => panic!("{other:?}"),
    }
    let events = h.events();
    assert_one_terminal(&events);
    assert_eq!(grounding_retries(&events), 1);
    let reason = events
        .iter()
        .find_map(|e| match e {
            RuntimeEvent::Retry { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        reason.contains("36.00 元") && reason.contains("601318"),
        "{reason}"
    );
    // The model saw the note naming both figures.
    let third = &h.provider.requests()[2];
    let note = third
        .messages
        .iter()
        .find_map(|m| match m {
            Message::User {
                content,
                origin: UserOrigin::InternalRetry,
            } => Some(content.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        note.contains("「36.00 元」") && note.contains("「601318」"),
        "{note}"
    );

    let g = done_grounding(&events);
    assert!(g.corrected);
    assert_eq!((g.sourced, g.unsupported, g.invented_codes), (1, 1, 0));
    let wrong = g.unsupported_claims().next().unwrap();
    assert_eq!(
        (wrong.text.as_str(), wrong.kind),
        ("36.10 元", ClaimKind::Price)
    );
    let chars: Vec<char> = text_of(&out).chars().collect();
    assert_eq!(
        chars[wrong.start as usize..wrong.end as usize]
            .iter()
            .collect::<String>(),
        "36.10 元"
    );
    // The note and the answer it corrected are gone from the conversation.
    assert_valid_conversation(&messages);
    assert!(!messages.iter().any(|m| matches!(
        m,
        Message::User {
            origin: UserOrigin::InternalRetry,
            ..
        }
    )));
    assert!(
        !messages
            .iter()
            .any(|m| matches!(m, Message::Assistant { content, .. } if content.contains("36.00")))
    );
}

#[tokio::test]
async fn a_corrected_answer_ends_sourced() {
    let h = harness(
        script(&["最新收盘 9.99 元。", "最新收盘 12.35 元。"]),
        price_registry(),
    );
    let mut messages = Vec::new();
    h.turn(&mut messages, "看看 600519").await;
    let events = h.events();
    assert_eq!(grounding_retries(&events), 1);
    let g = done_grounding(&events);
    assert_eq!((g.sourced, g.unsupported, g.corrected), (1, 0, true));
}

fn text_of(out: &TurnOutcome) -> &str {
    match out {
        TurnOutcome::Done { text, .. } => text,
        _ => "",
    }
}
