//! What a desk tells its front ends, as one stream: the app carries it over IPC, the CLI
//! prints it, and a later front end (a chat bot) subscribes the same way.

use serde::{Deserialize, Serialize};
use specta::Type;

use crate::{InboxRequest, RunReport, RuntimeEvent, TaskInfo, TurnKind};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DeskEvent {
    /// One event of a turn, the user's and the follow-ups that answer background tasks
    /// and approvals alike.
    Turn {
        conversation_id: String,
        /// The turn's number in this process (tells a conversation's turns apart).
        turn: u32,
        kind: TurnKind,
        /// What the caller passed when it started the turn, to recognise its events;
        /// `None` on follow-up turns.
        client_ref: Option<String>,
        event: RuntimeEvent,
    },
    /// A background task was queued, moved or finished.
    Task { task: TaskInfo },
    /// A scheduled run ended.
    ScheduleRan { run: RunReport },
    /// What waits in the approval inbox after an unattended pass; `expired` requests were
    /// refused in it because nobody answered in time.
    Inbox {
        pending: Vec<InboxRequest>,
        expired: u32,
    },
}
