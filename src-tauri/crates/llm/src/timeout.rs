//! Stream idle timeout (seed §11): a deadline between chunks that also fires when the
//! peer keeps the connection open and sends nothing (half-open TCP).

use std::time::Duration;

use futures::StreamExt;

use crate::stream::is_content;
use crate::{ChunkStream, classify};

/// Default time allowed between two chunks.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// The range users may configure, in seconds.
pub const USER_IDLE_TIMEOUT_RANGE: (u64, u64) = (10, 600);

/// A user-configured timeout in seconds, clamped into 10–600.
pub fn user_idle_timeout(seconds: u64) -> Duration {
    let (lo, hi) = USER_IDLE_TIMEOUT_RANGE;
    Duration::from_secs(seconds.clamp(lo, hi))
}

/// Ends `inner` with a Timeout error when no item arrives within `timeout`. The timer
/// restarts after every item, so it is both a first-token and an inter-chunk timeout.
/// Dropping the inner stream on timeout closes the connection.
pub fn with_idle_timeout(inner: ChunkStream, timeout: Duration, provider: String) -> ChunkStream {
    let state = (Some(inner), false, provider);
    Box::pin(futures::stream::unfold(
        state,
        move |(inner, content_seen, provider)| async move {
            let mut stream = inner?;
            match tokio::time::timeout(timeout, stream.next()).await {
                Ok(Some(item)) => {
                    let seen = content_seen || item.as_ref().is_ok_and(is_content);
                    Some((item, (Some(stream), seen, provider)))
                }
                Ok(None) => None,
                Err(_elapsed) => {
                    tracing::warn!(provider = %provider, ?timeout, "stream idle timeout");
                    let err =
                        classify::idle_timeout(&provider, timeout).with_after_content(content_seen);
                    drop(stream);
                    Some((Err(err), (None, content_seen, provider)))
                }
            }
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_values_are_clamped() {
        assert_eq!(user_idle_timeout(1), Duration::from_secs(10));
        assert_eq!(user_idle_timeout(60), Duration::from_secs(60));
        assert_eq!(user_idle_timeout(10_000), Duration::from_secs(600));
    }
}
