//! The SDK's HTTP client for a streamable-HTTP server, watched for an answer over the
//! message size limit. The SDK then closes the transport and only logs why, so a call
//! would end as "transport closed"; the watch remembers it, and the call's failure is
//! said to be a message too large.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

/// What the SDK's size limit says when a server's event goes over it (its error type is
/// private, so its words are what can be recognised).
const EVENT_OVER_LIMIT: &str = "exceeded the maximum size";

/// `reqwest::Client` as the SDK uses it, with a flag raised once an answer was over the
/// limit.
#[derive(Clone)]
pub(crate) struct WatchedHttp {
    inner: reqwest::Client,
    too_large: Arc<AtomicBool>,
}

type Posted = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;

impl WatchedHttp {
    /// A client like the SDK's own: no idle connections kept (a half-read answer would
    /// stall the next request), and no redirects followed (a configured server's URL is
    /// where its messages and secret header go, never elsewhere).
    pub(crate) fn new() -> Result<WatchedHttp, reqwest::Error> {
        Ok(WatchedHttp {
            inner: reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .redirect(reqwest::redirect::Policy::none())
                .build()?,
            too_large: Arc::default(),
        })
    }

    /// The flag this client raises.
    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        self.too_large.clone()
    }

    fn watch_post(&self, posted: Posted) -> Posted {
        match posted {
            Err(e @ StreamableHttpError::ResponseBodyTooLarge { .. }) => {
                self.too_large.store(true, Ordering::SeqCst);
                Err(e)
            }
            Ok(StreamableHttpPostResponse::Sse(stream, session)) => Ok(
                StreamableHttpPostResponse::Sse(self.watch_stream(stream), session),
            ),
            other => other,
        }
    }

    fn watch_stream(&self, stream: BoxedSseResponse) -> BoxedSseResponse {
        let flag = self.too_large.clone();
        stream
            .inspect(move |event| {
                if let Err(e) = event
                    && over_limit(e)
                {
                    flag.store(true, Ordering::SeqCst);
                }
            })
            .boxed()
    }
}

/// Whether an error (or one it wraps) is the SDK's size limit.
fn over_limit(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(e);
    while let Some(e) = next {
        if e.to_string().contains(EVENT_OVER_LIMIT) {
            return true;
        }
        next = e.source();
    }
    false
}

impl StreamableHttpClient for WatchedHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Posted {
        let posted = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.watch_post(posted)
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Posted {
        let posted = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        self.watch_post(posted)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxedSseResponse, StreamableHttpError<Self::Error>> {
        let stream = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await?;
        Ok(self.watch_stream(stream))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxedSseResponse, StreamableHttpError<Self::Error>> {
        let stream = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.watch_stream(stream))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("body error: {0}")]
    struct Outer(#[source] Inner);

    #[derive(Debug, thiserror::Error)]
    #[error("SSE event exceeded the maximum size of 16777216 bytes")]
    struct Inner;

    #[derive(Debug, thiserror::Error)]
    #[error("connection reset")]
    struct Reset;

    #[test]
    fn the_size_limit_is_recognised_wherever_it_sits_in_the_chain() {
        assert!(over_limit(&Inner));
        assert!(over_limit(&Outer(Inner)));
        assert!(!over_limit(&Reset));
    }
}
