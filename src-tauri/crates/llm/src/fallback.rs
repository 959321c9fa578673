//! Ordered fallback between providers (seed §6): a retryable failure before any content
//! switches to the next provider and says so; after content, the consumer is told to
//! discard the partial text (only if the policy allows resending), never given a
//! silent duplicate.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use futures::StreamExt;
use wyckoff_protocol::{ErrorKind, Tier};

use crate::stream::is_content;
use crate::{ChatRequest, ChunkStream, LlmError, Provider, Serving, StreamChunk};

/// When a failed attempt may be sent again to the next provider.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FallbackPolicy {
    /// Also resend after failures the vendor may have billed (it accepted the request:
    /// a timeout after sending, a stream that broke, output already shown). Off by
    /// default: the error goes to the caller, which decides.
    pub resend_possibly_billed: bool,
}

/// What to do about one failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    No,
    Yes { discard_text: bool },
}

/// Whether the vendor may have charged for the failed attempt: it got far enough to
/// process the request. Rejections at the door (rate limit, overload, auth, invalid)
/// cost nothing; connection failures before the response cost nothing.
pub fn may_have_been_billed(err: &LlmError, in_stream: bool) -> bool {
    if err.after_content {
        return true;
    }
    match err.kind {
        ErrorKind::RateLimit
        | ErrorKind::Overloaded
        | ErrorKind::Authentication
        | ErrorKind::Permission
        | ErrorKind::InvalidRequest
        | ErrorKind::ContextTooLong
        | ErrorKind::Cancelled => false,
        ErrorKind::Network | ErrorKind::Server => in_stream,
        ErrorKind::Timeout | ErrorKind::Protocol | ErrorKind::Internal => true,
    }
}

/// The switching rule, as a pure function.
pub fn decide(
    err: &LlmError,
    in_stream: bool,
    content_seen: bool,
    has_next: bool,
    policy: FallbackPolicy,
) -> Switch {
    if !has_next || !err.is_retryable() {
        return Switch::No;
    }
    let billed = content_seen || may_have_been_billed(err, in_stream);
    if billed && !policy.resend_possibly_billed {
        return Switch::No;
    }
    Switch::Yes {
        discard_text: content_seen || err.after_content,
    }
}

pub struct FallbackProvider {
    providers: Vec<Arc<dyn Provider>>,
    policy: FallbackPolicy,
    /// Index of the provider that served (or is serving) the latest request.
    active: Arc<AtomicUsize>,
}

impl FallbackProvider {
    /// `providers` in order of preference; at least one.
    pub fn new(
        providers: Vec<Arc<dyn Provider>>,
        policy: FallbackPolicy,
    ) -> Result<FallbackProvider, LlmError> {
        if providers.is_empty() {
            return Err(LlmError::new(
                ErrorKind::InvalidRequest,
                "fallback",
                "No model is configured: add one in Settings → Models.",
            ));
        }
        Ok(FallbackProvider {
            providers,
            policy,
            active: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// One provider needs no wrapper; more get a [`FallbackProvider`].
    pub fn wrap(
        mut providers: Vec<Arc<dyn Provider>>,
        policy: FallbackPolicy,
    ) -> Result<Arc<dyn Provider>, LlmError> {
        if providers.len() == 1
            && let Some(only) = providers.pop()
        {
            return Ok(only);
        }
        Ok(Arc::new(FallbackProvider::new(providers, policy)?))
    }

    pub fn providers(&self) -> &[Arc<dyn Provider>] {
        &self.providers
    }

    fn current(&self) -> &Arc<dyn Provider> {
        let i = self.active.load(Ordering::Relaxed);
        &self.providers[i.min(self.providers.len() - 1)]
    }
}

fn notice(
    from: &dyn Provider,
    to: &dyn Provider,
    err: &LlmError,
    discard_text: bool,
) -> StreamChunk {
    tracing::warn!(from = from.name(), to = to.name(), kind = ?err.kind, "falling back to the next provider");
    StreamChunk::Fallback {
        from: from.name().to_string(),
        to: to.name().to_string(),
        reason: err.message.clone(),
        discard_text,
    }
}

struct State {
    providers: Vec<Arc<dyn Provider>>,
    policy: FallbackPolicy,
    active: Arc<AtomicUsize>,
    req: ChatRequest,
    idx: usize,
    inner: Option<ChunkStream>,
    notices: VecDeque<StreamChunk>,
    content_seen: bool,
    done: bool,
}

impl State {
    /// Handles a failure of provider `idx`; `Some(err)` ends the stream with it.
    fn on_error(&mut self, err: LlmError, in_stream: bool) -> Option<LlmError> {
        let has_next = self.idx + 1 < self.providers.len();
        match decide(&err, in_stream, self.content_seen, has_next, self.policy) {
            Switch::Yes { discard_text } => {
                let from = self.providers[self.idx].clone();
                self.idx += 1;
                self.active.store(self.idx, Ordering::Relaxed);
                let to = self.providers[self.idx].clone();
                self.notices
                    .push_back(notice(from.as_ref(), to.as_ref(), &err, discard_text));
                self.inner = None;
                self.content_seen = false;
                None
            }
            Switch::No => {
                self.done = true;
                let after = err.after_content || self.content_seen;
                Some(err.with_after_content(after))
            }
        }
    }
}

#[async_trait]
impl Provider for FallbackProvider {
    fn name(&self) -> &str {
        self.current().name()
    }

    fn model(&self) -> &str {
        self.current().model()
    }

    fn context_window(&self) -> u32 {
        self.current().context_window()
    }

    fn last_tier(&self) -> Option<Tier> {
        self.current().last_tier()
    }

    fn serving(&self, req: &ChatRequest) -> Serving {
        self.current().serving(req)
    }

    async fn stream(&self, req: &ChatRequest) -> Result<ChunkStream, LlmError> {
        let mut state = State {
            providers: self.providers.clone(),
            policy: self.policy,
            active: self.active.clone(),
            req: req.clone(),
            idx: 0,
            inner: None,
            notices: VecDeque::new(),
            content_seen: false,
            done: false,
        };
        self.active.store(0, Ordering::Relaxed);
        // Open the first stream here so that errors before any byte are returned by
        // `stream()` itself when no fallback applies, as the trait promises.
        loop {
            let provider = state.providers[state.idx].clone();
            match provider.stream(&state.req).await {
                Ok(s) => {
                    state.inner = Some(s);
                    break;
                }
                Err(e) => {
                    if let Some(e) = state.on_error(e, false) {
                        return Err(e);
                    }
                }
            }
        }
        Ok(Box::pin(futures::stream::unfold(
            state,
            |mut st| async move {
                loop {
                    if let Some(n) = st.notices.pop_front() {
                        return Some((Ok(n), st));
                    }
                    if st.done {
                        return None;
                    }
                    let Some(inner) = st.inner.as_mut() else {
                        let provider = st.providers[st.idx].clone();
                        match provider.stream(&st.req).await {
                            Ok(s) => st.inner = Some(s),
                            Err(e) => {
                                if let Some(e) = st.on_error(e, false) {
                                    return Some((Err(e), st));
                                }
                            }
                        }
                        continue;
                    };
                    match inner.next().await {
                        Some(Ok(chunk)) => {
                            st.content_seen |= is_content(&chunk);
                            return Some((Ok(chunk), st));
                        }
                        Some(Err(e)) => {
                            if let Some(e) = st.on_error(e, true) {
                                return Some((Err(e), st));
                            }
                        }
                        None => return None,
                    }
                }
            },
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(kind: ErrorKind) -> LlmError {
        LlmError::new(kind, "p", "m")
    }

    #[test]
    fn switching_rules() {
        let def = FallbackPolicy::default();
        let resend = FallbackPolicy {
            resend_possibly_billed: true,
        };
        let yes = Switch::Yes {
            discard_text: false,
        };
        let table = [
            // (kind, in_stream, content_seen, has_next, policy, expected)
            (ErrorKind::RateLimit, false, false, true, def, yes),
            (ErrorKind::Overloaded, true, false, true, def, yes),
            (ErrorKind::Server, false, false, true, def, yes),
            (ErrorKind::Network, false, false, true, def, yes),
            (ErrorKind::RateLimit, false, false, false, def, Switch::No),
            (
                ErrorKind::Authentication,
                false,
                false,
                true,
                def,
                Switch::No,
            ),
            (
                ErrorKind::InvalidRequest,
                false,
                false,
                true,
                resend,
                Switch::No,
            ),
            (ErrorKind::Timeout, false, false, true, def, Switch::No),
            (ErrorKind::Timeout, false, false, true, resend, yes),
            (ErrorKind::Server, true, false, true, def, Switch::No),
            (ErrorKind::Protocol, true, false, true, resend, yes),
            (ErrorKind::Overloaded, true, true, true, def, Switch::No),
            (
                ErrorKind::Overloaded,
                true,
                true,
                true,
                resend,
                Switch::Yes { discard_text: true },
            ),
        ];
        for (kind, in_stream, seen, next, policy, expected) in table {
            assert_eq!(
                decide(&err(kind), in_stream, seen, next, policy),
                expected,
                "{kind:?} in_stream={in_stream} seen={seen} next={next} {policy:?}"
            );
        }
    }
}
