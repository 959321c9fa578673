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

use crate::client::{ClientError, Connection, OnToolsChanged, ToolReport};
pub use crate::offer::{LeftOut, MAX_TOOL_NAME, Placed, agent_tool_name};

/// Failures in a row after which a server is disabled until the process restarts.
pub const MAX_RESTARTS: u32 = 3;
/// How long a server that just failed is left out of new sessions without being started
/// again: a dead server must not hold every session build for its connect time limit.
pub const SESSION_RETRY_AFTER: Duration = Duration::from_secs(30);
/// The gate's rule for one MCP tool (pure; see the module docs).
pub fn needs_approval(read_only_hint: Option<bool>, always_ask: bool, trusted: bool) -> bool {
    if trusted {
        return false;
    }
    always_ask || read_only_hint != Some(true)
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
    on_change: Option<OnToolsChanged>,
}

impl ServerHandle {
    pub fn new(entry: McpServer, secret: Arc<SecretFn>, connect_timeout: Duration) -> Self {
        Self::watching(entry, secret, connect_timeout, None)
    }

    /// A handle whose connections call `on_change` when the server's tool list changes.
    pub fn watching(
        entry: McpServer,
        secret: Arc<SecretFn>,
        connect_timeout: Duration,
        on_change: Option<OnToolsChanged>,
    ) -> Self {
        ServerHandle {
            entry,
            secret,
            connect_timeout,
            on_change,
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
            match Connection::open_watching(
                &self.entry,
                self.secret.as_ref(),
                self.connect_timeout,
                self.on_change.clone(),
            )
            .await
            {
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

    /// The tools as known without starting the server: listed again when it said they
    /// changed, else the last list (none before the first).
    async fn known_tools(&self) -> Option<Vec<ToolReport>> {
        let mut state = self.state.lock().await;
        let changed = state
            .conn
            .as_ref()
            .is_some_and(Connection::take_tools_changed);
        if changed {
            let listed = match state.conn.as_ref() {
                Some(conn) => conn.tools(self.connect_timeout).await,
                None => return state.tools.clone(),
            };
            match listed {
                Ok(t) => {
                    state.tools = Some(t);
                    state.last_error = None;
                }
                Err(e) => {
                    self.failed(&mut state, &e.to_string());
                }
            }
        }
        state.tools.clone()
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
            // it answered, too much: alive too
            Some(Err(e @ ClientError::TooLarge { .. })) => {
                if current {
                    state.failures = 0;
                }
                Err(ToolError::Failed(e.to_string()))
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
    /// The agent tool for `tool` of `server`, named as `placed` says.
    pub fn new(server: Arc<ServerHandle>, tool: &ToolReport, placed: &Placed) -> Self {
        let entry = &server.entry;
        let trusted = entry.trusted_tools.iter().any(|t| t == &tool.name);
        let approval = needs_approval(tool.read_only, entry.always_ask, trusted);
        let name = placed.name.clone();
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
        let what = tool.description.as_deref().unwrap_or(&tool.name);
        // a renamed tool says its real name: another tool of the server has the plain one
        let description = if placed.renamed {
            format!("[MCP server {}, tool \"{}\"] {what}", entry.name, tool.name)
        } else {
            format!("[MCP server {}] {what}", entry.name)
        };
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

/// What the servers offer a session now: the tools, and where every listed tool stands.
#[derive(Default)]
struct Offer {
    tools: Arc<Vec<Arc<dyn Tool>>>,
    placed: Vec<Placed>,
}

struct HubInner {
    secret: Arc<SecretFn>,
    connect_timeout: Duration,
    handles: Mutex<Vec<Arc<ServerHandle>>>,
    /// The cap on all servers' tools together, from the list.
    max_total: std::sync::atomic::AtomicU32,
    /// Each server's last list that went into the offer, kept while it is not connected.
    lists: Mutex<std::collections::HashMap<String, Vec<ToolReport>>>,
    offer: std::sync::RwLock<Arc<Offer>>,
    /// Counts offers made, for whoever waits on a change.
    changed: tokio::sync::watch::Sender<u64>,
}

impl HubInner {
    fn current(&self) -> Arc<Offer> {
        self.offer
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Places the listed tools, builds the offered ones and makes them the offer; what
    /// changed in what is left out or renamed goes to the log.
    async fn make_offer(&self, lists: Vec<(Arc<ServerHandle>, Vec<ToolReport>)>) -> Arc<Offer> {
        let max_total = self.max_total.load(std::sync::atomic::Ordering::SeqCst);
        let refs: Vec<(&McpServer, &[ToolReport])> = lists
            .iter()
            .map(|(h, t)| (&h.entry, t.as_slice()))
            .collect();
        let placed = crate::offer::place(&refs, max_total);
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let mut at = placed.iter();
        for (handle, listed) in &lists {
            for (t, p) in listed.iter().zip(at.by_ref()) {
                if p.left_out.is_none() {
                    tools.push(Arc::new(McpAgentTool::new(handle.clone(), t, p)));
                }
            }
        }
        log_changes(&self.current().placed, &placed);
        {
            let mut kept = self.lists.lock().await;
            kept.clear();
            for (h, listed) in &lists {
                kept.insert(h.name().to_owned(), listed.clone());
            }
        }
        let offer = Arc::new(Offer {
            tools: Arc::new(tools),
            placed,
        });
        *self
            .offer
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = offer.clone();
        self.changed.send_modify(|n| *n += 1);
        offer
    }

    /// A server said its tools changed: the offer is made again from what each server has
    /// now (no server is started for it), so open sessions see the new list.
    async fn refresh(&self) {
        let handles = self.handles.lock().await.clone();
        let kept = self.lists.lock().await.clone();
        let mut lists = Vec::new();
        for h in handles {
            if h.disabled().await.is_some() {
                continue;
            }
            let listed = match h.known_tools().await {
                Some(t) => Some(t),
                None => kept.get(h.name()).cloned(),
            };
            if let Some(t) = listed {
                lists.push((h, t));
            }
        }
        self.make_offer(lists).await;
    }
}

/// Tools named in one log line at most (a server may list thousands).
const LOGGED_NAMES: usize = 10;

/// Says in the log what is newly left out (one line per server and reason) or renamed.
fn log_changes(before: &[Placed], now: &[Placed]) {
    let new: Vec<&Placed> = now
        .iter()
        .filter(|p| {
            !before
                .iter()
                .any(|b| b.server == p.server && b.tool == p.tool && b == *p)
        })
        .collect();
    let mut groups: Vec<(&str, &LeftOut, Vec<&str>)> = Vec::new();
    for p in &new {
        if let Some(why) = &p.left_out {
            match groups
                .iter_mut()
                .find(|(s, w, _)| *s == p.server && *w == why)
            {
                Some((_, _, tools)) => tools.push(&p.tool),
                None => groups.push((&p.server, why, vec![&p.tool])),
            }
        } else if p.renamed {
            tracing::warn!(
                server = %p.server, tool = %p.tool,
                "MCP tool offered as {} (another tool has its name after cleaning)", p.name
            );
        }
    }
    for (server, why, tools) in groups {
        let more = tools.len().saturating_sub(LOGGED_NAMES);
        let mut names = tools[..tools.len().min(LOGGED_NAMES)].join(", ");
        if more > 0 {
            names.push_str(&format!(" and {more} more"));
        }
        tracing::warn!(
            server = %server,
            "{} MCP tool(s) left out ({why}): {names}; see `wyckoff mcp tools`",
            tools.len()
        );
    }
}

/// The configured servers of one process, each connected when first needed and kept
/// across sessions. A session's registry takes [`McpHub::source`]: the offered tools as
/// they are at each model request, so a server's changed tool list reaches open sessions.
pub struct McpHub {
    inner: Arc<HubInner>,
}

/// The hub's offered tools, for a session's registry.
struct HubSource(Arc<HubInner>);

impl wyckoff_agent::ToolSource for HubSource {
    fn tools(&self) -> Arc<Vec<Arc<dyn Tool>>> {
        self.0.current().tools.clone()
    }
}

impl McpHub {
    pub fn new(secret: Arc<SecretFn>, connect_timeout: Duration) -> Self {
        McpHub {
            inner: Arc::new(HubInner {
                secret,
                connect_timeout,
                handles: Mutex::new(Vec::new()),
                max_total: std::sync::atomic::AtomicU32::new(
                    wyckoff_config::mcp::DEFAULT_MAX_TOOLS_TOTAL,
                ),
                lists: Mutex::new(std::collections::HashMap::new()),
                offer: std::sync::RwLock::new(Arc::new(Offer::default())),
                changed: tokio::sync::watch::Sender::new(0),
            }),
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
        self.inner.max_total.store(
            servers.total_tool_cap(),
            std::sync::atomic::Ordering::SeqCst,
        );
        let mut handles = self.inner.handles.lock().await;
        let mut next = Vec::new();
        for entry in servers.servers.iter().filter(|s| s.enabled) {
            let kept = handles.iter().find(|h| h.entry == *entry).cloned();
            next.push(kept.unwrap_or_else(|| {
                let hub = Arc::downgrade(&self.inner);
                let on_change: OnToolsChanged = Arc::new(move || {
                    let hub = hub.clone();
                    tokio::spawn(async move {
                        if let Some(hub) = hub.upgrade() {
                            hub.refresh().await;
                        }
                    });
                });
                Arc::new(ServerHandle::watching(
                    entry.clone(),
                    self.inner.secret.clone(),
                    self.inner.connect_timeout,
                    Some(on_change),
                ))
            }));
        }
        *handles = next;
    }

    /// How each enabled server of this process stands (nothing is connected for it).
    pub async fn statuses(&self) -> Vec<ServerStatus> {
        let handles = self.inner.handles.lock().await.clone();
        let mut out = Vec::with_capacity(handles.len());
        for h in handles {
            out.push(h.status().await);
        }
        out
    }

    /// The offered tools as they are at each look (for a session's registry).
    pub fn source(&self) -> Arc<dyn wyckoff_agent::ToolSource> {
        Arc::new(HubSource(self.inner.clone()))
    }

    /// Where every tool the servers listed stands in the offer now: its agent name, whether
    /// it was renamed, and why it is left out.
    pub fn placed(&self) -> Vec<Placed> {
        self.inner.current().placed.clone()
    }

    /// Changes whenever the offer is made again.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.changed.subscribe()
    }

    /// Every enabled server's offered tools as agent tools, and for each server that could
    /// not be reached, why (the session goes on without it, unless it listed its tools
    /// before and is not disabled: they stay offered). Servers are connected side by
    /// side, so the wait is the slowest one's, not the sum. Sub-agents get none of these
    /// unless a role names them.
    pub async fn agent_tools(&self) -> (Vec<Arc<dyn Tool>>, Vec<(String, String)>) {
        let handles = self.inner.handles.lock().await.clone();
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
        let kept = self.inner.lists.lock().await.clone();
        let mut lists = Vec::new();
        let mut failed = Vec::new();
        for (handle, result) in handles.into_iter().zip(listed) {
            let result = result
                .unwrap_or_else(|| Err(ToolError::Failed("the connect task was lost".into())));
            match result {
                Ok(list) => lists.push((handle, list)),
                Err(e) => {
                    failed.push((handle.name().to_owned(), e.to_string()));
                    // the offer is every open session's too: a server that failed but is not
                    // disabled keeps the tools it listed, so a session that had them can
                    // still call them (the call starts it again, or says why not)
                    if handle.disabled().await.is_none()
                        && let Some(list) = kept.get(handle.name())
                    {
                        lists.push((handle, list.clone()));
                    }
                }
            }
        }
        let offer = self.inner.make_offer(lists).await;
        (offer.tools.as_ref().clone(), failed)
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
