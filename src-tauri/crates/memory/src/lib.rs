//! Long-term memory with Chinese recall, and the conversation store (SQLite).
