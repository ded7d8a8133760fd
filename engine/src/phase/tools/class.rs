//! Classes of cases that keep killing the server the same way: once a tool has killed or hung
//! the server [`DEATHS_BEFORE_CLASS`] times with one signature (the outcome's cause: the exit
//! status and crash site, or a hang), the traits every one of those cases shares ([`traits`]: a
//! mutation at a pointer, a negative number at `/factor`, a non-ASCII string at `/delimiter`)
//! are the class of that death. A later case of the class is not sent while no case of the
//! class has survived: its outcome is known, and each one would cost a restart.
//!
//! Why: a Python SDK server that exits on every negative number took 35 restarts of 1.2 s each
//! to get through its cases, and then gave up on the tool's other valid cases too (issue 29
//! item 3). Cases outside the class still run, so the tool keeps its coverage.
//!
//! [`Order`] is what a single job decides for each case in turn (send it, leave it out once its
//! validity used up its restarts, or not send it under a known death): the workers follow it
//! as far as every case before has ended, and the tool's results are rebuilt by it.
//!
//! The class is pure by construction: a case that shares every trait of the class and did not
//! die that way (it survived, or died otherwise) means the traits do not explain the death (a
//! tool that dies on a `%` in a query shares "non-empty string" with queries that pass), and
//! then the class sends nothing less.

use crate::config::MAX_RESTARTS_PER_TOOL;
use crate::judge::Outcome;
use mcp_fuzz_generators::pointer;
use mcp_fuzz_model::case::Case;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Deaths with one signature before their class stops being sent.
///
/// Why: two deaths can share a trait by chance (both had `verbose: false`); with three, and
/// no survivor of the class, the trait is the cause's.
pub(crate) const DEATHS_BEFORE_CLASS: usize = 3;

/// One trait of a case: what is at a pointer of its arguments.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Trait {
    pointer: String,
    what: String,
}

impl std::fmt::Display for Trait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at `{}`",
            self.what,
            if self.pointer.is_empty() { "/" } else { &self.pointer }
        )
    }
}

/// The traits of a case: its mutation and where (for an invalid case), and for every value in
/// its arguments its type and a coarse kind (the sign of a number, an empty, long or non-ASCII
/// string, a boolean's value, an empty array); array items share the pointer `/*`.
pub(crate) fn traits(case: &Case) -> BTreeSet<Trait> {
    let mut out = BTreeSet::new();
    if let (Some(m), Some(p)) = (&case.label.mutation, &case.label.pointer) {
        out.insert(Trait { pointer: p.clone(), what: m.clone() });
    }
    for (name, v) in &case.arguments {
        value_traits(&pointer::push("", name), v, &mut out);
    }
    out
}

/// A string from which its length is a trait of its own.
///
/// Why: the lengths that make servers hang or die (a regex that backtracks, a fixed buffer) sit
/// well above the short strings valid cases mostly hold.
const LONG_STRING: usize = 256;

fn value_traits(at: &str, v: &Value, out: &mut BTreeSet<Trait>) {
    let mut add = |what: &str| {
        out.insert(Trait { pointer: at.to_owned(), what: what.to_owned() });
    };
    match v {
        Value::Null => add("null"),
        Value::Bool(b) => add(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            add("number");
            let x = n.as_f64().unwrap_or(0.0);
            add(if x < 0.0 {
                "negative number"
            } else if x == 0.0 {
                "zero"
            } else {
                "positive number"
            });
            add(if n.is_f64() && x.fract() != 0.0 { "fraction" } else { "whole number" });
        }
        Value::String(s) => {
            add("string");
            add(if s.is_empty() { "empty string" } else { "non-empty string" });
            if !s.is_ascii() {
                add("non-ASCII string");
            }
            if s.chars().count() > LONG_STRING {
                add("long string");
            }
        }
        Value::Array(items) => {
            add("array");
            add(if items.is_empty() { "empty array" } else { "non-empty array" });
            let at = pointer::push(at, "*");
            for item in items {
                value_traits(&at, item, out);
            }
        }
        Value::Object(m) => {
            add("object");
            if m.is_empty() {
                add("empty object");
            }
            for (name, child) in m {
                value_traits(&pointer::push(at, name), child, out);
            }
        }
    }
}

/// Why a case was not sent: the death its class keeps giving.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Known {
    /// The death's signature (its outcome's cause).
    pub cause: String,
    /// The traits its cases share.
    pub class: BTreeSet<Trait>,
}

impl Known {
    /// The class in words, one phrase per place, without what a finer trait at the same place
    /// says: "negative whole number at `/n`", "zero at `/limit`", not also "number at `/n`".
    pub fn class_text(&self) -> String {
        const TYPES: [&str; 5] = ["number", "string", "array", "object", "boolean"];
        let mut places: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for t in &self.class {
            places.entry(&t.pointer).or_default().push(&t.what);
        }
        places
            .into_iter()
            .map(|(pointer, mut words)| {
                if words.len() > 1 {
                    words.retain(|w| !TYPES.contains(w));
                }
                if words.contains(&"zero") {
                    words.retain(|w| *w != "whole number");
                }
                let sign =
                    words.iter().position(|w| matches!(*w, "negative number" | "positive number"));
                let kind = words.iter().position(|w| matches!(*w, "whole number" | "fraction"));
                let mut words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
                if let (Some(s), Some(k)) = (sign, kind) {
                    let signed = words[s].trim_end_matches(" number").to_owned();
                    words[k] = format!("{signed} {}", words[k]);
                    words.remove(s);
                }
                let at = if pointer.is_empty() { "/" } else { pointer };
                format!("{} at `{at}`", words.join(", "))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The cases a tool ran, in case order, as the class rule sees them.
#[derive(Debug, Default)]
pub(crate) struct Classes {
    /// The traits of the cases that killed or hung the server, by signature.
    deaths: BTreeMap<String, Vec<BTreeSet<Trait>>>,
    /// The traits of the cases that did not.
    survived: Vec<BTreeSet<Trait>>,
}

impl Classes {
    /// Notes a case that ran: its traits, and the signature of the death it caused, if any.
    pub fn ran(&mut self, traits: BTreeSet<Trait>, death: Option<String>) {
        match death {
            Some(cause) => self.deaths.entry(cause).or_default().push(traits),
            None => self.survived.push(traits),
        }
    }

    /// The known death a case with these traits would repeat, if its class is established.
    pub fn known(&self, traits: &BTreeSet<Trait>) -> Option<Known> {
        self.deaths.iter().filter(|(_, d)| d.len() >= DEATHS_BEFORE_CLASS).find_map(|(cause, d)| {
            let class = d.iter().skip(1).fold(d[0].clone(), |acc, t| &acc & t);
            let member = |t: &BTreeSet<Trait>| class.is_subset(t);
            let impure = self.survived.iter().any(member)
                || self.deaths.iter().filter(|(c, _)| *c != cause).flat_map(|(_, d)| d).any(member);
            (!class.is_empty() && !impure && member(traits))
                .then(|| Known { cause: cause.clone(), class })
        })
    }
}

/// The traits of each case, for the class rule.
pub(crate) fn all_traits(cases: &[Case]) -> Vec<BTreeSet<Trait>> {
    cases.iter().map(traits).collect()
}

/// What a single job decides for each case in turn, from the cases before it.
#[derive(Debug, Default)]
pub(crate) struct Order {
    /// Restarts, and whether they gave up, by validity (0: invalid, 1: valid).
    pub(super) restarts: [u32; 2],
    pub(super) gave_up: [bool; 2],
    classes: Classes,
}

/// Whether a case is sent.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    Send,
    /// Its validity used up its restarts.
    LeftOut,
    /// Its class keeps killing the server this way.
    NotSent(Known),
}

impl Order {
    /// Whether the case is sent, after the cases before it.
    pub fn decide(&self, case: &Case, traits: &BTreeSet<Trait>) -> Decision {
        if self.gave_up[usize::from(case.label.mode.is_valid())] {
            return Decision::LeftOut;
        }
        self.classes.known(traits).map_or(Decision::Send, Decision::NotSent)
    }

    /// Notes a sent case's outcome.
    pub fn ran(
        &mut self,
        case: &Case,
        traits: &BTreeSet<Trait>,
        restarted: bool,
        outcome: &Outcome,
    ) {
        let valid = usize::from(case.label.mode.is_valid());
        self.restarts[valid] += u32::from(restarted);
        if self.restarts[valid] > MAX_RESTARTS_PER_TOOL {
            self.gave_up[valid] = true;
        }
        self.classes.ran(traits.clone(), restarted.then(|| outcome.cause()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_fuzz_model::case::{CaseLabel, Mode};
    use serde_json::json;

    fn case(args: Value) -> Case {
        let Value::Object(arguments) = args else { panic!("an object") };
        Case { label: CaseLabel::of(Mode::Valid), arguments, draw: None }
    }

    fn t(args: Value) -> BTreeSet<Trait> {
        traits(&case(args))
    }

    const EXIT: &str = "exited: status 7";

    #[test]
    fn a_class_forms_after_three_deaths_whose_traits_no_survivor_shares() {
        let mut c = Classes::default();
        c.ran(t(json!({"factor": 0})), None);
        c.ran(t(json!({"factor": 2.5})), None);
        c.ran(t(json!({"factor": -1})), Some(EXIT.into()));
        c.ran(t(json!({"factor": -1e300})), Some(EXIT.into()));
        assert_eq!(c.known(&t(json!({"factor": -3}))), None, "two deaths are not a class yet");
        c.ran(t(json!({"factor": -0.5})), Some(EXIT.into()));
        let known = c.known(&t(json!({"factor": -3}))).expect("a negative factor is known");
        assert_eq!(known.cause, EXIT);
        assert_eq!(known.class_text(), "negative number at `/factor`");
        assert_eq!(c.known(&t(json!({"factor": 3}))), None, "other cases still run");
    }

    #[test]
    fn a_class_a_survivor_shares_is_no_class() {
        let mut c = Classes::default();
        // A tool that dies on a `%` in its query: every query is a non-empty string.
        for q in ["a%", "%b", "%"] {
            c.ran(t(json!({"query": q})), Some(EXIT.into()));
        }
        assert!(c.known(&t(json!({"query": "x%"}))).is_some(), "no survivor yet");
        c.ran(t(json!({"query": "abc"})), None);
        assert_eq!(c.known(&t(json!({"query": "x%"}))), None, "a survivor shares the class");
        // A death of another signature in the class counts against it too.
        let mut c = Classes::default();
        for x in [-1, -2, -3] {
            c.ran(t(json!({"x": x})), Some(EXIT.into()));
        }
        c.ran(t(json!({"x": -4})), Some("timeout".into()));
        assert_eq!(c.known(&t(json!({"x": -5}))), None);
    }

    #[test]
    fn a_class_reads_as_one_phrase_per_place() {
        let mut c = Classes::default();
        for args in [
            json!({"n": -1, "limit": 0, "q": "a"}),
            json!({"n": -7, "limit": 0, "q": "bc"}),
            json!({"n": -2, "limit": 0, "q": "x"}),
        ] {
            c.ran(t(args), Some(EXIT.into()));
        }
        let known = c.known(&t(json!({"n": -3, "limit": 0, "q": "z"}))).expect("known");
        assert_eq!(
            known.class_text(),
            "zero at `/limit`, negative whole number at `/n`, non-empty string at `/q`"
        );
    }

    #[test]
    fn deaths_with_nothing_in_common_make_no_class() {
        let mut c = Classes::default();
        c.ran(t(json!({})), Some(EXIT.into()));
        c.ran(t(json!({"a": 1})), Some(EXIT.into()));
        c.ran(t(json!({"b": "x"})), Some(EXIT.into()));
        assert_eq!(c.known(&t(json!({}))), None);
        assert_eq!(c.known(&t(json!({"a": 1, "b": "x"}))), None);
    }

    #[test]
    fn traits_name_mutations_and_coarse_kinds_of_nested_values() {
        let mut invalid = case(json!({"tags": ["é", ""], "opts": {"deep": true}, "n": null}));
        invalid.label = CaseLabel {
            mutation: Some("wrong-type".into()),
            pointer: Some("/opts/deep".into()),
            ..CaseLabel::of(Mode::Invalid)
        };
        let words: Vec<String> = traits(&invalid).iter().map(ToString::to_string).collect();
        for want in [
            "wrong-type at `/opts/deep`",
            "non-empty array at `/tags`",
            "non-ASCII string at `/tags/*`",
            "empty string at `/tags/*`",
            "true at `/opts/deep`",
            "null at `/n`",
        ] {
            assert!(words.iter().any(|w| w == want), "{want} in {words:?}");
        }
        let long = "x".repeat(LONG_STRING + 1);
        assert!(t(json!({"s": long})).iter().any(|t| t.what == "long string"));
    }
}
