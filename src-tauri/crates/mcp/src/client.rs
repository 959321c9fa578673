//! Connecting to a configured MCP server (`wyckoff mcp test NAME`): start it (stdio) or reach
//! it (streamable HTTP) with the secrets its entry names, within a time limit, and report
//! what it is and which tools it offers. The server's stderr goes to the log, with the
//! secrets given to it masked.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::Tool as McpTool;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde::Serialize;
use tokio::io::{AsyncBufReadExt, BufReader};
use wyckoff_config::NamedSecret;
use wyckoff_config::mcp::{McpServer, McpTransport};

use crate::stdio::{ChildTransport, MAX_MESSAGE_BYTES, too_large_bytes};

/// How long `wyckoff mcp test` waits for a server by default (start, handshake, tool list).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(
        "MCP server '{server}': secret '{secret}' is not set (store it with `wyckoff mcp secret {secret}`, or set {env_var})"
    )]
    MissingSecret {
        server: String,
        secret: String,
        env_var: String,
    },
    #[error("MCP server '{server}': cannot start {command:?}: {reason}")]
    Spawn {
        server: String,
        command: String,
        reason: String,
    },
    #[error("MCP server '{server}' did not answer within {secs} s")]
    Timeout { server: String, secs: u64 },
    #[error("MCP server '{server}': {reason}")]
    Protocol { server: String, reason: String },
    /// The server's answer was over the size a message may have (it is alive).
    #[error(
        "MCP server '{server}' answered a message too large: {bytes} bytes, over the {limit_mib} MiB a message may have"
    )]
    TooLarge {
        server: String,
        bytes: u64,
        limit_mib: usize,
    },
    /// An HTTP server's answer was over the size a message may have; the SDK closed the
    /// connection on it (its exact size is not known).
    #[error(
        "MCP server '{server}' answered a message too large: over the {limit_mib} MiB a message may have (the connection was closed)"
    )]
    TooLargeOverHttp { server: String, limit_mib: usize },
    /// The server answered a request with an error (it is alive).
    #[error("MCP server '{server}' refused: {reason}")]
    Refused { server: String, reason: String },
}

/// One tool as the server describes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolReport {
    pub name: String,
    pub description: Option<String>,
    /// The server's `readOnlyHint` (`None`: not said, which means "may write").
    pub read_only: Option<bool>,
    pub input_schema: serde_json::Value,
}

/// What `wyckoff mcp test` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerReport {
    /// The configured name.
    pub server: String,
    /// The server's own name and version from `initialize`.
    pub name: String,
    pub version: String,
    pub protocol_version: String,
    pub tools: Vec<ToolReport>,
}

fn tool_report(t: &McpTool) -> ToolReport {
    ToolReport {
        name: t.name.to_string(),
        description: t.description.as_ref().map(ToString::to_string),
        read_only: t.annotations.as_ref().and_then(|a| a.read_only_hint),
        input_schema: t.schema_as_json_value(),
    }
}

/// How long a failed handshake waits for the rest of the server's stderr.
const STDERR_GRACE: Duration = Duration::from_millis(500);
/// Lines of a failed server's stderr kept in the error.
pub const STDERR_TAIL_LINES: usize = 5;

/// A handshake error with the last lines the server wrote on stderr (already masked).
pub fn with_stderr(error: &str, stderr: &[String]) -> String {
    let tail: Vec<&str> = stderr
        .iter()
        .map(String::as_str)
        .filter(|l| !l.trim().is_empty())
        .collect();
    if tail.is_empty() {
        return error.to_owned();
    }
    let from = tail.len().saturating_sub(STDERR_TAIL_LINES);
    format!("{error}; the server said: {}", tail[from..].join(" | "))
}

/// Replaces every secret value in `line` with `***` (the server may print its own key).
pub fn mask(line: &str, secrets: &[String]) -> String {
    secrets
        .iter()
        .filter(|s| !s.is_empty())
        .fold(line.to_owned(), |acc, s| acc.replace(s.as_str(), "***"))
}

/// The value for a `Authorization` header: a bare token gets the Bearer scheme.
pub fn authorization_value(secret: &str) -> String {
    if secret.contains(' ') {
        secret.to_owned()
    } else {
        format!("Bearer {secret}")
    }
}

/// Called when a server says its tool list changed.
pub type OnToolsChanged = Arc<dyn Fn() + Send + Sync>;

/// The client side of a connection: names us, and notes `notifications/tools/list_changed`
/// (and says so to whoever asked to hear it).
#[derive(Clone, Default)]
pub struct Watcher {
    tools_changed: Arc<AtomicBool>,
    on_change: Option<OnToolsChanged>,
}

impl rmcp::ClientHandler for Watcher {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::default(),
            rmcp::model::Implementation::new("wyckoff-desk", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, _context: rmcp::service::NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::SeqCst);
        if let Some(on_change) = &self.on_change {
            on_change();
        }
    }
}

/// Calls tools of one connection; cheap to clone.
#[derive(Clone)]
pub struct Caller {
    server: String,
    peer: rmcp::Peer<RoleClient>,
    /// Raised by an HTTP connection's client once an answer was over the limit.
    too_large: Option<Arc<AtomicBool>>,
}

impl Caller {
    /// Calls one tool. A transport failure (a crashed server) is [`ClientError::Protocol`];
    /// an error answer is [`ClientError::Refused`].
    pub async fn call(
        &self,
        request: rmcp::model::CallToolRequestParams,
    ) -> Result<rmcp::model::CallToolResult, ClientError> {
        self.peer
            .call_tool(request)
            .await
            .map_err(|e| classify(&self.server, e, self.too_large.as_deref()))
    }
}

/// A request's failure: an error answer is [`ClientError::Refused`] (or
/// [`ClientError::TooLarge`] when it stands for a message over the limit), anything else
/// [`ClientError::Protocol`].
fn classify(server: &str, e: rmcp::ServiceError, too_large: Option<&AtomicBool>) -> ClientError {
    match e {
        rmcp::ServiceError::McpError(err) => match too_large_bytes(&err) {
            Some(bytes) => ClientError::TooLarge {
                server: server.to_owned(),
                bytes,
                limit_mib: MAX_MESSAGE_BYTES / (1024 * 1024),
            },
            None => ClientError::Refused {
                server: server.to_owned(),
                reason: err.message.to_string(),
            },
        },
        // The SDK closes an HTTP connection on an answer over the limit and only logs it.
        _ if too_large.is_some_and(|f| f.load(Ordering::SeqCst)) => ClientError::TooLargeOverHttp {
            server: server.to_owned(),
            limit_mib: MAX_MESSAGE_BYTES / (1024 * 1024),
        },
        other => ClientError::Protocol {
            server: server.to_owned(),
            reason: other.to_string(),
        },
    }
}

/// A live connection to one server.
pub struct Connection {
    pub server: String,
    service: RunningService<RoleClient, Watcher>,
    tools_changed: Arc<AtomicBool>,
    too_large: Option<Arc<AtomicBool>>,
}

impl Connection {
    /// Starts or reaches `entry` and completes the handshake within `timeout`. `secret`
    /// resolves a named secret (the keychain, or its environment variable).
    pub async fn open(
        entry: &McpServer,
        secret: &(dyn Fn(&NamedSecret) -> Option<String> + Sync),
        timeout: Duration,
    ) -> Result<Connection, ClientError> {
        Self::open_watching(entry, secret, timeout, None).await
    }

    /// [`Connection::open`], calling `on_change` whenever the server says its tool list
    /// changed (from the connection's own task: it must not wait on the connection).
    pub async fn open_watching(
        entry: &McpServer,
        secret: &(dyn Fn(&NamedSecret) -> Option<String> + Sync),
        timeout: Duration,
        on_change: Option<OnToolsChanged>,
    ) -> Result<Connection, ClientError> {
        let server = entry.name.clone();
        let need = |name: &str| -> Result<String, ClientError> {
            let named = NamedSecret(name.to_owned());
            secret(&named).ok_or_else(|| ClientError::MissingSecret {
                server: server.clone(),
                secret: name.to_owned(),
                env_var: named.env_var(),
            })
        };
        let protocol = |e: String| ClientError::Protocol {
            server: server.clone(),
            reason: e,
        };
        let watcher = Watcher {
            tools_changed: Arc::default(),
            on_change,
        };
        let tools_changed = watcher.tools_changed.clone();
        let http = crate::http_watch::WatchedHttp::new().map_err(|e| protocol(e.to_string()))?;
        let too_large = matches!(entry.transport, McpTransport::Http { .. }).then(|| http.flag());
        let handshake = async {
            match &entry.transport {
                McpTransport::Stdio { command, args, env } => {
                    let mut values = Vec::new();
                    let mut cmd = tokio::process::Command::new(command);
                    cmd.args(args);
                    for e in env {
                        let v = need(&e.secret)?;
                        cmd.env(&e.var, &v);
                        values.push(v);
                    }
                    let (transport, stderr) =
                        ChildTransport::spawn(cmd).map_err(|e| ClientError::Spawn {
                            server: server.clone(),
                            command: command.clone(),
                            reason: e.to_string(),
                        })?;
                    let (tail_tx, mut tail_rx) = tokio::sync::mpsc::unbounded_channel();
                    if let Some(stderr) = stderr {
                        let name = server.clone();
                        tokio::spawn(async move {
                            let mut lines = BufReader::new(stderr).lines();
                            while let Ok(Some(line)) = lines.next_line().await {
                                let line = mask(&line, &values);
                                tracing::info!(server = %name, "mcp server stderr: {line}");
                                let _ = tail_tx.send(line);
                            }
                        });
                    }
                    match watcher.clone().serve(transport).await {
                        Ok(service) => Ok(service),
                        Err(e) => {
                            // what the server said before it failed is the useful part; its
                            // last lines arrive as its pipe closes
                            let mut said = Vec::new();
                            let deadline = tokio::time::Instant::now() + STDERR_GRACE;
                            while let Ok(Some(line)) =
                                tokio::time::timeout_at(deadline, tail_rx.recv()).await
                            {
                                said.push(line);
                            }
                            Err(protocol(with_stderr(&e.to_string(), &said)))
                        }
                    }
                }
                McpTransport::Http { url, header_secret } => {
                    let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                    if let Some(h) = header_secret {
                        let v = need(&h.secret)?;
                        // Authorization goes as a header of our own, whole: the SDK's
                        // auth header always puts `Bearer ` in front, which would turn a
                        // `Basic …` secret into `Bearer Basic …`.
                        let v = if h.header.eq_ignore_ascii_case("authorization") {
                            authorization_value(&v)
                        } else {
                            v
                        };
                        let name = http::HeaderName::from_bytes(h.header.as_bytes())
                            .map_err(|e| protocol(e.to_string()))?;
                        let mut value = http::HeaderValue::from_str(&v).map_err(|_| {
                            protocol(format!("secret '{}' is not a valid header value", h.secret))
                        })?;
                        value.set_sensitive(true);
                        config = config.custom_headers(HashMap::from([(name, value)]));
                    }
                    let transport = StreamableHttpClientTransport::with_client(http, config);
                    watcher
                        .clone()
                        .serve(transport)
                        .await
                        .map_err(|e| protocol(e.to_string()))
                }
            }
        };
        let service = match tokio::time::timeout(timeout, handshake).await {
            Ok(r) => r?,
            Err(_) => {
                // Dropping the handshake kills a stdio server from a task of its own; give it
                // a moment to run, so a caller that ends its runtime now leaves no process.
                tokio::time::sleep(Duration::from_millis(200)).await;
                return Err(ClientError::Timeout {
                    server: server.clone(),
                    secs: timeout.as_secs(),
                });
            }
        };
        Ok(Connection {
            server,
            service,
            tools_changed,
            too_large,
        })
    }

    /// Whether the server said its tool list changed since the last call (and clears it).
    pub fn take_tools_changed(&self) -> bool {
        self.tools_changed.swap(false, Ordering::SeqCst)
    }

    /// The server's tools, within `timeout`.
    pub async fn tools(&self, timeout: Duration) -> Result<Vec<ToolReport>, ClientError> {
        let tools = tokio::time::timeout(timeout, self.service.list_all_tools())
            .await
            .map_err(|_| ClientError::Timeout {
                server: self.server.clone(),
                secs: timeout.as_secs(),
            })?
            .map_err(|e| classify(&self.server, e, self.too_large.as_deref()))?;
        Ok(tools.iter().map(tool_report).collect())
    }

    /// Calls one tool (see [`Caller::call`]).
    pub async fn call(
        &self,
        request: rmcp::model::CallToolRequestParams,
    ) -> Result<rmcp::model::CallToolResult, ClientError> {
        self.caller().call(request).await
    }

    /// A handle that calls tools without holding the connection (calls may overlap).
    pub fn caller(&self) -> Caller {
        Caller {
            server: self.server.clone(),
            peer: self.service.peer().clone(),
            too_large: self.too_large.clone(),
        }
    }

    /// Name, version and tools of the server.
    pub async fn report(&self, timeout: Duration) -> Result<ServerReport, ClientError> {
        let info = self.service.peer_info();
        let (name, version, protocol_version) = match info.as_deref() {
            Some(i) => (
                i.server_info
                    .as_ref()
                    .map(|s| s.name.clone())
                    .unwrap_or_default(),
                i.server_info
                    .as_ref()
                    .map(|s| s.version.clone())
                    .unwrap_or_default(),
                i.protocol_version.to_string(),
            ),
            None => Default::default(),
        };
        Ok(ServerReport {
            server: self.server.clone(),
            name,
            version,
            protocol_version,
            tools: self.tools(timeout).await?,
        })
    }

    /// Ends the session (a stdio server is stopped).
    pub async fn close(self) {
        if let Err(e) = self.service.cancel().await {
            tracing::debug!(server = %self.server, "closing MCP connection: {e}");
        }
    }
}

/// Connects, reports and disconnects: `wyckoff mcp test`.
pub async fn probe(
    entry: &McpServer,
    secret: &(dyn Fn(&NamedSecret) -> Option<String> + Sync),
    timeout: Duration,
) -> Result<ServerReport, ClientError> {
    let started = tokio::time::Instant::now();
    let conn = Connection::open(entry, secret, timeout).await?;
    let left = timeout.saturating_sub(started.elapsed());
    let report = conn.report(left).await;
    conn.close().await;
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked_in_server_output() {
        let secrets = vec!["sk-123".to_owned(), String::new()];
        assert_eq!(
            mask("auth with sk-123 failed (sk-123)", &secrets),
            "auth with *** failed (***)"
        );
        assert_eq!(mask("nothing here", &secrets), "nothing here");
    }

    #[test]
    fn a_failed_handshake_quotes_the_last_stderr_lines() {
        assert_eq!(with_stderr("closed", &[]), "closed");
        assert_eq!(with_stderr("closed", &[" ".into()]), "closed");
        let lines: Vec<String> = (1..=STDERR_TAIL_LINES + 1)
            .map(|i| format!("l{i}"))
            .collect();
        assert_eq!(
            with_stderr("closed", &lines),
            "closed; the server said: l2 | l3 | l4 | l5 | l6"
        );
    }

    #[test]
    fn a_bare_token_gets_the_bearer_scheme() {
        assert_eq!(authorization_value("abc"), "Bearer abc");
        assert_eq!(authorization_value("Basic Zm9v"), "Basic Zm9v");
        assert_eq!(authorization_value("Bearer abc"), "Bearer abc");
    }
}
