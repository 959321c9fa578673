//! Markdown → sanitised HTML for the chat view. Rendering happens here, not in the
//! webview, so nothing the model writes reaches the DOM before ammonia has cleaned it.

use std::collections::HashSet;

use pulldown_cmark::{Options, Parser, html};

/// Renders CommonMark (plus tables, strikethrough and task lists) to HTML that is safe
/// to assign to `innerHTML`: scripts, event handlers, `javascript:` URLs and styles are
/// stripped by ammonia; links get `rel="noopener noreferrer"`.
pub fn render(text: &str) -> String {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    options.insert(Options::ENABLE_TASKLISTS);
    let parser = Parser::new_ext(text, options);
    let mut raw = String::with_capacity(text.len() * 3 / 2);
    html::push_html(&mut raw, parser);
    sanitize(&raw)
}

fn sanitize(raw: &str) -> String {
    // Task lists render as `<input disabled type="checkbox" checked>`. Keep `input` for
    // them only: `type` may only be `checkbox`, and every input is forced disabled.
    let input_attrs: HashSet<&str> = ["checked"].into_iter().collect();
    ammonia::Builder::default()
        .add_tags(["input"])
        .add_tag_attributes("input", input_attrs)
        .add_tag_attribute_values("input", "type", ["checkbox"])
        .set_tag_attribute_value("input", "disabled", "")
        .add_tag_attributes("code", ["class"])
        .clean(raw)
        .to_string()
}

/// Renders Markdown to sanitised HTML (see [`render`]).
#[tauri::command]
#[specta::specta]
pub fn render_markdown(text: String) -> String {
    render(&text)
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn renders_tables_strikethrough_and_task_lists() {
        let html = render("| a | b |\n|---|---|\n| 1 | 2 |\n\n~~old~~\n\n- [x] done\n- [ ] todo\n");
        assert!(html.contains("<table>"), "{html}");
        assert!(html.contains("<td>1</td>"), "{html}");
        assert!(html.contains("<del>old</del>"), "{html}");
        assert!(html.contains("type=\"checkbox\""), "{html}");
        assert!(html.contains("checked"), "{html}");
    }

    #[test]
    fn script_tags_are_removed() {
        let html = render("hi <script>alert(1)</script> there\n\n<script>\nalert(2)\n</script>\n");
        assert!(!html.to_lowercase().contains("<script"), "{html}");
        assert!(!html.contains("alert(2)"), "{html}");
    }

    #[test]
    fn event_handlers_are_stripped() {
        let html =
            render("<img src=\"x\" onerror=\"alert(1)\">\n\n<div onclick=\"alert(2)\">d</div>");
        assert!(!html.contains("onerror"), "{html}");
        assert!(!html.contains("onclick"), "{html}");
        assert!(!html.contains("alert"), "{html}");
    }

    #[test]
    fn javascript_links_are_inert() {
        for md in [
            "[click](javascript:alert(1))",
            "<a href=\"javascript:alert(1)\">x</a>",
            "[c](JaVaScRiPt:alert(1))",
            "<a href=\"jav&#x09;ascript:alert(1)\">x</a>",
        ] {
            let html = render(md);
            assert!(!html.to_lowercase().contains("javascript"), "{md} → {html}");
        }
        let ok = render("[site](https://example.com)");
        assert!(ok.contains("href=\"https://example.com\""), "{ok}");
        assert!(ok.contains("noopener"), "{ok}");
    }

    #[test]
    fn other_dangerous_markup_is_removed() {
        let html = render(
            "<iframe src=\"https://x\"></iframe><style>*{}</style><svg onload=alert(1)></svg><input type=\"text\" onfocus=\"a()\" autofocus>",
        );
        let lower = html.to_lowercase();
        for bad in [
            "<iframe",
            "<style",
            "<svg",
            "onload",
            "onfocus",
            "autofocus",
            "type=\"text\"",
        ] {
            assert!(!lower.contains(bad), "{bad} in {html}");
        }
        // Whatever input survives is a disabled checkbox-or-nothing.
        assert!(lower.contains("<input disabled"), "{html}");
    }

    #[test]
    fn code_blocks_keep_language_class_and_escape_content() {
        let html = render("```rust\nlet a = \"<b>\";\n```\n");
        assert!(
            html.contains("<pre><code class=\"language-rust\">"),
            "{html}"
        );
        assert!(html.contains("&lt;b&gt;"), "{html}");
    }

    /// The XSS corpus: script, event handlers, javascript:/data:/vbscript:
    /// URLs in every place Markdown and HTML take one, SVG and MathML, style-based,
    /// nested and entity encodings, broken markup. Nothing active may survive. Shared with
    /// the WebDriver test that renders it in the real webview.
    fn xss_corpus() -> Vec<String> {
        serde_json::from_str(include_str!("../../../tests/support/xss-corpus.json")).unwrap()
    }

    #[test]
    fn the_xss_corpus_renders_inert() {
        let active = [
            "<script",
            "<svg",
            "<math",
            "<iframe",
            "<object",
            "<embed",
            "<style",
            "<link",
            "<meta",
            "<form",
            "<base",
            "<template",
            "<video",
            "<source",
            "<body",
            "javascript:",
            "vbscript:",
            "data:",
            "expression(",
            " style=",
            "srcdoc",
        ];
        let corpus = xss_corpus();
        assert!(corpus.len() >= 40);
        for payload in &corpus {
            let html = render(payload).to_lowercase();
            for bad in active {
                assert!(
                    !html.contains(bad),
                    "{payload:?} rendered {html:?} (contains {bad:?})"
                );
            }
            // no event-handler attribute on any tag that survived
            let handler = regex_lite_on_attr(&html);
            assert!(
                handler.is_none(),
                "{payload:?} rendered {html:?} ({handler:?})"
            );
        }
    }

    /// An ` on…=` attribute inside a tag, if any.
    fn regex_lite_on_attr(html: &str) -> Option<String> {
        let mut in_tag = false;
        let bytes: Vec<char> = html.chars().collect();
        for i in 0..bytes.len() {
            match bytes[i] {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if in_tag && c.is_whitespace() => {
                    let rest: String = bytes[i + 1..].iter().take(24).collect();
                    if rest.starts_with("on")
                        && rest.chars().take_while(|c| c.is_ascii_alphabetic()).count() > 2
                        && rest.contains('=')
                    {
                        return Some(rest);
                    }
                }
                _ => {}
            }
        }
        None
    }
}
