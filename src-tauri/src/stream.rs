//! The desk's event stream in the app: one reader takes every `DeskEvent` and carries it
//! over IPC as the window's events — a turn's events as `ConversationEvent`, a task's
//! change as `TaskChanged` (with the tray's count and a notification), a scheduled run as
//! `ScheduleRan`, the inbox after each unattended pass as `InboxChanged` (with a
//! notification for a new request).

use std::collections::BTreeSet;
use std::sync::{Arc, Weak};

use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::AppHandle;
use tokio::sync::mpsc::UnboundedReceiver;
use wyckoff_protocol::{DeskEvent, RuntimeEvent, TurnKind};
use wyckoff_session::Desk;

/// One event of a turn, for whichever window shows that conversation.
#[derive(Debug, Clone, Serialize, Deserialize, Type, tauri_specta::Event)]
pub struct ConversationEvent {
    pub conversation_id: String,
    /// The turn's number in this run of the app (tells a conversation's turns apart).
    pub turn: u32,
    pub kind: TurnKind,
    /// What the window passed to `start_turn`, on its own turn's events.
    pub client_ref: Option<String>,
    pub event: RuntimeEvent,
}

/// Reads the stream until the desk closes it.
pub fn forward(app: AppHandle, desk: &Arc<Desk>) {
    let mut events = desk.subscribe();
    let desk = Arc::downgrade(desk);
    tauri::async_runtime::spawn(async move { read(&app, &desk, &mut events).await });
}

async fn read(app: &AppHandle, desk: &Weak<Desk>, events: &mut UnboundedReceiver<DeskEvent>) {
    // `None` until the first pass: the inbox count is sent once at start whatever it is.
    let mut seen: Option<BTreeSet<String>> = None;
    while let Some(event) = events.recv().await {
        match event {
            DeskEvent::Turn {
                conversation_id,
                turn,
                kind,
                client_ref,
                event,
            } => {
                let e = ConversationEvent {
                    conversation_id,
                    turn,
                    kind,
                    client_ref,
                    event,
                };
                // A closed window means nobody listens; the turn still runs and is stored.
                if let Err(err) = tauri_specta::Event::emit(&e, app) {
                    tracing::debug!("conversation event not sent: {err}");
                }
            }
            DeskEvent::Task { task } => {
                let Some(desk) = desk.upgrade() else { return };
                let running = desk.services().background().running().len();
                crate::tasks::changed(app, task, running);
            }
            DeskEvent::ScheduleRan { run } => crate::schedules::announce(app, &run),
            DeskEvent::Inbox { pending, expired } => {
                seen = Some(crate::inbox::tell_window(
                    app,
                    seen.as_ref(),
                    &pending,
                    expired > 0,
                ));
            }
        }
    }
}
