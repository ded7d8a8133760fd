//! The one way a long text is cut for a message: at a number of characters (never inside one),
//! with an ellipsis when something was cut; the one way a time reads in words; a count with its
//! noun.

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

/// The first meaningful line of a text, cut to `max` characters: not blank, not a lone brace or
/// bracket of a pretty-printed JSON text (whose first line is `{`).
///
/// ```
/// use mcp_fuzz_generators::text::first_line;
/// assert_eq!(first_line("{\n  \"error\": \"no\"\n}", 80), "\"error\": \"no\"");
/// ```
#[must_use]
pub fn first_line(s: &str, max: usize) -> String {
    let meaningful = |l: &&str| !l.trim().is_empty() && !matches!(l.trim(), "{" | "[" | "}" | "]");
    clip(s.lines().find(meaningful).unwrap_or("").trim(), max)
}

/// `n` and a regular noun, agreeing: `1 failure`, `3 failures`, `2 breaches` (`-es` after a
/// sibilant: s, x, z, ch, sh).
///
/// ```
/// use mcp_fuzz_generators::text::count;
/// assert_eq!(count(1, "failure"), "1 failure");
/// assert_eq!(count(0, "failure"), "0 failures");
/// assert_eq!(count(2, "breach"), "2 breaches");
/// ```
#[must_use]
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        return format!("1 {noun}");
    }
    let sibilant = ["s", "x", "z", "ch", "sh"].iter().any(|end| noun.ends_with(end));
    format!("{n} {noun}{}", if sibilant { "es" } else { "s" })
}

/// Seconds as the largest unit that keeps the number readable.
///
/// ```
/// use mcp_fuzz_generators::text::duration;
/// assert_eq!(duration(2.5), "2.5 s");
/// assert_eq!(duration(21.3), "21 s");
/// assert_eq!(duration(600.0), "10 minutes");
/// assert_eq!(duration(2_147_483.647), "25 days");
/// ```
#[must_use]
pub fn duration(secs: f64) -> String {
    const UNITS: [(f64, &str); 5] = [
        (365.0 * 86_400.0, "years"),
        (86_400.0, "days"),
        (3_600.0, "hours"),
        (60.0, "minutes"),
        (1.0, "s"),
    ];
    for (size, name) in UNITS {
        if secs >= size * 2.0 || size == 1.0 {
            let n = secs / size;
            return if n >= 10.0 { format!("{n:.0} {name}") } else { format!("{n:.1} {name}") };
        }
    }
    unreachable!("the last unit always matches")
}
