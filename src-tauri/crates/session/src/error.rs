use wyckoff_protocol::ErrorKind;

/// Why a session could not be assembled or a turn could not be stored. Messages are
/// written for the person at the keyboard: they say what to change.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("unknown provider '{given}'; expected one of: {expected}")]
    UnknownProvider { given: String, expected: String },
    #[error(
        "no model is configured: add one in the desktop app (Settings → Models) or pass --provider NAME (claude, openai, gemini, deepseek, qwen, kimi, ollama, openai-compatible)"
    )]
    NoModelConfigured,
    #[error("the settings name model '{0}', but no model entry has that id: fix the settings file")]
    UnknownModelEntry(String),
    #[error(
        "no API key for {provider}: set {env_var} in the environment, or store the key in the keychain (desktop app: Settings → Models)"
    )]
    MissingKey { provider: String, env_var: String },
    #[error("{0}")]
    InvalidOption(String),
    #[error("conversation '{0}' was not found in the data home; omit --session to start a new one")]
    SessionNotFound(String),
    #[error("settings: {0}")]
    Settings(#[from] wyckoff_config::SettingsError),
    #[error("{0}")]
    Provider(#[from] wyckoff_llm::LlmError),
    #[error("conversation store: {0}")]
    Storage(#[from] wyckoff_memory::MemoryError),
    #[error("agent runtime: {0}")]
    Agent(#[from] wyckoff_agent::AgentError),
    #[error(transparent)]
    Inbox(#[from] wyckoff_inbox::InboxError),
    #[error("market data: {0}")]
    Market(#[from] wyckoff_market::MarketError),
    #[error("data home: {0}")]
    Io(#[from] std::io::Error),
    #[error("push outbox: {0}")]
    Push(#[from] wyckoff_push::PushError),
    #[error(transparent)]
    Alerts(#[from] wyckoff_alerts::StoreError),
    #[error(transparent)]
    Skill(#[from] wyckoff_agent::SkillError),
    #[error("forward tracking: {0}")]
    Tracking(#[from] wyckoff_track::TrackError),
    #[error("chart notes: {0}")]
    Notes(#[from] wyckoff_annotations::AnnotationError),
    #[error("journal: {0}")]
    Journal(#[from] wyckoff_journal::JournalError),
    #[error(transparent)]
    Schedules(#[from] Box<crate::scheduler::SchedulerError>),
    #[error(transparent)]
    Bots(#[from] crate::bot_store::BotError),
    #[error("a turn is already running in conversation '{0}': wait for it or cancel it")]
    Busy(String),
    #[error(
        "a turn is already running in conversation '{conversation}' in another process (the app, the daemon or another wyckoff command; since {since}): wait for it or cancel it there"
    )]
    BusyElsewhere { conversation: String, since: String },
}

impl SessionError {
    /// True when the caller asked for something impossible (unknown provider, missing
    /// key, bad option, unknown session): the CLI exits with status 2 for these.
    pub fn is_user_error(&self) -> bool {
        match self {
            SessionError::UnknownProvider { .. }
            | SessionError::NoModelConfigured
            | SessionError::UnknownModelEntry(_)
            | SessionError::MissingKey { .. }
            | SessionError::InvalidOption(_)
            | SessionError::SessionNotFound(_)
            | SessionError::Skill(_)
            | SessionError::Busy(_)
            | SessionError::BusyElsewhere { .. }
            | SessionError::Settings(_) => true,
            SessionError::Inbox(e) => e.is_user_error(),
            SessionError::Provider(e) => matches!(
                e.kind,
                ErrorKind::InvalidRequest | ErrorKind::Authentication
            ),
            _ => false,
        }
    }
}
