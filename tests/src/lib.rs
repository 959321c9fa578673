//! Shared helpers for the end-to-end tests in `tests/`.
#![allow(clippy::expect_used)] // test support code: failing loudly is the point

use std::path::PathBuf;
use std::time::{Duration, Instant};

pub mod approvals;
pub mod hook;
pub mod webdriver;

/// Cargo's target directory (honours `CARGO_TARGET_DIR`).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .expect("workspace root")
                .join("target")
        })
}

/// A debug binary of this workspace, which must have been built already
/// (`scripts/test` builds every binary before the tests run).
pub fn binary(name: &str) -> PathBuf {
    let bin = target_dir()
        .join("debug")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is missing: build it first (cargo build --workspace --bins)",
        bin.display()
    );
    bin
}

/// The `wyckoff` CLI over a temporary `WYCKOFF_HOME`, offline, with no proxy and no
/// stdin: the environment every CLI end-to-end test starts from.
pub fn wyckoff_cli(home: &std::path::Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(binary("wyckoff"));
    cmd.env("WYCKOFF_HOME", home)
        .env("WYCKOFF_OFFLINE", "1")
        .env_remove("HTTP_PROXY")
        .env_remove("HTTPS_PROXY")
        .env_remove("http_proxy")
        .env_remove("https_proxy")
        .stdin(std::process::Stdio::null());
    cmd
}

/// Runs `statement` (one or more SQL statements) on the data home's `wyckoff.db`: what a
/// test sets up that no command writes.
pub fn run_sql(home: &std::path::Path, statement: &str) {
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    rt.block_on(async {
        let opts = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(home.join("wyckoff.db"))
            .busy_timeout(std::time::Duration::from_secs(5));
        let pool = sqlx::SqlitePool::connect_with(opts)
            .await
            .expect("the data home's database");
        sqlx::raw_sql(sqlx::AssertSqlSafe(statement.to_owned()))
            .execute(&pool)
            .await
            .expect("the statement runs");
        pool.close().await;
    });
}

/// A command's exit status and both outputs, for an assertion message.
pub fn show(out: &std::process::Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A test's own `wyckoff` data home: every command runs as [`wyckoff_cli`] does, with no
/// data sources or vendor keys taken from the environment.
pub struct CliHome(tempfile::TempDir);

impl Default for CliHome {
    fn default() -> Self {
        Self::new()
    }
}

impl CliHome {
    pub fn new() -> Self {
        CliHome(tempfile::tempdir().expect("a temporary data home"))
    }

    pub fn path(&self) -> &std::path::Path {
        self.0.path()
    }

    /// The command, not yet run (to add environment or stdin).
    pub fn command(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = wyckoff_cli(self.0.path());
        cmd.args(args)
            .env_remove("WYCKOFF_DATA_SOURCES")
            .env_remove("TICKFLOW_API_KEY")
            .env_remove("TUSHARE_TOKEN");
        cmd
    }

    pub fn run(&self, args: &[&str]) -> std::process::Output {
        self.command(args).output().expect("run wyckoff")
    }

    /// Stdout as JSON of a command that must exit with `code`.
    pub fn json_exit(&self, args: &[&str], code: i32) -> serde_json::Value {
        let out = self.run(args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", show(&out));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&out)))
    }

    /// Stdout as JSON of a command that must succeed.
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        self.json_exit(args, 0)
    }

    /// Stdout of a command that must succeed.
    pub fn text(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", show(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// TCP ports that were free a moment ago (held together while picking, so they differ).
/// Each WebDriver test starts its own tauri-driver on them, so concurrent runs on one
/// machine never reach each other's app.
pub fn free_ports<const N: usize>() -> [u16; N] {
    let listeners: Vec<std::net::TcpListener> = (0..N)
        .map(|_| std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind an ephemeral port"))
        .collect();
    std::array::from_fn(|i| listeners[i].local_addr().expect("bound address").port())
}

/// Waits until no process runs `app` (then, after `timeout`, stops the leftovers).
/// The app is single-instance on the session bus: a copy still shutting down from a
/// previous test would make the next launch hand over to it and exit.
pub fn wait_for_app_exit(app: &std::path::Path, timeout: std::time::Duration) {
    let running = || -> Vec<i32> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
            .filter(|pid| {
                std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| exe == app)
            })
            .collect()
    };
    let deadline = std::time::Instant::now() + timeout;
    while std::time::Instant::now() < deadline {
        if running().is_empty() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    for pid in running() {
        // Best effort: it is this test run's own build of the app.
        let _ = std::process::Command::new("kill")
            .arg(pid.to_string())
            .status();
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
}

/// Live (not zombie) processes whose command line holds `marker`: what a test's command
/// left running (a killed orphan may stay a zombie until PID 1 reaps it).
pub fn live_processes_with(marker: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            !zombie && String::from_utf8_lossy(&cmdline).contains(marker)
        })
        .collect()
}

/// A `wyckoff-mock-vendor` process serving a script from `tests/scripts/`, recording the
/// requests it gets to a file outside any data home (they carry the key in a header).
/// Killed on drop.
pub struct VendorProcess {
    child: std::process::Child,
    url: String,
    record: PathBuf,
    _dir: tempfile::TempDir,
}

impl VendorProcess {
    pub fn start(script: &str) -> VendorProcess {
        use std::io::BufRead;
        let dir = tempfile::tempdir().expect("temp dir");
        let record = dir.path().join("requests.jsonl");
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("scripts")
            .join(script);
        let mut child = std::process::Command::new(binary("wyckoff-mock-vendor"))
            .arg("--script")
            .arg(script)
            .arg("--record")
            .arg(&record)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .expect("start wyckoff-mock-vendor");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("read the listening line");
        let url = line
            .trim()
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("unexpected mock-vendor output {line:?}"))
            .to_owned();
        VendorProcess {
            child,
            url,
            record,
            _dir: dir,
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The OpenAI-compatible base URL (`…/v1`).
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.url)
    }

    /// Every request it received (vendor routes and `/__web/` pages), in order.
    pub fn requests(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("recorded JSON"))
            .collect()
    }

    /// Requests to the chat-completions route, in order.
    pub fn chat_requests(&self) -> Vec<serde_json::Value> {
        self.requests()
            .into_iter()
            .filter(|r| {
                r["path"]
                    .as_str()
                    .is_some_and(|p| p.ends_with("/chat/completions"))
            })
            .collect()
    }
}

impl Drop for VendorProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `read` every `every` until it gives at least `n` items, and returns them; after
/// `within` panics naming `what`, how many came and the last reading. The fake servers'
/// "wait until the bot has sent n messages" helpers.
pub async fn wait_for_count<T: std::fmt::Debug>(
    what: &str,
    n: usize,
    within: Duration,
    every: Duration,
    mut read: impl FnMut() -> Vec<T>,
) -> Vec<T> {
    let deadline = Instant::now() + within;
    loop {
        let got = read();
        if got.len() >= n {
            return got;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: {} of {n}: {got:?}",
            got.len()
        );
        tokio::time::sleep(every).await;
    }
}
