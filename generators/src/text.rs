//! The one way a long text is cut for a message: at a number of characters (never inside one),
//! with an ellipsis when something was cut.

/// Characters of a detail shown on one line (a message, a headline) before it is cut.
pub const LINE: usize = 160;

/// `s`, cut to `max` characters with `…` appended when it was longer.
///
/// ```
/// use mcp_fuzz_generators::text::clip;
/// assert_eq!(clip("abcdef", 3), "abc…");
/// assert_eq!(clip("été", 3), "été");
/// ```
#[must_use]
pub fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}
