//! Drives a vendor decoder over an HTTP body: bytes → SSE events → [`StreamChunk`]s.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};

use crate::sse::{SseEvent, SseParser};
use crate::{ChunkStream, LlmError, StreamChunk, classify};

/// Turns one vendor's SSE events into chunks.
pub trait Decoder: Send + 'static {
    /// Handles one event. Returns `Ok(true)` when it was the vendor's final event.
    fn on_event(
        &mut self,
        event: &SseEvent,
        out: &mut VecDeque<StreamChunk>,
    ) -> Result<bool, LlmError>;

    /// The body ended. Errors when the stream stopped before the vendor's final event.
    fn on_eof(&mut self, out: &mut VecDeque<StreamChunk>) -> Result<(), LlmError>;
}

/// Content the user may already have seen (text, thinking, tool calls).
pub(crate) fn is_content(chunk: &StreamChunk) -> bool {
    matches!(
        chunk,
        StreamChunk::TextDelta(_) | StreamChunk::ThinkingDelta(_) | StreamChunk::ToolCalls(_)
    )
}

/// Decodes a whole stream held in memory, in the given network pieces (tests, bench).
pub fn decode_all<'a, D: Decoder>(
    mut decoder: D,
    pieces: impl IntoIterator<Item = &'a [u8]>,
) -> Result<Vec<StreamChunk>, LlmError> {
    let mut parser = SseParser::new();
    let mut out = VecDeque::new();
    let mut events = Vec::new();
    for piece in pieces {
        parser.feed(piece, &mut |e| events.push(e));
        for e in events.drain(..) {
            if decoder.on_event(&e, &mut out)? {
                return Ok(out.into());
            }
        }
    }
    parser.finish(&mut |e| events.push(e));
    for e in events.drain(..) {
        if decoder.on_event(&e, &mut out)? {
            return Ok(out.into());
        }
    }
    decoder.on_eof(&mut out)?;
    Ok(out.into())
}

struct State<S, D> {
    body: S,
    parser: SseParser,
    decoder: D,
    out: VecDeque<StreamChunk>,
    events: Vec<SseEvent>,
    done: bool,
    error: Option<LlmError>,
    content_seen: bool,
    provider: String,
    secret: Option<String>,
    idle_timeout: Option<Duration>,
}

impl<S, D: Decoder> State<S, D> {
    /// Ends the stream with `e`, after the chunks decoded before it (the user should
    /// see everything that arrived before the failure).
    fn fail(&mut self, e: LlmError) {
        self.done = true;
        self.error = Some(e);
    }

    fn run_events(&mut self) -> Result<(), LlmError> {
        let events = std::mem::take(&mut self.events);
        for e in &events {
            if self.decoder.on_event(e, &mut self.out)? {
                self.done = true;
                break;
            }
        }
        self.events = events;
        self.events.clear();
        Ok(())
    }
}

/// Streams chunks decoded from an HTTP body. `idle_timeout` bounds the wait for the next
/// bytes of the body, not for the next chunk: vendors send events that carry no chunk
/// (Claude's `message_start`/`ping`, a finish reason held until usage), and a live stream
/// of those must not be taken for a stalled one.
pub(crate) fn sse_stream<S, D>(
    body: S,
    decoder: D,
    provider: String,
    secret: Option<String>,
    idle_timeout: Option<Duration>,
) -> ChunkStream
where
    S: Stream<Item = reqwest::Result<Bytes>> + Send + Unpin + 'static,
    D: Decoder,
{
    let state = State {
        body,
        parser: SseParser::new(),
        decoder,
        out: VecDeque::new(),
        events: Vec::new(),
        done: false,
        error: None,
        content_seen: false,
        provider,
        secret,
        idle_timeout,
    };
    Box::pin(futures::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(chunk) = st.out.pop_front() {
                st.content_seen |= is_content(&chunk);
                return Some((Ok(chunk), st));
            }
            if let Some(e) = st.error.take() {
                let after = e.after_content || st.content_seen;
                return Some((Err(e.with_after_content(after)), st));
            }
            if st.done {
                return None;
            }
            let next = match st.idle_timeout {
                Some(timeout) => match tokio::time::timeout(timeout, st.body.next()).await {
                    Ok(next) => next,
                    Err(_elapsed) => {
                        tracing::warn!(provider = %st.provider, ?timeout, "stream idle timeout");
                        let err = classify::idle_timeout(&st.provider, timeout);
                        st.fail(err);
                        continue;
                    }
                },
                None => st.body.next().await,
            };
            match next {
                Some(Ok(bytes)) => {
                    let mut events = std::mem::take(&mut st.events);
                    st.parser.feed(&bytes, &mut |e| events.push(e));
                    st.events = events;
                    if let Err(e) = st.run_events() {
                        st.fail(e);
                    }
                }
                Some(Err(e)) => {
                    let err = classify::from_transport(&st.provider, e, st.secret.as_deref());
                    st.fail(err);
                }
                None => {
                    let mut events = std::mem::take(&mut st.events);
                    st.parser.finish(&mut |e| events.push(e));
                    st.events = events;
                    let result = st.run_events().and_then(|()| {
                        if st.done {
                            Ok(())
                        } else {
                            st.decoder.on_eof(&mut st.out)
                        }
                    });
                    match result {
                        Err(e) => st.fail(e),
                        Ok(()) => st.done = true,
                    }
                }
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::OpenAiDecoder;
    use wyckoff_protocol::ErrorKind;

    #[tokio::test]
    async fn chunks_before_an_error_in_the_same_read_are_delivered() {
        let read = Bytes::from_static(
            b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"seen\"}}]}\n\ndata: {broken\n\n",
        );
        let body = futures::stream::iter(vec![Ok::<Bytes, reqwest::Error>(read)]);
        let mut s = sse_stream(body, OpenAiDecoder::new("t", None), "t".into(), None, None);
        assert_eq!(
            s.next().await.unwrap().unwrap(),
            StreamChunk::TextDelta("seen".into())
        );
        let err = s.next().await.unwrap().unwrap_err();
        assert_eq!(err.kind, ErrorKind::Protocol);
        assert!(err.after_content);
        assert!(s.next().await.is_none());
    }
}
