//! The domain crates as far as a front end may reach them. The app and the CLI name only
//! `wyckoff-session`, `wyckoff-protocol` and `wyckoff-config` in their `Cargo.toml`; what
//! they use of the crates below is listed here by name, so the surface they reach is one
//! reviewed list rather than every crate's whole API. Stores are reached through the
//! [`crate::Desk`], never built from a pool by a front end; so is the agent's market work
//! done without a model (analysis, screen, backtest, charts, jobs), whose types are in
//! [`crate::reports`].

/// The agent runtime: event sinks, approvers, background tasks, skills, sub-agent roles.
pub mod agent {
    pub use wyckoff_agent::{
        BackgroundTaskManager, EventSink, FnSink, HeadlessApprover, NullSink, PendingApprovals,
        ProgressHandle, SkillSet, SkillSource, SystemClock, ToolError, TurnOutcome, background,
        skills, subagents,
    };
}

/// Alert rules and their checks.
pub mod alerts {
    pub use wyckoff_alerts::{
        AlertStore, NewRule, RuleError, StoreError, deliver, describe, has_work, validate,
    };
}

/// Chart notes.
pub mod annotations {
    pub use wyckoff_annotations::{
        Annotation, AnnotationError, AnnotationStore, Author, NotePeriod, Remover, Shape,
        known_code,
    };
}

/// The Wyckoff engine: phases, known-on marks, tracking statistics, screening configuration.
pub mod engine {
    pub use wyckoff_engine::{
        FunnelConfig, L4Config, Phase, RegimeReason, dates, known_on, phases, track,
    };
}

/// The approval inbox.
pub mod inbox {
    pub use wyckoff_inbox::{InboxError, InboxStore, policy};
}

/// The trade journal and its money formatting.
pub mod journal {
    pub use wyckoff_journal::{
        AfterSale, DayValue, Difference, DifferenceKind, EntryKind, EntryOutcome, EntryRow, Fees,
        ImportOutcome, JournalError, JournalReport, JournalSummary, KindCount, NewEntry, NewFill,
        Performance, Reconciliation, STATEMENT_MAX_BYTES, Side, Source, money, report,
    };
}

/// Market data: codes, bars, sync and import, the calendar, the watchlist and portfolio.
pub mod market {
    /// Concept blocks' strength on a day, and a stock's memberships as of a day.
    pub use wyckoff_market::concepts::{ConceptRow, ConceptStrength, ConceptTable};
    /// Stock history as of a date: names from each day, listing and delisting days.
    pub use wyckoff_market::history::{
        CodeHistory, HistoryCounts, HistorySync, HistorySyncError, ListStatus, Listing,
        SnapshotInfo, SpanWrite, StoredSpan,
    };
    /// Industry and concept membership, per load day.
    pub use wyckoff_market::industries::{
        IndustriesImportError, IndustriesImportReport, IndustriesImportStatus, IndustryCoverage,
        IndustrySource, LoadInfo, LoadWrite, MemberKind,
    };
    pub use wyckoff_market::membership::StockMembership;
    pub use wyckoff_market::name_import::{
        BadLine, LineProblem, NamesImportError, NamesImportReport, NamesImportStatus,
    };
    pub use wyckoff_market::{
        Bar, BarsResult, CodeError, CodeStatus, DataStatus, FileStatus, Freshness, ImportEvent,
        ImportReport, IndexCode, ManualClock, MarketConfig, MarketData, MarketError,
        PortfolioError, PortfolioView, SourceSpec, StatusReport, StockCode, SyncEvent, SyncOutcome,
        SyncStatus, SyncTarget, breaker, calendar_store, date, facade, import, portfolio, sources,
        tdx, universe, watchlist,
    };
    /// Minute bars: the store, their sync and the stock page at a minute period.
    pub use wyckoff_market::{minute, minute_chart, minute_sync};
}

/// MCP both ways: the server the CLI serves and the clients the agent uses.
pub mod mcp {
    pub use wyckoff_mcp::{HttpServer, ServeError, agent_tools, client, offer, serve_stdio};
}

/// Conversations and long-term memory as stored.
pub mod memory {
    pub use wyckoff_memory::{
        Conversation, ConversationStore, Memory, MemoryError, MemoryStore, MemoryType,
        MessageStatus, StoredMessage, TurnOutcome, open_pool,
    };
}

/// Push channels and their outbox.
pub mod push {
    pub use wyckoff_push::{
        Channel, ChannelKind, DamagedChannel, Delivery, EmailSettings, Outbox, OutboxRow,
        OutboxStatus, PushError, PushEvent, SecretIn, events, parse_events, split_pasted,
        valid_header,
    };
}

/// Schedules on the trading calendar.
pub mod schedule {
    pub use wyckoff_schedule::{
        DamagedSchedule, Days, Job, Schedule, ScheduleRun, StoreError, When, when,
    };
}

/// Forward tracking of screens.
pub mod track {
    pub use wyckoff_track::{
        Origin, TrackStats, TrackedScreen, backfill, stats, stats_of, tracked,
    };
}
