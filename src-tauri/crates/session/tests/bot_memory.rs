//! A chat bot's conversation is someone else's words: its session end extracts nothing
//! into the owner's long-term memory (no model call, no memory), while the same words in
//! the owner's own conversation are extracted.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use wyckoff_agent::{CollectingSink, HeadlessApprover};
use wyckoff_config::secrets::MemoryBackend;
use wyckoff_config::{DataHome, Secrets, Settings};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};
use wyckoff_session::{ModelOverrides, Services, Session, SessionOptions};

async fn services(home: &tempfile::TempDir) -> Services {
    let settings = Settings {
        data_sources: Vec::new(),
        ..Settings::default()
    };
    let secrets = Secrets::with_backend(Box::new(MemoryBackend::default()), Box::new(|_| None));
    Services::open(DataHome::new(home.path()), settings, Arc::new(secrets))
        .await
        .unwrap()
}

async fn session(services: &Services, server: &MockServer, id: Option<String>) -> Session {
    services
        .session(SessionOptions {
            overrides: ModelOverrides {
                provider: Some("openai-compatible".into()),
                model: Some("mock-model".into()),
                base_url: Some(format!("{}/v1", server.url())),
                ..ModelOverrides::default()
            },
            continue_session: id,
            approver: Arc::new(HeadlessApprover::Never),
        })
        .await
        .unwrap()
}

/// Makes `conversation` the chat of a Telegram bot's sender, as the bot's first message does.
async fn make_bot_chat(services: &Services, conversation: &str) {
    let pool = services.pool();
    sqlx::query(
        "INSERT INTO bot (name, kind, daily_tokens, per_minute, created_at)
         VALUES ('tg', 'telegram', 100000, 10, '2026-12-07T00:00:00Z')",
    )
    .execute(pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO bot_chat (bot, chat_id, sender_id, conversation_id) VALUES ('tg', '7', '', ?)",
    )
    .bind(conversation)
    .execute(pool)
    .await
    .unwrap();
}

const SAID: &str = "记住：我只做主板，不碰创业板。";

#[tokio::test]
async fn a_bot_conversations_session_end_extracts_nothing() {
    let home = tempfile::tempdir().unwrap();
    let services = services(&home).await;
    let server = MockServer::start().await.unwrap();

    // The owner's own conversation: what is said there is extracted.
    let reply = |text: &str| server.push(Route::Openai, OpenAiStream::text_response(&[text]));
    reply("好的。");
    reply("- [偏好] 不碰创业板");
    let mut own = session(&services, &server, None).await;
    own.run_turn(SAID, CollectingSink::new(), CancellationToken::new())
        .await
        .unwrap();
    let outcome = own.extract_memories().await.unwrap();
    assert!(outcome.called_model);
    assert_eq!(outcome.saved.len(), 1);
    let owners = services.memories().list(None, 10).await.unwrap().len();
    assert_eq!(owners, 1);

    // A bot's conversation (its session opened as the bot's turn opens it): the same
    // words, the session ends, and nothing is asked of the model nor remembered.
    let first = session(&services, &server, None).await;
    let id = first.id().to_owned();
    drop(first);
    make_bot_chat(&services, &id).await;
    reply("好的。");
    let mut bot = session(&services, &server, Some(id)).await;
    bot.run_turn(SAID, CollectingSink::new(), CancellationToken::new())
        .await
        .unwrap();
    let before = server.requests_to(Route::Openai).len();
    let outcome = bot.extract_memories().await.unwrap();
    assert!(!outcome.called_model);
    assert!(outcome.saved.is_empty());
    assert_eq!(server.requests_to(Route::Openai).len(), before);
    assert_eq!(
        services.memories().list(None, 10).await.unwrap().len(),
        owners
    );
}
