//! End-to-end tests of skills through the real `wyckoff` binary: `wyckoff skills
//! [--json]` over a temporary `WYCKOFF_HOME`, and `wyckoff run --json "/name args"`
//! against the real `wyckoff-mock-vendor` (OpenAI streaming format), whose recorded
//! request shows what reached the model.
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

fn last_user_message(request: &Value) -> String {
    let messages = request["body"]["messages"].as_array().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    user["content"].as_str().unwrap().to_owned()
}

#[test]
fn skills_json_lists_builtins_user_skills_and_warnings() {
    let home = tempfile::tempdir().unwrap();
    let skills = home.path().join("skills");
    std::fs::create_dir_all(&skills).unwrap();
    std::fs::write(
        skills.join("weekly.md"),
        "---\nname: review\ndescription: 周复盘\n---\n复盘 {user_input}\n",
    )
    .unwrap();
    std::fs::write(skills.join("checkup.md"), "我自己的体检").unwrap();
    std::fs::write(skills.join("broken.md"), "---\njust words\n---\nx").unwrap();

    let out = wyckoff(home.path(), &["skills", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let by_name = |name: &str| {
        v["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .cloned()
    };
    for name in ["screen", "report", "strategy", "backtest"] {
        assert_eq!(
            by_name(name).unwrap()["source"]["type"],
            "builtin",
            "{name}"
        );
    }
    // Seed §8: the file name is the skill name; the front matter's `name: review` is
    // reported, not obeyed.
    let weekly = by_name("weekly").unwrap();
    assert_eq!(weekly["description"], "周复盘");
    assert_eq!(weekly["source"]["type"], "user");
    assert!(
        weekly["source"]["path"]
            .as_str()
            .unwrap()
            .ends_with("weekly.md")
    );
    assert_eq!(by_name("checkup").unwrap()["source"]["type"], "user");
    assert!(by_name("review").is_none());
    let warnings = v["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    let warning_of = |file: &str| {
        warnings
            .iter()
            .find(|w| w["path"].as_str().unwrap().ends_with(file))
            .unwrap()["message"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(warning_of("broken.md").starts_with("skipped: "));
    let mismatch = warning_of("weekly.md");
    assert!(
        mismatch.contains("\"review\"") && mismatch.contains("loaded as /weekly"),
        "{mismatch}"
    );

    let text = wyckoff(home.path(), &["skills"]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("/weekly")
            && text.contains("broken.md: skipped: ")
            && text.contains("weekly.md: front matter says name \"review\""),
        "{text}"
    );
}

#[test]
fn a_user_skill_expands_into_the_first_request() {
    let home = tempfile::tempdir().unwrap();
    let skills = home.path().join("skills");
    std::fs::create_dir_all(&skills).unwrap();
    std::fs::write(
        skills.join("echo.md"),
        "---\ndescription: test\n---\n请复述：{user_input}（技能模板）",
    )
    .unwrap();
    let vendor = Vendor::start("text_answer.json");
    let base_url = vendor.base_url();
    let out = wyckoff(
        home.path(),
        &[
            "run",
            "--json",
            "--provider",
            "openai",
            "--base-url",
            &base_url,
            "/echo 600519 茅台",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(stderr.contains("/echo expanded"), "{stderr}");
    let requests = vendor.chat_requests();
    assert_eq!(requests.len(), 1);
    let content = last_user_message(&requests[0]);
    assert!(
        content.starts_with("请复述：600519 茅台（技能模板）"),
        "{content}"
    );
}

#[test]
fn a_builtin_skill_expands_verbatim() {
    let home = tempfile::tempdir().unwrap();
    let vendor = Vendor::start("text_answer.json");
    let base_url = vendor.base_url();
    let out = wyckoff(
        home.path(),
        &[
            "run",
            "--json",
            "--provider",
            "openai",
            "--base-url",
            &base_url,
            "/checkup",
        ],
    );
    // The one-answer script may not satisfy the loop guard (the prompt asks for tools), so
    // only the request matters here.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\"type\":\"session\""), "{stdout}");
    let content = last_user_message(&vendor.chat_requests()[0]);
    assert!(
        content.starts_with(
            "执行持仓全面体检：\n1. 调用 portfolio(mode=\"diagnose\") 获取持仓诊断数据"
        ),
        "{content}"
    );
}

#[test]
fn an_unknown_command_is_bad_input_and_never_reaches_the_model() {
    let home = tempfile::tempdir().unwrap();
    let vendor = Vendor::start("text_answer.json");
    let base_url = vendor.base_url();
    let out = wyckoff(
        home.path(),
        &[
            "run",
            "--json",
            "--provider",
            "openai",
            "--base-url",
            &base_url,
            "/nosuch x",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown command /nosuch"), "{stderr}");
    assert!(vendor.chat_requests().is_empty());
}
