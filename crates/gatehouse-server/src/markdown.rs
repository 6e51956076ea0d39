//! Agents' markdown rendered for reviewers: pulldown-cmark to HTML, then
//! ammonia strips scripts, event handlers, `javascript:` links, styles and
//! remote images, so nothing an agent writes can act in the reviewer's view.
//! Raw HTML in an agent's markdown is never interpreted: it is shown as
//! code, exactly as sent, so the reviewer sees what the agent tried and an
//! unclosed `<style>` or `<math>` cannot hide the rest of the message.
//! ammonia then cleans the result anyway (defence in depth). Links open in
//! a new tab (the desktop window hands them to the browser), so following
//! one never takes the reviewer's page, or their unsent work, away.

use std::collections::HashSet;

use pulldown_cmark::{html, CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// Renders untrusted markdown to safe HTML.
pub fn render(markdown: &str) -> String {
    let mut unsafe_html = String::with_capacity(markdown.len() * 3 / 2);
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(markdown, options).map(|event| match event {
        // Agents' HTML is shown, not run: blocks as code blocks, inline as code.
        Event::Start(Tag::HtmlBlock) => Event::Start(Tag::CodeBlock(CodeBlockKind::Indented)),
        Event::End(TagEnd::HtmlBlock) => Event::End(TagEnd::CodeBlock),
        Event::Html(raw) => Event::Text(raw),
        Event::InlineHtml(raw) => Event::Code(raw),
        other => other,
    });
    html::push_html(&mut unsafe_html, events);
    let mut tags: HashSet<&str> = ammonia::Builder::default().clone_tags();
    // Images would load remote content (tracking, exfiltration by URL).
    tags.remove("img");
    ammonia::Builder::default()
        .tags(tags)
        .url_schemes(HashSet::from(["http", "https", "mailto"]))
        .link_rel(Some("noopener noreferrer nofollow"))
        .set_tag_attribute_value("a", "target", "_blank")
        .clean(&unsafe_html)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::render;

    /// The tags and attributes of `html` (not the escaped text).
    fn markup(html: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = html;
        while let Some(start) = rest.find('<') {
            let end = rest[start..].find('>').map_or(rest.len(), |e| start + e + 1);
            out.push(rest[start..end].to_ascii_lowercase());
            rest = &rest[end..];
        }
        out
    }

    #[test]
    fn scripts_handlers_and_javascript_links_are_removed() {
        let html = render(
            "# Hi\n<script>alert(1)</script>\n<img src=x onerror=alert(2)>\n\n[click](javascript:alert(3))\n\n<a href=\"https://x\" onclick=\"evil()\">ok</a> and <b>bold</b>",
        );
        assert!(html.contains("<h1>Hi</h1>"), "{html}");
        assert!(html.contains("click"), "the link text stays, inert: {html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "raw HTML is shown as sent: {html}");
        for tag in markup(&html) {
            for bad in ["<script", "<img", "<b>", "on", "javascript:"] {
                let found = if bad == "on" { tag.contains(" on") } else { tag.contains(bad) };
                assert!(!found, "{bad} survived as markup in {tag}: {html}");
            }
        }
    }

    #[test]
    fn links_open_elsewhere_and_tell_the_target_nothing() {
        let html = render("See [the runbook](https://wiki.example/runbook) and <https://status.example>.");
        let links: Vec<String> = markup(&html).into_iter().filter(|t| t.starts_with("<a ")).collect();
        assert_eq!(links.len(), 2, "{html}");
        for link in links {
            assert!(link.contains("target=\"_blank\""), "{link}");
            assert!(link.contains("rel=\"noopener noreferrer nofollow\""), "{link}");
        }
    }

    #[test]
    fn an_unclosed_style_or_script_cannot_hide_the_rest_of_the_text() {
        for opener in ["<style>", "<script>", "<math><mtext><table><mglyph><style>"] {
            let html = render(&format!("Before\n\n{opener}\n\nApprove the **transfer** of 1,000,000 to account 42"));
            assert!(html.contains("Before"), "{html}");
            assert!(html.contains("transfer") && html.contains("account 42"), "{opener} hid the rest: {html}");
            assert!(!html.contains("<style") && !html.contains("<script"), "{html}");
        }
    }

    #[test]
    fn ordinary_markdown_keeps_its_structure() {
        let html = render("Use **staging**:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\ncode\n```");
        assert!(html.contains("<strong>staging</strong>") && html.contains("<table>") && html.contains("<code>"));
    }
}
