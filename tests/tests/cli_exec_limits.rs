//! `exec_command`'s limit and kill through the real `wyckoff` binary:
//! the command's own `timeout` governs (not the session's 60 s tool timeout), and Ctrl-C
//! of `wyckoff run` kills every process the command started.
//!
//! Build both binaries first: `cargo build -p wyckoff-cli -p wyckoff-mock-vendor`.
//! `a_command_given_100_s_runs_past_the_60_s_default` takes 65 s: the default it crosses
//! is wall-clock time in the binary.

// Test helpers may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use wyckoff_e2e::{VendorProcess as Vendor, live_processes_with, wyckoff_cli};

/// In tests/scripts/exec_interrupt.json's command: `sleep 300.2917 & sleep 300.2917; wait`.
const INTERRUPT_MARKER: &str = "300.2917";

fn run_command(home: &Path, vendor: &Vendor) -> Command {
    let mut cmd = wyckoff_cli(home);
    cmd.args([
        "run",
        "--json",
        "--provider",
        "openai",
        "--base-url",
        &vendor.base_url(),
        "--approve",
        "exec_command",
        "请处理",
    ])
    .env("OPENAI_API_KEY", "sk-e2eexec00000000000000");
    cmd
}

fn events(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect()
}

/// `kill SIGNAL PID` (the `kill` program: no unsafe code for a libc call).
fn signal(pid: String, signal: &str) {
    let status = Command::new("kill").args([signal, &pid]).status().unwrap();
    assert!(status.success(), "kill {signal} {pid}");
}

#[test]
fn a_command_given_100_s_runs_past_the_60_s_default() {
    let home = tempfile::tempdir().unwrap();
    let vendor = Vendor::start("exec_long.json");
    let out = run_command(home.path(), &vendor).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = events(&out.stdout);
    assert!(
        !events.iter().any(|e| e["type"] == "tool_error"),
        "{events:#?}"
    );
    let result = &events.iter().find(|e| e["type"] == "tool_result").unwrap()["result"];
    assert_eq!(result["status"], "ok", "{result}");
    assert_eq!(result["stdout"], "done-after-65\n");
    // The output reaches the model.
    let requests = vendor.chat_requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[1]["body"]["messages"]
            .to_string()
            .contains("done-after-65")
    );
}

#[test]
fn ctrl_c_during_a_command_leaves_no_process_behind() {
    assert!(
        live_processes_with(INTERRUPT_MARKER).is_empty(),
        "leftovers of an earlier run hold the marker"
    );
    let home = tempfile::tempdir().unwrap();
    let vendor = Vendor::start("exec_interrupt.json");
    let mut child = run_command(home.path(), &vendor)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The command runs once tool_start is out and both sleeps are up.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("\"tool_start\"") {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "no tool_start");
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while live_processes_with(INTERRUPT_MARKER).len() < 2 {
        assert!(
            Instant::now() < deadline,
            "the command's sleeps never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    signal(child.id().to_string(), "-INT");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");

    // SIGKILL lands asynchronously; poll briefly rather than assert on timing.
    let mut left = live_processes_with(INTERRUPT_MARKER);
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        left = live_processes_with(INTERRUPT_MARKER);
    }
    for pid in &left {
        // Clean up what the defect left, so the next run starts clear.
        signal(pid.to_string(), "-KILL");
    }
    assert!(left.is_empty(), "still running after Ctrl-C: {left:?}");
}
