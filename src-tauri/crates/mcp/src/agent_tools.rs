//! Configured MCP servers' tools as agent tools (`mcp__<server>__<tool>`), behind the same
//! approval gate as every other tool: the gate reads each tool's `ToolSpec`, so parallel
//! batches, sub-agents, schedules and the inbox all see the same flags.
//!
//! - A tool needs approval unless the server marks it read-only (`readOnlyHint`) and the
//!   user has not asked to confirm that server's tools; a tool the user trusts never asks
//!   ([`needs_approval`]). Only read-only tools run concurrently.
//! - Each server is one [`ServerHandle`]: connected when first needed (within a time limit);
//!   a server that crashes or hangs gives the model a tool error naming it and is started
//!   again on the next call, at most [`MAX_RESTARTS`] times in a row, then disabled for the
//!   rest of the process with the reason.
//! - The approval dialog names the server (the tool's display name).
//!
//! A session adds them to its registry like this (one hub per process, so connections and
//! tool lists live across sessions):
//!
//! ```ignore
//! let hub = McpHub::with_secrets(secrets.clone(), DEFAULT_CONNECT_TIMEOUT);
//! // when a session is built:
//! hub.reload(home.root()).await?;
//! let (tools, unreachable) = hub.agent_tools().await;
//! for t in tools { registry.register(t); }
//! // unreachable: (server, why) for the log and Settings → MCP
//! ```

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};
use tokio::sync::Mutex;
use wyckoff_agent::{Tool, ToolContext, ToolError, ToolSpec};
use wyckoff_config::NamedSecret;
use wyckoff_config::mcp::{McpServer, McpServers};
use wyckoff_protocol::ToolSchema;

use crate::client::{ClientError, Connection, ToolReport};

/// Failures in a row after which a server is disabled until the process restarts.
pub const MAX_RESTARTS: u32 = 3;
/// How long a server that just failed is left out of new sessions without being started
/// again: a dead server must not hold every session build for its connect time limit.
pub const SESSION_RETRY_AFTER: Duration = Duration::from_secs(30);
/// Longest agent tool name the providers accept (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`).
pub const MAX_TOOL_NAME: usize = 64;

/// The gate's rule for one MCP tool (pure; see the module docs).
pub fn needs_approval(read_only_hint: Option<bool>, always_ask: bool, trusted: bool) -> bool {
    if trusted {
        return false;
    }
    always_ask || read_only_hint != Some(true)
}

/// `mcp__<server>__<tool>` with anything outside `[A-Za-z0-9_-]` as `_`, cut to
/// [`MAX_TOOL_NAME`] characters with a short hash of the full name so two long names stay apart.
pub fn agent_tool_name(server: &str, tool: &str) -> String {
    let clean: String = format!("mcp__{server}__{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.len() <= MAX_TOOL_NAME {
        return clean;
    }
    // FNV-1a: stable across runs and platforms (the name is stored in conversations)
    let hash = format!("{server}\u{0}{tool}")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    let suffix = format!("_{:08x}", hash & 0xffff_ffff);
    format!("{}{suffix}", &clean[..MAX_TOOL_NAME - suffix.len()])
}

/// How deep local `$ref`s are inlined; a recursive schema is cut there to "any value".
const MAX_REF_DEPTH: usize = 8;

/// The server's input schema as an agent tool's parameters, in the subset every provider's
/// wire form takes (the providers translate from there): an object schema, local `$ref`s to
/// `$defs`/`definitions` inlined, without `$schema`, `$id` and the definitions themselves.
pub fn agent_parameters(input_schema: &Value) -> Value {
    let mut schema = match input_schema {
        Value::Object(o) => o.clone(),
        _ => Map::new(),
    };
    let mut defs = Map::new();
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(d)) = schema.remove(key) {
            for (name, def) in d {
                defs.insert(format!("#/{key}/{name}"), def);
            }
        }
    }
    schema.remove("$schema");
    schema.remove("$id");
    let mut out = inline_refs(&Value::Object(schema), &defs, 0);
    if let Value::Object(o) = &mut out {
        o.insert("type".into(), json!("object"));
        o.entry("properties").or_insert_with(|| json!({}));
    }
    out
}

fn inline_refs(v: &Value, defs: &Map<String, Value>, depth: usize) -> Value {
    match v {
        Value::Object(o) => {
            if let Some(Value::String(r)) = o.get("$ref") {
                let resolved = match defs.get(r) {
                    Some(def) if depth < MAX_REF_DEPTH => inline_refs(def, defs, depth + 1),
                    _ => json!({}),
                };
                // keywords beside the $ref (a description) stay
                let mut merged = match resolved {
                    Value::Object(m) => m,
                    _ => Map::new(),
                };
                for (k, val) in o {
                    if k != "$ref" {
                        merged.insert(k.clone(), inline_refs(val, defs, depth));
                    }
                }
                return Value::Object(merged);
            }
            Value::Object(
                o.iter()
                    .map(|(k, val)| (k.clone(), inline_refs(val, defs, depth)))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| inline_refs(x, defs, depth)).collect()),
        other => other.clone(),
    }
}

/// A tool result as the model reads it: the structured content when there is one, else the
/// text; an error result is a tool error.
pub fn result_value(server: &str, r: &CallToolResult) -> Result<Value, ToolError> {
    let text: Vec<String> = r
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect();
    let other = r.content.len() - text.len();
    if r.is_error == Some(true) {
        let msg = if text.is_empty() {
            "the tool failed without a message".to_owned()
        } else {
            text.join("\n")
        };
        return Err(ToolError::Failed(format!("MCP server '{server}': {msg}")));
    }
    let mut out = match &r.structured_content {
        Some(Value::Object(o)) => Value::Object(o.clone()),
        Some(v) => json!({ "result": v }),
        None => json!({ "text": text.join("\n") }),
    };
    if other > 0
        && let Value::Object(o) = &mut out
    {
        o.insert(
            "omitted_content".into(),
            json!(format!("{other} non-text content block(s) not shown")),
        );
    }
    Ok(out)
}

type SecretFn = dyn Fn(&NamedSecret) -> Option<String> + Send + Sync;

struct State {
    conn: Option<Connection>,
    failures: u32,
    disabled: Option<String>,
    /// The last tool list, until the server says it changed (or is started again).
    tools: Option<Vec<ToolReport>>,
    /// Counts connections, so a call that fails after the server was already started
    /// again does not stop the new one.
    generation: u64,
    /// The last failure, kept for the status line (cleared by a success).
    last_error: Option<String>,
    /// When the last failure happened (see [`SESSION_RETRY_AFTER`]).
    failed_at: Option<tokio::time::Instant>,
}

/// How a server of the process stands, for Settings → MCP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    pub name: String,
    /// A connection is open now.
    pub connected: bool,
    /// How many tools it listed last, once it has.
    pub tools: Option<usize>,
    pub last_error: Option<String>,
    /// Why it was disabled (after repeated failures).
    pub disabled: Option<String>,
}

/// One configured server: its connection (opened when needed) and its health.
pub struct ServerHandle {
    entry: McpServer,
    secret: Arc<SecretFn>,
    connect_timeout: Duration,
    state: Mutex<State>,
}

impl ServerHandle {
    pub fn new(entry: McpServer, secret: Arc<SecretFn>, connect_timeout: Duration) -> Self {
        ServerHandle {
            entry,
            secret,
            connect_timeout,
            state: Mutex::new(State {
                conn: None,
                failures: 0,
                disabled: None,
                tools: None,
                generation: 0,
                last_error: None,
                failed_at: None,
            }),
        }
    }

    pub fn name(&self) -> &str {
        &self.entry.name
    }

    /// How it stands now (never connects).
    pub async fn status(&self) -> ServerStatus {
        let s = self.state.lock().await;
        ServerStatus {
            name: self.entry.name.clone(),
            connected: s.conn.is_some(),
            tools: s.tools.as_ref().map(Vec::len),
            last_error: s.last_error.clone(),
            disabled: s.disabled.clone(),
        }
    }

    /// Why the server was disabled, once it has been.
    pub async fn disabled(&self) -> Option<String> {
        self.state.lock().await.disabled.clone()
    }

    async fn connected<'a>(&self, state: &'a mut State) -> Result<&'a Connection, ToolError> {
        if let Some(reason) = &state.disabled {
            return Err(ToolError::Failed(format!(
                "MCP server '{}' is disabled for this session: {reason}",
                self.entry.name
            )));
        }
        if state.conn.is_none() {
            match Connection::open(&self.entry, self.secret.as_ref(), self.connect_timeout).await {
                Ok(c) => {
                    state.conn = Some(c);
                    state.generation += 1;
                }
                Err(e) => return Err(self.failed(state, &e.to_string())),
            }
        }
        state
            .conn
            .as_ref()
            .ok_or_else(|| ToolError::Failed("MCP connection lost".into()))
    }

    /// Counts a failure: the connection is dropped (the next call starts the server again)
    /// and after [`MAX_RESTARTS`] in a row the server is disabled.
    fn failed(&self, state: &mut State, reason: &str) -> ToolError {
        state.conn = None;
        state.tools = None;
        state.failures += 1;
        state.last_error = Some(reason.to_owned());
        state.failed_at = Some(tokio::time::Instant::now());
        let name = &self.entry.name;
        if state.failures >= MAX_RESTARTS {
            let why = format!("{MAX_RESTARTS} failures in a row, the last: {reason}");
            tracing::warn!(server = %name, "MCP server disabled: {why}");
            state.disabled = Some(why.clone());
            return ToolError::Failed(format!(
                "MCP server '{name}' failed and is now disabled for this session ({why})"
            ));
        }
        tracing::warn!(server = %name, "MCP server failed: {reason}");
        ToolError::Failed(format!(
            "MCP server '{name}' failed: {reason} (it is started again on the next call)"
        ))
    }

    /// The server's tools (connecting if needed): the list it gave last, asked again once it
    /// sends `notifications/tools/list_changed`.
    pub async fn tools(&self) -> Result<Vec<ToolReport>, ToolError> {
        let mut state = self.state.lock().await;
        let changed = self.connected(&mut state).await?.take_tools_changed();
        if !changed && let Some(t) = &state.tools {
            return Ok(t.clone());
        }
        let listed = {
            let conn = self.connected(&mut state).await?;
            conn.tools(self.connect_timeout).await
        };
        match listed {
            Ok(t) => {
                state.tools = Some(t.clone());
                state.last_error = None;
                Ok(t)
            }
            Err(e) => Err(self.failed(&mut state, &e.to_string())),
        }
    }

    /// [`ServerHandle::tools`] for a new session: a server that failed less than
    /// [`SESSION_RETRY_AFTER`] ago and has no connection is not started again for it.
    async fn tools_for_session(&self) -> Result<Vec<ToolReport>, ToolError> {
        {
            let state = self.state.lock().await;
            if state.conn.is_none()
                && let Some(at) = state.failed_at
                && at.elapsed() < SESSION_RETRY_AFTER
            {
                let why = state.last_error.as_deref().unwrap_or("it failed");
                return Err(ToolError::Failed(format!(
                    "MCP server '{}' failed moments ago ({why}); it is tried again in {} s at most",
                    self.entry.name,
                    SESSION_RETRY_AFTER
                        .saturating_sub(at.elapsed())
                        .as_secs()
                        .max(1)
                )));
            }
        }
        self.tools().await
    }

    /// Calls `tool`; a transport failure, a crash or a hang (the call's cancel token, which
    /// the registry fires at its time limit) drops the connection.
    pub async fn call(
        &self,
        tool: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<Value, ToolError> {
        let arguments = match args {
            Value::Object(o) => o,
            _ => Map::new(),
        };
        let request = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        // The lock is held to connect, not during the call: the gate lets only read-only
        // tools overlap, and they may.
        let (caller, generation) = {
            let mut state = self.state.lock().await;
            let caller = self.connected(&mut state).await?.caller();
            (caller, state.generation)
        };
        let outcome = tokio::select! {
            r = caller.call(request) => Some(r),
            () = ctx.cancel.cancelled() => None,
        };
        let mut state = self.state.lock().await;
        let current = state.generation == generation && state.conn.is_some();
        let name = &self.entry.name;
        match outcome {
            Some(Ok(r)) => {
                if current {
                    state.failures = 0;
                }
                result_value(name, &r)
            }
            // the server answered with an error: it is alive
            Some(Err(ClientError::Refused { reason, .. })) => {
                if current {
                    state.failures = 0;
                }
                Err(ToolError::Failed(format!("MCP server '{name}': {reason}")))
            }
            Some(Err(e)) if current => Err(self.failed(&mut state, &e.to_string())),
            Some(Err(e)) => Err(ToolError::Failed(format!(
                "MCP server '{name}' failed: {e} (it has been started again since)"
            ))),
            None => {
                // cut off (the registry's time limit, or the turn was cancelled): a hung
                // server is started again on the next call
                if current {
                    self.failed(&mut state, "the call was cut off (time limit or cancel)");
                }
                Err(ToolError::Cancelled)
            }
        }
    }
}

/// One MCP tool as an agent tool.
pub struct McpAgentTool {
    spec: ToolSpec,
    schema: ToolSchema,
    mcp_name: String,
    server: Arc<ServerHandle>,
}

impl McpAgentTool {
    pub fn new(server: Arc<ServerHandle>, tool: &ToolReport) -> Self {
        let entry = &server.entry;
        let trusted = entry.trusted_tools.iter().any(|t| t == &tool.name);
        let approval = needs_approval(tool.read_only, entry.always_ask, trusted);
        let name = agent_tool_name(&entry.name, &tool.name);
        let mut spec = ToolSpec::new(
            name.clone(),
            format!("MCP · {} · {}", entry.name, tool.name),
        );
        if approval {
            spec = spec.requires_approval();
        }
        if tool.read_only == Some(true) {
            spec = spec.concurrency_safe();
        }
        let description = format!(
            "[MCP server {}] {}",
            entry.name,
            tool.description.as_deref().unwrap_or(&tool.name)
        );
        McpAgentTool {
            spec,
            schema: ToolSchema {
                name,
                description,
                parameters: agent_parameters(&tool.input_schema),
            },
            mcp_name: tool.name.clone(),
            server,
        }
    }
}

#[async_trait]
impl Tool for McpAgentTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn schema(&self) -> &ToolSchema {
        &self.schema
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<Value, ToolError> {
        self.server.call(&self.mcp_name, args, &ctx).await
    }
}

/// The configured servers of one process, each connected when first needed and kept
/// across sessions: [`McpHub::agent_tools`] is what a session's registry adds.
pub struct McpHub {
    secret: Arc<SecretFn>,
    connect_timeout: Duration,
    handles: Mutex<Vec<Arc<ServerHandle>>>,
}

impl McpHub {
    pub fn new(secret: Arc<SecretFn>, connect_timeout: Duration) -> Self {
        McpHub {
            secret,
            connect_timeout,
            handles: Mutex::new(Vec::new()),
        }
    }

    /// A hub whose secrets come from `secrets` (the keychain, or `WYCKOFF_MCP_SECRET_<NAME>`).
    pub fn with_secrets(secrets: Arc<wyckoff_config::Secrets>, connect_timeout: Duration) -> Self {
        Self::new(
            Arc::new(move |n: &NamedSecret| {
                secrets.get_named(n).map(|(v, _)| v.expose().to_owned())
            }),
            connect_timeout,
        )
    }

    /// Follows `mcp_servers.json` under a data home root (see [`McpHub::set_servers`]); a
    /// file that cannot be read leaves the servers as they were.
    pub async fn reload(
        &self,
        home_root: &std::path::Path,
    ) -> Result<(), wyckoff_config::mcp::McpConfigError> {
        let servers = wyckoff_config::mcp::load(&wyckoff_config::mcp::path_in(home_root))?;
        self.set_servers(&servers).await;
        Ok(())
    }

    /// Follows the configuration: an unchanged server keeps its connection, a changed one
    /// is started afresh, a removed or disabled one is dropped (a stdio server is stopped).
    pub async fn set_servers(&self, servers: &McpServers) {
        let mut handles = self.handles.lock().await;
        let mut next = Vec::new();
        for entry in servers.servers.iter().filter(|s| s.enabled) {
            let kept = handles.iter().find(|h| h.entry == *entry).cloned();
            next.push(kept.unwrap_or_else(|| {
                Arc::new(ServerHandle::new(
                    entry.clone(),
                    self.secret.clone(),
                    self.connect_timeout,
                ))
            }));
        }
        *handles = next;
    }

    /// How each enabled server of this process stands (nothing is connected for it).
    pub async fn statuses(&self) -> Vec<ServerStatus> {
        let handles = self.handles.lock().await.clone();
        let mut out = Vec::with_capacity(handles.len());
        for h in handles {
            out.push(h.status().await);
        }
        out
    }

    /// Every enabled server's tools as agent tools, and for each server that could not be
    /// reached, why (the session goes on without it). Servers are connected side by side,
    /// so the wait is the slowest one's, not the sum. Sub-agents get none of these unless a
    /// role names them.
    pub async fn agent_tools(&self) -> (Vec<Arc<dyn Tool>>, Vec<(String, String)>) {
        let handles = self.handles.lock().await.clone();
        let mut connecting = tokio::task::JoinSet::new();
        for (i, handle) in handles.iter().cloned().enumerate() {
            connecting.spawn(async move { (i, handle.tools_for_session().await) });
        }
        let mut listed: Vec<Option<Result<Vec<ToolReport>, ToolError>>> =
            handles.iter().map(|_| None).collect();
        while let Some(joined) = connecting.join_next().await {
            match joined {
                Ok((i, result)) => listed[i] = Some(result),
                Err(e) => tracing::error!("MCP connect task failed: {e}"),
            }
        }
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let mut failed = Vec::new();
        for (handle, result) in handles.into_iter().zip(listed) {
            let result = result
                .unwrap_or_else(|| Err(ToolError::Failed("the connect task was lost".into())));
            match result {
                Ok(list) => tools.extend(
                    list.iter()
                        .map(|t| Arc::new(McpAgentTool::new(handle.clone(), t)) as Arc<dyn Tool>),
                ),
                Err(e) => failed.push((handle.name().to_owned(), e.to_string())),
            }
        }
        (tools, failed)
    }
}

/// [`McpHub::agent_tools`] once, over a fresh hub.
pub async fn discover(
    servers: &McpServers,
    secret: Arc<SecretFn>,
    connect_timeout: Duration,
) -> (Vec<Arc<dyn Tool>>, Vec<(String, String)>) {
    let hub = McpHub::new(secret, connect_timeout);
    hub.set_servers(servers).await;
    hub.agent_tools().await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_gate_rule() {
        // (readOnlyHint, always ask, trusted) → needs approval
        let table = [
            (Some(true), false, false, false),
            (Some(true), true, false, true),
            (Some(false), false, false, true),
            (None, false, false, true),
            (None, true, false, true),
            (Some(false), true, true, false),
            (None, false, true, false),
            (Some(true), true, true, false),
        ];
        for (ro, always, trusted, want) in table {
            assert_eq!(
                needs_approval(ro, always, trusted),
                want,
                "{ro:?} {always} {trusted}"
            );
        }
    }

    #[test]
    fn tool_names_fit_every_provider() {
        assert_eq!(
            agent_tool_name("time", "get_current_time"),
            "mcp__time__get_current_time"
        );
        assert_eq!(
            agent_tool_name("fs", "read.file v2"),
            "mcp__fs__read_file_v2"
        );
        let exact = format!("mcp__s__{}", "x".repeat(MAX_TOOL_NAME - 8));
        assert_eq!(exact.len(), MAX_TOOL_NAME);
        assert_eq!(agent_tool_name("s", &"x".repeat(MAX_TOOL_NAME - 8)), exact);
        let long_a = agent_tool_name("s", &format!("{}a", "x".repeat(MAX_TOOL_NAME)));
        let long_b = agent_tool_name("s", &format!("{}b", "x".repeat(MAX_TOOL_NAME)));
        assert_eq!(long_a.len(), MAX_TOOL_NAME);
        assert_eq!(long_b.len(), MAX_TOOL_NAME);
        assert_ne!(long_a, long_b);
        assert_eq!(
            long_a,
            agent_tool_name("s", &format!("{}a", "x".repeat(MAX_TOOL_NAME)))
        );
    }

    #[test]
    fn schemas_become_object_schemas_without_meta_keys() {
        let p = agent_parameters(&json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"tz": {"type": "string"}},
            "required": ["tz"]
        }));
        assert_eq!(
            p,
            json!({"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]})
        );
        assert_eq!(
            agent_parameters(&json!(null)),
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn results_and_error_results() {
        let ok = CallToolResult::structured(json!({"time": "12:00"}));
        assert_eq!(result_value("t", &ok).unwrap(), json!({"time": "12:00"}));
        let text = CallToolResult::success(vec![ContentBlock::text("hello")]);
        assert_eq!(result_value("t", &text).unwrap(), json!({"text": "hello"}));
        let err = CallToolResult::error(vec![ContentBlock::text("bad tz")]);
        assert_eq!(
            result_value("t", &err).unwrap_err().to_string(),
            "MCP server 't': bad tz"
        );
    }
}
