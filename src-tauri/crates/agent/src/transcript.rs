//! The turn's transcript: every message the turn adds to the conversation, handed out the
//! moment it is added, so a caller can store it before the next model call (closing the
//! app mid-turn loses nothing already produced).
//!
//! Not recorded: the user's own input (the caller stores it before the turn starts) and
//! the turn-internal prompts the runtime removes at the end (loop-guard corrections,
//! continuation prompts and the text answers they corrected).

use wyckoff_protocol::Message;

pub trait Transcript: Send + Sync {
    fn append(&self, message: &Message);
}

/// Records nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoTranscript;

impl Transcript for NoTranscript {
    fn append(&self, _message: &Message) {}
}

/// Forwards each message into a channel (the session's storage task reads it in order).
impl Transcript for tokio::sync::mpsc::UnboundedSender<Message> {
    fn append(&self, message: &Message) {
        // A closed receiver means the caller stopped storing; the turn still runs.
        let _ = self.send(message.clone());
    }
}
