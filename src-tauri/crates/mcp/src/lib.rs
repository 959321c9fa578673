//! The engine as a Model Context Protocol server (`wyckoff mcp serve`), on the official Rust
//! SDK (`rmcp`). It exposes the agent's model-free, read-only tools — the same
//! implementations, names and argument schemas as in `wyckoff-tools` — plus `stock_events`,
//! over stdio or streamable HTTP on a loopback address. Nothing that writes is exposed.
//!
//! Results are the tools' JSON (with `data_status`, `source`, `as_of` and notes, as the agent
//! sees them), as text and as structured content. A call whose data is `unavailable`, bad
//! arguments or a failed tool is an error result (`isError`), never a protocol crash.
//! The long tools (`screen_stocks`, `run_backtest`) send `notifications/progress` when the
//! client's request carries a progress token.

pub mod agent_tools;
pub mod client;
pub mod events;
mod http_watch;
pub mod offer;
pub mod stdio;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ServerCapabilities, ServerConfig, Tool as McpTool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use wyckoff_agent::{FnTool, ProgressHandle, Tool, ToolContext, ToolError, ToolSpec};
use wyckoff_market::MarketData;
use wyckoff_tools::risk::RiskRules;

/// The tools served, in the agent's order. Each is read-only; `update_portfolio` and every
/// local tool (commands, files, the web) are left out on purpose.
pub const EXPOSED: &[&str] = &[
    wyckoff_tools::search::NAME,
    wyckoff_tools::analyze::NAME,
    wyckoff_tools::portfolio::PORTFOLIO,
    wyckoff_tools::market::OVERVIEW,
    wyckoff_tools::market::HISTORY,
    wyckoff_tools::market_map::NAME,
    wyckoff_tools::sizing::NAME,
    events::NAME,
    wyckoff_tools::screen::NAME,
    wyckoff_tools::backtest::NAME,
];

/// The server's name in `initialize` (clients show it).
pub const SERVER_NAME: &str = "wyckoff";

const INSTRUCTIONS: &str = "Wyckoff Desk's A-share engine, offline over the local cache: \
search stocks, analyse one (Wyckoff diagnosis), the engine's events with why as known on a \
date, market overview and history, a buy sized by its risk (size_position), whole-market screening and backtests (long: pass a \
progressToken), and the user's portfolio (read only). Every result says data_status, source \
and as_of; stale or missing data is said, never estimated.";

/// Errors of starting a server.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "refusing to serve MCP on {0}: only a loopback address (127.0.0.1, ::1, localhost) is allowed, \
         since the server has no authentication"
    )]
    NotLoopback(String),
    #[error("cannot resolve {0:?} to an address: {1}")]
    BadAddress(String, String),
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    #[error("MCP transport failed: {0}")]
    Transport(String),
}

/// Resolves `addr` (`127.0.0.1:8765`, `[::1]:8765`, `localhost:8765`) and refuses anything that
/// is not loopback: every resolved address must be.
pub fn loopback_addr(addr: &str) -> Result<SocketAddr, ServeError> {
    use std::net::ToSocketAddrs;
    let resolved: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| ServeError::BadAddress(addr.to_owned(), e.to_string()))?
        .collect();
    match resolved.first() {
        None => Err(ServeError::BadAddress(
            addr.to_owned(),
            "no address".to_owned(),
        )),
        Some(first) if resolved.iter().all(|a| a.ip().is_loopback()) => Ok(*first),
        Some(_) => Err(ServeError::NotLoopback(addr.to_owned())),
    }
}

/// The exposed tools over one `MarketData`: the agent's own tool objects (so the schemas are
/// the agent's) filtered to [`EXPOSED`], and `stock_events`; sized under the engine's
/// default risk rules ([`engine_tools_under`] takes the user's).
pub fn engine_tools(md: Arc<MarketData>) -> Vec<Arc<dyn Tool>> {
    engine_tools_under(md, RiskRules::default())
}

/// [`engine_tools`] under `rules` (the risk settings of the data home served): what a
/// `size_position` call leaves out of the risk per trade and the largest position, each
/// screen candidate's suggested size and the limits it breaks, and a risk-sized backtest's
/// limits come from them, as they do in the app and the CLI.
pub fn engine_tools_under(md: Arc<MarketData>, rules: RiskRules) -> Vec<Arc<dyn Tool>> {
    let mut by_name: BTreeMap<String, Arc<dyn Tool>> = wyckoff_tools::market_tools(md.clone())
        .into_iter()
        .filter(|t| !t.spec().requires_approval)
        .map(|t| (t.spec().name.clone(), t))
        .collect();
    by_name.insert(
        wyckoff_tools::sizing::NAME.to_owned(),
        wyckoff_tools::sizing::tool_under(md.clone(), rules),
    );
    by_name.insert(
        wyckoff_tools::backtest::NAME.to_owned(),
        wyckoff_tools::backtest::tool_under(md.clone(), rules),
    );
    // The agent's screen_stocks also saves the run for forward tracking; served here it
    // only screens (nothing that writes), with the same name, description and schema, each
    // candidate with its suggested size under the rules.
    let screen_md = md.clone();
    let screen: Arc<dyn Tool> = Arc::new(FnTool::new(
        ToolSpec::new(
            wyckoff_tools::screen::NAME,
            wyckoff_tools::screen::DISPLAY_NAME,
        )
        .background(),
        wyckoff_tools::screen::DESCRIPTION,
        wyckoff_tools::screen::parameters(),
        move |args, ctx| {
            let md = screen_md.clone();
            async move {
                let (result, mut value) =
                    wyckoff_tools::screen::screen(&md, &args, &ctx.progress).await?;
                wyckoff_tools::screen::with_suggested_sizes(&md, &rules, &result, &mut value).await;
                Ok(value)
            }
        },
    ));
    by_name.insert(wyckoff_tools::screen::NAME.to_owned(), screen);
    let events: Arc<dyn Tool> = Arc::new(FnTool::new(
        ToolSpec::new(events::NAME, events::DISPLAY_NAME).concurrency_safe(),
        events::DESCRIPTION,
        events::parameters(),
        move |args, _ctx| {
            let md = md.clone();
            async move { events::run(&md, &args).await }
        },
    ));
    by_name.insert(events::NAME.to_owned(), events);
    EXPOSED
        .iter()
        .filter_map(|name| by_name.remove(*name))
        .collect()
}

/// The agent's description of a tool, as an MCP client sees it: the background tools run to
/// completion in the call here (no task id comes back), so what the agent is told of its
/// task manager is replaced by how to follow progress.
pub fn mcp_description(description: &str, background: bool) -> String {
    if !background {
        return description.to_owned();
    }
    let mut d = description.replace("（后台任务）", "（长任务）");
    for agent_only in ["立即返回 task_id，完成后会收到通知。", "立即返回 task_id。"]
    {
        d = d.replace(agent_only, "");
    }
    d.push_str("运行到完成后返回结果；请求带 progressToken 时发送进度通知。");
    d
}

/// The MCP definition of one agent tool: its JSON schema as is, read-only annotations.
pub fn mcp_tool(t: &dyn Tool) -> McpTool {
    let schema = t.schema();
    let input: JsonObject = match &schema.parameters {
        Value::Object(o) => o.clone(),
        _ => JsonObject::new(),
    };
    McpTool::new(
        schema.name.clone(),
        mcp_description(&schema.description, t.spec().background),
        Arc::new(input),
    )
    .with_title(t.spec().display_name.clone())
    .annotate(
        ToolAnnotations::with_title(t.spec().display_name.clone())
            .read_only(true)
            .destructive(false)
            .idempotent(true),
    )
}

/// What a tool's outcome becomes on the wire: its JSON as text and structured content;
/// `unavailable` data and every error are error results the calling model can read.
pub fn to_result(outcome: Result<Value, ToolError>) -> CallToolResult {
    match outcome {
        Ok(v) => {
            let text = serde_json::to_string_pretty(&v).unwrap_or_else(|_| v.to_string());
            let unavailable = wyckoff_tools::is_unavailable(&v);
            let mut r = if unavailable {
                CallToolResult::error(vec![ContentBlock::text(text)])
            } else {
                CallToolResult::success(vec![ContentBlock::text(text)])
            };
            if v.is_object() {
                r.structured_content = Some(v);
            }
            r
        }
        Err(e) => CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
    }
}

/// The `n`-th progress notification of a call (from 1): `progress` must increase with every
/// notification, whatever the tool says of its fraction, so it counts reports; the tool's
/// stage, detail and percentage go in the message.
pub fn progress_param(
    token: &ProgressToken,
    n: u64,
    stage: &str,
    detail: &str,
    fraction: Option<f32>,
) -> ProgressNotificationParam {
    let mut message = stage.to_owned();
    if !detail.is_empty() {
        message.push_str(" · ");
        message.push_str(detail);
    }
    if let Some(f) = fraction {
        message.push_str(&format!(" ({:.0}%)", f * 100.0));
    }
    ProgressNotificationParam::new(token.clone(), n as f64).with_message(message)
}

/// The MCP server over the engine tools. Cheap to clone: one per HTTP session.
#[derive(Clone)]
pub struct EngineServer {
    tools: Arc<Vec<Arc<dyn Tool>>>,
}

impl EngineServer {
    /// Under the engine's default risk rules.
    pub fn new(md: Arc<MarketData>) -> Self {
        Self::under(md, RiskRules::default())
    }

    /// Under `rules` (the served data home's risk settings).
    pub fn under(md: Arc<MarketData>, rules: RiskRules) -> Self {
        EngineServer {
            tools: Arc::new(engine_tools_under(md, rules)),
        }
    }

    fn find(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.spec().name == name).cloned()
    }
}

/// One progress report on its way to the client.
struct Report {
    stage: String,
    detail: String,
    fraction: Option<f32>,
}

/// Forwards a tool's progress reports to the client as notifications for `token`, in order.
struct ProgressForwarder {
    sender: Arc<std::sync::Mutex<Option<tokio::sync::mpsc::UnboundedSender<Report>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl ProgressForwarder {
    fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Report>();
        let task = tokio::spawn(async move {
            let mut n = 0u64;
            while let Some(p) = rx.recv().await {
                n += 1;
                let param = progress_param(&token, n, &p.stage, &p.detail, p.fraction);
                if let Err(e) = peer.notify_progress(param).await {
                    tracing::debug!("progress notification not sent: {e}");
                    break;
                }
            }
        });
        ProgressForwarder {
            sender: Arc::new(std::sync::Mutex::new(Some(tx))),
            task,
        }
    }

    fn handle(&self) -> ProgressHandle {
        let sender = self.sender.clone();
        ProgressHandle::new(move |p| {
            let guard = sender
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            // after the call has ended, a late report (a worker still winding down) is dropped
            if let Some(tx) = guard.as_ref() {
                let _ = tx.send(Report {
                    stage: p.stage,
                    detail: p.detail,
                    fraction: p.fraction,
                });
            }
        })
    }

    /// Sends what is queued, then stops: every notification goes out before the call's
    /// response, as clients drop progress for a request that has already been answered.
    async fn finish(self) {
        self.sender
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let _ = self.task.await;
    }
}

impl ServerHandler for EngineServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION"))
                    .with_title("Wyckoff Desk"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(
            self.tools.iter().map(|t| mcp_tool(t.as_ref())).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(tool) = self.find(&request.name) else {
            return Err(McpError::invalid_params(
                format!(
                    "unknown tool {:?}; this server has: {}",
                    request.name,
                    EXPOSED.join(", ")
                ),
                None,
            ));
        };
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        let args = match wyckoff_agent::validation::validate_args(&tool.schema().parameters, &args)
        {
            Ok(a) => a,
            Err(e) => {
                return Ok(to_result(Err(ToolError::InvalidArgs(e))).into());
            }
        };
        let forwarder = context
            .meta
            .get_progress_token()
            .map(|token| ProgressForwarder::start(context.peer.clone(), token));
        let progress = forwarder
            .as_ref()
            .map_or_else(ProgressHandle::silent, ProgressForwarder::handle);
        let ctx = ToolContext {
            session_id: "mcp".to_owned(),
            call_id: context.id.to_string(),
            cancel: context.ct.clone(),
            background: None,
            progress,
        };
        tracing::info!(tool = %request.name, "mcp tool call");
        let outcome = tokio::select! {
            r = tool.call(args, ctx) => r,
            () = context.ct.cancelled() => Err(ToolError::Cancelled),
        };
        if let Some(f) = forwarder {
            f.finish().await;
        }
        Ok(to_result(outcome).into())
    }
}

/// Serves MCP on stdin/stdout until the client closes them, under `rules`.
pub async fn serve_stdio(md: Arc<MarketData>, rules: RiskRules) -> Result<(), ServeError> {
    let running = EngineServer::under(md, rules)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::Transport(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| ServeError::Transport(e.to_string()))?;
    Ok(())
}

/// A bound streamable-HTTP listener on a loopback address, at `/mcp`.
pub struct HttpServer {
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
}

impl HttpServer {
    /// Binds `addr` after refusing a non-loopback one.
    pub async fn bind(addr: &str) -> Result<Self, ServeError> {
        let addr = loopback_addr(addr)?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| ServeError::Bind(addr, e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServeError::Bind(addr, e))?;
        Ok(HttpServer { listener, addr })
    }

    /// The endpoint clients connect to.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Serves until `stop` is cancelled, under `rules`.
    pub async fn serve(
        self,
        md: Arc<MarketData>,
        rules: RiskRules,
        stop: CancellationToken,
    ) -> Result<(), ServeError> {
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
        };
        let server = EngineServer::under(md, rules);
        // The SDK's default Host check (loopback names only) stays on: it stops DNS rebinding.
        let config =
            StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token());
        let service: StreamableHttpService<EngineServer, LocalSessionManager> =
            StreamableHttpService::new(move || Ok(server.clone()), Default::default(), config);
        let router = axum::Router::new().nest_service("/mcp", service);
        axum::serve(self.listener, router)
            .with_graceful_shutdown(async move { stop.cancelled_owned().await })
            .await
            .map_err(|e| ServeError::Transport(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use rmcp::model::NumberOrString;
    use serde_json::json;

    #[test]
    fn only_loopback_addresses_are_served() {
        for ok in [
            "127.0.0.1:0",
            "127.0.0.2:8765",
            "[::1]:8765",
            "localhost:8765",
        ] {
            let a = loopback_addr(ok).unwrap();
            assert!(a.ip().is_loopback(), "{ok}");
        }
        for refused in [
            "0.0.0.0:8765",
            "[::]:8765",
            "10.0.0.1:8765",
            "192.168.1.2:80",
        ] {
            assert!(
                matches!(loopback_addr(refused), Err(ServeError::NotLoopback(a)) if a == refused),
                "{refused}"
            );
        }
        for bad in ["127.0.0.1", "nonsense", ""] {
            assert!(
                matches!(loopback_addr(bad), Err(ServeError::BadAddress(..))),
                "{bad}"
            );
        }
    }

    #[test]
    fn background_tools_say_they_run_to_completion_here() {
        let screen = mcp_description(wyckoff_tools::screen::DESCRIPTION, true);
        assert!(!screen.contains("task_id"), "{screen}");
        assert!(!screen.contains("后台任务"), "{screen}");
        assert!(
            screen.starts_with("全市场威科夫漏斗筛选（长任务）"),
            "{screen}"
        );
        assert!(
            screen.ends_with("请求带 progressToken 时发送进度通知。"),
            "{screen}"
        );
        let backtest = mcp_description(wyckoff_tools::backtest::DESCRIPTION, true);
        assert!(!backtest.contains("task_id"), "{backtest}");
        let analyze = wyckoff_tools::analyze::DESCRIPTION;
        assert_eq!(mcp_description(analyze, false), analyze);
    }

    #[test]
    fn progress_counts_reports_and_words_the_stage() {
        let token = ProgressToken(NumberOrString::Number(7));
        let p = progress_param(&token, 3, "漏斗筛选", "8 只股票", Some(0.4));
        assert_eq!(p.progress_token, token);
        assert_eq!(p.progress, 3.0);
        assert_eq!(p.total, None);
        assert_eq!(p.message.as_deref(), Some("漏斗筛选 · 8 只股票 (40%)"));
        let bare = progress_param(&token, 1, "加载", "", None);
        assert_eq!(bare.message.as_deref(), Some("加载"));
    }

    #[test]
    fn results_keep_the_json_and_flag_missing_data_and_errors() {
        let ok = to_result(Ok(json!({"data_status": "stale", "as_of": "2020-06-16"})));
        assert_eq!(ok.is_error, Some(false));
        assert_eq!(
            ok.structured_content,
            Some(json!({"data_status": "stale", "as_of": "2020-06-16"}))
        );
        let missing = to_result(Ok(
            json!({"data_status": "unavailable", "message": "无数据"}),
        ));
        assert_eq!(missing.is_error, Some(true));
        let text = missing.content[0].as_text().unwrap().text.clone();
        assert!(text.contains("无数据"), "{text}");
        let failed = to_result(Err(ToolError::InvalidArgs("bad code".into())));
        assert_eq!(failed.is_error, Some(true));
        assert_eq!(
            failed.content[0].as_text().unwrap().text,
            "invalid arguments: bad code"
        );
        assert_eq!(failed.structured_content, None);
    }
}
