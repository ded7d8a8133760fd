//! RFC 6570 URI templates, levels 1 to 4, for MCP resource templates: parse a template, list its
//! variables, expand it with string values, and the values worth trying for a variable.
//!
//! Every operator is supported (simple, `+` reserved, `#` fragment, `.` label, `/` path, `;`
//! path-style parameters, `?` query, `&` query continuation) with the `:n` prefix and `*` explode
//! modifiers. Values are strings (an exploded variable with one string value expands like a list
//! of one), which is all an MCP client can hold for a template variable.
//!
//! See: <https://www.rfc-editor.org/rfc/rfc6570>.

use std::collections::BTreeMap;

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expression { op: Op, vars: Vec<VarSpec> },
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct VarSpec {
    name: String,
    prefix: Option<usize>,
}

/// An expression's operator (RFC 6570 appendix A).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParam,
    Query,
    QueryCont,
}

impl Op {
    fn of(c: char) -> Option<Self> {
        Some(match c {
            '+' => Self::Reserved,
            '#' => Self::Fragment,
            '.' => Self::Label,
            '/' => Self::Path,
            ';' => Self::PathParam,
            '?' => Self::Query,
            '&' => Self::QueryCont,
            _ => return None,
        })
    }

    /// first, separator, named, if-empty, reserved characters allowed.
    fn table(self) -> (&'static str, &'static str, bool, &'static str, bool) {
        match self {
            Self::Simple => ("", ",", false, "", false),
            Self::Reserved => ("", ",", false, "", true),
            Self::Fragment => ("#", ",", false, "", true),
            Self::Label => (".", ".", false, "", false),
            Self::Path => ("/", "/", false, "", false),
            Self::PathParam => (";", ";", true, "", false),
            Self::Query => ("?", "&", true, "=", false),
            Self::QueryCont => ("&", "&", true, "=", false),
        }
    }
}

/// Longest prefix modifier RFC 6570 allows (`:9999`).
const MAX_PREFIX: usize = 9999;

impl UriTemplate {
    /// Parses `template`.
    ///
    /// # Errors
    /// What is wrong and where: an unclosed or empty expression, a bad variable name, a prefix
    /// out of range, an operator RFC 6570 reserves for future use.
    pub fn parse(template: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let after = &rest[open + 1..];
            let close = after.find('}').ok_or_else(|| {
                format!("`{{` at byte {} is never closed", template.len() - rest.len() + open)
            })?;
            parts.push(expression(&after[..close])?);
            rest = &after[close + 1..];
        }
        if rest.contains('}') {
            return Err("`}` without a matching `{`".into());
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(Self { parts })
    }

    /// The variable names, each once, in order of first use.
    #[must_use]
    pub fn variables(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for part in &self.parts {
            if let Part::Expression { vars, .. } = part {
                for v in vars {
                    if !names.contains(&v.name.as_str()) {
                        names.push(&v.name);
                    }
                }
            }
        }
        names
    }

    /// Expands the template; a variable without a value is undefined (left out).
    #[must_use]
    pub fn expand(&self, values: &BTreeMap<String, String>) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(text) => encode_into(&mut out, text, true),
                Part::Expression { op, vars } => expand_expression(&mut out, *op, vars, values),
            }
        }
        out
    }
}

fn expression(body: &str) -> Result<Part, String> {
    let mut chars = body.chars();
    let (op, list) = match chars.next() {
        None => return Err("an empty expression `{}`".into()),
        Some(c) if "=,!@|".contains(c) => {
            return Err(format!("operator `{c}` is reserved for future extensions (RFC 6570 2.2)"));
        }
        Some(c) => Op::of(c).map_or((Op::Simple, body), |op| (op, chars.as_str())),
    };
    let mut vars = Vec::new();
    for spec in list.split(',') {
        let (name, prefix) = match spec.split_once(':') {
            Some((n, p)) => {
                let len: usize =
                    p.parse().ok().filter(|l| (1..=MAX_PREFIX).contains(l)).ok_or_else(|| {
                        format!("prefix `:{p}` of `{n}` is not 1 to {MAX_PREFIX}")
                    })?;
                (n, Some(len))
            }
            None => (spec.strip_suffix('*').unwrap_or(spec), None),
        };
        let valid = !name.is_empty()
            && name.split('.').all(|seg| {
                !seg.is_empty()
                    && seg.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'%')
            });
        if !valid {
            return Err(format!("`{spec}` is not a variable name (letters, digits, `_`, `.`)"));
        }
        vars.push(VarSpec { name: name.to_owned(), prefix });
    }
    Ok(Part::Expression { op, vars })
}

fn expand_expression(
    out: &mut String,
    op: Op,
    vars: &[VarSpec],
    values: &BTreeMap<String, String>,
) {
    let (first, sep, named, if_empty, reserved) = op.table();
    let mut wrote = false;
    for var in vars {
        let Some(value) = values.get(&var.name) else { continue };
        out.push_str(if wrote { sep } else { first });
        wrote = true;
        let value: String = match var.prefix {
            Some(n) => value.chars().take(n).collect(),
            None => value.clone(),
        };
        if named {
            out.push_str(&var.name);
            if value.is_empty() {
                out.push_str(if_empty);
                continue;
            }
            out.push('=');
        }
        encode_into(out, &value, reserved);
    }
}

/// Percent-encodes `text` into `out`: unreserved characters stay; with `reserved`, reserved
/// characters and `%XX` triplets stay too.
fn encode_into(out: &mut String, text: &str, reserved: bool) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let unreserved = b.is_ascii_alphanumeric() || b"-._~".contains(&b);
        let kept_reserved = reserved && b":/?#[]@!$&'()*+,;=".contains(&b);
        let triplet = reserved
            && b == b'%'
            && bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
            && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
        if unreserved || kept_reserved || triplet {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
        i += 1;
    }
}

/// Values worth trying for a template variable, beyond the plausible ones: empty, very long,
/// path traversal (plain and percent-encoded), percent escapes, unicode, URI delimiters, a NUL.
#[must_use]
pub fn odd_values() -> Vec<String> {
    vec![
        String::new(),
        "a".repeat(1_000),
        "..".into(),
        "../../../../etc/passwd".into(),
        "%2e%2e%2f%2e%2e%2f".into(),
        "%ZZ%".into(),
        "é🦀\u{200b}ü".into(),
        "a b?c#d&e=f/g".into(),
        "\u{0}".into(),
        "-1".into(),
    ]
}

/// Values a variable plausibly takes when nothing better is known.
#[must_use]
pub fn plausible_values() -> Vec<String> {
    vec!["1".into(), "test".into()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    /// The examples of RFC 6570 section 1.2 (levels 1 to 4, string values).
    #[test]
    fn expands_the_rfc_examples() {
        let v = values(&[
            ("var", "value"),
            ("hello", "Hello World!"),
            ("path", "/foo/bar"),
            ("empty", ""),
            ("x", "1024"),
            ("y", "768"),
        ]);
        for (template, expected) in [
            ("{var}", "value"),
            ("{hello}", "Hello%20World%21"),
            ("{+var}", "value"),
            ("{+hello}", "Hello%20World!"),
            ("{+path}/here", "/foo/bar/here"),
            ("here?ref={+path}", "here?ref=/foo/bar"),
            ("X{#var}", "X#value"),
            ("X{#hello}", "X#Hello%20World!"),
            ("map?{x,y}", "map?1024,768"),
            ("{x,hello,y}", "1024,Hello%20World%21,768"),
            ("{+x,hello,y}", "1024,Hello%20World!,768"),
            ("{+path,x}/here", "/foo/bar,1024/here"),
            ("{#x,hello,y}", "#1024,Hello%20World!,768"),
            ("X{.var}", "X.value"),
            ("X{.x,y}", "X.1024.768"),
            ("{/var}", "/value"),
            ("{/var,x}/here", "/value/1024/here"),
            ("{;x,y}", ";x=1024;y=768"),
            ("{;x,y,empty}", ";x=1024;y=768;empty"),
            ("{?x,y}", "?x=1024&y=768"),
            ("{?x,y,empty}", "?x=1024&y=768&empty="),
            ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
            ("{var:3}", "val"),
            ("{var:30}", "value"),
            ("{+path:6}/here", "/foo/b/here"),
            ("{/var*}", "/value"),
            ("{?undefined}", ""),
        ] {
            let t = UriTemplate::parse(template).unwrap_or_else(|e| panic!("{template}: {e}"));
            assert_eq!(t.expand(&v), expected, "{template}");
        }
    }

    #[test]
    fn lists_each_variable_once_in_order() {
        let t = UriTemplate::parse("mem://{a}/{+b}{?a,c}").expect("parses");
        assert_eq!(t.variables(), ["a", "b", "c"]);
    }

    #[test]
    fn bad_templates_say_what_is_wrong() {
        for (template, needle) in [
            ("mem://{id", "never closed"),
            ("mem://{}", "empty expression"),
            ("mem://{=x}", "reserved"),
            ("mem://{a b}", "not a variable name"),
            ("mem://{a:0}", "prefix"),
            ("mem://a}", "without a matching"),
        ] {
            let e = UriTemplate::parse(template).expect_err(template);
            assert!(e.contains(needle), "{template}: {e}");
        }
    }

    proptest::proptest! {
        /// Any text parses or says why, and whatever parses expands, never panicking: a
        /// server's `uriTemplate` is untrusted input.
        #[test]
        fn any_text_parses_or_fails_cleanly(text in "[a-z{}+#./;?&=,!@|:*0-9%é ]{0,40}", value in ".{0,12}") {
            if let Ok(t) = UriTemplate::parse(&text) {
                let names: Vec<String> = t.variables().iter().map(|v| (*v).to_owned()).collect();
                let values = names.into_iter().map(|n| (n, value.clone())).collect();
                let _ = t.expand(&values);
            }
        }
    }

    #[test]
    fn odd_values_stay_in_their_expression() {
        let t = UriTemplate::parse("file:///root/{name}").expect("parses");
        for v in odd_values() {
            let uri = t.expand(&values(&[("name", &v)]));
            assert!(uri.starts_with("file:///root/"), "{uri}");
            assert!(!uri[13..].contains('/'), "a simple expansion encodes `/`: {uri}");
        }
    }
}
