//! Secrets never leak: a canary API key, given through the environment
//! or the OS keychain, is used for the vendor's requests and appears nowhere else — not
//! in any file under the data home (database and its WAL, logs, scratchpads, offloaded
//! tool results, settings, exports), not in what the CLI prints (answers, events, error
//! messages, even when the vendor echoes the key back in an error), and not in any
//! request body. The keychain case needs a Secret Service (`scripts/test` runs it under
//! dbus-run-session with gnome-keyring).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::json;
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Response, Route, Script};

/// Deliberately not shaped like any vendor key: pattern-based masking alone would miss it.
fn canary() -> String {
    format!("wyckoffcanary{}q7", std::process::id())
}

fn run(
    home: &Path,
    base_url: &str,
    key_env: Option<&str>,
    extra: &[&str],
    prompt: &str,
) -> (Option<i32>, String) {
    let mut cmd = Command::new(wyckoff_e2e::binary("wyckoff"));
    cmd.args(["run", "--provider", "openai", "--base-url", base_url])
        .args(extra)
        .arg(prompt)
        .env("WYCKOFF_HOME", home)
        .env("WYCKOFF_OFFLINE", "1")
        .env_remove("OPENAI_API_KEY")
        .env_remove("HTTPS_PROXY")
        .env_remove("HTTP_PROXY")
        .env_remove("ALL_PROXY")
        .stdin(Stdio::null());
    if let Some(k) = key_env {
        cmd.env("OPENAI_API_KEY", k);
    }
    let out = cmd.output().unwrap();
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), printed)
}

/// Every file under `dir` whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<String> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p)
                && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
            {
                hits.push(p.display().to_string());
            }
        }
    }
    hits
}

/// Two runs against one home: a tool turn, then a 401 whose body echoes the key (as some
/// vendors do). Then every place the key could have leaked to is searched.
async fn leaks_nowhere(key_env: Option<&str>, key: &str, with_json: bool) {
    let echo = json!({"error": {"message": format!("Incorrect API key provided: {key}. You can find your API key at ..."), "type": "invalid_request_error", "code": "invalid_api_key"}});
    let server = MockServer::start_with(
        Script {
            openai: vec![
                OpenAiStream::new()
                    .role()
                    .tool_call(0, "call_a", "analyze_stock", &[r#"{"code": "000001"}"#])
                    .finish("tool_calls")
                    .done()
                    .response(),
                OpenAiStream::text_response(&["000001 诊断完成。"]),
                Response::error(401, echo),
            ],
            ..Script::default()
        },
        0,
    )
    .await
    .unwrap();
    let base = format!("{}/v1", server.url());
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_path_buf();
    let (k, b) = (key_env.map(str::to_owned), base.clone());
    let extra: Vec<&str> = if with_json { vec!["--json"] } else { vec![] };
    let extra: Vec<String> = extra.into_iter().map(str::to_owned).collect();
    let (first, second) = tokio::task::spawn_blocking(move || {
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let first = run(&h, &b, k.as_deref(), &extra, "分析 000001");
        let second = run(&h, &b, k.as_deref(), &extra, "再看一次");
        (first, second)
    })
    .await
    .unwrap();
    assert_eq!(first.0, Some(0), "{}", first.1);
    assert_eq!(second.0, Some(1), "the 401 fails the turn: {}", second.1);
    assert!(
        second.1.contains("API key") || second.1.contains("auth"),
        "{}",
        second.1
    );

    assert!(!first.1.contains(key), "printed: {}", first.1);
    assert!(
        !second.1.contains(key),
        "the echoed key was printed: {}",
        second.1
    );
    assert_eq!(files_containing(home.path(), key), Vec::<String>::new());

    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 3);
    for r in &requests {
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {key}").as_str())
        );
        assert!(!r.raw_body.contains(key), "key in a request body");
    }
    // Only the vendor's route was ever asked (offline market data: no other host).
    assert_eq!(server.requests().len(), requests.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_from_the_environment_leaks_nowhere() {
    let key = canary();
    leaks_nowhere(Some(&key), &key, false).await;
    leaks_nowhere(Some(&key), &key, true).await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a Secret Service (scripts/test runs it under dbus-run-session + gnome-keyring)"]
async fn a_key_from_the_keychain_leaks_nowhere() {
    let key = format!("{}kc", canary());
    let secrets = wyckoff_config::Secrets::system();
    let id = wyckoff_config::SecretId::Provider {
        vendor: wyckoff_config::secrets::Vendor::Openai,
    };
    secrets.set(&id, &key).unwrap();
    leaks_nowhere(None, &key, true).await;
    secrets.delete(&id).unwrap();
}
