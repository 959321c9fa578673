use wyckoff_protocol::ErrorKind;

/// Failures of the runtime's own machinery (storage, files). Tool and provider failures
/// are not errors of this type: they become tool results and `turn_failed` events.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("database migration: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{0}")]
    Invalid(String),
}

impl AgentError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            AgentError::Invalid(_) => ErrorKind::InvalidRequest,
            _ => ErrorKind::Internal,
        }
    }
}
