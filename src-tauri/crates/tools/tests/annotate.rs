//! `annotate_chart` through a session's execution environment: each kind stored with the
//! conversation as author, listed and removed by the agent; bad arguments are clear errors
//! that store nothing; the user's notes stay out of the agent's reach; no approval asked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::scripted::ScriptedProvider;
use wyckoff_agent::{
    CollectingSink, HeadlessApprover, Runtime, RuntimeConfig, SystemClock, ToolOutcome,
    ToolRegistry,
};
use wyckoff_annotations::{AnnotationStore, Author, NotePeriod, Shape};
use wyckoff_market::{MarketConfig, MarketData};
use wyckoff_protocol::ToolCall;

async fn setup() -> (Arc<MarketData>, Arc<ToolRegistry>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let md = Arc::new(
        MarketData::open_with(MarketConfig::offline(dir.path()))
            .await
            .unwrap(),
    );
    let mut reg = ToolRegistry::empty();
    wyckoff_tools::register_market_tools(&mut reg, md.clone());
    (md, Arc::new(reg), dir)
}

/// One call with an approver that refuses everything: the tool must not need approval.
async fn call(reg: &Arc<ToolRegistry>, args: Value) -> ToolOutcome {
    let runtime = Runtime::new(
        Arc::new(ScriptedProvider::new(Vec::new())),
        reg.clone(),
        RuntimeConfig {
            session_id: "conv-42".into(),
            ..RuntimeConfig::default()
        },
        Arc::new(HeadlessApprover::Never),
        None,
        Arc::new(SystemClock),
    );
    let env = runtime.exec_env(CollectingSink::new(), CancellationToken::new());
    reg.execute(&ToolCall::new("c1", "annotate_chart", args), &env)
        .await
}

#[tokio::test]
async fn the_agent_draws_lists_and_removes_its_notes_without_approval() {
    let (md, reg, _dir) = setup().await;
    let spec = reg.spec("annotate_chart").unwrap().clone();
    assert!(spec.concurrency_safe && !spec.requires_approval);
    // It changes the owner's chart notes unasked: where someone else talks (a chat bot)
    // it is a writer.
    assert!(spec.writes);

    let added = [
        json!({"code": "000001", "kind": "box", "from": "2020-01-02", "to": "2020-03-02", "low": 12.5, "high": 14.1}),
        json!({"code": "000001", "kind": "line", "price": 13.2}),
        json!({"code": "000001", "kind": "text", "date": "2020-03-16", "text": "Spring?"}),
    ];
    for args in added {
        let o = call(&reg, args.clone()).await;
        assert!(!o.is_error, "{args}: {}", o.content);
        assert_eq!(o.result["added"]["author"], "agent (conv-42)");
    }
    let store = AnnotationStore::new(md.pool().clone()).await.unwrap();
    let notes = store.list("000001", NotePeriod::Day).await.unwrap();
    assert_eq!(notes.len(), 3);
    assert_eq!(
        notes[0].shape,
        Shape::Box {
            from: 20200102,
            to: 20200302,
            low: 12.5,
            high: 14.1
        }
    );
    assert_eq!(
        notes[2].author,
        Author::Agent {
            conversation: "conv-42".into()
        }
    );

    let listed = call(&reg, json!({"code": "000001", "action": "list"})).await;
    assert_eq!(listed.result["count"], 3);
    assert_eq!(listed.result["notes"][2]["shape"]["date"], "2020-03-16");

    let removed = call(
        &reg,
        json!({"code": "000001", "action": "remove", "id": notes[1].id}),
    )
    .await;
    assert!(!removed.is_error, "{}", removed.content);
    assert_eq!(
        store.list("000001", NotePeriod::Day).await.unwrap().len(),
        2
    );

    // a note the user drew is not the agent's to remove
    let mine = store
        .add(
            &md,
            "000001",
            NotePeriod::Day,
            &Shape::Line {
                price: 12.0,
                from: None,
                to: None,
            },
            Author::User,
            md.clock().now(),
        )
        .await
        .unwrap();
    let refused = call(
        &reg,
        json!({"code": "000001", "action": "remove", "id": mine.id}),
    )
    .await;
    assert!(refused.is_error);
    assert!(
        refused.error_text().contains("drawn by the user"),
        "{}",
        refused.error_text()
    );
    assert_eq!(
        store.list("000001", NotePeriod::Day).await.unwrap().len(),
        3
    );
}

#[tokio::test]
async fn bad_arguments_are_clear_errors_and_store_nothing() {
    let (md, reg, _dir) = setup().await;
    let table = [
        (
            json!({"code": "688999", "kind": "line", "price": 10.0}),
            "unknown stock code 688999",
        ),
        (
            json!({"code": "000001", "kind": "box", "from": "2020-02-30", "to": "2020-03-02", "low": 1.0, "high": 2.0}),
            "from 2020-02-30 is not a calendar day",
        ),
        (
            json!({"code": "000001", "kind": "box", "from": "2020-01-02", "to": "2020-03-02", "low": 15.0, "high": 14.0}),
            "low 15 is above high 14",
        ),
        (
            json!({"code": "000001", "kind": "box", "from": "2020-03-02", "to": "2020-01-02", "low": 1.0, "high": 2.0}),
            "from 2020-03-02 is after to 2020-01-02",
        ),
        (
            json!({"code": "000001", "kind": "box", "from": "2020-01-02", "low": 1.0, "high": 2.0}),
            "kind=box needs to",
        ),
        (
            json!({"code": "000001", "kind": "circle"}),
            "kind must be one of: box, line, text",
        ),
        (json!({"code": "000001"}), "needs kind"),
        (
            json!({"code": "000001", "kind": "text", "date": "2020-03-16", "text": " "}),
            "kind=text needs text",
        ),
        (
            json!({"code": "000001", "action": "remove", "id": 999}),
            "no chart note 999",
        ),
    ];
    for (args, want) in table {
        let o = call(&reg, args.clone()).await;
        assert!(o.is_error, "{args} should fail: {}", o.content);
        assert!(o.error_text().contains(want), "{args}: {}", o.error_text());
    }
    let store = AnnotationStore::new(md.pool().clone()).await.unwrap();
    assert!(store.all().await.unwrap().is_empty());
}
