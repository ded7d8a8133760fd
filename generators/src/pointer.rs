//! JSON Pointer (RFC 6901) tokens: escaping, unescaping and appending, shared by every crate
//! that names a place in a schema or a value.
//!
//! See: <https://www.rfc-editor.org/rfc/rfc6901>.

/// One reference token, escaped: `~` as `~0`, `/` as `~1`.
#[must_use]
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// One reference token, unescaped (`~1` before `~0`, as the RFC requires).
#[must_use]
pub fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// The tokens of a pointer, unescaped (`""` has none; `/a~1b/0` has `a/b` and `0`).
#[must_use]
pub fn tokens(pointer: &str) -> Vec<String> {
    pointer.split('/').skip(1).map(unescape).collect()
}

/// `base` with one more (escaped) token.
#[must_use]
pub fn push(base: &str, token: &str) -> String {
    let mut s = String::with_capacity(base.len() + token.len() + 1);
    s.push_str(base);
    s.push('/');
    for c in token.chars() {
        match c {
            '~' => s.push_str("~0"),
            '/' => s.push_str("~1"),
            c => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip() {
        assert_eq!(escape("a/b~c"), "a~1b~0c");
        assert_eq!(tokens("/a~1b/0/~0"), ["a/b", "0", "~"]);
        assert!(tokens("").is_empty());
        assert_eq!(unescape("a~1b~0c"), "a/b~c");
        // `~01` is `~1` escaped, not `/`.
        assert_eq!(unescape("~01"), "~1");
        assert_eq!(push("/properties", "a/b~c"), "/properties/a~1b~0c");
        assert_eq!(push("", "x"), "/x");
    }
}
