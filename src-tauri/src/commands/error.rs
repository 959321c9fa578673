//! The one error every IPC command returns: a small `kind` the window branches on, the
//! message in words (a library error's `Display`, never its `Debug`), and the stock code
//! when a page words the error itself. Library errors convert with `From`, so a command
//! stays a chain of `?` and every page reads the same kind for the same failure.

use std::fmt::Display;

use serde::Serialize;
use specta::Type;

/// What kind of failure it was: what the window can do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum CommandErrorKind {
    /// The input was refused as given (a bad code, name, date or spec, a taken name, a
    /// failed validation): nothing changed.
    InvalidInput,
    /// What the command names does not exist (a conversation, a rule, a channel, a stock
    /// code with `code` set).
    NotFound,
    /// No model is configured, or its key is missing: the window leads to Settings.
    Setup,
    /// No live data source (`WYCKOFF_OFFLINE=1`, or none enabled in Settings).
    Offline,
    /// Something the command needs did not answer or has nothing (a data source, an MCP
    /// server, the keychain, a stock without bars).
    Unavailable,
    /// Something running must finish first (a turn in the conversation): try again later.
    Busy,
    /// It was decided already (an approval answered before): nothing changed.
    Conflict,
    /// What the window shows is out of date (an approval's preview changed): look again.
    Stale,
    /// Too late (an approval answered after its expiry): it was refused.
    Expired,
    /// Anything else: a store, a file, a task that failed.
    Internal,
}

/// Every command's error: the window branches on `kind` and shows `message`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type, thiserror::Error)]
#[error("{message}")]
pub struct CommandError {
    pub kind: CommandErrorKind,
    pub message: String,
    /// The six-digit code the error is about (an unknown code, a stock without data, a
    /// failed sync), for pages that word it in the user's language.
    pub code: Option<String>,
}

impl CommandError {
    pub fn new(kind: CommandErrorKind, message: impl Into<String>) -> Self {
        CommandError {
            kind,
            message: message.into(),
            code: None,
        }
    }

    pub fn invalid(e: impl Display) -> Self {
        Self::new(CommandErrorKind::InvalidInput, e.to_string())
    }

    pub fn not_found(e: impl Display) -> Self {
        Self::new(CommandErrorKind::NotFound, e.to_string())
    }

    pub fn unavailable(e: impl Display) -> Self {
        Self::new(CommandErrorKind::Unavailable, e.to_string())
    }

    pub fn internal(e: impl Display) -> Self {
        Self::new(CommandErrorKind::Internal, e.to_string())
    }

    pub fn offline() -> Self {
        Self::new(
            CommandErrorKind::Offline,
            "offline: no live data source is enabled",
        )
    }

    /// The stock code the error is about.
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// A well-formed code that names no stock.
    pub fn unknown_code(code: impl Into<String>, why: &str) -> Self {
        let code = code.into();
        Self::not_found(format!("unknown stock code {code}: {why}")).with_code(code)
    }
}

impl From<wyckoff_session::SessionError> for CommandError {
    fn from(e: wyckoff_session::SessionError) -> Self {
        use wyckoff_session::SessionError as S;
        use wyckoff_session::domain::inbox::InboxError;
        let message = e.to_string();
        let kind = match e {
            S::NoModelConfigured
            | S::UnknownModelEntry(_)
            | S::MissingKey { .. }
            | S::UnknownProvider { .. }
            | S::Settings(_) => CommandErrorKind::Setup,
            S::SessionNotFound(_) | S::Inbox(InboxError::NotFound(_)) => CommandErrorKind::NotFound,
            S::Skill(_) | S::InvalidOption(_) => CommandErrorKind::InvalidInput,
            // Another process's turn holds the conversation as surely as this one's.
            S::Busy(_) | S::BusyElsewhere { .. } | S::Inbox(InboxError::NotRun { .. }) => {
                CommandErrorKind::Busy
            }
            S::Inbox(InboxError::AlreadyDecided { .. }) => CommandErrorKind::Conflict,
            S::Inbox(InboxError::PreviewChanged { .. }) => CommandErrorKind::Stale,
            // A store's failure means what it means from the store itself.
            S::Storage(m) => memory_kind(&m),
            S::Market(m) => Self::from(m).kind,
            S::Push(p) => Self::from(p).kind,
            S::Alerts(a) => Self::from(a).kind,
            S::Notes(a) => Self::from(a).kind,
            S::Journal(j) => Self::from(j).kind,
            S::Schedules(s) => Self::from(*s).kind,
            _ => CommandErrorKind::Internal,
        };
        Self::new(kind, message)
    }
}

fn memory_kind(e: &wyckoff_session::domain::memory::MemoryError) -> CommandErrorKind {
    use wyckoff_session::domain::memory::MemoryError as M;
    match e {
        M::ConversationNotFound(_)
        | M::NotFound(_)
        | M::MessageNotFound { .. }
        | M::TurnNotFound(_)
        | M::ArchiveNotFound(_) => CommandErrorKind::NotFound,
        M::UnknownType { .. }
        | M::EmptyContent
        | M::InvalidCode(_)
        | M::Duplicate { .. }
        | M::InvalidArchiveRef(_) => CommandErrorKind::InvalidInput,
        // The history up to there is still being written by a turn.
        M::ForkInRunningToolRound { .. } => CommandErrorKind::Busy,
        _ => CommandErrorKind::Internal,
    }
}

impl From<wyckoff_session::domain::memory::MemoryError> for CommandError {
    fn from(e: wyckoff_session::domain::memory::MemoryError) -> Self {
        Self::new(memory_kind(&e), e.to_string())
    }
}

impl From<wyckoff_session::domain::inbox::InboxError> for CommandError {
    fn from(e: wyckoff_session::domain::inbox::InboxError) -> Self {
        wyckoff_session::SessionError::from(e).into()
    }
}

impl From<wyckoff_session::reports::ChartError> for CommandError {
    fn from(e: wyckoff_session::reports::ChartError) -> Self {
        use wyckoff_session::reports::ChartError as C;
        let message = e.to_string();
        match e {
            C::InvalidCode { message } => Self::invalid(message),
            C::UnknownCode { code } => Self::not_found(message).with_code(code),
            // The page words it as the code and why, so the message is only the why.
            C::NoData { code, message } => Self::unavailable(message).with_code(code),
            C::Other { message } => Self::internal(message),
        }
    }
}

// Code and market errors mean the same on every page as on the chart.
impl From<wyckoff_session::domain::market::MarketError> for CommandError {
    fn from(e: wyckoff_session::domain::market::MarketError) -> Self {
        wyckoff_session::reports::ChartError::from(e).into()
    }
}

impl From<wyckoff_session::domain::market::CodeError> for CommandError {
    fn from(e: wyckoff_session::domain::market::CodeError) -> Self {
        Self::invalid(e)
    }
}

impl From<wyckoff_session::domain::market::watchlist::WatchlistError> for CommandError {
    fn from(e: wyckoff_session::domain::market::watchlist::WatchlistError) -> Self {
        use wyckoff_session::domain::market::watchlist::WatchlistError as W;
        match e {
            W::Code(c) => Self::invalid(c),
            other => Self::internal(other),
        }
    }
}

impl From<wyckoff_session::domain::alerts::RuleError> for CommandError {
    fn from(e: wyckoff_session::domain::alerts::RuleError) -> Self {
        Self::invalid(e)
    }
}

impl From<wyckoff_session::domain::alerts::StoreError> for CommandError {
    fn from(e: wyckoff_session::domain::alerts::StoreError) -> Self {
        match e {
            wyckoff_session::domain::alerts::StoreError::NotFound(_) => Self::not_found(e),
            _ => Self::internal(e),
        }
    }
}

impl From<wyckoff_session::domain::annotations::AnnotationError> for CommandError {
    fn from(e: wyckoff_session::domain::annotations::AnnotationError) -> Self {
        use wyckoff_session::domain::annotations::AnnotationError as A;
        match e {
            A::Db(_) | A::Migrate(_) => Self::internal(e),
            A::NotFound(_) => Self::not_found(e),
            A::UnknownCode(ref code) => {
                let code = code.clone();
                Self::not_found(e).with_code(code)
            }
            other => Self::invalid(other),
        }
    }
}

impl From<wyckoff_config::mcp::McpConfigError> for CommandError {
    fn from(e: wyckoff_config::mcp::McpConfigError) -> Self {
        use wyckoff_config::mcp::McpConfigError as M;
        match e {
            M::NotFound(_) => Self::not_found(e),
            // A list this app cannot read or write is not the user's input, but nothing
            // changed either way and the message says what to fix.
            _ => Self::invalid(e),
        }
    }
}

impl From<wyckoff_session::domain::push::PushError> for CommandError {
    fn from(e: wyckoff_session::domain::push::PushError) -> Self {
        match e {
            wyckoff_session::domain::push::PushError::NotFound(_) => Self::not_found(e),
            e if e.is_user_error() => Self::invalid(e),
            e => Self::internal(e),
        }
    }
}

impl From<wyckoff_session::domain::schedule::StoreError> for CommandError {
    fn from(e: wyckoff_session::domain::schedule::StoreError) -> Self {
        use wyckoff_session::domain::schedule::StoreError as S;
        match e {
            S::NotFound(_) => Self::not_found(e),
            S::Exists(_) | S::BadName(_) | S::When(_) => Self::invalid(e),
            _ => Self::internal(e),
        }
    }
}

impl From<wyckoff_session::scheduler::SchedulerError> for CommandError {
    fn from(e: wyckoff_session::scheduler::SchedulerError) -> Self {
        match e {
            wyckoff_session::scheduler::SchedulerError::Store(s) => s.into(),
            other => Self::internal(other),
        }
    }
}

impl From<wyckoff_session::reports::JobError> for CommandError {
    fn from(e: wyckoff_session::reports::JobError) -> Self {
        match e {
            wyckoff_session::reports::JobError::Offline => Self::offline(),
            wyckoff_session::reports::JobError::Refused(message) => Self::invalid(message),
        }
    }
}

impl From<wyckoff_session::domain::journal::JournalError> for CommandError {
    fn from(e: wyckoff_session::domain::journal::JournalError) -> Self {
        use wyckoff_session::domain::journal::JournalError as J;
        match e {
            J::Db(_) | J::Migrate(_) | J::Market(_) => Self::internal(e),
            // The message is the user-facing refusal (the page translates the known ones).
            other => Self::invalid(other),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use serde_json::json;
    use wyckoff_protocol::InboxStatus;
    use wyckoff_session::SessionError;
    use wyckoff_session::domain::inbox::InboxError;

    use super::*;

    fn kind(e: impl Into<CommandError>) -> CommandErrorKind {
        e.into().kind
    }

    /// The window reads `kind`, `message` and `code` by these names and these tags.
    #[test]
    fn it_serializes_as_the_window_reads_it() {
        let e = CommandError::unknown_code("688999", "not in the stock list");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({
                "kind": "not_found",
                "message": "unknown stock code 688999: not in the stock list",
                "code": "688999",
            })
        );
        assert_eq!(
            serde_json::to_value(CommandError::offline()).unwrap()["kind"],
            "offline"
        );
    }

    /// Each failure the pages tell apart has its own kind.
    #[test]
    fn session_failures_keep_their_kinds() {
        assert_eq!(
            kind(SessionError::NoModelConfigured),
            CommandErrorKind::Setup
        );
        assert_eq!(
            kind(SessionError::Busy("c1".into())),
            CommandErrorKind::Busy
        );
        assert_eq!(
            kind(SessionError::SessionNotFound("c1".into())),
            CommandErrorKind::NotFound
        );
        assert_eq!(
            kind(wyckoff_session::domain::memory::MemoryError::NotFound(7)),
            CommandErrorKind::NotFound
        );
        assert_eq!(
            kind(wyckoff_session::domain::memory::MemoryError::EmptyContent),
            CommandErrorKind::InvalidInput
        );
        // A store's error through the session keeps the store's kind.
        assert_eq!(
            kind(SessionError::Journal(
                wyckoff_session::domain::journal::JournalError::Invalid(
                    "成交价格必须大于 0".into()
                )
            )),
            CommandErrorKind::InvalidInput
        );
        assert_eq!(
            kind(SessionError::Storage(
                wyckoff_session::domain::memory::MemoryError::ConversationNotFound("c1".into())
            )),
            CommandErrorKind::NotFound
        );
    }

    #[test]
    fn inbox_failures_are_told_apart() {
        let not_found: CommandError = InboxError::NotFound("apr-x".into()).into();
        assert_eq!(not_found.kind, CommandErrorKind::NotFound);
        assert!(not_found.message.contains("apr-x"), "{not_found:?}");
        let decided: CommandError = InboxError::AlreadyDecided {
            id: "apr-y".into(),
            status: InboxStatus::Denied,
        }
        .into();
        assert_eq!(decided.kind, CommandErrorKind::Conflict);
        assert!(decided.message.contains("already denied"), "{decided:?}");
        let changed: CommandError = InboxError::PreviewChanged {
            id: "apr-z".into(),
            preview: None,
        }
        .into();
        assert_eq!(changed.kind, CommandErrorKind::Stale);
        assert!(changed.message.contains("apr-z"), "{changed:?}");
        let not_run: CommandError = InboxError::NotRun {
            id: "apr-w".into(),
            why: "busy".into(),
        }
        .into();
        assert_eq!(not_run.kind, CommandErrorKind::Busy);
        assert!(not_run.message.contains("still pending"), "{not_run:?}");
    }

    /// A stock page words an unknown code and a stock without bars itself: the code comes
    /// separately, and the message of the latter is only the why.
    #[test]
    fn chart_failures_carry_the_code() {
        use wyckoff_session::reports::ChartError;
        let unknown: CommandError = ChartError::UnknownCode {
            code: "688999".into(),
        }
        .into();
        assert_eq!(
            (unknown.kind, unknown.code.as_deref()),
            (CommandErrorKind::NotFound, Some("688999"))
        );
        let no_data: CommandError = ChartError::NoData {
            code: "600000".into(),
            message: "offline".into(),
        }
        .into();
        assert_eq!(
            (
                no_data.kind,
                no_data.code.as_deref(),
                no_data.message.as_str()
            ),
            (CommandErrorKind::Unavailable, Some("600000"), "offline")
        );
        let bad: CommandError = ChartError::InvalidCode {
            message: "not a code".into(),
        }
        .into();
        assert_eq!(bad.kind, CommandErrorKind::InvalidInput);
    }

    #[test]
    fn jobs_say_offline_or_refused() {
        assert_eq!(
            kind(wyckoff_session::reports::JobError::Offline),
            CommandErrorKind::Offline
        );
        let refused: CommandError = wyckoff_session::reports::JobError::Refused("no".into()).into();
        assert_eq!(
            (refused.kind, refused.message.as_str()),
            (CommandErrorKind::InvalidInput, "no")
        );
    }
}
