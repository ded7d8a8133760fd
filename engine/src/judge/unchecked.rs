//! Invalid input a tool accepted, one finding per tool and rule family: a handler that does not
//! check `required` and `type` of one nested property usually checks none of them, so fourteen
//! accepted cases are one missing validation, said once with every case kept.
//!
//! See: issue 30 item 3 (`@itseasy21/mcp-knowledge-graph` 1.0.7: 58 `accepts-invalid` warnings,
//! one per pointer and mutation, for one missing validation of nested items per tool).

use super::Found;
use crate::finding::FindingKind;
use crate::report::Finding;
use mcp_fuzz_generators::{Mutation, RuleFamily, pointer};
use mcp_fuzz_model::case::CaseLabel;

/// Nested properties named in a finding's words before "...".
const MAX_NAMED: usize = 6;

/// Adds an accepted invalid case to the finding of its rule family (its `cause`, the family's
/// name), or starts that finding; every label is kept (`other_cases` is not capped here).
pub(super) fn push(list: &mut Vec<Found>, mut f: Finding, index: usize) {
    let family = family_of(f.case.as_ref());
    let key = family.map(|x| x.as_str().to_owned());
    let same =
        list.iter_mut().find(|(g, _)| g.kind == FindingKind::AcceptsInvalid && g.cause == key);
    match same {
        Some((g, _)) => {
            g.occurrences += 1;
            g.other_cases.extend(f.case.take());
        }
        None => {
            f.cause = key;
            list.push((f, Some(index)));
        }
    }
}

/// Words the findings that stand for several cases: how many, which rules and where.
pub(super) fn reword(list: &mut [Found]) {
    for (f, _) in list.iter_mut() {
        if f.kind != FindingKind::AcceptsInvalid || f.occurrences < 2 {
            continue;
        }
        let Some(family) = family_of(f.case.as_ref()) else { continue };
        let labels = f.case.iter().chain(&f.other_cases);
        let pointers: Vec<&str> = labels.filter_map(|l| l.pointer.as_deref()).collect();
        f.message = format!(
            "accepted invalid input without an error ({} cases): does not check {} {}",
            f.occurrences,
            family.words(),
            places(&pointers)
        );
    }
}

/// The rule family of an invalid case's mutation.
fn family_of(label: Option<&CaseLabel>) -> Option<RuleFamily> {
    let name = label?.mutation.as_deref()?;
    Mutation::from_name(name).map(Mutation::family)
}

/// Where the unchecked rules sit: per scope (the items of the first array on the way, else the
/// object that holds the property), the properties, in first-seen order.
fn places(pointers: &[&str]) -> String {
    let mut scopes: Vec<(String, Vec<String>)> = Vec::new();
    for p in pointers {
        let (scope, property) = place(p);
        match scopes.iter_mut().find(|(s, _)| *s == scope) {
            Some((_, props)) if !props.contains(&property) => props.push(property),
            Some(_) => {}
            None => scopes.push((scope, vec![property])),
        }
    }
    let parts: Vec<String> = scopes
        .into_iter()
        .map(|(scope, props)| {
            let mut named: Vec<String> = props.iter().take(MAX_NAMED).cloned().collect();
            if props.len() > MAX_NAMED {
                named.push("...".to_owned());
            }
            format!("{scope} ({})", named.join(", "))
        })
        .collect();
    parts.join("; ")
}

/// A pointer's scope and property in words: `/entities/0/name` is `name` in the items of
/// `/entities`, `/names/1` each item of `/names`, `/config/port` `port` in `/config` and `/q`
/// `q` among the arguments. Array indexes past the first read `*`.
fn place(p: &str) -> (String, String) {
    let tokens = pointer::tokens(p);
    let index = |t: &String| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let path = |ts: &[String]| ts.iter().fold(String::new(), |acc, t| pointer::push(&acc, t));
    if let Some(at) = tokens.iter().position(index) {
        let rest: Vec<&str> =
            tokens[at + 1..].iter().map(|t| if index(t) { "*" } else { t.as_str() }).collect();
        let property =
            if rest.is_empty() { "each item".to_owned() } else { format!("`{}`", rest.join("/")) };
        return (format!("in the items of `{}`", path(&tokens[..at])), property);
    }
    match tokens.split_last() {
        Some((last, [])) => ("among the arguments".to_owned(), format!("`{last}`")),
        Some((last, parent)) => (format!("in `{}`", path(parent)), format!("`{last}`")),
        None => ("in the arguments object".to_owned(), "itself".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Severity;
    use mcp_fuzz_model::case::Mode;

    fn accepted(mutation: &str, pointer: &str) -> Finding {
        Finding {
            case: Some(CaseLabel {
                mutation: Some(mutation.into()),
                pointer: Some(pointer.into()),
                ..CaseLabel::of(Mode::Invalid)
            }),
            ..Finding::general(
                Some("t".into()),
                FindingKind::AcceptsInvalid,
                Severity::Warning,
                format!("accepted invalid input ({mutation} at `{pointer}`) without an error"),
            )
        }
    }

    #[test]
    fn one_finding_per_rule_family_with_every_case_kept() {
        let mut list = Vec::new();
        let cases = [
            ("missing-required", "/entities/0/name"),
            ("wrong-type", "/entities/0/entityType"),
            ("unexpected-null", "/entities/0/observations/0"),
            ("too-long", "/title"),
            ("wrong-type", "/entities/3/name"),
            ("missing-required", "/limit"),
        ];
        for (i, (m, p)) in cases.into_iter().enumerate() {
            push(&mut list, accepted(m, p), i);
        }
        reword(&mut list);
        assert_eq!(list.len(), 2, "{list:?}");
        let (shape, first) = &list[0];
        assert_eq!((*first, shape.occurrences, shape.other_cases.len()), (Some(0), 5, 4));
        assert_eq!(
            shape.message,
            "accepted invalid input without an error (5 cases): does not check required and type \
             in the items of `/entities` (`name`, `entityType`, `observations/*`); among the \
             arguments (`limit`)"
        );
        assert_eq!(shape.cause.as_deref(), Some("required-and-type"));
        let (bounds, _) = &list[1];
        assert_eq!(bounds.occurrences, 1);
        assert_eq!(
            bounds.message,
            "accepted invalid input (too-long at `/title`) without an error"
        );
    }

    #[test]
    fn places_read_as_items_objects_and_arguments() {
        assert_eq!(place("/names/1"), ("in the items of `/names`".into(), "each item".into()));
        assert_eq!(place("/config/port"), ("in `/config`".into(), "`port`".into()));
        assert_eq!(place("/q"), ("among the arguments".into(), "`q`".into()));
        assert_eq!(place("/a~1b/0/c"), ("in the items of `/a~1b`".into(), "`c`".into()));
        let many: Vec<String> = (0..8).map(|i| format!("/p{i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(places(&refs).ends_with("`p4`, `p5`, ...)"), "{}", places(&refs));
    }
}
