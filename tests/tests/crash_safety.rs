//! Crash safety of the CLI: `kill -9` of `wyckoff run` at several points
//! of a turn loses nothing written before the kill, and the next start opens cleanly:
//! SQLite's integrity check passes, the killed turn is marked interrupted, a background
//! task it was running is marked failed "interrupted by restart". Two runs on one data
//! home at the same time both work, and neither marks the other's turn interrupted.
//! Kill points: while streaming, during a tool (the next run answers the open call), after
//! a portfolio write (the row stays), during a background task, during memory extraction,
//! during compaction (after its memory flush, waiting for the summary) and during a bar
//! import (after its first committed batch: each series is then old or whole).
//!
//! The model is an in-process mock vendor (OpenAI's stream over real HTTP) that stalls
//! where the kill should land. Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sqlx::Row;
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Response, Route, Script};

fn command(home: &Path, base_url: &str, extra: &[&str], prompt: &str) -> Command {
    let mut cmd = Command::new(wyckoff_e2e::binary("wyckoff"));
    cmd.args([
        "run",
        "--json",
        "--provider",
        "openai",
        "--base-url",
        base_url,
    ])
    .args(extra)
    .arg(prompt)
    .env("OPENAI_API_KEY", "sk-e2e-crash-canary")
    .env("WYCKOFF_HOME", home)
    .env("WYCKOFF_OFFLINE", "1")
    .env_remove("HTTPS_PROXY")
    .env_remove("HTTP_PROXY")
    .env_remove("ALL_PROXY")
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    cmd
}

/// Starts a run and kills it (SIGKILL) as soon as an event satisfies `kill_when`.
/// Returns the events seen before the kill.
fn run_and_kill(mut cmd: Command, kill_when: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut child: Child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    let mut hit = false;
    for line in BufReader::new(stdout).lines() {
        let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
        hit = kill_when(&event);
        seen.push(event);
        if hit || Instant::now() > deadline {
            break;
        }
    }
    if hit {
        // Let the write that follows the event land (the store writes as it goes).
        std::thread::sleep(Duration::from_millis(300));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    assert!(hit, "the kill point never came: {seen:?}");
    seen
}

fn run_to_end(mut cmd: Command) -> (Option<i32>, Vec<Value>) {
    let out = cmd.output().unwrap();
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out.status.code(), events)
}

fn session_of(events: &[Value]) -> String {
    events
        .iter()
        .find(|e| e["type"] == "session")
        .and_then(|e| e["session_id"].as_str())
        .unwrap()
        .to_owned()
}

async fn db(home: &Path) -> sqlx::SqlitePool {
    let opts = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(home.join("wyckoff.db"))
        .busy_timeout(Duration::from_secs(5));
    sqlx::SqlitePool::connect_with(opts).await.unwrap()
}

async fn integrity_ok(home: &Path) {
    let pool = db(home).await;
    let r: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(r, "ok");
}

/// (role, status) of each stored message of a conversation, in order.
async fn messages(home: &Path, conversation: &str) -> Vec<(String, String, String)> {
    let pool = db(home).await;
    sqlx::query("SELECT role, status, message FROM conversation_message WHERE conversation_id = ? ORDER BY seq")
        .bind(conversation)
        .fetch_all(&pool)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.get("role"), r.get("status"), r.get("message")))
        .collect()
}

async fn turn_outcomes(home: &Path, conversation: &str) -> Vec<Option<String>> {
    let pool = db(home).await;
    sqlx::query_scalar("SELECT outcome FROM conversation_turn WHERE conversation_id = ? ORDER BY started_at, rowid")
        .bind(conversation)
        .fetch_all(&pool)
        .await
        .unwrap()
}

fn stalled_text(first: &str) -> Response {
    OpenAiStream::new()
        .role()
        .text(&[first])
        .response()
        .stall_after(2)
}

async fn server(responses: Vec<Response>) -> (MockServer, String) {
    let s = MockServer::start_with(
        Script {
            openai: responses,
            ..Script::default()
        },
        0,
    )
    .await
    .unwrap();
    let url = format!("{}/v1", s.url());
    (s, url)
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_while_streaming_then_resumed() {
    let (server, url) = server(vec![
        stalled_text("正在分析 000001"),
        OpenAiStream::text_response(&["继续：结论如下。"]),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_path_buf();
    let (u, h2) = (url.clone(), h.clone());
    let seen = blocking(move || {
        run_and_kill(
            command(&h2, &u, &[], "分析 000001 的量价结构"),
            |e| e["type"] == "text_delta",
        )
    })
    .await;
    let id = session_of(&seen);
    // The user's message was stored before the model was called; the turn never ended.
    let stored = messages(&h, &id).await;
    assert_eq!(stored[0].0, "user");
    assert!(stored[0].2.contains("分析 000001 的量价结构"));
    assert_eq!(turn_outcomes(&h, &id).await, vec![None]);
    integrity_ok(&h).await;

    // The next start marks it interrupted and the conversation goes on with its history.
    let (u, h2, id2) = (url.clone(), h.clone(), id.clone());
    let (code, events) =
        blocking(move || run_to_end(command(&h2, &u, &["--session", &id2], "继续"))).await;
    assert_eq!(code, Some(0), "{events:?}");
    assert_eq!(
        turn_outcomes(&h, &id).await,
        vec![Some("interrupted".into()), Some("done".into())]
    );
    let requests = server.requests_to(Route::Openai);
    assert!(requests[1].raw_body.contains("分析 000001 的量价结构"));
    integrity_ok(&h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_during_a_background_task_which_is_then_marked_interrupted() {
    // The task's own model call and the turn's next round both stall.
    let (_server, url) = server(vec![
        OpenAiStream::tool_call_response(
            "call_r",
            "generate_ai_report",
            &json!({"stock_codes": ["000001"]}),
        ),
        stalled_text("…"),
        stalled_text("…"),
        OpenAiStream::text_response(&["好的。"]),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_path_buf();
    let (u, h2) = (url.clone(), h.clone());
    let seen = blocking(move || {
        run_and_kill(command(&h2, &u, &[], "给 000001 生成研报"), |e| {
            e["type"] == "tool_result"
        })
    })
    .await;
    let id = session_of(&seen);
    let task_id = seen
        .iter()
        .find(|e| e["type"] == "background_task")
        .and_then(|e| e["task"]["task_id"].as_str())
        .unwrap()
        .to_owned();
    // The tool call and its result were stored before the kill.
    let roles: Vec<String> = messages(&h, &id).await.into_iter().map(|m| m.0).collect();
    assert_eq!(roles[..3], ["user", "assistant", "tool"]);

    // Any next start marks the orphaned task failed, "interrupted by restart".
    let (u, h2) = (url.clone(), h.clone());
    let (code, _) = blocking(move || run_to_end(command(&h2, &u, &[], "你好"))).await;
    assert_eq!(code, Some(0));
    let pool = db(&h).await;
    let row = sqlx::query("SELECT status, error FROM agent_background_task WHERE task_id = ?")
        .bind(&task_id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(row.get::<String, _>("status"), "failed");
    assert_eq!(row.get::<String, _>("error"), "interrupted by restart");
    integrity_ok(&h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_during_memory_extraction_keeps_the_finished_turn() {
    let (_server, url) = server(vec![
        OpenAiStream::text_response(&["记住了：你只做主板。"]),
        stalled_text("[偏好] 只做"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_path_buf();
    let (u, h2) = (url.clone(), h.clone());
    let seen = blocking(move || {
        run_and_kill(
            command(&h2, &u, &["--remember"], "我只做沪深主板，不碰创业板"),
            |e| e["type"] == "done",
        )
    })
    .await;
    let id = session_of(&seen);
    assert_eq!(turn_outcomes(&h, &id).await, vec![Some("done".into())]);
    let stored = messages(&h, &id).await;
    assert_eq!(stored.len(), 2);
    assert!(stored.iter().all(|m| m.1 == "complete"));
    let pool = db(&h).await;
    let memories: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM agent_memory")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(memories, 0, "a half-done extraction saves nothing");
    integrity_ok(&h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_runs_on_one_home_at_once_leave_each_other_alone() {
    // The first run has a background task running and its turn open (both model calls
    // stall) while a second run starts, answers and ends on the same data home: the
    // second must neither fail on a locked database nor mark the first's live turn or
    // task interrupted.
    let (server, url) = server(vec![
        OpenAiStream::tool_call_response(
            "call_r",
            "generate_ai_report",
            &json!({"stock_codes": ["000001"]}),
        ),
        stalled_text("…"),
        stalled_text("…"),
        OpenAiStream::text_response(&["第二个进程的回答。"]),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_path_buf();
    let mut first = command(&h, &url, &[], "给 000001 生成研报")
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(first.stdout.take().unwrap()).lines();
    let (mut first_id, mut task_id) = (None, None);
    for line in lines.by_ref() {
        let e: Value = serde_json::from_str(&line.unwrap()).unwrap();
        match e["type"].as_str() {
            Some("session") => first_id = e["session_id"].as_str().map(str::to_owned),
            Some("background_task") => task_id = e["task"]["task_id"].as_str().map(str::to_owned),
            Some("tool_result") => break,
            _ => {}
        }
    }
    let (first_id, task_id) = (first_id.unwrap(), task_id.unwrap());
    // Both of the first run's model calls are in (and stalled) before the second starts.
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.requests_to(Route::Openai).len() < 3 {
        assert!(
            Instant::now() < deadline,
            "the first run never made its calls"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (u, h2) = (url.clone(), h.clone());
    let (code, events) = blocking(move || run_to_end(command(&h2, &u, &[], "第二个问题"))).await;
    assert_eq!(code, Some(0), "{events:?}");
    // the first run's turn is still open and its task still running
    assert_eq!(turn_outcomes(&h, &first_id).await, vec![None]);
    let pool = db(&h).await;
    let status: String =
        sqlx::query_scalar("SELECT status FROM agent_background_task WHERE task_id = ?")
            .bind(&task_id)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(status, "running");
    first.kill().unwrap();
    first.wait().unwrap();
    integrity_ok(&h).await;
}

/// Starts `cmd` and kills it (SIGKILL) once the mock vendor has received a request whose
/// body contains `needle`. Returns the events the run printed before it died.
async fn run_and_kill_at_request(
    mut cmd: Command,
    server: &MockServer,
    needle: &str,
) -> Vec<Value> {
    let mut child: Child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let hit = loop {
        if server
            .requests_to(Route::Openai)
            .iter()
            .any(|r| r.raw_body.contains(needle))
        {
            break true;
        }
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            break false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    if hit {
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    assert!(hit, "no request contained {needle:?}; output: {out}");
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_during_compaction_keeps_the_history_and_the_flushed_memory() {
    const TURNS: usize = 4;
    // What the compaction's two requests start with (the memory flush, then the summary).
    const FLUSH_MARK: &str = "即将被压缩";
    const SUMMARY_MARK: &str = "请将以下对话历史总结";
    let mut responses: Vec<Response> = (0..TURNS)
        .map(|i| OpenAiStream::text_response(&[&format!("第{i}轮回答：600519 仍在交易区间内。")]))
        .collect();
    responses.push(
        OpenAiStream::text_response(&["- 用户的止损线是 8%，单只仓位不超过 20%"])
            .when_body_contains(FLUSH_MARK),
    );
    // the summary never comes: the kill lands while compaction waits for it
    responses.push(stalled_text("用户").when_body_contains(SUMMARY_MARK));
    responses.push(OpenAiStream::text_response(&["接着上次的分析。"]));
    let (server, url) = server(responses).await;
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_path_buf();

    // A conversation long enough to compact (with a small window) on its next turn.
    let mut id: Option<String> = None;
    for i in 0..TURNS {
        let (u, h2, prev) = (url.clone(), h.clone(), id.clone());
        let (code, events) = blocking(move || {
            let session: Vec<&str> = prev
                .as_deref()
                .map(|s| vec!["--session", s])
                .unwrap_or_default();
            run_to_end(command(
                &h2,
                &u,
                &session,
                &format!("第{i}个问题：600519 怎么看？"),
            ))
        })
        .await;
        assert_eq!(code, Some(0), "{events:?}");
        id.get_or_insert_with(|| session_of(&events));
    }
    let id = id.unwrap();
    assert!(
        server
            .requests_to(Route::Openai)
            .iter()
            .all(|r| !r.raw_body.contains(SUMMARY_MARK)),
        "the building turns must not compact yet"
    );

    let seen = run_and_kill_at_request(
        command(
            &h,
            &url,
            &["--session", &id, "--context-window", "1000"],
            "第五个问题：止损线该怎么设？",
        ),
        &server,
        SUMMARY_MARK,
    )
    .await;
    assert!(seen.iter().all(|e| e["type"] != "done"), "{seen:?}");

    // Every message stored before the kill is still there, verbatim, none compacted away.
    let stored = messages(&h, &id).await;
    assert_eq!(stored.len(), 2 * TURNS + 1, "{stored:?}");
    for i in 0..TURNS {
        assert!(
            stored[2 * i].2.contains(&format!("第{i}个问题")),
            "{stored:?}"
        );
        assert!(
            stored[2 * i + 1].2.contains(&format!("第{i}轮回答")),
            "{stored:?}"
        );
    }
    assert!(stored[2 * TURNS].2.contains("第五个问题"));
    // the flush finished before the summary was asked for: its memory is kept
    let pool = db(&h).await;
    let memories: Vec<String> = sqlx::query_scalar("SELECT content FROM agent_memory")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert!(
        memories.iter().any(|m| m.contains("止损线是 8%")),
        "{memories:?}"
    );
    let mut outcomes = vec![Some("done".to_owned()); TURNS];
    outcomes.push(None);
    assert_eq!(turn_outcomes(&h, &id).await, outcomes);
    integrity_ok(&h).await;

    // The next start marks the killed turn interrupted and sends the whole history.
    let (u, h2, id2) = (url.clone(), h.clone(), id.clone());
    let (code, events) =
        blocking(move || run_to_end(command(&h2, &u, &["--session", &id2], "继续"))).await;
    assert_eq!(code, Some(0), "{events:?}");
    outcomes[TURNS] = Some("interrupted".into());
    outcomes.push(Some("done".into()));
    assert_eq!(turn_outcomes(&h, &id).await, outcomes);
    let last = server.requests_to(Route::Openai).pop().unwrap();
    assert!(last.raw_body.contains("第0个问题"), "{}", last.raw_body);
    integrity_ok(&h).await;
}

/// `n` distinct real calendar dates from 2010 on (days 1–28 of each month), as YYYYMMDD.
fn dates(n: usize) -> Vec<u32> {
    (2010..)
        .flat_map(|y| (1..=12).flat_map(move |m| (1..=28).map(move |d| y * 10_000 + m * 100 + d)))
        .take(n)
        .collect()
}

fn write_csv(path: &Path, code: &str, dates: &[u32], close: f64) {
    use std::fmt::Write;
    let mut text = String::from("date,code,open,high,low,close,volume,amount\n");
    for d in dates {
        let _ = writeln!(
            text,
            "{d},{code},{},{},{},{close},1000,{}",
            close - 0.5,
            close + 1.0,
            close - 1.0,
            close * 1000.0
        );
    }
    std::fs::write(path, text).unwrap();
}

/// (bars, last_date) per imported code, from `wyckoff data status --json`.
fn bar_counts(home: &Path) -> std::collections::BTreeMap<String, (u64, u64)> {
    let out = wyckoff_e2e::wyckoff_cli(home)
        .args(["data", "status", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "data status: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let st: Value = serde_json::from_slice(&out.stdout).unwrap();
    st["stocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["code"].as_str().is_some_and(|c| c.starts_with("605")))
        .map(|s| {
            (
                s["code"].as_str().unwrap().to_owned(),
                (
                    s["bars"].as_u64().unwrap(),
                    s["last_date"].as_u64().unwrap(),
                ),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_during_a_bar_import_leaves_each_series_old_or_whole() {
    const STOCKS: usize = 400;
    const OLD_EVERY: usize = 8;
    const OLD_BARS: usize = 100;
    const NEW_BARS: usize = 2_500;
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_path_buf();
    let dates = dates(NEW_BARS);
    // 605xxx: none of the bundled stocks, so each series is exactly what was imported
    let codes: Vec<String> = (0..STOCKS).map(|i| (605_000 + i).to_string()).collect();

    // Before: every eighth stock has a short series of its own.
    let old = tempfile::tempdir().unwrap();
    for code in codes.iter().step_by(OLD_EVERY) {
        write_csv(
            &old.path().join(format!("{code}.csv")),
            code,
            &dates[..OLD_BARS],
            10.0,
        );
    }
    let out = wyckoff_e2e::wyckoff_cli(&h)
        .args(["data", "import"])
        .arg(old.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let before = bar_counts(&h);
    assert_eq!(before.len(), STOCKS / OLD_EVERY);
    let pool = db(&h).await;
    let series_before: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM market_series")
        .fetch_one(&pool)
        .await
        .unwrap();

    // The new folder: a long series for every stock (the old dates included, new prices).
    let new = tempfile::tempdir().unwrap();
    for code in &codes {
        write_csv(&new.path().join(format!("{code}.csv")), code, &dates, 20.0);
    }
    let mut child = wyckoff_e2e::wyckoff_cli(&h)
        .args(["data", "import"])
        .arg(new.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill right after the first batch of series is committed, while the rest is pending.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let series: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM market_series")
            .fetch_one(&pool)
            .await
            .unwrap();
        if series > series_before {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the import ended before any batch was seen"
        );
        assert!(Instant::now() < deadline, "no batch was committed in time");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the import finished before the kill: not a mid-way crash"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    pool.close().await;
    integrity_ok(&h).await;

    // Each stock has its old series or the whole new one, never part of it.
    let last_new = u64::from(*dates.last().unwrap());
    let after_kill = bar_counts(&h);
    let whole = (NEW_BARS as u64, last_new);
    let mut imported = 0;
    for (i, code) in codes.iter().enumerate() {
        let state = after_kill.get(code).copied();
        if state == Some(whole) {
            imported += 1;
            continue;
        }
        let old_state = if i % OLD_EVERY == 0 {
            Some(before[code])
        } else {
            None
        };
        assert_eq!(
            state, old_state,
            "{code}: neither its old series nor the whole new one"
        );
    }
    assert!(
        imported > 0 && imported < STOCKS,
        "{imported} of {STOCKS} imported before the kill"
    );

    // Importing again completes: every stock has the whole new series.
    let out = wyckoff_e2e::wyckoff_cli(&h)
        .args(["data", "import"])
        .arg(new.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let after = bar_counts(&h);
    assert_eq!(after.len(), STOCKS);
    assert!(after.values().all(|s| *s == whole), "{after:?}");
    integrity_ok(&h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_during_a_tool_then_resumed_with_every_call_answered() {
    // The tool outlives the kill only briefly: a short sleep, so nothing lingers.
    let (server, url) = server(vec![
        OpenAiStream::tool_call_response(
            "call_sleep",
            "exec_command",
            &json!({"command": "sleep 5"}),
        ),
        OpenAiStream::text_response(&["上次的命令被中断了，我们继续。"]),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_path_buf();
    let (u, h2) = (url.clone(), h.clone());
    let seen = blocking(move || {
        run_and_kill(
            command(&h2, &u, &["--approve", "exec_command"], "跑一下那个命令"),
            |e| e["type"] == "tool_start",
        )
    })
    .await;
    assert!(seen.iter().all(|e| e["type"] != "tool_result"), "{seen:?}");
    let id = session_of(&seen);
    let stored = messages(&h, &id).await;
    assert_eq!(stored[0].0, "user");
    assert!(stored[0].2.contains("跑一下那个命令"));
    assert_eq!(stored[1].0, "assistant");
    assert!(
        stored[1].2.contains("call_sleep"),
        "the call was stored: {stored:?}"
    );
    assert_eq!(turn_outcomes(&h, &id).await, vec![None]);
    integrity_ok(&h).await;

    // The next run goes on: the killed call is answered in what the model is sent (a
    // vendor refuses a conversation with an unanswered tool call) and the turn is marked.
    let (u, h2, id2) = (url.clone(), h.clone(), id.clone());
    let (code, events) =
        blocking(move || run_to_end(command(&h2, &u, &["--session", &id2], "继续"))).await;
    assert_eq!(code, Some(0), "{events:?}");
    assert_eq!(
        turn_outcomes(&h, &id).await,
        vec![Some("interrupted".into()), Some("done".into())]
    );
    let request = server.requests_to(Route::Openai).pop().unwrap();
    let body: Value = serde_json::from_str(&request.raw_body).unwrap();
    let sent = body["messages"].as_array().unwrap();
    let called: Vec<&str> = sent
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .filter_map(|c| c["id"].as_str())
        .collect();
    for call in &called {
        assert!(
            sent.iter()
                .any(|m| m["role"] == "tool" && m["tool_call_id"] == *call),
            "tool call {call} unanswered in {body}"
        );
    }
    assert!(request.raw_body.contains("跑一下那个命令"));
    integrity_ok(&h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_after_a_portfolio_write_keeps_the_row() {
    // The model adds a position (approved), then its next round streams and stalls.
    let (_server, url) = server(vec![
        OpenAiStream::tool_call_response(
            "call_add",
            "update_portfolio",
            &json!({"action": "add", "code": "000001", "shares": 1000,
                   "cost_price": 12.5, "buy_dt": "2024-01-02"}),
        ),
        stalled_text("已记下"),
        OpenAiStream::text_response(&["持仓里有 000001 1000 股。"]),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_path_buf();
    let (u, h2) = (url.clone(), h.clone());
    let seen = blocking(move || {
        run_and_kill(
            command(
                &h2,
                &u,
                &["--approve", "update_portfolio"],
                "记一笔：000001 买了 1000 股，成本 12.5",
            ),
            |e| e["type"] == "text_delta",
        )
    })
    .await;
    assert!(
        seen.iter()
            .any(|e| e["type"] == "tool_result" && e["name"] == "update_portfolio"),
        "{seen:?}"
    );
    let pool = db(&h).await;
    let row = sqlx::query(
        "SELECT shares, cost_price, buy_dt FROM portfolio_positions WHERE code = '000001'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(row.get::<i64, _>("shares"), 1000);
    assert_eq!(row.get::<f64, _>("cost_price"), 12.5);
    assert_eq!(row.get::<String, _>("buy_dt"), "2024-01-02");
    pool.close().await;
    integrity_ok(&h).await;

    // The next start marks the killed turn interrupted; the row is still there.
    let id = session_of(&seen);
    let (u, h2, id2) = (url.clone(), h.clone(), id.clone());
    let (code, events) =
        blocking(move || run_to_end(command(&h2, &u, &["--session", &id2], "持仓还在吗"))).await;
    assert_eq!(code, Some(0), "{events:?}");
    assert_eq!(
        turn_outcomes(&h, &id).await,
        vec![Some("interrupted".into()), Some("done".into())]
    );
    let pool = db(&h).await;
    let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM portfolio_positions")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(rows, 1);
    integrity_ok(&h).await;
}
