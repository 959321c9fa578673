//! E-mail over SMTP: `smtps://host[:465]` (TLS from the first byte) or `smtp://host[:587]`
//! (STARTTLS, required). The password is the channel's token (keychain). Plain SMTP
//! (`smtp+plain://`) only reaches a loopback or private address the channel allows — a
//! local relay — and the CLI never offers it. A server whose certificate is signed by the
//! user's own CA (a company mail server) is trusted when the channel names that CA's PEM
//! file; the system's roots are trusted as well.

use std::net::SocketAddr;
use std::time::Duration;

use lettre::message::{Mailbox, header::ContentType};
use lettre::transport::smtp::authentication::Credentials as SmtpCredentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use url::Url;

use crate::policy::Verdict;
use crate::target::{UrlError, check_ip};

/// Who sends and who receives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmailSettings {
    pub from: String,
    pub to: Vec<String>,
    /// The SMTP login (default: the sender's address).
    pub username: Option<String>,
    /// The full path of a CA certificate (PEM) to trust besides the system's roots, for a
    /// server whose certificate an own CA signed. Read at every send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_cert: Option<String>,
}

/// Reads and parses the CA certificate at `path` (a full path).
fn ca_certificate(path: &str) -> Result<Certificate, String> {
    if !std::path::Path::new(path).is_absolute() {
        return Err(format!("CA certificate '{path}': give its full path"));
    }
    let pem = std::fs::read(path).map_err(|e| format!("CA certificate '{path}': {e}"))?;
    Certificate::from_pem(&pem)
        .map_err(|e| format!("CA certificate '{path}' is not a PEM certificate: {e}"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Security {
    Wrapper,
    StartTls,
    Plain,
}

/// Checks an SMTP URL: its scheme, host and (for a literal address) the private rule.
pub fn check_smtp_url(text: &str, allow_private: bool) -> Result<Url, UrlError> {
    let url = Url::parse(text.trim()).map_err(|_| UrlError::NotUrl(text.trim().to_owned()))?;
    if !matches!(url.scheme(), "smtps" | "smtp" | "smtp+plain") {
        return Err(UrlError::Scheme(url.scheme().to_owned()));
    }
    let host = url.host_str().ok_or(UrlError::NoHost)?.to_owned();
    let literal = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>()
        .ok()
        .or_else(|| {
            host.eq_ignore_ascii_case("localhost")
                .then_some(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST))
        });
    if let Some(ip) = literal {
        check_ip(&host, ip, allow_private)?;
    }
    if url.scheme() == "smtp+plain" && !allow_private {
        return Err(UrlError::Private {
            host,
            kind: "plain-text SMTP (a local relay)",
        });
    }
    Ok(url)
}

/// Checks the addresses.
pub fn check_settings(s: &EmailSettings) -> Result<(), String> {
    s.from
        .parse::<Mailbox>()
        .map_err(|e| format!("sender '{}': {e}", s.from))?;
    if s.to.is_empty() {
        return Err("give at least one recipient (--to)".into());
    }
    for to in &s.to {
        to.parse::<Mailbox>()
            .map_err(|e| format!("recipient '{to}': {e}"))?;
    }
    if let Some(path) = &s.ca_cert {
        ca_certificate(path)?;
    }
    Ok(())
}

/// Sends `message` (its `title` as the subject, its `text` as the body) with the delivery
/// id as its Message-ID (a repeat after an interrupted send is the same message to a mail
/// client); the verdict, no HTTP status, and the server's answer with its SMTP code (or why
/// nothing answered).
pub async fn send(
    url: &str,
    allow_private: bool,
    settings: &EmailSettings,
    password: Option<&str>,
    message: &Value,
    delivery_id: &str,
    timeout: Duration,
) -> (Verdict, Option<u16>, String) {
    match try_send(
        url,
        allow_private,
        settings,
        password,
        message,
        delivery_id,
        timeout,
    )
    .await
    {
        // No HTTP status: the SMTP reply code is in the answer.
        Ok(answer) => (Verdict::Sent, None, answer),
        Err(e) => e,
    }
}

async fn try_send(
    url: &str,
    allow_private: bool,
    settings: &EmailSettings,
    password: Option<&str>,
    message: &Value,
    delivery_id: &str,
    timeout: Duration,
) -> Result<String, (Verdict, Option<u16>, String)> {
    let permanent = |why: String| (Verdict::Permanent, None, why);
    let url = check_smtp_url(url, allow_private).map_err(|e| permanent(e.to_string()))?;
    let security = match url.scheme() {
        "smtps" => Security::Wrapper,
        "smtp" => Security::StartTls,
        _ => Security::Plain,
    };
    let host = url.host_str().unwrap_or_default().to_owned();
    let bare = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = url.port().unwrap_or(match security {
        Security::Wrapper => 465,
        Security::StartTls => 587,
        Security::Plain => 25,
    });
    // Connect only to an address checked now (the name is kept for TLS).
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((bare.as_str(), port))
        .await
        .map_err(|e| (Verdict::Retry, None, format!("cannot resolve {host}: {e}")))?
        .collect();
    let addr = *addrs
        .first()
        .ok_or_else(|| (Verdict::Retry, None, format!("cannot resolve {host}")))?;
    for a in &addrs {
        check_ip(&host, a.ip(), allow_private).map_err(|e| permanent(e.to_string()))?;
    }
    let ca = match &settings.ca_cert {
        Some(path) => Some(ca_certificate(path).map_err(permanent)?),
        None => None,
    };
    let tls = |wrap: bool| {
        let mut params = TlsParameters::builder(bare.clone());
        if let Some(ca) = ca.clone() {
            params = params.add_root_certificate(ca);
        }
        params
            .build()
            .map(|p| {
                if wrap {
                    Tls::Wrapper(p)
                } else {
                    Tls::Required(p)
                }
            })
            .map_err(|e| permanent(format!("TLS setup: {e}")))
    };
    let tls = match security {
        Security::Wrapper => tls(true)?,
        Security::StartTls => tls(false)?,
        Security::Plain => Tls::None,
    };
    let mut builder =
        AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(addr.ip().to_string())
            .port(port)
            .tls(tls)
            .timeout(Some(timeout));
    if let Some(password) = password {
        let user = settings
            .username
            .clone()
            .unwrap_or_else(|| settings.from.clone());
        builder = builder.credentials(SmtpCredentials::new(user, password.to_owned()));
    }
    let transport = builder.build();

    let text = message
        .get("text")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let title = message
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or("Wyckoff Desk");
    let from: Mailbox = settings
        .from
        .parse()
        .map_err(|e| permanent(format!("sender: {e}")))?;
    let mut mail = Message::builder()
        .from(from)
        .subject(title)
        .message_id(Some(format!("<{delivery_id}@wyckoff-desk>")));
    for to in &settings.to {
        mail = mail.to(to
            .parse()
            .map_err(|e| permanent(format!("recipient: {e}")))?);
    }
    let mail = mail
        .header(ContentType::TEXT_PLAIN)
        .body(text.to_owned())
        .map_err(|e| permanent(format!("message: {e}")))?;
    match transport.send(mail).await {
        Ok(reply) => Ok(reply.message().collect::<Vec<_>>().join(" ")),
        Err(e) => {
            let code = e.status().map(u16::from);
            let verdict = if e.is_permanent() {
                Verdict::Permanent
            } else {
                Verdict::Retry
            };
            let text = e.to_string();
            // Sending again will not make the server's certificate trusted.
            if code.is_none() && text.to_ascii_lowercase().contains("certificate") {
                return Err(permanent(format!(
                    "the mail server's TLS certificate is not trusted (a server with its own CA needs that CA's certificate on the channel): {text}"
                )));
            }
            // lettre's "internal client error: STARTTLS is not supported on this server"
            // reads like a bug and would be retried; nothing went out (no AUTH, no mail)
            // and sending again cannot help until the server or the channel's URL changes.
            if security == Security::StartTls && e.is_client() && text.contains("STARTTLS") {
                return Err(permanent(
                    "the mail server does not offer STARTTLS, so nothing was sent (the password and the mail would have gone in clear); use smtps:// if it speaks TLS from the first byte (usually port 465)"
                        .to_owned(),
                ));
            }
            let why = match code {
                Some(c) => format!("SMTP {c}: {text}"),
                None => format!("cannot reach the mail server: {text}"),
            };
            Err((verdict, None, why))
        }
    }
}
