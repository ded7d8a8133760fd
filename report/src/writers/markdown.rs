//! Markdown building blocks (GitHub-flavoured: PR comments, job summaries) that stay correct
//! whatever the text holds: table cells that contain `|` or newlines, code that contains
//! backticks, names that contain `*`, `_`, `<` or `[`.
//!
//! - [`text`]: inline text with Markdown and HTML syntax escaped (one line).
//! - [`code_span`]: inline code whose fence is longer than any backtick run inside.
//! - [`code_block`]: a fenced block whose fence is longer than any backtick run inside.
//! - [`table`]: a pipe table; cells are inserted as given, so build them with [`text`] or
//!   [`code_span`], and this escapes `|` and line breaks left in them.
//! - [`details`]: a collapsible `<details>` section.

use std::fmt::Write as _;

/// Escapes inline text: emphasis, code, link, table and strikethrough punctuation gets a
/// backslash (`\\ ` * _ [ ] | ~`), as does a leading `#`, `+`, `-`, `=` or ordered-list number
/// that would start a block; `<`, `>` and `&` become entities (GitHub renders raw HTML); line
/// breaks become spaces and other control characters a visible `\u{..}`.
#[must_use]
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let digits = s.chars().take_while(char::is_ascii_digit).count();
    // `1. ` starts a list; `0.1.0` does not (a list marker is followed by a space or the end).
    let after_digits = s.chars().nth(digits + 1);
    let list = digits > 0 && after_digits.is_none_or(char::is_whitespace);
    for (i, c) in s.chars().enumerate() {
        let block_start = (i == 0 && matches!(c, '#' | '+' | '-' | '='))
            || (i == digits && list && matches!(c, '.' | ')'));
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            _ if block_start => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\r' | '\n' => out.push(' '),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:X}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

fn longest_backtick_run(s: &str) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in s.chars() {
        if c == '`' {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// Inline code. Line breaks become spaces (a code span is one line); the fence is one backtick
/// longer than the longest run inside, with padding when the text starts or ends with one.
#[must_use]
pub fn code_span(s: &str) -> String {
    let one_line: String =
        s.chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c }).collect();
    let fence = "`".repeat(longest_backtick_run(&one_line) + 1);
    if one_line.starts_with('`') || one_line.ends_with('`') || one_line.is_empty() {
        format!("{fence} {one_line} {fence}")
    } else {
        format!("{fence}{one_line}{fence}")
    }
}

/// A fenced code block with an info string (`json`, `sh`, or empty), ending in a newline. The
/// fence is at least three backticks and longer than any run inside, so the content cannot
/// close it.
#[must_use]
pub fn code_block(lang: &str, s: &str) -> String {
    let fence = "`".repeat((longest_backtick_run(s) + 1).max(3));
    let lang: String = lang.chars().filter(|c| !c.is_whitespace() && *c != '`').collect();
    let body = s.strip_suffix('\n').unwrap_or(s);
    format!("{fence}{lang}\n{body}\n{fence}\n")
}

/// A pipe table with a header row, ending in a newline. `|` in a cell is escaped, line breaks
/// become `<br>`; rows shorter than the header are padded with empty cells.
#[must_use]
pub fn table<S: AsRef<str>>(header: &[S], rows: &[Vec<String>]) -> String {
    let cell = |s: &str| -> String {
        let mut out = String::with_capacity(s.len());
        let mut prev_backslash = false;
        for c in s.chars() {
            match c {
                '|' if !prev_backslash => out.push_str("\\|"),
                '\r' => {}
                '\n' => out.push_str("<br>"),
                c => out.push(c),
            }
            prev_backslash = c == '\\' && !prev_backslash;
        }
        out
    };
    let mut t = String::new();
    let head: Vec<String> = header.iter().map(|h| cell(h.as_ref())).collect();
    let _ = writeln!(t, "| {} |", head.join(" | "));
    let _ = writeln!(t, "|{}", " --- |".repeat(head.len().max(1)));
    for row in rows {
        let mut cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
        cells.resize(head.len().max(cells.len()), String::new());
        let _ = writeln!(t, "| {} |", cells.join(" | "));
    }
    t
}

/// A collapsible section: `summary` is escaped inline text, `body` is Markdown as given.
#[must_use]
pub fn details(summary: &str, body: &str) -> String {
    format!("<details><summary>{}</summary>\n\n{}\n</details>\n", text(summary), body.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_escapes_markdown_and_html() {
        assert_eq!(
            text("a*b_c [x](y) <script> & | ~"),
            "a\\*b\\_c \\[x\\](y) &lt;script&gt; &amp; \\| \\~"
        );
        assert_eq!(text("# not a heading - x.y"), "\\# not a heading - x.y");
        assert_eq!(text("12. not a list"), "12\\. not a list");
        assert_eq!(text("3."), "3\\.");
        assert_eq!(text("1) x"), "1\\) x");
        assert_eq!(text("0.1.0"), "0.1.0", "a version is not a list item");
        assert_eq!(text("-flag"), "\\-flag");
        assert_eq!(text("line1\nline2"), "line1 line2");
        assert_eq!(text("bell\u{7}"), "bell\\u{7}");
        assert_eq!(text("plain words"), "plain words");
    }

    #[test]
    fn code_spans_outgrow_their_content() {
        assert_eq!(code_span("x"), "`x`");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`a``"), "``` `a`` ```");
        assert_eq!(code_span("a\nb"), "`a b`");
        assert_eq!(code_span(""), "`  `");
    }

    #[test]
    fn code_blocks_cannot_be_closed_from_inside() {
        assert_eq!(code_block("json", "{}\n"), "```json\n{}\n```\n");
        let b = code_block("sh", "echo ```x``` ````");
        assert!(b.starts_with("`````sh\n"), "{b}");
        assert!(b.ends_with("\n`````\n"));
        assert_eq!(code_block("a b`c", "x"), "```abc\nx\n```\n");
    }

    #[test]
    fn tables_escape_pipes_and_breaks() {
        let t = table(&["tool", "note"], &[vec!["a|b".into(), "1\n2".into()], vec!["c".into()]]);
        assert_eq!(t, "| tool | note |\n| --- | --- |\n| a\\|b | 1<br>2 |\n| c |  |\n");
        // An already escaped pipe (from `text`) is not escaped twice.
        let t = table(&["x"], &[vec![text("a|b")]]);
        assert!(t.contains("| a\\|b |"), "{t}");
    }

    #[test]
    fn details_escape_the_summary() {
        assert_eq!(
            details("<b>", "body\n"),
            "<details><summary>&lt;b&gt;</summary>\n\nbody\n</details>\n"
        );
    }
}
