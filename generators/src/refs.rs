//! Local `$ref` plumbing shared by every crate: percent-decoding a URI fragment and resolving a
//! `#` / `#/json/pointer` reference inside the document that holds it. Remote references are
//! never fetched (schemas come from untrusted servers).
//!
//! See: <https://json-schema.org/draft/2020-12/json-schema-core#section-8.2.3.1>.

use serde_json::Value;

/// Decodes the `%XX` escapes of a URI fragment (a `$ref` like `#/$defs/a%20b`); anything that is
/// not a valid escape stays as it is. Never panics, whatever the bytes.
#[must_use]
pub fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_owned();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        if let Some(b) = escaped {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_owned())
}

/// Resolves a local `$ref` (`#`, or `#` and a JSON pointer) against `root`; `None` for an
/// anchor, a remote reference or a pointer that names nothing.
#[must_use]
pub fn resolve_local<'v>(root: &'v Value, reference: &str) -> Option<&'v Value> {
    let fragment = reference.strip_prefix('#')?;
    if !fragment.is_empty() && !fragment.starts_with('/') && !fragment.starts_with('%') {
        return None;
    }
    root.pointer(&percent_decode(fragment))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn percent_decoding_never_panics_and_keeps_bad_escapes() {
        assert_eq!(percent_decode("/a%20b"), "/a b");
        assert_eq!(percent_decode("/%25"), "/%");
        assert_eq!(
            percent_decode("%a\u{e9}"),
            "%a\u{e9}",
            "an escape cut by a multibyte character"
        );
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("%C3%A9"), "\u{e9}");
    }

    #[test]
    fn only_local_pointers_resolve() {
        let root = json!({"$defs": {"a b": {"type": "string"}}});
        assert_eq!(resolve_local(&root, "#"), Some(&root));
        assert_eq!(resolve_local(&root, "#/$defs/a%20b"), Some(&json!({"type": "string"})));
        assert_eq!(resolve_local(&root, "#/$defs/missing"), None);
        assert_eq!(resolve_local(&root, "#anchor"), None);
        assert_eq!(resolve_local(&root, "https://example.com/s.json"), None);
    }
}
