//! Settings → MCP: the configured MCP servers (`mcp_servers.json` in the
//! data home, the list `wyckoff mcp` edits), add (with environment variables or a header
//! from named secrets), switch, always-ask, trust single tools, remove, and a test that
//! connects and lists the server's tools. Each session picks the list up as it is.
//!
//! Secret values the window is given go to the keychain by name, as `wyckoff mcp secret`
//! stores them; the list holds only the names and no command sends a value back.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::State;
use wyckoff_config::mcp::{
    self, EnvSecret, HeaderSecret, McpConfigError, McpServer, McpServers, McpTransport,
};
use wyckoff_config::{NamedSecret, Secrets};

use crate::chat::ChatState;
use crate::commands::chat::services;
use crate::commands::error::CommandError;
use crate::state::AppState;

/// How long a test may take to connect and list the tools.
const TEST_TIMEOUT: Duration = Duration::from_secs(20);

/// How a server stands in this app's sessions.
#[derive(Debug, Clone, Serialize, Type)]
pub struct McpStatusView {
    /// A connection is open now.
    pub connected: bool,
    /// How many tools it listed last, once a session has asked.
    pub tools: Option<u32>,
    pub last_error: Option<String>,
    /// Why it was disabled after repeated failures (until the app restarts or the server's
    /// settings change).
    pub disabled: Option<String>,
    /// How many of its tools the model is offered now.
    pub offered: u32,
    /// Its tools left out of the model's requests, each with why.
    pub left_out: Vec<McpLeftOutView>,
}

/// A tool not offered to the model, and why (a cap, the user's pick, a name clash).
#[derive(Debug, Clone, Serialize, Type)]
pub struct McpLeftOutView {
    pub tool: String,
    pub why: String,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct McpServerView {
    pub name: String,
    /// `stdio` or `http`.
    pub kind: String,
    /// The command line, or the URL.
    pub target: String,
    pub enabled: bool,
    pub always_ask: bool,
    pub trusted_tools: Vec<String>,
    /// Most of its tools offered to the model (its own cap, or the default).
    pub max_tools: u32,
    /// The tools the user picked to offer; none: its tools in its order, up to the cap.
    pub offered_tools: Option<Vec<String>>,
    /// The named secrets the server reads, each with whether a value is set (never the value).
    pub secrets: Vec<McpSecretView>,
    /// `None` until a session of this app has used the server.
    pub status: Option<McpStatusView>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct McpSecretView {
    /// The secret's name (`wyckoff mcp secret NAME`).
    pub name: String,
    /// Where it goes: the environment variable or the HTTP header.
    pub into: String,
    pub set: bool,
}

/// An environment variable of a new stdio server, read from the named secret. `value`, when
/// given, is stored in the keychain under that name first.
#[derive(Clone, Deserialize, Type)]
pub struct McpEnvInput {
    pub var: String,
    pub secret: String,
    pub value: Option<String>,
}

/// The header a new HTTP server gets from the named secret (`Authorization` gets `Bearer `
/// before a bare token). `value`, when given, is stored in the keychain first.
#[derive(Clone, Deserialize, Type)]
pub struct McpHeaderInput {
    pub header: String,
    pub secret: String,
    pub value: Option<String>,
}

impl From<&McpServer> for McpServerView {
    fn from(s: &McpServer) -> Self {
        let (kind, target) = match &s.transport {
            McpTransport::Stdio { command, args, .. } => (
                "stdio",
                std::iter::once(command.clone())
                    .chain(args.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            McpTransport::Http { url, .. } => ("http", url.clone()),
        };
        McpServerView {
            name: s.name.clone(),
            kind: kind.to_owned(),
            target,
            enabled: s.enabled,
            always_ask: s.always_ask,
            trusted_tools: s.trusted_tools.clone(),
            max_tools: s.tool_cap(),
            offered_tools: s.offered_tools.clone(),
            secrets: Vec::new(),
            status: None,
        }
    }
}

/// Each secret an entry names, with where it goes.
fn secret_refs(s: &McpServer) -> Vec<(String, String)> {
    match &s.transport {
        McpTransport::Stdio { env, .. } => env
            .iter()
            .map(|e| (e.secret.clone(), e.var.clone()))
            .collect(),
        McpTransport::Http { header_secret, .. } => header_secret
            .iter()
            .map(|h| (h.secret.clone(), h.header.clone()))
            .collect(),
    }
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct McpToolView {
    pub name: String,
    pub description: Option<String>,
    /// The server's `readOnlyHint`: read-only tools run without asking (unless the server
    /// always asks).
    pub read_only: bool,
    /// The name the model knows it by (`mcp__…`).
    pub agent_name: String,
    /// Told apart from another tool of the same name after cleaning (its name has a hash).
    pub renamed: bool,
    /// Why the model is not offered it (none: offered), as this server's cap and pick say.
    pub left_out: Option<String>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct McpTestView {
    /// The server's own name and version.
    pub name: String,
    pub version: String,
    pub tools: Vec<McpToolView>,
}

fn path(state: &AppState) -> std::path::PathBuf {
    mcp::path_in(state.home.root())
}

fn views(list: &McpServers, secrets: &Secrets) -> Vec<McpServerView> {
    list.servers
        .iter()
        .map(|s| {
            let mut v = McpServerView::from(s);
            v.secrets = secret_refs(s)
                .into_iter()
                .map(|(name, into)| McpSecretView {
                    set: secrets.get_named(&NamedSecret(name.clone())).is_some(),
                    name,
                    into,
                })
                .collect();
            v
        })
        .collect()
}

/// Loads the list, changes it, validates and saves it whole (nothing written on an error).
fn change_at(
    path: &Path,
    secrets: &Secrets,
    edit: impl FnOnce(&mut McpServers) -> Result<(), McpConfigError>,
) -> Result<Vec<McpServerView>, CommandError> {
    let mut list = mcp::load(path)?;
    edit(&mut list)?;
    mcp::save(path, &list)?;
    Ok(views(&list, secrets))
}

fn change(
    state: &AppState,
    edit: impl FnOnce(&mut McpServers) -> Result<(), McpConfigError>,
) -> Result<Vec<McpServerView>, CommandError> {
    change_at(&path(state), &state.secrets, edit)
}

/// The entry the window's add form describes, with the secret values to store.
fn new_entry(
    name: &str,
    target: &str,
    args: Vec<String>,
    env: Vec<McpEnvInput>,
    header: Option<McpHeaderInput>,
) -> Result<(McpServer, Vec<(String, String)>), CommandError> {
    let target = target.trim().to_owned();
    let mut values = Vec::new();
    let mut keep = |secret: &str, value: Option<String>| {
        if let Some(v) = value.filter(|v| !v.trim().is_empty()) {
            values.push((secret.to_owned(), v.trim().to_owned()));
        }
    };
    let transport = if target.starts_with("http://") || target.starts_with("https://") {
        if !env.is_empty() {
            return Err(CommandError::invalid(
                "environment variables are for a command (stdio) server, not a URL",
            ));
        }
        let header_secret = header.map(|h| {
            let secret = h.secret.trim().to_owned();
            keep(&secret, h.value);
            let header = h.header.trim();
            HeaderSecret {
                header: if header.is_empty() {
                    "Authorization".to_owned()
                } else {
                    header.to_owned()
                },
                secret,
            }
        });
        McpTransport::Http {
            url: target,
            header_secret,
        }
    } else {
        if header.is_some() {
            return Err(CommandError::invalid(
                "a header secret is for an http(s) server, not a command",
            ));
        }
        let env = env
            .into_iter()
            .map(|e| {
                let secret = e.secret.trim().to_owned();
                keep(&secret, e.value);
                EnvSecret {
                    var: e.var.trim().to_owned(),
                    secret,
                }
            })
            .collect();
        McpTransport::Stdio {
            command: target,
            args: args.into_iter().filter(|a| !a.is_empty()).collect(),
            env,
        }
    };
    let server = McpServer {
        name: name.trim().to_owned(),
        transport,
        enabled: true,
        always_ask: false,
        trusted_tools: Vec::new(),
        max_tools: None,
        offered_tools: None,
    };
    Ok((server, values))
}

/// Adds `server` to the list at `path`: the entry is checked first, then the secret values
/// go to the keychain by name, then the list is saved (a keychain failure saves nothing).
fn add_at(
    path: &Path,
    secrets: &Secrets,
    server: McpServer,
    values: Vec<(String, String)>,
) -> Result<Vec<McpServerView>, CommandError> {
    let mut list = mcp::load(path)?;
    list.add(server)?;
    list.validate()?;
    for (name, value) in values {
        let named = NamedSecret(name);
        secrets.set_named(&named, &value).map_err(|e| {
            CommandError::unavailable(format!(
                "secret {}: {e} (or set {} instead)",
                named.0,
                named.env_var()
            ))
        })?;
    }
    mcp::save(path, &list)?;
    Ok(views(&list, secrets))
}

/// The list with how each server stands in this app's sessions.
#[tauri::command]
#[specta::specta]
pub async fn mcp_servers(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Vec<McpServerView>, CommandError> {
    let mut list = views(&mcp::load(&path(&state))?, &state.secrets);
    // Without a model there is no session yet: the list alone is still shown.
    if let Ok(services) = services(&state, &chat).await {
        let placed = services.mcp().placed();
        for st in services.mcp().statuses().await {
            if let Some(v) = list.iter_mut().find(|v| v.name == st.name) {
                let mine = placed.iter().filter(|p| p.server == st.name);
                v.status = Some(McpStatusView {
                    connected: st.connected,
                    tools: st.tools.map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
                    last_error: st.last_error,
                    disabled: st.disabled,
                    offered: u32::try_from(mine.clone().filter(|p| p.left_out.is_none()).count())
                        .unwrap_or(u32::MAX),
                    left_out: mine
                        .filter_map(|p| {
                            p.left_out.as_ref().map(|why| McpLeftOutView {
                                tool: p.tool.clone(),
                                why: why.to_string(),
                            })
                        })
                        .collect(),
                });
            }
        }
    }
    Ok(list)
}

/// Adds a server: `target` is an http(s) URL (streamable HTTP, optionally with a header
/// from a named secret) or a command started on demand with `args` (stdio, optionally with
/// environment variables from named secrets). Secret values given here are stored in the
/// keychain, as `wyckoff mcp secret` does; the list keeps only their names.
#[tauri::command]
#[specta::specta]
pub async fn mcp_add(
    state: State<'_, AppState>,
    name: String,
    target: String,
    args: Vec<String>,
    env: Vec<McpEnvInput>,
    header: Option<McpHeaderInput>,
) -> Result<Vec<McpServerView>, CommandError> {
    let (server, values) = new_entry(&name, &target, args, env, header)?;
    add_at(&path(&state), &state.secrets, server, values)
}

/// Trusts one of the server's tools (it runs without asking) or asks for it again, as
/// `wyckoff mcp trust NAME TOOL [--remove]`.
#[tauri::command]
#[specta::specta]
pub async fn mcp_set_trusted(
    state: State<'_, AppState>,
    name: String,
    tool: String,
    trusted: bool,
) -> Result<Vec<McpServerView>, CommandError> {
    change(&state, |list| list.set_trusted(&name, &tool, trusted))
}

#[tauri::command]
#[specta::specta]
pub async fn mcp_set_enabled(
    state: State<'_, AppState>,
    name: String,
    enabled: bool,
) -> Result<Vec<McpServerView>, CommandError> {
    change(&state, |list| list.set_enabled(&name, enabled))
}

/// Every call of the server's tools asks, even those it marks read-only.
#[tauri::command]
#[specta::specta]
pub async fn mcp_set_always_ask(
    state: State<'_, AppState>,
    name: String,
    always_ask: bool,
) -> Result<Vec<McpServerView>, CommandError> {
    change(&state, |list| list.set_always_ask(&name, always_ask))
}

#[tauri::command]
#[specta::specta]
pub async fn mcp_remove(
    state: State<'_, AppState>,
    name: String,
) -> Result<Vec<McpServerView>, CommandError> {
    change(&state, |list| list.remove(&name).map(|_| ()))
}

/// Offers the model only `tools` of the server (their MCP names), or with none its tools in
/// its order up to its cap, as `wyckoff mcp pick`.
#[tauri::command]
#[specta::specta]
pub async fn mcp_pick_tools(
    state: State<'_, AppState>,
    name: String,
    tools: Option<Vec<String>>,
) -> Result<Vec<McpServerView>, CommandError> {
    change(&state, |list| list.set_offered(&name, tools))
}

/// Caps the tools offered to the model: of one server (`name`) or of all together; `max`
/// none goes back to the default, as `wyckoff mcp max-tools`.
#[tauri::command]
#[specta::specta]
pub async fn mcp_set_max_tools(
    state: State<'_, AppState>,
    name: Option<String>,
    max: Option<u32>,
) -> Result<Vec<McpServerView>, CommandError> {
    change(&state, |list| list.set_max_tools(name.as_deref(), max))
}

/// Connects to the server (within 20 s) and lists its tools; a failure says why, with the
/// last lines the server wrote on stderr (secrets masked). Each tool says whether the model
/// is offered it, under which name, as this server's cap and pick say.
#[tauri::command]
#[specta::specta]
pub async fn mcp_test(
    state: State<'_, AppState>,
    name: String,
) -> Result<McpTestView, CommandError> {
    let list = mcp::load(&path(&state))?;
    let entry = list
        .get(&name)
        .ok_or_else(|| CommandError::from(McpConfigError::NotFound(name.clone())))?;
    let secrets = state.secrets.clone();
    let secret = move |n: &NamedSecret| secrets.get_named(n).map(|(v, _)| v.expose().to_owned());
    let report = wyckoff_session::domain::mcp::client::probe(entry, &secret, TEST_TIMEOUT)
        .await
        .map_err(CommandError::unavailable)?;
    let placed = wyckoff_session::domain::mcp::offer::place(
        &[(entry, &report.tools)],
        list.total_tool_cap(),
    );
    Ok(McpTestView {
        name: report.name,
        version: report.version,
        tools: report
            .tools
            .into_iter()
            .zip(placed)
            .map(|(t, p)| McpToolView {
                name: t.name,
                description: t.description,
                read_only: t.read_only == Some(true),
                agent_name: p.name,
                renamed: p.renamed,
                left_out: p.left_out.map(|why| why.to_string()),
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use wyckoff_config::secrets::MemoryBackend;

    use super::*;
    use crate::commands::error::CommandErrorKind;

    fn secrets() -> Secrets {
        Secrets::with_backend(Box::new(MemoryBackend::default()), Box::new(|_| None))
    }

    fn env(var: &str, secret: &str, value: Option<&str>) -> McpEnvInput {
        McpEnvInput {
            var: var.into(),
            secret: secret.into(),
            value: value.map(str::to_owned),
        }
    }

    #[test]
    fn secrets_go_to_the_keychain_by_name_and_never_into_the_list() {
        let dir = tempfile::tempdir().unwrap();
        let path = mcp::path_in(dir.path());
        let keys = secrets();
        let (server, values) = new_entry(
            "gh",
            "npx",
            vec!["-y".into(), "server-github".into()],
            vec![
                env("GITHUB_TOKEN", "gh-token", Some("ghp_CANARY123456")),
                env("OTHER", "other", None),
            ],
            None,
        )
        .unwrap();
        let views = add_at(&path, &keys, server, values).unwrap();
        let file = std::fs::read_to_string(&path).unwrap();
        assert!(!file.contains("CANARY"), "{file}");
        assert!(
            file.contains("gh-token") && file.contains("GITHUB_TOKEN"),
            "{file}"
        );
        let got = keys.get_named(&NamedSecret("gh-token".into())).unwrap().0;
        assert_eq!(got.expose(), "ghp_CANARY123456");
        // The view names the secrets and whether each is set, never a value.
        let shown = serde_json::to_string(&views).unwrap();
        assert!(!shown.contains("CANARY"), "{shown}");
        let s = &views[0].secrets;
        assert_eq!(
            s.iter()
                .map(|v| (v.name.as_str(), v.into.as_str(), v.set))
                .collect::<Vec<_>>(),
            [
                ("gh-token", "GITHUB_TOKEN", true),
                ("other", "OTHER", false)
            ]
        );

        let (server, values) = new_entry(
            "remote",
            "https://mcp.example.com/mcp",
            vec![],
            vec![],
            Some(McpHeaderInput {
                header: String::new(),
                secret: "remote-key".into(),
                value: Some("sk-CANARY-HTTP".into()),
            }),
        )
        .unwrap();
        let views = add_at(&path, &keys, server, values).unwrap();
        let file = std::fs::read_to_string(&path).unwrap();
        assert!(!file.contains("CANARY"), "{file}");
        let list = mcp::load(&path).unwrap();
        assert_eq!(
            list.get("remote").unwrap().transport,
            McpTransport::Http {
                url: "https://mcp.example.com/mcp".into(),
                header_secret: Some(HeaderSecret {
                    header: "Authorization".into(),
                    secret: "remote-key".into()
                })
            }
        );
        assert!(views[1].secrets[0].set);
    }

    #[test]
    fn a_bad_entry_stores_no_secret_and_saves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = mcp::path_in(dir.path());
        let keys = secrets();
        for (env_in, header) in [
            (vec![env("1BAD", "ok-name", Some("v1"))], None),
            (vec![env("GOOD", "Bad Name", Some("v2"))], None),
        ] {
            let (server, values) = new_entry("srv", "cmd", vec![], env_in, header).unwrap();
            let e = add_at(&path, &keys, server, values).unwrap_err();
            assert_eq!(e.kind, CommandErrorKind::InvalidInput, "{e:?}");
        }
        assert!(keys.get_named(&NamedSecret("ok-name".into())).is_none());
        assert!(!path.exists() || mcp::load(&path).unwrap().servers.is_empty());
        // A header on a command, or env on a URL, is refused outright.
        assert!(
            new_entry(
                "x",
                "cmd",
                vec![],
                vec![],
                Some(McpHeaderInput {
                    header: "X-Key".into(),
                    secret: "k".into(),
                    value: None
                })
            )
            .is_err()
        );
        assert!(
            new_entry(
                "x",
                "https://h/mcp",
                vec![],
                vec![env("A", "a", None)],
                None
            )
            .is_err()
        );
    }

    #[test]
    fn single_tools_are_trusted_and_untrusted() {
        let dir = tempfile::tempdir().unwrap();
        let path = mcp::path_in(dir.path());
        let keys = secrets();
        let (server, values) = new_entry("time", "uvx", vec![], vec![], None).unwrap();
        add_at(&path, &keys, server, values).unwrap();
        let v = change_at(&path, &keys, |l| {
            l.set_trusted("time", "convert_time", true)
        })
        .unwrap();
        assert_eq!(v[0].trusted_tools, ["convert_time"]);
        assert_eq!(
            mcp::load(&path).unwrap().servers[0].trusted_tools,
            ["convert_time"]
        );
        let v = change_at(&path, &keys, |l| {
            l.set_trusted("time", "convert_time", false)
        })
        .unwrap();
        assert!(v[0].trusted_tools.is_empty());
        let e = change_at(&path, &keys, |l| l.set_trusted("nope", "t", true)).unwrap_err();
        assert_eq!(e.kind, CommandErrorKind::NotFound, "{e:?}");
    }
}
