//! The start-up retention pass over a data home that has grown for a long time:
//! 400 conversations × 50 messages (one in ten pointing at an offloaded tool result),
//! 4,000 tool results (half past retention), 2,000 scratchpads and 400 archive folders.
//! Prints the time of the first pass (which removes) and of the next (nothing to remove),
//! since every start-up pays the latter. `cargo bench -p wyckoff-session --bench retention`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use wyckoff_memory::ConversationStore;
use wyckoff_protocol::Message;
use wyckoff_session::retention::prune;

const CONVERSATIONS: usize = 400;
const MESSAGES: usize = 50;
const TOOL_RESULTS: usize = 4_000;
const SCRATCHPADS: usize = 2_000;

fn touch(path: &Path, age_days: u64, now: SystemTime) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "{}").unwrap();
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(now - Duration::from_secs(age_days * 86_400))
        .unwrap();
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let pool = wyckoff_memory::open_pool(root.join("wyckoff.db"))
        .await
        .unwrap();
    let store = ConversationStore::new(pool.clone());
    let now = SystemTime::now();
    let setup = Instant::now();
    let mut result = 0;
    for c in 0..CONVERSATIONS {
        let conversation = store.create(&format!("c{c}"), "m").await.unwrap();
        for m in 0..MESSAGES {
            let text = if m % 10 == 0 {
                result += 1;
                format!("预览……\nresult_ref: tool-result://r{result}.json\n")
            } else {
                format!("message {m} of conversation {c}: 000001 的量价结构，Spring 之后的回踩。")
            };
            store
                .append_message(&conversation.id, None, &Message::user(text))
                .await
                .unwrap();
        }
        touch(
            &root.join(format!("context-archive/{}/ctx.jsonl", conversation.id)),
            40,
            now,
        );
    }
    for r in 1..=TOOL_RESULTS {
        touch(
            &root.join(format!("tool-results/r{r}.json")),
            (r % 60) as u64,
            now,
        );
    }
    for s in 0..SCRATCHPADS {
        touch(
            &root.join(format!("scratchpad/s{s}.jsonl")),
            (s % 60) as u64,
            now,
        );
    }
    println!(
        "setup: {} messages, {TOOL_RESULTS} tool results, {SCRATCHPADS} scratchpads in {:.1} s",
        CONVERSATIONS * MESSAGES,
        setup.elapsed().as_secs_f64()
    );

    let first = Instant::now();
    let report = prune(root, &pool, now, 30).await.unwrap();
    println!(
        "first pass: removed {}, kept {} referenced, {:.1} ms",
        report.removed.len(),
        report.kept_referenced,
        first.elapsed().as_secs_f64() * 1e3
    );
    let mut runs = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let again = prune(root, &pool, now, 30).await.unwrap();
        assert!(again.removed.is_empty());
        runs.push(t.elapsed().as_secs_f64() * 1e3);
    }
    runs.sort_by(f64::total_cmp);
    println!(
        "every later start-up (nothing to remove): median {:.1} ms, max {:.1} ms",
        runs[runs.len() / 2],
        runs[runs.len() - 1]
    );
}
