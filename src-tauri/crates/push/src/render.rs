//! Each channel's request for one message (pure): the URL with its credentials and the
//! JSON body in the channel's own format, the longest text it takes, and how to read its
//! answer. Formats as the vendors document them:
//!
//! * WeCom group robot: `POST {base}?key=KEY`, `{"msgtype":"markdown","markdown":{"content":…}}`
//!   (content ≤ 4096 bytes); answers `{"errcode":0,"errmsg":"ok"}`.
//! * DingTalk custom robot: `POST {base}?access_token=TOKEN[&timestamp=MS&sign=SIGN]`,
//!   `{"msgtype":"markdown","markdown":{"title":…,"text":…}}`; with a signing secret, SIGN is
//!   base64(HMAC-SHA256(key = secret, data = "MS\nsecret")), URL-encoded; answers `errcode`.
//! * Feishu custom bot: `POST {base}/TOKEN`, `{"msg_type":"text","content":{"text":…}}` plus
//!   `"timestamp"` (seconds) and `"sign"` = base64(HMAC-SHA256(key = "S\nsecret", data = ""))
//!   when a signing secret is set; the body ≤ 20 KB; answers `{"code":0,…}`.
//! * Telegram bot: `POST {base}/botTOKEN/sendMessage`, `{"chat_id":…,"text":…}` (text ≤ 4096
//!   characters); answers `{"ok":true,…}`.
//! * Webhook: the message JSON as it is, to the URL.

use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use url::Url;

use crate::ChannelKind;
use crate::policy::Verdict;

pub const WECOM_BASE: &str = "https://qyapi.weixin.qq.com/cgi-bin/webhook/send";
pub const DINGTALK_BASE: &str = "https://oapi.dingtalk.com/robot/send";
pub const FEISHU_BASE: &str = "https://open.feishu.cn/open-apis/bot/v2/hook";
pub const TELEGRAM_BASE: &str = "https://api.telegram.org";

/// How a channel's text limit is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Bytes(usize),
    Chars(usize),
    None,
}

impl ChannelKind {
    /// The official address of the kind (`None`: the user gives the URL).
    pub fn default_base(self) -> Option<&'static str> {
        match self {
            ChannelKind::Webhook => None,
            ChannelKind::Wecom => Some(WECOM_BASE),
            ChannelKind::Dingtalk => Some(DINGTALK_BASE),
            ChannelKind::Feishu => Some(FEISHU_BASE),
            ChannelKind::Telegram => Some(TELEGRAM_BASE),
            ChannelKind::Email => None,
        }
    }

    /// The longest text one message may carry.
    pub fn limit(self) -> Limit {
        match self {
            ChannelKind::Webhook => Limit::None,
            ChannelKind::Wecom => Limit::Bytes(4096),
            ChannelKind::Dingtalk => Limit::Bytes(20_000),
            // 20 KB for the whole body: room left for the JSON around the text.
            ChannelKind::Feishu => Limit::Bytes(18_000),
            ChannelKind::Telegram => Limit::Chars(4096),
            ChannelKind::Email => Limit::None,
        }
    }

    /// Whether the kind needs a token (key, access token, hook token, bot token).
    pub fn needs_token(self) -> bool {
        !matches!(self, ChannelKind::Webhook | ChannelKind::Email)
    }
}

fn size(text: &str, limit: Limit) -> usize {
    match limit {
        Limit::Bytes(_) => text.len(),
        Limit::Chars(_) | Limit::None => text.chars().count(),
    }
}

/// Splits `text` into parts that fit `limit`, at line ends where it can and inside a line
/// only when one line alone is too long; every part but a single one is numbered
/// "(i/n)" so nothing is cut silently.
pub fn split(text: &str, limit: Limit) -> Vec<String> {
    let max = match limit {
        Limit::Bytes(n) | Limit::Chars(n) => n,
        Limit::None => return vec![text.to_owned()],
    };
    if size(text, limit) <= max {
        return vec![text.to_owned()];
    }
    // Room for the "(99/99)\n" label.
    let room = max.saturating_sub(12).max(1);
    let mut pieces: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in text.split_inclusive('\n') {
        let mut rest = line;
        while !rest.is_empty() {
            if size(&current, limit) + size(rest, limit) <= room {
                current.push_str(rest);
                break;
            }
            if !current.is_empty() {
                pieces.push(std::mem::take(&mut current));
                continue;
            }
            // One line longer than a whole part: cut it at a character boundary.
            let mut end = 0;
            for (i, c) in rest.char_indices() {
                let next = i + c.len_utf8();
                if size(&rest[..next], limit) > room {
                    break;
                }
                end = next;
            }
            let end = end.max(rest.chars().next().map_or(1, char::len_utf8));
            pieces.push(rest[..end].to_owned());
            rest = &rest[end..];
        }
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    let n = pieces.len();
    pieces
        .into_iter()
        .enumerate()
        .map(|(i, p)| format!("({}/{n})\n{}", i + 1, p.trim_end_matches('\n')))
        .collect()
}

/// base64(HMAC-SHA256(key, data)).
fn hmac_b64(key: &[u8], data: &[u8]) -> String {
    let mut mac = match Hmac::<Sha256>::new_from_slice(key) {
        Ok(m) => m,
        // HMAC takes a key of any length; this arm is never reached.
        Err(_) => return String::new(),
    };
    mac.update(data);
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// DingTalk's `sign` for `timestamp_ms` (before URL encoding, which the URL does).
pub fn dingtalk_sign(timestamp_ms: i64, secret: &str) -> String {
    hmac_b64(
        secret.as_bytes(),
        format!("{timestamp_ms}\n{secret}").as_bytes(),
    )
}

/// Feishu's `sign` for `timestamp_s`.
pub fn feishu_sign(timestamp_s: i64, secret: &str) -> String {
    hmac_b64(format!("{timestamp_s}\n{secret}").as_bytes(), b"")
}

/// What one send needs besides the message.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    pub token: Option<String>,
    pub sign_secret: Option<String>,
    pub chat_id: Option<String>,
}

/// Why a request could not be built (a permanent failure: nothing to retry with).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    #[error("no token is set for this channel (`wyckoff push secret NAME`)")]
    NoToken,
    #[error("a Telegram channel needs --chat-id")]
    NoChatId,
    #[error("bad channel address: {0}")]
    BadUrl(String),
}

/// The URL and body for `message` (the outbox's JSON: `text`, `title`, …) at `now_ms`.
pub fn request(
    kind: ChannelKind,
    base: &str,
    creds: &Credentials,
    message: &Value,
    now_ms: i64,
) -> Result<(Url, Value), RenderError> {
    let text = message
        .get("text")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let title = message
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or("Wyckoff Desk")
        .to_owned();
    let mut url = Url::parse(base).map_err(|e| RenderError::BadUrl(e.to_string()))?;
    let token = || creds.token.clone().ok_or(RenderError::NoToken);
    let body = match kind {
        ChannelKind::Webhook => message.clone(),
        ChannelKind::Email => {
            return Err(RenderError::BadUrl(
                "e-mail goes over SMTP, not HTTP".into(),
            ));
        }
        ChannelKind::Wecom => {
            url.query_pairs_mut().append_pair("key", &token()?);
            json!({"msgtype": "markdown", "markdown": {"content": text}})
        }
        ChannelKind::Dingtalk => {
            url.query_pairs_mut().append_pair("access_token", &token()?);
            if let Some(secret) = &creds.sign_secret {
                url.query_pairs_mut()
                    .append_pair("timestamp", &now_ms.to_string())
                    .append_pair("sign", &dingtalk_sign(now_ms, secret));
            }
            json!({"msgtype": "markdown", "markdown": {"title": title, "text": text}})
        }
        ChannelKind::Feishu => {
            url.path_segments_mut()
                .map_err(|_| RenderError::BadUrl(base.to_owned()))?
                .pop_if_empty()
                .push(&token()?);
            let mut body = json!({"msg_type": "text", "content": {"text": text}});
            if let Some(secret) = &creds.sign_secret {
                let s = now_ms.div_euclid(1000);
                body["timestamp"] = json!(s.to_string());
                body["sign"] = json!(feishu_sign(s, secret));
            }
            body
        }
        ChannelKind::Telegram => {
            let chat_id = creds.chat_id.clone().ok_or(RenderError::NoChatId)?;
            url.path_segments_mut()
                .map_err(|_| RenderError::BadUrl(base.to_owned()))?
                .pop_if_empty()
                .push(&format!("bot{}", token()?))
                .push("sendMessage");
            json!({"chat_id": chat_id, "text": text})
        }
    };
    Ok((url, body))
}

/// What an answer means: the HTTP status first, then the robot's own code in a 2xx body
/// (WeCom and DingTalk answer 200 with a non-zero `errcode` when they refuse).
pub fn verdict(kind: ChannelKind, status: Option<u16>, answer: &str) -> Verdict {
    let by_status = crate::policy::verdict(status);
    if by_status != Verdict::Sent {
        return by_status;
    }
    let body: Value = serde_json::from_str(answer).unwrap_or(Value::Null);
    let code = |key: &str| body.get(key).and_then(Value::as_i64);
    match kind {
        ChannelKind::Webhook | ChannelKind::Email => Verdict::Sent,
        ChannelKind::Wecom | ChannelKind::Dingtalk => match code("errcode") {
            Some(0) => Verdict::Sent,
            // WeCom "api freq out of limit", DingTalk "send too fast": wait and retry.
            Some(45009 | 130101) => Verdict::Retry,
            _ => Verdict::Permanent,
        },
        ChannelKind::Feishu => match code("code").or_else(|| code("StatusCode")) {
            Some(0) => Verdict::Sent,
            // Feishu's "request frequency limited".
            Some(11232) => Verdict::Retry,
            _ => Verdict::Permanent,
        },
        ChannelKind::Telegram => {
            if body.get("ok").and_then(Value::as_bool) == Some(true) {
                Verdict::Sent
            } else {
                Verdict::Permanent
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn creds(token: &str, sign: Option<&str>, chat: Option<&str>) -> Credentials {
        Credentials {
            token: Some(token.into()),
            sign_secret: sign.map(Into::into),
            chat_id: chat.map(Into::into),
        }
    }

    #[test]
    fn each_kind_builds_its_documented_request() {
        let msg = json!({"text": "000001 平安银行 — close ≥ 10", "title": "提醒"});
        let now_ms = 1_733_385_600_123;
        let (url, body) = request(
            ChannelKind::Wecom,
            WECOM_BASE,
            &creds("k-1", None, None),
            &msg,
            now_ms,
        )
        .unwrap();
        assert_eq!(
            url.as_str(),
            "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k-1"
        );
        assert_eq!(
            body,
            json!({"msgtype": "markdown", "markdown": {"content": "000001 平安银行 — close ≥ 10"}})
        );

        let (url, body) = request(
            ChannelKind::Dingtalk,
            DINGTALK_BASE,
            &creds("tok", Some("SECabc"), None),
            &msg,
            now_ms,
        )
        .unwrap();
        let sign = dingtalk_sign(now_ms, "SECabc");
        let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        assert_eq!(
            pairs,
            vec![
                ("access_token".into(), "tok".into()),
                ("timestamp".into(), now_ms.to_string()),
                ("sign".into(), sign),
            ]
        );
        assert_eq!(body["msgtype"], "markdown");
        assert_eq!(body["markdown"]["title"], "提醒");

        let (url, body) = request(
            ChannelKind::Feishu,
            FEISHU_BASE,
            &creds("hook-token", Some("s3cret"), None),
            &msg,
            now_ms,
        )
        .unwrap();
        assert_eq!(
            url.as_str(),
            "https://open.feishu.cn/open-apis/bot/v2/hook/hook-token"
        );
        assert_eq!(body["msg_type"], "text");
        assert_eq!(body["content"]["text"], "000001 平安银行 — close ≥ 10");
        assert_eq!(body["timestamp"], "1733385600");
        assert_eq!(body["sign"], feishu_sign(1_733_385_600, "s3cret"));

        let (url, body) = request(
            ChannelKind::Telegram,
            TELEGRAM_BASE,
            &creds("123:ABC", None, Some("-1001")),
            &msg,
            now_ms,
        )
        .unwrap();
        assert_eq!(
            url.as_str(),
            "https://api.telegram.org/bot123:ABC/sendMessage"
        );
        assert_eq!(
            body,
            json!({"chat_id": "-1001", "text": "000001 平安银行 — close ≥ 10"})
        );

        assert_eq!(
            request(
                ChannelKind::Wecom,
                WECOM_BASE,
                &Credentials::default(),
                &msg,
                0
            ),
            Err(RenderError::NoToken)
        );
        assert_eq!(
            request(
                ChannelKind::Telegram,
                TELEGRAM_BASE,
                &creds("t", None, None),
                &msg,
                0
            ),
            Err(RenderError::NoChatId)
        );
    }

    #[test]
    fn signatures_match_the_documented_algorithms() {
        // HMAC-SHA256 vectors computed with Python's hmac module, as the vendors' samples do:
        // DingTalk: hmac.new(secret, f"{ts}\n{secret}", sha256); Feishu: hmac.new(f"{ts}\n{secret}", b"", sha256).
        assert_eq!(
            dingtalk_sign(1_700_000_000_000, "SECtest"),
            "aZLLrriXgn05YbwaGR7knYsLeJADjr9NwLaNNKpxh4g="
        );
        assert_eq!(
            feishu_sign(1_700_000_000, "test"),
            "eSJQnOl8XqPTMPHWz9e5IzeHS/tqoc68g2967ekIPmg="
        );
    }

    #[test]
    fn answers_are_read_as_each_robot_answers() {
        use ChannelKind::*;
        let table = [
            (
                Wecom,
                Some(200),
                r#"{"errcode":0,"errmsg":"ok"}"#,
                Verdict::Sent,
            ),
            (
                Wecom,
                Some(200),
                r#"{"errcode":93000,"errmsg":"invalid webhook url"}"#,
                Verdict::Permanent,
            ),
            (
                Wecom,
                Some(200),
                r#"{"errcode":45009,"errmsg":"api freq out of limit"}"#,
                Verdict::Retry,
            ),
            (
                Dingtalk,
                Some(200),
                r#"{"errcode":310000,"errmsg":"sign not match"}"#,
                Verdict::Permanent,
            ),
            (
                Dingtalk,
                Some(200),
                r#"{"errcode":130101,"errmsg":"send too fast"}"#,
                Verdict::Retry,
            ),
            (
                Feishu,
                Some(200),
                r#"{"code":0,"msg":"success","data":{}}"#,
                Verdict::Sent,
            ),
            (
                Feishu,
                Some(200),
                r#"{"code":19021,"msg":"sign match fail"}"#,
                Verdict::Permanent,
            ),
            (
                Feishu,
                Some(400),
                r#"{"code":9499,"msg":"Bad Request"}"#,
                Verdict::Permanent,
            ),
            (
                Telegram,
                Some(200),
                r#"{"ok":true,"result":{}}"#,
                Verdict::Sent,
            ),
            (
                Telegram,
                Some(429),
                r#"{"ok":false,"error_code":429}"#,
                Verdict::Retry,
            ),
            (
                Telegram,
                Some(400),
                r#"{"ok":false,"description":"chat not found"}"#,
                Verdict::Permanent,
            ),
            (Webhook, Some(204), "", Verdict::Sent),
            (Wecom, Some(502), "", Verdict::Retry),
            (Wecom, None, "", Verdict::Retry),
        ];
        for (kind, status, answer, want) in table {
            assert_eq!(verdict(kind, status, answer), want, "{kind:?} {answer}");
        }
    }

    #[test]
    fn long_texts_are_split_in_numbered_parts_never_cut() {
        // Exactly on the limit: one part, unlabelled.
        let exact = "a".repeat(4096);
        assert_eq!(split(&exact, Limit::Chars(4096)), vec![exact.clone()]);
        // One over: two numbered parts that together hold every character.
        let over = "a".repeat(4097);
        let parts = split(&over, Limit::Chars(4096));
        assert_eq!(parts.len(), 2);
        assert!(parts[0].starts_with("(1/2)\n") && parts[1].starts_with("(2/2)\n"));
        let joined: String = parts
            .iter()
            .map(|p| p.split_once('\n').unwrap().1)
            .collect();
        assert_eq!(joined, over);
        assert!(parts.iter().all(|p| p.chars().count() <= 4096));
        // Lines stay whole where they can; bytes count for WeCom (3 bytes a CJK char).
        let lines: Vec<String> = (0..600).map(|i| format!("第{i:03}行提醒")).collect();
        let text = lines.join("\n");
        let parts = split(&text, Limit::Bytes(4096));
        assert!(parts.len() > 1);
        assert!(
            parts.iter().all(|p| p.len() <= 4096),
            "{:?}",
            parts.iter().map(String::len).collect::<Vec<_>>()
        );
        let rejoined: Vec<&str> = parts
            .iter()
            .flat_map(|p| p.split_once('\n').unwrap().1.lines())
            .collect();
        assert_eq!(
            rejoined,
            lines.iter().map(String::as_str).collect::<Vec<_>>()
        );
        assert_eq!(split("short", Limit::None), vec!["short"]);
    }
}
