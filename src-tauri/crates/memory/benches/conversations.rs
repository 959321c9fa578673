//! The conversation list, search and reopening after a long soak: 20
//! conversations of 200 turns each (800 messages, with tool results), in a real
//! `wyckoff.db`. Each operation should stay well under what a user notices (~50 ms).

// A benchmark harness: setup failures abort loudly.
#![allow(clippy::expect_used)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use tokio::runtime::Runtime;
use wyckoff_memory::{ConversationStore, open_pool};
use wyckoff_protocol::{Message, ToolCall};

const CONVERSATIONS: usize = 20;
const TURNS: usize = 200;
const CODES: [&str; 6] = ["600519", "000001", "300750", "000858", "600036", "688981"];

fn seed(rt: &Runtime, dir: &std::path::Path) -> (ConversationStore, String) {
    rt.block_on(async {
        let pool = open_pool(dir.join("wyckoff.db")).await.expect("open db");
        let store = ConversationStore::new(pool);
        let mut last = String::new();
        for c in 0..CONVERSATIONS {
            let conv = store.create(&format!("对话 {c}"), "mock").await.expect("create");
            for t in 0..TURNS {
                let code = CODES[(c + t) % CODES.len()];
                let turn = store.begin_turn(&conv.id).await.expect("turn");
                let id = Some(turn.id.as_str());
                let call = ToolCall {
                    id: format!("call_{t}"),
                    name: "analyze_stock".into(),
                    args: serde_json::json!({"code": code}),
                    args_error: None,
                    thought_signature: None,
                };
                let result = serde_json::json!({"code": code, "health": "🟡警戒", "l4_triggers": ["Spring"], "notes": "吸筹阶段，量能萎缩".repeat(20)});
                let msgs = [
                    Message::user(format!("第 {t} 轮，{code} 放量突破了吗？")),
                    Message::Assistant {
                        content: String::new(),
                        tool_calls: vec![call.clone()],
                        reasoning: None,
                        reasoning_signature: None,
                    },
                    Message::tool_result(&call, result.to_string(), false),
                    Message::assistant(format!("{code} 处于吸筹末期，关注 Spring 之后的 LPS。")),
                ];
                for m in &msgs {
                    store.append_message(&conv.id, id, m).await.expect("append");
                }
                store
                    .end_turn(&turn.id, wyckoff_memory::TurnOutcome::Done, None)
                    .await
                    .expect("end");
            }
            last = conv.id;
        }
        (store, last)
    })
}

fn conversations(c: &mut Criterion) {
    let rt = Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let (store, id) = seed(&rt, dir.path());
    let mut g = c.benchmark_group("conversations_20x800");
    g.bench_function("list", |b| {
        b.iter(|| rt.block_on(async { black_box(store.list(false, 100).await.expect("list")) }))
    });
    g.bench_function("search_code", |b| {
        b.iter(|| {
            rt.block_on(async { black_box(store.search("300750", 20).await.expect("search")) })
        })
    });
    g.bench_function("search_chinese", |b| {
        b.iter(|| {
            rt.block_on(async {
                black_box(store.search("放量突破", 20).await.expect("search"))
            })
        })
    });
    g.bench_function("reopen_800_messages", |b| {
        b.iter(|| rt.block_on(async { black_box(store.messages(&id).await.expect("messages")) }))
    });
    g.finish();
}

criterion_group!(benches, conversations);
criterion_main!(benches);
