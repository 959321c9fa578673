//! The app's side of the desk (`wyckoff_session::Desk`): the process's desk, opened on
//! first use, with the window's approval dialog as its answerer. Its event stream goes
//! out app-wide (`crate::stream`): every turn's events, the user's and the follow-ups
//! that answer background tasks alike, as one `ConversationEvent` stream. When a turn
//! may run and when a completion is answered is the hub's to decide; nothing here does.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tauri::AppHandle;
use tokio::sync::OnceCell;
use wyckoff_config::{DataHome, Secrets, SharedSettings};
use wyckoff_session::domain::agent::PendingApprovals;
use wyckoff_session::scheduler::Scheduler;
use wyckoff_session::{Answerer, ConversationHub, Desk, DeskOptions, Services, SessionError};

#[derive(Default)]
pub struct ChatState {
    /// Opened once for the process, on first use.
    desk: OnceCell<Arc<Desk>>,
    approvals: Arc<PendingApprovals>,
    /// The app asked to exit once (memories are being extracted).
    exiting: AtomicBool,
    /// Set at start-up: the hub's turns and the background tasks go out to the UI.
    app: OnceLock<AppHandle>,
}

impl ChatState {
    pub fn new(app: AppHandle) -> Self {
        let state = ChatState::default();
        let _ = state.app.set(app);
        state
    }

    pub fn approvals(&self) -> &Arc<PendingApprovals> {
        &self.approvals
    }

    /// The process's desk, opened on first use on the app's one copy of the settings
    /// (turns left unfinished by a previous process are marked interrupted then).
    pub async fn desk(
        &self,
        home: &DataHome,
        settings: &SharedSettings,
        secrets: Arc<Secrets>,
    ) -> Result<Arc<Desk>, SessionError> {
        Ok(self
            .desk
            .get_or_try_init(|| self.open_desk(home, settings.clone(), secrets))
            .await?
            .clone())
    }

    async fn open_desk(
        &self,
        home: &DataHome,
        settings: SharedSettings,
        secrets: Arc<Secrets>,
    ) -> Result<Arc<Desk>, SessionError> {
        let mut options = DeskOptions::new(home.clone());
        options.settings = Some(settings);
        options.secrets = secrets;
        options.answerer = Answerer::Window(self.approvals.clone());
        // The system clock unless WYCKOFF_NOW moved it (checked at start-up).
        if let Ok(clock) = crate::clock_override::app_clock() {
            options.clock = clock;
        }
        let desk = Desk::open(options).await?;
        if let Some(app) = self.app.get() {
            crate::stream::forward(app.clone(), &desk);
        }
        let warming = desk.services().clone();
        tauri::async_runtime::spawn(async move { warming.warm_mcp_servers().await });
        Ok(desk)
    }

    /// The desk if it is open (nothing is opened for the asking).
    pub fn opened_desk(&self) -> Option<&Arc<Desk>> {
        self.desk.get()
    }

    /// The process's hub (see [`ChatState::desk`]).
    pub async fn hub(
        &self,
        home: &DataHome,
        settings: &SharedSettings,
        secrets: Arc<Secrets>,
    ) -> Result<Arc<ConversationHub>, SessionError> {
        Ok(self.desk(home, settings, secrets).await?.hub().clone())
    }

    /// The schedules' runner, once the desk is open.
    pub fn scheduler(&self) -> Option<&Arc<Scheduler>> {
        self.desk.get().map(|d| d.scheduler())
    }

    /// The process's services (see [`ChatState::desk`]).
    pub async fn services(
        &self,
        home: &DataHome,
        settings: &SharedSettings,
        secrets: Arc<Secrets>,
    ) -> Result<Arc<Services>, SessionError> {
        Ok(self.desk(home, settings, secrets).await?.services().clone())
    }

    /// The hub if it is open (nothing is opened for the asking).
    pub fn opened_hub(&self) -> Option<&Arc<ConversationHub>> {
        self.desk.get().map(|d| d.hub())
    }

    /// The services if they are open (nothing is opened for the asking).
    pub fn opened_services(&self) -> Option<Arc<Services>> {
        self.opened_hub().map(|h| h.services().clone())
    }

    /// True the first time the app asks to exit: the caller then holds the exit for
    /// [`ChatState::end_session`]. A second request (the real exit, or the user insisting)
    /// goes through.
    pub fn begin_exit(&self) -> bool {
        !self.exiting.swap(true, Ordering::SeqCst)
    }

    /// Session end for every open conversation, bounded by `deadline`; then the desk is
    /// closed (background work stopped, the database checkpointed and closed clean).
    pub async fn end_session(&self, deadline: Duration) {
        if let Some(desk) = self.opened_desk() {
            desk.hub().leave_all(deadline).await;
            desk.close().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wyckoff_config::Settings;
    use wyckoff_session::{ModelOverrides, SessionOptions};

    fn session_options() -> SessionOptions {
        SessionOptions {
            overrides: ModelOverrides {
                provider: Some("openai-compatible".into()),
                model: Some("mock-model".into()),
                base_url: Some("http://127.0.0.1:9/v1".into()),
                ..ModelOverrides::default()
            },
            continue_session: None,
            approver: Arc::new(wyckoff_session::domain::agent::HeadlessApprover::Never),
        }
    }

    /// Changing a setting (the theme, the data sources, the proxy, a timeout) keeps the
    /// process's services — the same pool, market data and background task manager, so
    /// running tasks stay listed and cancellable and the cap stays one — and what changed
    /// takes effect: the market's source order, the next session's tool timeout. The app's
    /// copy and the desk's are one: a change through the desk is what the app reads.
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
        let shared = SharedSettings::new(settings.clone());
        let first = state
            .services(&home, &shared, secrets.clone())
            .await
            .unwrap();
        assert_eq!(first.market().source_names(), ["eastmoney", "tencent"]);
        let desk = state.opened_desk().unwrap().clone();

        let themed = Settings {
            theme: Theme::Dark,
            ..settings.clone()
        };
        assert!(desk.apply_settings(themed.clone()).await.unwrap());
        assert_eq!(shared.get(), themed);
        let after_theme = state
            .services(&home, &shared, secrets.clone())
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
        assert!(desk.apply_settings(resourced.clone()).await.unwrap());
        assert_eq!(shared.get(), resourced);
        let after_sources = state
            .services(&home, &shared, secrets.clone())
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
            .services(&home, &SharedSettings::new(settings), secrets.clone())
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
        let opened = state.opened_services().unwrap();
        assert!(Arc::ptr_eq(&opened, &services));
        opened.reload_market_sources().await.unwrap();
        assert_eq!(services.market().source_names(), ["tushare", "eastmoney"]);
    }

    /// Quitting the app closes the database clean: what the desk wrote is checkpointed
    /// into `wyckoff.db` and the write-ahead log truncated.
    #[tokio::test]
    async fn ending_the_session_leaves_no_write_ahead_log() {
        use wyckoff_config::secrets::MemoryBackend;

        let dir = tempfile::tempdir().unwrap();
        let home = DataHome::new(dir.path());
        let secrets = Arc::new(Secrets::with_backend(
            Box::new(MemoryBackend::default()),
            Box::new(|_| None),
        ));
        let state = ChatState::default();
        let settings = SharedSettings::new(Settings {
            data_sources: Vec::new(),
            ..Settings::default()
        });
        let services = state.services(&home, &settings, secrets).await.unwrap();
        let csv = dir.path().join("600000.csv");
        let mut text = String::from("date,open,high,low,close,volume\n");
        for day in 1..=28 {
            text.push_str(&format!("2020-02-{day:02},10,10.5,9.8,10.2,100000\n"));
        }
        std::fs::write(&csv, text).unwrap();
        services
            .market()
            .import_csv(&csv, &mut |_| {})
            .await
            .unwrap();
        let wal = dir.path().join("wyckoff.db-wal");
        let wal_bytes = || std::fs::metadata(&wal).map_or(0, |m| m.len());
        assert!(wal_bytes() > 0, "the import wrote through the log");

        state.end_session(Duration::from_secs(1)).await;
        assert_eq!(wal_bytes(), 0, "the log was checkpointed and truncated");
    }
}
