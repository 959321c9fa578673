//! A final answer's grounding stored with it, over a real SQLite file: only the turn's
//! last answer carries it, a reopened conversation reads it back typed, a fork copies it.

#![allow(clippy::unwrap_used)]

mod common;

use common::conversation_store as store;
use serde_json::json;
use wyckoff_protocol::{Claim, ClaimKind, Grounding, Message, Source, Support, ToolCall};

fn grounding() -> Grounding {
    Grounding {
        sourced: 1,
        derived: 0,
        unsupported: 1,
        invented_codes: 0,
        corrected: true,
        claims: vec![
            Claim {
                start: 5,
                end: 10,
                text: "12.35".into(),
                kind: ClaimKind::Price,
                support: Support::Sourced {
                    source: Source::Tool {
                        call_id: "c1".into(),
                        tool: "get_stock_price".into(),
                        path: "latest_close".into(),
                    },
                },
            },
            Claim {
                start: 14,
                end: 19,
                text: "36.10".into(),
                kind: ClaimKind::Price,
                support: Support::Unsupported {},
            },
        ],
    }
}

#[tokio::test]
async fn the_turns_answer_keeps_its_grounding_and_a_fork_copies_it() {
    let (_dir, s, _clock) = store().await;
    let c = s.create("", "m").await.unwrap();
    let turn = s.begin_turn(&c.id).await.unwrap();
    let calls = Message::Assistant {
        content: String::new(),
        tool_calls: vec![ToolCall::new(
            "c1",
            "get_stock_price",
            json!({"code": "600519"}),
        )],
        reasoning: None,
        reasoning_signature: None,
    };
    for m in [
        Message::user("看看 600519"),
        calls,
        Message::Tool {
            tool_call_id: "c1".into(),
            name: "get_stock_price".into(),
            content: r#"{"latest_close": 12.345}"#.into(),
            is_error: false,
        },
        Message::assistant("最新收盘 12.35，另有 36.10"),
    ] {
        s.append_message(&c.id, Some(&turn.id), &m).await.unwrap();
    }
    let g = grounding();
    assert_eq!(s.set_answer_grounding(&turn.id, &g).await.unwrap(), Some(4));
    // A turn without an answer stores nothing.
    let empty = s.begin_turn(&c.id).await.unwrap();
    assert_eq!(s.set_answer_grounding(&empty.id, &g).await.unwrap(), None);

    let stored = s.load_messages(&c.id).await.unwrap();
    let with: Vec<(i64, bool)> = stored
        .iter()
        .map(|m| (m.seq, m.grounding.is_some()))
        .collect();
    assert_eq!(with, [(1, false), (2, false), (3, false), (4, true)]);
    assert_eq!(stored[3].grounding.as_ref(), Some(&g));

    // Both exports carry it: the JSON typed, the Markdown as a line under the answer.
    let json: serde_json::Value =
        serde_json::from_str(&s.export_json(&c.id).await.unwrap()).unwrap();
    assert_eq!(json["messages"][3]["grounding"]["unsupported"], 1);
    assert_eq!(
        json["messages"][3]["grounding"]["claims"][0]["support"]["source"]["path"],
        "latest_close"
    );
    assert!(json["messages"][2]["grounding"].is_null());
    let md = s.export_markdown(&c.id).await.unwrap();
    assert!(
        md.contains(
            "> 数字核对：1 处有来源，0 处由来源计算，1 处无来源（「36.10」）；已请模型更正一次"
        ),
        "{md}"
    );

    let fork = s.fork(&c.id, 4).await.unwrap();
    let copied = s.load_messages(&fork.conversation.id).await.unwrap();
    assert_eq!(copied[3].grounding.as_ref(), Some(&g));
}
