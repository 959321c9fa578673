//! Where runtime events go: a channel to the CLI printer, a Tauri IPC channel in the app,
//! a collector in tests.

use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use wyckoff_protocol::RuntimeEvent;

use crate::scratchpad::ScratchpadRecord;

/// Receives every event of a turn, in order. Must not block: it is called on the hot
/// path for every streamed delta.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: RuntimeEvent);

    /// Writes a line into the turn's scratchpad where this sink belongs to a turn that
    /// keeps one (a delegated sub-agent's tool calls reach its parent's scratchpad so).
    fn record(&self, _record: &ScratchpadRecord) {}
}

impl EventSink for mpsc::UnboundedSender<RuntimeEvent> {
    fn emit(&self, event: RuntimeEvent) {
        // A closed receiver means nobody is listening any more; the turn goes on regardless.
        let _ = self.send(event);
    }
}

/// Adapts a closure.
pub struct FnSink<F>(pub F);

impl<F> EventSink for FnSink<F>
where
    F: Fn(RuntimeEvent) + Send + Sync,
{
    fn emit(&self, event: RuntimeEvent) {
        (self.0)(event)
    }
}

/// Drops everything (sub-tasks that have no listener).
#[derive(Debug, Default, Clone, Copy)]
pub struct NullSink;

impl EventSink for NullSink {
    fn emit(&self, _event: RuntimeEvent) {}
}

/// Keeps every event; for tests and for callers that want the whole transcript.
#[derive(Debug, Default)]
pub struct CollectingSink {
    events: Mutex<Vec<RuntimeEvent>>,
}

impl CollectingSink {
    pub fn new() -> Arc<Self> {
        Arc::new(CollectingSink::default())
    }

    pub fn events(&self) -> Vec<RuntimeEvent> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

impl EventSink for CollectingSink {
    fn emit(&self, event: RuntimeEvent) {
        if let Ok(mut events) = self.events.lock() {
            events.push(event);
        }
    }
}
