//! A fetched body as text: the charset from the header or the page, HTML turned into
//! readable text by a real parser (html5ever through dom_query), never by regexes.
//!
//! Plain text rather than Markdown: a Markdown serializer escapes `.` `(` `+` and friends,
//! which would turn figures such as `1,466.95` into `1,466\.95` for the model.

use dom_query::Document;
use encoding_rs::Encoding;

/// Elements whose content is never page text.
const SKIPPED_ELEMENTS: &str =
    "head, script, style, noscript, template, svg, iframe, object, canvas";
/// Links listed with a page, at most.
const MAX_LINKS: usize = 50;

/// How a body of `content_type` is read, or `None` when it is not text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    Html,
    Text,
}

/// `text/html` and XHTML are pages; other `text/*`, JSON, XML, JavaScript and CSV are
/// returned as they are; anything else (images, PDFs, archives) is not text.
pub fn body_kind(content_type: &str) -> Option<BodyKind> {
    let mime = mime_of(content_type);
    match mime.as_str() {
        "" | "text/html" | "application/xhtml+xml" => Some(BodyKind::Html),
        m if m.starts_with("text/") => Some(BodyKind::Text),
        m if m.ends_with("+json") || m.ends_with("+xml") => Some(BodyKind::Text),
        "application/json"
        | "application/xml"
        | "application/javascript"
        | "application/x-ndjson" => Some(BodyKind::Text),
        _ => None,
    }
}

fn mime_of(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

fn charset_param(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"'))
    })
}

/// The `charset` a page declares in its first 1024 bytes (`<meta charset=…>` or the
/// http-equiv form), as browsers look for it.
fn sniff_meta_charset(head: &[u8]) -> Option<&'static Encoding> {
    let head = &head[..head.len().min(1024)];
    let lower: Vec<u8> = head.iter().map(u8::to_ascii_lowercase).collect();
    let at = lower.windows(8).position(|w| w == b"charset=")? + 8;
    let rest = &lower[at..];
    let rest = rest
        .strip_prefix(b"\"")
        .or_else(|| rest.strip_prefix(b"'"))
        .unwrap_or(rest);
    let end = rest
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b':' | b'.')))
        .unwrap_or(rest.len());
    Encoding::for_label(&rest[..end])
}

/// Decodes `body`: the header's charset, else a BOM or the page's meta tag, else UTF-8
/// (malformed bytes become U+FFFD; Chinese pages in GBK declare it one of those ways).
pub fn decode(body: &[u8], content_type: &str, kind: BodyKind) -> String {
    let declared = charset_param(content_type).and_then(|c| Encoding::for_label(c.as_bytes()));
    let sniffed = || match kind {
        BodyKind::Html => sniff_meta_charset(body),
        BodyKind::Text => None,
    };
    let encoding = declared.or_else(sniffed).unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

/// A page read: its title, readable text and the links in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub title: Option<String>,
    pub text: String,
    /// (link text, absolute URL), in page order, at most [`MAX_LINKS`].
    pub links: Vec<(String, String)>,
}

/// Reads an HTML page; relative links are resolved against `base`.
pub fn html_to_page(html: &str, base: &url::Url) -> Page {
    let document = Document::from(html);
    let title = document
        .select("head title")
        .iter()
        .next()
        .map(|t| collapse_spaces(&t.text()))
        .filter(|t| !t.is_empty());
    document.select(SKIPPED_ELEMENTS).remove();
    let links = document
        .select("a[href]")
        .iter()
        .filter_map(|a| {
            let href = base.join(a.attr("href")?.trim()).ok()?;
            matches!(href.scheme(), "http" | "https")
                .then(|| (collapse_spaces(&a.text()), href.to_string()))
        })
        .take(MAX_LINKS)
        .collect();
    let text = tidy(&document.formatted_text());
    Page { title, text, links }
}

fn collapse_spaces(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Trailing spaces off every line and at most one blank line in a row.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.lines().map(str::trim_end) {
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_table() {
        let cases = [
            ("text/html; charset=utf-8", Some(BodyKind::Html)),
            ("TEXT/HTML", Some(BodyKind::Html)),
            ("", Some(BodyKind::Html)),
            ("application/xhtml+xml", Some(BodyKind::Html)),
            ("text/plain", Some(BodyKind::Text)),
            ("text/csv", Some(BodyKind::Text)),
            ("application/json", Some(BodyKind::Text)),
            ("application/ld+json", Some(BodyKind::Text)),
            ("application/rss+xml", Some(BodyKind::Text)),
            ("image/png", None),
            ("application/pdf", None),
            ("application/octet-stream", None),
        ];
        for (ct, want) in cases {
            assert_eq!(body_kind(ct), want, "{ct}");
        }
    }

    #[test]
    fn charset_from_header_then_meta_then_utf8() {
        let (gbk, _, _) = encoding_rs::GBK.encode("平安银行");
        assert_eq!(
            decode(&gbk, "text/html; charset=GBK", BodyKind::Html),
            "平安银行"
        );
        let page = [
            b"<html><head><meta charset=\"gbk\"></head><body>".as_slice(),
            &gbk,
        ]
        .concat();
        assert!(decode(&page, "text/html", BodyKind::Html).ends_with("平安银行"));
        let http_equiv = [
            b"<meta http-equiv='Content-Type' content='text/html; charset=gb2312'>".as_slice(),
            &gbk,
        ]
        .concat();
        assert!(decode(&http_equiv, "text/html", BodyKind::Html).ends_with("平安银行"));
        assert_eq!(
            decode("平安".as_bytes(), "text/plain", BodyKind::Text),
            "平安"
        );
    }

    fn page(html: &str) -> Page {
        html_to_page(
            html,
            &url::Url::parse("https://example.com/dir/x.html").unwrap(),
        )
    }

    #[test]
    fn html_becomes_readable_text_without_scripts_or_styles() {
        let html = r#"<!doctype html><html><head><title> 平安银行
            公告 </title><style>body{color:red}</style><script>var secret = 1;</script></head>
            <body><h1>年度报告</h1><p>营业收入(亿元) <b>1,466.95</b>。</p>
            <ul><li>一</li><li>二</li></ul><a href="/y?q=1">链接</a> <a href="mailto:a@b">m</a>
            <noscript>enable js</noscript><script>alert("x")</script>
            <p>a &amp; b &lt;tag&gt;</p></body></html>"#;
        let page = page(html);
        assert_eq!(page.title.as_deref(), Some("平安银行 公告"));
        let text = &page.text;
        assert!(text.starts_with("年度报告\n"), "{text}");
        assert!(text.contains("营业收入(亿元) 1,466.95。"), "{text}");
        assert!(text.contains("一\n二"), "{text}");
        assert!(text.contains("a & b <tag>"), "{text}");
        for hidden in ["secret", "alert", "color:red", "enable js", "平安银行 公告"] {
            assert!(!text.contains(hidden), "{hidden} leaked: {text}");
        }
        assert_eq!(
            page.links,
            vec![("链接".to_string(), "https://example.com/y?q=1".to_string())]
        );
    }

    #[test]
    fn broken_html_still_gives_its_text() {
        let page = page("<p>unclosed <div>still <b>here");
        assert_eq!(page.title, None);
        let text = page.text;
        assert!(text.contains("unclosed") && text.contains("still") && text.contains("here"));
    }
}
