#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A session over real HTTP (the OpenAI-compatible provider against the mock vendor), a
//! real `wyckoff.db` and offline market data: messages are stored as they happen,
//! memories are extracted at session end, flushed before compaction and recalled in the
//! next session's system prompt.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use wyckoff_agent::{CollectingSink, HeadlessApprover, TurnOutcome};
use wyckoff_config::secrets::MemoryBackend;
use wyckoff_config::{DataHome, Secrets, Settings};
use wyckoff_memory::MemoryType;
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Response, Route};
use wyckoff_protocol::{Message, RuntimeEvent};
use wyckoff_session::{ModelOverrides, Services, Session, SessionOptions};

struct Fixture {
    _home: tempfile::TempDir,
    services: Services,
    server: MockServer,
}

async fn fixture() -> Fixture {
    let home = tempfile::tempdir().unwrap();
    let settings = Settings {
        // No online market source: the bundled data only.
        data_sources: Vec::new(),
        ..Settings::default()
    };
    let secrets = Secrets::with_backend(Box::new(MemoryBackend::default()), Box::new(|_| None));
    let services = Services::open(DataHome::new(home.path()), settings, Arc::new(secrets))
        .await
        .unwrap();
    Fixture {
        _home: home,
        services,
        server: MockServer::start().await.unwrap(),
    }
}

impl Fixture {
    async fn session(&self, continue_session: Option<String>, window: Option<u32>) -> Session {
        self.services
            .session(SessionOptions {
                overrides: ModelOverrides {
                    provider: Some("openai-compatible".into()),
                    model: Some("mock-model".into()),
                    base_url: Some(format!("{}/v1", self.server.url())),
                    context_window: window,
                    ..ModelOverrides::default()
                },
                continue_session,
                approver: Arc::new(HeadlessApprover::Never),
            })
            .await
            .unwrap()
    }

    fn reply(&self, text: &str) {
        self.server
            .push(Route::Openai, OpenAiStream::text_response(&[text]));
    }
}

fn system_prompt_of(body: &serde_json::Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn messages_are_stored_while_the_turn_is_still_running() {
    let f = fixture().await;
    f.server.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .tool_call(
                0,
                "call_1",
                "search_stock_by_name",
                &[json!({"keyword": "平安银行"}).to_string()],
            )
            .finish("tool_calls")
            .done()
            .response(),
    );
    // The answer after the tool result comes late: the turn is mid-way meanwhile.
    let mut late = OpenAiStream::new().role().text(&["平安银行代码 000001。"]);
    late = late.finish("stop").done();
    let mut events = late.events();
    events[0] = events[0].clone().delayed(1500);
    f.server.push(Route::Openai, Response::stream(events));

    let mut session = f.session(None, None).await;
    let id = session.id().to_owned();
    let store = f.services.conversations().clone();
    let turn = tokio::spawn(async move {
        let report = session
            .run_turn(
                "平安银行的代码是多少",
                CollectingSink::new(),
                CancellationToken::new(),
            )
            .await
            .unwrap();
        (session, report)
    });

    // While the model is still answering, the tool call and its result are on disk.
    let mut stored = Vec::new();
    for _ in 0..100 {
        stored = store.messages(&id).await.unwrap();
        if stored.iter().any(|m| matches!(m, Message::Tool { .. })) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !turn.is_finished(),
        "the turn should still be waiting for the model"
    );
    assert_eq!(stored.len(), 3, "{stored:?}");
    assert!(stored[0].text().starts_with("平安银行的代码是多少"));
    assert_eq!(stored[1].tool_calls()[0].name, "search_stock_by_name");
    match &stored[2] {
        Message::Tool {
            content, is_error, ..
        } => {
            assert!(!is_error);
            assert!(content.contains("000001"), "{content}");
        }
        other => panic!("{other:?}"),
    }

    let (session, report) = turn.await.unwrap();
    assert!(report.save_error.is_none());
    assert!(matches!(report.outcome, TurnOutcome::Done { .. }));
    let stored = store.messages(&id).await.unwrap();
    assert_eq!(stored.len(), 4);
    assert_eq!(stored[3].text(), "平安银行代码 000001。");
    // What is stored is what the model sees.
    assert_eq!(stored, session.messages());
}

#[tokio::test]
async fn session_end_extraction_saves_preferences_and_session_memories_once() {
    let f = fixture().await;
    f.reply("好的，以后只看主板。");
    f.reply("- [偏好] 不碰创业板\n- 用户关注 600519 的吸筹进度");
    let mut session = f.session(None, None).await;
    let events = CollectingSink::new();
    session
        .run_turn(
            "我只做主板，不碰创业板。",
            events.clone(),
            CancellationToken::new(),
        )
        .await
        .unwrap();

    let outcome = session.extract_memories().await.unwrap();
    assert!(outcome.called_model);
    assert_eq!(outcome.saved.len(), 2);
    let requests = f.server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 2);
    let asked = requests[1].body.to_string();
    assert!(asked.contains("我只做主板，不碰创业板。"), "{asked}");

    let memories = f.services.memories();
    let prefs = memories
        .list(Some(MemoryType::Preference), 10)
        .await
        .unwrap();
    assert_eq!(prefs.len(), 1);
    assert_eq!(prefs[0].content, "不碰创业板");
    assert_eq!(
        prefs[0].source_ref,
        format!("conversation:{}", session.id())
    );
    let sessions = memories.list(Some(MemoryType::Session), 10).await.unwrap();
    assert_eq!(sessions[0].content, "用户关注 600519 的吸筹进度");

    // Nothing new said: no second model call.
    let again = session.extract_memories().await.unwrap();
    assert!(!again.called_model);
    assert_eq!(f.server.requests_to(Route::Openai).len(), 2);
}

#[tokio::test]
async fn a_preference_survives_compaction_and_is_recalled_in_a_new_session() {
    let f = fixture().await;
    // One answer serves every call (turn answers, the flush, the summary), so the test
    // does not depend on their order: the flush saves it as a preference.
    for _ in 0..40 {
        f.reply("[偏好] 不做创业板股票，只做沪深主板");
    }
    // A tiny window: the request is over 25 % of it from the 3rd message on.
    let mut first = f.session(None, Some(2_000)).await;
    let sink = CollectingSink::new();
    let turns = [
        "记住，我不做创业板股票，只做沪深主板。",
        "另外我一般持股两到三周，不做超短线。",
        "最近市场成交量怎么样？说说你的看法吧。",
        "那银行板块整体处于什么阶段呢？简单说说。",
        "好的，再说说券商板块的量价结构吧。",
    ];
    for t in turns {
        let report = first
            .run_turn(t, sink.clone(), CancellationToken::new())
            .await
            .unwrap();
        assert!(
            matches!(report.outcome, TurnOutcome::Done { .. }),
            "{report:?}"
        );
    }
    let events = sink.events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RuntimeEvent::Compaction { .. })),
        "no compaction: {events:?}"
    );
    // The first statement is gone from what the model sees…
    assert!(
        !first
            .messages()
            .iter()
            .any(|m| m.text().starts_with("记住，我不做创业板股票"))
    );
    // …but the flush kept it as a preference.
    let prefs = f
        .services
        .memories()
        .list(Some(MemoryType::Preference), 10)
        .await
        .unwrap();
    assert_eq!(prefs.len(), 1, "{prefs:?}");
    assert_eq!(prefs[0].content, "不做创业板股票，只做沪深主板");
    assert_eq!(prefs[0].source_ref, "compaction_flush");

    // A new session: the preference is recalled before the first model call.
    let before = f.server.requests_to(Route::Openai).len();
    let mut second = f.session(None, None).await;
    let sink = CollectingSink::new();
    second
        .run_turn(
            "创业板的宁德时代能买吗？",
            sink.clone(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let events = sink.events();
    let recall_at = events
        .iter()
        .position(|e| matches!(e, RuntimeEvent::MemoryRecall { .. }))
        .expect("memory_recall event");
    let first_model_call = events
        .iter()
        .position(|e| matches!(e, RuntimeEvent::ModelStart { .. }))
        .unwrap();
    assert!(recall_at < first_model_call);
    let RuntimeEvent::MemoryRecall { items } = &events[recall_at] else {
        unreachable!()
    };
    assert_eq!(items[0].memory_type, "preference");
    assert_eq!(items[0].content, "不做创业板股票，只做沪深主板");
    let request = &f.server.requests_to(Route::Openai)[before];
    let system = system_prompt_of(&request.body);
    assert!(
        system.contains("# 用户偏好\n- 不做创业板股票，只做沪深主板"),
        "{system}"
    );
    // Recall goes into that turn's prompt only, never into the stored conversation.
    let stored = f
        .services
        .conversations()
        .messages(second.id())
        .await
        .unwrap();
    assert!(!stored.iter().any(|m| m.text().contains("# 用户偏好")));
}

#[tokio::test]
async fn nothing_to_recall_sends_no_event_and_the_plain_prompt() {
    let f = fixture().await;
    f.reply("你好。");
    let mut session = f.session(None, None).await;
    let sink = CollectingSink::new();
    session
        .run_turn("你好", sink.clone(), CancellationToken::new())
        .await
        .unwrap();
    assert!(
        !sink
            .events()
            .iter()
            .any(|e| matches!(e, RuntimeEvent::MemoryRecall { .. }))
    );
    let system = system_prompt_of(&f.server.requests_to(Route::Openai)[0].body);
    assert_eq!(system, session.system_prompt());
}

#[tokio::test]
async fn a_skill_turn_sends_the_expansion_and_stores_what_was_typed() {
    let f = fixture().await;
    let skills = f.services.home().skills_dir();
    std::fs::create_dir_all(&skills).unwrap();
    std::fs::write(
        skills.join("weekly.md"),
        "---\nname: weekly\ndescription: 周复盘\n---\n复盘本周：{user_input}",
    )
    .unwrap();
    f.reply("好的。");
    let mut session = f.session(None, None).await;
    session
        .run_turn(
            "/weekly 600519",
            CollectingSink::new(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let sent = f.server.requests_to(Route::Openai);
    let user = sent[0].last_user_text().unwrap();
    assert!(user.starts_with("复盘本周：600519"), "{user}");

    let stored = f
        .services
        .conversations()
        .load_messages(session.id())
        .await
        .unwrap();
    let skill = stored[0].skill.clone().unwrap();
    assert_eq!(
        (skill.name.as_str(), skill.builtin, skill.typed.as_str()),
        ("weekly", false, "/weekly 600519")
    );
    assert!(stored[0].message.text().contains("复盘本周：600519"));
    assert_eq!(session.conversation().title, "/weekly 600519");

    // An unknown /word stops before anything is stored or sent.
    let before = stored.len();
    let err = session
        .run_turn("/nosuch x", CollectingSink::new(), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("unknown command /nosuch"), "{err}");
    assert!(err.is_user_error());
    assert_eq!(
        f.services
            .conversations()
            .load_messages(session.id())
            .await
            .unwrap()
            .len(),
        before
    );
    assert_eq!(f.server.requests_to(Route::Openai).len(), 1);
}
