#![allow(clippy::unwrap_used, clippy::expect_used)]

use wyckoff_protocol::Message;
use wyckoff_session::domain::memory::open_pool;

use super::*;
use crate::commands::chat::ForkedFrom;

/// A store with one conversation of two turns: user #1, answer #2, user #3, answer #4.
async fn two_turns(dir: &std::path::Path) -> (ConversationStore, String) {
    let store = ConversationStore::new(open_pool(dir.join("wyckoff.db")).await.unwrap());
    let c = store.create("", "mock").await.unwrap();
    for m in [
        Message::user("first question"),
        Message::assistant("first answer"),
        Message::user("second question"),
        Message::assistant("second answer"),
    ] {
        store.append_message(&c.id, None, &m).await.unwrap();
    }
    (store, c.id)
}

#[tokio::test]
async fn a_fork_names_its_source_and_leaves_it_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let (store, source) = two_turns(dir.path()).await;
    let before = store.messages(&source).await.unwrap();

    let fork = fork(&store, false, &source, 2).await.unwrap();

    assert_ne!(fork.id, source);
    assert_eq!(fork.title, "first question");
    assert_eq!(
        fork.forked_from,
        Some(ForkedFrom {
            conversation_id: source.clone(),
            message_seq: 2
        })
    );
    assert_eq!(
        store.messages(&fork.id).await.unwrap(),
        before[..2].to_vec()
    );
    assert_eq!(store.messages(&source).await.unwrap(), before);
    // The list shows the fork with its origin too.
    let listed: Vec<ConversationSummary> = store
        .list(false, 10)
        .await
        .unwrap()
        .into_iter()
        .map(Into::into)
        .collect();
    let row = listed.iter().find(|c| c.id == fork.id).unwrap();
    assert_eq!(row.forked_from, fork.forked_from);
    let original = listed.iter().find(|c| c.id == source).unwrap();
    assert_eq!(original.forked_from, None);
}

#[tokio::test]
async fn a_fork_is_refused_while_a_turn_runs_in_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let (store, source) = two_turns(dir.path()).await;

    let refused = fork(&store, true, &source, 2).await;

    assert!(
        matches!(&refused, Err(e) if e.kind == CommandErrorKind::Busy),
        "{refused:?}"
    );
    assert_eq!(store.list(false, 10).await.unwrap().len(), 1);
}

#[tokio::test]
async fn an_unknown_message_or_conversation_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let (store, source) = two_turns(dir.path()).await;

    // (#0 is the start: a fork before the first message, see memory::fork::BEFORE_FIRST.)
    for (id, seq) in [(source.as_str(), 5), (source.as_str(), -1), ("nope", 1)] {
        let r = fork(&store, false, id, seq).await;
        assert!(
            matches!(&r, Err(e) if e.kind == CommandErrorKind::NotFound),
            "{id} #{seq}: {r:?}"
        );
    }
    assert_eq!(store.list(false, 10).await.unwrap().len(), 1);
}
