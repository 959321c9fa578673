//! Chat state: the shared services, one session per open conversation, the running turns'
//! cancel tokens and the approval bridge. Assembly and the loop live in `wyckoff-session`
//! and `wyckoff-agent`; this file only keeps handles.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex, OnceLock};
use std::time::Duration;

use tauri::ipc::Channel;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;
use wyckoff_agent::{ApprovalGate, EventSink, PendingApprovals};
use wyckoff_config::{DataHome, Secrets, Settings};
use wyckoff_protocol::RuntimeEvent;
use wyckoff_session::{ModelOverrides, Services, Session, SessionError, SessionOptions};

/// Sends each runtime event over the turn's IPC channel; calls `on_terminal` once the
/// turn's terminal event is out, so the conversation accepts the user's next message at
/// once (its turn then waits for this one's storage on the session lock).
pub struct ChannelSink {
    channel: Channel<RuntimeEvent>,
    on_terminal: Box<dyn Fn() + Send + Sync>,
}

impl ChannelSink {
    pub fn new(
        channel: Channel<RuntimeEvent>,
        on_terminal: impl Fn() + Send + Sync + 'static,
    ) -> Self {
        ChannelSink {
            channel,
            on_terminal: Box::new(on_terminal),
        }
    }
}

impl EventSink for ChannelSink {
    fn emit(&self, event: RuntimeEvent) {
        let terminal = event.is_terminal();
        // A closed window means nobody listens; the turn still runs and is stored.
        if let Err(e) = self.channel.send(event) {
            tracing::debug!("turn channel closed: {e}");
        }
        if terminal {
            (self.on_terminal)();
        }
    }
}

/// A running turn: its cancel token and a number that tells it from the next turn of the
/// same conversation.
struct RunningTurn {
    turn: u64,
    cancel: CancellationToken,
}

pub struct OpenSession {
    pub session: Arc<Mutex<Session>>,
    pub gate: Arc<ApprovalGate>,
}

#[derive(Default)]
pub struct ChatState {
    /// Opened once for the process; the settings last applied to them.
    services: Mutex<Option<Arc<Services>>>,
    sessions: StdMutex<HashMap<String, Arc<OpenSession>>>,
    running: StdMutex<HashMap<String, RunningTurn>>,
    next_turn: AtomicU64,
    approvals: Arc<PendingApprovals>,
    /// The app asked to exit once (memories are being extracted).
    exiting: AtomicBool,
    /// Set at start-up: new services get their background tasks forwarded to the UI.
    app: OnceLock<tauri::AppHandle>,
}

impl ChatState {
    pub fn new(app: tauri::AppHandle) -> Self {
        let state = ChatState::default();
        let _ = state.app.set(app);
        state
    }

    pub fn approvals(&self) -> &Arc<PendingApprovals> {
        &self.approvals
    }

    /// The process's services, with `settings` applied (opened on first use; turns left
    /// unfinished by a previous process are marked interrupted then). A settings change
    /// is applied in place — the pool, market data and the background task manager stay
    /// — and idle sessions, built from the old settings, are dropped so the next turn
    /// builds one with the new models and limits.
    pub async fn services(
        &self,
        home: &DataHome,
        settings: Settings,
        secrets: Arc<Secrets>,
    ) -> Result<Arc<Services>, SessionError> {
        let mut guard = self.services.lock().await;
        if let Some(services) = guard.as_ref() {
            if services.apply_settings(settings).await? {
                let running = self.running_ids();
                if let Ok(mut sessions) = self.sessions.lock() {
                    sessions.retain(|id, _| running.contains(id));
                }
            }
            return Ok(services.clone());
        }
        let services = Arc::new(Services::open(home.clone(), settings, secrets).await?);
        match services.recover_interrupted_turns().await {
            Ok(ids) if !ids.is_empty() => {
                tracing::info!(turns = ids.len(), "marked interrupted turns")
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("cannot mark interrupted turns: {e}"),
        }
        if let Some(app) = self.app.get() {
            crate::tasks::watch(app.clone(), services.background().clone());
        }
        *guard = Some(services.clone());
        Ok(services)
    }

    /// The services if they are open (nothing is opened for the asking).
    pub async fn opened_services(&self) -> Option<Arc<Services>> {
        self.services.lock().await.clone()
    }

    /// The open session for `id`, or a new one (a stored conversation, or a new
    /// conversation when `id` is `None`).
    pub async fn session(
        &self,
        services: &Services,
        id: Option<&str>,
    ) -> Result<(String, Arc<OpenSession>), SessionError> {
        if let Some(id) = id
            && let Some(open) = self.sessions.lock().ok().and_then(|s| s.get(id).cloned())
        {
            return Ok((id.to_owned(), open));
        }
        let session = services
            .session(SessionOptions {
                overrides: ModelOverrides::default(),
                continue_session: id.map(str::to_owned),
                approver: self.approvals.clone(),
            })
            .await?;
        let id = session.id().to_owned();
        let open = Arc::new(OpenSession {
            gate: session.runtime().gate().clone(),
            session: Arc::new(Mutex::new(session)),
        });
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.insert(id.clone(), open.clone());
        }
        Ok((id, open))
    }

    pub fn open_session(&self, id: &str) -> Option<Arc<OpenSession>> {
        self.sessions.lock().ok().and_then(|s| s.get(id).cloned())
    }

    /// Removes a conversation's session from the open set (returning it).
    pub fn forget_session(&self, id: &str) -> Option<Arc<OpenSession>> {
        self.sessions.lock().ok().and_then(|mut s| s.remove(id))
    }

    /// True the first time the app asks to exit: the caller then holds the exit for
    /// [`ChatState::extract_all`]. A second request (the real exit, or the user
    /// insisting) goes through.
    pub fn begin_exit(&self) -> bool {
        !self.exiting.swap(true, Ordering::SeqCst)
    }

    /// Session end for every open conversation: extracts their memories, bounded by
    /// `deadline` so quitting never hangs on a slow model.
    pub async fn extract_all(&self, deadline: Duration) {
        let open: Vec<Arc<OpenSession>> = self
            .sessions
            .lock()
            .map(|mut s| s.drain().map(|(_, o)| o).collect())
            .unwrap_or_default();
        let all = futures::future::join_all(open.into_iter().map(extract_memories));
        if tokio::time::timeout(deadline, all).await.is_err() {
            tracing::warn!("memory extraction on exit took over {deadline:?}; skipped the rest");
        }
    }

    /// Registers a running turn and returns its number; `None` when one is already
    /// running in that conversation.
    pub fn begin(&self, id: &str, cancel: CancellationToken) -> Option<u64> {
        let mut running = self.running.lock().ok()?;
        if running.contains_key(id) {
            return None;
        }
        let turn = self.next_turn.fetch_add(1, Ordering::Relaxed);
        running.insert(id.to_owned(), RunningTurn { turn, cancel });
        Some(turn)
    }

    /// The turn is over (a later turn of the conversation is left alone).
    pub fn finish(&self, id: &str, turn: u64) {
        if let Ok(mut running) = self.running.lock()
            && running.get(id).is_some_and(|r| r.turn == turn)
        {
            running.remove(id);
        }
    }

    pub fn cancel(&self, id: &str) -> bool {
        match self
            .running
            .lock()
            .ok()
            .and_then(|r| r.get(id).map(|t| t.cancel.clone()))
        {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    pub fn is_running(&self, id: &str) -> bool {
        self.running
            .lock()
            .map(|r| r.contains_key(id))
            .unwrap_or(false)
    }

    fn running_ids(&self) -> Vec<String> {
        self.running
            .lock()
            .map(|r| r.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// Session end for one conversation: its memories are extracted (failures are logged;
/// the conversation itself is already stored).
pub async fn extract_memories(open: Arc<OpenSession>) {
    let mut session = open.session.lock().await;
    if let Err(e) = session.extract_memories().await {
        tracing::warn!(conversation = %session.id(), "memory extraction failed: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_turn_per_conversation_and_cancel_reaches_it() {
        let state = ChatState::default();
        let token = CancellationToken::new();
        let first = state.begin("c1", token.clone()).unwrap();
        assert!(state.begin("c1", CancellationToken::new()).is_none());
        assert!(state.is_running("c1"));
        assert!(state.cancel("c1"));
        assert!(token.is_cancelled());
        state.finish("c1", first);
        assert!(!state.is_running("c1"));
        assert!(!state.cancel("c1"));
        let second = state.begin("c1", CancellationToken::new()).unwrap();
        // The first turn finishing late (after its terminal event freed the
        // conversation) does not end the second.
        state.finish("c1", first);
        assert!(state.is_running("c1"));
        state.finish("c1", second);
        assert!(!state.is_running("c1"));
    }

    fn session_options() -> SessionOptions {
        SessionOptions {
            overrides: ModelOverrides {
                provider: Some("openai-compatible".into()),
                model: Some("mock-model".into()),
                base_url: Some("http://127.0.0.1:9/v1".into()),
                ..ModelOverrides::default()
            },
            continue_session: None,
            approver: Arc::new(wyckoff_agent::HeadlessApprover::Never),
        }
    }

    /// Changing a setting (the theme, the data sources, the proxy, a timeout) keeps the
    /// process's services — the same pool, market data and background task manager, so
    /// running tasks stay listed and cancellable and the cap stays one — and what changed
    /// takes effect: the market's source order, the next session's tool timeout.
    #[tokio::test]
    async fn a_settings_change_keeps_the_services_and_takes_effect() {
        use wyckoff_config::secrets::MemoryBackend;
        use wyckoff_config::settings::{DataSourceKind, Theme};

        let dir = tempfile::tempdir().unwrap();
        let home = DataHome::new(dir.path());
        let secrets = Arc::new(Secrets::with_backend(
            Box::new(MemoryBackend::default()),
            Box::new(|_| None),
        ));
        let state = ChatState::default();
        let settings = Settings {
            data_sources: vec![DataSourceKind::Eastmoney, DataSourceKind::Tencent],
            tool_timeout_secs: 60,
            ..Settings::default()
        };
        let first = state
            .services(&home, settings.clone(), secrets.clone())
            .await
            .unwrap();
        assert_eq!(first.market().source_names(), ["eastmoney", "tencent"]);

        let themed = Settings {
            theme: Theme::Dark,
            ..settings.clone()
        };
        let after_theme = state
            .services(&home, themed.clone(), secrets.clone())
            .await
            .unwrap();
        assert!(Arc::ptr_eq(&first, &after_theme));
        assert!(Arc::ptr_eq(first.background(), after_theme.background()));
        assert!(Arc::ptr_eq(first.market(), after_theme.market()));
        assert_eq!(after_theme.settings().theme, Theme::Dark);

        let resourced = Settings {
            data_sources: vec![DataSourceKind::Tickflow, DataSourceKind::Eastmoney],
            proxy: Some("http://127.0.0.1:3128".into()),
            tool_timeout_secs: 7,
            ..themed
        };
        let after_sources = state
            .services(&home, resourced, secrets.clone())
            .await
            .unwrap();
        assert!(Arc::ptr_eq(&first, &after_sources));
        assert!(Arc::ptr_eq(first.background(), after_sources.background()));
        assert!(Arc::ptr_eq(first.market(), after_sources.market()));
        assert_eq!(
            after_sources.market().source_names(),
            ["tickflow", "eastmoney"]
        );
        let session = after_sources.session(session_options()).await.unwrap();
        assert_eq!(
            session.runtime().config().tool_timeout,
            Some(Duration::from_secs(7))
        );
    }

    /// A Tushare token saved while the services are open reaches the open market data's
    /// source chain (a keyed source without its token is skipped).
    #[tokio::test]
    async fn a_data_source_token_reaches_the_open_market() {
        use wyckoff_config::secrets::{DataSecret, MemoryBackend, SecretId};
        use wyckoff_config::settings::DataSourceKind;

        let dir = tempfile::tempdir().unwrap();
        let home = DataHome::new(dir.path());
        let secrets = Arc::new(Secrets::with_backend(
            Box::new(MemoryBackend::default()),
            Box::new(|_| None),
        ));
        let state = ChatState::default();
        let settings = Settings {
            data_sources: vec![DataSourceKind::Tushare, DataSourceKind::Eastmoney],
            ..Settings::default()
        };
        let services = state
            .services(&home, settings, secrets.clone())
            .await
            .unwrap();
        assert_eq!(services.market().source_names(), ["eastmoney"]);
        secrets
            .set_for_session(
                &SecretId::DataSource {
                    source: DataSecret::Tushare,
                },
                "tushare-token-for-test",
            )
            .unwrap();
        let opened = state.opened_services().await.unwrap();
        assert!(Arc::ptr_eq(&opened, &services));
        opened.reload_market_sources().await.unwrap();
        assert_eq!(services.market().source_names(), ["tushare", "eastmoney"]);
    }
}
