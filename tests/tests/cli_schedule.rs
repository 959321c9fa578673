//! End-to-end: schedules through the real `wyckoff` binary, the clock set with
//! `--now` (Beijing time). 2026-12-04 is a Friday; 2026-12-07 … 09 Monday … Wednesday.
//! Needs `cargo build -p wyckoff-cli` first (scripts/test builds every binary).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wyckoff_e2e::approvals::{last_message, set_cash_call};
use wyckoff_e2e::wyckoff_cli;
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Response, Route, openai_error};

fn wyckoff(home: &Path, args: &[&str]) -> Output {
    wyckoff_cli(home).args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// One pass of the daemon at `now`: the runs it made.
fn pass(home: &Path, now: &str) -> Vec<Value> {
    let out = wyckoff(home, &["daemon", "--once", "--json", "--now", now]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The key the mock model settings name (`mock_model_settings`).
const MOCK_KEY: (&str, &str) = ("WYCKOFF_KEY_MOCK", "sk-schedule-e2e-123456");

/// `wyckoff ARGS` with the mock model's key, off the async runtime (the mock vendor runs
/// on it).
async fn with_key(home: &Path, args: &[&str]) -> Output {
    let home = home.to_path_buf();
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        wyckoff_cli(&home)
            .args(&args)
            .env(MOCK_KEY.0, MOCK_KEY.1)
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

/// A prompt schedule over the mock vendor at `url` (`when`: `--at …` or `--cron …`),
/// added the day before the tests' Friday.
async fn add_prompt_schedule(home: &Path, url: &str, name: &str, when: &[&str], prompt: &str) {
    wyckoff_e2e::webdriver::mock_model_settings(home, &format!("{url}/v1"));
    let mut args = vec!["schedule", "add", name];
    args.extend(when);
    args.extend(["--prompt", prompt, "--now", "2026-12-03 16:00"]);
    let added = with_key(home, &args).await;
    assert!(added.status.success(), "{}", stderr(&added));
}

fn listed(home: &Path, now: &str) -> Vec<Value> {
    let out = wyckoff(home, &["schedule", "list", "--json", "--now", now]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

/// Adds `name`, a screen at 15:05 on trading days, with the clock at `now`; what `add` said.
fn add_close_screen(home: &Path, name: &str, now: &str) -> Output {
    let add = wyckoff(
        home,
        &[
            "schedule", "add", name, "--at", "15:05", "--job", "screen", "--now", now,
        ],
    );
    assert!(add.status.success(), "{}", stderr(&add));
    add
}

#[test]
fn a_close_screen_runs_once_a_trading_day_and_catches_up_once() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let add = add_close_screen(h, "close", "2026-12-03 16:00");
    assert!(
        stdout(&add).contains("next run 2026-12-04 15:05"),
        "{}",
        stdout(&add)
    );

    // Friday 15:10: the 15:05 screen runs (not late enough to be a catch-up) …
    let runs = pass(h, "2026-12-04 15:10");
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["schedule"], "close");
    assert_eq!(runs[0]["occurrence"], "2026-12-04 15:05");
    assert_eq!(runs[0]["catch_up"], false);
    assert_eq!(runs[0]["status"], "done", "{runs:?}");
    assert!(
        runs[0]["task_id"]
            .as_str()
            .unwrap()
            .ends_with("screen_stocks")
    );
    // Its summary is the screen's figures in a line, as the screen itself finds them.
    let screened = wyckoff(h, &["screen", "--json"]);
    assert!(screened.status.success(), "{}", stderr(&screened));
    let screened: Value = serde_json::from_slice(&screened.stdout).unwrap();
    let summary = runs[0]["summary"].as_str().unwrap();
    let want = format!(
        "as of {}: {} candidates of {} scanned",
        screened["as_of"].as_str().unwrap(),
        screened["candidates"].as_array().unwrap().len(),
        screened["universe_size"]
    );
    assert!(summary.starts_with(&want), "{summary} / {want}");
    // … once: not again with the same clock, not on the Saturday.
    assert!(pass(h, "2026-12-04 15:10").is_empty());
    assert!(pass(h, "2026-12-05 12:00").is_empty());
    // Monday and Tuesday missed: Wednesday morning runs exactly one catch-up, Tuesday's.
    let runs = pass(h, "2026-12-09 10:00");
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["occurrence"], "2026-12-08 15:05");
    assert_eq!(runs[0]["catch_up"], true);
    assert!(pass(h, "2026-12-09 10:00").is_empty());

    let list = listed(h, "2026-12-09 10:00");
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["next_due"], "2026-12-09 15:05");
    assert_eq!(list[0]["next_due_assumed_trading_day"], false);
    let runs = list[0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|r| r["status"] == "done"));
    // One clock: a run that started on `--now` finished on it too (moved on by the time it
    // took), never on the wall clock.
    for r in runs {
        let (started, finished) = (rfc3339(&r["started_at"]), rfc3339(&r["finished_at"]));
        let pass_clock = match r["occurrence"].as_str().unwrap() {
            "2026-12-04 15:05" => "2026-12-04T07:10",
            _ => "2026-12-09T02:00",
        };
        assert!(started.to_rfc3339().starts_with(pass_clock), "{r}");
        let took = finished - started;
        assert!(
            took >= chrono::Duration::zero() && took < chrono::Duration::minutes(10),
            "{r}"
        );
    }
    // Past the bundled calendar (it ends 2026-12-31) weekdays are assumed, and said; New
    // Year's Day is closed every year, so the next due time is the Monday after it.
    let late = listed(h, "2026-12-31 16:00");
    assert_eq!(late[0]["next_due"], "2027-01-04 15:05");
    assert_eq!(late[0]["next_due_assumed_trading_day"], true);
    let text = wyckoff(h, &["schedule", "list", "--now", "2026-12-31 16:00"]);
    assert!(
        stdout(&text)
            .contains("2027-01-04 15:05 (past the known trading calendar: a weekday assumed)"),
        "{}",
        stdout(&text)
    );

    // Disabled: due times pass by; "run now" still runs it.
    assert!(
        wyckoff(h, &["schedule", "disable", "close"])
            .status
            .success()
    );
    assert!(pass(h, "2026-12-10 15:10").is_empty());
    let now = wyckoff(h, &["schedule", "run", "close", "--json"]);
    assert!(now.status.success(), "{}", stderr(&now));
    let report: Value = serde_json::from_slice(&now.stdout).unwrap();
    assert_eq!(report["occurrence"], Value::Null);
    assert_eq!(report["status"], "done");
    assert!(
        wyckoff(h, &["schedule", "remove", "close"])
            .status
            .success()
    );
    assert!(listed(h, "2026-12-10 15:10").is_empty());
}

#[test]
fn bad_schedules_are_refused_naming_the_problem_and_nothing_is_stored() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let cases: [(&[&str], &str); 11] = [
        (&["--at", "9:25", "--job", "screen"], "not a time of day"),
        (
            &["--at", "09:25", "--days", "weekend", "--job", "screen"],
            "names no days",
        ),
        (
            &["--cron", "61 * * * *", "--job", "screen"],
            "minute: 61 is outside 0–59",
        ),
        (&["--cron", "0 9 * *", "--job", "sync"], "expected 5 fields"),
        (&["--at", "09:25"], "--job <JOB>"),
        (&["--at", "09:25", "--job", "backtest"], "needs --start"),
        (&["--at", "09:25", "--job", "nope"], "invalid value 'nope'"),
        (
            &["--at", "15:05", "--job", "screen", "--board", "weekend"],
            "screen job: ",
        ),
        (
            &["--at", "15:05", "--job", "screen", "--limit", "5000"],
            "screen job: ",
        ),
        (
            &["--at", "15:05", "--job", "sync", "--board", "main"],
            "--board and --limit are for --job screen",
        ),
        // no model is configured in this data home
        (
            &["--at", "09:25", "--prompt", "/checkup"],
            "a prompt needs a model",
        ),
    ];
    for (args, why) in cases {
        let out = wyckoff_cli(h)
            .args(["schedule", "add", "x"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(why), "{args:?}: {}", stderr(&out));
    }
    assert!(listed(h, "2026-12-04 10:00").is_empty());
    let dup = ["schedule", "add", "x", "--at", "09:25", "--job", "screen"];
    assert!(wyckoff(h, &dup).status.success());
    let again = wyckoff(h, &dup);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("already exists"),
        "{}",
        stderr(&again)
    );
    let missing = wyckoff(h, &["schedule", "run", "nope"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("no schedule named 'nope'"));
    let clock = wyckoff(h, &["daemon", "--once", "--now", "tomorrow"]);
    assert_eq!(clock.status.code(), Some(2));
    assert!(stderr(&clock).contains("YYYY-MM-DD HH:MM"));
}

fn spawn_daemon(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Child {
    let mut cmd = wyckoff_cli(home);
    cmd.arg("daemon").args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_second_daemon_on_one_home_says_so_and_exits_2() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let mut first = spawn_daemon(h, &[], &[]);
    let lock = h.join("run/daemon.lock");
    let started = Instant::now();
    // The first one holds the lock once it exists; give it a moment to take it.
    while !lock.exists() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let second = wyckoff(h, &["daemon", "--once"]);
    let _ = first.kill();
    let _ = first.wait();
    assert_eq!(second.status.code(), Some(2), "{}", stderr(&second));
    assert!(
        stderr(&second).contains("another daemon is running"),
        "{}",
        stderr(&second)
    );
    // With the first gone, a pass runs.
    assert!(wyckoff(h, &["daemon", "--once"]).status.success());
}

/// A prompt schedule whose model never answers: the daemon is killed mid-run; the next
/// pass marks the run interrupted and does not run that due time again.
#[tokio::test(flavor = "multi_thread")]
async fn a_daemon_killed_mid_run_leaves_it_interrupted_and_not_run_twice() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["不会送出"]).gated("never"),
    );
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_path_buf();
    wyckoff_e2e::webdriver::mock_model_settings(&h, &format!("{}/v1", server.url()));
    let env = [("WYCKOFF_KEY_MOCK", "sk-schedule-e2e-123456")];
    let mut add = wyckoff_cli(&h);
    add.args([
        "schedule",
        "add",
        "checkup",
        "--at",
        "15:05",
        "--prompt",
        "/checkup",
        "--now",
        "2026-12-03 16:00",
    ]);
    add.env(env[0].0, env[0].1);
    let added = add.output().unwrap();
    assert!(added.status.success(), "{}", stderr(&added));

    let mut daemon = spawn_daemon(&h, &["--once", "--now", "2026-12-04 15:10"], &env);
    let started = Instant::now();
    while server.requests_to(Route::Openai).is_empty() {
        assert!(started.elapsed() < Duration::from_secs(60), "no model call");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    daemon.kill().unwrap(); // SIGKILL
    daemon.wait().unwrap();

    let h2 = h.clone();
    let runs = tokio::task::spawn_blocking(move || {
        let mut again = wyckoff_cli(&h2);
        again.args(["daemon", "--once", "--json", "--now", "2026-12-04 15:10"]);
        again.env("WYCKOFF_KEY_MOCK", "sk-schedule-e2e-123456");
        again.output().unwrap()
    })
    .await
    .unwrap();
    assert!(runs.status.success(), "{}", stderr(&runs));
    assert_eq!(stdout(&runs).trim(), "", "the due time ran twice");
    assert_eq!(server.requests_to(Route::Openai).len(), 1);
    let h3 = h.clone();
    let list = tokio::task::spawn_blocking(move || listed(&h3, "2026-12-04 15:10"))
        .await
        .unwrap();
    let run = &list[0]["runs"][0];
    assert_eq!(run["status"], "interrupted", "{list:?}");
    assert_eq!(run["occurrence"], "2026-12-04 15:05");
    assert!(run["conversation_id"].is_null() || run["conversation_id"].is_string());
}

/// A data home with a space and a `%` in its path: the unit names it whole, and systemd's
/// own checker reads the unit without a warning (unquoted, the space split the home in two).
#[test]
fn install_writes_a_systemd_user_unit() {
    let parent = tempfile::tempdir().unwrap();
    let home = parent.path().join("my desk 100%");
    std::fs::create_dir_all(&home).unwrap();
    let config = tempfile::tempdir().unwrap();
    let out = wyckoff_cli(&home)
        .args(["daemon", "install"])
        .env("XDG_CONFIG_HOME", config.path())
        .env("USER", "wyckoff-e2e-nobody")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let path = config.path().join("systemd/user/wyckoff-daemon.service");
    let unit = std::fs::read_to_string(&path).unwrap();
    assert!(unit.contains("\" daemon\n"), "{unit}");
    // systemd waits longer than the daemon's default stop grace (60 s) before SIGKILL.
    assert!(unit.contains("TimeoutStopSec=90\n"), "{unit}");
    let escaped = home.display().to_string().replace('%', "%%");
    assert!(
        unit.contains(&format!("Environment=\"WYCKOFF_HOME={escaped}\"\n")),
        "{unit}"
    );
    assert!(stdout(&out).contains("systemctl --user enable --now wyckoff-daemon"));
    // Nobody by that name lingers: the unit would stop at log-out, and it says how not to.
    assert!(
        stdout(&out).contains("loginctl enable-linger wyckoff-e2e-nobody"),
        "{}",
        stdout(&out)
    );
    let verify = std::process::Command::new("systemd-analyze")
        .arg("verify")
        .arg(&path)
        .output()
        .expect("systemd-analyze (scripts/install-system-deps.sh installs systemd)");
    let said = format!("{}{}", stdout(&verify), stderr(&verify));
    assert!(verify.status.success(), "{said}");
    assert!(
        !said.contains("wyckoff-daemon.service"),
        "systemd-analyze warned about the unit: {said}"
    );
}

/// A prompt schedule whose model calls `update_portfolio`: run by the daemon with nobody
/// at the window, the call waits in the inbox (the portfolio untouched); allowed, it runs
/// and the schedule's conversation is told.
#[tokio::test(flavor = "multi_thread")]
async fn a_scheduled_portfolio_change_waits_in_the_inbox_until_allowed() {
    let server = MockServer::start().await.unwrap();
    let set_cash = OpenAiStream::new()
        .role()
        .tool_call(
            0,
            "call_cash",
            "update_portfolio",
            &[serde_json::json!({"action": "set_cash", "free_cash": 7000}).to_string()],
        )
        .finish("tool_calls")
        .usage(1200, 30, 0)
        .done()
        .response();
    server.push(Route::Openai, set_cash);
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["调仓等待批准。"]),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["现金已设为 7000。"]),
    );
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_path_buf();
    wyckoff_e2e::webdriver::mock_model_settings(&h, &format!("{}/v1", server.url()));
    let run = |args: Vec<&str>| {
        let args: Vec<String> = args.into_iter().map(str::to_owned).collect();
        let h = h.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                let mut cmd = wyckoff_cli(&h);
                cmd.args(&args)
                    .env("WYCKOFF_KEY_MOCK", "sk-schedule-e2e-123456");
                cmd.output().unwrap()
            })
            .await
            .unwrap()
        }
    };
    let added = run(vec![
        "schedule",
        "add",
        "cash",
        "--at",
        "09:25",
        "--prompt",
        "把现金设为 7000",
        "--now",
        "2026-12-03 16:00",
    ])
    .await;
    assert!(added.status.success(), "{}", stderr(&added));
    let pass = run(vec![
        "daemon",
        "--once",
        "--json",
        "--now",
        "2026-12-04 09:30",
    ])
    .await;
    assert!(pass.status.success(), "{}", stderr(&pass));
    let report: Value = serde_json::from_str(stdout(&pass).trim()).unwrap();
    assert_eq!(report["status"], "done", "{report}");
    assert_eq!(report["summary"], "调仓等待批准。");
    let conversation = report["conversation_id"].as_str().unwrap().to_owned();

    let cash = || async {
        let url = format!("sqlite://{}?mode=ro", h.join("wyckoff.db").display());
        let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
        let cash: Option<(f64,)> = sqlx::query_as("SELECT free_cash FROM portfolio_cash")
            .fetch_optional(&pool)
            .await
            .unwrap();
        pool.close().await;
        cash.map(|c| c.0)
    };
    assert_eq!(cash().await, None, "changed without approval");
    let listed = run(vec!["approvals", "list", "--json"]).await;
    let inbox: Vec<Value> = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(inbox.len(), 1, "{inbox:?}");
    assert_eq!(inbox[0]["requested_by"], "schedule:cash");
    assert_eq!(inbox[0]["conversation_id"], conversation.as_str());
    assert_eq!(inbox[0]["status"], "pending");
    let id = inbox[0]["id"].as_str().unwrap().to_owned();

    let allowed = run(vec!["approvals", "allow", &id, "--json"]).await;
    assert!(allowed.status.success(), "{}", stderr(&allowed));
    assert_eq!(cash().await, Some(7000.0));
    let answered: Value = serde_json::from_slice(&allowed.stdout).unwrap();
    assert_eq!(answered["answer"], "现金已设为 7000。");
    // The follow-up went to the schedule's conversation.
    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 3);
    assert!(requests[2].raw_body.contains("把现金设为 7000"));
}

#[test]
fn switched_back_on_it_does_not_catch_up_what_fell_due_while_off() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let at = |now: &str, args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--now", now]);
        let out = wyckoff(h, &all);
        assert!(out.status.success(), "{}", stderr(&out));
    };
    at(
        "2026-12-01 09:00",
        &[
            "schedule", "add", "close", "--at", "15:05", "--job", "screen",
        ],
    );
    at("2026-12-01 10:00", &["schedule", "disable", "close"]);
    // Off over Wednesday's and Thursday's close; on again Thursday evening.
    at("2026-12-03 16:00", &["schedule", "enable", "close"]);
    assert!(
        pass(h, "2026-12-03 16:00").is_empty(),
        "caught up an occurrence from while it was off"
    );
    let friday = pass(h, "2026-12-04 15:10");
    assert_eq!(friday.len(), 1, "{friday:?}");
    assert_eq!(friday[0]["occurrence"], "2026-12-04 15:05");
    assert_eq!(friday[0]["catch_up"], false);
}

/// A run that fails (the vendor refuses the key) records why; that due time is not run
/// again, and the next one runs as usual.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_run_records_why_and_the_next_due_time_still_runs() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        Response::error(
            401,
            openai_error("Incorrect API key provided", "invalid_request_error", None),
        ),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["收盘检查完成。"]),
    );
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    add_prompt_schedule(
        h,
        &server.url(),
        "close",
        &["--at", "15:05"],
        "收盘后看一眼大盘",
    )
    .await;

    let friday = with_key(
        h,
        &["daemon", "--once", "--json", "--now", "2026-12-04 15:10"],
    )
    .await;
    // A failed run makes the pass exit 1, and it says which and why.
    assert_eq!(friday.status.code(), Some(1), "{}", stderr(&friday));
    let report: Value = serde_json::from_str(stdout(&friday).trim()).unwrap();
    assert_eq!(report["status"], "failed", "{report}");
    assert_eq!(report["occurrence"], "2026-12-04 15:05");
    let why = report["error"].as_str().unwrap();
    assert!(why.contains("401"), "{why}");

    // The run list keeps it: failed, with the reason.
    let text = with_key(h, &["schedule", "list", "--now", "2026-12-04 15:20"]).await;
    assert!(text.status.success(), "{}", stderr(&text));
    let line = stdout(&text)
        .lines()
        .find(|l| l.contains("2026-12-04 15:05"))
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("{}", stdout(&text)));
    assert!(line.contains("failed") && line.contains("401"), "{line}");
    let list = listed(h, "2026-12-04 15:20");
    let runs = list[0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["status"], "failed");
    assert_eq!(runs[0]["error"].as_str(), Some(why));
    assert!(runs[0]["finished_at"].is_string(), "{runs:?}");
    // Still enabled, its next time is Monday's close.
    assert_eq!(list[0]["enabled"], true);
    assert_eq!(list[0]["next_due"], "2026-12-07 15:05");

    // The failed due time is not tried again in a later pass of the same day …
    let again = with_key(
        h,
        &["daemon", "--once", "--json", "--now", "2026-12-04 15:20"],
    )
    .await;
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stdout(&again).trim(), "");
    assert_eq!(server.requests_to(Route::Openai).len(), 1);
    // … and Monday's runs, and succeeds.
    let monday = with_key(
        h,
        &["daemon", "--once", "--json", "--now", "2026-12-07 15:10"],
    )
    .await;
    assert!(monday.status.success(), "{}", stdout(&monday));
    let report: Value = serde_json::from_str(stdout(&monday).trim()).unwrap();
    assert_eq!(report["occurrence"], "2026-12-07 15:05");
    assert_eq!(report["status"], "done", "{report}");
    assert_eq!(report["summary"], "收盘检查完成。");
    assert_eq!(server.requests_to(Route::Openai).len(), 2);
    let runs = listed(h, "2026-12-07 15:20")[0]["runs"].clone();
    let statuses: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["done", "failed"], "{runs}");
}

/// Lock files of live-process leases `pid` left in the data home's `run/`.
fn leases_of(home: &Path, pid: u32) -> Vec<String> {
    std::fs::read_dir(home.join("run"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("{pid}-")))
        .collect()
}

/// `wyckoff daemon --json ARGS` (its own clock) over a schedule due every minute, whose
/// model call the mock holds; SIGTERM once the call is made, `then` run after it. The
/// daemon's exit code, its run reports and its pid.
async fn sigterm_mid_run(
    server: &MockServer,
    home: &Path,
    args: &[&str],
    then: impl FnOnce(),
) -> (Option<i32>, Vec<Value>, u32) {
    add_prompt_schedule(
        home,
        &server.url(),
        "minutely",
        &["--cron", "* * * * *"],
        "收盘后看一眼大盘",
    )
    .await;
    let mut all = vec!["--json"];
    all.extend(args);
    let mut daemon = spawn_daemon(home, &all, &[MOCK_KEY]);
    let pid = daemon.id();
    let started = Instant::now();
    while server.requests_to(Route::Openai).is_empty() {
        assert!(started.elapsed() < Duration::from_secs(60), "no model call");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // What `systemctl stop` sends.
    let term = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    then();
    let stopping = Instant::now();
    let status = loop {
        if let Some(status) = daemon.try_wait().unwrap() {
            break status;
        }
        assert!(
            stopping.elapsed() < Duration::from_secs(45),
            "the daemon did not stop on SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let mut out = String::new();
    std::io::Read::read_to_string(&mut daemon.stdout.take().unwrap(), &mut out).unwrap();
    let reports = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (status.code(), reports, pid)
}

/// `systemctl stop` sends SIGTERM: the run in flight finishes and is recorded, nothing
/// new starts, the lease goes, exit 0.
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_lets_the_run_in_flight_finish_and_exits_0() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["大盘已看过。"]).gated("hold"),
    );
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let (code, reports, pid) = sigterm_mid_run(&server, h, &[], || {
        std::thread::sleep(Duration::from_millis(500));
        server.open_gate("hold");
    })
    .await;
    assert_eq!(code, Some(0), "{reports:?}");
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0]["status"], "done", "{reports:?}");
    assert_eq!(reports[0]["summary"], "大盘已看过。");
    assert_eq!(server.requests_to(Route::Openai).len(), 1);
    assert!(leases_of(h, pid).is_empty(), "{:?}", leases_of(h, pid));
    let list = listed(h, "2026-12-04 15:10");
    let runs = list[0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["status"], "done");
    assert!(runs[0]["finished_at"].is_string());
}

/// A run still going when the grace runs out is cancelled and recorded interrupted with
/// why; its due time is not run again, the next one runs.
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_past_the_grace_cancels_the_run_and_records_why() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["不会送出"]).gated("never"),
    );
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let stopping = Instant::now();
    let (code, reports, pid) = sigterm_mid_run(&server, h, &["--stop-grace", "1"], || {}).await;
    assert!(
        stopping.elapsed() < Duration::from_secs(40),
        "{:?}",
        stopping.elapsed()
    );
    assert_eq!(code, Some(0), "{reports:?}");
    assert_eq!(reports.len(), 1, "{reports:?}");
    let report = &reports[0];
    assert_eq!(report["status"], "interrupted", "{report}");
    let why = report["error"].as_str().unwrap();
    assert!(why.contains("asked to stop (SIGTERM"), "{why}");
    let occurrence = report["occurrence"].as_str().unwrap().to_owned();
    assert!(leases_of(h, pid).is_empty(), "{:?}", leases_of(h, pid));

    // A new pass at that due time runs nothing and keeps the reason as recorded …
    let again = with_key(h, &["daemon", "--once", "--json", "--now", &occurrence]).await;
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stdout(&again).trim(), "", "the due time ran twice");
    assert_eq!(server.requests_to(Route::Openai).len(), 1);
    let list = listed(h, &occurrence);
    let run = &list[0]["runs"][0];
    assert_eq!(run["status"], "interrupted");
    assert_eq!(run["error"].as_str(), Some(why));
    assert!(run["finished_at"].is_string());
    // … and the next due time runs.
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["大盘已看过。"]),
    );
    let next = with_key(
        h,
        &["daemon", "--once", "--json", "--now", "2027-01-04 10:00"],
    )
    .await;
    assert!(next.status.success(), "{}", stderr(&next));
    let report: Value = serde_json::from_str(stdout(&next).trim()).unwrap();
    assert_eq!(report["occurrence"], "2027-01-04 10:00");
    assert_eq!(report["status"], "done", "{report}");
}

async fn inbox_of(home: &Path) -> Vec<Value> {
    let out = with_key(home, &["approvals", "list", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The audit log's entries for a call (the model's call id when queued, the request's
/// after): (decision, decided_by).
async fn decisions_on(home: &Path, model_call: &str, request: &str) -> Vec<(Value, Value)> {
    let out = with_key(home, &["approvals", "log", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice::<Vec<Value>>(&out.stdout)
        .unwrap()
        .into_iter()
        .filter(|e| e["call_id"] == model_call || e["call_id"] == request)
        .map(|e| (e["decision"].clone(), e["decided_by"].clone()))
        .collect()
}

fn rfc3339(v: &Value) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap())
        .unwrap()
        .to_utc()
}

/// A scheduled `update_portfolio` the user denies: the portfolio stays, the schedule's
/// conversation is told why, the log keeps queue and denial. The next day's one nobody
/// answers: a daemon pass past its 24 h expiry refuses it and the conversation is told;
/// answering it later is refused.
#[tokio::test(flavor = "multi_thread")]
async fn a_scheduled_call_denied_or_left_to_expire_is_refused_told_and_audited() {
    let server = MockServer::start().await.unwrap();
    server.push(Route::Openai, set_cash_call("call_cash_fri", 7000));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["调仓等待批准。"]),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["好的，没有调仓。"]),
    );
    server.push(Route::Openai, set_cash_call("call_cash_mon", 8000));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["调仓等待批准。"]),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["那笔调仓过期了。"]),
    );
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    add_prompt_schedule(
        h,
        &server.url(),
        "cash",
        &["--at", "09:25"],
        "把现金设为 7000",
    )
    .await;
    let free_cash = || async {
        let url = format!("sqlite://{}?mode=ro", h.join("wyckoff.db").display());
        let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
        let cash: Option<(f64,)> = sqlx::query_as("SELECT free_cash FROM portfolio_cash")
            .fetch_optional(&pool)
            .await
            .unwrap();
        pool.close().await;
        cash.map(|c| c.0)
    };

    // Friday: queued by the schedule, denied from the CLI.
    let friday = with_key(
        h,
        &["daemon", "--once", "--json", "--now", "2026-12-04 09:30"],
    )
    .await;
    assert!(friday.status.success(), "{}", stderr(&friday));
    let report: Value = serde_json::from_str(stdout(&friday).trim()).unwrap();
    let conversation = report["conversation_id"].as_str().unwrap().to_owned();
    let inbox = inbox_of(h).await;
    assert_eq!(inbox.len(), 1, "{inbox:?}");
    let fri = inbox[0].clone();
    assert_eq!(fri["requested_by"], "schedule:cash");
    assert_eq!(fri["conversation_id"], conversation.as_str());
    assert_eq!(fri["args"]["free_cash"], 7000);
    assert_eq!(
        rfc3339(&fri["expires_at"]) - rfc3339(&fri["created_at"]),
        chrono::TimeDelta::hours(24)
    );
    let id = fri["id"].as_str().unwrap().to_owned();
    let denied = with_key(
        h,
        &["approvals", "deny", &id, "--reason", "先不动", "--json"],
    )
    .await;
    assert!(denied.status.success(), "{}", stderr(&denied));
    assert_eq!(free_cash().await, None, "denied, yet changed");
    // The refusal went to the schedule's conversation as a follow-up turn.
    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 3);
    assert!(requests[2].raw_body.contains("把现金设为 7000"));
    let notice = last_message(&server, 2, "user");
    assert!(notice.contains("denied by the user"), "{notice}");
    assert!(notice.contains("<reason>先不动</reason>"), "{notice}");
    let fri_log = decisions_on(h, "call_cash_fri", &id).await;
    assert_eq!(fri_log.len(), 2, "{fri_log:?}");
    assert_eq!(fri_log[0].0, "queued");
    assert_eq!(fri_log[1], (json!("denied"), json!({"type": "cli"})));

    // Monday: queued again; nobody answers. The schedule is switched off so that the
    // pass past the expiry only expires (its clock is a day after the request's).
    let monday = with_key(
        h,
        &["daemon", "--once", "--json", "--now", "2026-12-07 09:30"],
    )
    .await;
    assert!(monday.status.success(), "{}", stderr(&monday));
    let mon = inbox_of(h)
        .await
        .into_iter()
        .find(|r| r["status"] == "pending")
        .unwrap();
    assert_eq!(mon["requested_by"], "schedule:cash");
    assert_eq!(mon["args"]["free_cash"], 8000);
    let mon_id = mon["id"].as_str().unwrap().to_owned();
    assert!(
        with_key(h, &["schedule", "disable", "cash"])
            .await
            .status
            .success()
    );
    let due = wyckoff_time::to_beijing(rfc3339(&mon["expires_at"]));
    let before = (due - chrono::TimeDelta::minutes(1))
        .format("%Y-%m-%d %H:%M")
        .to_string();
    let after = (due + chrono::TimeDelta::minutes(1))
        .format("%Y-%m-%d %H:%M")
        .to_string();
    let early = with_key(h, &["daemon", "--once", "--now", &before]).await;
    assert!(early.status.success(), "{}", stderr(&early));
    assert_eq!(server.requests_to(Route::Openai).len(), 5, "expired early");
    let late = with_key(h, &["daemon", "--once", "--now", &after]).await;
    assert!(late.status.success(), "{}", stderr(&late));
    // The conversation was told, in a turn of its own, and the model answered.
    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 6);
    let notice = last_message(&server, 5, "user");
    assert!(
        notice.contains("expired before anyone answered"),
        "{notice}"
    );
    let expired = inbox_of(h)
        .await
        .into_iter()
        .find(|r| r["id"] == mon_id.as_str())
        .unwrap();
    assert_eq!(expired["status"], "expired");
    assert_eq!(expired["decided_by"], json!({"type": "expiry"}));
    // An answer after it is refused, and nothing runs.
    let allow = with_key(h, &["approvals", "allow", &mon_id, "--now", &after]).await;
    assert_eq!(allow.status.code(), Some(2), "{}", stderr(&allow));
    assert!(stderr(&allow).contains("expired"), "{}", stderr(&allow));
    assert_eq!(free_cash().await, None);
    assert_eq!(server.requests_to(Route::Openai).len(), 6);
    let mon_log = decisions_on(h, "call_cash_mon", &mon_id).await;
    let all = with_key(h, &["approvals", "log", "--json"]).await;
    assert_eq!(mon_log.len(), 2, "{mon_log:?} {}", stdout(&all));
    assert_eq!(mon_log[0].0, "queued");
    assert_eq!(mon_log[1], (json!("expired"), json!({"type": "expiry"})));
}

/// A screen schedule carries `wyckoff screen`'s board and limit: stored, listed, and the
/// scheduled screen scans what they choose.
#[test]
fn a_screen_schedule_carries_its_board_and_limit() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let add = wyckoff(
        h,
        &[
            "schedule",
            "add",
            "main2",
            "--at",
            "15:05",
            "--job",
            "screen",
            "--board",
            "main",
            "--limit",
            "2",
            "--now",
            "2026-12-03 16:00",
        ],
    );
    assert!(add.status.success(), "{}", stderr(&add));
    let list = listed(h, "2026-12-03 16:00");
    assert_eq!(
        list[0]["job"]["request"],
        json!({"type": "screen", "as_of": null, "board": "main", "limit": 2})
    );
    let text = wyckoff(h, &["schedule", "list", "--now", "2026-12-03 16:00"]);
    assert!(
        stdout(&text).contains("screen --board main --limit 2"),
        "{}",
        stdout(&text)
    );

    let runs = pass(h, "2026-12-04 15:10");
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["status"], "done", "{runs:?}");
    // The task ran the screen with them, as `wyckoff screen --board main --limit 2` does.
    let task_id = runs[0]["task_id"].as_str().unwrap().to_owned();
    let result: Value = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let url = format!("sqlite://{}?mode=ro", h.join("wyckoff.db").display());
        let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
        let (json,): (String,) =
            sqlx::query_as("SELECT result_json FROM agent_background_task WHERE task_id = ?")
                .bind(&task_id)
                .fetch_one(&pool)
                .await
                .unwrap();
        pool.close().await;
        serde_json::from_str(&json).unwrap()
    });
    let by_hand = wyckoff(h, &["screen", "--board", "main", "--limit", "2", "--json"]);
    assert!(by_hand.status.success(), "{}", stderr(&by_hand));
    let by_hand: Value = serde_json::from_slice(&by_hand.stdout).unwrap();
    assert_eq!(result["args"]["board"], "main");
    assert_eq!(result["args"]["limit"], 2);
    assert_eq!(result["layers"][0]["input"], by_hand["layers"][0]["input"]);
    assert_eq!(result["layers"][0]["input"], 2);
}

/// A prompt that names an unknown skill would fail at every due time: it is refused when
/// added, naming the skill, and nothing is stored.
#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_naming_an_unknown_skill_is_refused_when_added() {
    let server = MockServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    wyckoff_e2e::webdriver::mock_model_settings(h, &format!("{}/v1", server.url()));
    let out = with_key(
        h,
        &[
            "schedule",
            "add",
            "x",
            "--at",
            "09:25",
            "--prompt",
            "/nosuch 000001",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("nosuch"), "{}", stderr(&out));
    assert!(listed(h, "2026-12-04 10:00").is_empty());
    // A known skill is taken.
    let ok = with_key(
        h,
        &[
            "schedule", "add", "x", "--at", "09:25", "--prompt", "/checkup",
        ],
    )
    .await;
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(server.requests_to(Route::Openai).is_empty());
}

/// New Year's Day is closed every year: past the bundled calendar a trading-days screen
/// does not run on it; the Monday after runs, and the run says its day was assumed. A
/// clock outside the years a clock may take is refused before anything is stored.
#[test]
fn past_the_calendar_new_years_day_is_closed_and_an_assumed_day_is_said() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    add_close_screen(h, "close", "2026-12-31 16:00");
    assert!(pass(h, "2027-01-01 15:10").is_empty());
    let runs = pass(h, "2027-01-04 15:10");
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["occurrence"], "2027-01-04 15:05");
    assert_eq!(runs[0]["assumed_trading_day"], true, "{runs:?}");
    let list = listed(h, "2027-01-04 15:10");
    assert_eq!(list[0]["runs"][0]["assumed_trading_day"], true);
    let text = wyckoff(h, &["schedule", "list", "--now", "2027-01-04 15:10"]);
    assert!(
        stdout(&text)
            .contains("2027-01-04 15:05 (past the known trading calendar: a weekday assumed)"),
        "{}",
        stdout(&text)
    );

    for clock in ["+262142-12-31 23:59", "3000-01-01 00:00"] {
        let out = wyckoff(
            h,
            &[
                "schedule", "add", "far", "--at", "15:05", "--job", "screen", "--now", clock,
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{clock}: {}", stderr(&out));
        assert!(stderr(&out).contains("years 1990–2999"), "{}", stderr(&out));
    }
    assert_eq!(listed(h, "2027-01-04 15:10").len(), 1);
}

/// One damaged schedule row stops nothing: the others run, `schedule list` lists them and
/// names the damaged one with why (on stderr, the JSON stays a list).
#[tokio::test(flavor = "multi_thread")]
async fn a_damaged_schedule_row_is_skipped_and_named() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    for name in ["broken", "close"] {
        add_close_screen(h, name, "2026-12-03 16:00");
    }
    let opts = sqlx::sqlite::SqliteConnectOptions::new().filename(h.join("wyckoff.db"));
    let pool = sqlx::SqlitePool::connect_with(opts).await.unwrap();
    sqlx::query("UPDATE schedule SET job_json = '{\"type\":\"nonsense\"}' WHERE name = 'broken'")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let runs = pass(h, "2026-12-04 15:10");
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["schedule"], "close");
    let out = wyckoff(
        h,
        &["schedule", "list", "--json", "--now", "2026-12-04 15:10"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let list: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["name"], "close");
    assert!(
        stderr(&out).contains("schedule 'broken' is damaged") && stderr(&out).contains("job:"),
        "{}",
        stderr(&out)
    );
    assert!(
        wyckoff(h, &["schedule", "remove", "broken"])
            .status
            .success()
    );
}

/// CPU seconds (user + system) the process `pid` has used so far.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // USER_HZ is 100 on Linux.
    ticks as f64 / 100.0
}

/// One long-lived daemon (not `--once`), a prompt due every minute. Run 1's turn starts a
/// background report that outlives the run's wait (`--task-wait 2`): it is recorded timed
/// out with the task it cancelled. Run 2, in the same conversation, starts a backtest that
/// finishes within the wait: its completion is answered, run 1's cancelled task is told,
/// the run ends done, and the daemon then idles (it used to spin one core at 100 % on the
/// completion it would not answer, and never finish run 2).
#[tokio::test(flavor = "multi_thread")]
async fn a_run_whose_task_outlives_its_wait_is_timed_out_and_the_daemon_goes_on_idle() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        OpenAiStream::tool_call_response(
            "call_report",
            "generate_ai_report",
            &json!({"stock_codes": ["000001"]}),
        ),
    );
    // The report's own model call never answers: its task outlives the wait.
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["不会送出"])
            .when_body_contains("三阵营研报")
            .gated("never"),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["研报已提交。"]),
    );
    // Run 2 starts a backtest that finishes within the wait: its completion must be
    // answered (a follow-up turn), which a conversation still held from run 1 never was.
    server.push(
        Route::Openai,
        OpenAiStream::tool_call_response(
            "call_bt",
            "run_backtest",
            &json!({"start": "2019-12-01", "end": "2020-03-31", "hold_days": 20, "top_n": 4, "stop_loss_pct": -15}),
        ),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["回测已提交。"]),
    );
    for _ in 0..4 {
        server.push(Route::Openai, OpenAiStream::text_response(&["回测完成。"]));
    }
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    add_prompt_schedule(
        h,
        &server.url(),
        "minutely",
        &["--cron", "* * * * *"],
        "给 000001 生成研报",
    )
    .await;
    let mut daemon = spawn_daemon(h, &["--json", "--task-wait", "2"], &[MOCK_KEY]);
    let pid = daemon.id();
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    let stdout = daemon.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok) {
            if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                return;
            }
        }
    });
    let next_report = |what: &str| {
        tokio::task::block_in_place(|| rx.recv_timeout(Duration::from_secs(150)))
            .unwrap_or_else(|_| panic!("no report of {what}"))
    };
    let first = next_report("run 1");
    assert_eq!(first["status"], "timed_out", "{first}");
    let why = first["error"].as_str().unwrap();
    assert!(
        why.contains("after 2 s") && why.contains("generate_ai_report"),
        "{why}"
    );
    assert_eq!(first["summary"], "研报已提交。");
    let conversation = first["conversation_id"].as_str().unwrap().to_owned();

    let second = next_report("run 2");
    assert_eq!(second["status"], "done", "{second}");
    assert_eq!(second["summary"], "回测完成。", "{second}");
    assert_eq!(second["conversation_id"], conversation.as_str());
    // Run 2 told the model of run 1's cancelled report.
    let told = server.requests_to(Route::Openai).into_iter().any(|r| {
        r.raw_body.contains("generate_ai_report</task-id>") && r.raw_body.contains("cancelled")
    });
    assert!(told, "run 1's cancelled task was never told");

    // Idle now: over three seconds it uses a fraction of a core (a spin uses all of one).
    let before = cpu_seconds(pid);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let used = cpu_seconds(pid) - before;
    assert!(
        used < 1.5,
        "the daemon used {used:.2} s of CPU in 3 s while idle"
    );

    let term = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = daemon.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "the daemon did not stop"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // A run that timed out is in its record, not in the daemon's exit code.
    assert_eq!(status.code(), Some(0));
    let list = listed(h, "2026-12-04 15:10");
    let runs = list[0]["runs"].as_array().unwrap();
    assert!(runs.iter().any(|r| r["status"] == "timed_out"), "{runs:?}");
}
