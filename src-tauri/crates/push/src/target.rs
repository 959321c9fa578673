//! Where a push may go: http(s) only; a private, loopback or link-local address only when
//! the channel allows it (the user says so, as for `web_fetch`); cloud metadata, multicast
//! and unspecified addresses never. Checked on the URL when a channel is added and on the
//! resolved addresses at every send, which then connects to a checked address only.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use url::Url;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("'{0}' is not a URL")]
    NotUrl(String),
    #[error("a push URL must be http or https (e-mail: smtps or smtp), got '{0}'")]
    Scheme(String),
    #[error("the push URL has no host")]
    NoHost,
    #[error(
        "{host} is a {kind} address: allowed only for a generic webhook added with --allow-private"
    )]
    Private { host: String, kind: &'static str },
    #[error("{host} is a {kind} address: never a push target")]
    Never { host: String, kind: &'static str },
    #[error("cannot resolve {host}: {why}")]
    Resolve { host: String, why: String },
}

/// `None`: a public address.
fn private_kind(ip: IpAddr) -> Option<(&'static str, bool)> {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            if v4 == Ipv4Addr::new(169, 254, 169, 254) || v4 == Ipv4Addr::new(100, 100, 100, 200) {
                Some(("cloud metadata", false))
            } else if v4.is_unspecified() || a == 0 {
                Some(("unspecified", false))
            } else if v4.is_multicast() || v4.is_broadcast() || a >= 240 {
                Some(("multicast or reserved", false))
            } else if v4.is_loopback() {
                Some(("loopback", true))
            } else if v4.is_private() || (a == 100 && (64..128).contains(&b)) {
                Some(("private", true))
            } else if v4.is_link_local() {
                Some(("link-local", true))
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            let s0 = v6.segments()[0];
            if v6.is_unspecified() {
                Some(("unspecified", false))
            } else if v6.is_multicast() {
                Some(("multicast or reserved", false))
            } else if v6.is_loopback() {
                Some(("loopback", true))
            } else if s0 & 0xfe00 == 0xfc00 {
                Some(("private", true))
            } else if s0 & 0xffc0 == 0xfe80 {
                Some(("link-local", true))
            } else {
                None
            }
        }
    }
}

pub(crate) fn check_ip(host: &str, ip: IpAddr, allow_private: bool) -> Result<(), UrlError> {
    match private_kind(ip) {
        None => Ok(()),
        Some((_, true)) if allow_private => Ok(()),
        Some((kind, true)) => Err(UrlError::Private {
            host: host.to_owned(),
            kind,
        }),
        Some((kind, false)) => Err(UrlError::Never {
            host: host.to_owned(),
            kind,
        }),
    }
}

/// Parses and checks a push URL as far as it can be without DNS (the scheme, and a host
/// that is an IP literal or `localhost`).
pub fn check_url(text: &str, allow_private: bool) -> Result<Url, UrlError> {
    let url = Url::parse(text.trim()).map_err(|_| UrlError::NotUrl(text.trim().to_owned()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(UrlError::Scheme(url.scheme().to_owned()));
    }
    let host = url.host().ok_or(UrlError::NoHost)?;
    let ip = match host {
        url::Host::Ipv4(v4) => Some(IpAddr::V4(v4)),
        url::Host::Ipv6(v6) => Some(IpAddr::V6(v6)),
        url::Host::Domain(d) if d.eq_ignore_ascii_case("localhost") => {
            Some(IpAddr::V4(Ipv4Addr::LOCALHOST))
        }
        url::Host::Domain(_) => None,
    };
    if let Some(ip) = ip {
        check_ip(&host.to_string(), ip, allow_private)?;
    }
    Ok(url)
}

/// A client for one send to `url` that connects only to an address checked just now.
pub(crate) async fn pinned_client(
    url: &Url,
    allow_private: bool,
    timeout: Duration,
) -> Result<reqwest::Client, UrlError> {
    let host = url.host_str().ok_or(UrlError::NoHost)?.to_owned();
    let port = url.port_or_known_default().unwrap_or(443);
    let bare = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((bare.as_str(), port))
        .await
        .map_err(|e| UrlError::Resolve {
            host: host.clone(),
            why: e.to_string(),
        })?
        .collect();
    let first = *addrs.first().ok_or_else(|| UrlError::Resolve {
        host: host.clone(),
        why: "no address".into(),
    })?;
    for a in &addrs {
        check_ip(&host, a.ip(), allow_private)?;
    }
    Ok(reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(5)))
        .redirect(reqwest::redirect::Policy::none())
        .resolve(&bare, first)
        .build()
        .unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_http_and_private_hosts_need_the_allowance() {
        let table: [(&str, bool, Result<(), &str>); 12] = [
            ("https://example.com/hook", false, Ok(())),
            ("http://93.184.216.34:8080/x", false, Ok(())),
            ("ftp://example.com/x", true, Err("must be http or https")),
            ("not a url", true, Err("is not a URL")),
            ("http://127.0.0.1:9/x", false, Err("loopback address")),
            ("http://127.0.0.1:9/x", true, Ok(())),
            ("http://localhost/x", false, Err("loopback address")),
            ("http://192.168.1.5/x", false, Err("private address")),
            ("http://[::1]/x", true, Ok(())),
            ("http://[fd00::1]/x", false, Err("private address")),
            (
                "http://169.254.169.254/latest",
                true,
                Err("never a push target"),
            ),
            ("http://0.0.0.0/x", true, Err("never a push target")),
        ];
        for (url, allow, want) in table {
            let got = check_url(url, allow).map(|_| ()).map_err(|e| e.to_string());
            match (got, want) {
                (Ok(()), Ok(())) => {}
                (Err(e), Err(part)) => assert!(e.contains(part), "{url}: {e}"),
                (got, want) => panic!("{url} {allow}: {got:?} vs {want:?}"),
            }
        }
    }
}
