//! Settings → MCP (issue 26 item 5): the configured MCP servers (`mcp_servers.json` in the
//! data home, the list `wyckoff mcp` edits), add, switch, always-ask, remove, and a test
//! that connects and lists the server's tools. Each session picks the list up as it is.

use std::time::Duration;

use serde::Serialize;
use specta::Type;
use tauri::State;
use wyckoff_config::NamedSecret;
use wyckoff_config::mcp::{self, McpConfigError, McpServer, McpServers, McpTransport};

use crate::chat::ChatState;
use crate::commands::chat::services;
use crate::state::AppState;

/// How long a test may take to connect and list the tools.
const TEST_TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Debug, Clone, Serialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum McpCommandError {
    /// Nothing changed: a bad name, command or URL, a taken name, an unreadable list.
    Invalid {
        message: String,
    },
    NotFound {
        message: String,
    },
    /// The server could not be reached or answered wrongly (the test's finding).
    Failed {
        message: String,
    },
}

impl From<McpConfigError> for McpCommandError {
    fn from(e: McpConfigError) -> Self {
        let message = e.to_string();
        match e {
            McpConfigError::NotFound(_) => McpCommandError::NotFound { message },
            _ => McpCommandError::Invalid { message },
        }
    }
}

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
    /// `None` until a session of this app has used the server.
    pub status: Option<McpStatusView>,
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
            status: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct McpToolView {
    pub name: String,
    pub description: Option<String>,
    /// The server's `readOnlyHint`: read-only tools run without asking (unless the server
    /// always asks).
    pub read_only: bool,
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

fn views(list: &McpServers) -> Vec<McpServerView> {
    list.servers.iter().map(McpServerView::from).collect()
}

/// Loads the list, changes it, validates and saves it whole (nothing written on an error).
fn change(
    state: &AppState,
    edit: impl FnOnce(&mut McpServers) -> Result<(), McpConfigError>,
) -> Result<Vec<McpServerView>, McpCommandError> {
    let path = path(state);
    let mut list = mcp::load(&path)?;
    edit(&mut list)?;
    mcp::save(&path, &list)?;
    Ok(views(&list))
}

/// The list with how each server stands in this app's sessions.
#[tauri::command]
#[specta::specta]
pub async fn mcp_servers(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Vec<McpServerView>, McpCommandError> {
    let mut list = views(&mcp::load(&path(&state))?);
    // Without a model there is no session yet: the list alone is still shown.
    if let Ok(services) = services(&state, &chat).await {
        for st in services.mcp().statuses().await {
            if let Some(v) = list.iter_mut().find(|v| v.name == st.name) {
                v.status = Some(McpStatusView {
                    connected: st.connected,
                    tools: st.tools.map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
                    last_error: st.last_error,
                    disabled: st.disabled,
                });
            }
        }
    }
    Ok(list)
}

/// Adds a server: `target` is an http(s) URL (streamable HTTP) or a command started on
/// demand with `args` (stdio). Secrets for its environment or header are set with
/// `wyckoff mcp add --env/--header-secret` and `wyckoff mcp secret`.
#[tauri::command]
#[specta::specta]
pub async fn mcp_add(
    state: State<'_, AppState>,
    name: String,
    target: String,
    args: Vec<String>,
) -> Result<Vec<McpServerView>, McpCommandError> {
    let target = target.trim().to_owned();
    let transport = if target.starts_with("http://") || target.starts_with("https://") {
        McpTransport::Http {
            url: target,
            header_secret: None,
        }
    } else {
        McpTransport::Stdio {
            command: target,
            args: args.into_iter().filter(|a| !a.is_empty()).collect(),
            env: Vec::new(),
        }
    };
    let server = McpServer {
        name: name.trim().to_owned(),
        transport,
        enabled: true,
        always_ask: false,
        trusted_tools: Vec::new(),
    };
    change(&state, |list| list.add(server))
}

#[tauri::command]
#[specta::specta]
pub async fn mcp_set_enabled(
    state: State<'_, AppState>,
    name: String,
    enabled: bool,
) -> Result<Vec<McpServerView>, McpCommandError> {
    change(&state, |list| list.set_enabled(&name, enabled))
}

/// Every call of the server's tools asks, even those it marks read-only.
#[tauri::command]
#[specta::specta]
pub async fn mcp_set_always_ask(
    state: State<'_, AppState>,
    name: String,
    always_ask: bool,
) -> Result<Vec<McpServerView>, McpCommandError> {
    change(&state, |list| list.set_always_ask(&name, always_ask))
}

#[tauri::command]
#[specta::specta]
pub async fn mcp_remove(
    state: State<'_, AppState>,
    name: String,
) -> Result<Vec<McpServerView>, McpCommandError> {
    change(&state, |list| list.remove(&name).map(|_| ()))
}

/// Connects to the server (within 20 s) and lists its tools; a failure says why, with the
/// last lines the server wrote on stderr (secrets masked).
#[tauri::command]
#[specta::specta]
pub async fn mcp_test(
    state: State<'_, AppState>,
    name: String,
) -> Result<McpTestView, McpCommandError> {
    let list = mcp::load(&path(&state))?;
    let entry = list
        .get(&name)
        .ok_or_else(|| McpCommandError::from(McpConfigError::NotFound(name.clone())))?;
    let secrets = state.secrets.clone();
    let secret = move |n: &NamedSecret| secrets.get_named(n).map(|(v, _)| v.expose().to_owned());
    let report = wyckoff_mcp::client::probe(entry, &secret, TEST_TIMEOUT)
        .await
        .map_err(|e| McpCommandError::Failed {
            message: e.to_string(),
        })?;
    Ok(McpTestView {
        name: report.name,
        version: report.version,
        tools: report
            .tools
            .into_iter()
            .map(|t| McpToolView {
                name: t.name,
                description: t.description,
                read_only: t.read_only == Some(true),
            })
            .collect(),
    })
}
