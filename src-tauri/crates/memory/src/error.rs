use wyckoff_llm::LlmError;

use crate::MemoryType;

/// Failures of the memory crate. Messages are written for the CLI and the UI.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error(
        "unknown memory type `{given}`; valid types: {}",
        MemoryType::valid_list()
    )]
    UnknownType { given: String },
    #[error("memory content is empty")]
    EmptyContent,
    #[error("invalid stock code `{0}`: expected 6 digits")]
    InvalidCode(String),
    #[error("memory #{0} not found")]
    NotFound(i64),
    #[error("a {memory_type} memory with the same content already exists (#{id})")]
    Duplicate { memory_type: MemoryType, id: i64 },
    #[error("conversation `{0}` not found")]
    ConversationNotFound(String),
    #[error("message #{seq} not found in conversation `{conversation}`")]
    MessageNotFound { conversation: String, seq: i64 },
    #[error(
        "message #{seq} of conversation `{conversation}` is in a tool round that is still \
         running (calls without results yet); fork there once the turn has ended"
    )]
    ForkInRunningToolRound { conversation: String, seq: i64 },
    #[error("turn `{0}` not found")]
    TurnNotFound(String),
    #[error("invalid archive reference `{0}`: expected archive://<conversation>/<id>")]
    InvalidArchiveRef(String),
    #[error("archive `{0}` not found")]
    ArchiveNotFound(String),
    #[error("stored data is unreadable: {0}")]
    Corrupt(String),
    #[error("model call failed: {0}")]
    Llm(#[from] LlmError),
}
