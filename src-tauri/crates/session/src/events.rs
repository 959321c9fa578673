//! The desk's one event stream ([`wyckoff_protocol::DeskEvent`]). Every subscriber gets
//! every event published after it subscribed, in order. The channels are unbounded so a
//! slow reader never loses a turn's text; a subscriber that went away is forgotten at the
//! next event, and [`DeskEvents::close`] ends every subscription.

use std::sync::{Arc, Mutex};

use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;
use wyckoff_agent::{BackgroundTaskManager, EventSink};
use wyckoff_protocol::{DeskEvent, RuntimeEvent};

use crate::{TurnMeta, TurnOutput};

#[derive(Clone, Default)]
pub struct DeskEvents {
    subscribers: Arc<Mutex<Vec<mpsc::UnboundedSender<DeskEvent>>>>,
}

impl DeskEvents {
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<DeskEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.lock().push(tx);
        rx
    }

    pub fn publish(&self, event: DeskEvent) {
        self.lock().retain(|tx| tx.send(event.clone()).is_ok());
    }

    /// Ends every subscription: each receiver gets what was published before, then `None`.
    pub fn close(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<mpsc::UnboundedSender<DeskEvent>>> {
        self.subscribers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Publishes every change of the background tasks until the manager is gone. Only
    /// the receiver is kept, so the manager's life is not extended by the stream.
    pub(crate) fn follow_tasks(&self, tasks: &BackgroundTaskManager) {
        let mut rx = tasks.subscribe();
        let events = self.clone();
        tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(task) => events.publish(DeskEvent::Task { task }),
                    // A slow stream missed some progress; the next change still comes.
                    Err(RecvError::Lagged(n)) => {
                        tracing::debug!("desk events skipped {n} task updates")
                    }
                    Err(RecvError::Closed) => return,
                }
            }
        });
    }
}

/// The hub's output on a desk: every turn's events go out on the stream, tagged with
/// the turn they belong to.
pub(crate) struct StreamOutput(pub(crate) DeskEvents);

impl TurnOutput for StreamOutput {
    fn sink(&self, turn: &TurnMeta) -> Arc<dyn EventSink> {
        Arc::new(TurnSink {
            events: self.0.clone(),
            meta: turn.clone(),
        })
    }
}

struct TurnSink {
    events: DeskEvents,
    meta: TurnMeta,
}

impl EventSink for TurnSink {
    fn emit(&self, event: RuntimeEvent) {
        self.events.publish(DeskEvent::Turn {
            conversation_id: self.meta.conversation_id.clone(),
            turn: self.meta.turn,
            kind: self.meta.kind,
            client_ref: self.meta.client_ref.clone(),
            event,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wyckoff_protocol::TurnKind;

    fn turn_event(text: &str) -> DeskEvent {
        DeskEvent::Turn {
            conversation_id: "c1".into(),
            turn: 1,
            kind: TurnKind::User,
            client_ref: None,
            event: RuntimeEvent::TextDelta { text: text.into() },
        }
    }

    /// Each subscriber sees what was published after it subscribed, in order; closing
    /// ends every subscription after what was already sent; a dropped receiver does not
    /// stop the others.
    #[tokio::test]
    async fn subscribers_get_every_later_event_in_order_until_closed() {
        let events = DeskEvents::default();
        events.publish(turn_event("before anyone listened"));
        let mut first = events.subscribe();
        let dropped = events.subscribe();
        drop(dropped);
        events.publish(turn_event("a"));
        let mut second = events.subscribe();
        events.publish(turn_event("b"));
        events.close();
        events.publish(turn_event("after close"));

        let mut got = Vec::new();
        while let Some(e) = first.recv().await {
            got.push(e);
        }
        assert_eq!(got, vec![turn_event("a"), turn_event("b")]);
        assert_eq!(second.recv().await, Some(turn_event("b")));
        assert_eq!(second.recv().await, None);
    }
}
