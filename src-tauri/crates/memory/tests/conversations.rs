mod common;

use std::sync::Arc;

use chrono::Duration;
use common::{conversation_store as store, t0};
use serde_json::json;
use wyckoff_memory::{
    ConversationExport, ConversationStore, ManualClock, MemoryError, MessageStatus, TurnOutcome,
    open_pool,
};
use wyckoff_protocol::{Message, ToolCall, Usage, UserOrigin};

fn tool_exchange() -> Vec<Message> {
    let call = ToolCall::new(
        "c1",
        "analyze_stock",
        json!({"code": "600519", "mode": "diagnose"}),
    );
    vec![
        Message::user("帮我看看600519贵州茅台"),
        Message::Assistant {
            content: String::new(),
            tool_calls: vec![call.clone()],
            reasoning: Some("先诊断".into()),
            reasoning_signature: None,
        },
        Message::tool_result(
            &call,
            r#"{"code":"600519","health":"🟢健康","note":"```"}"#,
            false,
        ),
        Message::assistant("600519 处于吸筹末期，出现 Spring 信号。"),
    ]
}

#[tokio::test]
async fn messages_round_trip_in_order_with_turns() {
    let (_d, s, clock) = store().await;
    let c = s.create("", "deepseek-chat").await.unwrap();
    let turn = s.begin_turn(&c.id).await.unwrap();
    let msgs = tool_exchange();
    for (i, m) in msgs.iter().enumerate() {
        clock.advance(std::time::Duration::from_secs(1));
        let seq = s.append_message(&c.id, Some(&turn.id), m).await.unwrap();
        assert_eq!(seq, i as i64 + 1);
    }
    let usage = Usage {
        input_tokens: 100,
        output_tokens: 20,
        ..Default::default()
    };
    let ended = s
        .end_turn(&turn.id, TurnOutcome::Done, Some(&usage))
        .await
        .unwrap();
    assert_eq!(ended.outcome, Some(TurnOutcome::Done));
    assert_eq!(ended.usage, Some(usage));

    assert_eq!(s.messages(&c.id).await.unwrap(), msgs);
    let stored = s.load_messages(&c.id).await.unwrap();
    assert!(stored.iter().all(|m| m.status == MessageStatus::Complete));
    assert_eq!(stored[3].turn_id.as_deref(), Some(turn.id.as_str()));
    assert_eq!(stored[3].created_at, t0() + Duration::seconds(4));

    let c2 = s.get(&c.id).await.unwrap();
    assert_eq!(
        c2.title, "帮我看看600519贵州茅台",
        "first user message names it"
    );
    assert_eq!(c2.updated_at, t0() + Duration::seconds(4));
}

#[tokio::test]
async fn list_rename_archive_delete() {
    let (_d, s, clock) = store().await;
    let a = s.create("第一个", "m").await.unwrap();
    clock.advance(std::time::Duration::from_secs(60));
    let b = s.create("第二个", "m").await.unwrap();
    clock.advance(std::time::Duration::from_secs(60));
    // activity moves a conversation to the top
    s.append_message(&a.id, None, &Message::user("你好"))
        .await
        .unwrap();
    let ids: Vec<String> = s
        .list(false, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(ids, vec![a.id.clone(), b.id.clone()]);
    assert_eq!(
        s.get(&a.id).await.unwrap().title,
        "第一个",
        "explicit title kept"
    );

    s.rename(&b.id, "白酒研究").await.unwrap();
    assert_eq!(s.get(&b.id).await.unwrap().title, "白酒研究");
    s.set_archived(&b.id, true).await.unwrap();
    assert_eq!(s.list(false, 10).await.unwrap().len(), 1);
    assert_eq!(s.list(true, 10).await.unwrap().len(), 2);

    let turn = s.begin_turn(&a.id).await.unwrap();
    s.append_message(&a.id, Some(&turn.id), &Message::user("茅台怎么样"))
        .await
        .unwrap();
    let r = s
        .archive_messages(&a.id, &[Message::user("旧消息")])
        .await
        .unwrap();
    s.delete(&a.id).await.unwrap();
    assert!(matches!(
        s.get(&a.id).await,
        Err(MemoryError::ConversationNotFound(_))
    ));
    assert!(
        s.search("茅台", 10).await.unwrap().is_empty(),
        "search index cleaned"
    );
    assert!(matches!(
        s.load_archive(&r.to_string()).await,
        Err(MemoryError::ArchiveNotFound(_))
    ));
    assert!(matches!(
        s.turn(&turn.id).await,
        Err(MemoryError::TurnNotFound(_))
    ));
    assert!(matches!(
        s.delete(&a.id).await,
        Err(MemoryError::ConversationNotFound(_))
    ));
    assert!(matches!(
        s.rename("nope", "x").await,
        Err(MemoryError::ConversationNotFound(_))
    ));
    assert!(matches!(
        s.append_message("nope", None, &Message::user("x")).await,
        Err(MemoryError::ConversationNotFound(_))
    ));
}

#[tokio::test]
async fn search_finds_chinese_bigrams_codes_and_words() {
    let (_d, s, _c) = store().await;
    let a = s.create("茅台", "m").await.unwrap();
    for m in tool_exchange() {
        s.append_message(&a.id, None, &m).await.unwrap();
    }
    let b = s.create("银行", "m").await.unwrap();
    s.append_message(&b.id, None, &Message::user("白酒和银行板块哪个更强？"))
        .await
        .unwrap();

    let hits = s.search("茅台", 10).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(
        (hits[0].conversation_id.as_str(), hits[0].seq),
        (a.id.as_str(), 1)
    );
    assert_eq!(hits[0].snippet, "帮我看看600519贵州茅台");

    let code_hits: Vec<i64> = s
        .search("600519", 10)
        .await
        .unwrap()
        .iter()
        .map(|h| h.seq)
        .collect();
    assert_eq!(
        code_hits.len(),
        3,
        "user, tool result and answer mention it: {code_hits:?}"
    );
    let spring = s.search("spring 吸筹", 10).await.unwrap();
    assert_eq!(spring.len(), 1);
    assert_eq!(spring[0].role, "assistant");
    // tool names are searchable too
    assert_eq!(s.search("analyze_stock", 10).await.unwrap().len(), 2);
    let white = s.search("白酒", 10).await.unwrap();
    assert_eq!(
        (white.len(), white[0].conversation_title.as_str()),
        (1, "银行")
    );
    // lone character: substring fallback
    assert_eq!(s.search("强", 10).await.unwrap().len(), 1);
    assert!(s.search("啤酒", 10).await.unwrap().is_empty());
}

#[tokio::test]
async fn unfinished_turns_are_marked_interrupted_at_startup() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wyckoff.db");
    let clock = Arc::new(ManualClock::new(t0()));
    let (conv, open_turn, done_turn) = {
        let s = ConversationStore::with_clock(open_pool(&path).await.unwrap(), clock.clone());
        let c = s.create("t", "m").await.unwrap();
        let done = s.begin_turn(&c.id).await.unwrap();
        s.append_message(&c.id, Some(&done.id), &Message::user("第一问"))
            .await
            .unwrap();
        s.end_turn(&done.id, TurnOutcome::Done, None).await.unwrap();
        let open = s.begin_turn(&c.id).await.unwrap();
        s.append_message(&c.id, Some(&open.id), &Message::user("第二问"))
            .await
            .unwrap();
        s.append_message(&c.id, Some(&open.id), &Message::assistant("回答到一半"))
            .await
            .unwrap();
        s.pool().close().await; // the app "dies" here
        (c.id, open.id, done.id)
    };
    clock.advance(std::time::Duration::from_secs(5 * 60));
    let s = ConversationStore::with_clock(open_pool(&path).await.unwrap(), clock.clone());
    assert_eq!(
        s.mark_unfinished_turns_interrupted().await.unwrap(),
        vec![open_turn.clone()]
    );
    assert!(
        s.mark_unfinished_turns_interrupted()
            .await
            .unwrap()
            .is_empty(),
        "idempotent"
    );

    let t = s.turn(&open_turn).await.unwrap();
    assert_eq!(t.outcome, Some(TurnOutcome::Interrupted));
    assert_eq!(t.ended_at, Some(t0() + Duration::minutes(5)));
    assert_eq!(
        s.turn(&done_turn).await.unwrap().outcome,
        Some(TurnOutcome::Done)
    );
    let statuses: Vec<MessageStatus> = s
        .load_messages(&conv)
        .await
        .unwrap()
        .iter()
        .map(|m| m.status)
        .collect();
    assert_eq!(
        statuses,
        vec![
            MessageStatus::Complete,
            MessageStatus::Interrupted,
            MessageStatus::Interrupted
        ]
    );
    assert!(matches!(
        s.end_turn("nope", TurnOutcome::Done, None).await,
        Err(MemoryError::TurnNotFound(_))
    ));
}

#[tokio::test]
async fn export_markdown_and_json() {
    let (_d, s, _c) = store().await;
    let c = s.create("茅台诊断", "claude-sonnet").await.unwrap();
    let turn = s.begin_turn(&c.id).await.unwrap();
    for m in tool_exchange() {
        s.append_message(&c.id, Some(&turn.id), &m).await.unwrap();
    }
    s.append_message(
        &c.id,
        None,
        &Message::user_with_origin("后台任务完成", UserOrigin::SystemNotification),
    )
    .await
    .unwrap();

    let md = s.export_markdown(&c.id).await.unwrap();
    assert!(md.starts_with("# 茅台诊断\n\n- 会话："), "{md}");
    assert!(md.contains("- 模型：claude-sonnet\n"));
    assert!(md.contains("\n## 用户 · #1\n\n帮我看看600519贵州茅台\n"));
    assert!(
        md.contains("> 调用工具 `analyze_stock` `{\"code\":\"600519\",\"mode\":\"diagnose\"}`")
    );
    // the tool output contains ``` so the fence is longer
    assert!(md.contains("\n## 工具结果 `analyze_stock` · #3\n\n````text\n{\"code\":\"600519\""));
    assert!(md.contains("## 助手 · #4\n\n600519 处于吸筹末期"));
    assert!(md.contains("## 系统通知 · #5"));

    let json = s.export_json(&c.id).await.unwrap();
    let back: ConversationExport = serde_json::from_str(&json).unwrap();
    assert_eq!(back.conversation, s.get(&c.id).await.unwrap());
    assert_eq!(back.turns.len(), 1);
    let msgs: Vec<Message> = back.messages.into_iter().map(|m| m.message).collect();
    assert_eq!(msgs.len(), 5);
    assert_eq!(msgs[..4], tool_exchange()[..]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["messages"][1]["message"]["role"], "assistant");
    assert_eq!(
        v["messages"][1]["message"]["tool_calls"][0]["name"],
        "analyze_stock"
    );
}

#[tokio::test]
async fn archives_round_trip_and_validate_refs() {
    let (_d, s, clock) = store().await;
    let c = s.create("t", "m").await.unwrap();
    let head = tool_exchange();
    let r1 = s.archive_messages(&c.id, &head).await.unwrap();
    clock.advance(std::time::Duration::from_secs(1));
    let r2 = s.archive_messages(&c.id, &head[..1]).await.unwrap();
    let text = r1.to_string();
    assert_eq!(text, format!("archive://{}/{}", c.id, r1.id));

    let back = s.load_archive(&text).await.unwrap();
    assert_eq!(back.messages, head);
    assert_eq!(back.reference, r1);
    assert_eq!(back.created_at, t0());

    let list = s.list_archives(&c.id).await.unwrap();
    assert_eq!(
        list.iter()
            .map(|a| (a.reference.clone(), a.message_count))
            .collect::<Vec<_>>(),
        vec![(r1.clone(), 4), (r2, 1)]
    );
    // a ref naming another conversation does not open this archive
    let wrong = format!("archive://other/{}", r1.id);
    assert!(matches!(
        s.load_archive(&wrong).await,
        Err(MemoryError::ArchiveNotFound(_))
    ));
    let err = s.load_archive("ctx_123").await.unwrap_err().to_string();
    assert_eq!(
        err,
        "invalid archive reference `ctx_123`: expected archive://<conversation>/<id>"
    );
    assert!(matches!(
        s.archive_messages("nope", &head).await,
        Err(MemoryError::ConversationNotFound(_))
    ));
}

#[tokio::test]
async fn a_skill_message_keeps_what_was_typed_and_which_skill() {
    let (_d, s, _c) = store().await;
    let c = s.create("", "m").await.unwrap();
    let skill = wyckoff_protocol::SkillUse {
        name: "checkup".into(),
        builtin: true,
        typed: "/checkup 000001".into(),
    };
    let expansion = Message::user("执行持仓全面体检：\n1. 调用 portfolio(mode=\"diagnose\")");
    s.append_message_with_skill(&c.id, None, &expansion, Some(&skill))
        .await
        .unwrap();
    s.append_message(&c.id, None, &Message::assistant("好的"))
        .await
        .unwrap();
    let stored = s.load_messages(&c.id).await.unwrap();
    assert_eq!(
        stored[0].message, expansion,
        "the model's text is what is resumed"
    );
    assert_eq!(stored[0].skill.as_ref(), Some(&skill));
    assert_eq!(stored[1].skill, None);
    assert_eq!(
        s.get(&c.id).await.unwrap().title,
        "/checkup 000001",
        "named by what was typed"
    );
    let md = s.export_markdown(&c.id).await.unwrap();
    assert!(
        md.contains("> 输入 `/checkup 000001`（技能 /checkup 展开为下文）\n\n执行持仓全面体检"),
        "{md}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&s.export_json(&c.id).await.unwrap()).unwrap();
    assert_eq!(json["messages"][0]["skill"]["typed"], "/checkup 000001");
}

#[tokio::test]
async fn a_delegate_result_keeps_its_sub_agent_steps() {
    let (_d, s, _c) = store().await;
    let c = s.create("", "m").await.unwrap();
    let call = ToolCall::new("d1", "delegate_to_research", json!({"task": "看看 000001"}));
    let steps = vec![
        wyckoff_protocol::SubAgentStep {
            kind: "tool_start".into(),
            text: "analyze_stock".into(),
        },
        wyckoff_protocol::SubAgentStep {
            kind: "tool_result".into(),
            text: "analyze_stock 12ms".into(),
        },
    ];
    s.append_message(&c.id, None, &Message::user("让研究员看看"))
        .await
        .unwrap();
    let result = Message::tool_result(&call, r#"{"agent":"research"}"#, false);
    s.append_message_with_sub_agent(&c.id, None, &result, &steps)
        .await
        .unwrap();
    let stored = s.load_messages(&c.id).await.unwrap();
    assert_eq!(stored[1].message, result);
    assert_eq!(stored[1].sub_agent, steps);
    assert!(stored[0].sub_agent.is_empty(), "other messages have none");
}
