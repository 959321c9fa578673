//! Assembles a ready-to-run agent session from settings, secrets and the data home, for
//! the `wyckoff` CLI and the desktop app alike. Assembly only: the loop is the agent
//! crate's; printing, exit codes and IPC are the callers'.
//!
//! - [`Desk`]: the one door. Every front end opens the core with [`Desk::open`] and runs
//!   unattended work with [`Desk::tick`]; the rest of this list is what a desk holds.
//! - [`Services`]: what a process shares (data home, settings, secrets, one HTTP client,
//!   the `wyckoff.db` pool with the conversation store, market data and background
//!   tasks). Open once; [`Services::apply_settings`] takes changed settings in place.
//! - [`Services::session`]: a [`Session`] for a new or a stored conversation, with its
//!   providers ([`providers::resolve`]: settings' main/light/fallback models or explicit
//!   [`ModelOverrides`]), the tool registry (market tools + `check_background_tasks`),
//!   the system prompt ([`prompt`]), the approver and the scratchpad directory.
//! - [`Session::run_turn`]: recalls long-term memories for the user message and puts
//!   them in this turn's system prompt ([`memory`], with a `memory_recall` event), adds
//!   the Beijing time to the user message ([`beijing`]), stores the user message before
//!   the model is called and every message the turn produces as it is produced, then the
//!   turn's outcome. Compaction flushes preferences into memory before it summarises.
//! - [`Session::extract_memories`]: the end of a session (seed 记忆写入).
//!
//! ```no_run
//! # async fn demo() -> Result<(), wyckoff_session::SessionError> {
//! use std::sync::Arc;
//! use tokio_util::sync::CancellationToken;
//! use wyckoff_agent::{CollectingSink, HeadlessApprover};
//! use wyckoff_config::{DataHome, Secrets};
//! use wyckoff_session::{ModelOverrides, Services, SessionOptions};
//!
//! let home = DataHome::from_env();
//! let (settings, _notes) = wyckoff_config::settings::load(&home.settings_path())?;
//! let services = Services::open(home, settings, Arc::new(Secrets::system())).await?;
//! let mut session = services
//!     .session(SessionOptions {
//!         overrides: ModelOverrides::default(),       // the settings' models
//!         continue_session: None,                     // or Some(conversation id)
//!         approver: Arc::new(HeadlessApprover::Never), // the app: a PendingApprovals
//!     })
//!     .await?;
//! let sink = CollectingSink::new();                   // the app: the turn's IPC channel
//! let report = session.run_turn("分析 000001", sink, CancellationToken::new()).await?;
//! println!("{} → {:?}", session.id(), report.outcome);
//! # Ok(()) }
//! ```

pub mod approvals;
pub mod beijing;
pub mod bot_store;
pub mod connection;
pub mod desk;
mod desk_account;
pub mod desk_bot_serve;
pub mod desk_bots;
pub mod desk_chart_image;
mod desk_history;
mod desk_ledger;
pub mod desk_ledger_closes;
mod desk_market_map;
mod desk_mcp_serve;
mod desk_minute;
pub mod desk_onboarding;
pub mod desk_quotes;
mod desk_risk;
mod desk_work;
pub mod domain;
mod error;
pub mod events;
pub mod hub;
pub mod memory;
mod message_extras;
pub mod prompt;
pub mod providers;
pub mod push_relay;
pub mod reports;
pub mod retention;
pub mod scheduler;
#[cfg(feature = "testing")]
pub mod testing;

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use wyckoff_agent::{
    Approver, BackgroundTaskManager, Clock, EventSink, FileArchive, LlmCompactor, QueryHistory,
    ResultStore, Runtime, RuntimeConfig, SkillCatalog, SkillSource, SystemClock, TaskOwner,
    ToolRegistry, TurnOutcome,
};
use wyckoff_config::secrets::{DataSecret, SecretId};
use wyckoff_config::settings::{DataSourceKind, Settings, SharedSettings};
use wyckoff_config::{DataHome, ProcessLease, Secrets};
use wyckoff_inbox::InboxStore;
use wyckoff_llm::Provider;
use wyckoff_llm::{HttpClient, HttpSettings};
use wyckoff_market::{MarketConfig, MarketData};
use wyckoff_memory::{
    Conversation, ConversationStore, ExtractionOutcome, MemoryError, MemoryStore,
};
use wyckoff_protocol::{Message, RuntimeEvent, SkillUse, UserOrigin};

pub use desk::{Answerer, Desk, DeskOptions, TickReport};
pub use desk_ledger::CashDirection;
pub use error::SessionError;
pub use hub::{
    Attendance, ConversationHub, HubOptions, Settled, StartedTurn, TurnEnd, TurnMeta, TurnOutput,
};
pub use providers::{ModelOverrides, ResolvedProviders};
/// The clock, Beijing time and `YYYYMMDD` date helpers, for the CLI and the app, which
/// reach the lower crates through the session.
pub use wyckoff_time as time;

/// Characters of the first user message used as a new conversation's title.
const TITLE_CHARS: usize = 30;
/// Where compaction archives removed messages (and `query_history` reopens them).
const CONTEXT_ARCHIVE_DIR: &str = "context-archive";

/// What one process shares between sessions, opened once for the life of the process.
/// Changed settings are applied in place ([`Services::apply_settings`]): the pool, the
/// stores and the background task manager never reopen.
pub struct Services {
    home: DataHome,
    /// The current settings: sessions read their models, tool and approval timeouts,
    /// file roots and web-fetch reach from here when they are built.
    settings: SharedSettings,
    secrets: Arc<Secrets>,
    /// Built when first needed (loading the TLS roots is most of an offline open) and
    /// again when the proxy changes; providers built earlier keep the old one.
    http: RwLock<Option<HttpClient>>,
    /// The `wyckoff.db` pool every store shares.
    pool: sqlx::SqlitePool,
    conversations: ConversationStore,
    memories: MemoryStore,
    market: Arc<MarketData>,
    background: Arc<BackgroundTaskManager>,
    clock: Arc<dyn Clock>,
    /// This process's lease on the data home: its turns and tasks carry the id, so
    /// another process starting up never marks them interrupted while this one lives.
    lease: Arc<ProcessLease>,
    /// The built-in and user skills, re-read when the skills folder changes.
    skills: Arc<SkillCatalog>,
    /// The approval inbox; its audit log receives every session gate's decisions.
    inbox: InboxStore,
    /// The configured MCP servers, each connected when a session first needs its tools
    /// and kept for the process.
    mcp: Arc<wyckoff_mcp::agent_tools::McpHub>,
    /// Finished tasks and schedule runs, approvals waiting: to the push channels that
    /// take them.
    push: Arc<push_relay::PushRelay>,
    /// The chat bots: their conversations' sessions offer the model no writer.
    bots: bot_store::BotStore,
}

/// How to build one session.
pub struct SessionOptions {
    pub overrides: ModelOverrides,
    /// Continue this stored conversation; `None` starts a new one.
    pub continue_session: Option<String>,
    /// Answers approvals: `HeadlessApprover` in the CLI, `PendingApprovals` in the app.
    pub approver: Arc<dyn Approver>,
}

impl Services {
    /// Opens the data home (creating it), `wyckoff.db` with every crate's migrations,
    /// market data (offline when `WYCKOFF_OFFLINE=1`) and the background task manager,
    /// and removes memories past their retention (90 days; preferences stay).
    pub async fn open(
        home: DataHome,
        settings: Settings,
        secrets: Arc<Secrets>,
    ) -> Result<Services, SessionError> {
        Self::open_with_clock(home, settings, secrets, Arc::new(SystemClock)).await
    }

    /// [`Services::open`] with an injected clock (timestamps, the Beijing time line).
    pub async fn open_with_clock(
        home: DataHome,
        settings: Settings,
        secrets: Arc<Secrets>,
        clock: Arc<dyn Clock>,
    ) -> Result<Services, SessionError> {
        Self::open_shared(home, SharedSettings::new(settings), secrets, clock).await
    }

    /// [`Services::open_with_clock`] on settings the caller shares (the app's one copy):
    /// changes go through [`Services::apply_settings`].
    pub async fn open_shared(
        home: DataHome,
        shared: SharedSettings,
        secrets: Arc<Secrets>,
        clock: Arc<dyn Clock>,
    ) -> Result<Services, SessionError> {
        let settings = shared.get();
        home.ensure()?;
        let lease = ProcessLease::for_process(&home)?;
        let stage = tracing::info_span!(target: "wyckoff::stage", "database");
        let pool = wyckoff_memory::open_pool(home.db_path()).await?;
        drop(stage);
        let stage = tracing::info_span!(target: "wyckoff::stage", "retention");
        let conversations = ConversationStore::new(pool.clone()).with_owner(lease.owner());
        let memories = MemoryStore::with_clock(pool.clone(), clock.clone());
        match memories.prune(clock.now()).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(removed = n, "memories past their retention removed"),
            // Old memories only cost recall a little: the app still opens.
            Err(e) => tracing::warn!("cannot prune old memories: {e}"),
        }
        let days = u32::try_from(settings.retention_days).unwrap_or(30);
        match retention::prune(home.root(), &pool, clock.now().into(), days).await {
            Ok(r) if !r.removed.is_empty() || !r.removed_tasks.is_empty() => tracing::info!(
                removed = r.removed.len(),
                tasks = r.removed_tasks.len(),
                kept = r.kept_referenced,
                "files and task rows past their retention removed"
            ),
            Ok(_) => {}
            // Old files only cost disk space: the app still opens.
            Err(e) => tracing::warn!("retention pass failed: {e}"),
        }
        drop(stage);
        let stage = tracing::info_span!(target: "wyckoff::stage", "market");
        let mut market_cfg = market_config(&home, &settings, &secrets)?;
        // One clock for the desk: freshness and the breaker read the time the quotes do.
        market_cfg.clock = clock.clone();
        let market = Arc::new(MarketData::open_with_pool(pool.clone(), market_cfg).await?);
        drop(stage);
        let stage = tracing::info_span!(target: "wyckoff::stage", "stores");
        let background = BackgroundTaskManager::with_owner(
            pool.clone(),
            clock.clone(),
            Some(ResultStore::new(home.tool_results_dir())),
            TaskOwner {
                id: lease.owner().to_owned(),
                is_alive: {
                    let root = home.root().to_path_buf();
                    Arc::new(move |owner: &str| wyckoff_config::lease::is_alive_at(&root, owner))
                },
            },
        )
        .await?;
        let skills = Arc::new(SkillCatalog::new(home.skills_dir()));
        let push = Arc::new(push_relay::PushRelay::open(pool.clone(), secrets.clone()).await?);
        {
            let (relay, clock) = (push.clone(), clock.clone());
            background.on_finish(Arc::new(move |task| {
                let (relay, now) = (relay.clone(), clock.now());
                Box::pin(async move { relay.task_finished(&task, now).await })
            }));
        }
        let inbox = InboxStore::new(pool.clone()).await?.with_on_queued({
            let (relay, clock) = (push.clone(), clock.clone());
            Arc::new(move |request| {
                let (relay, now) = (relay.clone(), clock.now());
                Box::pin(async move { relay.approval_queued(&request, now).await })
            })
        });
        let bots = bot_store::BotStore::new(pool.clone()).await?;
        let mcp = Arc::new(wyckoff_mcp::agent_tools::McpHub::with_secrets(
            secrets.clone(),
            wyckoff_mcp::client::DEFAULT_CONNECT_TIMEOUT,
        ));
        drop(stage);
        Ok(Services {
            bots,
            skills,
            inbox,
            mcp,
            push,
            home,
            settings: shared,
            secrets,
            http: RwLock::new(None),
            pool,
            conversations,
            memories,
            market,
            background,
            clock,
            lease,
        })
    }

    pub fn home(&self) -> &DataHome {
        &self.home
    }
    /// The settings in use now.
    pub fn settings(&self) -> Settings {
        self.settings.get()
    }

    /// The shared client, built on first use: an invalid proxy setting fails what needs
    /// the network, not a command that works offline.
    fn http(&self) -> Result<HttpClient, SessionError> {
        let built = match self.http.read() {
            Ok(h) => h.clone(),
            Err(p) => p.into_inner().clone(),
        };
        if let Some(http) = built {
            return Ok(http);
        }
        let http = http_client(&self.settings())?;
        let mut slot = match self.http.write() {
            Ok(h) => h,
            Err(p) => p.into_inner(),
        };
        Ok(slot.get_or_insert(http).clone())
    }

    /// Takes new settings in place: a changed proxy rebuilds the shared HTTP client,
    /// changed data sources reconfigure market data's source chain; everything else
    /// (models, timeouts, file roots, web-fetch reach, retention) is read from here when
    /// the next session is built or the next retention pass runs. Nothing reopens.
    /// Sessions already built keep what they were built with. `true` when anything changed.
    pub async fn apply_settings(&self, settings: Settings) -> Result<bool, SessionError> {
        let old = self.settings();
        if old == settings {
            return Ok(false);
        }
        if old.proxy != settings.proxy {
            // built now, so an invalid proxy is refused with the settings that name it
            let http = Some(http_client(&settings)?);
            match self.http.write() {
                Ok(mut h) => *h = http,
                Err(p) => *p.into_inner() = http,
            }
        }
        if old.data_sources != settings.data_sources {
            self.reload_market_sources_for(&settings).await?;
        }
        self.settings.replace(settings);
        Ok(true)
    }

    /// Rebuilds market data's source chain from the current settings and credentials
    /// (after a data-source token was saved or removed).
    pub async fn reload_market_sources(&self) -> Result<(), SessionError> {
        self.reload_market_sources_for(&self.settings()).await
    }

    async fn reload_market_sources_for(&self, settings: &Settings) -> Result<(), SessionError> {
        let cfg = market_config(&self.home, settings, &self.secrets)?;
        self.market
            .reconfigure_sources(&cfg.sources, cfg.fetch_on_read)
            .await;
        Ok(())
    }
    /// The shared `wyckoff.db` pool (for stores of other crates: schedules).
    pub fn pool(&self) -> &sqlx::SqlitePool {
        &self.pool
    }
    /// This process's lease id (what it writes as the owner of its work).
    pub fn owner(&self) -> &str {
        self.lease.owner()
    }
    pub fn conversations(&self) -> &ConversationStore {
        &self.conversations
    }
    /// Long-term memory (the Memory page, `wyckoff memory`).
    pub fn memories(&self) -> &MemoryStore {
        &self.memories
    }
    pub fn market(&self) -> &Arc<MarketData> {
        &self.market
    }
    /// The approval inbox and audit log.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The process's MCP servers (their connections and health).
    pub fn mcp(&self) -> &Arc<wyckoff_mcp::agent_tools::McpHub> {
        &self.mcp
    }

    pub fn inbox(&self) -> &InboxStore {
        &self.inbox
    }

    /// Pushes finished tasks and schedule runs and approvals waiting to the channels
    /// that take them.
    pub fn push(&self) -> &Arc<push_relay::PushRelay> {
        &self.push
    }

    pub fn background(&self) -> &Arc<BackgroundTaskManager> {
        &self.background
    }
    /// The skills `/name` expands to (the composer's palette, `wyckoff skills`).
    pub fn skills(&self) -> &SkillCatalog {
        &self.skills
    }

    /// At start-up (the app and `wyckoff run`): turns a dead process left unfinished
    /// become `interrupted`. Turns of another live process on the same data home (the app
    /// while a `wyckoff run` works, or the other way round) are left alone.
    pub async fn recover_interrupted_turns(&self) -> Result<Vec<String>, SessionError> {
        let root = self.home.root().to_path_buf();
        let mine = self.lease.owner().to_owned();
        let alive =
            move |owner: &str| owner == mine || wyckoff_config::lease::is_alive_at(&root, owner);
        Ok(self
            .conversations
            .mark_orphaned_turns_interrupted(&alive)
            .await?)
    }

    /// The main model `provider/model` a session would use now; an error (no model, no
    /// key) says what to set up. Nothing is written.
    pub fn check_model(&self, overrides: &ModelOverrides) -> Result<String, SessionError> {
        let resolved =
            providers::resolve(&self.settings(), &self.secrets, &self.http()?, overrides)?;
        Ok(format!(
            "{}/{}",
            resolved.main.name(),
            resolved.main.model()
        ))
    }

    /// The tool registry of a session: `query_history`, the market tools and the local
    /// tools (folders and web_fetch's reach from the settings).
    pub fn registry(&self) -> ToolRegistry {
        let settings = self.settings();
        let mut registry = ToolRegistry::new();
        wyckoff_tools::register_market_tools(&mut registry, self.market.clone());
        // A buy's approval shows what the sizing rules and the account limits say of it.
        wyckoff_tools::risk::register_buy_previews(
            &mut registry,
            self.market.clone(),
            desk_risk::risk_rules(&settings.risk),
        );
        desk_risk::register_limited_backtest(&mut registry, self.market.clone(), &settings.risk);
        wyckoff_tools::register_local_tools(
            &mut registry,
            wyckoff_tools::LocalToolsConfig {
                workspace: self.home.root().join("workspace"),
                file_roots: settings.file_roots.iter().map(PathBuf::from).collect(),
                allow_private_web_fetch: settings.allow_private_web_fetch,
            },
        );
        // Reopens offloaded tool results and compaction archives (the previews point here).
        registry.register(Arc::new(QueryHistory::new(
            self.home.tool_results_dir(),
            Arc::new(FileArchive::new(self.home.root().join(CONTEXT_ARCHIVE_DIR))),
        )));
        registry
    }

    /// Connects the enabled MCP servers ahead of the first session (the app does this at
    /// start-up in the background), so a turn does not wait for a server to start.
    pub async fn warm_mcp_servers(&self) {
        self.offer_mcp_tools().await;
    }

    /// Makes the enabled MCP servers' offer as `mcp_servers.json` says now.
    async fn offer_mcp_tools(&self) {
        if let Err(e) = self.mcp.reload(self.home.root()).await {
            tracing::warn!("MCP servers not read: {e}");
        }
        let (_, failed) = self.mcp.agent_tools().await;
        for (server, why) in failed {
            tracing::warn!(server = %server, "MCP server left out of this session: {why}");
        }
    }

    /// Builds a session. Providers are resolved first, so a bad option or a missing key
    /// fails before anything is written.
    pub async fn session(&self, options: SessionOptions) -> Result<Session, SessionError> {
        let settings = self.settings();
        let resolved =
            providers::resolve(&settings, &self.secrets, &self.http()?, &options.overrides)?;
        let model_label = format!("{}/{}", resolved.main.name(), resolved.main.model());
        let (conversation, messages) = match options.continue_session.as_deref() {
            Some(id) => {
                let id = id.trim();
                let conversation = match self.conversations.get(id).await {
                    Ok(c) => c,
                    Err(MemoryError::ConversationNotFound(_)) => {
                        return Err(SessionError::SessionNotFound(id.to_owned()));
                    }
                    Err(e) => return Err(e.into()),
                };
                let messages = self.conversations.messages(id).await?;
                (conversation, messages)
            }
            None => (
                self.conversations.create("", &model_label).await?,
                Vec::new(),
            ),
        };
        let config = RuntimeConfig {
            session_id: conversation.id.clone(),
            approval_timeout: secs(settings.approval_timeout_secs, 120),
            tool_timeout: Some(secs(
                settings.tool_timeout_secs,
                u64::from(wyckoff_config::settings::DEFAULT_TOOL_TIMEOUT_SECS.unsigned_abs()),
            )),
            ..RuntimeConfig::default()
        };
        let mut registry = self.registry();
        // The report and decision tools write with the session's own model (fallback and
        // routing included); the decision's buys are sized under the risk rules in Settings.
        for tool in wyckoff_tools::report_tools_under(
            self.market.clone(),
            resolved.main.clone(),
            Some(desk_risk::risk_rules(&settings.risk)),
        ) {
            registry.register(tool);
        }
        // Sub-agents (seed 11_07): the parent delegates; the roles' whitelists name no
        // delegate tool, so a sub-agent cannot delegate in turn.
        for tool in wyckoff_agent::subagents::delegate_tools() {
            registry.register(tool);
        }
        // MCP servers' tools as `mcp__<server>__<tool>`, behind the same gate; a
        // server that cannot be reached is left out of this session and said in the log.
        // They are the hub's offer at each model request, so a server's changed tool list
        // reaches this open session too.
        self.offer_mcp_tools().await;
        registry.add_source(self.mcp.source());
        // A chat bot's conversation, whoever opens it: the model is offered no tool that
        // writes, and a call of one all the same waits for the owner in the gate.
        let from_a_chat = self
            .bots
            .conversation_chat(&conversation.id)
            .await?
            .is_some();
        if from_a_chat {
            registry.gate_writers(Arc::new(bot_store::is_writer));
        }
        let mut runtime = Runtime::new(
            resolved.main.clone(),
            Arc::new(registry),
            config,
            options.approver,
            Some(self.home.scratchpad_dir()),
            self.clock.clone(),
        )
        .with_background(self.background.clone())
        .with_result_store(ResultStore::new(self.home.tool_results_dir()))
        .with_delegation();
        if let Some(fallback) = resolved.fallback {
            runtime = runtime.with_fallback(fallback);
        }
        // Every decision of this session's gate, whichever path made it, is audited.
        runtime
            .gate()
            .set_audit(Arc::new(wyckoff_inbox::AuditLog::new(
                self.inbox.clone(),
                self.clock.clone(),
            )));
        // Compaction at 25 % of the (possibly overridden) context window; removed
        // messages are archived under the data home. The stored conversation keeps them.
        let archive = FileArchive::new(self.home.root().join(CONTEXT_ARCHIVE_DIR))
            .with_clock(self.clock.clone());
        let mut compactor =
            LlmCompactor::new(conversation.id.clone()).with_archive(Arc::new(archive));
        // What a chat bot's sender says is not the owner's: none of it becomes a memory the
        // owner's own conversations recall (neither on compaction nor at session end).
        if !from_a_chat {
            compactor =
                compactor.with_memory_flush(Arc::new(memory::StoreFlush(self.memories.clone())));
        }
        runtime = runtime.with_compactor(Arc::new(compactor));
        tracing::info!(session = %conversation.id, model = %model_label, stored = messages.len(), "session ready");
        Ok(Session {
            conversation,
            runtime,
            messages,
            store: self.conversations.clone(),
            memories: self.memories.clone(),
            provider: resolved.main,
            system_prompt: prompt::system_prompt().to_owned(),
            clock: self.clock.clone(),
            spoke_since_extraction: false,
            remembers: !from_a_chat,
            skills: self.skills.clone(),
            notices: Vec::new(),
        })
    }
}

fn http_client(settings: &Settings) -> Result<HttpClient, SessionError> {
    Ok(HttpClient::new(&HttpSettings {
        proxy: settings.proxy.clone(),
        ..HttpSettings::default()
    })?)
}

fn secs(value: i32, default: u64) -> Duration {
    Duration::from_secs(
        u64::try_from(value)
            .ok()
            .filter(|v| *v > 0)
            .unwrap_or(default),
    )
}

/// Where market data comes from, with one precedence for every front end: the environment
/// (`WYCKOFF_OFFLINE`, `WYCKOFF_DATA_SOURCES`) over the settings' source order. A source's
/// token is looked up (environment, then keychain) only when the order names that source;
/// Tushare without its token is skipped, TickFlow falls back to its free tier. The
/// settings' list is the user's choice: when it names no usable source, nothing is
/// fetched — the defaults are never put back behind their back.
pub fn market_config(
    home: &DataHome,
    settings: &Settings,
    secrets: &Secrets,
) -> Result<MarketConfig, SessionError> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let offline =
        env("WYCKOFF_OFFLINE").is_some_and(|v| !matches!(v.as_str(), "0" | "false" | "no"));
    if offline || env("WYCKOFF_DATA_SOURCES").is_some() {
        return Ok(MarketConfig::from_env(home.root())?);
    }
    let listed = |kind| settings.data_sources.contains(&kind);
    let token = |source| {
        secrets
            .get(&SecretId::DataSource { source })
            .map(|(v, _)| v.expose().to_owned())
    };
    let creds = wyckoff_market::Credentials {
        tickflow_api_key: listed(DataSourceKind::Tickflow)
            .then(|| token(DataSecret::Tickflow))
            .flatten(),
        tushare_token: listed(DataSourceKind::Tushare)
            .then(|| token(DataSecret::Tushare))
            .flatten(),
    };
    let order: Vec<&str> = settings
        .data_sources
        .iter()
        .filter_map(|s| match s {
            DataSourceKind::Eastmoney => Some("eastmoney"),
            DataSourceKind::Tencent => Some("tencent"),
            DataSourceKind::Tickflow => Some("tickflow"),
            DataSourceKind::Tushare => creds.tushare_token.is_some().then_some("tushare"),
        })
        .collect();
    let mut cfg = MarketConfig::new(home.root());
    cfg.sources = if order.is_empty() {
        Vec::new()
    } else {
        wyckoff_market::facade::sources_from(Some(&order.join(",")), &creds)?
    };
    cfg.use_mirrors_from_env();
    cfg.fetch_on_read = !cfg.sources.is_empty();
    Ok(cfg)
}

/// How a turn went, and whether it was stored.
#[derive(Debug)]
pub struct TurnReport {
    pub outcome: TurnOutcome,
    /// Set when the turn ran but storing its messages or outcome failed; the events
    /// (including the terminal one) have already gone out.
    pub save_error: Option<SessionError>,
}

/// One conversation with its runtime. The app keeps one per open chat (behind a mutex:
/// turns of one session run one at a time).
pub struct Session {
    conversation: Conversation,
    runtime: Runtime,
    messages: Vec<Message>,
    store: ConversationStore,
    memories: MemoryStore,
    /// The main provider, also used for session-end memory extraction.
    provider: Arc<dyn Provider>,
    system_prompt: String,
    clock: Arc<dyn Clock>,
    /// The user spoke since the last memory extraction.
    spoke_since_extraction: bool,
    /// What is said here may become the owner's memories (not in a chat bot's
    /// conversation: its sender is not the owner).
    remembers: bool,
    skills: Arc<SkillCatalog>,
    /// Decided inbox calls the next turn hands the model first.
    notices: Vec<wyckoff_inbox::DecidedNotice>,
}

impl Session {
    /// The conversation id (also the runtime's session id).
    pub fn id(&self) -> &str {
        &self.conversation.id
    }
    pub fn conversation(&self) -> &Conversation {
        &self.conversation
    }
    /// The conversation as the model sees it.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }
    pub fn system_prompt(&self) -> &str {
        &self.system_prompt
    }
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Queues a decided inbox call's notice for the next turn: stored in that turn (the
    /// typed notice with its message) and given to the model before it answers.
    pub fn queue_notice(&mut self, notice: wyckoff_inbox::DecidedNotice) {
        self.notices.push(notice);
    }

    /// Runs one turn: `input` (plus the Beijing time) becomes the user message, stored
    /// before the model is called; memories recalled for `input` go into this turn's
    /// system prompt (and out as a `memory_recall` event); events go to `sink`; `cancel`
    /// ends the turn with `turn_cancelled`. Every message the turn adds is stored as it is
    /// added, then the turn's outcome. An empty `input` runs a turn on pending background
    /// notifications only (no recall).
    ///
    /// Errors only when the turn could not start (storage); later storage failures are
    /// in [`TurnReport::save_error`].
    pub async fn run_turn(
        &mut self,
        input: &str,
        sink: Arc<dyn EventSink>,
        cancel: CancellationToken,
    ) -> Result<TurnReport, SessionError> {
        let id = self.conversation.id.clone();
        // `/name args` becomes the skill's prompt for the model; what was typed is stored
        // with it. An unknown `/name` stops here, before anything is stored or sent.
        let expansion = if input.trim().is_empty() {
            None
        } else {
            self.skills.current().expand(input)?
        };
        let skill = expansion.as_ref().map(|e| SkillUse {
            name: e.skill.clone(),
            builtin: e.source == SkillSource::Builtin,
            typed: e.typed.clone(),
        });
        let for_model = expansion.as_ref().map_or(input, |e| e.message.as_str());
        let user_text = if input.trim().is_empty() {
            String::new()
        } else {
            beijing::with_beijing_time(for_model, self.clock.now())
        };
        let turn = self.store.begin_turn(&id).await?;
        if !user_text.is_empty() {
            let stored = async {
                if self.conversation.title.trim().is_empty() {
                    let title = title_of(input);
                    self.store.rename(&id, &title).await?;
                    self.conversation.title = title;
                }
                self.store
                    .append_message_with_skill(
                        &id,
                        Some(&turn.id),
                        &Message::user(user_text.clone()),
                        skill.as_ref(),
                    )
                    .await
            }
            .await;
            if let Err(e) = stored {
                let _ = self
                    .store
                    .end_turn(&turn.id, wyckoff_memory::TurnOutcome::Failed, None)
                    .await;
                return Err(e.into());
            }
            self.spoke_since_extraction = true;
        }
        for decided in std::mem::take(&mut self.notices) {
            sink.emit(RuntimeEvent::ApprovalNotice {
                notice: decided.notice.clone(),
            });
            let extras = wyckoff_memory::MessageExtras {
                approval_notice: Some(&decided.notice),
                ..Default::default()
            };
            if let Err(e) = self
                .store
                .append_message_with(&id, Some(&turn.id), &decided.message, extras)
                .await
            {
                tracing::error!(session = %id, "storing an approval notice failed: {e}");
            }
            self.messages.push(decided.message);
        }
        let system_prompt = self.recall(input, sink.as_ref()).await;

        // The runtime hands each message over as it adds it; they are stored in order
        // while the turn goes on. A delegate call's result goes with its sub-agent's
        // steps, which were all emitted before the result was added.
        let (transcript, mut added) = tokio::sync::mpsc::unbounded_channel::<Message>();
        let extras = Arc::new(message_extras::MessageExtras::new(sink));
        let sink: Arc<dyn EventSink> = extras.clone();
        let run = async {
            let outcome = self
                .runtime
                .run_turn_recorded(
                    &mut self.messages,
                    &system_prompt,
                    &user_text,
                    sink,
                    cancel,
                    &transcript,
                )
                .await;
            drop(transcript);
            outcome
        };
        let store = &self.store;
        let write = async {
            let mut first_error = None;
            while let Some(m) = added.recv().await {
                let (sub_agent, task_notice) = match &m {
                    Message::Tool { tool_call_id, .. } => (extras.take(tool_call_id), None),
                    Message::User {
                        origin: UserOrigin::SystemNotification,
                        ..
                    } => (Vec::new(), extras.next_notice()),
                    _ => (Vec::new(), None),
                };
                let stored = store
                    .append_message_with(
                        &id,
                        Some(&turn.id),
                        &m,
                        wyckoff_memory::MessageExtras {
                            sub_agent: &sub_agent,
                            task_notice: task_notice.as_ref(),
                            ..Default::default()
                        },
                    )
                    .await;
                if let Err(e) = stored {
                    tracing::error!(session = %id, "storing a message failed: {e}");
                    first_error.get_or_insert(e);
                }
            }
            first_error
        };
        let (outcome, write_error) = tokio::join!(run, write);
        // The answer is stored by now: its grounding goes beside it.
        if let Some(g) = extras.take_grounding()
            && let Err(e) = self.store.set_answer_grounding(&turn.id, &g).await
        {
            tracing::error!(session = %id, "storing the answer's grounding failed: {e}");
        }

        let (stored_outcome, usage) = match &outcome {
            TurnOutcome::Done { usage, .. } => (wyckoff_memory::TurnOutcome::Done, Some(*usage)),
            TurnOutcome::Cancelled => (wyckoff_memory::TurnOutcome::Cancelled, None),
            TurnOutcome::Failed { .. } => (wyckoff_memory::TurnOutcome::Failed, None),
        };
        let ended = self
            .store
            .end_turn(&turn.id, stored_outcome, usage.as_ref())
            .await;
        let save_error = write_error.or(ended.err()).map(|e| {
            tracing::error!(session = %id, "storing the turn failed: {e}");
            SessionError::from(e)
        });
        Ok(TurnReport {
            outcome,
            save_error,
        })
    }

    /// This turn's system prompt: the base prompt plus what recall found for `input`.
    /// Recall failing costs the turn its memories, not the turn itself.
    async fn recall(&self, input: &str, sink: &dyn EventSink) -> String {
        if input.trim().is_empty() {
            return self.system_prompt.clone();
        }
        match self.memories.recall(input).await {
            Ok(recall) if !recall.is_empty() => {
                sink.emit(RuntimeEvent::MemoryRecall {
                    items: memory::recall_items(&recall),
                });
                memory::prompt_with_recall(&self.system_prompt, &recall)
            }
            Ok(_) => self.system_prompt.clone(),
            Err(e) => {
                tracing::warn!(session = %self.conversation.id, "memory recall failed: {e}");
                self.system_prompt.clone()
            }
        }
    }

    /// The end of a session (seed 记忆写入): the last 40 stored messages go to the model
    /// with the extraction prompt; `[偏好]` lines become preferences, others session
    /// memories, skipping near-duplicates of stored ones. Does nothing (no model call)
    /// when the user has not spoken since the last extraction, nor in a chat bot's
    /// conversation.
    pub async fn extract_memories(&mut self) -> Result<ExtractionOutcome, SessionError> {
        if !self.remembers || !self.spoke_since_extraction {
            return Ok(ExtractionOutcome::default());
        }
        let id = &self.conversation.id;
        let stored = self.store.messages(id).await?;
        let outcome = wyckoff_memory::extract_session_memories(
            &self.memories,
            &stored,
            self.provider.as_ref(),
            &format!("conversation:{id}"),
        )
        .await?;
        self.spoke_since_extraction = false;
        tracing::info!(session = %id, saved = outcome.saved.len(), duplicates = outcome.duplicates, "session memories extracted");
        Ok(outcome)
    }
}

fn title_of(input: &str) -> String {
    input
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(TITLE_CHARS)
        .collect()
}
