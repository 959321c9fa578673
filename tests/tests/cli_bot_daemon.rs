//! End-to-end: `wyckoff daemon` serves a chat bot added while it runs, through the real
//! binary against a local fake Telegram Bot API and the mock model vendor. The daemon
//! starts with no bot; `wyckoff bot add` (its token in the environment) is enough: a
//! stranger's message gets a pairing code and, once paired, an answer, with no restart.
//! The bot's lease names the daemon while it serves; SIGTERM stops it cleanly (exit 0)
//! and gives the lease back.
//! Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/bots.rs"]
mod bots;

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use bots::{FakeTelegram, KEY, code_in};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

const TOKEN: &str = "987654321:AAE-bot-e2e-SECRET-token";
const ENV: [(&str, &str); 2] = [KEY, ("WYCKOFF_BOT_TOKEN_TG", TOKEN)];

/// The daemon, killed if the test ends before it stopped.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The process lease files of `pid` in the data home's `run/`: the desk is open.
fn leases_of(home: &Path, pid: u32) -> usize {
    std::fs::read_dir(home.join("run"))
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with(&format!("{pid}-"))
                })
                .count()
        })
        .unwrap_or(0)
}

/// Who holds the bot's lease (`front`), if anyone.
async fn serving(home: &Path, bot: &str) -> Option<String> {
    let opts = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(home.join("wyckoff.db"))
        .busy_timeout(Duration::from_secs(5));
    let pool = sqlx::SqlitePool::connect_with(opts).await.unwrap();
    let front: Option<(String,)> = sqlx::query_as("SELECT front FROM bot_serving WHERE bot = ?")
        .bind(bot)
        .fetch_optional(&pool)
        .await
        .unwrap();
    pool.close().await;
    front.map(|(f,)| f)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_daemon_serves_a_bot_added_while_it_runs() {
    let tg = FakeTelegram::start(TOKEN).await;
    let server = MockServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    wyckoff_e2e::webdriver::mock_model_settings(h, &format!("{}/v1", server.url()));
    // The data home is set up (its database and bundled bars) before the daemon starts,
    // so `bot add` below never races the daemon's first start for it.
    bots::ok(h, &ENV, &["bot", "list"]).await;

    let err_path = h.join("daemon-stderr.txt");
    let child = wyckoff_e2e::wyckoff_cli(h)
        .arg("daemon")
        .envs(ENV)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut daemon = Daemon(child);
    let started = Instant::now();
    while leases_of(h, pid) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the daemon never opened its desk"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Running with no bot: nothing is polled.
    assert!(tg.state.lock().unwrap().calls.is_empty());

    // A bot added now is served by the running daemon.
    bots::ok(
        h,
        &ENV,
        &[
            "bot",
            "add",
            "tg",
            "--kind",
            "telegram",
            "--api-url",
            &tg.url,
        ],
    )
    .await;
    tg.message(5, 5, "private", "你好");
    let looking = Instant::now();
    while tg.sent_to(5).is_empty() {
        if let Some(status) = daemon.0.try_wait().unwrap() {
            panic!(
                "the daemon exited ({status}): {}",
                std::fs::read_to_string(&err_path).unwrap()
            );
        }
        assert!(
            looking.elapsed() < Duration::from_secs(60),
            "no pairing code from the daemon"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let sent = tg.sent_to(5);
    let code = code_in(&sent[0]);
    assert!(server.requests_to(Route::Openai).is_empty());
    assert_eq!(serving(h, "tg").await.as_deref(), Some("daemon"));

    // Paired, the sender is answered through the pipeline by the same daemon.
    bots::ok(h, &ENV, &["bot", "pair", &code]).await;
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["在的，守护进程在线。"]),
    );
    tg.message(5, 5, "private", "在吗");
    let sent = tg.wait_sent(5, 2).await;
    assert!(sent[1].contains("在的，守护进程在线。"), "{sent:?}");
    assert_eq!(server.requests_to(Route::Openai).len(), 1);

    // What `systemctl stop` sends: the daemon stops cleanly and gives the lease back.
    let term = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let stopping = Instant::now();
    let status = loop {
        if let Some(status) = daemon.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            stopping.elapsed() < Duration::from_secs(45),
            "the daemon did not stop on SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let err = std::fs::read_to_string(&err_path).unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert_eq!(serving(h, "tg").await, None);
    assert_eq!(tg.sent_to(5).len(), 2, "{:?}", tg.sent_to(5));
}
