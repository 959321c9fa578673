//! End-to-end tests of the local tools through the real `wyckoff` binary: `wyckoff run
//! --json` against the real `wyckoff-mock-vendor`, whose scripts (tests/scripts/exec_*.json)
//! ask for `exec_command`; the approval policy comes from `--approve`.
//!
//! Build both binaries first: `cargo build -p wyckoff-cli -p wyckoff-mock-vendor`.

// Test helpers may panic: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use wyckoff_e2e::{VendorProcess as Vendor, wyckoff_cli};

fn wyckoff(home: &Path, args: &[&str]) -> Output {
    wyckoff_cli(home)
        .args(args)
        .env("OPENAI_API_KEY", "sk-e2eskills0000000000")
        .output()
        .unwrap()
}

fn run_script(home: &Path, script: &str, approve: &str) -> (Output, Vec<Value>, Vendor) {
    let vendor = Vendor::start(script);
    let base_url = vendor.base_url();
    let out = wyckoff(
        home,
        &[
            "run",
            "--json",
            "--provider",
            "openai",
            "--base-url",
            &base_url,
            "--approve",
            approve,
            "请处理",
        ],
    );
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect();
    (out, events, vendor)
}

fn event<'a>(events: &'a [Value], ty: &str) -> Option<&'a Value> {
    events.iter().find(|e| e["type"] == ty)
}

/// Live (not zombie) processes whose process group is `pgid`.
fn live_group_members(pgid: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest.split_whitespace().collect())
                .unwrap_or_default();
            fields.get(2) == Some(&pgid) && fields.first() != Some(&"Z")
        })
        .count()
}

#[test]
fn exec_command_denied_never_runs() {
    let home = tempfile::tempdir().unwrap();
    let (out, events, _vendor) = run_script(home.path(), "exec_marker.json", "never");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!home.path().join("workspace").join("marker").exists());
    let resolved = event(&events, "approval_resolved").unwrap();
    assert_eq!(resolved["outcome"], "denied_by_policy");
    assert!(event(&events, "tool_result").is_none_or(|r| !r.to_string().contains("made-it")));
}

#[test]
fn exec_command_allowed_returns_stdout_and_exit_code() {
    let home = tempfile::tempdir().unwrap();
    let (out, events, vendor) = run_script(home.path(), "exec_marker.json", "exec_command");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(home.path().join("workspace").join("marker").is_file());
    let result = &event(&events, "tool_result").unwrap()["result"];
    assert_eq!(result["exit_code"], 0, "{result}");
    assert_eq!(result["stdout"], "made-it\n");
    // The model's second request carries the tool result.
    let requests = vendor.chat_requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[1]["body"]["messages"]
            .to_string()
            .contains("made-it")
    );
}

#[test]
fn exec_command_timeout_leaves_no_process() {
    let home = tempfile::tempdir().unwrap();
    let (out, events, _vendor) = run_script(home.path(), "exec_sleep.json", "exec_command");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A result carrying `error` reaches the event stream as a tool error.
    let error = event(&events, "tool_error").unwrap()["error"]
        .as_str()
        .unwrap();
    assert!(error.contains("命令超时（2s）"), "{error}");
    let pgid = std::fs::read_to_string(home.path().join("workspace").join("pgid")).unwrap();
    let pgid = pgid.trim();
    // SIGKILL lands asynchronously; poll briefly rather than assert on timing.
    let mut live = live_group_members(pgid);
    for _ in 0..100 {
        if live == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        live = live_group_members(pgid);
    }
    assert_eq!(live, 0, "processes of the command are still running");
}

#[test]
fn write_file_denied_writes_nothing_and_allowed_reports_a_diff() {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("workspace").join("notes").join("plan.md");
    let (out, events, _vendor) = run_script(home.path(), "write_file.json", "never");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        event(&events, "approval_resolved").unwrap()["outcome"],
        "denied_by_policy"
    );
    assert!(!target.exists());

    let (out, events, _vendor) = run_script(home.path(), "write_file.json", "write_file");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "第一行\n");
    let result = &event(&events, "tool_result").unwrap()["result"];
    assert!(
        result["diff"].as_str().unwrap().contains("+第一行"),
        "{result}"
    );
}

fn vendor_requests_to_web(vendor: &Vendor) -> usize {
    vendor
        .requests()
        .iter()
        .filter(|r| r["path"].as_str().is_some_and(|p| p.starts_with("/__web/")))
        .count()
}

/// The script asks for `web_fetch` of the mock server's own page on 127.0.0.1; the
/// `tool_result` or `tool_error` event it got.
fn fetch_result(home: &Path) -> (Value, Vendor) {
    let (out, events, vendor) = run_script(home, "web_fetch.json", "never");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = event(&events, "tool_result")
        .or_else(|| event(&events, "tool_error"))
        .unwrap()
        .clone();
    (result, vendor)
}

#[test]
fn web_fetch_of_a_loopback_url_is_refused_by_default() {
    let home = tempfile::tempdir().unwrap();
    let (result, vendor) = fetch_result(home.path());
    assert_eq!(result["type"], "tool_error", "{result}");
    let text = result.to_string();
    assert!(
        text.contains("loopback") && text.contains("refused"),
        "{text}"
    );
    let page_requests = vendor_requests_to_web(&vendor);
    assert_eq!(page_requests, 0, "the refused fetch reached the page");
    assert!(!text.contains("1,466.95"), "{text}");
    assert_eq!(vendor.chat_requests().len(), 2);
    assert!(
        vendor.chat_requests()[1]["body"]["messages"]
            .to_string()
            .contains("loopback")
    );
}

#[test]
fn web_fetch_with_private_addresses_allowed_returns_the_page_text() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("settings.json"),
        r#"{"version": 1, "allow_private_web_fetch": true}"#,
    )
    .unwrap();
    let (result, vendor) = fetch_result(home.path());
    assert_eq!(vendor_requests_to_web(&vendor), 1);
    let page = &result["result"];
    assert_eq!(page["status"], 200, "{result}");
    assert_eq!(page["title"], "平安银行 公告");
    assert!(
        page["text"].as_str().unwrap().contains("1,466.95"),
        "{page}"
    );
    assert!(
        vendor.chat_requests()[1]["body"]["messages"]
            .to_string()
            .contains("1,466.95")
    );
}
