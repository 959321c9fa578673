//! `exec_command`: one shell command after the user approved it (REFERENCE §2.6, §13;
//! DESIGN: through the shell, whole process group killed on timeout or cancel).
//!
//! The command runs as `sh -c COMMAND` in its own process group, in the workspace folder.
//! On timeout or cancel the whole group is killed, so a `sleep` in a subshell does not
//! outlive the call. Output is capped (head and tail kept, the cut said). Commands that
//! detach (screen -dm, nohup, setsid, a trailing `&`, systemd-run, disown, daemons) are
//! flagged with seed §13's advice: the exit code says nothing about the detached work.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;
use wyckoff_agent::ToolError;
use wyckoff_protocol::ApprovalPreview;

pub const NAME: &str = "exec_command";
pub const DISPLAY_NAME: &str = "执行命令";
pub const DESCRIPTION: &str = "在本机工作目录中通过 shell 执行一条命令（需要用户批准）。timeout 秒数默认 30，范围 1–120，超时会结束整个进程组。输出过长时保留开头和结尾。不要用它启动会脱离的长任务（screen -dm、nohup、setsid、末尾 &）：退出码无法反映后台任务的状态；长任务请用后台工具，必须这样做时把输出重定向到文件，之后再读取。";

pub const DEFAULT_TIMEOUT_SECS: u64 = 30;
pub const MAX_TIMEOUT_SECS: u64 = 120;
const STDOUT_CAP: usize = 16 * 1024;
const STDERR_CAP: usize = 4 * 1024;
/// After the shell exits, how long to wait for pipes held open by leftover children.
const DRAIN_GRACE: Duration = Duration::from_millis(500);
/// How much longer than its `timeout` the registry lets a call run: enough for the
/// command's own timeout to kill the group, drain the pipes and report first.
pub const REPORT_GRACE: Duration = Duration::from_secs(5);

const DETACH_ADVICE: &str = "该命令会脱离当前进程运行：退出码和输出不代表后台任务已完成。优先使用后台工具；如必须这样做，把输出重定向到文件（如 bash -c './job.sh > /tmp/out.log 2>&1'），之后用 screen -ls / ps 检查状态并读取日志。";

pub fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "要执行的 shell 命令"},
            "timeout": {"type": "integer", "description": "超时秒数，默认 30，范围 1–120"}
        },
        "required": ["command"]
    })
}

/// `timeout` argument → seconds: absent is the default, anything else clamped to 1–120.
pub fn timeout_secs(args: &Value) -> Result<u64, ToolError> {
    match args.get("timeout") {
        None | Some(Value::Null) => Ok(DEFAULT_TIMEOUT_SECS),
        Some(v) => {
            let secs = v.as_f64().filter(|s| s.is_finite()).ok_or_else(|| {
                ToolError::InvalidArgs(format!("timeout must be a number of seconds, got {v}"))
            })?;
            Ok((secs.round().max(1.0) as u64).min(MAX_TIMEOUT_SECS))
        }
    }
}

/// The call's limit as the registry applies it: the command's own timeout plus
/// [`REPORT_GRACE`]. Unusable arguments fail at once, so the default stands for them.
pub fn time_limit(args: &Value) -> Duration {
    let secs = timeout_secs(args).unwrap_or(DEFAULT_TIMEOUT_SECS);
    Duration::from_secs(secs) + REPORT_GRACE
}

/// Why a command detaches from the call, one reason per pattern found.
pub fn detach_reasons(command: &str) -> Vec<&'static str> {
    let words: Vec<&str> = command
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '(' | ')'))
        .filter(|w| !w.is_empty())
        .collect();
    let has = |name: &str| {
        words
            .iter()
            .any(|w| w.rsplit('/').next().is_some_and(|base| base == name))
    };
    let mut reasons = Vec::new();
    if has("screen")
        && words
            .iter()
            .any(|w| w.starts_with("-d") || w.starts_with("-Dm"))
    {
        reasons.push("screen -d");
    }
    if has("tmux") && words.contains(&"-d") {
        reasons.push("tmux -d");
    }
    for (name, reason) in [
        ("nohup", "nohup"),
        ("setsid", "setsid"),
        ("systemd-run", "systemd-run"),
        ("disown", "disown"),
        ("daemonize", "daemon"),
        ("start-stop-daemon", "daemon"),
    ] {
        if has(name) && !reasons.contains(&reason) {
            reasons.push(reason);
        }
    }
    if words
        .iter()
        .any(|w| *w == "--daemon" || *w == "-daemon" || *w == "--detach")
    {
        reasons.push("daemon flag");
    }
    if backgrounds_a_job(command) {
        reasons.push("&");
    }
    reasons
}

/// A lone `&` (not `&&`, `>&`, `&>`, `|&`): the shell puts a job in the background.
fn backgrounds_a_job(command: &str) -> bool {
    let bytes = command.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        b == b'&'
            && bytes.get(i + 1) != Some(&b'&')
            && bytes.get(i + 1) != Some(&b'>')
            && (i == 0 || !matches!(bytes[i - 1], b'&' | b'>' | b'<' | b'|'))
    })
}

/// Head and tail of a stream, with how much was seen in total.
#[derive(Debug, Default)]
struct Capture {
    head: Vec<u8>,
    tail: Vec<u8>,
    total: usize,
}

impl Capture {
    fn push(&mut self, chunk: &[u8], cap: usize) {
        self.total += chunk.len();
        let half = cap / 2;
        let room = half.saturating_sub(self.head.len());
        let (to_head, rest) = chunk.split_at(room.min(chunk.len()));
        self.head.extend_from_slice(to_head);
        self.tail.extend_from_slice(rest);
        if self.tail.len() > half {
            let excess = self.tail.len() - half;
            self.tail.drain(..excess);
        }
    }

    /// The text and whether anything was cut.
    fn render(&self) -> (String, bool) {
        let kept = self.head.len() + self.tail.len();
        let head = String::from_utf8_lossy(&self.head);
        let tail = String::from_utf8_lossy(&self.tail);
        if kept >= self.total {
            return (format!("{head}{tail}"), false);
        }
        let cut = self.total - kept;
        (format!("{head}\n...[截断 {cut} 字节]...\n{tail}"), true)
    }
}

fn spawn_reader<R>(mut pipe: R, cap: usize) -> (Arc<Mutex<Capture>>, tokio::task::JoinHandle<()>)
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    let capture = Arc::new(Mutex::new(Capture::default()));
    let sink = capture.clone();
    let handle = tokio::spawn(async move {
        let mut buf = vec![0_u8; 8192];
        while let Ok(n) = pipe.read(&mut buf).await {
            if n == 0 {
                break;
            }
            if let Ok(mut c) = sink.lock() {
                c.push(&buf[..n], cap);
            }
        }
    });
    (capture, handle)
}

/// Kills the command's whole process group when dropped while armed: a call dropped
/// mid-run (the registry's limit, a cancelled turn, Ctrl-C) never reaches the code
/// after its `select!`, and `kill_on_drop` reaches the shell only, not its children.
/// Disarmed once the shell has exited by itself (what it left running detached on
/// purpose, and is flagged so).
struct GroupGuard {
    pgid: Option<u32>,
}

/// The groups of commands running in this process, for an exit that skips destructors
/// (the CLI's second Ctrl-C): see [`kill_all_running`].
static RUNNING_GROUPS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

impl GroupGuard {
    fn arm(pgid: Option<u32>) -> Self {
        if let (Some(id), Ok(mut running)) = (pgid, RUNNING_GROUPS.lock()) {
            running.push(id);
        }
        Self { pgid }
    }

    fn kill_now(&mut self) {
        if let Some(pgid) = self.take() {
            kill_group(pgid);
        }
    }

    fn disarm(&mut self) {
        self.take();
    }

    fn take(&mut self) -> Option<u32> {
        let pgid = self.pgid.take()?;
        if let Ok(mut running) = RUNNING_GROUPS.lock() {
            running.retain(|&id| id != pgid);
        }
        Some(pgid)
    }
}

/// Kills the process group of every command still running in this process. For exits
/// that never drop the calls' futures (`std::process::exit`); the usual paths (timeout,
/// cancel, a dropped call) kill their own group.
pub fn kill_all_running() {
    let groups = match RUNNING_GROUPS.lock() {
        Ok(mut running) => std::mem::take(&mut *running),
        Err(_) => return,
    };
    for pgid in groups {
        kill_group(pgid);
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill_now();
    }
}

/// Kills every process of the group (the shell and what it started).
fn kill_group(pgid: u32) {
    // `kill` rather than a libc binding: no new dependency, and the group id is ours.
    let status = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if let Err(e) = status {
        tracing::warn!(pgid, error = %e, "cannot kill the command's process group");
    }
}

/// The folder commands run in (created on demand).
pub fn ensure_dir(dir: &Path) -> Result<PathBuf, ToolError> {
    std::fs::create_dir_all(dir).map_err(|e| {
        ToolError::Failed(format!(
            "cannot create the workspace {}: {e}",
            dir.display()
        ))
    })?;
    Ok(dir.to_path_buf())
}

fn command_arg(args: &Value) -> Result<String, ToolError> {
    args.get("command")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| ToolError::InvalidArgs("command must be a non-empty string".into()))
}

/// What the approval dialog shows: the exact command, where it runs, its time limit and
/// why it may leave processes behind. Changes nothing (the workspace is not created).
pub fn preview(args: &Value, workspace: &Path) -> ApprovalPreview {
    match (command_arg(args), timeout_secs(args)) {
        (Ok(command), Ok(timeout)) => ApprovalPreview::Command {
            detaches: detach_reasons(&command)
                .into_iter()
                .map(str::to_owned)
                .collect(),
            command,
            cwd: workspace.display().to_string(),
            timeout_secs: u32::try_from(timeout).unwrap_or(u32::MAX),
        },
        (Err(e), _) | (_, Err(e)) => ApprovalPreview::Invalid {
            reason: e.to_string(),
        },
    }
}

pub async fn run(
    args: &Value,
    workspace: &Path,
    cancel: CancellationToken,
) -> Result<Value, ToolError> {
    let command = command_arg(args)?;
    let timeout = timeout_secs(args)?;
    let cwd = ensure_dir(workspace)?;

    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(&cwd)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| ToolError::Failed(format!("cannot start sh: {e}")))?;
    // Declared after `child`, so dropped before it: the shell is not yet reaped, and its
    // pid (the group id) cannot have been reused when the group is killed.
    let mut group = GroupGuard::arm(child.id());
    let (stdout, out_task) = match child.stdout.take() {
        Some(pipe) => spawn_reader(pipe, STDOUT_CAP),
        None => (Arc::default(), tokio::spawn(async {})),
    };
    let (stderr, err_task) = match child.stderr.take() {
        Some(pipe) => spawn_reader(pipe, STDERR_CAP),
        None => (Arc::default(), tokio::spawn(async {})),
    };

    enum End {
        Exited(Option<i32>),
        TimedOut,
        Cancelled,
    }
    let end = tokio::select! {
        status = child.wait() => End::Exited(status.ok().and_then(|s| s.code())),
        () = tokio::time::sleep(Duration::from_secs(timeout)) => End::TimedOut,
        () = cancel.cancelled() => End::Cancelled,
    };
    if matches!(end, End::Exited(_)) {
        group.disarm();
    } else {
        group.kill_now();
        let _ = child.wait().await;
    }
    // Leftover background children may keep the pipes open; stop reading after a grace.
    for task in [out_task, err_task] {
        let abort = task.abort_handle();
        if tokio::time::timeout(DRAIN_GRACE, task).await.is_err() {
            abort.abort();
        }
    }
    let render = |c: &Arc<Mutex<Capture>>| c.lock().map(|c| c.render()).unwrap_or_default();
    let (stdout_text, stdout_cut) = render(&stdout);
    let (stderr_text, stderr_cut) = render(&stderr);
    let detached = detach_reasons(&command);

    let mut result = json!({
        "command": command,
        "cwd": cwd,
        "stdout": stdout_text,
        "stderr": stderr_text,
        "stdout_truncated": stdout_cut,
        "stderr_truncated": stderr_cut,
        "timeout_seconds": timeout,
    });
    match end {
        End::Exited(code) => {
            result["exit_code"] = json!(code);
            result["status"] = json!(if code == Some(0) { "ok" } else { "failed" });
        }
        End::TimedOut => {
            result["status"] = json!("timeout");
            result["error"] = json!(format!("命令超时（{timeout}s），已结束整个进程组"));
        }
        End::Cancelled => {
            result["status"] = json!("cancelled");
            result["error"] = json!("命令已取消，已结束整个进程组");
        }
    }
    if !detached.is_empty() {
        result["detached"] = json!(detached);
        result["advice"] = json!(DETACH_ADVICE);
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_shows_the_exact_command_and_where_it_runs() {
        let ws = Path::new("/data/home/workspace");
        let args = json!({"command": "  nohup ./job.sh &  ", "timeout": 500});
        match preview(&args, ws) {
            ApprovalPreview::Command {
                command,
                cwd,
                timeout_secs,
                detaches,
            } => {
                assert_eq!(command, "nohup ./job.sh &");
                assert_eq!(cwd, "/data/home/workspace");
                assert_eq!(timeout_secs, 120);
                assert!(!detaches.is_empty());
            }
            other => panic!("{other:?}"),
        }
        assert!(!ws.exists() || ws.is_dir());
        assert!(matches!(
            preview(&json!({"command": " "}), ws),
            ApprovalPreview::Invalid { .. }
        ));
    }

    #[test]
    fn timeout_table() {
        let cases = [
            (json!({}), 30),
            (json!({"timeout": null}), 30),
            (json!({"timeout": 0}), 1),
            (json!({"timeout": -5}), 1),
            (json!({"timeout": 2}), 2),
            (json!({"timeout": 120}), 120),
            (json!({"timeout": 1000}), 120),
            (json!({"timeout": 2.6}), 3),
        ];
        for (args, want) in cases {
            assert_eq!(timeout_secs(&args).unwrap(), want, "{args}");
        }
        assert!(timeout_secs(&json!({"timeout": "10"})).is_err());
    }

    #[test]
    fn detach_table() {
        let cases: [(&str, &[&str]); 14] = [
            ("ls -la", &[]),
            ("make && make test", &[]),
            ("cmd > out.log 2>&1", &[]),
            ("cmd &> out.log", &[]),
            ("a |& b", &[]),
            ("screen -dmS job ./run.sh", &["screen -d"]),
            ("/usr/bin/screen -ls", &[]),
            ("nohup ./long.sh", &["nohup"]),
            ("setsid ./x", &["setsid"]),
            ("sleep 100 &", &["&"]),
            ("sleep 100 & disown", &["disown", "&"]),
            ("systemd-run --user ./x", &["systemd-run"]),
            ("tmux new -d -s x", &["tmux -d"]),
            ("dockerd --daemon", &["daemon flag"]),
        ];
        for (command, want) in cases {
            assert_eq!(detach_reasons(command), want.to_vec(), "{command}");
        }
    }

    #[test]
    fn capture_keeps_head_and_tail_and_says_the_cut() {
        let mut c = Capture::default();
        c.push(b"0123456789", 8);
        c.push(b"abcdef", 8);
        let (text, cut) = c.render();
        assert!(cut);
        assert_eq!(text, "0123\n...[截断 8 字节]...\ncdef");
        let mut small = Capture::default();
        small.push(b"hi", 8);
        assert_eq!(small.render(), ("hi".to_string(), false));
    }

    /// Live (not zombie) processes of the group; a killed orphan may stay a zombie until
    /// PID 1 reaps it, which is not "running".
    fn live_members(pgid: &str) -> Vec<String> {
        let mut live = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // pid (comm) state ppid pgrp …; comm may hold spaces, so split after ')'.
            let Some((_, rest)) = stat.rsplit_once(')') else {
                continue;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            if fields.get(2) == Some(&pgid) && fields.first() != Some(&"Z") {
                live.push(stat);
            }
        }
        live
    }

    fn group_alive(pgid_file: &Path) -> bool {
        let pgid = std::fs::read_to_string(pgid_file)
            .unwrap()
            .trim()
            .to_string();
        // SIGKILL is delivered asynchronously; give the kernel a moment to finish.
        for _ in 0..100 {
            if live_members(&pgid).is_empty() {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }

    #[tokio::test]
    async fn returns_stdout_stderr_and_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("workspace");
        let out = run(
            &json!({"command": "echo hello; echo oops >&2; pwd; exit 3"}),
            &ws,
            CancellationToken::new(),
        )
        .await
        .unwrap();
        assert_eq!(out["exit_code"], 3);
        assert_eq!(out["status"], "failed");
        assert_eq!(out["stderr"], "oops\n");
        let stdout = out["stdout"].as_str().unwrap();
        assert!(stdout.starts_with("hello\n"), "{stdout}");
        assert!(stdout.contains("workspace"), "{stdout}");
        assert!(out.get("detached").is_none());
    }

    #[tokio::test]
    async fn large_output_is_cut_with_head_and_tail() {
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            &json!({"command": "seq 1 20000"}),
            dir.path(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
        assert_eq!(out["stdout_truncated"], true);
        let text = out["stdout"].as_str().unwrap();
        assert!(text.starts_with("1\n2\n3\n"));
        assert!(text.ends_with("19999\n20000\n"));
        assert!(text.contains("...[截断 "));
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pgid");
        // The shell records its pid (= the group id), then a child and a grandchild sleep.
        let command = format!(
            "echo $$ > {}; sh -c 'sleep 300' & sleep 300",
            pid_file.display()
        );
        let out = run(
            &json!({"command": command, "timeout": 1}),
            dir.path(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
        assert_eq!(out["status"], "timeout");
        assert!(out["error"].as_str().unwrap().contains("1s"));
        assert!(
            !group_alive(&pid_file),
            "processes of the group are still running"
        );
    }

    #[tokio::test]
    async fn cancel_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pgid");
        let command = format!("echo $$ > {}; sleep 300", pid_file.display());
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        let watcher = pid_file.clone();
        tokio::spawn(async move {
            while !watcher.exists() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            trigger.cancel();
        });
        let out = run(&json!({"command": command}), dir.path(), cancel)
            .await
            .unwrap();
        assert_eq!(out["status"], "cancelled");
        assert!(!group_alive(&pid_file));
    }

    #[tokio::test]
    async fn dropping_the_call_mid_run_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pgid");
        // A child and a grandchild sleep; the call is dropped (as the registry drops it on
        // its limit or a cancelled turn) once the shell has written its group id.
        let command = format!(
            "echo $$ > {}; sh -c 'sleep 300' & sleep 300",
            pid_file.display()
        );
        let args = json!({ "command": command, "timeout": 100 });
        let call = run(&args, dir.path(), CancellationToken::new());
        let started = async {
            while std::fs::read_to_string(&pid_file).map_or(true, |s| !s.ends_with('\n')) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        tokio::select! {
            out = call => panic!("the command ended by itself: {out:?}"),
            () = started => {}
        }
        assert!(
            !group_alive(&pid_file),
            "processes of the dropped call's group are still running"
        );
    }

    #[test]
    fn the_declared_limit_is_the_commands_timeout_plus_the_report_grace() {
        let cases = [
            (json!({}), 30),
            (json!({"timeout": 100}), 100),
            (json!({"timeout": 120}), 120),
            (json!({"timeout": 1000}), 120),
            (json!({"timeout": "x"}), 30),
        ];
        for (args, secs) in cases {
            assert_eq!(
                time_limit(&args),
                Duration::from_secs(secs) + REPORT_GRACE,
                "{args}"
            );
        }
        // The registered tool declares it (the registry then applies it).
        let dir = tempfile::tempdir().unwrap();
        let tools = crate::local_tools(crate::LocalToolsConfig {
            workspace: dir.path().to_path_buf(),
            file_roots: Vec::new(),
            allow_private_web_fetch: false,
        });
        let exec = tools.iter().find(|t| t.spec().name == NAME).unwrap();
        assert_eq!(
            exec.time_limit(&json!({"command": "sleep 65", "timeout": 100})),
            Some(Duration::from_secs(100) + REPORT_GRACE)
        );
    }

    #[tokio::test]
    async fn detaching_command_is_flagged() {
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            &json!({"command": "true &"}),
            dir.path(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
        assert_eq!(out["detached"], json!(["&"]));
        assert!(out["advice"].as_str().unwrap().contains("重定向"));
    }

    #[tokio::test]
    async fn empty_command_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = run(
            &json!({"command": "  "}),
            dir.path(),
            CancellationToken::new(),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, ToolError::InvalidArgs(_)));
    }
}
