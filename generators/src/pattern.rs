//! `pattern`: translating ECMA-262 regexes into what `regex-syntax` (and so proptest's regex
//! generator) accepts, and shaping the parsed regex for generation.
//!
//! See: <https://json-schema.org/draft/2020-12/json-schema-core#name-regular-expressions>.

use regex_syntax::hir::{Hir, HirKind, Repetition};

/// Extra repetitions allowed beyond a quantifier's minimum when it has no maximum (`*`, `+`,
/// `{n,}`), or beyond the minimum of a huge `{n,m}`.
///
/// Why: generated strings stay short (fast, readable, shrinkable); fewer repetitions never leave
/// the regex's language.
const REPEAT_CAP: u32 = 8;

/// Rewrites ECMA-262 syntax into `regex-syntax` syntax with the same meaning for the strings we
/// generate: ASCII `\d`/`\w`, literal `{` that is not a quantifier, `\/`, `[^]`.
pub(crate) fn translate(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut in_class = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            let e = chars[i + 1];
            i += 2;
            match (e, in_class) {
                ('d', false) => out.push_str("[0-9]"),
                ('d', true) => out.push_str("0-9"),
                ('D', false) => out.push_str("[^0-9]"),
                ('w', false) => out.push_str("[A-Za-z0-9_]"),
                ('w', true) => out.push_str("A-Za-z0-9_"),
                ('W', false) => out.push_str("[^A-Za-z0-9_]"),
                ('/', _) => out.push('/'),
                ('c', _) if i < chars.len() && chars[i].is_ascii_alphabetic() => {
                    let ctrl = u32::from(chars[i]) % 32;
                    out.push_str(&format!("\\x{{{ctrl:X}}}"));
                    i += 1;
                }
                _ => {
                    out.push('\\');
                    out.push(e);
                }
            }
            continue;
        }
        i += 1;
        if in_class {
            if c == ']' {
                in_class = false;
            } else if c == '[' {
                out.push('\\');
            }
            out.push(c);
            continue;
        }
        match c {
            '[' => {
                if chars.get(i) == Some(&'^') && chars.get(i + 1) == Some(&']') {
                    out.push_str("[\\s\\S]");
                    i += 2;
                    continue;
                }
                in_class = true;
                out.push('[');
                // A `]` right after `[` or `[^` is a literal in regex-syntax but closes an empty
                // class in ECMA; ECMA's `[]` matches nothing.
                if chars.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                if chars.get(i) == Some(&']') {
                    out.push_str("\\]");
                    i += 1;
                }
            }
            '{' => {
                let rest: String = chars[i..].iter().take_while(|&&ch| ch != '}').collect();
                let is_quantifier = i + rest.len() < chars.len()
                    && !rest.is_empty()
                    && rest.split(',').count() <= 2
                    && rest
                        .split(',')
                        .next()
                        .is_some_and(|a| !a.is_empty() && a.chars().all(|d| d.is_ascii_digit()))
                    && rest.split(',').nth(1).is_none_or(|b| b.chars().all(|d| d.is_ascii_digit()));
                if is_quantifier {
                    out.push('{');
                    out.push_str(&rest);
                    out.push('}');
                    i += rest.len() + 1;
                } else {
                    out.push_str("\\{");
                }
            }
            // Quantifier braces were copied whole above: a `}` here is a literal.
            '}' => out.push_str("\\}"),
            c => out.push(c),
        }
    }
    out
}

/// Parses a schema pattern for generation: anchors removed (the generated string *is* the
/// match), unbounded repetition capped.
pub(crate) fn generation_hir(pattern: &str, max_len: Option<u64>) -> Result<Hir, String> {
    let hir = parse(pattern)?;
    let cap = max_len
        .map_or(REPEAT_CAP, |m| u32::try_from(m).unwrap_or(u32::MAX).clamp(1, REPEAT_CAP * 4));
    Ok(shape(&hir, cap))
}

fn parse(pattern: &str) -> Result<Hir, String> {
    let translated = translate(pattern);
    regex_syntax::ParserBuilder::new().build().parse(&translated).map_err(|e| {
        format!("pattern `{pattern}` cannot be generated from: {}", first_line(&e.to_string()))
    })
}

fn first_line(s: &str) -> String {
    s.lines()
        .rev()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_else(|| s.lines().next().unwrap_or(""))
        .to_owned()
}

fn shape(hir: &Hir, cap: u32) -> Hir {
    match hir.kind() {
        HirKind::Look(_) => Hir::empty(),
        HirKind::Repetition(r) => {
            let max = match r.max {
                None => r.min.saturating_add(cap),
                Some(m) => m.min(r.min.saturating_add(cap.max(REPEAT_CAP) * 4)),
            };
            Hir::repetition(Repetition {
                min: r.min,
                max: Some(max),
                greedy: r.greedy,
                sub: Box::new(shape(&r.sub, cap)),
            })
        }
        HirKind::Capture(c) => shape(&c.sub, cap),
        HirKind::Concat(items) => Hir::concat(items.iter().map(|h| shape(h, cap)).collect()),
        HirKind::Alternation(items) => {
            Hir::alternation(items.iter().map(|h| shape(h, cap)).collect())
        }
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) => hir.clone(),
    }
}

/// A matcher with JSON Schema semantics (unanchored search).
pub(crate) fn matcher(pattern: &str) -> Option<regex::Regex> {
    regex::Regex::new(&translate(pattern)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecma_escapes_are_translated() {
        assert_eq!(translate(r"^\d+$"), "^[0-9]+$");
        assert_eq!(translate(r"[\d\w-]"), "[0-9A-Za-z0-9_-]");
        assert_eq!(translate(r"a{"), r"a\{");
        assert_eq!(translate(r"a{2,3}"), "a{2,3}");
        assert_eq!(translate(r"\/x"), "/x");
    }

    #[test]
    fn generation_drops_anchors_and_caps_repetition() {
        let hir = generation_hir(r"^[a-z]+$", None).expect("parses");
        assert!(!hir.to_string().contains('^'));
        assert!(generation_hir(r"(a)\1", None).is_err());
        assert!(generation_hir(r"(?=a)a", None).is_err());
    }

    #[test]
    fn ascii_digit_semantics() {
        let m = matcher(r"^\d$").expect("compiles");
        assert!(m.is_match("5"));
        assert!(!m.is_match("١"));
    }

    #[test]
    fn corpus_date_regex_parses() {
        let zod_date = r"^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))$";
        assert!(generation_hir(zod_date, None).is_ok());
    }
}
