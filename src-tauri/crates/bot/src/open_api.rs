//! The HTTP side Feishu's and DingTalk's clients share: one client through the proxy from
//! Settings, JSON calls whose errors never carry the URL (a session webhook's query, a
//! ticket), and an app access token kept until shortly before it expires. What a platform's
//! answer means (its codes, its token's field names) stays with the platform.

use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::Mutex;

/// An app's id and secret (DingTalk's AppKey and AppSecret, Feishu's App ID and App
/// Secret), kept as one bot secret `ID:SECRET` (the id contains no colon).
#[derive(Clone)]
pub struct AppCredentials {
    pub id: String,
    pub secret: String,
}

impl AppCredentials {
    pub fn parse(token: &str) -> Option<AppCredentials> {
        let (id, secret) = token.trim().split_once(':')?;
        let (id, secret) = (id.trim(), secret.trim());
        (!id.is_empty() && !secret.is_empty()).then(|| AppCredentials {
            id: id.to_owned(),
            secret: secret.to_owned(),
        })
    }
}

/// A call that failed before the platform's answer could be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// The network or the proxy failed: worth another try.
    #[error("{0}")]
    Network(String),
    /// An answer came but is not JSON.
    #[error("{0}")]
    Decode(String),
}

/// The HTTP client of a platform's calls, through `proxy` when one is set.
pub fn http_client(proxy: Option<&str>) -> Result<reqwest::Client, HttpError> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(15))
        .timeout(Duration::from_secs(30));
    if let Some(proxy) = proxy.filter(|p| !p.trim().is_empty()) {
        let proxy = reqwest::Proxy::all(proxy)
            .map_err(|e| HttpError::Network(format!("proxy: {}", e.without_url())))?;
        builder = builder.proxy(proxy);
    }
    builder
        .build()
        .map_err(|e| HttpError::Network(e.without_url().to_string()))
}

/// Sends `request`: the answer's HTTP status and body.
pub async fn send(request: reqwest::RequestBuilder) -> Result<(u16, String), HttpError> {
    let response = request
        .send()
        .await
        .map_err(|e| HttpError::Network(e.without_url().to_string()))?;
    let status = response.status().as_u16();
    let text = response
        .text()
        .await
        .map_err(|e| HttpError::Network(e.without_url().to_string()))?;
    Ok((status, text))
}

/// Sends `request` and reads its answer as JSON; an answer that is not says `what` was
/// asked (a path without its query) and the status.
pub async fn send_json(
    request: reqwest::RequestBuilder,
    what: &str,
) -> Result<(u16, Value), HttpError> {
    let (status, text) = send(request).await?;
    let value = serde_json::from_str(&text)
        .map_err(|e| HttpError::Decode(format!("{what}: {e} (HTTP {status})")))?;
    Ok((status, value))
}

/// How long before its expiry a token is asked for again.
const RENEW_BEFORE: Duration = Duration::from_secs(300);

/// An app access token (Feishu's tenant token, DingTalk's app token), kept until
/// five minutes before its expiry. One request at a time asks for a new one.
#[derive(Default)]
pub struct TokenCache {
    slot: Mutex<Option<(String, Instant)>>,
}

impl TokenCache {
    /// The kept token, or a new one from `fetch` (the token and how long it lasts).
    pub async fn get<E, F>(&self, fetch: impl FnOnce() -> F) -> Result<String, E>
    where
        F: Future<Output = Result<(String, Duration), E>>,
    {
        let mut slot = self.slot.lock().await;
        if let Some((token, renew)) = slot.as_ref()
            && Instant::now() < *renew
        {
            return Ok(token.clone());
        }
        let (token, lasts) = fetch().await?;
        *slot = Some((token.clone(), renew_at(Instant::now(), lasts)));
        Ok(token)
    }

    /// The platform said the token expired or is not valid: the next call asks again.
    pub async fn forget(&self) {
        *self.slot.lock().await = None;
    }
}

/// When a token got at `now` that lasts `lasts` is asked for again: [`RENEW_BEFORE`] its
/// end, or at once for one that lasts less than that.
fn renew_at(now: Instant, lasts: Duration) -> Instant {
    now + lasts.saturating_sub(RENEW_BEFORE)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn a_token_is_renewed_five_minutes_before_its_end() {
        let now = Instant::now();
        let cases = [(7200, 6900), (300, 0), (60, 0), (0, 0)];
        for (lasts, renew) in cases {
            assert_eq!(
                renew_at(now, Duration::from_secs(lasts)),
                now + Duration::from_secs(renew),
                "{lasts}"
            );
        }
    }

    #[tokio::test]
    async fn a_token_is_asked_for_once_until_it_is_forgotten_and_a_failure_keeps_nothing() {
        let cache = TokenCache::default();
        let asked = AtomicU32::new(0);
        let fetch = |lasts: u64| {
            let n = asked.fetch_add(1, Ordering::Relaxed);
            async move { Ok::<_, String>((format!("t{n}"), Duration::from_secs(lasts))) }
        };
        assert_eq!(cache.get(|| fetch(7200)).await.unwrap(), "t0");
        assert_eq!(cache.get(|| fetch(7200)).await.unwrap(), "t0");
        cache.forget().await;
        assert_eq!(cache.get(|| fetch(7200)).await.unwrap(), "t1");
        cache.forget().await;
        let failed = cache
            .get(|| async { Err::<(String, Duration), _>("refused".to_owned()) })
            .await;
        assert_eq!(failed, Err("refused".to_owned()));
        // A token that lasts less than the margin is used once and asked for again.
        assert_eq!(cache.get(|| fetch(60)).await.unwrap(), "t2");
        assert_eq!(cache.get(|| fetch(60)).await.unwrap(), "t3");
        assert_eq!(asked.load(Ordering::Relaxed), 4);
    }
}
