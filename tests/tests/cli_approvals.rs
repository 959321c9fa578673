//! End-to-end: the approval inbox through the real `wyckoff` binary over real HTTP (the
//! mock vendor). A `wyckoff run --approve queue` whose model calls
//! `update_portfolio` leaves the portfolio alone and queues the exact call;
//! `wyckoff approvals allow|deny` decides it, and the conversation gets the decision as
//! a follow-up turn; an answer at the expiry is refused; every decision is in
//! `wyckoff approvals log`.
//! Needs `cargo build -p wyckoff-cli` first (scripts/test builds every binary).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use chrono::{DateTime, TimeDelta};
use serde_json::{Value, json};
use wyckoff_e2e::approvals::{free_cash, last_message, queued_run, set_cash_call, tool_call};
use wyckoff_e2e::wyckoff_cli;
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

const KEY: (&str, &str) = ("WYCKOFF_KEY_MOCK", "sk-approvals-e2e-123456");

async fn wyckoff(home: &Path, args: &[&str]) -> Output {
    let mut cmd = wyckoff_cli(home);
    cmd.args(args).env(KEY.0, KEY.1);
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

async fn inbox(home: &Path, now: Option<&str>) -> Vec<Value> {
    let mut args = vec!["approvals", "list", "--json"];
    if let Some(now) = now {
        args.extend(["--now", now]);
    }
    let out = wyckoff(home, &args).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn audit_log(home: &Path) -> Vec<Value> {
    let out = wyckoff(home, &["approvals", "log", "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The approval notices stored with the conversation's messages.
async fn stored_notices(home: &Path, conversation: &str) -> Vec<Value> {
    let url = format!("sqlite://{}?mode=ro", home.join("wyckoff.db").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT approval_notice FROM conversation_message WHERE conversation_id = ? AND approval_notice IS NOT NULL ORDER BY seq",
    )
    .bind(conversation)
    .fetch_all(&pool)
    .await
    .unwrap();
    pool.close().await;
    rows.iter()
        .map(|r| serde_json::from_str(&r.0).unwrap())
        .collect()
}

fn time(value: &Value) -> DateTime<chrono::Utc> {
    DateTime::parse_from_rfc3339(value.as_str().unwrap())
        .unwrap()
        .to_utc()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_queued_call_waits_then_allow_applies_it_and_the_conversation_is_told() {
    let server = MockServer::start().await.unwrap();
    server.push(Route::Openai, set_cash_call("call_cash_1", 5000));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["调仓在等待你的批准。"]),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["已批准：现金已设为 5000。"]),
    );
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    wyckoff_e2e::webdriver::mock_model_settings(h, &format!("{}/v1", server.url()));

    let conversation = queued_run(h, KEY, &[], "把现金设为 5000").await;
    assert_eq!(
        free_cash(h).await,
        None,
        "the portfolio changed before approval"
    );
    // The model was told the call waits, with the request id.
    let waiting: Value = serde_json::from_str(&last_message(&server, 1, "tool")).unwrap();
    assert_eq!(waiting["status"], "waiting_for_approval");

    let queued = inbox(h, None).await;
    assert_eq!(queued.len(), 1, "{queued:?}");
    let request = &queued[0];
    let id = request["id"].as_str().unwrap().to_owned();
    assert_eq!(waiting["request_id"], id.as_str());
    assert_eq!(request["status"], "pending");
    assert_eq!(request["tool"], "update_portfolio");
    assert_eq!(
        request["args"],
        json!({"action": "set_cash", "free_cash": 5000})
    );
    assert_eq!(request["conversation_id"], conversation.as_str());
    assert_eq!(request["requested_by"], "conversation");
    // Default expiry: 24 h.
    assert_eq!(
        time(&request["expires_at"]) - time(&request["created_at"]),
        TimeDelta::hours(24)
    );

    let out = wyckoff(h, &["approvals", "allow", &id, "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["request"]["status"], "allowed");
    assert_eq!(report["answer"], "已批准：现金已设为 5000。");
    assert_eq!(free_cash(h).await, Some(5000.0));
    // The follow-up turn of that conversation carried the result.
    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 3);
    let notice = last_message(&server, 2, "user");
    assert!(notice.contains(&id), "{notice}");
    assert!(
        notice.contains("allowed by the user; the call ran"),
        "{notice}"
    );
    // Stored with its message, typed.
    let notices = stored_notices(h, &conversation).await;
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0]["request_id"], id.as_str());
    assert_eq!(notices[0]["tool_name"], "update_portfolio");
    assert_eq!(notices[0]["status"], "allowed");
    assert_eq!(notices[0]["decided_by"], json!({"type": "cli"}));
    assert_eq!(notices[0]["summary"], report["tool_result"]);
    assert!(notice.contains(notices[0]["summary"].as_str().unwrap()));
    let messages = requests[2].body["messages"].as_array().unwrap();
    assert!(
        messages.iter().any(|m| m["role"] == "user"
            && m["content"]
                .as_str()
                .unwrap_or("")
                .contains("把现金设为 5000")),
        "the follow-up is not in the same conversation"
    );

    // Answered twice, or an unknown id: exit 2, nothing changed.
    let log_before = audit_log(h).await;
    for args in [
        vec!["approvals", "allow", id.as_str()],
        vec!["approvals", "deny", id.as_str()],
    ] {
        let again = wyckoff(h, &args).await;
        assert_eq!(again.status.code(), Some(2), "{args:?}");
        assert!(
            text(&again.stderr).contains("already allowed"),
            "{}",
            text(&again.stderr)
        );
    }
    let unknown = wyckoff(h, &["approvals", "allow", "apr-unknown"]).await;
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("no approval request 'apr-unknown'"));
    assert_eq!(audit_log(h).await, log_before);
    assert_eq!(server.requests_to(Route::Openai).len(), 3);
    assert_eq!(free_cash(h).await, Some(5000.0));

    // Both decisions are in the audit log: queued by the run's policy, allowed from the CLI,
    // each line naming the request and the model's call.
    let decisions: Vec<(Value, Value, Value, Value)> = log_before
        .iter()
        .map(|e| {
            (
                e["decision"].clone(),
                e["decided_by"].clone(),
                e["request_id"].clone(),
                e["call_id"].clone(),
            )
        })
        .collect();
    assert_eq!(
        decisions,
        vec![
            (
                json!("queued"),
                json!({"type": "policy", "approve": "queue"}),
                json!(id),
                json!("call_cash_1"),
            ),
            (
                json!("allowed"),
                json!({"type": "cli"}),
                json!(id),
                json!("call_cash_1"),
            ),
        ]
    );
    assert!(
        log_before
            .iter()
            .all(|e| e["args"] == json!({"action": "set_cash", "free_cash": 5000}))
    );
    let listed = inbox(h, None).await;
    assert_eq!(listed[0]["status"], "allowed");
    assert_eq!(listed[0]["decided_by"], json!({"type": "cli"}));
}

#[tokio::test(flavor = "multi_thread")]
async fn deny_leaves_the_portfolio_and_tells_the_model() {
    let server = MockServer::start().await.unwrap();
    server.push(Route::Openai, set_cash_call("call_cash_2", 7000));
    server.push(Route::Openai, OpenAiStream::text_response(&["等待批准。"]));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["好的，没有调仓。"]),
    );
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    wyckoff_e2e::webdriver::mock_model_settings(h, &format!("{}/v1", server.url()));

    let conversation = queued_run(h, KEY, &[], "把现金设为 7000").await;
    let id = inbox(h, None).await[0]["id"].as_str().unwrap().to_owned();
    let listed = wyckoff(h, &["approvals", "list"]).await;
    let listed = text(&listed.stdout);
    assert!(
        listed.contains(&format!("{id}  pending  update_portfolio"))
            && listed.contains(r#"args {"action":"set_cash","free_cash":7000}"#),
        "{listed}"
    );
    let out = wyckoff(h, &["approvals", "deny", &id, "--reason", "先不动"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(&format!("denied {id}")),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(free_cash(h).await, None);
    let notice = last_message(&server, 2, "user");
    assert!(notice.contains("denied by the user"), "{notice}");
    assert!(notice.contains("<reason>先不动</reason>"), "{notice}");
    let notices = stored_notices(h, &conversation).await;
    assert_eq!(notices[0]["status"], "denied");
    assert_eq!(notices[0]["reason"], "先不动");
    let log = audit_log(h).await;
    let last = log.last().unwrap();
    assert_eq!(last["decision"], "denied");
    assert_eq!(last["decided_by"], json!({"type": "cli"}));
    assert_eq!(last["call_id"], "call_cash_2");
    assert_eq!(last["request_id"], id.as_str());
    let text_log = wyckoff(h, &["approvals", "log"]).await;
    let text_log = text(&text_log.stdout);
    assert!(
        text_log.contains(&format!(
            "update_portfolio  denied  by wyckoff approvals  call call_cash_2  request {id}"
        )),
        "{text_log}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_at_the_expiry_is_refused_and_one_just_before_it_applies() {
    let server = MockServer::start().await.unwrap();
    for (call, amount) in [("call_cash_a", 1000), ("call_cash_b", 2000)] {
        server.push(Route::Openai, set_cash_call(call, amount));
        server.push(Route::Openai, OpenAiStream::text_response(&["等待批准。"]));
    }
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["请求已过期，没有调仓。"]),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["现金已设为 2000。"]),
    );
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    wyckoff_e2e::webdriver::mock_model_settings(h, &format!("{}/v1", server.url()));

    queued_run(h, KEY, &["--approval-expiry", "1h"], "把现金设为 1000").await;
    queued_run(h, KEY, &["--approval-expiry", "1h"], "把现金设为 2000").await;
    let queued = inbox(h, None).await;
    let by_amount = |n: u64| {
        queued
            .iter()
            .find(|r| r["args"]["free_cash"] == n)
            .unwrap()
            .clone()
    };
    let (a, b) = (by_amount(1000), by_amount(2000));
    assert_eq!(
        time(&a["expires_at"]) - time(&a["created_at"]),
        TimeDelta::hours(1)
    );

    // Exactly at its expiry: shown expired, refused, the model told, nothing run.
    let at = a["expires_at"].as_str().unwrap();
    let shown = inbox(h, Some(at)).await;
    assert_eq!(
        shown.iter().find(|r| r["id"] == a["id"]).unwrap()["status"],
        "expired"
    );
    let out = wyckoff(
        h,
        &["approvals", "allow", a["id"].as_str().unwrap(), "--now", at],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("expired"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(free_cash(h).await, None);
    let notice = last_message(&server, 4, "user");
    assert!(
        notice.contains("expired before anyone answered"),
        "{notice}"
    );
    let log = audit_log(h).await;
    let last = log.last().unwrap();
    assert_eq!(last["decision"], "expired");
    assert_eq!(last["decided_by"], json!({"type": "expiry"}));

    // One second before its expiry: still answerable.
    let before = (time(&b["expires_at"]) - TimeDelta::seconds(1)).to_rfc3339();
    let out = wyckoff(
        h,
        &[
            "approvals",
            "allow",
            b["id"].as_str().unwrap(),
            "--now",
            &before,
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(free_cash(h).await, Some(2000.0));

    // Nobody answers: `approvals expire` refuses what is due and tells the conversation;
    // one second earlier nothing is due.
    server.push(Route::Openai, set_cash_call("call_cash_c", 3000));
    server.push(Route::Openai, OpenAiStream::text_response(&["等待批准。"]));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["那笔调仓过期了。"]),
    );
    let conversation = queued_run(h, KEY, &["--approval-expiry", "30s"], "把现金设为 3000").await;
    let c = inbox(h, None)
        .await
        .into_iter()
        .find(|r| r["status"] == "pending")
        .unwrap();
    let due = time(&c["expires_at"]);
    let early = (due - TimeDelta::seconds(1)).to_rfc3339();
    let none = wyckoff(h, &["approvals", "expire", "--json", "--now", &early]).await;
    assert!(none.status.success(), "{}", text(&none.stderr));
    assert_eq!(
        serde_json::from_slice::<Value>(&none.stdout).unwrap(),
        json!([])
    );
    let out = wyckoff(
        h,
        &[
            "approvals",
            "expire",
            "--json",
            "--now",
            c["expires_at"].as_str().unwrap(),
        ],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let expired: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(expired.len(), 1, "{expired:?}");
    assert_eq!(expired[0]["id"], c["id"]);
    assert_eq!(expired[0]["status"], "expired");
    assert_eq!(expired[0]["decided_by"], json!({"type": "expiry"}));
    assert_eq!(server.requests_to(Route::Openai).len(), 9);
    assert!(last_message(&server, 8, "user").contains("expired before anyone answered"));
    assert_eq!(
        stored_notices(h, &conversation).await[0]["status"],
        "expired"
    );
    assert_eq!(free_cash(h).await, Some(2000.0));
}

/// Runs SQL on the data home's database (the test's stand-in for what another process or
/// an earlier day left there).
async fn sql(home: &Path, statement: &'static str, binds: &[&str]) {
    let url = format!("sqlite://{}", home.join("wyckoff.db").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let mut query = sqlx::query(statement);
    for b in binds {
        query = query.bind(*b);
    }
    query.execute(&pool).await.unwrap();
    pool.close().await;
}

/// A request that expired yesterday cannot be allowed by claiming an earlier clock, and
/// the refusal is recorded at the real time, not the claimed one.
#[tokio::test(flavor = "multi_thread")]
async fn a_back_dated_allow_of_an_expired_request_is_refused_at_the_real_time() {
    let server = MockServer::start().await.unwrap();
    server.push(Route::Openai, set_cash_call("call_cash_old", 4000));
    server.push(Route::Openai, OpenAiStream::text_response(&["等待批准。"]));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["那笔调仓过期了。"]),
    );
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    wyckoff_e2e::webdriver::mock_model_settings(h, &format!("{}/v1", server.url()));
    queued_run(h, KEY, &[], "把现金设为 4000").await;
    let id = inbox(h, None).await[0]["id"].as_str().unwrap().to_owned();
    // Queued in 2021 with a day to answer: long expired.
    sql(
        h,
        "UPDATE approval_inbox SET created_at = '2021-03-01T00:00:00Z', expires_at = '2021-03-02T00:00:00Z' WHERE id = ?",
        &[&id],
    )
    .await;
    let out = wyckoff(h, &["approvals", "allow", &id, "--now", "2020-01-01 00:00"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("expired"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(free_cash(h).await, None, "an expired call ran");
    let request = &inbox(h, None).await[0];
    assert_eq!(request["status"], "expired");
    assert_eq!(request["decided_by"], json!({"type": "expiry"}));
    let last = audit_log(h).await.pop().unwrap();
    assert_eq!(last["decision"], "expired");
    // The real time: after the expiry, not the claimed 2020 clock.
    assert!(time(&last["at"]) > time(&request["expires_at"]), "{last}");
    assert_eq!(last["at"], request["decided_at"]);
}

/// What the call would do changed after it was queued: the allow shows what it would do
/// now and asks again; nothing is written until it is allowed again.
#[tokio::test(flavor = "multi_thread")]
async fn an_allow_whose_preview_changed_shows_the_new_one_and_asks_again() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        tool_call(
            "call_notes",
            "write_file",
            json!({"path": "notes.md", "content": "模型的笔记\n"}),
        ),
    );
    server.push(Route::Openai, OpenAiStream::text_response(&["等待批准。"]));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["笔记已写入。"]),
    );
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    wyckoff_e2e::webdriver::mock_model_settings(h, &format!("{}/v1", server.url()));
    queued_run(h, KEY, &[], "记一条笔记").await;
    let queued = inbox(h, None).await;
    let id = queued[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(queued[0]["preview"]["type"], "file_write");
    assert_eq!(queued[0]["preview"]["created"], true);

    // Meanwhile the user wrote the file.
    let notes = h.join("workspace").join("notes.md");
    std::fs::create_dir_all(notes.parent().unwrap()).unwrap();
    std::fs::write(&notes, "我自己的笔记\n").unwrap();

    let out = wyckoff(h, &["approvals", "allow", &id]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("what it would do changed") && stderr.contains("changes "),
        "{stderr}"
    );
    assert!(stderr.contains("-我自己的笔记"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "我自己的笔记\n");
    let request = &inbox(h, None).await[0];
    assert_eq!(request["status"], "pending");
    assert_eq!(request["preview"]["created"], false, "{request}");
    assert_eq!(server.requests_to(Route::Openai).len(), 2);
    assert!(
        audit_log(h).await.iter().all(|e| e["decision"] == "queued"),
        "a refused allow was logged"
    );

    // Asked again with the new preview shown: allowed, written, the conversation told.
    let out = wyckoff(h, &["approvals", "allow", &id]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "模型的笔记\n");
    assert_eq!(inbox(h, None).await[0]["status"], "allowed");
    assert_eq!(server.requests_to(Route::Openai).len(), 3);
}

/// An allow that cannot run because another process runs a turn in the conversation is
/// refused with why, and the request stays pending to be allowed later.
#[tokio::test(flavor = "multi_thread")]
async fn an_allow_refused_as_busy_leaves_the_request_pending() {
    let server = MockServer::start().await.unwrap();
    server.push(Route::Openai, set_cash_call("call_cash_busy", 6000));
    server.push(Route::Openai, OpenAiStream::text_response(&["等待批准。"]));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["现金已设为 6000。"]),
    );
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    wyckoff_e2e::webdriver::mock_model_settings(h, &format!("{}/v1", server.url()));
    let conversation = queued_run(h, KEY, &[], "把现金设为 6000").await;
    let id = inbox(h, None).await[0]["id"].as_str().unwrap().to_owned();

    // This test process stands in for another one running a turn there.
    let other =
        wyckoff_config::lease::ProcessLease::acquire(&wyckoff_config::DataHome::new(h)).unwrap();
    sql(
        h,
        "INSERT INTO conversation_lease (conversation_id, owner, turn, taken_at) VALUES (?, ?, 1, '2026-12-05T00:00:00Z')",
        &[&conversation, other.owner()],
    )
    .await;
    let out = wyckoff(h, &["approvals", "allow", &id]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("still pending") && stderr.contains("another process"),
        "{stderr}"
    );
    assert_eq!(free_cash(h).await, None);
    let request = &inbox(h, None).await[0];
    assert_eq!(request["status"], "pending", "{request}");
    assert!(audit_log(h).await.iter().all(|e| e["decision"] == "queued"));

    // The other turn ended: the same allow now runs.
    sql(h, "DELETE FROM conversation_lease", &[]).await;
    drop(other);
    let out = wyckoff(h, &["approvals", "allow", &id]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(free_cash(h).await, Some(6000.0));
}

/// A denial needs no model: it is recorded, and the conversation is told once a model is
/// configured again, by `approvals tell`, once.
/// A `set_cash` call queued by a run, then denied (with a reason) once the model is gone
/// from the settings: the decision is recorded and waits to be told. The conversation
/// and the request's id, and what the denial said.
async fn denied_with_no_model(
    server: &MockServer,
    h: &Path,
    base_url: &str,
    call_id: &str,
) -> (String, String, Output) {
    server.push(Route::Openai, set_cash_call(call_id, 8000));
    server.push(Route::Openai, OpenAiStream::text_response(&["等待批准。"]));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["好的，没有调仓。"]),
    );
    wyckoff_e2e::webdriver::mock_model_settings(h, base_url);
    let conversation = queued_run(h, KEY, &[], "把现金设为 8000").await;
    let id = inbox(h, None).await[0]["id"].as_str().unwrap().to_owned();
    std::fs::write(h.join("settings.json"), json!({"version": 1}).to_string()).unwrap();
    let out = wyckoff(h, &["approvals", "deny", &id, "--reason", "不调"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    (conversation, id, out)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denial_without_a_model_is_recorded_and_told_once_a_model_is_back() {
    let server = MockServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let base_url = format!("{}/v1", server.url());
    let (conversation, id, out) =
        denied_with_no_model(&server, h, &base_url, "call_cash_nomodel").await;
    assert!(
        text(&out.stderr).contains("told once a model is available"),
        "{}",
        text(&out.stderr)
    );
    let request = &inbox(h, None).await[0];
    assert_eq!(request["status"], "denied");
    assert_eq!(audit_log(h).await.last().unwrap()["decision"], "denied");
    assert_eq!(server.requests_to(Route::Openai).len(), 2);
    assert!(stored_notices(h, &conversation).await.is_empty());
    let listed = wyckoff(h, &["approvals", "list"]).await;
    assert!(
        text(&listed.stdout).contains("not told yet"),
        "{}",
        text(&listed.stdout)
    );
    // Still no model: nothing to tell with.
    let out = wyckoff(h, &["approvals", "tell"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(server.requests_to(Route::Openai).len(), 2);

    // A model again: the conversation is told, with the reason, once.
    wyckoff_e2e::webdriver::mock_model_settings(h, &base_url);
    let out = wyckoff(h, &["approvals", "tell"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(&format!("told conversation {conversation}")),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(server.requests_to(Route::Openai).len(), 3);
    let notice = last_message(&server, 2, "user");
    assert!(notice.contains("denied by the user"), "{notice}");
    assert!(notice.contains("<reason>不调</reason>"), "{notice}");
    let notices = stored_notices(h, &conversation).await;
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0]["request_id"], id.as_str());
    let out = wyckoff(h, &["approvals", "tell"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("no decision waits to be told"));
    assert_eq!(server.requests_to(Route::Openai).len(), 3);
}

/// The daemon tells waiting decisions too: a denial made with no model is told by the
/// first `daemon --once` pass that has one, once.
#[tokio::test(flavor = "multi_thread")]
async fn a_denial_without_a_model_is_told_by_the_next_daemon_pass_with_one() {
    let server = MockServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let base_url = format!("{}/v1", server.url());
    let (conversation, _, _) =
        denied_with_no_model(&server, h, &base_url, "call_cash_daemon").await;

    // A pass with no model tells nothing and fails nothing.
    let pass = wyckoff(h, &["daemon", "--once"]).await;
    assert_eq!(pass.status.code(), Some(0), "{}", text(&pass.stderr));
    assert_eq!(server.requests_to(Route::Openai).len(), 2);

    wyckoff_e2e::webdriver::mock_model_settings(h, &base_url);
    let pass = wyckoff(h, &["daemon", "--once"]).await;
    assert_eq!(pass.status.code(), Some(0), "{}", text(&pass.stderr));
    assert_eq!(server.requests_to(Route::Openai).len(), 3);
    let notice = last_message(&server, 2, "user");
    assert!(notice.contains("<reason>不调</reason>"), "{notice}");
    let notices = stored_notices(h, &conversation).await;
    assert_eq!(notices.len(), 1, "{notices:?}");
    let again = wyckoff(h, &["daemon", "--once"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert_eq!(server.requests_to(Route::Openai).len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_queued_buy_shows_its_sizing_in_the_inbox() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        tool_call(
            "call_buy_inbox",
            "record_fill",
            json!({"side": "buy", "code": "000001", "shares": 3000, "price": 13.0}),
        ),
    );
    server.push(Route::Openai, OpenAiStream::text_response(&["等待批准。"]));
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    wyckoff_e2e::webdriver::mock_model_settings(h, &format!("{}/v1", server.url()));
    // One position at most, and one already held (bought without a stop).
    let path = h.join("settings.json");
    let mut s: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    s["risk"] = json!({"max_positions": 1});
    std::fs::write(&path, s.to_string()).unwrap();
    for args in [
        &["portfolio", "cash", "in", "100000", "--date", "2020-01-02"][..],
        &[
            "portfolio",
            "fill",
            "buy",
            "000338",
            "--shares",
            "500",
            "--price",
            "10",
            "--date",
            "2020-01-02",
        ],
    ] {
        let out = wyckoff(h, args).await;
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }

    queued_run(h, KEY, &[], "按 13 元买入 000001 三千股，记一笔").await;
    let queued = inbox(h, None).await;
    assert_eq!(queued.len(), 1, "{queued:?}");
    let preview = &queued[0]["preview"];
    assert_eq!(preview["type"], "buy_sizing", "{preview}");
    assert_eq!(preview["code"], "000001");
    assert_eq!(preview["proposed_shares"], 3000);
    let s = &preview["sizing"];
    let shares = s["shares"].as_u64().unwrap();
    assert!(shares > 0 && shares.is_multiple_of(100), "{s}");
    let stop = s["stop_e6"].as_i64().unwrap();
    assert!(0 < stop && stop < 13_000_000, "{s}");
    assert!(
        s["risk_fen"].as_i64().unwrap() <= s["risk_budget_fen"].as_i64().unwrap(),
        "{s}"
    );
    // 3,000 × 13.00 is far past 20 % of about 100,000; a second position with one allowed;
    // the proposal's own risk flagged exactly when it is over the budget.
    let breaches: Vec<&str> = preview["breaches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert!(breaches.contains(&"position_size"), "{breaches:?}");
    assert!(breaches.contains(&"positions"), "{breaches:?}");
    assert_eq!(
        breaches.contains(&"trade_risk"),
        s["proposed_risk_fen"].as_i64().unwrap() > s["risk_budget_fen"].as_i64().unwrap(),
        "{preview}"
    );
    assert!(!breaches.contains(&"cash"), "{breaches:?}");

    let listed = wyckoff(h, &["approvals", "list"]).await;
    let listed = text(&listed.stdout);
    assert!(
        listed.contains(&format!("rules give {shares} shares")),
        "{listed}"
    );
    assert!(
        listed.contains("breaks positions: 持仓 2 只超过上限 1 只"),
        "{listed}"
    );
    assert!(
        listed.contains("breaks position_size: 买入后单只仓位"),
        "{listed}"
    );
}
