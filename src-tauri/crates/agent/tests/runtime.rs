#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Runtime tests with a scripted provider: the loop, batches, approvals, guards, stalls,
//! cancellation, background tasks, scratchpads.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::scripted::{self, ScriptedProvider, Step};
use wyckoff_agent::{
    BackgroundTaskManager, EventSink, FnSink, HeadlessApprover, ManualClock, PendingApprovals,
    ResultStore, Runtime, RuntimeConfig, SystemClock, ToolError, ToolRegistry, ToolSpec,
    TurnOutcome,
};
use wyckoff_protocol::{
    ApprovalDecision, ApprovalPreview, DecisionKind, ErrorKind, Message, RuntimeEvent, UserOrigin,
};

fn analyze_tool(calls: Arc<Mutex<Vec<Value>>>) -> Arc<dyn wyckoff_agent::Tool> {
    tool(
        ToolSpec::new("analyze_stock", "个股分析").concurrency_safe(),
        obj(
            json!({"code": {"type": "string"}, "mode": {"type": "string", "enum": ["diagnose", "price"]}, "days": {"type": "integer"}}),
            &["code"],
        ),
        move |args, _ctx| {
            let calls = calls.clone();
            async move {
                calls.lock().unwrap().push(args.clone());
                Ok(json!({"code": args["code"], "phase": "吸筹", "days": args.get("days")}))
            }
        },
    )
}

#[tokio::test]
async fn two_round_tool_turn() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut reg = ToolRegistry::new();
    reg.register(analyze_tool(seen.clone()));
    let h = harness(
        vec![
            scripted::tool_calls(
                "我先查一下数据。",
                vec![call(
                    "c1",
                    "analyze_stock",
                    json!({"code": "600519", "days": "30"}),
                )],
            ),
            scripted::text("600519 处于吸筹阶段。"),
        ],
        reg,
    );
    let mut messages = Vec::new();
    let out = h.turn(&mut messages, "分析 600519").await;
    assert_eq!(out.exit_code(), 0);
    assert!(
        matches!(&out, TurnOutcome::Done { text, rounds: 2, .. } if text == "600519 处于吸筹阶段。")
    );

    // The tool got coerced, validated arguments.
    assert_eq!(
        *seen.lock().unwrap(),
        vec![json!({"code": "600519", "days": 30})]
    );

    let events = h.events();
    assert_one_terminal(&events);
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| match e {
            RuntimeEvent::ModelStart { .. } => "model_start",
            RuntimeEvent::TextDelta { .. } => "text_delta",
            RuntimeEvent::ToolCalls {
                discard_text: true, ..
            } => "tool_calls(discard)",
            RuntimeEvent::ToolCalls { .. } => "tool_calls",
            RuntimeEvent::ToolStart { .. } => "tool_start",
            RuntimeEvent::ToolResult { .. } => "tool_result",
            RuntimeEvent::Usage { .. } => "usage",
            RuntimeEvent::Done { .. } => "done",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            "model_start",
            "text_delta",
            "usage",
            "tool_calls(discard)",
            "tool_start",
            "tool_result",
            "model_start",
            "text_delta",
            "usage",
            "done"
        ]
    );
    assert!(matches!(
        &events[6],
        RuntimeEvent::ModelStart { round: 2, .. }
    ));
    if let RuntimeEvent::Usage { turn, .. } = &events[8] {
        assert_eq!(turn.input_tokens, 20);
    }

    assert_valid_conversation(&messages);
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[0], Message::user("分析 600519"));
    assert_eq!(messages[3].text(), "600519 处于吸筹阶段。");
    // The second request carried the tool result.
    let reqs = h.provider.requests();
    assert_eq!(reqs.len(), 2);
    let (content, is_error) = tool_message(&reqs[1].messages, "c1");
    assert!(!is_error);
    assert!(content.contains("吸筹"));
    assert!(reqs[0].tools.iter().any(|t| t.name == "analyze_stock"));
    assert!(
        reqs[0]
            .tools
            .iter()
            .any(|t| t.name == "check_background_tasks")
    );
}

#[derive(Default)]
struct Timeline {
    spans: Mutex<Vec<(usize, Instant, Instant)>>,
    running: AtomicUsize,
    peak: AtomicUsize,
}

fn slow_tool(timeline: Arc<Timeline>) -> Arc<dyn wyckoff_agent::Tool> {
    tool(
        ToolSpec::new("slow_lookup", "慢查询").concurrency_safe(),
        obj(json!({"i": {"type": "integer"}}), &["i"]),
        move |args, _ctx| {
            let t = timeline.clone();
            async move {
                let now = t.running.fetch_add(1, Ordering::SeqCst) + 1;
                t.peak.fetch_max(now, Ordering::SeqCst);
                let start = Instant::now();
                tokio::time::sleep(Duration::from_millis(200)).await;
                let end = Instant::now();
                t.running.fetch_sub(1, Ordering::SeqCst);
                let i = args["i"].as_u64().unwrap() as usize;
                t.spans.lock().unwrap().push((i, start, end));
                Ok(json!({"i": i}))
            }
        },
    )
}

#[tokio::test]
async fn five_concurrency_safe_tools_overlap_and_keep_order() {
    let timeline = Arc::new(Timeline::default());
    let mut reg = ToolRegistry::new();
    reg.register(slow_tool(timeline.clone()));
    let calls: Vec<_> = (0..5)
        .map(|i| call(&format!("c{i}"), "slow_lookup", json!({"i": i})))
        .collect();
    let h = harness(
        vec![scripted::tool_calls("", calls), scripted::text("好了")],
        reg,
    );
    let mut messages = Vec::new();
    h.turn(&mut messages, "查五个").await;

    let spans = timeline.spans.lock().unwrap().clone();
    assert_eq!(spans.len(), 5);
    // All five were running at one instant: the last start precedes the first end.
    let last_start = spans.iter().map(|s| s.1).max().unwrap();
    let first_end = spans.iter().map(|s| s.2).min().unwrap();
    assert!(last_start < first_end, "calls did not overlap: {spans:?}");
    assert_eq!(timeline.peak.load(Ordering::SeqCst), 5);

    assert_valid_conversation(&messages);
    let ids: Vec<&str> = messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { tool_call_id, .. } => Some(tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, vec!["c0", "c1", "c2", "c3", "c4"]);
}

#[tokio::test]
async fn at_most_five_tools_run_at_once() {
    let timeline = Arc::new(Timeline::default());
    let mut reg = ToolRegistry::new();
    reg.register(slow_tool(timeline.clone()));
    let calls: Vec<_> = (0..8)
        .map(|i| call(&format!("c{i}"), "slow_lookup", json!({"i": i})))
        .collect();
    let h = harness(
        vec![scripted::tool_calls("", calls), scripted::text("好了")],
        reg,
    );
    let mut messages = Vec::new();
    h.turn(&mut messages, "查八个").await;
    assert_eq!(timeline.spans.lock().unwrap().len(), 8);
    assert_eq!(timeline.peak.load(Ordering::SeqCst), 5);
    assert_valid_conversation(&messages);
}

#[tokio::test]
async fn unsafe_tools_run_alone_in_order() {
    let order = Arc::new(Mutex::new(Vec::new()));
    let timeline = Arc::new(Timeline::default());
    let mut reg = ToolRegistry::new();
    reg.register(slow_tool(timeline.clone()));
    let o = order.clone();
    reg.register(tool(
        ToolSpec::new("write_note", "写笔记"),
        obj(json!({"n": {"type": "integer"}}), &["n"]),
        move |args, _| {
            let o = o.clone();
            async move {
                o.lock().unwrap().push(args["n"].as_i64().unwrap());
                Ok(json!({"ok": true}))
            }
        },
    ));
    let calls = vec![
        call("a", "write_note", json!({"n": 1})),
        call("b", "slow_lookup", json!({"i": 0})),
        call("c", "slow_lookup", json!({"i": 1})),
        call("d", "write_note", json!({"n": 2})),
    ];
    let h = harness(
        vec![scripted::tool_calls("", calls), scripted::text("ok")],
        reg,
    );
    let mut messages = Vec::new();
    h.turn(&mut messages, "写").await;
    assert_eq!(*order.lock().unwrap(), vec![1, 2]);
    assert_eq!(timeline.peak.load(Ordering::SeqCst), 2);
    assert_valid_conversation(&messages);
}

fn dangerous_tool(ran: Arc<Mutex<Vec<Value>>>) -> Arc<dyn wyckoff_agent::Tool> {
    let tool = wyckoff_agent::FnTool::new(
        ToolSpec::new("exec_command", "执行命令").requires_approval(),
        "test tool",
        obj(
            json!({"command": {"type": "string"}, "timeout": {"type": "integer"}}),
            &["command"],
        ),
        move |args, _| {
            let ran = ran.clone();
            async move {
                ran.lock().unwrap().push(args.clone());
                Ok(json!({"stdout": "ok"}))
            }
        },
    )
    // The dialog's preview is worked out from the validated arguments.
    .with_preview(|args| ApprovalPreview::Command {
        command: args["command"].as_str().unwrap_or_default().to_owned(),
        cwd: "/ws".into(),
        timeout_secs: 30,
        detaches: Vec::new(),
    });
    Arc::new(tool)
}

/// Runs one turn where the model calls exec_command once, answering the approval
/// request with `decision` as soon as it appears.
async fn approval_turn(
    decision: ApprovalDecision,
) -> (Vec<Value>, Vec<Message>, Vec<RuntimeEvent>) {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let mut reg = ToolRegistry::new();
    reg.register(dangerous_tool(ran.clone()));
    let pending = PendingApprovals::new();
    let provider = Arc::new(ScriptedProvider::new(vec![
        scripted::tool_calls(
            "",
            vec![call(
                "x1",
                "exec_command",
                json!({"command": "rm -rf /tmp/x"}),
            )],
        ),
        scripted::text("完成"),
    ]));
    let runtime = Runtime::new(
        provider,
        Arc::new(reg),
        RuntimeConfig::default(),
        pending.clone(),
        None,
        Arc::new(SystemClock),
    );
    let events = Arc::new(Mutex::new(Vec::new()));
    let (ev, p) = (events.clone(), pending.clone());
    let sink: Arc<dyn EventSink> = Arc::new(FnSink(move |e: RuntimeEvent| {
        if let RuntimeEvent::ApprovalRequest { request } = &e {
            assert_eq!(
                request.available_decisions,
                vec![
                    DecisionKind::AllowOnce,
                    DecisionKind::AllowAlways,
                    DecisionKind::Edit,
                    DecisionKind::Deny
                ]
            );
            assert_eq!(request.display_name, "执行命令");
            assert_eq!(
                request.preview,
                Some(ApprovalPreview::Command {
                    command: request.args["command"].as_str().unwrap().to_owned(),
                    cwd: "/ws".into(),
                    timeout_secs: 30,
                    detaches: Vec::new(),
                })
            );
            // Answered from the event callback, like a UI would after showing the dialog.
            let (p, id, d) = (p.clone(), request.id.clone(), decision.clone());
            tokio::spawn(async move {
                while !p.answer(&id, d.clone()) {
                    tokio::task::yield_now().await;
                }
            });
        }
        ev.lock().unwrap().push(e);
    }));
    let mut messages = Vec::new();
    runtime
        .run_turn(
            &mut messages,
            "sys",
            "清理临时文件",
            sink,
            CancellationToken::new(),
        )
        .await;
    let ran = ran.lock().unwrap().clone();
    let events = events.lock().unwrap().clone();
    (ran, messages, events)
}

#[tokio::test]
async fn denied_approval_returns_an_error_to_the_model() {
    let (ran, messages, events) = approval_turn(ApprovalDecision::Deny {
        reason: Some("太危险".into()),
    })
    .await;
    assert!(ran.is_empty(), "denied tool ran");
    let (content, is_error) = tool_message(&messages, "x1");
    assert!(is_error);
    assert!(
        content.contains("用户拒绝执行此操作") && content.contains("太危险"),
        "{content}"
    );
    assert!(
        events.iter().any(
            |e| matches!(e, RuntimeEvent::ApprovalResolved { outcome, .. } if outcome == "deny")
        )
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RuntimeEvent::ToolError { id, .. } if id == "x1"))
    );
    assert_one_terminal(&events);
    assert_valid_conversation(&messages);
}

#[tokio::test]
async fn edited_approval_runs_with_the_edited_args() {
    let (ran, messages, events) = approval_turn(ApprovalDecision::Edit {
        args: json!({"command": "ls /tmp", "timeout": "5"}),
    })
    .await;
    assert_eq!(ran, vec![json!({"command": "ls /tmp", "timeout": 5})]);
    let (_, is_error) = tool_message(&messages, "x1");
    assert!(!is_error);
    assert_one_terminal(&events);
}

#[tokio::test]
async fn edited_args_are_validated_again() {
    let (ran, messages, _) = approval_turn(ApprovalDecision::Edit {
        args: json!({"cmd": "ls"}),
    })
    .await;
    assert!(ran.is_empty());
    let (content, is_error) = tool_message(&messages, "x1");
    assert!(is_error);
    assert!(
        content.contains("unexpected argument: cmd")
            && content.contains("missing required argument: command"),
        "{content}"
    );
}

#[tokio::test]
async fn allow_once_runs() {
    let (ran, _, events) = approval_turn(ApprovalDecision::AllowOnce).await;
    assert_eq!(ran.len(), 1);
    assert!(events.iter().any(
        |e| matches!(e, RuntimeEvent::ApprovalResolved { outcome, .. } if outcome == "allow_once")
    ));
}

#[tokio::test]
async fn headless_policies() {
    for (policy, should_run) in [
        (HeadlessApprover::Never, false),
        (HeadlessApprover::All, true),
        (HeadlessApprover::parse("exec_command"), true),
        (HeadlessApprover::parse("write_file"), false),
    ] {
        let ran = Arc::new(Mutex::new(Vec::new()));
        let mut reg = ToolRegistry::new();
        reg.register(dangerous_tool(ran.clone()));
        let h = harness_with(
            vec![
                scripted::tool_calls(
                    "",
                    vec![call("x1", "exec_command", json!({"command": "ls"}))],
                ),
                scripted::text("ok"),
            ],
            reg,
            Arc::new(policy.clone()),
            RuntimeConfig::default(),
        );
        let mut messages = Vec::new();
        h.turn(&mut messages, "列目录").await;
        assert_eq!(ran.lock().unwrap().len() == 1, should_run, "{policy:?}");
        let (content, is_error) = tool_message(&messages, "x1");
        assert_eq!(is_error, !should_run, "{policy:?}: {content}");
        assert!(
            !h.events()
                .iter()
                .any(|e| matches!(e, RuntimeEvent::ApprovalRequest { .. })),
            "headless never asks"
        );
    }
}

#[tokio::test]
async fn approval_timeout_is_no_answer() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let mut reg = ToolRegistry::new();
    reg.register(dangerous_tool(ran.clone()));
    let clock = Arc::new(ManualClock::default());
    let pending = PendingApprovals::new();
    let provider = Arc::new(ScriptedProvider::new(vec![
        scripted::tool_calls(
            "",
            vec![call("x1", "exec_command", json!({"command": "ls"}))],
        ),
        scripted::text("确认超时了"),
    ]));
    let runtime = Runtime::new(
        provider,
        Arc::new(reg),
        RuntimeConfig::default(),
        pending.clone(),
        None,
        clock.clone(),
    );
    let sink = wyckoff_agent::CollectingSink::new();
    let s: Arc<dyn EventSink> = sink.clone();
    let turn = async {
        let mut messages = Vec::new();
        runtime
            .run_turn(&mut messages, "sys", "列目录", s, CancellationToken::new())
            .await;
        messages
    };
    let advance = async {
        while pending.pending().is_empty() {
            tokio::task::yield_now().await;
        }
        clock.advance(Duration::from_secs(119));
        tokio::task::yield_now().await;
        assert_eq!(pending.pending().len(), 1, "still waiting before 120 s");
        clock.advance(Duration::from_secs(2));
    };
    let (messages, ()) = tokio::join!(turn, advance);
    assert!(ran.lock().unwrap().is_empty());
    let (content, is_error) = tool_message(&messages, "x1");
    assert!(is_error);
    assert!(content.contains("这不是拒绝"), "{content}");
    assert!(!content.contains("用户拒绝执行"), "{content}");
    assert_one_terminal(&sink.events());
}

#[tokio::test]
async fn stall_is_retried_without_losing_context() {
    let h = harness(
        vec![
            vec![
                Step::Chunk(wyckoff_llm::StreamChunk::TextDelta("半截".into())),
                Step::Error(scripted::stall("scripted")),
            ],
            scripted::text("完整回答"),
        ],
        ToolRegistry::new(),
    );
    let mut messages = vec![
        Message::user("之前的问题"),
        Message::assistant("之前的回答"),
    ];
    let out = h.turn(&mut messages, "你好").await;
    assert!(matches!(&out, TurnOutcome::Done { text, .. } if text == "完整回答"));
    let events = h.events();
    assert_one_terminal(&events);
    let retry_at = events
        .iter()
        .position(|e| matches!(e, RuntimeEvent::Retry { attempt: 1, reason } if reason.starts_with("stream_timeout")))
        .expect("retry event");
    // The retry comes after the partial text and before the round is re-run (same round number).
    assert!(matches!(
        events[retry_at - 1],
        RuntimeEvent::TextDelta { .. }
    ));
    assert!(matches!(
        events[retry_at + 1],
        RuntimeEvent::ModelStart { round: 1, .. }
    ));
    // Same context both times, and the partial text never enters the conversation.
    let reqs = h.provider.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].messages, reqs[1].messages);
    assert_eq!(reqs[1].messages.len(), 3);
    assert!(!messages.iter().any(|m| m.text().contains("半截")));
    assert_eq!(messages.len(), 4);
}

#[tokio::test]
async fn repeated_stalls_fail_the_turn_with_timeout() {
    let stall = || vec![Step::Error(scripted::stall("scripted"))];
    let h = harness(
        vec![stall(), stall(), stall(), scripted::text("never")],
        ToolRegistry::new(),
    );
    let mut messages = Vec::new();
    let out = h.turn(&mut messages, "你好").await;
    assert!(
        matches!(
            out,
            TurnOutcome::Failed {
                kind: ErrorKind::Timeout,
                ..
            }
        ),
        "{out:?}"
    );
    assert_eq!(out.exit_code(), 1);
    let events = h.events();
    assert_one_terminal(&events);
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, RuntimeEvent::Retry { .. }))
            .count(),
        2
    );
    assert!(matches!(
        events.last(),
        Some(RuntimeEvent::TurnFailed {
            kind: ErrorKind::Timeout,
            ..
        })
    ));
    assert_eq!(h.provider.remaining(), 1);
}

#[tokio::test]
async fn fallback_provider_takes_over_after_stall_retries() {
    let stall = || vec![Step::Error(scripted::stall("main"))];
    let main = Arc::new(ScriptedProvider::named(
        "main",
        vec![stall(), stall(), stall()],
    ));
    let backup = Arc::new(ScriptedProvider::named(
        "backup",
        vec![scripted::text("备用模型的回答")],
    ));
    let runtime = Runtime::new(
        main,
        Arc::new(ToolRegistry::new()),
        RuntimeConfig::default(),
        Arc::new(HeadlessApprover::Never),
        None,
        Arc::new(SystemClock),
    )
    .with_fallback(backup);
    let sink = wyckoff_agent::CollectingSink::new();
    let mut messages = Vec::new();
    let out = runtime
        .run_turn(
            &mut messages,
            "sys",
            "你好",
            sink.clone(),
            CancellationToken::new(),
        )
        .await;
    assert!(matches!(&out, TurnOutcome::Done { text, .. } if text == "备用模型的回答"));
    let events = sink.events();
    assert_one_terminal(&events);
    assert!(events.iter().any(
        |e| matches!(e, RuntimeEvent::Fallback { from, to, .. } if from == "main" && to == "backup")
    ));
}

#[tokio::test]
async fn other_errors_fail_with_their_kind() {
    let err = wyckoff_llm::LlmError::new(ErrorKind::Authentication, "scripted", "invalid api key");
    let h = harness(vec![vec![Step::FailStart(err)]], ToolRegistry::new());
    let mut messages = Vec::new();
    let out = h.turn(&mut messages, "你好").await;
    assert!(matches!(
        out,
        TurnOutcome::Failed {
            kind: ErrorKind::Authentication,
            ..
        }
    ));
    assert!(
        h.events()
            .iter()
            .all(|e| !matches!(e, RuntimeEvent::Retry { .. }))
    );
    assert_one_terminal(&h.events());
}

#[tokio::test]
async fn cancel_mid_tool_answers_every_call() {
    let started = Arc::new(AtomicUsize::new(0));
    let mut reg = ToolRegistry::new();
    let s = started.clone();
    // Ignores its cancel token on purpose: the runtime must still stop it.
    reg.register(tool(
        ToolSpec::new("hang", "挂起").concurrency_safe(),
        obj(json!({"i": {"type": "integer"}}), &[]),
        move |_, _| {
            let s = s.clone();
            async move {
                s.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(json!({}))
            }
        },
    ));
    let h = harness(
        vec![
            scripted::tool_calls(
                "",
                vec![
                    call("h1", "hang", json!({"i": 1})),
                    call("h2", "hang", json!({"i": 2})),
                ],
            ),
            scripted::text("never"),
        ],
        reg,
    );
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let st = started.clone();
    tokio::spawn(async move {
        while st.load(Ordering::SeqCst) < 2 {
            tokio::task::yield_now().await;
        }
        c.cancel();
    });
    let mut messages = Vec::new();
    let sink: Arc<dyn EventSink> = h.sink.clone();
    let out = tokio::time::timeout(
        Duration::from_secs(10),
        h.runtime
            .run_turn(&mut messages, "sys", "挂起", sink, cancel),
    )
    .await
    .expect("cancel must end the turn");
    assert_eq!(out, TurnOutcome::Cancelled);
    assert_eq!(out.exit_code(), 130);
    let events = h.events();
    assert_one_terminal(&events);
    assert!(matches!(
        events.last(),
        Some(RuntimeEvent::TurnCancelled {})
    ));
    assert_valid_conversation(&messages);
    for id in ["h1", "h2"] {
        let (content, is_error) = tool_message(&messages, id);
        assert!(
            is_error && content.contains("Operation aborted"),
            "{content}"
        );
    }
    assert_eq!(h.provider.remaining(), 1, "no model call after cancel");
}

#[tokio::test]
async fn a_call_left_unanswered_by_a_killed_turn_is_answered_before_the_next_question() {
    // What a process killed mid-tool leaves in the stored history: the call, no result.
    let mut messages = vec![
        Message::user("跑一下那个命令"),
        Message::Assistant {
            content: String::new(),
            tool_calls: vec![call("k1", "exec_command", json!({"command": "sleep 5"}))],
            reasoning: None,
            reasoning_signature: None,
        },
    ];
    let h = harness(vec![scripted::text("我们继续。")], ToolRegistry::new());
    let out = h.turn(&mut messages, "继续").await;
    assert!(matches!(out, TurnOutcome::Done { .. }), "{out:?}");
    assert_valid_conversation(&messages);
    let (content, is_error) = tool_message(&messages, "k1");
    assert!(
        is_error && content.contains("Operation aborted"),
        "{content}"
    );
    // the answer sits between the call and the new question, as vendors require
    assert!(matches!(&messages[2], Message::Tool { tool_call_id, .. } if tool_call_id == "k1"));
    assert!(matches!(&messages[3], Message::User { .. }));
}

#[tokio::test]
async fn cancel_during_stream_ends_the_turn() {
    let h = harness(
        vec![vec![
            Step::Chunk(wyckoff_llm::StreamChunk::TextDelta("正在".into())),
            Step::Sleep(Duration::from_secs(3600)),
        ]],
        ToolRegistry::new(),
    );
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let sink: Arc<dyn EventSink> = Arc::new(FnSink(move |e: RuntimeEvent| {
        if matches!(e, RuntimeEvent::TextDelta { .. }) {
            c.cancel();
        }
    }));
    let mut messages = Vec::new();
    let out = tokio::time::timeout(
        Duration::from_secs(10),
        h.runtime
            .run_turn(&mut messages, "sys", "你好", sink, cancel),
    )
    .await
    .unwrap();
    assert_eq!(out, TurnOutcome::Cancelled);
    assert_eq!(messages, vec![Message::user("你好")]);
}

#[tokio::test]
async fn doom_loop_stops_the_turn() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut reg = ToolRegistry::new();
    reg.register(analyze_tool(seen.clone()));
    let same = |id: &str| {
        scripted::tool_calls(
            "",
            vec![call(id, "analyze_stock", json!({"code": "600519"}))],
        )
    };
    let h = harness(
        vec![
            same("a"),
            same("b"),
            scripted::tool_calls(
                "",
                vec![
                    call("c", "analyze_stock", json!({"code": "600519"})),
                    call("d", "analyze_stock", json!({"code": "000001"})),
                ],
            ),
            scripted::text("never"),
        ],
        reg,
    );
    let mut messages = Vec::new();
    let out = h.turn(&mut messages, "分析 600519").await;
    let TurnOutcome::Done { text, .. } = &out else {
        panic!("{out:?}")
    };
    assert!(text.contains("死循环"), "{text}");
    assert_eq!(
        seen.lock().unwrap().len(),
        2,
        "the looping call and its round did not run"
    );
    let (c, c_err) = tool_message(&messages, "c");
    assert!(c_err && c.contains("doom-loop"), "{c}");
    let (d, d_err) = tool_message(&messages, "d");
    assert!(d_err && d.contains("doom-loop"), "{d}");
    let events = h.events();
    assert_one_terminal(&events);
    assert!(
        events.iter().any(
            |e| matches!(e, RuntimeEvent::Warning { message } if message.contains("doom-loop"))
        )
    );
    assert_valid_conversation(&messages);
    assert_eq!(h.provider.remaining(), 1);
}

/// A lazy text answer the loop guard corrects, then the tool call, then the answer.
fn lazy_then_tool_harness() -> Harness {
    let mut reg = ToolRegistry::new();
    reg.register(analyze_tool(Arc::new(Mutex::new(Vec::new()))));
    harness(
        vec![
            scripted::text("茅台看起来不错，建议持有。"),
            scripted::tool_calls(
                "",
                vec![call("a1", "analyze_stock", json!({"code": "600519"}))],
            ),
            scripted::text("根据诊断，600519 处于吸筹阶段。"),
        ],
        reg,
    )
}

#[tokio::test]
async fn loop_guard_sends_the_model_back_for_data() {
    let h = lazy_then_tool_harness();
    let mut messages = Vec::new();
    let out = h.turn(&mut messages, "帮我分析一下 600519").await;
    assert!(matches!(&out, TurnOutcome::Done { text, .. } if text.contains("吸筹")));
    let events = h.events();
    assert_one_terminal(&events);
    assert!(events.iter().any(|e| matches!(e, RuntimeEvent::Retry { attempt: 1, reason } if reason.contains("analyze_stock"))));
    // The corrective prompt reached the model as an internal retry message…
    let reqs = h.provider.requests();
    match reqs[1].messages.last() {
        Some(Message::User {
            origin: UserOrigin::InternalRetry,
            content,
        }) => {
            assert!(
                content.contains("`analyze_stock`") && content.contains("600519"),
                "{content}"
            )
        }
        other => panic!("{other:?}"),
    }
    // …and is gone from the conversation afterwards, with the lazy answer.
    assert_valid_conversation(&messages);
    assert!(!messages.iter().any(|m| m.text().contains("建议持有")));
    assert_eq!(messages.len(), 4);
}

#[tokio::test]
async fn loop_guard_gives_up_after_two_retries_with_a_warning() {
    let mut reg = ToolRegistry::new();
    reg.register(analyze_tool(Arc::new(Mutex::new(Vec::new()))));
    let h = harness(
        vec![
            scripted::text("第一次"),
            scripted::text("第二次"),
            scripted::text("第三次"),
        ],
        reg,
    );
    let mut messages = Vec::new();
    let out = h.turn(&mut messages, "分析 600519 的走势").await;
    assert!(matches!(&out, TurnOutcome::Done { text, rounds: 3, .. } if text == "第三次"));
    let events = h.events();
    assert_one_terminal(&events);
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, RuntimeEvent::Retry { .. }))
            .count(),
        2
    );
    assert!(events.iter().any(
        |e| matches!(e, RuntimeEvent::Warning { message } if message.contains("analyze_stock"))
    ));
    assert_eq!(
        messages,
        vec![
            Message::user("分析 600519 的走势"),
            Message::assistant("第三次")
        ]
    );
}

#[tokio::test]
async fn loop_guard_can_be_turned_off_and_ignores_chat() {
    let mut reg = ToolRegistry::new();
    reg.register(analyze_tool(Arc::new(Mutex::new(Vec::new()))));
    let config = RuntimeConfig {
        loop_guard: false,
        ..RuntimeConfig::default()
    };
    let h = harness_with(
        vec![scripted::text("好的")],
        reg,
        Arc::new(HeadlessApprover::Never),
        config,
    );
    let mut messages = Vec::new();
    h.turn(&mut messages, "分析 600519").await;
    assert!(
        !h.events()
            .iter()
            .any(|e| matches!(e, RuntimeEvent::Retry { .. }))
    );
}

#[tokio::test]
async fn malformed_and_invalid_args_become_correctable_errors() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut reg = ToolRegistry::new();
    reg.register(analyze_tool(seen.clone()));
    let mut broken = call("m1", "analyze_stock", Value::Null);
    broken.args_error =
        Some("EOF while parsing an object at line 1 column 17: {\"code\": \"600519\"".into());
    let h = harness(
        vec![
            scripted::tool_calls(
                "",
                vec![
                    broken,
                    call(
                        "m2",
                        "analyze_stock",
                        json!({"code": "600519", "colour": "red"}),
                    ),
                    call("m3", "no_such_tool", json!({})),
                ],
            ),
            scripted::tool_calls(
                "",
                vec![call("m4", "analyze_stock", json!({"code": "600519"}))],
            ),
            scripted::text("修正后完成"),
        ],
        reg,
    );
    let mut messages = Vec::new();
    let out = h.turn(&mut messages, "分析 600519").await;
    assert!(matches!(&out, TurnOutcome::Done { text, .. } if text == "修正后完成"));
    let (m1, e1) = tool_message(&messages, "m1");
    assert!(
        e1 && m1.contains("不是合法的 JSON") && m1.contains("EOF while parsing"),
        "{m1}"
    );
    let (m2, e2) = tool_message(&messages, "m2");
    assert!(e2 && m2.contains("unexpected argument: colour"), "{m2}");
    let (m3, e3) = tool_message(&messages, "m3");
    assert!(e3 && m3.contains("未知工具"), "{m3}");
    assert_eq!(
        *seen.lock().unwrap(),
        vec![json!({"code": "600519"})],
        "only the valid call ran"
    );
    assert_valid_conversation(&messages);
    assert_one_terminal(&h.events());
}

#[tokio::test]
async fn large_results_are_offloaded_with_a_loadable_reference() {
    let dir = tempfile::tempdir().unwrap();
    let mut reg = ToolRegistry::new();
    let big = "量价".repeat(6_000);
    let b = big.clone();
    reg.register(tool(
        ToolSpec::new("screen_dump", "导出"),
        obj(json!({}), &[]),
        move |_, _| {
            let b = b.clone();
            async move { Ok(json!({"rows": b})) }
        },
    ));
    let provider = Arc::new(ScriptedProvider::new(vec![
        scripted::tool_calls("", vec![call("d1", "screen_dump", json!({}))]),
        scripted::text("ok"),
    ]));
    let store = ResultStore::new(dir.path().join("tool-results"));
    let runtime = Runtime::new(
        provider.clone(),
        Arc::new(reg),
        RuntimeConfig::default(),
        Arc::new(HeadlessApprover::Never),
        None,
        Arc::new(SystemClock),
    )
    .with_result_store(store.clone());
    let mut messages = Vec::new();
    runtime
        .run_turn(
            &mut messages,
            "sys",
            "导出",
            wyckoff_agent::CollectingSink::new(),
            CancellationToken::new(),
        )
        .await;
    let (content, _) = tool_message(&messages, "d1");
    assert!(
        content.chars().count() < 3_000,
        "context keeps only a preview"
    );
    let reference = content
        .lines()
        .find_map(|l| l.strip_prefix("result_ref: "))
        .unwrap();
    let page = store.load(reference, 0, 100_000).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&page.text).unwrap(),
        json!({"rows": big})
    );
}

#[tokio::test]
async fn round_limit_stops_the_turn_cleanly() {
    let mut reg = ToolRegistry::new();
    reg.register(analyze_tool(Arc::new(Mutex::new(Vec::new()))));
    let script = (0..5)
        .map(|i| {
            scripted::tool_calls(
                "",
                vec![call(
                    &format!("r{i}"),
                    "analyze_stock",
                    json!({"code": format!("60000{i}")}),
                )],
            )
        })
        .collect();
    let config = RuntimeConfig {
        max_total_rounds: 3,
        max_rounds_per_segment: 2,
        ..RuntimeConfig::default()
    };
    let h = harness_with(script, reg, Arc::new(HeadlessApprover::Never), config);
    let mut messages = Vec::new();
    let out = h.turn(&mut messages, "批量").await;
    assert!(
        matches!(&out, TurnOutcome::Done { text, rounds: 3, .. } if text.contains("上限")),
        "{out:?}"
    );
    assert_eq!(h.provider.requests().len(), 3);
    // The segment nudge reached the third request and was removed afterwards.
    let third = &h.provider.requests()[2].messages;
    assert!(matches!(
        third.last(),
        Some(Message::User {
            origin: UserOrigin::InternalRetry,
            ..
        })
    ));
    assert_valid_conversation(&messages);
    assert_one_terminal(&h.events());
}

#[tokio::test]
async fn background_completion_reaches_the_next_round() {
    let dir = tempfile::tempdir().unwrap();
    let manager =
        BackgroundTaskManager::open(&dir.path().join("wyckoff.db"), Arc::new(SystemClock), None)
            .await
            .unwrap();
    let mut reg = ToolRegistry::new();
    reg.register(tool(
        ToolSpec::new("screen_stocks", "全市场扫描").background(),
        obj(json!({}), &[]),
        |_, ctx| async move {
            ctx.progress.report("日线拉取", "1/2", Some(0.5));
            Ok(json!({"candidates": ["600519", "000001"]}))
        },
    ));
    // Waits (foreground) until the background result is queued for the session.
    reg.register(tool(
        ToolSpec::new("wait_a_bit", "等待"),
        obj(json!({}), &[]),
        |_, ctx| async move {
            let bg = ctx.background.clone().unwrap();
            let mut rx = bg.subscribe();
            while !bg.has_notifications(&ctx.session_id) {
                let _ = tokio::time::timeout(Duration::from_millis(50), rx.recv()).await;
            }
            Ok(json!({"waited": true}))
        },
    ));
    let provider = Arc::new(ScriptedProvider::new(vec![
        scripted::tool_calls(
            "",
            vec![
                call("s1", "screen_stocks", json!({})),
                call("w1", "wait_a_bit", json!({})),
            ],
        ),
        scripted::text("扫描完成：600519、000001"),
    ]));
    let runtime = Runtime::new(
        provider.clone(),
        Arc::new(reg),
        RuntimeConfig {
            session_id: "sess-bg".into(),
            ..RuntimeConfig::default()
        },
        Arc::new(HeadlessApprover::Never),
        None,
        Arc::new(SystemClock),
    )
    .with_background(manager.clone());
    let sink = wyckoff_agent::CollectingSink::new();
    let mut messages = Vec::new();
    let out = runtime
        .run_turn(
            &mut messages,
            "sys",
            "帮我选股",
            sink.clone(),
            CancellationToken::new(),
        )
        .await;
    assert!(matches!(out, TurnOutcome::Done { .. }), "{out:?}");

    let (submitted, _) = tool_message(&messages, "s1");
    let submitted: Value = serde_json::from_str(submitted).unwrap();
    assert_eq!(submitted["status"], "background");
    let task_id = submitted["task_id"].as_str().unwrap().to_owned();

    // Round 2 saw the notification, after the tool results.
    let reqs = provider.requests();
    let note = reqs[1]
        .messages
        .iter()
        .find_map(|m| match m {
            Message::User {
                origin: UserOrigin::SystemNotification,
                content,
            } => Some(content.clone()),
            _ => None,
        })
        .expect("notification in round 2");
    assert!(
        note.contains(&format!("<task-id>{task_id}</task-id>")) && note.contains("600519"),
        "{note}"
    );
    assert!(matches!(
        reqs[1].messages.last(),
        Some(Message::User { .. })
    ));
    // It stays in the conversation; it is not delivered twice.
    assert!(messages.iter().any(|m| matches!(
        m,
        Message::User {
            origin: UserOrigin::SystemNotification,
            ..
        }
    )));
    assert!(!runtime.has_pending_notifications());
    let events = sink.events();
    // Submission and completion both reach the turn's listener.
    let statuses: Vec<wyckoff_protocol::TaskStatus> = events
        .iter()
        .filter_map(|e| match e {
            RuntimeEvent::BackgroundTask { task } if task.task_id == task_id => Some(task.status),
            _ => None,
        })
        .collect();
    assert_eq!(
        statuses,
        vec![
            wyckoff_protocol::TaskStatus::Running,
            wyckoff_protocol::TaskStatus::Completed
        ]
    );
    assert_one_terminal(&events);
    assert_valid_conversation(&messages);
    // Persisted with its result.
    let stored = manager.get(&task_id).unwrap();
    assert_eq!(stored.status, wyckoff_protocol::TaskStatus::Completed);
}

#[tokio::test]
async fn background_completion_after_the_turn_reaches_the_next_turn() {
    let dir = tempfile::tempdir().unwrap();
    let manager =
        BackgroundTaskManager::open(&dir.path().join("wyckoff.db"), Arc::new(SystemClock), None)
            .await
            .unwrap();
    let gate = Arc::new(tokio::sync::Notify::new());
    let g = gate.clone();
    let mut reg = ToolRegistry::new();
    reg.register(tool(
        ToolSpec::new("run_backtest", "回测").background(),
        obj(json!({}), &[]),
        move |_, _| {
            let g = g.clone();
            async move {
                g.notified().await;
                Ok(json!({"sharpe": 1.3}))
            }
        },
    ));
    let provider = Arc::new(ScriptedProvider::new(vec![
        scripted::tool_calls("", vec![call("b1", "run_backtest", json!({}))]),
        scripted::text("已提交回测"),
        scripted::text("回测夏普 1.3"),
    ]));
    let runtime = Runtime::new(
        provider.clone(),
        Arc::new(reg),
        RuntimeConfig::default(),
        Arc::new(HeadlessApprover::Never),
        None,
        Arc::new(SystemClock),
    )
    .with_background(manager.clone());
    let mut messages = Vec::new();
    runtime
        .run_turn(
            &mut messages,
            "sys",
            "跑个回测",
            wyckoff_agent::CollectingSink::new(),
            CancellationToken::new(),
        )
        .await;
    let task_id = manager.list()[0].task_id.clone();
    let mut rx = manager.subscribe();
    gate.notify_one();
    loop {
        if rx.recv().await.unwrap().status.is_finished() {
            break;
        }
    }
    assert!(runtime.has_pending_notifications());
    // A turn with no user input, driven by the notification alone.
    let out = runtime
        .run_turn(
            &mut messages,
            "sys",
            "",
            wyckoff_agent::CollectingSink::new(),
            CancellationToken::new(),
        )
        .await;
    assert!(matches!(&out, TurnOutcome::Done { text, .. } if text.contains("1.3")));
    let last_req = provider.requests().pop().unwrap();
    match last_req.messages.last() {
        Some(Message::User {
            origin: UserOrigin::SystemNotification,
            content,
        }) => {
            assert!(content.contains(&task_id) && content.contains("sharpe"))
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn background_tools_pass_the_approval_gate() {
    let dir = tempfile::tempdir().unwrap();
    let manager =
        BackgroundTaskManager::open(&dir.path().join("wyckoff.db"), Arc::new(SystemClock), None)
            .await
            .unwrap();
    let mut reg = ToolRegistry::new();
    reg.register(tool(
        ToolSpec::new("bulk_trade", "批量交易")
            .background()
            .requires_approval(),
        obj(json!({}), &[]),
        |_, _| async { Ok(json!({"done": true})) },
    ));
    let provider = Arc::new(ScriptedProvider::new(vec![
        scripted::tool_calls("", vec![call("t1", "bulk_trade", json!({}))]),
        scripted::text("未执行"),
    ]));
    let runtime = Runtime::new(
        provider,
        Arc::new(reg),
        RuntimeConfig::default(),
        Arc::new(HeadlessApprover::Never),
        None,
        Arc::new(SystemClock),
    )
    .with_background(manager.clone());
    let mut messages = Vec::new();
    runtime
        .run_turn(
            &mut messages,
            "sys",
            "执行",
            wyckoff_agent::CollectingSink::new(),
            CancellationToken::new(),
        )
        .await;
    let (content, is_error) = tool_message(&messages, "t1");
    assert!(is_error && content.contains("没有执行"), "{content}");
    assert!(manager.list().is_empty(), "no task was started");
}

#[tokio::test]
async fn scratchpad_records_the_turn_and_redacts_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let mut reg = ToolRegistry::new();
    reg.register(tool(
        ToolSpec::new("configure_source", "配置数据源"),
        obj(json!({"api_key": {"type": "string"}, "name": {"type": "string"}}), &[]),
        |_, _| async { Ok(json!({"ok": true, "token": "CANARY-RESULT-TOKEN", "echo": "Bearer CANARYBEARER0123456"})) },
    ));
    let provider = Arc::new(ScriptedProvider::new(vec![
        vec![
            Step::Chunk(wyckoff_llm::StreamChunk::ThinkingDelta(
                "用户给了 sk-CANARYTHINKING12345".into(),
            )),
            Step::Chunk(wyckoff_llm::StreamChunk::ToolCalls(vec![call(
                "k1",
                "configure_source",
                json!({"api_key": "CANARY-ARG-KEY", "name": "tushare"}),
            )])),
        ],
        scripted::text("已配置，密钥 sk-CANARYFINAL123456 已保存"),
    ]));
    let runtime = Runtime::new(
        provider,
        Arc::new(reg),
        RuntimeConfig::default(),
        Arc::new(HeadlessApprover::Never),
        Some(dir.path().join("scratchpad")),
        Arc::new(SystemClock),
    );
    let mut messages = Vec::new();
    runtime
        .run_turn(
            &mut messages,
            "系统提示 password=CANARYPASSWORD",
            "我的 key 是 sk-CANARYINPUT1234567，请配置",
            wyckoff_agent::CollectingSink::new(),
            CancellationToken::new(),
        )
        .await;
    let files: Vec<_> = std::fs::read_dir(dir.path().join("scratchpad"))
        .unwrap()
        .collect();
    assert_eq!(files.len(), 1);
    let text = std::fs::read_to_string(files[0].as_ref().unwrap().path()).unwrap();
    assert!(
        !text.contains("CANARY"),
        "secret leaked into scratchpad:\n{text}"
    );
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = records
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, vec!["init", "thinking", "tool_result", "final"]);
    assert_eq!(
        records[0]["tools"],
        json!(["check_background_tasks", "configure_source"])
    );
    assert_eq!(records[2]["args"]["name"], "tushare");
    assert_eq!(records[2]["status"], "ok");
    assert_eq!(records[3]["usage"]["input_tokens"], 10);
}

#[tokio::test]
async fn provider_errors_leave_a_scratchpad_error_record() {
    let dir = tempfile::tempdir().unwrap();
    let err = wyckoff_llm::LlmError::new(ErrorKind::RateLimit, "scripted", "429 too many requests");
    let runtime = Runtime::new(
        Arc::new(ScriptedProvider::new(vec![vec![Step::FailStart(err)]])),
        Arc::new(ToolRegistry::new()),
        RuntimeConfig::default(),
        Arc::new(HeadlessApprover::Never),
        Some(dir.path().to_path_buf()),
        Arc::new(SystemClock),
    );
    let mut messages = Vec::new();
    let out = runtime
        .run_turn(
            &mut messages,
            "sys",
            "你好",
            wyckoff_agent::CollectingSink::new(),
            CancellationToken::new(),
        )
        .await;
    assert!(matches!(
        out,
        TurnOutcome::Failed {
            kind: ErrorKind::RateLimit,
            ..
        }
    ));
    let file = std::fs::read_dir(dir.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(file).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "error");
    assert_eq!(last["kind"], "rate_limit");
}

#[tokio::test]
async fn tool_errors_and_timeouts_are_results() {
    let clock = Arc::new(ManualClock::default());
    let mut reg = ToolRegistry::new();
    reg.register(tool(
        ToolSpec::new("fails", "失败"),
        obj(json!({}), &[]),
        |_, _| async { Err(ToolError::Failed("数据源不可用".into())) },
    ));
    reg.register(tool(
        ToolSpec::new("slow", "慢"),
        obj(json!({}), &[]),
        |_, _| async {
            std::future::pending::<()>().await;
            Ok(json!({}))
        },
    ));
    let provider = Arc::new(ScriptedProvider::new(vec![
        scripted::tool_calls(
            "",
            vec![
                call("f1", "fails", json!({})),
                call("s1", "slow", json!({})),
            ],
        ),
        scripted::text("ok"),
    ]));
    let config = RuntimeConfig {
        tool_timeout: Some(Duration::from_secs(60)),
        ..RuntimeConfig::default()
    };
    let runtime = Runtime::new(
        provider,
        Arc::new(reg),
        config,
        Arc::new(HeadlessApprover::Never),
        None,
        clock.clone(),
    );
    let sink = wyckoff_agent::CollectingSink::new();
    let s: Arc<dyn EventSink> = sink.clone();
    let turn = async {
        let mut messages = Vec::new();
        runtime
            .run_turn(&mut messages, "sys", "试试", s, CancellationToken::new())
            .await;
        messages
    };
    let ticker = async {
        loop {
            tokio::time::sleep(Duration::from_millis(5)).await;
            if sink
                .events()
                .iter()
                .any(|e| matches!(e, RuntimeEvent::ToolStart { id, .. } if id == "s1"))
            {
                clock.advance(Duration::from_secs(61));
                break;
            }
        }
    };
    let (messages, ()) = tokio::join!(turn, ticker);
    let (f, fe) = tool_message(&messages, "f1");
    assert!(fe && f.contains("数据源不可用"));
    let (s, se) = tool_message(&messages, "s1");
    assert!(se && s.contains("timed out"), "{s}");
    assert_one_terminal(&sink.events());
}

#[tokio::test]
async fn approval_applies_inside_parallel_batches() {
    let ran = Arc::new(AtomicUsize::new(0));
    let mut reg = ToolRegistry::new();
    let r = ran.clone();
    reg.register(tool(
        ToolSpec::new("place_order", "下单")
            .concurrency_safe()
            .requires_approval(),
        obj(json!({"code": {"type": "string"}}), &["code"]),
        move |_, _| {
            let r = r.clone();
            async move {
                r.fetch_add(1, Ordering::SeqCst);
                Ok(json!({"ok": true}))
            }
        },
    ));
    let calls = vec![
        call("p1", "place_order", json!({"code": "600519"})),
        call("p2", "place_order", json!({"code": "000001"})),
    ];
    let h = harness(
        vec![scripted::tool_calls("", calls), scripted::text("未下单")],
        reg,
    );
    let mut messages = Vec::new();
    h.turn(&mut messages, "下单").await;
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    for id in ["p1", "p2"] {
        let (content, is_error) = tool_message(&messages, id);
        assert!(is_error && content.contains("没有执行"), "{content}");
    }
    assert_valid_conversation(&messages);
}

struct CountingCompactor {
    calls: AtomicUsize,
}

#[async_trait::async_trait]
impl wyckoff_agent::Compactor for CountingCompactor {
    async fn maybe_compact(
        &self,
        messages: &mut Vec<Message>,
        _system_prompt: &str,
        _tools: &[wyckoff_protocol::ToolSchema],
        _provider: &dyn wyckoff_llm::Provider,
    ) -> Result<Option<wyckoff_agent::CompactionReport>, wyckoff_agent::AgentError> {
        // Compacts on the second call only: drops everything before the last user message.
        if self.calls.fetch_add(1, Ordering::SeqCst) != 1 {
            return Ok(None);
        }
        let before = messages.len() as u32;
        let keep_from = messages
            .iter()
            .rposition(|m| {
                matches!(
                    m,
                    Message::User {
                        origin: UserOrigin::User,
                        ..
                    }
                )
            })
            .unwrap_or(0);
        messages.drain(..keep_from);
        messages.insert(0, Message::user_with_origin("摘要", UserOrigin::Summary));
        Ok(Some(wyckoff_agent::CompactionReport {
            before_messages: before,
            after_messages: messages.len() as u32,
            archive_ref: Some("archive://s/ctx_1".into()),
            summary_fallback: false,
            ..Default::default()
        }))
    }
}

#[tokio::test]
async fn compaction_hook_runs_before_every_model_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut reg = ToolRegistry::new();
    reg.register(analyze_tool(Arc::new(Mutex::new(Vec::new()))));
    let provider = Arc::new(ScriptedProvider::new(vec![
        scripted::tool_calls(
            "",
            vec![call("a1", "analyze_stock", json!({"code": "600519"}))],
        ),
        scripted::text("结论"),
    ]));
    let compactor = Arc::new(CountingCompactor {
        calls: AtomicUsize::new(0),
    });
    let runtime = Runtime::new(
        provider.clone(),
        Arc::new(reg),
        RuntimeConfig::default(),
        Arc::new(HeadlessApprover::Never),
        Some(dir.path().to_path_buf()),
        Arc::new(SystemClock),
    )
    .with_compactor(compactor.clone());
    let sink = wyckoff_agent::CollectingSink::new();
    let mut messages = vec![Message::user("旧问题"), Message::assistant("旧回答")];
    runtime
        .run_turn(
            &mut messages,
            "sys",
            "分析 600519",
            sink.clone(),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(compactor.calls.load(Ordering::SeqCst), 2);
    let events = sink.events();
    assert!(events.iter().any(|e| matches!(
        e,
        RuntimeEvent::Compaction {
            before_messages: 5,
            after_messages: 4,
            archive_ref: Some(_),
            ..
        }
    )));
    // The second request saw the compacted conversation.
    let second = &provider.requests()[1].messages;
    assert!(matches!(
        &second[0],
        Message::User {
            origin: UserOrigin::Summary,
            ..
        }
    ));
    assert!(!second.iter().any(|m| m.text() == "旧回答"));
    let file = std::fs::read_dir(dir.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert!(
        std::fs::read_to_string(file)
            .unwrap()
            .contains("\"type\":\"compaction\"")
    );
    assert_one_terminal(&events);
    assert_valid_conversation(&messages);
}

/// Records each transcript message with how many model requests had been made by then.
struct CountingTranscript {
    provider: Arc<ScriptedProvider>,
    seen: Mutex<Vec<(usize, Message)>>,
}

impl wyckoff_agent::Transcript for CountingTranscript {
    fn append(&self, message: &Message) {
        let requests = self.provider.requests().len();
        self.seen.lock().unwrap().push((requests, message.clone()));
    }
}

#[tokio::test]
async fn transcript_gets_each_message_before_the_next_model_call_and_no_internal_prompts() {
    // The loop guard's correction and the lazy answer it corrected are not kept.
    let h = lazy_then_tool_harness();
    let transcript = CountingTranscript {
        provider: h.provider.clone(),
        seen: Mutex::new(Vec::new()),
    };
    let mut messages = Vec::new();
    let out = h
        .runtime
        .run_turn_recorded(
            &mut messages,
            "你是威科夫分析助手。",
            "帮我分析一下 600519",
            h.sink.clone(),
            CancellationToken::new(),
            &transcript,
        )
        .await;
    assert!(matches!(out, TurnOutcome::Done { .. }));
    let recorded = transcript.seen.into_inner().unwrap();
    // Everything the conversation kept except the user's own input, in order.
    let kept: Vec<Message> = recorded.iter().map(|(_, m)| m.clone()).collect();
    assert_eq!(kept, messages[1..].to_vec());
    assert!(!kept.iter().any(|m| m.text().contains("建议持有")));
    // The tool call and its result were handed out after the 2nd request and before
    // the 3rd: a storing caller has them before the model is asked again.
    assert_eq!(recorded[0].0, 2, "{:?}", recorded[0].1);
    assert!(!recorded[0].1.tool_calls().is_empty());
    assert_eq!(recorded[1].0, 2);
    assert!(matches!(recorded[1].1, Message::Tool { .. }));
    assert_eq!(recorded[2].0, 3);
}

/// Reads every scratchpad file in `dir` as its JSON records.
fn scratchpads(dir: &std::path::Path) -> Vec<Vec<Value>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        })
        .collect()
}

#[tokio::test]
async fn a_turn_started_by_a_background_completion_writes_its_scratchpad() {
    let dir = tempfile::tempdir().unwrap();
    let pads = dir.path().join("scratchpad");
    let manager =
        BackgroundTaskManager::open(&dir.path().join("wyckoff.db"), Arc::new(SystemClock), None)
            .await
            .unwrap();
    // The task finishes only once the user's turn is over.
    let release = Arc::new(tokio::sync::Notify::new());
    let gate = release.clone();
    let mut reg = ToolRegistry::new();
    reg.register(tool(
        ToolSpec::new("screen_stocks", "全市场扫描").background(),
        obj(json!({}), &[]),
        move |_, _| {
            let gate = gate.clone();
            async move {
                gate.notified().await;
                Ok(json!({"candidates": ["600519"]}))
            }
        },
    ));
    let provider = Arc::new(ScriptedProvider::new(vec![
        scripted::tool_calls("", vec![call("s1", "screen_stocks", json!({}))]),
        scripted::text("已在后台扫描。"),
        scripted::text("扫描完成：600519"),
    ]));
    let runtime = Runtime::new(
        provider,
        Arc::new(reg),
        RuntimeConfig {
            session_id: "sess-pad".into(),
            ..RuntimeConfig::default()
        },
        Arc::new(HeadlessApprover::Never),
        Some(pads.clone()),
        Arc::new(SystemClock),
    )
    .with_background(manager.clone());
    let mut messages = Vec::new();
    let first = runtime
        .run_turn(
            &mut messages,
            "sys",
            "帮我选股",
            wyckoff_agent::CollectingSink::new(),
            CancellationToken::new(),
        )
        .await;
    assert!(matches!(first, TurnOutcome::Done { .. }), "{first:?}");
    let task_id = manager.list()[0].task_id.clone();
    release.notify_one();
    let mut rx = manager.subscribe();
    while !runtime.has_pending_notifications() {
        let _ = tokio::time::timeout(Duration::from_millis(50), rx.recv()).await;
    }

    // The follow-up turn on the completion alone (empty input), as the app and the CLI run it.
    let second = runtime
        .run_turn(
            &mut messages,
            "sys",
            "",
            wyckoff_agent::CollectingSink::new(),
            CancellationToken::new(),
        )
        .await;
    assert!(matches!(second, TurnOutcome::Done { .. }), "{second:?}");

    let all = scratchpads(&pads);
    assert_eq!(all.len(), 2, "one scratchpad per turn: {all:?}");
    let pad = all
        .iter()
        .find(|p| p[0]["trigger"] == "background_completion")
        .expect("the completion turn's scratchpad");
    let types: Vec<&str> = pad.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(types, vec!["init", "notification", "final"]);
    assert_eq!(pad[0]["session_id"], "sess-pad");
    assert_eq!(pad[0]["user_input"], "");
    assert_eq!(pad[1]["task_id"], task_id.as_str());
    assert!(
        pad[1]["content"]
            .as_str()
            .unwrap()
            .contains(&format!("<task-id>{task_id}</task-id>"))
    );
    assert_eq!(pad[2]["content"], "扫描完成：600519");
    let user_pad = all.iter().find(|p| p[0]["trigger"] == "user").unwrap();
    assert_eq!(user_pad[0]["user_input"], "帮我选股");
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Cause(&'static str, #[source] Option<Box<Cause>>);

#[tokio::test]
async fn a_failed_turn_records_the_errors_cause_chain_masked() {
    let dir = tempfile::tempdir().unwrap();
    let err = wyckoff_llm::LlmError::new(ErrorKind::Network, "scripted", "request failed")
        .with_cause(Cause(
            "error sending request",
            Some(Box::new(Cause(
                "tcp connect error with Bearer CANARYBEARER0123456",
                Some(Box::new(Cause("Connection refused (os error 111)", None))),
            ))),
        ));
    let runtime = Runtime::new(
        Arc::new(ScriptedProvider::new(vec![vec![Step::FailStart(err)]])),
        Arc::new(ToolRegistry::new()),
        RuntimeConfig::default(),
        Arc::new(HeadlessApprover::Never),
        Some(dir.path().to_path_buf()),
        Arc::new(SystemClock),
    );
    let mut messages = Vec::new();
    let out = runtime
        .run_turn(
            &mut messages,
            "sys",
            "你好",
            wyckoff_agent::CollectingSink::new(),
            CancellationToken::new(),
        )
        .await;
    assert!(matches!(out, TurnOutcome::Failed { .. }), "{out:?}");
    let pad = scratchpads(dir.path()).remove(0);
    let error = pad.last().unwrap();
    assert_eq!(error["type"], "error");
    assert_eq!(
        error["causes"],
        json!([
            "error sending request",
            "tcp connect error with Bearer ***",
            "Connection refused (os error 111)"
        ]),
        "{error}"
    );
    assert!(!error.to_string().contains("CANARY"));
}
