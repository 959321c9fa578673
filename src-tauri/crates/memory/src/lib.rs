//! Long-term memory with Chinese recall, and the conversation store (SQLite).
//!
//! Everything lives in the shared `wyckoff.db`; this crate's migrations are numbered from
//! 1000 and run with `ignore_missing` so other crates can keep theirs in the same file.
//!
//! - [`MemoryStore`]: the `agent_memory` table, its FTS5 index over CJK bigrams
//!   ([`tokenize`]), capacity caps ([`capacity`]), recall ([`recall`], scored by the pure
//!   functions in [`scoring`]) and the CLI operations (list/search/add/update/delete).
//! - [`extraction`]: session-end extraction and the memory flush before compaction.
//! - [`ConversationStore`]: conversations, turns, messages, search, export, and the
//!   archive of messages compaction removed ([`archive`]), and forks ([`fork`]).

pub mod archive;
pub mod capacity;
mod clock;
mod conversation_lease;
mod conversations;
mod db;
mod error;
mod export;
pub mod extraction;
pub mod fork;
mod memory_type;
pub mod recall;
pub mod scoring;
mod store;
mod time;
pub mod tokenize;

pub use archive::{ArchiveInfo, ArchiveRef, ArchivedMessages};
pub use clock::{Clock, ManualClock, SystemClock};
pub use conversation_lease::LeaseHolder;
pub use conversations::{
    Conversation, ConversationStore, ForkOrigin, MessageExtras, MessageSearchHit, MessageStatus,
    StoredMessage, Turn, TurnOutcome,
};
pub use db::{migrate, open_pool};
pub use error::MemoryError;
pub use export::{ConversationExport, to_markdown};
pub use extraction::{ExtractionOutcome, extract_session_memories, flush_before_compaction};
pub use fork::Fork;
pub use memory_type::MemoryType;
pub use recall::{Recall, RecalledMemory};
pub use store::{Memory, MemoryStore, NewMemory, SaveOutcome};

pub type Result<T, E = MemoryError> = std::result::Result<T, E>;
