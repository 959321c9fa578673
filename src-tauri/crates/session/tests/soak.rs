#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]
//! Soak: many turns with a tool call each in one conversation, then many
//! conversations, over real HTTP (mock vendor), a real `wyckoff.db` and the bundled bars.
//! Every turn must end `done` with its tool answered and stored; the process's resident
//! memory after the warm-up must stay flat (it is printed for the note; the bound below
//! only catches a leak that grows with every turn).
//!
//! CI runs a short version; `SOAK_TURNS=200 SOAK_CONVERSATIONS=20 cargo test -p
//! wyckoff-session --release --test soak -- --nocapture` runs the full one.

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use wyckoff_agent::{CollectingSink, HeadlessApprover, TurnOutcome};
use wyckoff_config::secrets::MemoryBackend;
use wyckoff_config::{DataHome, Secrets, Settings};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};
use wyckoff_session::{ModelOverrides, Services, Session, SessionOptions};

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Resident set size of this process in KiB (Linux; 0 elsewhere).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

async fn session(services: &Services, server: &MockServer, continue_id: Option<String>) -> Session {
    services
        .session(SessionOptions {
            overrides: ModelOverrides {
                provider: Some("openai-compatible".into()),
                model: Some("mock-model".into()),
                base_url: Some(format!("{}/v1", server.url())),
                // Large enough that this test measures turns, not compaction.
                context_window: Some(2_000_000),
                ..ModelOverrides::default()
            },
            continue_session: continue_id,
            approver: Arc::new(HeadlessApprover::Never),
        })
        .await
        .unwrap()
}

/// One turn: the model asks for a diagnosis of a bundled stock, then answers.
async fn tool_turn(session: &mut Session, server: &MockServer, i: usize) {
    let code = ["000001", "600519", "000858", "600036"][i % 4];
    server.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .tool_call(
                0,
                &format!("call_{i}"),
                "analyze_stock",
                &[json!({"code": code}).to_string()],
            )
            .finish("tool_calls")
            .usage(100, 10, 0)
            .done()
            .response(),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&[format!("第 {i} 轮：{code} 的诊断见上。")]),
    );
    let report = session
        .run_turn(
            &format!("第 {i} 轮，看看 {code}"),
            CollectingSink::new(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(
        matches!(report.outcome, TurnOutcome::Done { .. }),
        "turn {i}: {:?}",
        report.outcome
    );
    assert!(report.save_error.is_none());
    // The mock keeps every request body it received; those are the test's, not the app's.
    assert_eq!(server.requests_to(Route::Openai).len(), 2);
    server.clear_requests();
}

#[tokio::test(flavor = "multi_thread")]
async fn many_turns_and_conversations_keep_memory_flat() {
    let turns = env_count("SOAK_TURNS", 30);
    let conversations = env_count("SOAK_CONVERSATIONS", 5);
    let home = tempfile::tempdir().unwrap();
    let settings = Settings {
        data_sources: Vec::new(),
        ..Settings::default()
    };
    let secrets = Secrets::with_backend(Box::new(MemoryBackend::default()), Box::new(|_| None));
    let services = Services::open(DataHome::new(home.path()), settings, Arc::new(secrets))
        .await
        .unwrap();
    let server = MockServer::start().await.unwrap();

    let mut s = session(&services, &server, None).await;
    let warmup = turns.min(10);
    for i in 0..warmup {
        tool_turn(&mut s, &server, i).await;
    }
    let rss_after_warmup = rss_kib();
    for i in warmup..turns {
        tool_turn(&mut s, &server, i).await;
    }
    let rss_after_turns = rss_kib();
    let first_id = s.id().to_owned();
    drop(s);

    for c in 0..conversations {
        let mut s = session(&services, &server, None).await;
        for i in 0..3 {
            tool_turn(&mut s, &server, c * 10 + i).await;
        }
    }
    let rss_end = rss_kib();

    // Everything was stored: 4 messages a turn (user, tool call, tool result, answer).
    let stored = services.conversations().messages(&first_id).await.unwrap();
    assert_eq!(stored.len(), turns * 4);
    let list = services.conversations().list(false, 100).await.unwrap();
    assert_eq!(list.len(), conversations + 1);
    // Reopening the long conversation gives back its whole history.
    let reopened = session(&services, &server, Some(first_id)).await;
    assert_eq!(reopened.messages().len(), turns * 4);

    eprintln!(
        "soak: {turns} turns + {conversations} conversations; RSS after warm-up {rss_after_warmup} KiB, after the turns {rss_after_turns} KiB, at the end {rss_end} KiB"
    );
    if rss_after_warmup > 0 {
        // A leak of even 1 MiB a turn would cross this over the run.
        let growth = rss_end.saturating_sub(rss_after_warmup);
        assert!(growth < 64 * 1024, "RSS grew by {growth} KiB");
    }
}
