//! Agents' markdown rendered for reviewers: pulldown-cmark to HTML, then
//! ammonia strips scripts, event handlers, `javascript:` links, styles and
//! remote images, so nothing an agent writes can act in the reviewer's view.

use std::collections::HashSet;

use pulldown_cmark::{html, Options, Parser};

/// Renders untrusted markdown to safe HTML.
pub fn render(markdown: &str) -> String {
    let mut unsafe_html = String::with_capacity(markdown.len() * 3 / 2);
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    html::push_html(&mut unsafe_html, Parser::new_ext(markdown, options));
    let mut tags: HashSet<&str> = ammonia::Builder::default().clone_tags();
    // Images would load remote content (tracking, exfiltration by URL).
    tags.remove("img");
    ammonia::Builder::default()
        .tags(tags)
        .url_schemes(HashSet::from(["http", "https", "mailto"]))
        .link_rel(Some("noopener noreferrer nofollow"))
        .clean(&unsafe_html)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn scripts_handlers_and_javascript_links_are_removed() {
        let html = render(
            "# Hi\n<script>alert(1)</script>\n<img src=x onerror=alert(2)>\n\n[click](javascript:alert(3))\n\n<a href=\"https://x\" onclick=\"evil()\">ok</a>",
        );
        assert!(html.contains("<h1>Hi</h1>"), "{html}");
        assert!(html.contains("click"), "the link text stays, inert: {html}");
        for bad in ["<script", "onerror", "href=\"javascript:", "onclick", "<img"] {
            assert!(!html.contains(bad), "{bad} survived in {html}");
        }
    }

    #[test]
    fn ordinary_markdown_keeps_its_structure() {
        let html = render("Use **staging**:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\ncode\n```");
        assert!(html.contains("<strong>staging</strong>") && html.contains("<table>") && html.contains("<code>"));
    }
}
