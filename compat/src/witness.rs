//! Witness search: a value the source schema accepts and the target rejects, shrunk to a small one.
//!
//! Candidates come from the generator, in this order: plain values of every type, the target's
//! deterministic mutations (values just outside the target: a newly required property missing, a
//! bound crossed, a dropped enum member...), the source's boundary values (old enum members,
//! bounds, only-required objects, `default`s and `examples`), then random valid values of the
//! source. Both checks use the generator's `jsonschema` oracle (formats asserted).

use mcp_fuzz_generators::Generator;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::time::Instant;

/// Checks allowed while shrinking one witness.
///
/// Why: each check is two validations; a few thousand keeps shrinking well under a millisecond
/// per kilobyte of witness while reaching a local minimum for the values generators produce.
pub const MAX_SHRINK_CHECKS: usize = 2_000;

/// What bounds a search.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Candidates checked at most.
    pub max_candidates: usize,
    /// Stop at this instant, if given.
    pub deadline: Option<Instant>,
    /// Seed of the random candidates.
    pub seed: u64,
    /// Only objects are candidates (tool arguments are always objects).
    pub objects_only: bool,
}

/// A value that proves a break.
#[derive(Debug, Clone, PartialEq)]
pub struct Witness {
    /// The shrunk value: valid against the source, invalid against the target.
    pub value: Value,
    /// Where in the value the target rejects it (JSON pointer).
    pub pointer: String,
    /// The target keyword that rejects it.
    pub keyword: String,
    /// Whether the value needs a property the source never declared.
    pub open_content: bool,
}

/// The result of a search.
#[derive(Debug, Clone, PartialEq)]
pub enum Search {
    /// A witness, and how many candidates were checked.
    Found(Witness, usize),
    /// None among `tried` candidates; `timed_out` when the deadline stopped the search.
    NotFound {
        /// Candidates checked.
        tried: usize,
        /// The deadline passed.
        timed_out: bool,
    },
}

/// Searches for a value valid against `source` and invalid against `target`.
///
/// `declared` is the set of property names the source schema declares anywhere (see
/// [`declared_names`]): a witness using another name is marked `open_content`, and the search
/// goes on for a witness without one.
#[must_use]
pub fn search(
    source: &Generator,
    target: &Generator,
    declared: &Declared,
    budget: Budget,
) -> Search {
    let mut tried = 0_usize;
    let mut open: Option<Value> = None;
    let mut timed_out = false;
    let breaks = |v: &Value| {
        (!budget.objects_only || v.is_object()) && source.is_valid(v) && !target.is_valid(v)
    };
    let check = |candidate: Value, tried: &mut usize, open: &mut Option<Value>| -> Option<Value> {
        *tried += 1;
        if !breaks(&candidate) {
            return None;
        }
        if declared.is_open(&candidate) {
            if open.is_none() {
                *open = Some(candidate);
            }
            return None;
        }
        Some(candidate)
    };
    let plain = [json!(null), json!(false), json!(0), json!(0.5), json!(""), json!([]), json!({})];
    let boundary = source.boundary().unwrap_or_default();
    // A small object the source accepts, to graft the target's mutations onto: an argument the
    // old schema accepts plus the one property the new schema rejects.
    let base = boundary.iter().find(|v| v.is_object() && source.is_valid(v)).cloned();
    let mutations: Vec<Value> = target
        .mutations()
        .unwrap_or_default()
        .into_iter()
        .map(|m| {
            let graft = graft(base.as_ref(), &m.value, &m.label.pointer);
            (m.value, graft)
        })
        .flat_map(|(value, graft)| std::iter::once(value).chain(graft))
        .collect();
    let mut sampler = source.sampler(budget.seed);
    let mut target_sampler = target.sampler(budget.seed);
    // Four streams taken in turn, so that a large schema's boundary values or mutations cannot
    // use up the budget alone: the source's boundary values, the target's mutations (as they are
    // and grafted), random valid values of the source, and random invalid values of the target
    // (which reach what no deterministic mutation does, such as a value matching a `not`).
    let mut streams: [Box<dyn Iterator<Item = Value>>; 4] = [
        Box::new(plain.into_iter().chain(boundary)),
        Box::new(mutations.into_iter()),
        Box::new(std::iter::from_fn(move || sampler.valid().ok())),
        Box::new(std::iter::from_fn(move || target_sampler.invalid().ok().map(|i| i.value))),
    ];
    let mut live = [true; 4];
    let mut turn = 0_usize;
    let found = loop {
        if tried >= budget.max_candidates || !live.iter().any(|l| *l) {
            break None;
        }
        if tried.is_multiple_of(16) && budget.deadline.is_some_and(|d| Instant::now() >= d) {
            timed_out = true;
            break None;
        }
        let stream = turn % streams.len();
        turn += 1;
        if !live[stream] {
            continue;
        }
        let Some(candidate) = streams[stream].next() else {
            live[stream] = false;
            continue;
        };
        if let Some(w) = check(candidate, &mut tried, &mut open) {
            break Some((w, false));
        }
    };
    let Some((value, open_content)) = found.or_else(|| open.map(|v| (v, true))) else {
        return Search::NotFound { tried, timed_out };
    };
    let value = shrink(value, |v| breaks(v) && (open_content || !declared.is_open(v)));
    let (pointer, keyword) = target.violations(&value).into_iter().next().unwrap_or_default();
    Search::Found(Witness { value, pointer, keyword, open_content }, tried)
}

/// `base` with the top-level property that `pointer` names in `mutated` copied over: `None` when
/// there is no base, the pointer is the root, or the property is missing from the mutation.
fn graft(base: Option<&Value>, mutated: &Value, pointer: &str) -> Option<Value> {
    let base = base?.as_object()?;
    let first = pointer.strip_prefix('/')?.split('/').next()?;
    let key = mcp_fuzz_generators::pointer::unescape(first);
    let mut out = base.clone();
    match mutated.get(&key) {
        Some(value) => {
            out.insert(key, value.clone());
        }
        // A removed property (missing-required): remove it from the base too.
        None => {
            out.shift_remove(&key)?;
        }
    }
    Some(Value::Object(out))
}

/// The property names a source schema declares, for the open-content test.
#[derive(Debug, Clone, Default)]
pub struct Declared {
    names: BTreeSet<String>,
    /// The source has `additionalProperties` or `patternProperties` schemas that admit names on
    /// purpose: then no name counts as undeclared.
    open_by_design: bool,
}

impl Declared {
    /// Whether `value` has, at any depth, an object key the source never declared.
    #[must_use]
    pub fn is_open(&self, value: &Value) -> bool {
        if self.open_by_design {
            return false;
        }
        match value {
            Value::Object(o) => o.iter().any(|(k, v)| !self.names.contains(k) || self.is_open(v)),
            Value::Array(items) => items.iter().any(|v| self.is_open(v)),
            _ => false,
        }
    }
}

/// Collects the names under every `properties` and `required` of a schema.
#[must_use]
pub fn declared_names(schema: &Value) -> Declared {
    fn walk(v: &Value, out: &mut Declared) {
        match v {
            Value::Object(o) => {
                for (k, child) in o {
                    match (k.as_str(), child) {
                        ("properties", Value::Object(props)) => {
                            out.names.extend(props.keys().cloned());
                        }
                        ("required", Value::Array(names)) => {
                            out.names
                                .extend(names.iter().filter_map(Value::as_str).map(str::to_owned));
                        }
                        ("additionalProperties", schema)
                            if schema != &Value::Bool(false)
                                && !crate::prove::accepts_everything(schema) =>
                        {
                            out.open_by_design = true;
                        }
                        ("patternProperties", _) => out.open_by_design = true,
                        ("enum" | "const" | "default" | "examples", _) => continue,
                        _ => {}
                    }
                    walk(child, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = Declared::default();
    walk(schema, &mut out);
    out
}

/// Greedily shrinks `value` while `keep` holds: removes properties and items, shortens strings,
/// moves numbers towards zero; stops at a local minimum or after [`MAX_SHRINK_CHECKS`].
pub fn shrink(mut value: Value, keep: impl Fn(&Value) -> bool) -> Value {
    let mut checks = 0;
    loop {
        let mut next = None;
        for smaller in reductions(&value) {
            checks += 1;
            if checks > MAX_SHRINK_CHECKS {
                break;
            }
            if keep(&smaller) {
                next = Some(smaller);
                break;
            }
        }
        match next {
            Some(smaller) => value = smaller,
            None => return value,
        }
    }
}

/// Simpler variants of a value, simplest first; each differs in one place.
fn reductions(value: &Value) -> Box<dyn Iterator<Item = Value> + '_> {
    // Lazy: a large witness makes many variants, and shrinking usually takes an early one.
    match value {
        Value::Object(o) => {
            let removals = o.keys().map(move |key| {
                let mut smaller = o.clone();
                smaller.shift_remove(key);
                Value::Object(smaller)
            });
            let nested = o.iter().flat_map(move |(key, child)| {
                reductions(child).map(move |reduced| {
                    let mut smaller: Map<String, Value> = o.clone();
                    smaller.insert(key.clone(), reduced);
                    Value::Object(smaller)
                })
            });
            Box::new(removals.chain(nested))
        }
        Value::Array(items) => {
            let half = (items.len() > 1).then(|| Value::Array(items[..items.len() / 2].to_vec()));
            let removals = (0..items.len()).map(move |index| {
                let mut smaller = items.clone();
                smaller.remove(index);
                Value::Array(smaller)
            });
            // Equal items shrink together first, so that duplicates stay duplicates.
            let nested = items.iter().enumerate().flat_map(move |(index, child)| {
                let repeated = items.iter().filter(|other| *other == child).count() > 1;
                reductions(child).flat_map(move |reduced| {
                    let mut together = None;
                    if repeated {
                        let mut smaller = items.clone();
                        for item in &mut smaller {
                            if item == child {
                                *item = reduced.clone();
                            }
                        }
                        together = Some(Value::Array(smaller));
                    }
                    let mut smaller = items.clone();
                    smaller[index] = reduced;
                    together.into_iter().chain(std::iter::once(Value::Array(smaller)))
                })
            });
            Box::new(half.into_iter().chain(removals).chain(nested))
        }
        other => Box::new(scalar_reductions(other).into_iter()),
    }
}

fn scalar_reductions(value: &Value) -> Vec<Value> {
    match value {
        Value::String(s) if !s.is_empty() => {
            let chars: Vec<char> = s.chars().collect();
            let mut out = vec![json!("")];
            if chars.len() > 1 {
                out.push(Value::String(chars[..chars.len() / 2].iter().collect()));
                out.push(Value::String(chars[..chars.len() - 1].iter().collect()));
            }
            if chars.iter().any(|c| !c.is_ascii_lowercase()) {
                out.push(Value::String("a".repeat(chars.len())));
            }
            out
        }
        Value::Number(n) => {
            let mut out = Vec::new();
            if let Some(i) = n.as_i64() {
                if i != 0 {
                    out.extend([json!(0), json!(i / 2), json!(i - i.signum())]);
                }
            } else if let Some(f) = n.as_f64() {
                // Towards zero, then towards short decimals: 0, the integer part, then x.5 and
                // one decimal place.
                out.push(json!(0));
                if let Some(i) = as_exact_i64(f.trunc()) {
                    out.push(json!(i));
                }
                out.push(json!(f.trunc() + 0.5 * f.signum()));
                out.push(json!((f * 10.0).round() / 10.0));
                if f.abs() > 1.0 {
                    out.push(json!(f / 2.0));
                }
            }
            out.retain(|v| v != value);
            out
        }
        Value::Bool(true) => vec![json!(false)],
        _ => Vec::new(),
    }
}

fn as_exact_i64(f: f64) -> Option<i64> {
    // Within ±2^53 every integer is exact in an f64.
    (f.abs() < 9_007_199_254_740_992.0 && f.fract() == 0.0).then_some(f as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(old: &Value, new: &Value) -> Search {
        let (s, t) = (
            Generator::compile(old).expect("compiles"),
            Generator::compile(new).expect("compiles"),
        );
        let budget = Budget { max_candidates: 500, deadline: None, seed: 1, objects_only: true };
        search(&s, &t, &declared_names(old), budget)
    }

    #[test]
    fn newly_required_property_gives_a_small_witness() {
        let old = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}});
        let new = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["b"]});
        let Search::Found(w, _) = find(&old, &new) else { panic!("a witness exists") };
        assert_eq!(w.value, json!({}));
        assert_eq!(w.keyword, "required");
        assert!(!w.open_content);
    }

    #[test]
    fn tightened_bound_witness_is_shrunk() {
        let old = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 100}}, "required": ["n"]});
        let new = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 50}}, "required": ["n"]});
        let Search::Found(w, _) = find(&old, &new) else { panic!("a witness exists") };
        assert_eq!(w.value, json!({"n": 51}));
        assert_eq!((w.pointer.as_str(), w.keyword.as_str()), ("/n", "maximum"));
    }

    #[test]
    fn open_content_is_flagged() {
        let old = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let new = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}});
        let Search::Found(w, _) = find(&old, &new) else { panic!("a witness exists") };
        assert!(w.open_content, "{w:?}");
        assert_eq!(w.keyword, "type");
    }

    #[test]
    fn identical_schemas_have_no_witness() {
        let s = json!({"type": "object", "properties": {"a": {"enum": ["x", "y"]}}});
        assert!(matches!(find(&s, &s), Search::NotFound { timed_out: false, .. }));
    }
}
