//! One message template, whatever the values in it: a cause whose echoed values were elided
//! (`Entity with name … not found`) is the same cause as one whose echo could not be elided,
//! because the value was a number, `null` or an array a server printed as nothing (`Entity with
//! name # not found`, `Entity with name null not found`, `Entity with name  not found`).
//!
//! See: issue 30 item 6 (`@itseasy21/mcp-knowledge-graph` 1.0.7: one message template, split by
//! the generated name into many findings).

/// The most characters a gap of a template stands for.
const MAX_GAP: usize = 40;

/// Words a template needs of its own (outside its gaps and its `kind: ` prefix), so that a
/// template as loose as `… not found` fits nothing.
const MIN_WORDS: usize = 3;

/// Whether two causes are one: equal, or one is a template the other fits.
#[must_use]
pub fn same_cause(a: &str, b: &str) -> bool {
    a == b || fits(a, b) || fits(b, a)
}

/// Whether `cause` reads as `template` with each `…` of the template standing for a short text
/// (at most 40 characters, on one line). A template needs three words of its own.
#[must_use]
pub fn fits(template: &str, cause: &str) -> bool {
    if !template.contains('…') || template == cause || own_words(template) < MIN_WORDS {
        return false;
    }
    // A value echoed last, empty: the text ends where the gap began (`not found: …` and
    // `not found:`, its trailing blank trimmed).
    if template.strip_suffix(" …").is_some_and(|t| t.trim_end() == cause.trim_end()) {
        return true;
    }
    let parts: Vec<&str> = template.split('…').collect();
    match cause.strip_prefix(parts[0]) {
        Some(rest) => fits_rest(&parts[1..], rest),
        None => false,
    }
}

/// Whether `rest` is a gap followed by `parts[0]`, a gap, `parts[1]`, ... up to its end.
fn fits_rest(parts: &[&str], rest: &str) -> bool {
    let gap_ok = |g: &str| g.chars().count() <= MAX_GAP && !g.contains('\n');
    match parts {
        [] => rest.is_empty(),
        [last] => rest.strip_suffix(last).is_some_and(gap_ok),
        [next, more @ ..] => rest
            .match_indices(next)
            .take_while(|(at, _)| gap_ok(&rest[..*at]))
            .any(|(at, _)| fits_rest(more, &rest[at + next.len()..])),
    }
}

/// The words of a template outside its gaps and its `kind: ` prefix.
fn own_words(template: &str) -> usize {
    let text = template.split_once(": ").map_or(template, |(_, t)| t);
    text.split('…')
        .flat_map(str::split_whitespace)
        .filter(|w| w.chars().any(char::is_alphabetic))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEMPLATE: &str = "internal-error: Entity with name … not found";

    #[test]
    fn a_template_fits_the_values_it_could_not_elide() {
        for cause in [
            "internal-error: Entity with name # not found",
            "internal-error: Entity with name null not found",
            "internal-error: Entity with name  not found",
            "internal-error: Entity with name [object Object] not found",
        ] {
            assert!(same_cause(TEMPLATE, cause), "{cause}");
            assert!(same_cause(cause, TEMPLATE), "{cause}");
        }
        // An empty value echoed last: its blank was trimmed with it.
        let last =
            "internal-error: Failed to get metadata for component: Component metadata not found: …";
        for cause in [
            "internal-error: Failed to get metadata for component: Component metadata not found:",
            "internal-error: Failed to get metadata for component: Component metadata not found: x",
        ] {
            assert!(same_cause(last, cause), "{cause}");
        }
    }

    #[test]
    fn other_messages_do_not_fit() {
        for cause in [
            "internal-error: Relation not found",
            "internal-error: Entity with name a not found in the graph",
            "handler-exception: Entity with name # not found",
            "internal-error: Entity with name an extremely long value that is not an echo of one value at all not found",
            "internal-error: Entity with name a\nb not found",
        ] {
            assert!(!same_cause(TEMPLATE, cause), "{cause}");
        }
        // Too loose to be a template: two words of its own.
        assert!(!fits("internal-error: … not found", "internal-error: Relation not found"));
        // No gap: equal or not.
        assert!(!fits("internal-error: a b c", "internal-error: a b d"));
    }

    #[test]
    fn several_gaps_fit_in_order() {
        let t = "tool-error: cannot move … to … in this folder";
        assert!(fits(t, "tool-error: cannot move # to null in this folder"));
        assert!(fits(t, "tool-error: cannot move to to to in this folder"));
        assert!(!fits(t, "tool-error: cannot move # in this folder"));
    }
}
