//! Forking a conversation at a message, over a real SQLite file: each
//! kind of fork point, what is copied with the messages, unknown ids, a running tool
//! round, and the source left exactly as it was.

// Helpers may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use common::conversation_store as store;
use serde_json::json;
use std::time::Duration;
use wyckoff_memory::{
    Clock, ConversationStore, ForkOrigin, MemoryError, MessageExtras, MessageStatus, StoredMessage,
    Turn, TurnOutcome,
};
use wyckoff_protocol::{
    Message, SkillUse, SubAgentStep, TaskNotice, TaskOutcome, ToolCall, UserOrigin,
};

/// Everything stored about a conversation, to compare before and after a fork.
async fn snapshot(
    s: &ConversationStore,
    id: &str,
) -> (wyckoff_memory::Conversation, Vec<StoredMessage>, Vec<Turn>) {
    (
        s.get(id).await.unwrap(),
        s.load_messages(id).await.unwrap(),
        s.turns(id).await.unwrap(),
    )
}

fn call(id: &str, name: &str) -> ToolCall {
    ToolCall::new(id, name, json!({"code": "000001"}))
}

fn steps() -> Vec<SubAgentStep> {
    vec![
        SubAgentStep {
            kind: "tool_start".into(),
            text: "analyze_stock".into(),
        },
        SubAgentStep {
            kind: "text".into(),
            text: "000001 偏弱".into(),
        },
    ]
}

/// Two turns, seqs:
/// 1 user (typed as a skill) · 2 assistant calling analyze_stock + delegate_to_research ·
/// 3 analyze result · 4 delegate result (with sub-agent steps) · 5 answer ·
/// 6 background-task notice · 7 answer to it · 8 user · 9 answer.
async fn two_turns(s: &ConversationStore, clock: &wyckoff_memory::ManualClock) -> String {
    let c = s.create("", "openai/gpt-test").await.unwrap();
    let first = s.begin_turn(&c.id).await.unwrap();
    let skill = SkillUse {
        name: "diagnose".into(),
        builtin: true,
        typed: "/diagnose 000001".into(),
    };
    let (analyze, delegate) = (
        call("c_an", "analyze_stock"),
        call("c_de", "delegate_to_research"),
    );
    clock.advance(Duration::from_secs(1));
    s.append_message_with_skill(
        &c.id,
        Some(&first.id),
        &Message::user("诊断 000001 的威科夫结构"),
        Some(&skill),
    )
    .await
    .unwrap();
    let first_round = [
        Message::Assistant {
            content: "我先看看。".into(),
            tool_calls: vec![analyze.clone(), delegate.clone()],
            reasoning: Some("两路并行".into()),
            reasoning_signature: None,
        },
        Message::tool_result(&analyze, r#"{"code":"000001","phase":"下跌"}"#, false),
    ];
    for m in &first_round {
        clock.advance(Duration::from_secs(1));
        s.append_message(&c.id, Some(&first.id), m).await.unwrap();
    }
    clock.advance(Duration::from_secs(1));
    s.append_message_with_sub_agent(
        &c.id,
        Some(&first.id),
        &Message::tool_result(&delegate, r#"{"status":"completed"}"#, false),
        &steps(),
    )
    .await
    .unwrap();
    let notice = TaskNotice {
        task_id: "bg_1_screen_stocks".into(),
        tool_name: "screen_stocks".into(),
        display_name: "全市场扫描".into(),
        outcome: TaskOutcome::Completed,
        summary: Some(r#"{"candidates":3}"#.into()),
        error: None,
    };
    for (m, task_notice) in [
        (Message::assistant("000001 处于下跌通道。"), None),
        (
            Message::user_with_origin("<task-notification>…", UserOrigin::SystemNotification),
            Some(&notice),
        ),
        (Message::assistant("扫描也完成了。"), None),
    ] {
        clock.advance(Duration::from_secs(1));
        let extras = MessageExtras {
            task_notice,
            ..MessageExtras::default()
        };
        s.append_message_with(&c.id, Some(&first.id), &m, extras)
            .await
            .unwrap();
    }
    s.end_turn(&first.id, TurnOutcome::Done, None)
        .await
        .unwrap();
    let second = s.begin_turn(&c.id).await.unwrap();
    for m in [
        Message::user("那 600519 呢？"),
        Message::assistant("600519 强势。"),
    ] {
        clock.advance(Duration::from_secs(1));
        s.append_message(&c.id, Some(&second.id), &m).await.unwrap();
    }
    s.end_turn(&second.id, TurnOutcome::Done, None)
        .await
        .unwrap();
    c.id
}

#[tokio::test]
async fn a_fork_at_each_kind_of_message_keeps_the_history_through_it_and_nothing_after() {
    let (_d, s, clock) = store().await;
    let source = two_turns(&s, &clock).await;
    let before = snapshot(&s, &source).await;
    let all = before.1.clone();

    // (fork at, copied through): user · tool-calling assistant (takes its round) · a
    // result inside the round (takes the rest) · the delegate result · an answer · a
    // notification · the last message.
    let cases = [(1, 1), (2, 4), (3, 4), (4, 4), (5, 5), (6, 6), (9, 9)];
    for (at, through) in cases {
        clock.advance(Duration::from_secs(10));
        let fork = s.fork(&source, at).await.unwrap();
        assert_eq!(fork.through_seq, through, "fork at #{at}");
        assert_eq!(fork.message_count, through, "fork at #{at}");
        let c = &fork.conversation;
        assert_ne!(c.id, source);
        assert_eq!(
            c.forked_from,
            Some(ForkOrigin {
                conversation_id: source.clone(),
                message_seq: at,
            })
        );
        assert_eq!(c.title, before.0.title, "the title is the source's");
        assert_eq!(c.model, before.0.model);
        assert_eq!(c.created_at, clock.now());
        assert_eq!(s.get(&c.id).await.unwrap(), *c);

        // The same messages, seqs, times, statuses, skill, sub-agent steps and task
        // notices; no turns.
        let copied = s.load_messages(&c.id).await.unwrap();
        let expected: Vec<StoredMessage> = all
            .iter()
            .take_while(|m| m.seq <= through)
            .map(|m| StoredMessage {
                turn_id: None,
                ..m.clone()
            })
            .collect();
        assert_eq!(copied, expected, "fork at #{at}");
        assert!(s.turns(&c.id).await.unwrap().is_empty());
        assert_eq!(s.message_count(&c.id).await.unwrap(), through);
    }
    // The source is exactly as it was.
    assert_eq!(snapshot(&s, &source).await, before);

    // What was copied along: the skill the first message was typed as, the delegate
    // result's steps.
    let fork = s.fork(&source, 4).await.unwrap();
    let copied = s.load_messages(&fork.conversation.id).await.unwrap();
    assert_eq!(copied[0].skill.as_ref().unwrap().typed, "/diagnose 000001");
    assert_eq!(copied[3].sub_agent, steps());
    assert_eq!(copied[1].message.tool_calls().len(), 2);
}

#[tokio::test]
async fn a_fork_goes_on_by_itself_and_is_found_by_search() {
    let (_d, s, clock) = store().await;
    let source = two_turns(&s, &clock).await;
    let before = snapshot(&s, &source).await;
    let fork = s.fork(&source, 5).await.unwrap().conversation;

    let turn = s.begin_turn(&fork.id).await.unwrap();
    let seq = s
        .append_message(&fork.id, Some(&turn.id), &Message::user("换个问题：茅台"))
        .await
        .unwrap();
    assert_eq!(seq, 6, "the fork's own messages follow the copied ones");
    assert_eq!(
        snapshot(&s, &source).await,
        before,
        "the source is untouched"
    );

    // The copies are searchable under the fork, the source's hits are still there.
    let hits = s.search("下跌通道", 10).await.unwrap();
    let mut ids: Vec<&str> = hits.iter().map(|h| h.conversation_id.as_str()).collect();
    ids.sort_unstable();
    let mut want = vec![source.as_str(), fork.id.as_str()];
    want.sort_unstable();
    assert_eq!(ids, want);

    // The Markdown export says where the fork came from; the source's says nothing.
    let md = s.export_markdown(&fork.id).await.unwrap();
    assert!(
        md.contains(&format!("- 分叉自：{source} 的第 5 条消息\n")),
        "{md}"
    );
    assert!(!s.export_markdown(&source).await.unwrap().contains("分叉自"));

    // Deleting the source leaves the fork and its record of where it came from.
    s.delete(&source).await.unwrap();
    let after = s.get(&fork.id).await.unwrap();
    assert_eq!(after.forked_from.unwrap().conversation_id, source);
    assert_eq!(s.message_count(&fork.id).await.unwrap(), 6);
    // Listed with the rest; plain conversations carry no origin.
    let plain = s.create("plain", "m").await.unwrap();
    assert_eq!(plain.forked_from, None);
    assert_eq!(s.list(false, 10).await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_fork_before_the_first_message_has_no_history_and_names_its_source() {
    let (_d, s, clock) = store().await;
    let source = two_turns(&s, &clock).await;
    let before = snapshot(&s, &source).await;
    let fork = s
        .fork(&source, wyckoff_memory::fork::BEFORE_FIRST)
        .await
        .unwrap();
    assert_eq!((fork.through_seq, fork.message_count), (0, 0));
    let c = &fork.conversation;
    assert_eq!(
        c.forked_from,
        Some(ForkOrigin {
            conversation_id: source.clone(),
            message_seq: 0,
        })
    );
    assert!(s.load_messages(&c.id).await.unwrap().is_empty());
    // Its first message is #1, as in any new conversation.
    let turn = s.begin_turn(&c.id).await.unwrap();
    let seq = s
        .append_message(&c.id, Some(&turn.id), &Message::user("改过的第一个问题"))
        .await
        .unwrap();
    assert_eq!(seq, 1);
    let md = s.export_markdown(&c.id).await.unwrap();
    assert!(md.contains(&format!("- 分叉自：{source} 的开头\n")), "{md}");
    assert_eq!(
        snapshot(&s, &source).await,
        before,
        "the source is untouched"
    );
    // An unknown source is still refused.
    assert!(matches!(
        s.fork("no-such-conversation", 0).await,
        Err(MemoryError::ConversationNotFound(_))
    ));
}

#[tokio::test]
async fn unknown_ids_are_refused_and_nothing_is_written() {
    let (_d, s, clock) = store().await;
    let source = two_turns(&s, &clock).await;
    let before = snapshot(&s, &source).await;
    let count = s.list(true, 100).await.unwrap().len();

    assert!(matches!(
        s.fork("no-such-conversation", 1).await,
        Err(MemoryError::ConversationNotFound(id)) if id == "no-such-conversation"
    ));
    for seq in [10, -1] {
        let err = s.fork(&source, seq).await.unwrap_err();
        assert!(
            matches!(&err, MemoryError::MessageNotFound { conversation, seq: s } if *conversation == source && *s == seq),
            "{err}"
        );
        assert!(err.to_string().contains(&format!("#{seq}")), "{err}");
    }
    assert!(matches!(
        s.message_count("no-such-conversation").await,
        Err(MemoryError::ConversationNotFound(_))
    ));
    assert_eq!(s.list(true, 100).await.unwrap().len(), count);
    assert_eq!(snapshot(&s, &source).await, before);
}

#[tokio::test]
async fn a_tool_round_still_running_cannot_be_forked_until_its_turn_ends() {
    let (_d, s, _clock) = store().await;
    let c = s.create("", "m").await.unwrap();
    let turn = s.begin_turn(&c.id).await.unwrap();
    let (a, b) = (call("a", "analyze_stock"), call("b", "get_market_overview"));
    for m in [
        Message::user("看看"),
        Message::Assistant {
            content: String::new(),
            tool_calls: vec![a.clone(), b.clone()],
            reasoning: None,
            reasoning_signature: None,
        },
        Message::tool_result(&a, "{}", false),
    ] {
        s.append_message(&c.id, Some(&turn.id), &m).await.unwrap();
    }
    let count = s.list(true, 100).await.unwrap().len();
    for at in [2, 3] {
        let err = s.fork(&c.id, at).await.unwrap_err();
        assert!(
            matches!(&err, MemoryError::ForkInRunningToolRound { seq, .. } if *seq == at),
            "{err}"
        );
        assert!(err.to_string().contains("still running"), "{err}");
    }
    assert_eq!(s.list(true, 100).await.unwrap().len(), count);
    // Before the round, the fork is fine.
    assert_eq!(s.fork(&c.id, 1).await.unwrap().message_count, 1);

    // The process died mid-tool: the turn is interrupted, and the fork copies the round
    // as the source holds it (the runtime answers b as aborted before the next turn).
    s.mark_unfinished_turns_interrupted().await.unwrap();
    let fork = s.fork(&c.id, 2).await.unwrap();
    assert_eq!(fork.through_seq, 3);
    let copied = s.load_messages(&fork.conversation.id).await.unwrap();
    assert!(
        copied
            .iter()
            .all(|m| m.status == MessageStatus::Interrupted)
    );
}
