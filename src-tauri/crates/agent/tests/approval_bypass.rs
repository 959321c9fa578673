#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Approvals cannot be bypassed: every way a model (or a race) might
//! get a tool that needs approval to run without the user's yes. Each attempt counts the
//! runs of the guarded tool; the count must stay 0 (or 1 where the user said yes once).
//! Sub-agent and skill paths are proved where those are built (their own tests); they go
//! through this same registry and gate.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::scripted::{self, ScriptedProvider, Step};
use wyckoff_agent::{
    BackgroundTaskManager, EventSink, FnSink, PendingApprovals, Runtime, RuntimeConfig,
    SystemClock, ToolRegistry, ToolSpec,
};
use wyckoff_protocol::{ApprovalDecision, RuntimeEvent};

type Runs = Arc<Mutex<Vec<Value>>>;

/// A tool that needs approval and records each run with its arguments.
fn guarded(runs: Runs, background: bool) -> Arc<dyn wyckoff_agent::Tool> {
    let mut spec = ToolSpec::new("update_portfolio", "调仓操作").requires_approval();
    if background {
        spec = spec.background();
    }
    tool(
        spec,
        obj(
            json!({"action": {"type": "string", "enum": ["add", "remove", "set_cash"]}, "code": {"type": "string"}}),
            &["action"],
        ),
        move |args, _| {
            let runs = runs.clone();
            async move {
                runs.lock().unwrap().push(args.clone());
                Ok(json!({"success": true}))
            }
        },
    )
}

fn safe_tool() -> Arc<dyn wyckoff_agent::Tool> {
    tool(
        ToolSpec::new("analyze_stock", "个股分析").concurrency_safe(),
        obj(json!({"code": {"type": "string"}}), &["code"]),
        |args, _| async move { Ok(json!({"code": args["code"]})) },
    )
}

fn registry(runs: &Runs, background: bool) -> ToolRegistry {
    let mut reg = ToolRegistry::new();
    reg.register(guarded(runs.clone(), background));
    reg.register(safe_tool());
    reg
}

fn remove(id: &str) -> wyckoff_protocol::ToolCall {
    call(
        id,
        "update_portfolio",
        json!({"action": "remove", "code": "600519"}),
    )
}

/// One turn with a headless "never" approver; returns the guarded tool's runs.
async fn never_turn(script: Vec<Vec<Step>>, background: bool) -> Vec<Value> {
    let runs: Runs = Arc::default();
    let mut h = harness(script, registry(&runs, background));
    if background {
        let dir = tempfile::tempdir().unwrap();
        let manager =
            BackgroundTaskManager::open(&dir.path().join("db"), Arc::new(SystemClock), None)
                .await
                .unwrap();
        h.runtime = h.runtime.with_background(manager.clone());
        let mut messages = Vec::new();
        h.turn(&mut messages, "调仓").await;
        assert!(manager.list().is_empty(), "a background task was started");
        return runs.lock().unwrap().clone();
    }
    let mut messages = Vec::new();
    h.turn(&mut messages, "调仓").await;
    assert_valid_conversation(&messages);
    runs.lock().unwrap().clone()
}

#[tokio::test]
async fn the_model_cannot_get_a_guarded_tool_run_without_a_yes() {
    let cases: Vec<(&str, Vec<Vec<Step>>, bool)> = vec![
        (
            "parallel batch of guarded and safe calls",
            vec![
                scripted::tool_calls(
                    "",
                    vec![
                        call("s1", "analyze_stock", json!({"code": "600519"})),
                        remove("g1"),
                        remove("g2"),
                        call("s2", "analyze_stock", json!({"code": "000001"})),
                        remove("g3"),
                    ],
                ),
                scripted::text("完成"),
            ],
            false,
        ),
        (
            "background tool",
            vec![
                scripted::tool_calls("", vec![remove("b1"), remove("b2")]),
                scripted::text("完成"),
            ],
            true,
        ),
        (
            "name in other case, with spaces, with a dash",
            vec![
                scripted::tool_calls(
                    "",
                    [
                        "Update_Portfolio",
                        " update_portfolio",
                        "update_portfolio ",
                        "UPDATE_PORTFOLIO",
                        "update-portfolio",
                        "update_portfolio\n",
                    ]
                    .iter()
                    .enumerate()
                    .map(|(i, n)| {
                        call(
                            &format!("n{i}"),
                            n,
                            json!({"action": "remove", "code": "600519"}),
                        )
                    })
                    .collect(),
                ),
                scripted::text("完成"),
            ],
            false,
        ),
        (
            "the model repeats the denied call",
            (0..6)
                .map(|i| scripted::tool_calls("", vec![remove(&format!("r{i}"))]))
                .chain(std::iter::once(scripted::text("放弃")))
                .collect(),
            false,
        ),
        (
            "malformed arguments smuggling another tool's name",
            vec![
                scripted::tool_calls(
                    "",
                    vec![call(
                        "m1",
                        "analyze_stock",
                        json!({"code": "600519", "tool": "update_portfolio", "action": "remove"}),
                    )],
                ),
                scripted::text("完成"),
            ],
            false,
        ),
    ];
    for (name, script, background) in cases {
        let runs = never_turn(script, background).await;
        assert!(runs.is_empty(), "{name}: ran {runs:?}");
    }
}

/// Answers `id` once it is registered (the request event goes out just before), like a
/// UI after showing the dialog; true when the answer was taken.
async fn answer_when_pending(pending: &PendingApprovals, id: &str, d: ApprovalDecision) -> bool {
    for _ in 0..1_000 {
        if pending.pending().iter().any(|p| p == id) {
            return pending.answer(id, d);
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    false
}

/// A turn whose approval requests are answered by `answer` (called with the pending
/// registry and the request id, from the event stream like a UI would).
async fn interactive_turn(
    script: Vec<Vec<Step>>,
    answer: impl Fn(Arc<PendingApprovals>, String, CancellationToken) + Send + Sync + 'static,
) -> Vec<Value> {
    let runs: Runs = Arc::default();
    let pending = PendingApprovals::new();
    let runtime = Runtime::new(
        Arc::new(ScriptedProvider::new(script)),
        Arc::new(registry(&runs, false)),
        RuntimeConfig::default(),
        pending.clone(),
        None,
        Arc::new(SystemClock),
    );
    let cancel = CancellationToken::new();
    let (p, c) = (pending.clone(), cancel.clone());
    let sink: Arc<dyn EventSink> = Arc::new(FnSink(move |e: RuntimeEvent| {
        if let RuntimeEvent::ApprovalRequest { request } = e {
            answer(p.clone(), request.id, c.clone());
        }
    }));
    let mut messages = Vec::new();
    tokio::time::timeout(
        Duration::from_secs(10),
        runtime.run_turn(&mut messages, "sys", "调仓", sink, cancel),
    )
    .await
    .unwrap();
    // Let late answers land: nothing may run because of them.
    tokio::time::sleep(Duration::from_millis(50)).await;
    runs.lock().unwrap().clone()
}

#[tokio::test]
async fn an_answer_after_cancel_runs_nothing() {
    let late = Arc::new(Mutex::new(None));
    let l = late.clone();
    let runs = interactive_turn(
        vec![
            scripted::tool_calls("", vec![remove("c1")]),
            scripted::text("完成"),
        ],
        move |pending, id, cancel| {
            let l = l.clone();
            tokio::spawn(async move {
                while !pending.pending().contains(&id) {
                    tokio::task::yield_now().await;
                }
                cancel.cancel();
                tokio::time::sleep(Duration::from_millis(20)).await;
                *l.lock().unwrap() = Some(pending.answer(&id, ApprovalDecision::AllowOnce));
            });
        },
    )
    .await;
    assert!(runs.is_empty(), "{runs:?}");
    assert_eq!(
        *late.lock().unwrap(),
        Some(false),
        "the late yes was refused"
    );
}

#[tokio::test]
async fn two_windows_answering_one_request_count_once() {
    let second = Arc::new(Mutex::new(None));
    let s = second.clone();
    let runs = interactive_turn(
        vec![
            scripted::tool_calls("", vec![remove("w1")]),
            scripted::text("完成"),
        ],
        move |pending, id, _| {
            let s = s.clone();
            tokio::spawn(async move {
                // The first window denies; the second's yes arrives after and is refused.
                assert!(
                    answer_when_pending(&pending, &id, ApprovalDecision::Deny { reason: None })
                        .await
                );
                *s.lock().unwrap() = Some(pending.answer(&id, ApprovalDecision::AllowOnce));
            });
        },
    )
    .await;
    assert!(runs.is_empty(), "{runs:?}");
    assert_eq!(*second.lock().unwrap(), Some(false));
}

#[tokio::test]
async fn the_tool_runs_with_exactly_the_approved_arguments() {
    // The model asks to remove one code; the user edits the request to another. What runs
    // is the user's edit, never the model's original nor anything else.
    let runs = interactive_turn(
        vec![
            scripted::tool_calls("", vec![remove("e1")]),
            scripted::text("完成"),
        ],
        |pending, id, _| {
            tokio::spawn(async move {
                let edit = ApprovalDecision::Edit {
                    args: json!({"action": "remove", "code": "000001"}),
                };
                assert!(answer_when_pending(&pending, &id, edit).await);
            });
        },
    )
    .await;
    assert_eq!(runs, vec![json!({"action": "remove", "code": "000001"})]);

    // An edit that no longer fits the schema runs nothing.
    let runs = interactive_turn(
        vec![
            scripted::tool_calls("", vec![remove("e2")]),
            scripted::text("完成"),
        ],
        |pending, id, _| {
            tokio::spawn(async move {
                let edit = ApprovalDecision::Edit {
                    args: json!({"action": "sell_everything"}),
                };
                assert!(answer_when_pending(&pending, &id, edit).await);
            });
        },
    )
    .await;
    assert!(runs.is_empty(), "{runs:?}");
}

#[tokio::test]
async fn allow_once_is_once() {
    let answered = Arc::new(Mutex::new(0));
    let a = answered.clone();
    let runs = interactive_turn(
        vec![
            scripted::tool_calls("", vec![remove("o1")]),
            scripted::tool_calls("", vec![remove("o2")]),
            scripted::text("完成"),
        ],
        move |pending, id, _| {
            let n = {
                let mut n = a.lock().unwrap();
                *n += 1;
                *n
            };
            // Yes the first time, no the second: the second call must not ride on the first.
            let d = if n == 1 {
                ApprovalDecision::AllowOnce
            } else {
                ApprovalDecision::Deny { reason: None }
            };
            tokio::spawn(async move {
                assert!(answer_when_pending(&pending, &id, d).await);
            });
        },
    )
    .await;
    assert_eq!(runs.len(), 1);
    assert_eq!(*answered.lock().unwrap(), 2, "the second call asked again");
}
