//! A channel's secrets outside the keychain: where a generic webhook sends its secret, the
//! key a user pasted inside a robot's URL (split off so the stored URL never holds it),
//! and the masking of any secret a channel's answer echoes back.

use serde::{Deserialize, Serialize};
use url::Url;

use crate::ChannelKind;

/// Where a generic webhook's secret (its token in the keychain) goes with every send.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "in", content = "name", rename_all = "snake_case")]
pub enum SecretIn {
    /// A request header of this name, the secret as its whole value.
    Header(String),
    /// A query parameter of this name.
    Query(String),
}

impl SecretIn {
    /// The stored form: `header:NAME` / `query:NAME`.
    pub fn stored(&self) -> String {
        match self {
            SecretIn::Header(n) => format!("header:{n}"),
            SecretIn::Query(n) => format!("query:{n}"),
        }
    }

    /// The stored form read back (`None`: not one this version knows).
    pub fn parse_stored(text: &str) -> Option<SecretIn> {
        match text.split_once(':')? {
            ("header", n) if valid_header(n) => Some(SecretIn::Header(n.to_owned())),
            ("query", n) if !n.is_empty() => Some(SecretIn::Query(n.to_owned())),
            _ => None,
        }
    }
}

/// An HTTP header name (RFC 9110 token characters).
pub fn valid_header(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The name of the query parameter (or, for Feishu, the path's last segment) that holds a
/// robot's key in the URL its vendor hands out.
fn key_param(kind: ChannelKind) -> Option<&'static str> {
    match kind {
        ChannelKind::Wecom => Some("key"),
        ChannelKind::Dingtalk => Some("access_token"),
        _ => None,
    }
}

/// A URL as pasted, split into what may be stored and the key it held (`None`: it held
/// none). WeCom's `…/send?key=KEY`, DingTalk's `…/send?access_token=TOKEN`, Feishu's
/// `…/hook/TOKEN`, and a webhook's `?NAME=SECRET` when its secret goes in the query as
/// `NAME`. The other query parameters stay. A URL that does not parse is returned whole
/// (the URL check then refuses it).
pub fn split_pasted(
    kind: ChannelKind,
    pasted: &str,
    secret_in: Option<&SecretIn>,
) -> (String, Option<String>) {
    let text = pasted.trim();
    let Ok(mut url) = Url::parse(text) else {
        return (text.to_owned(), None);
    };
    let param = match (kind, secret_in) {
        (ChannelKind::Webhook, Some(SecretIn::Query(name))) => Some(name.as_str()),
        (ChannelKind::Webhook, _) => None,
        (k, _) => key_param(k),
    };
    if let Some(param) = param {
        let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        let key = pairs
            .iter()
            .find(|(k, v)| k == param && !v.is_empty())
            .map(|(_, v)| v.clone());
        if key.is_some() {
            let rest: Vec<&(String, String)> = pairs.iter().filter(|(k, _)| k != param).collect();
            if rest.is_empty() {
                url.set_query(None);
            } else {
                url.query_pairs_mut()
                    .clear()
                    .extend_pairs(rest.iter().map(|(k, v)| (k, v)));
            }
            return (url.to_string(), key);
        }
    }
    if kind == ChannelKind::Feishu {
        // The official base ends in `/hook`; a segment after it is the hook's token.
        let segments: Vec<String> = url
            .path_segments()
            .map(|s| s.map(str::to_owned).collect())
            .unwrap_or_default();
        if let [.., hook, token] = segments.as_slice()
            && hook == "hook"
            && !token.is_empty()
        {
            let token = token.clone();
            if let Ok(mut path) = url.path_segments_mut() {
                path.pop();
            }
            return (url.to_string(), Some(token));
        }
    }
    (url.to_string(), None)
}

/// `text` with every occurrence of each secret (as it is, and as a URL or a form encodes
/// it) replaced by `***`, so a channel's answer that echoes one is kept and logged safely.
pub fn mask(text: &str, secrets: &[&str]) -> String {
    let mut out = text.to_owned();
    let mut forms: Vec<String> = Vec::new();
    for s in secrets.iter().filter(|s| !s.is_empty()) {
        forms.push((*s).to_owned());
        let encoded: String = url::form_urlencoded::byte_serialize(s.as_bytes()).collect();
        forms.push(encoded);
        let json = serde_json::Value::String((*s).to_owned()).to_string();
        // The JSON string without its quotes: how a JSON answer echoes it.
        forms.push(json[1..json.len() - 1].to_owned());
    }
    // Longest first, so a secret that contains another is masked whole.
    forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
    forms.dedup();
    for f in forms.iter().filter(|f| !f.is_empty()) {
        out = out.replace(f.as_str(), "***");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pasted_robot_url_is_split_into_base_and_key() {
        let q = SecretIn::Query("token".into());
        // The kind, the URL pasted, where a webhook's secret goes, the base kept, the key.
        type Case<'a> = (
            ChannelKind,
            &'a str,
            Option<&'a SecretIn>,
            &'a str,
            Option<&'a str>,
        );
        let table: [Case; 8] = [
            (
                ChannelKind::Wecom,
                "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=693a-k1",
                None,
                "https://qyapi.weixin.qq.com/cgi-bin/webhook/send",
                Some("693a-k1"),
            ),
            (
                ChannelKind::Dingtalk,
                " https://oapi.dingtalk.com/robot/send?access_token=abc123 ",
                None,
                "https://oapi.dingtalk.com/robot/send",
                Some("abc123"),
            ),
            (
                ChannelKind::Feishu,
                "https://open.feishu.cn/open-apis/bot/v2/hook/0f1e-2d3c",
                None,
                "https://open.feishu.cn/open-apis/bot/v2/hook",
                Some("0f1e-2d3c"),
            ),
            (
                ChannelKind::Feishu,
                "https://open.feishu.cn/open-apis/bot/v2/hook",
                None,
                "https://open.feishu.cn/open-apis/bot/v2/hook",
                None,
            ),
            (
                ChannelKind::Wecom,
                "https://qyapi.weixin.qq.com/cgi-bin/webhook/send",
                None,
                "https://qyapi.weixin.qq.com/cgi-bin/webhook/send",
                None,
            ),
            (
                ChannelKind::Webhook,
                "https://hooks.example.com/in?team=a&token=s3cr%2Bt",
                Some(&q),
                "https://hooks.example.com/in?team=a",
                Some("s3cr+t"),
            ),
            // A webhook whose secret goes in a header keeps its URL as it is.
            (
                ChannelKind::Webhook,
                "https://hooks.example.com/in?token=x",
                None,
                "https://hooks.example.com/in?token=x",
                None,
            ),
            (ChannelKind::Wecom, "not a url", None, "not a url", None),
        ];
        for (kind, pasted, secret_in, base, key) in table {
            let (b, k) = split_pasted(kind, pasted, secret_in);
            assert_eq!((b.as_str(), k.as_deref()), (base, key), "{kind:?} {pasted}");
        }
    }

    #[test]
    fn echoed_secrets_are_masked_in_every_encoding() {
        let answer =
            r#"{"errcode":93000,"errmsg":"invalid webhook url, key=a%2Bb%2Fc%3D, hint: [a+b/c=]"}"#;
        let masked = mask(answer, &["a+b/c=", ""]);
        assert!(!masked.contains("a+b/c"), "{masked}");
        assert!(!masked.contains("a%2Bb%2Fc%3D"), "{masked}");
        assert_eq!(
            mask(
                "AUTH failed for hunter2hunter2",
                &["hunter2", "hunter2hunter2"]
            ),
            "AUTH failed for ***"
        );
        assert_eq!(mask("nothing here", &[]), "nothing here");
        assert_eq!(mask(r#"{"echo":"p\"w"}"#, &["p\"w"]), r#"{"echo":"***"}"#);
    }
}
