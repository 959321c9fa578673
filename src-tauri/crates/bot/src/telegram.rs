//! The Telegram Bot API over HTTPS (<https://core.telegram.org/bots/api>): `getMe`,
//! `getUpdates` (long poll from an offset), `sendMessage`, `sendPhoto` (a PNG uploaded as
//! multipart/form-data). The token is part of every URL, so no error of this client
//! carries a URL.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::format::{TELEGRAM_LIMIT, split, telegram_markdown};

pub const PUBLIC_API: &str = "https://api.telegram.org";

#[derive(Debug, thiserror::Error)]
pub enum TelegramError {
    /// The connection failed or dropped: try again after a while.
    #[error("cannot reach the Telegram API: {0}")]
    Network(String),
    /// The token was refused: nothing works until it is fixed.
    #[error("Telegram refused the bot token (401): set it again with `wyckoff bot secret NAME`")]
    Unauthorized,
    /// Too many requests: wait this long.
    #[error("Telegram asks to wait {0} s")]
    RetryAfter(u64),
    #[error("Telegram API error {code}: {description}")]
    Api { code: i64, description: String },
    #[error("Telegram's answer was not understood: {0}")]
    Decode(String),
}

impl TelegramError {
    /// Worth another try after a backoff (the bot keeps serving).
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            TelegramError::Network(_) | TelegramError::RetryAfter(_) | TelegramError::Decode(_)
        ) || matches!(self, TelegramError::Api { code, .. } if *code >= 500)
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct User {
    pub id: i64,
    #[serde(default)]
    pub username: Option<String>,
    #[serde(default)]
    pub first_name: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Chat {
    pub id: i64,
    #[serde(rename = "type")]
    pub kind: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Message {
    pub message_id: i64,
    #[serde(default)]
    pub from: Option<User>,
    pub chat: Chat,
    #[serde(default)]
    pub text: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Update {
    pub update_id: i64,
    #[serde(default)]
    pub message: Option<Message>,
}

#[derive(Clone)]
pub struct TelegramClient {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl TelegramClient {
    /// A client for the bot `token` at `api_url` (the public API when `None`), through
    /// `proxy` when one is set. Requests may take `poll` longer than the usual limit (the
    /// long poll holds them).
    pub fn new(
        api_url: Option<&str>,
        token: &str,
        proxy: Option<&str>,
        poll: Duration,
    ) -> Result<TelegramClient, TelegramError> {
        let mut builder = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(15))
            .timeout(poll + Duration::from_secs(20));
        if let Some(proxy) = proxy.filter(|p| !p.trim().is_empty()) {
            let proxy = reqwest::Proxy::all(proxy)
                .map_err(|e| TelegramError::Network(format!("proxy: {}", e.without_url())))?;
            builder = builder.proxy(proxy);
        }
        let http = builder
            .build()
            .map_err(|e| TelegramError::Network(e.without_url().to_string()))?;
        Ok(TelegramClient {
            http,
            base: api_url
                .unwrap_or(PUBLIC_API)
                .trim_end_matches('/')
                .to_owned(),
            token: token.to_owned(),
        })
    }

    async fn call(&self, method: &str, body: &Value) -> Result<Value, TelegramError> {
        let request = self.http.post(self.url(method)).json(body);
        self.answer(method, request).await
    }

    fn url(&self, method: &str) -> String {
        format!("{}/bot{}/{method}", self.base, self.token)
    }

    /// Sends the request and reads the API's `{ok, result}` answer.
    async fn answer(
        &self,
        method: &str,
        request: reqwest::RequestBuilder,
    ) -> Result<Value, TelegramError> {
        let response = request
            .send()
            .await
            .map_err(|e| TelegramError::Network(e.without_url().to_string()))?;
        let status = response.status().as_u16();
        let text = response
            .text()
            .await
            .map_err(|e| TelegramError::Network(e.without_url().to_string()))?;
        if status == 401 {
            return Err(TelegramError::Unauthorized);
        }
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| TelegramError::Decode(format!("{method}: {e} (HTTP {status})")))?;
        if value["ok"] == json!(true) {
            return Ok(value["result"].clone());
        }
        if let Some(after) = value["parameters"]["retry_after"].as_u64() {
            return Err(TelegramError::RetryAfter(after));
        }
        Err(TelegramError::Api {
            code: value["error_code"].as_i64().unwrap_or(i64::from(status)),
            description: value["description"]
                .as_str()
                .unwrap_or("no description")
                .to_owned(),
        })
    }

    /// The bot's own user (checks the token).
    pub async fn get_me(&self) -> Result<User, TelegramError> {
        let result = self.call("getMe", &json!({})).await?;
        serde_json::from_value(result).map_err(|e| TelegramError::Decode(e.to_string()))
    }

    /// Updates from `offset` on, waiting up to `timeout` for one to come.
    pub async fn get_updates(
        &self,
        offset: i64,
        timeout: Duration,
    ) -> Result<Vec<Update>, TelegramError> {
        let result = self
            .call(
                "getUpdates",
                &json!({
                    "offset": offset,
                    "timeout": timeout.as_secs(),
                    "allowed_updates": ["message"],
                }),
            )
            .await?;
        serde_json::from_value(result).map_err(|e| TelegramError::Decode(e.to_string()))
    }

    /// Sends `text` (the model's Markdown) in as many messages as the limit needs; a part
    /// Telegram cannot parse as Markdown goes again as plain text.
    pub async fn send_text(&self, chat_id: i64, text: &str) -> Result<(), TelegramError> {
        for part in split(&telegram_markdown(text), TELEGRAM_LIMIT) {
            let sent = self
                .call(
                    "sendMessage",
                    &json!({"chat_id": chat_id, "text": part, "parse_mode": "Markdown"}),
                )
                .await;
            match sent {
                Ok(_) => {}
                Err(TelegramError::Api { code: 400, .. }) => {
                    self.call("sendMessage", &json!({"chat_id": chat_id, "text": part}))
                        .await?;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Sends plain text (no Markdown), split to the limit.
    pub async fn send_plain(&self, chat_id: i64, text: &str) -> Result<(), TelegramError> {
        for part in split(text, TELEGRAM_LIMIT) {
            self.call("sendMessage", &json!({"chat_id": chat_id, "text": part}))
                .await?;
        }
        Ok(())
    }

    /// Shows "typing…" in the chat while the desk works on the answer.
    pub async fn send_typing(&self, chat_id: i64) -> Result<(), TelegramError> {
        self.call(
            "sendChatAction",
            &json!({"chat_id": chat_id, "action": "typing"}),
        )
        .await
        .map(|_| ())
    }

    /// Uploads a PNG as a photo with a caption (`sendPhoto` as multipart/form-data:
    /// `chat_id`, `photo` as a file part, `caption`, at most [`CAPTION_LIMIT`] characters —
    /// a longer one is cut there).
    pub async fn send_photo_png(
        &self,
        chat_id: i64,
        png: &[u8],
        file_name: &str,
        caption: &str,
    ) -> Result<(), TelegramError> {
        let caption: String = caption.chars().take(CAPTION_LIMIT).collect();
        let form = photo_form(chat_id, png, file_name, &caption);
        let request = self
            .http
            .post(self.url("sendPhoto"))
            .header(reqwest::header::CONTENT_TYPE, form.content_type())
            .body(form.body);
        self.answer("sendPhoto", request).await.map(|_| ())
    }
}

/// A photo caption's limit, in characters.
pub const CAPTION_LIMIT: usize = 1024;

/// A multipart/form-data body and its boundary.
#[derive(Debug, Clone)]
pub struct Form {
    pub boundary: String,
    pub body: Vec<u8>,
}

impl Form {
    pub fn content_type(&self) -> String {
        format!("multipart/form-data; boundary={}", self.boundary)
    }
}

/// `sendPhoto`'s form (RFC 7578): the text fields, then the PNG as a file part. The
/// boundary is one that occurs in none of the parts.
pub fn photo_form(chat_id: i64, png: &[u8], file_name: &str, caption: &str) -> Form {
    let chat = chat_id.to_string();
    let contains = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
    let mut n: u32 = 0;
    let boundary = loop {
        let b = format!("wyckoff-desk-chart-{n:08x}");
        if !contains(png, b.as_bytes()) && !caption.contains(&b) {
            break b;
        }
        n += 1;
    };
    // A file name is the desk's (code and date); quotes and line ends are kept out anyway.
    let file_name: String = file_name
        .chars()
        .filter(|c| !matches!(c, '"' | '\r' | '\n'))
        .collect();
    let mut body = Vec::with_capacity(png.len() + caption.len() + 512);
    let mut text_part = |name: &str, value: &str| {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    };
    text_part("chat_id", &chat);
    text_part("caption", caption);
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"{file_name}\"\r\nContent-Type: image/png\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(png);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    Form { boundary, body }
}
