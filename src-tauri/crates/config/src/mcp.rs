//! MCP servers the agent may use (`wyckoff mcp add|list|remove|enable|disable`): a list kept
//! in `mcp_servers.json` in the data home. Secrets never appear here: an environment variable
//! or an HTTP header only names a keychain secret (`mcp:NAME`, see [`crate::secrets`]), read
//! when the server is started.
//!
//! A file of its own rather than a field of `Settings`: that struct crosses IPC whole and is
//! typed in the UI, which has no MCP page yet.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub const MCP_FILE: &str = "mcp_servers.json";
pub const CURRENT_VERSION: u32 = 1;
/// Most servers one home may configure.
pub const MAX_SERVERS: usize = 32;
/// Longest MCP tool name a server entry may trust.
pub const MAX_TOOL_NAME: usize = 128;
/// Tools of one server offered to the model when its entry sets no cap: a server with
/// thousands of tools would otherwise put all their schemas in every model request.
pub const DEFAULT_MAX_TOOLS_PER_SERVER: u32 = 40;
/// Tools of all servers together offered to the model when the list sets no cap (the
/// providers take about 128 tools in a request, and the desk has its own).
pub const DEFAULT_MAX_TOOLS_TOTAL: u32 = 80;
/// The range a cap (per server or in total) may be set in.
pub const MAX_TOOLS_RANGE: (u32, u32) = (1, 128);

/// An environment variable of a stdio server, its value read from a named secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvSecret {
    pub var: String,
    pub secret: String,
}

/// An HTTP header of a streamable-HTTP server, its value read from a named secret
/// (`Authorization: Bearer …` when the header is `Authorization` and the value has no scheme).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeaderSecret {
    pub header: String,
    pub secret: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum McpTransport {
    /// A command started on demand, speaking MCP on its stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        #[serde(default)]
        env: Vec<EnvSecret>,
    },
    /// A streamable-HTTP endpoint.
    Http {
        url: String,
        #[serde(default)]
        header_secret: Option<HeaderSecret>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServer {
    /// `[a-z0-9_-]{1,32}`: it becomes part of tool names (`mcp__<server>__<tool>`).
    pub name: String,
    pub transport: McpTransport,
    pub enabled: bool,
    /// Every call of this server's tools asks, even those it marks read-only.
    pub always_ask: bool,
    /// Tools of this server (their MCP names) the user trusts: they run without asking,
    /// whatever the server says of them and even when the server always asks.
    #[serde(default)]
    pub trusted_tools: Vec<String>,
    /// Most tools of this server offered to the model (none: [`DEFAULT_MAX_TOOLS_PER_SERVER`]);
    /// the rest are left out and named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tools: Option<u32>,
    /// The tools the user picked (MCP names): only these are offered. None: the server's
    /// first tools, in its order, up to the cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_tools: Option<Vec<String>>,
}

impl McpServer {
    /// The cap on this server's tools in effect.
    pub fn tool_cap(&self) -> u32 {
        self.max_tools.unwrap_or(DEFAULT_MAX_TOOLS_PER_SERVER)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct McpServers {
    pub version: u32,
    pub servers: Vec<McpServer>,
    /// Most tools of all servers together offered to the model (none:
    /// [`DEFAULT_MAX_TOOLS_TOTAL`]); servers are served in their order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tools: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpConfigError {
    #[error("{field} is invalid: {reason}")]
    Invalid { field: String, reason: String },
    #[error("no MCP server named '{0}'")]
    NotFound(String),
    #[error("an MCP server named '{0}' exists already; remove it first")]
    Exists(String),
    #[error(
        "{path} was written by a newer Wyckoff Desk (version {found}, this one understands up to {supported}); not overwriting it"
    )]
    NewerVersion {
        path: String,
        found: u32,
        supported: u32,
    },
    #[error("{path} is not a valid MCP server list ({reason}); fix or remove it")]
    Corrupt { path: String, reason: String },
    #[error("cannot access {path}: {reason}")]
    Io { path: String, reason: String },
}

fn invalid(field: impl Into<String>, reason: impl Into<String>) -> McpConfigError {
    McpConfigError::Invalid {
        field: field.into(),
        reason: reason.into(),
    }
}

/// Server and secret names: lowercase letters, digits, '-' and '_', 1–32 characters.
pub fn is_valid_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

fn is_env_var(var: &str) -> bool {
    !var.is_empty()
        && !var.starts_with(|c: char| c.is_ascii_digit())
        && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_header_name(h: &str) -> bool {
    !h.is_empty()
        && h.chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
}

fn check_cap(field: String, cap: Option<u32>) -> Result<(), McpConfigError> {
    let (lo, hi) = MAX_TOOLS_RANGE;
    match cap {
        Some(n) if !(lo..=hi).contains(&n) => Err(invalid(
            field,
            format!("must be between {lo} and {hi} (got {n})"),
        )),
        _ => Ok(()),
    }
}

fn check_tool_name(field: &str, tool: &str) -> Result<(), McpConfigError> {
    if tool.is_empty() || tool.len() > MAX_TOOL_NAME || tool.contains(char::is_whitespace) {
        return Err(invalid(
            field,
            format!("'{tool}': a tool name of 1–{MAX_TOOL_NAME} characters without spaces"),
        ));
    }
    Ok(())
}

fn is_http_url(s: &str) -> bool {
    let rest = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"));
    rest.is_some_and(|r| !r.is_empty() && !r.starts_with('/') && !r.contains(char::is_whitespace))
}

impl McpServer {
    pub fn validate(&self) -> Result<(), McpConfigError> {
        if !is_valid_name(&self.name) {
            return Err(invalid(
                "name",
                format!(
                    "'{}': use 1–32 lowercase letters, digits, '-' or '_'",
                    self.name
                ),
            ));
        }
        let field = |f: &str| format!("{}.{f}", self.name);
        check_cap(field("max_tools"), self.max_tools)?;
        if let Some(picked) = &self.offered_tools {
            let mut seen = HashSet::new();
            for t in picked {
                check_tool_name(&field("offered_tools"), t)?;
                if !seen.insert(t.as_str()) {
                    return Err(invalid(
                        field("offered_tools"),
                        format!("'{t}' given twice"),
                    ));
                }
            }
            if picked.len() > self.tool_cap() as usize {
                return Err(invalid(
                    field("offered_tools"),
                    format!(
                        "{} tools picked, over this server's cap of {}; pick fewer or raise the cap",
                        picked.len(),
                        self.tool_cap()
                    ),
                ));
            }
        }
        match &self.transport {
            McpTransport::Stdio { command, env, .. } => {
                if command.trim().is_empty() || command.contains('\0') {
                    return Err(invalid(field("command"), "the command is empty"));
                }
                let mut vars = HashSet::new();
                for e in env {
                    if !is_env_var(&e.var) {
                        return Err(invalid(
                            field("env"),
                            format!("'{}' is not an environment variable name", e.var),
                        ));
                    }
                    if !is_valid_name(&e.secret) {
                        return Err(invalid(
                            field("env"),
                            format!(
                                "secret name '{}': use 1–32 lowercase letters, digits, '-' or '_'",
                                e.secret
                            ),
                        ));
                    }
                    if !vars.insert(e.var.as_str()) {
                        return Err(invalid(field("env"), format!("'{}' given twice", e.var)));
                    }
                }
            }
            McpTransport::Http { url, header_secret } => {
                if !is_http_url(url) {
                    return Err(invalid(
                        field("url"),
                        format!("'{url}' is not an http(s) URL"),
                    ));
                }
                if let Some(h) = header_secret {
                    if !is_header_name(&h.header) {
                        return Err(invalid(
                            field("header_secret"),
                            format!("'{}' is not an HTTP header name", h.header),
                        ));
                    }
                    if !is_valid_name(&h.secret) {
                        return Err(invalid(
                            field("header_secret"),
                            format!(
                                "secret name '{}': use 1–32 lowercase letters, digits, '-' or '_'",
                                h.secret
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

impl McpServers {
    pub fn validate(&self) -> Result<(), McpConfigError> {
        if self.servers.len() > MAX_SERVERS {
            return Err(invalid(
                "servers",
                format!("at most {MAX_SERVERS} (got {})", self.servers.len()),
            ));
        }
        check_cap("max_tools".to_owned(), self.max_tools)?;
        let mut names = HashSet::new();
        for s in &self.servers {
            s.validate()?;
            if !names.insert(s.name.as_str()) {
                return Err(McpConfigError::Exists(s.name.clone()));
            }
        }
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&McpServer> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// Adds a server; a name in use or an invalid entry changes nothing.
    pub fn add(&mut self, server: McpServer) -> Result<(), McpConfigError> {
        if self.get(&server.name).is_some() {
            return Err(McpConfigError::Exists(server.name));
        }
        let mut next = self.clone();
        next.servers.push(server);
        next.validate()?;
        *self = next;
        Ok(())
    }

    pub fn remove(&mut self, name: &str) -> Result<McpServer, McpConfigError> {
        let i = self
            .servers
            .iter()
            .position(|s| s.name == name)
            .ok_or_else(|| McpConfigError::NotFound(name.to_owned()))?;
        Ok(self.servers.remove(i))
    }

    /// Marks a server "always ask" (every tool call asks) or not.
    pub fn set_always_ask(&mut self, name: &str, always_ask: bool) -> Result<(), McpConfigError> {
        self.server_mut(name)?.always_ask = always_ask;
        Ok(())
    }

    /// Trusts one tool of a server (it runs without asking) or stops trusting it.
    pub fn set_trusted(
        &mut self,
        name: &str,
        tool: &str,
        trusted: bool,
    ) -> Result<(), McpConfigError> {
        check_tool_name("tool", tool)?;
        let s = self.server_mut(name)?;
        s.trusted_tools.retain(|t| t != tool);
        if trusted {
            s.trusted_tools.push(tool.to_owned());
        }
        Ok(())
    }

    /// The tools of a server the user picks to offer (None: its first ones up to the cap);
    /// an invalid pick changes nothing.
    pub fn set_offered(
        &mut self,
        name: &str,
        tools: Option<Vec<String>>,
    ) -> Result<(), McpConfigError> {
        let mut next = self.clone();
        next.server_mut(name)?.offered_tools = tools;
        next.validate()?;
        *self = next;
        Ok(())
    }

    /// The cap on one server's tools (`Some(name)`) or on all together (`None`); `max`
    /// None goes back to the default. An invalid cap changes nothing.
    pub fn set_max_tools(
        &mut self,
        server: Option<&str>,
        max: Option<u32>,
    ) -> Result<(), McpConfigError> {
        let mut next = self.clone();
        match server {
            Some(name) => next.server_mut(name)?.max_tools = max,
            None => next.max_tools = max,
        }
        next.validate()?;
        *self = next;
        Ok(())
    }

    /// The cap on all servers' tools together in effect.
    pub fn total_tool_cap(&self) -> u32 {
        self.max_tools.unwrap_or(DEFAULT_MAX_TOOLS_TOTAL)
    }

    fn server_mut(&mut self, name: &str) -> Result<&mut McpServer, McpConfigError> {
        self.servers
            .iter_mut()
            .find(|s| s.name == name)
            .ok_or_else(|| McpConfigError::NotFound(name.to_owned()))
    }

    pub fn set_enabled(&mut self, name: &str, enabled: bool) -> Result<(), McpConfigError> {
        let s = self
            .servers
            .iter_mut()
            .find(|s| s.name == name)
            .ok_or_else(|| McpConfigError::NotFound(name.to_owned()))?;
        s.enabled = enabled;
        Ok(())
    }
}

/// The file under a data home root.
pub fn path_in(root: &Path) -> PathBuf {
    root.join(MCP_FILE)
}

/// Reads the list; a missing file is an empty list.
pub fn load(path: &Path) -> Result<McpServers, McpConfigError> {
    let p = || path.display().to_string();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(McpServers {
                version: CURRENT_VERSION,
                servers: Vec::new(),
                max_tools: None,
            });
        }
        Err(e) => {
            return Err(McpConfigError::Io {
                path: p(),
                reason: e.to_string(),
            });
        }
    };
    let doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| McpConfigError::Corrupt {
            path: p(),
            reason: e.to_string(),
        })?;
    let found = doc.get("version").and_then(serde_json::Value::as_u64);
    if let Some(found) = found.filter(|v| *v > u64::from(CURRENT_VERSION)) {
        return Err(McpConfigError::NewerVersion {
            path: p(),
            found: u32::try_from(found).unwrap_or(u32::MAX),
            supported: CURRENT_VERSION,
        });
    }
    let list: McpServers = serde_json::from_value(doc).map_err(|e| McpConfigError::Corrupt {
        path: p(),
        reason: e.to_string(),
    })?;
    list.validate()?;
    Ok(list)
}

/// Validates, then writes atomically (temp file + rename).
pub fn save(path: &Path, list: &McpServers) -> Result<(), McpConfigError> {
    list.validate()?;
    let io = |e: std::io::Error| McpConfigError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let doc = McpServers {
        version: CURRENT_VERSION,
        ..list.clone()
    };
    let text = serde_json::to_string_pretty(&doc).map_err(|e| invalid("servers", e.to_string()))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn stdio(name: &str) -> McpServer {
        McpServer {
            name: name.into(),
            transport: McpTransport::Stdio {
                command: "uvx".into(),
                args: vec!["mcp-server-time".into()],
                env: vec![],
            },
            enabled: true,
            always_ask: false,
            trusted_tools: vec![],
            max_tools: None,
            offered_tools: None,
        }
    }

    fn http(name: &str, url: &str, header: Option<(&str, &str)>) -> McpServer {
        McpServer {
            name: name.into(),
            transport: McpTransport::Http {
                url: url.into(),
                header_secret: header.map(|(h, s)| HeaderSecret {
                    header: h.into(),
                    secret: s.into(),
                }),
            },
            enabled: true,
            always_ask: false,
            trusted_tools: vec![],
            max_tools: None,
            offered_tools: None,
        }
    }

    #[test]
    fn names_are_checked_exactly_at_their_limits() {
        let table: &[(&str, bool)] = &[
            ("time", true),
            ("a", true),
            (&"x".repeat(32), true),
            (&"x".repeat(33), false),
            ("", false),
            ("Time", false),
            ("a b", false),
            ("a__b", true),
            ("zh-行情", false),
        ];
        for (name, ok) in table {
            assert_eq!(stdio(name).validate().is_ok(), *ok, "{name:?}");
        }
    }

    #[test]
    fn transports_are_validated() {
        let with_env = |var: &str, secret: &str| McpServer {
            transport: McpTransport::Stdio {
                command: "srv".into(),
                args: vec![],
                env: vec![EnvSecret {
                    var: var.into(),
                    secret: secret.into(),
                }],
            },
            ..stdio("s")
        };
        assert!(with_env("API_KEY", "tushare-key").validate().is_ok());
        assert!(with_env("1KEY", "k").validate().is_err());
        assert!(with_env("A-B", "k").validate().is_err());
        assert!(with_env("KEY", "Bad Name").validate().is_err());
        let empty = McpServer {
            transport: McpTransport::Stdio {
                command: " ".into(),
                args: vec![],
                env: vec![],
            },
            ..stdio("s")
        };
        assert!(empty.validate().is_err());
        assert!(
            http("h", "http://127.0.0.1:8765/mcp", None)
                .validate()
                .is_ok()
        );
        assert!(
            http("h", "https://x.example/mcp", Some(("Authorization", "tok")))
                .validate()
                .is_ok()
        );
        assert!(http("h", "ftp://x", None).validate().is_err());
        assert!(http("h", "http:///mcp", None).validate().is_err());
        assert!(
            http("h", "http://x/mcp", Some(("Bad Header", "tok")))
                .validate()
                .is_err()
        );
        assert!(
            http("h", "http://x/mcp", Some(("X-Key", "Tok")))
                .validate()
                .is_err()
        );
    }

    #[test]
    fn add_remove_enable_keep_names_unique() {
        let mut list = McpServers::default();
        list.add(stdio("time")).unwrap();
        assert_eq!(
            list.add(stdio("time")),
            Err(McpConfigError::Exists("time".into()))
        );
        assert!(list.add(stdio("Bad")).is_err());
        assert_eq!(list.servers.len(), 1, "a refused add changes nothing");
        list.set_enabled("time", false).unwrap();
        assert!(!list.get("time").unwrap().enabled);
        assert_eq!(
            list.set_enabled("nope", true),
            Err(McpConfigError::NotFound("nope".into()))
        );
        assert_eq!(list.remove("time").unwrap().name, "time");
        assert!(list.remove("time").is_err());
    }

    #[test]
    fn always_ask_and_trusted_tools() {
        let mut list = McpServers::default();
        list.add(stdio("time")).unwrap();
        list.set_always_ask("time", true).unwrap();
        assert!(list.get("time").unwrap().always_ask);
        list.set_trusted("time", "get_current_time", true).unwrap();
        list.set_trusted("time", "get_current_time", true).unwrap();
        assert_eq!(
            list.get("time").unwrap().trusted_tools,
            ["get_current_time"]
        );
        list.set_trusted("time", "get_current_time", false).unwrap();
        assert!(list.get("time").unwrap().trusted_tools.is_empty());
        assert!(
            list.set_trusted("time", &"t".repeat(MAX_TOOL_NAME), true)
                .is_ok()
        );
        assert!(
            list.set_trusted("time", &"t".repeat(MAX_TOOL_NAME + 1), true)
                .is_err()
        );
        assert!(list.set_trusted("time", "a b", true).is_err());
        assert!(list.set_trusted("time", "", true).is_err());
        assert_eq!(
            list.set_always_ask("nope", true),
            Err(McpConfigError::NotFound("nope".into()))
        );
    }

    #[test]
    fn caps_and_picks_are_checked_exactly_at_their_limits() {
        let (lo, hi) = MAX_TOOLS_RANGE;
        let mut list = McpServers::default();
        list.add(stdio("time")).unwrap();
        // (server or total, cap) → accepted
        for (server, cap, ok) in [
            (Some("time"), Some(lo), true),
            (Some("time"), Some(hi), true),
            (Some("time"), Some(lo - 1), false),
            (Some("time"), Some(hi + 1), false),
            (None, Some(hi), true),
            (None, Some(hi + 1), false),
            (None, None, true),
        ] {
            let before = list.clone();
            assert_eq!(
                list.set_max_tools(server, cap).is_ok(),
                ok,
                "{server:?} {cap:?}"
            );
            if !ok {
                assert_eq!(list, before, "a refused cap changes nothing");
            }
        }
        assert_eq!(list.total_tool_cap(), DEFAULT_MAX_TOOLS_TOTAL);
        list.set_max_tools(Some("time"), Some(2)).unwrap();
        let pick = |names: &[&str]| Some(names.iter().map(|n| (*n).to_owned()).collect());
        list.set_offered("time", pick(&["a", "b"])).unwrap();
        // a pick over the server's cap, a name twice, a bad name: refused, nothing changed
        for bad in [&["a", "b", "c"][..], &["a", "a"], &["a b"]] {
            assert!(list.set_offered("time", pick(bad)).is_err(), "{bad:?}");
            assert_eq!(list.get("time").unwrap().offered_tools, pick(&["a", "b"]));
        }
        // a cap below the pick is refused too
        assert!(list.set_max_tools(Some("time"), Some(1)).is_err());
        list.set_offered("time", None).unwrap();
        assert!(list.set_offered("nope", None).is_err());
    }

    #[test]
    fn at_most_max_servers() {
        let mut list = McpServers::default();
        for i in 0..MAX_SERVERS {
            list.add(stdio(&format!("s{i}"))).unwrap();
        }
        assert!(matches!(
            list.add(stdio("one-more")),
            Err(McpConfigError::Invalid { .. })
        ));
        assert_eq!(list.servers.len(), MAX_SERVERS);
    }

    #[test]
    fn saves_and_loads_and_refuses_newer_or_corrupt_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_in(dir.path());
        assert_eq!(load(&path).unwrap().servers, vec![]);
        let mut list = load(&path).unwrap();
        list.add(stdio("time")).unwrap();
        list.add(http(
            "web",
            "http://127.0.0.1:1/mcp",
            Some(("Authorization", "web-token")),
        ))
        .unwrap();
        save(&path, &list).unwrap();
        let back = load(&path).unwrap();
        assert_eq!(back.servers, list.servers);
        assert_eq!(back.version, CURRENT_VERSION);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"type\": \"http\""), "{text}");

        std::fs::write(&path, r#"{"version": 2, "servers": []}"#).unwrap();
        assert!(matches!(
            load(&path),
            Err(McpConfigError::NewerVersion { found: 2, .. })
        ));
        std::fs::write(&path, "{not json").unwrap();
        assert!(matches!(load(&path), Err(McpConfigError::Corrupt { .. })));
    }
}
