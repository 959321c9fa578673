#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The conversation hub over real HTTP (the mock vendor speaks OpenAI's stream): one turn
//! per conversation, cancel, and a finished background task answered in a follow-up turn
//! that leaves through the same output as the user's turn, its notice stored typed.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use wyckoff_agent::{Approver, EventSink, HeadlessApprover, TurnOutcome};
use wyckoff_config::secrets::MemoryBackend;
use wyckoff_config::{DataHome, Secrets, Settings};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Response, Route};
use wyckoff_protocol::{Decider, InboxStatus, RuntimeEvent, TaskOutcome, TurnKind, UserOrigin};
use wyckoff_session::{
    Attendance, ConversationHub, HubOptions, ModelOverrides, Services, SessionError, Settled,
    TurnMeta, TurnOutput,
};

/// Every turn's events, with the turn they belong to.
#[derive(Default)]
struct Recorded(Mutex<Vec<(TurnMeta, RuntimeEvent)>>);

impl Recorded {
    fn of_kind(&self, kind: TurnKind) -> Vec<(TurnMeta, RuntimeEvent)> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _)| m.kind == kind)
            .cloned()
            .collect()
    }
}

struct TurnSink {
    meta: TurnMeta,
    record: Arc<Recorded>,
}

impl EventSink for TurnSink {
    fn emit(&self, event: RuntimeEvent) {
        self.record
            .0
            .lock()
            .unwrap()
            .push((self.meta.clone(), event));
    }
}

struct RecordingOutput(Arc<Recorded>);

impl TurnOutput for RecordingOutput {
    fn sink(&self, turn: &TurnMeta) -> Arc<dyn EventSink> {
        Arc::new(TurnSink {
            meta: turn.clone(),
            record: self.0.clone(),
        })
    }
}

struct Fixture {
    hub: Arc<ConversationHub>,
    server: MockServer,
    record: Arc<Recorded>,
    _home: tempfile::TempDir,
}

async fn fixture() -> Fixture {
    fixture_answered_by(Arc::new(HeadlessApprover::Never)).await
}

async fn fixture_answered_by(approver: Arc<dyn Approver>) -> Fixture {
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
    let server = MockServer::start().await.unwrap();
    let record = Arc::new(Recorded::default());
    let hub = ConversationHub::new(
        Arc::new(services),
        HubOptions {
            overrides: ModelOverrides {
                provider: Some("openai-compatible".into()),
                model: Some("mock-model".into()),
                base_url: Some(format!("{}/v1", server.url())),
                ..ModelOverrides::default()
            },
            approver,
            output: Arc::new(RecordingOutput(record.clone())),
        },
    );
    Fixture {
        hub,
        server,
        record,
        _home: home,
    }
}

fn text(t: &str) -> Response {
    OpenAiStream::text_response(&[t])
}

#[tokio::test(flavor = "multi_thread")]
async fn one_turn_per_conversation_cancel_ends_it_and_the_next_is_accepted() {
    let f = fixture().await;
    // The second turn's request holds the first question too: its answer goes first.
    f.server.push(
        Route::Openai,
        text("第二问的回答。").when_body_contains("第二问"),
    );
    f.server.push(
        Route::Openai,
        text("不会送出").when_body_contains("第一问").gated("never"),
    );

    let first = f
        .hub
        .start_turn(None, "第一问", Some("w-1".into()))
        .await
        .unwrap();
    let id = first.meta.conversation_id.clone();
    assert_eq!(first.meta.kind, TurnKind::User);
    assert_eq!(first.meta.client_ref.as_deref(), Some("w-1"));
    assert!(f.hub.is_running(&id));

    let refused = f
        .hub
        .start_turn(Some(&id), "第二问", None)
        .await
        .unwrap_err();
    assert!(
        matches!(refused, SessionError::Busy(ref c) if *c == id),
        "{refused}"
    );
    assert!(!f.hub.cancel("no-such-conversation"));
    assert!(f.hub.cancel(&id));
    let end = first.end.await.unwrap();
    assert_eq!(end.outcome, TurnOutcome::Cancelled);
    assert!(!f.hub.is_running(&id));

    let second = f.hub.start_turn(Some(&id), "第二问", None).await.unwrap();
    assert_eq!(second.meta.conversation_id, id);
    assert!(second.meta.turn > first.meta.turn);
    let end = second.end.await.unwrap();
    assert!(
        matches!(&end.outcome, TurnOutcome::Done { text, .. } if text == "第二问的回答。"),
        "{:?}",
        end.outcome
    );
    // Nothing was sent for the refused start.
    let asked: Vec<String> = f
        .server
        .requests_to(Route::Openai)
        .iter()
        .filter_map(|r| r.last_user_text().map(str::to_owned))
        .collect();
    assert_eq!(asked.iter().filter(|t| t.contains("第二问")).count(), 1);

    // Empty text and unknown skills are refused before anything is stored.
    let empty = f.hub.start_turn(Some(&id), "  ", None).await.unwrap_err();
    assert!(matches!(empty, SessionError::InvalidOption(_)), "{empty}");
    let unknown = f
        .hub
        .start_turn(None, "/nosuchskill x", None)
        .await
        .unwrap_err();
    assert!(matches!(unknown, SessionError::Skill(_)), "{unknown}");
    let conversations = f
        .hub
        .services()
        .conversations()
        .list(false, 10)
        .await
        .unwrap();
    assert_eq!(conversations.len(), 1, "{conversations:#?}");
}

/// A report finishes after the user's turn ended: the hub answers it in a follow-up
/// turn of that conversation, through the same output, the notice first; the notice is
/// stored typed with the notification message; `settle` reports that turn.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_finishing_while_idle_is_answered_in_a_follow_up_turn() {
    let f = fixture().await;
    let push = |r: Response| f.server.push(Route::Openai, r);
    push(
        OpenAiStream::tool_call_response(
            "c_rep",
            "generate_ai_report",
            &json!({"stock_codes": ["000001"]}),
        )
        .when_body_contains("给 000001 生成研报"),
    );
    push(text("研报已提交。").when_body_contains("AI 研报已提交后台执行"));
    push(
        text("## 防守\n000001 平安银行")
            .when_body_contains("三阵营研报")
            .gated("report"),
    );
    push(text("研报读完了。").when_body_contains("<tool-name>generate_ai_report</tool-name>"));

    let user = f
        .hub
        .start_turn(None, "给 000001 生成研报", None)
        .await
        .unwrap();
    let id = user.meta.conversation_id.clone();
    let end = user.end.await.unwrap();
    assert!(
        matches!(end.outcome, TurnOutcome::Done { .. }),
        "{:?}",
        end.outcome
    );
    assert!(f.record.of_kind(TurnKind::FollowUp).is_empty());

    f.server.open_gate("report");
    let settled = f
        .hub
        .settle(&id, Duration::from_secs(60), &CancellationToken::new())
        .await
        .unwrap();
    let Settled::Quiet(Some(follow_up)) = settled else {
        panic!("{settled:?}");
    };
    assert_eq!(follow_up.meta.kind, TurnKind::FollowUp);
    assert_eq!(follow_up.meta.conversation_id, id);
    assert_eq!(follow_up.meta.client_ref, None);
    assert!(
        matches!(&follow_up.outcome, TurnOutcome::Done { text, .. } if text == "研报读完了。"),
        "{:?}",
        follow_up.outcome
    );

    // The follow-up turn's events: the notice before the answer, one terminal event.
    let events: Vec<RuntimeEvent> = f
        .record
        .of_kind(TurnKind::FollowUp)
        .into_iter()
        .map(|(m, e)| {
            assert_eq!(m.turn, follow_up.meta.turn);
            e
        })
        .collect();
    let notice_at = events
        .iter()
        .position(|e| matches!(e, RuntimeEvent::TaskNotice { .. }))
        .expect("a task_notice event");
    let done_at = events
        .iter()
        .position(|e| matches!(e, RuntimeEvent::Done { .. }))
        .unwrap();
    assert!(notice_at < done_at);
    assert_eq!(events.iter().filter(|e| e.is_terminal()).count(), 1);
    let RuntimeEvent::TaskNotice { notice } = &events[notice_at] else {
        unreachable!()
    };
    assert_eq!(notice.tool_name, "generate_ai_report");
    assert_eq!(notice.outcome, TaskOutcome::Completed);
    assert!(
        notice.task_id.ends_with("generate_ai_report"),
        "{}",
        notice.task_id
    );

    // Stored: the notification message carries the same notice.
    let stored = f
        .hub
        .services()
        .conversations()
        .load_messages(&id)
        .await
        .unwrap();
    let noted: Vec<_> = stored
        .iter()
        .filter(|m| {
            matches!(
                m.message,
                wyckoff_protocol::Message::User {
                    origin: UserOrigin::SystemNotification,
                    ..
                }
            )
        })
        .collect();
    assert_eq!(noted.len(), 1);
    assert_eq!(noted[0].task_notice.as_ref(), Some(notice));
    assert!(
        stored
            .iter()
            .all(|m| m.task_notice.is_none() || m.seq == noted[0].seq)
    );
}

/// `settle` with nothing started waits for nothing; cancelling it cancels the
/// conversation's tasks and answers none of them.
#[tokio::test(flavor = "multi_thread")]
async fn cancelling_the_wait_cancels_the_tasks_and_answers_none() {
    let f = fixture().await;
    let push = |r: Response| f.server.push(Route::Openai, r);
    push(
        OpenAiStream::tool_call_response(
            "c_rep",
            "generate_ai_report",
            &json!({"stock_codes": ["000001"]}),
        )
        .when_body_contains("生成研报"),
    );
    push(text("研报已提交。").when_body_contains("AI 研报已提交后台执行"));
    push(
        text("不会送出")
            .when_body_contains("三阵营研报")
            .gated("never"),
    );

    let user = f.hub.start_turn(None, "生成研报", None).await.unwrap();
    let id = user.meta.conversation_id.clone();
    user.end.await.unwrap();
    let cancel = CancellationToken::new();
    let cancelled = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            cancel.cancel();
        })
    };
    let settled = f
        .hub
        .settle(&id, Duration::from_secs(60), &cancel)
        .await
        .unwrap();
    cancelled.await.unwrap();
    assert!(matches!(settled, Settled::Cancelled), "{settled:?}");
    let tasks = f.hub.services().background().list_for_session(&id);
    assert_eq!(tasks.len(), 1);
    // The task records its end; no follow-up turn answers it.
    let task = f
        .hub
        .services()
        .background()
        .wait_for(&tasks[0].task_id, Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(task.status, wyckoff_protocol::TaskStatus::Cancelled);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(f.record.of_kind(TurnKind::FollowUp).is_empty());
    assert!(!f.hub.is_running(&id));
}

fn set_cash(call_id: &str, amount: u32) -> Response {
    OpenAiStream::new()
        .role()
        .tool_call(
            0,
            call_id,
            "update_portfolio",
            &[json!({"action": "set_cash", "free_cash": amount}).to_string()],
        )
        .finish("tool_calls")
        .done()
        .response()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unattended_turn_queues_in_the_inbox_and_the_next_attended_turn_is_asked_again() {
    // The attended answerer allows everything: only the schedule's turn may queue.
    let f = fixture_answered_by(Arc::new(HeadlessApprover::All)).await;
    f.server.push(Route::Openai, set_cash("call-sched", 5000));
    f.server.push(Route::Openai, text("调仓在等待批准。"));
    f.server.push(Route::Openai, set_cash("call-user", 7000));
    f.server.push(Route::Openai, text("现金已设为 7000。"));
    let services = f.hub.services().clone();
    let cash = || async {
        services
            .market()
            .portfolio()
            .view()
            .await
            .unwrap()
            .free_cash
    };
    let before = cash().await;

    let unattended = Attendance::Unattended {
        requested_by: "schedule:收盘复盘".into(),
    };
    let scheduled = f
        .hub
        .start_turn_as(None, "收盘后复盘并调仓", None, unattended)
        .await
        .unwrap();
    let id = scheduled.meta.conversation_id.clone();
    let end = scheduled.end.await.unwrap();
    assert!(
        matches!(end.outcome, TurnOutcome::Done { .. }),
        "{:?}",
        end.outcome
    );
    assert_eq!(cash().await, before, "an unattended call must not run");
    let queued = services.inbox().list(chrono::Utc::now()).await.unwrap();
    assert_eq!(queued.len(), 1, "{queued:?}");
    assert_eq!(queued[0].requested_by, "schedule:收盘复盘");
    assert_eq!(queued[0].conversation_id, id);
    assert_eq!(queued[0].args["free_cash"], 5000);

    // The user's own turn in the same conversation is answered by the hub's approver.
    let attended = f
        .hub
        .start_turn(Some(&id), "把现金设为 7000", None)
        .await
        .unwrap();
    let end = attended.end.await.unwrap();
    assert!(
        matches!(end.outcome, TurnOutcome::Done { .. }),
        "{:?}",
        end.outcome
    );
    assert_eq!(cash().await, 7000.0);
    let still = services.inbox().list(chrono::Utc::now()).await.unwrap();
    assert_eq!(
        still.len(),
        1,
        "the attended call was not queued: {still:?}"
    );

    // Allowed from the app's inbox: the call runs and the conversation is told in a
    // follow-up turn whose first event is the typed notice.
    f.server
        .push(Route::Openai, text("已按批准把现金设为 5000。"));
    let decided = wyckoff_session::approvals::answer(
        &f.hub,
        &queued[0].id,
        wyckoff_inbox::policy::Answer::Allow,
        Decider::App,
        None,
        chrono::Utc::now(),
    )
    .await
    .unwrap();
    assert_eq!(decided.request.status, InboxStatus::Allowed);
    assert_eq!(cash().await, 5000.0);
    let follow_up = decided.follow_up.expect("the conversation was idle");
    assert_eq!(follow_up.meta.conversation_id, id);
    follow_up.end.await.unwrap();
    let events: Vec<RuntimeEvent> = f
        .record
        .of_kind(TurnKind::FollowUp)
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    let Some(RuntimeEvent::ApprovalNotice { notice }) = events.first() else {
        panic!("{events:?}");
    };
    assert_eq!(notice.request_id, queued[0].id);
    assert_eq!(notice.status, InboxStatus::Allowed);
    assert_eq!(notice.decided_by, Some(Decider::App));
}
