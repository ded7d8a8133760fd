//! Structural inclusion proofs: `source ⊆ target` over 2020-12-form schemas (see [`crate::dialect`]).
//!
//! [`Prover::includes`] answers `Ok(())` only with a proof; `Err(reason)` means "not proved" (the
//! reason names the place), never "not included". The rules are sound by construction:
//!
//! - dropping a constraint from the *source* only makes it larger, so every source keyword the
//!   rules do not understand (`not`, `if`, `unevaluated*`, ...) is ignored;
//! - every *target* assertion keyword must be shown to hold for the source; one the rules do not
//!   understand holds only when the source carries the identical keyword (a target `not` also
//!   holds when the source is shown disjoint from its subschema);
//! - recursive local `$ref`s are handled co-inductively: a pair of real schema nodes already
//!   being compared counts as included, but only after at least one structural step (a property
//!   or an item), so `{"$ref": "#"}` cycles without content prove nothing.
//!
//! Keywords that are not assertions (annotations, unknown keywords) constrain nothing.

use mcp_fuzz_generators::keywords::is_assertion;
use mcp_fuzz_generators::pointer::push;
use mcp_fuzz_generators::refs::resolve_local as resolve;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::rc::Rc;

/// Why a proof failed: a place and a sentence.
pub type NotProved = String;

/// Proof steps allowed per inclusion question.
///
/// Why: a step is one pair of subschemas compared; `anyOf` against `anyOf` multiplies them, and a
/// proof that needs more steps than this is rare enough that `unknown` is the honest answer.
pub const MAX_PROOF_STEPS: usize = 20_000;

/// Nesting depth allowed in a proof; deeper schemas are not proved.
pub const MAX_PROOF_DEPTH: usize = 64;

/// Target keywords the rules only accept when the source has the identical keyword.
const OPAQUE: &[&str] = &[
    "contains",
    "minContains",
    "maxContains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "unevaluatedItems",
    "unevaluatedProperties",
    "$dynamicRef",
    "$recursiveRef",
];

#[derive(Clone)]
enum S<'a> {
    Real(&'a Value),
    Made(Rc<Value>),
}

impl S<'_> {
    fn v(&self) -> &Value {
        match self {
            S::Real(v) => v,
            S::Made(v) => v,
        }
    }
    fn key(&self) -> Option<usize> {
        match self {
            S::Real(v) => Some(std::ptr::from_ref::<Value>(v) as usize),
            S::Made(_) => None,
        }
    }
}

/// Proves inclusions between subschemas of one source root and one target root.
pub struct Prover<'a> {
    source: &'a Value,
    target: &'a Value,
    same_defs: bool,
    equality: bool,
    object_root: bool,
    steps: usize,
    depth: usize,
    structural: usize,
    in_progress: HashMap<(usize, usize), usize>,
    validators: [HashMap<String, Option<jsonschema::Validator>>; 2],
}

impl<'a> Prover<'a> {
    /// A prover for subschemas of `source` and `target` (both in 2020-12 form).
    #[must_use]
    pub fn new(source: &'a Value, target: &'a Value) -> Self {
        let defs = |root: &Value| (root.get("$defs").cloned(), root.get("definitions").cloned());
        let (source_defs, target_defs) = (defs(source), defs(target));
        // Equal definitions make equal `$ref`s into them mean the same, unless a definition
        // itself points elsewhere in its root.
        let self_contained = |d: &(Option<Value>, Option<Value>)| {
            !d.0.as_ref().is_some_and(refs_outside_defs)
                && !d.1.as_ref().is_some_and(refs_outside_defs)
        };
        Self {
            source,
            target,
            same_defs: source_defs == target_defs && self_contained(&source_defs),
            equality: true,
            object_root: false,
            steps: 0,
            depth: 0,
            structural: 0,
            in_progress: HashMap::new(),
            validators: [HashMap::new(), HashMap::new()],
        }
    }

    /// Turns off the "textually equal subschemas are included" shortcut, so that proofs go through
    /// the structural rules (for tests of the rules themselves).
    #[must_use]
    pub fn without_equality_shortcut(mut self) -> Self {
        self.equality = false;
        self
    }

    /// Only objects count at the root of the source: tool arguments are always JSON objects, so
    /// an `inputSchema` is compared on objects only.
    #[must_use]
    pub fn objects_at_root(mut self) -> Self {
        self.object_root = true;
        self
    }

    /// Proves that every value valid against the source root is valid against the target root.
    ///
    /// # Errors
    /// The reason the proof failed (not a claim that the inclusion is false).
    pub fn includes(&mut self) -> Result<(), NotProved> {
        self.sub(S::Real(self.source), S::Real(self.target), "")
    }

    fn sub(&mut self, a: S<'a>, b: S<'a>, at: &str) -> Result<(), NotProved> {
        self.steps += 1;
        if self.steps > MAX_PROOF_STEPS {
            return Err(format!("proof budget of {MAX_PROOF_STEPS} steps exhausted"));
        }
        if self.depth > MAX_PROOF_DEPTH {
            return Err(format!("{}: schema nesting deeper than {MAX_PROOF_DEPTH}", show(at)));
        }
        let (av, bv) = (a.v(), b.v());
        if accepts_everything(bv) || av == &Value::Bool(false) {
            return Ok(());
        }
        if bv == &Value::Bool(false) {
            return Err(format!("{}: the target accepts no value here", show(at)));
        }
        if self.equality && av == bv && self.same_meaning(av) {
            return Ok(());
        }
        let key = a.key().zip(b.key());
        if let Some(key) = key {
            if let Some(&entered) = self.in_progress.get(&key) {
                return if self.structural > entered {
                    Ok(())
                } else {
                    Err(format!("{}: `$ref` cycle without content", show(at)))
                };
            }
            self.in_progress.insert(key, self.structural);
        }
        self.depth += 1;
        let result = self.sub_inner(&a, &b, at);
        self.depth -= 1;
        if let Some(key) = key {
            self.in_progress.remove(&key);
        }
        result
    }

    #[expect(clippy::too_many_lines, reason = "the rules read best in one place, in order")]
    fn sub_inner(&mut self, a: &S<'a>, b: &S<'a>, at: &str) -> Result<(), NotProved> {
        let (av, bv) = (a.v(), b.v());
        let (Some(ao), Some(bo)) = (av.as_object(), bv.as_object()) else {
            // `true` as the source (the target is not everything) or a malformed schema.
            return Err(format!(
                "{}: the source accepts every value, the target does not",
                show(at)
            ));
        };

        // Finite sources: every member must be accepted by the target.
        if let Some(members) = finite_members(ao) {
            for member in members {
                if self.accepts_source(av, &member) == Some(false)
                    || (self.object_root && at.is_empty() && !member.is_object())
                {
                    continue;
                }
                if self.accepts_target(bv, &member) != Some(true) {
                    return Err(format!(
                        "{}: the source allows {member}, which the target does not accept",
                        show(at)
                    ));
                }
            }
            return Ok(());
        }
        // Source combinators: expand them (dropping constraints from the source is sound).
        if let Some(reference) = ao.get("$ref").and_then(Value::as_str) {
            let resolved = resolve(self.source, reference).ok_or_else(|| {
                format!("{}: unsupported `$ref` `{reference}` in the source", show(at))
            })?;
            return self.sub(S::Real(resolved), b.clone(), at);
        }
        if ao.contains_key("$dynamicRef") || ao.contains_key("$recursiveRef") {
            return Err(format!("{}: `$dynamicRef` is not supported", show(at)));
        }
        if let Some(Value::Array(members)) = ao.get("allOf") {
            let rest = without(ao, &["allOf"]);
            let mut parts: Vec<S<'a>> = Vec::new();
            if has_assertions(&rest) {
                parts.push(S::Made(Rc::new(Value::Object(rest))));
            }
            match a {
                S::Real(v) => {
                    let real = v["allOf"].as_array().into_iter().flatten();
                    parts.extend(real.map(|m| self.resolve_source_s(S::Real(m))));
                }
                S::Made(_) => parts.extend(members.iter().map(|m| S::Made(Rc::new(m.clone())))),
            }
            if let Some(merged) = merge(&parts) {
                let merged = S::Made(Rc::new(merged));
                if self.sub(merged, b.clone(), at).is_ok() {
                    return Ok(());
                }
            }
            let mut last = format!("{}: no part of the source `allOf` is included", show(at));
            for part in parts {
                match self.sub(part, b.clone(), at) {
                    Ok(()) => return Ok(()),
                    Err(reason) => last = reason,
                }
            }
            return Err(last);
        }
        for combinator in ["anyOf", "oneOf"] {
            let Some(Value::Array(branches)) = ao.get(combinator) else { continue };
            let rest = without(ao, &[combinator]);
            let real: Vec<S<'a>> = match a {
                S::Real(v) => v[combinator].as_array().into_iter().flatten().map(S::Real).collect(),
                S::Made(_) => branches.iter().map(|m| S::Made(Rc::new(m.clone()))).collect(),
            };
            // A target with the identical combinator and a larger rest is also fine.
            if let Some(same) = bo.get(combinator)
                && same == &ao[combinator]
                && self.same_meaning(same)
            {
                let a_rest = S::Made(Rc::new(Value::Object(rest.clone())));
                let b_rest = S::Made(Rc::new(Value::Object(without(bo, &[combinator]))));
                if self.sub(a_rest, b_rest, at).is_ok() {
                    return Ok(());
                }
            }
            for (index, branch) in real.into_iter().enumerate() {
                let branch = if has_assertions(&rest) {
                    let resolved = self.resolve_source_s(branch);
                    match merge(&[S::Made(Rc::new(Value::Object(rest.clone()))), resolved.clone()])
                    {
                        Some(merged) => S::Made(Rc::new(merged)),
                        None => resolved,
                    }
                } else {
                    branch
                };
                self.sub(branch, b.clone(), at)
                    .map_err(|reason| format!("{reason} (source `{combinator}` branch {index})"))?;
            }
            return Ok(());
        }

        // Target combinators.
        if let Some(reference) = bo.get("$ref").and_then(Value::as_str) {
            let resolved = resolve(self.target, reference).ok_or_else(|| {
                format!("{}: unsupported `$ref` `{reference}` in the target", show(at))
            })?;
            self.sub(a.clone(), S::Real(resolved), at)?;
            let rest = without(bo, &["$ref"]);
            return if has_assertions(&rest) {
                self.sub(a.clone(), S::Made(Rc::new(Value::Object(rest))), at)
            } else {
                Ok(())
            };
        }
        if let Some(Value::Array(members)) = bo.get("allOf") {
            for index in 0..members.len() {
                let member = match b {
                    S::Real(v) => S::Real(&v["allOf"][index]),
                    S::Made(_) => S::Made(Rc::new(members[index].clone())),
                };
                self.sub(a.clone(), member, at)?;
            }
            let rest = without(bo, &["allOf"]);
            return self.sub(a.clone(), S::Made(Rc::new(Value::Object(rest))), at);
        }
        for combinator in ["anyOf", "oneOf"] {
            let Some(Value::Array(branches)) = bo.get(combinator) else { continue };
            let rest = S::Made(Rc::new(Value::Object(without(bo, &[combinator]))));
            if ao.get(combinator) == Some(&bo[combinator]) && self.same_meaning(&bo[combinator]) {
                return self.sub(a.clone(), rest, at);
            }
            let real: Vec<S<'a>> = match b {
                S::Real(v) => v[combinator].as_array().into_iter().flatten().map(S::Real).collect(),
                S::Made(_) => branches.iter().map(|m| S::Made(Rc::new(m.clone()))).collect(),
            };
            let mut found = None;
            for (index, branch) in real.iter().enumerate() {
                if self.sub(a.clone(), branch.clone(), at).is_ok() {
                    found = Some(index);
                    break;
                }
            }
            let Some(index) = found else {
                return Err(format!(
                    "{}: no branch of the target `{combinator}` includes the source",
                    show(at)
                ));
            };
            if combinator == "oneOf" {
                for (other, branch) in real.iter().enumerate() {
                    if other != index && !self.disjoint(av, branch.v()) {
                        return Err(format!(
                            "{}: the source may match target `oneOf` branches {index} and {other}",
                            show(at)
                        ));
                    }
                }
            }
            return self.sub(a.clone(), rest, at);
        }
        for keyword in OPAQUE {
            if let Some(value) = bo.get(*keyword)
                && (ao.get(*keyword) != Some(value) || !self.same_meaning(value))
                // A target `not: N` holds for a source shown disjoint from N (every source value
                // fails N): by type, by finite members, or by a required discriminator.
                && !(*keyword == "not" && self.disjoint(av, value))
            {
                return Err(format!(
                    "{}: the target's `{keyword}` is only proved when the source has the same",
                    show(at)
                ));
            }
        }

        if bo.contains_key("enum") || bo.contains_key("const") {
            return Err(format!("{}: the target restricts values with `enum`/`const`", show(at)));
        }

        // Types.
        let mut ta = types(ao);
        if self.object_root && at.is_empty() {
            ta.retain(|t| *t == "object");
        }
        let tb = types(bo);
        for t in &ta {
            let allowed = tb.contains(t) || (*t == "integer" && tb.contains(&"number"));
            if !allowed {
                return Err(format!(
                    "{}: the source allows type {t}, the target does not",
                    show(at)
                ));
            }
        }
        let has = |t: &str| ta.contains(&t);
        if has("number") || has("integer") {
            numbers(ao, bo, !has("number"), at)?;
        }
        if has("string") {
            strings(ao, bo, at)?;
        }
        if has("array") {
            self.arrays(a, b, at)?;
        }
        if has("object") {
            self.objects(a, b, at)?;
        }
        Ok(())
    }

    /// Whether a subschema that is textually equal in both roots means the same in both: it has
    /// no `$ref`, or only `$ref`s into equal, self-contained definitions.
    fn same_meaning(&self, schema: &Value) -> bool {
        !has_ref(schema) || (self.same_defs && !refs_outside_defs(schema))
    }

    fn resolve_source_s(&self, member: S<'a>) -> S<'a> {
        let S::Real(value) = member else { return member };
        if let Some(object) = value.as_object()
            && object.len() == 1
            && let Some(reference) = object.get("$ref").and_then(Value::as_str)
            && let Some(resolved) = resolve(self.source, reference)
        {
            return S::Real(resolved);
        }
        S::Real(value)
    }

    fn arrays(&mut self, a: &S<'a>, b: &S<'a>, at: &str) -> Result<(), NotProved> {
        let (ao, bo) = (a.v().as_object().expect("object"), b.v().as_object().expect("object"));
        let a_min = uint(ao, "minItems").unwrap_or(0);
        let a_max = uint(ao, "maxItems");
        if let Some(b_min) = uint(bo, "minItems")
            && a_min < b_min
        {
            return Err(format!(
                "{}: the target needs at least {b_min} items, the source {a_min}",
                show(at)
            ));
        }
        if let Some(b_max) = uint(bo, "maxItems")
            && a_max.is_none_or(|a_max| a_max > b_max)
        {
            return Err(format!("{}: the target allows at most {b_max} items", show(at)));
        }
        if bo.get("uniqueItems") == Some(&Value::Bool(true))
            && ao.get("uniqueItems") != Some(&Value::Bool(true))
            && a_max.is_none_or(|m| m > 1)
        {
            return Err(format!("{}: the target requires unique items", show(at)));
        }
        let a_prefix = ao.get("prefixItems").and_then(Value::as_array).map_or(0, Vec::len);
        let b_prefix = bo.get("prefixItems").and_then(Value::as_array).map_or(0, Vec::len);
        let positions = a_prefix.max(b_prefix);
        let item = |s: &S<'a>, o: &Map<String, Value>, index: Option<usize>| -> S<'a> {
            let path = match index {
                Some(i)
                    if o.get("prefixItems")
                        .and_then(Value::as_array)
                        .is_some_and(|p| i < p.len()) =>
                {
                    Some(("prefixItems", Some(i)))
                }
                _ if o.contains_key("items") => Some(("items", None)),
                _ => None,
            };
            match (path, s) {
                (None, _) => S::Made(Rc::new(Value::Bool(true))),
                (Some((k, i)), S::Real(v)) => S::Real(i.map_or(&v[k], |i| &v[k][i])),
                (Some((k, i)), S::Made(v)) => {
                    S::Made(Rc::new(i.map_or(v[k].clone(), |i| v[k][i].clone())))
                }
            }
        };
        self.structural += 1;
        let mut result = Ok(());
        for index in 0..positions {
            if a_max.is_some_and(|m| m <= index as u64) {
                break;
            }
            result = self.sub(
                item(a, ao, Some(index)),
                item(b, bo, Some(index)),
                &format!("{at}/{index}"),
            );
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() && a_max.is_none_or(|m| m > positions as u64) {
            result = self.sub(item(a, ao, None), item(b, bo, None), &format!("{at}/{positions}"));
        }
        self.structural -= 1;
        result
    }

    fn objects(&mut self, a: &S<'a>, b: &S<'a>, at: &str) -> Result<(), NotProved> {
        let (ao, bo) = (a.v().as_object().expect("object"), b.v().as_object().expect("object"));
        let a_required = strings_of(ao.get("required"));
        for name in strings_of(bo.get("required")) {
            if !a_required.contains(&name) {
                return Err(format!(
                    "{}: property `{name}` is required by the target, optional in the source",
                    show(at)
                ));
            }
        }
        if let Some(b_min) = uint(bo, "minProperties")
            && uint(ao, "minProperties").unwrap_or(0).max(a_required.len() as u64) < b_min
        {
            return Err(format!("{}: the target needs at least {b_min} properties", show(at)));
        }
        let a_props = ao.get("properties").and_then(Value::as_object);
        let b_props = bo.get("properties").and_then(Value::as_object);
        let a_closed = ao.get("additionalProperties") == Some(&Value::Bool(false))
            && !ao.contains_key("patternProperties");
        if let Some(b_max) = uint(bo, "maxProperties") {
            let a_max = uint(ao, "maxProperties")
                .or_else(|| a_closed.then(|| a_props.map_or(0, Map::len) as u64));
            if a_max.is_none_or(|m| m > b_max) {
                return Err(format!("{}: the target allows at most {b_max} properties", show(at)));
            }
        }
        if let Some(deps) = bo.get("dependentRequired").and_then(Value::as_object) {
            let a_deps = ao.get("dependentRequired").and_then(Value::as_object);
            for (name, needed) in deps {
                let a_has = strings_of(a_deps.and_then(|d| d.get(name)));
                for need in strings_of(Some(needed)) {
                    if !a_required.contains(&need) && !a_has.contains(&need) {
                        return Err(format!(
                            "{}: the target requires `{need}` when `{name}` is present",
                            show(at)
                        ));
                    }
                }
            }
        }
        let patterns = match (ao.get("patternProperties"), bo.get("patternProperties")) {
            (None, None) => Vec::new(),
            (Some(x), Some(y)) if x == y && self.same_meaning(x) => {
                let mut compiled = Vec::new();
                for pattern in x.as_object().map(Map::keys).into_iter().flatten() {
                    let regex = regex::Regex::new(pattern).map_err(|_| {
                        format!("{}: pattern `{pattern}` is not supported by the prover", show(at))
                    })?;
                    compiled.push(regex);
                }
                compiled
            }
            _ => return Err(format!("{}: `patternProperties` differ", show(at))),
        };
        let mut names: Vec<&String> = a_props.map(Map::keys).into_iter().flatten().collect();
        for name in b_props.map(Map::keys).into_iter().flatten() {
            if a_props.is_none_or(|p| !p.contains_key(name)) {
                names.push(name);
            }
        }
        let child = |s: &S<'a>, o: &Map<String, Value>, name: &str, matched: bool| -> S<'a> {
            let named = o
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| p.contains_key(name));
            let additional = o.contains_key("additionalProperties");
            match s {
                S::Real(v) if named => S::Real(&v["properties"][name]),
                S::Made(v) if named => S::Made(Rc::new(v["properties"][name].clone())),
                _ if matched || !additional => S::Made(Rc::new(Value::Bool(true))),
                S::Real(v) => S::Real(&v["additionalProperties"]),
                S::Made(v) => S::Made(Rc::new(v["additionalProperties"].clone())),
            }
        };
        self.structural += 1;
        let mut result = Ok(());
        for name in names {
            let matched = patterns.iter().any(|p| p.is_match(name));
            let source = child(a, ao, name, matched);
            if source.v() == &Value::Bool(false) {
                continue;
            }
            let path = push(at, name);
            result = self.sub(source, child(b, bo, name, matched), &path);
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() {
            let rest = |s: &S<'a>, o: &Map<String, Value>| match s {
                _ if !o.contains_key("additionalProperties") => S::Made(Rc::new(Value::Bool(true))),
                S::Real(v) => S::Real(&v["additionalProperties"]),
                S::Made(v) => S::Made(Rc::new(v["additionalProperties"].clone())),
            };
            result = self
                .sub(rest(a, ao), rest(b, bo), &format!("{at}/*"))
                .map_err(|reason| format!("{reason} (properties the source does not name)"));
        }
        self.structural -= 1;
        result
    }

    /// Whether no value is valid against both `a` and `b`, shown by types or by a required
    /// property whose allowed values differ.
    fn disjoint(&mut self, a: &Value, b: &Value) -> bool {
        let (Some(ao), Some(bo)) = (a.as_object(), b.as_object()) else { return false };
        if let Some(members) = finite_members(ao) {
            return members.iter().all(|m| self.accepts_target(b, m) == Some(false));
        }
        let ta = types(ao);
        let tb = types(bo);
        let overlap = ta.iter().any(|t| {
            tb.contains(t)
                || (*t == "integer" && tb.contains(&"number"))
                || (*t == "number" && tb.contains(&"integer"))
        });
        if !overlap {
            return true;
        }
        let required = strings_of(ao.get("required"));
        let (Some(ap), Some(bp)) = (
            ao.get("properties").and_then(Value::as_object),
            bo.get("properties").and_then(Value::as_object),
        ) else {
            return false;
        };
        ta.iter().all(|t| *t == "object")
            && required.iter().any(|name| {
                let (Some(x), Some(y)) = (ap.get(name), bp.get(name)) else { return false };
                match (
                    x.as_object().and_then(finite_members),
                    y.as_object().and_then(finite_members),
                ) {
                    (Some(xs), Some(ys)) => xs.iter().all(|v| !ys.contains(v)),
                    _ => false,
                }
            })
    }

    fn accepts_source(&mut self, node: &Value, value: &Value) -> Option<bool> {
        accepts(&mut self.validators[0], self.source, node, value)
    }

    fn accepts_target(&mut self, node: &Value, value: &Value) -> Option<bool> {
        accepts(&mut self.validators[1], self.target, node, value)
    }
}

/// Validates `value` against the subschema `node` of `root` (2020-12, formats asserted), with the
/// root's `$defs`/`definitions` attached so that their `$ref`s resolve. `None`: no validator.
fn accepts(
    cache: &mut HashMap<String, Option<jsonschema::Validator>>,
    root: &Value,
    node: &Value,
    value: &Value,
) -> Option<bool> {
    // Keyed by the text: made-up nodes are freed and their addresses reused.
    let key = node.to_string();
    let validator = cache.entry(key).or_insert_with(|| {
        let mut schema = node.clone();
        if let (Value::Object(object), Some(root)) = (&mut schema, root.as_object()) {
            for defs in ["$defs", "definitions"] {
                if let Some(d) = root.get(defs) {
                    object.entry(defs).or_insert_with(|| d.clone());
                }
            }
        }
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&schema)
            .ok()
    });
    validator.as_ref().map(|v| v.is_valid(value))
}

fn numbers(
    ao: &Map<String, Value>,
    bo: &Map<String, Value>,
    integer: bool,
    at: &str,
) -> Result<(), NotProved> {
    let num = |o: &Map<String, Value>, k: &str| o.get(k).and_then(Value::as_f64);
    // Lower bounds as (value, exclusive); for integer-only sources, rounded to inclusive integers.
    let bound = |o: &Map<String, Value>, lower: bool| -> Option<(f64, bool)> {
        let (inclusive, exclusive) =
            if lower { ("minimum", "exclusiveMinimum") } else { ("maximum", "exclusiveMaximum") };
        let i = num(o, inclusive).map(|v| (v, false));
        let e = num(o, exclusive).map(|v| (v, true));
        let tighter = |x: (f64, bool), y: (f64, bool)| {
            let x_wins = if lower {
                x.0 > y.0 || (x.0 == y.0 && x.1)
            } else {
                x.0 < y.0 || (x.0 == y.0 && x.1)
            };
            if x_wins { x } else { y }
        };
        let b = match (i, e) {
            (Some(x), Some(y)) => Some(tighter(x, y)),
            (x, y) => x.or(y),
        };
        b.map(|(v, excl)| {
            if !integer {
                return (v, excl);
            }
            let rounded = match (lower, excl) {
                (true, false) => v.ceil(),
                (true, true) => v.floor() + 1.0,
                (false, false) => v.floor(),
                (false, true) => v.ceil() - 1.0,
            };
            (rounded, false)
        })
    };
    for lower in [true, false] {
        let Some(b) = bound(bo, lower) else { continue };
        let Some(a) = bound(ao, lower) else {
            return Err(format!("{}: the target bounds numbers, the source does not", show(at)));
        };
        let ok = if lower {
            a.0 > b.0 || (a.0 == b.0 && (a.1 || !b.1))
        } else {
            a.0 < b.0 || (a.0 == b.0 && (a.1 || !b.1))
        };
        if !ok {
            return Err(format!(
                "{}: the target's {} bound is tighter than the source's",
                show(at),
                if lower { "lower" } else { "upper" }
            ));
        }
    }
    if let Some(m) = num(bo, "multipleOf") {
        let divides = |x: f64| {
            let q = x / m;
            q.is_finite() && q.fract() == 0.0 && q * m == x
        };
        let ok = num(ao, "multipleOf").is_some_and(divides) || (integer && divides(1.0));
        if !ok {
            return Err(format!(
                "{}: `multipleOf: {m}` in the target is not implied by the source",
                show(at)
            ));
        }
    }
    Ok(())
}

fn strings(ao: &Map<String, Value>, bo: &Map<String, Value>, at: &str) -> Result<(), NotProved> {
    if let Some(b_min) = uint(bo, "minLength")
        && uint(ao, "minLength").unwrap_or(0) < b_min
    {
        return Err(format!(
            "{}: the target needs strings of at least {b_min} characters",
            show(at)
        ));
    }
    if let Some(b_max) = uint(bo, "maxLength")
        && uint(ao, "maxLength").is_none_or(|m| m > b_max)
    {
        return Err(format!(
            "{}: the target allows strings of at most {b_max} characters",
            show(at)
        ));
    }
    for keyword in ["pattern", "format"] {
        if let Some(value) = bo.get(keyword)
            && ao.get(keyword) != Some(value)
        {
            return Err(format!(
                "{}: the target's `{keyword}` {value} differs from the source's",
                show(at)
            ));
        }
    }
    Ok(())
}

/// The values a schema allows when it lists them: `const`, or `enum`, or the boolean/null types.
fn finite_members(o: &Map<String, Value>) -> Option<Vec<Value>> {
    if let Some(c) = o.get("const") {
        return Some(vec![c.clone()]);
    }
    if let Some(Value::Array(members)) = o.get("enum") {
        return Some(members.clone());
    }
    let t = types(o);
    if t.len() <= 2 && t.iter().all(|t| matches!(*t, "null" | "boolean")) {
        let mut members = Vec::new();
        if t.contains(&"null") {
            members.push(Value::Null);
        }
        if t.contains(&"boolean") {
            members.extend([Value::Bool(false), Value::Bool(true)]);
        }
        return Some(members);
    }
    None
}

/// The types a schema allows (all seven names when it has no `type`); `integer` is listed on its
/// own only when `number` is not allowed.
fn types(o: &Map<String, Value>) -> Vec<&'static str> {
    const ALL: [&str; 6] = ["null", "boolean", "object", "array", "number", "string"];
    let named: Vec<&str> = match o.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return ALL.to_vec(),
    };
    let mut out: Vec<&'static str> = ALL.iter().copied().filter(|t| named.contains(t)).collect();
    if named.contains(&"integer") && !out.contains(&"number") {
        out.push("integer");
    }
    out
}

fn uint(o: &Map<String, Value>, key: &str) -> Option<u64> {
    o.get(key).and_then(|v| {
        v.as_u64().or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f.ceil() as u64))
    })
}

fn strings_of(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn without(o: &Map<String, Value>, keys: &[&str]) -> Map<String, Value> {
    o.iter()
        .filter(|(k, _)| !keys.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn has_assertions(o: &Map<String, Value>) -> bool {
    o.keys().any(|k| is_assertion(k))
}

/// Whether a schema validates every value: `true`, or an object with no assertion keyword.
#[must_use]
pub fn accepts_everything(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(o) => !has_assertions(o),
        _ => false,
    }
}

/// Whether a schema contains a `$ref` anywhere.
#[must_use]
pub fn has_ref(schema: &Value) -> bool {
    match schema {
        Value::Object(o) => o.iter().any(|(k, v)| k == "$ref" || k == "$dynamicRef" || has_ref(v)),
        Value::Array(items) => items.iter().any(has_ref),
        _ => false,
    }
}

/// Whether a schema has a `$ref` that does not point into `$defs` or `definitions` (including
/// `#` itself), or a dynamic reference.
#[must_use]
pub fn refs_outside_defs(schema: &Value) -> bool {
    match schema {
        Value::Object(o) => o.iter().any(|(k, v)| {
            let outside = match (k.as_str(), v) {
                ("$ref", Value::String(r)) => {
                    !(r.starts_with("#/$defs/") || r.starts_with("#/definitions/"))
                }
                ("$dynamicRef" | "$recursiveRef", _) => true,
                _ => false,
            };
            outside || refs_outside_defs(v)
        }),
        Value::Array(items) => items.iter().any(refs_outside_defs),
        _ => false,
    }
}

/// Every `$ref` string in a schema.
#[must_use]
pub fn refs(schema: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(o) => {
                if let Some(Value::String(r)) = o.get("$ref") {
                    out.push(r.as_str());
                }
                stack.extend(o.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    out
}

/// Merges the conjuncts of an `allOf` into one schema that is a superset of their intersection
/// (sound for a source), or `None` when a conjunct is not a plain object.
fn merge(parts: &[S<'_>]) -> Option<Value> {
    let mut out = Map::new();
    let mut array_owner = false;
    for part in parts {
        let o = part.v().as_object()?;
        if o.contains_key("$ref") || o.contains_key("allOf") {
            return None;
        }
        let has_array_keys = o.contains_key("items") || o.contains_key("prefixItems");
        for (key, value) in o {
            let key = key.as_str();
            match (key, out.get(key)) {
                ("items" | "prefixItems", _) if array_owner => {}
                (_, None) => {
                    out.insert(key.to_owned(), value.clone());
                }
                ("required", Some(Value::Array(existing))) => {
                    let mut union = existing.clone();
                    for name in value.as_array().into_iter().flatten() {
                        if !union.contains(name) {
                            union.push(name.clone());
                        }
                    }
                    out.insert(key.to_owned(), Value::Array(union));
                }
                ("properties", Some(Value::Object(existing))) => {
                    let mut merged = existing.clone();
                    for (name, schema) in value.as_object().into_iter().flatten() {
                        let combined = match merged.get(name) {
                            Some(previous) if previous != schema => {
                                serde_json::json!({"allOf": [previous, schema]})
                            }
                            _ => schema.clone(),
                        };
                        merged.insert(name.clone(), combined);
                    }
                    out.insert(key.to_owned(), Value::Object(merged));
                }
                ("additionalProperties", Some(previous)) if previous != value => {
                    let combined = serde_json::json!({"allOf": [previous, value]});
                    out.insert(key.to_owned(), combined);
                }
                ("type", Some(previous)) => {
                    let keep = |t: &Value| -> Vec<Value> {
                        match t {
                            Value::Array(ts) => ts.clone(),
                            other => vec![other.clone()],
                        }
                    };
                    let (x, y) = (keep(previous), keep(value));
                    let mut both: Vec<Value> = Vec::new();
                    for t in &x {
                        let integer = Value::String("integer".into());
                        let number = Value::String("number".into());
                        if y.contains(t) {
                            both.push(t.clone());
                        } else if (t == &number && y.contains(&integer))
                            || (t == &integer && y.contains(&number))
                        {
                            both.push(integer);
                        }
                    }
                    out.insert(key.to_owned(), Value::Array(both));
                }
                (
                    "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "minProperties",
                    Some(previous),
                ) if value.as_f64() > previous.as_f64() => {
                    out.insert(key.to_owned(), value.clone());
                }
                (
                    "maximum" | "exclusiveMaximum" | "maxLength" | "maxItems" | "maxProperties",
                    Some(previous),
                ) if value.as_f64() < previous.as_f64() => {
                    out.insert(key.to_owned(), value.clone());
                }
                // A conflicting constraint is dropped: the result stays a superset.
                _ => {}
            }
        }
        array_owner |= has_array_keys;
    }
    Some(Value::Object(out))
}

fn show(at: &str) -> String {
    if at.is_empty() { "at the root".to_owned() } else { format!("at `{at}`") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn proved(a: &Value, b: &Value) -> bool {
        let r = Prover::new(a, b).without_equality_shortcut().includes();
        r.is_ok()
    }

    #[test]
    fn types_and_integer_in_number() {
        assert!(proved(&json!({"type": "integer"}), &json!({"type": "number"})));
        assert!(!proved(&json!({"type": "number"}), &json!({"type": "integer"})));
        assert!(proved(&json!({"type": "string"}), &json!({"type": ["string", "null"]})));
        assert!(!proved(&json!({"type": ["string", "null"]}), &json!({"type": "string"})));
        assert!(!proved(&json!({}), &json!({"type": "string"})));
    }

    #[test]
    fn bounds_exclusive_and_integer_rounding() {
        assert!(proved(&json!({"type": "integer", "exclusiveMinimum": 0}), &json!({"minimum": 1})));
        assert!(!proved(&json!({"type": "number", "exclusiveMinimum": 0}), &json!({"minimum": 1})));
        assert!(proved(&json!({"minimum": 2}), &json!({"exclusiveMinimum": 1})));
        assert!(!proved(&json!({"minimum": 1}), &json!({"exclusiveMinimum": 1})));
        assert!(!proved(
            &json!({"type": "integer", "maximum": 10}),
            &json!({"type": "integer", "maximum": 5})
        ));
    }

    #[test]
    fn multiple_of_divisibility() {
        assert!(proved(&json!({"type": "number", "multipleOf": 4}), &json!({"multipleOf": 2})));
        assert!(!proved(&json!({"type": "number", "multipleOf": 2}), &json!({"multipleOf": 4})));
        assert!(proved(&json!({"type": "integer"}), &json!({"multipleOf": 1})));
        assert!(proved(&json!({"type": "integer"}), &json!({"multipleOf": 0.5})));
    }

    #[test]
    fn objects_required_and_additional() {
        let a =
            json!({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]});
        let b = json!({"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "integer"}}});
        // Open content: the source allows `y` of any type, the target only integers.
        assert!(!proved(&a, &b));
        assert!(!proved(&b, &a));
        let a_closed = json!({"type": "object", "properties": {"x": {"type": "string"}},
                              "required": ["x"], "additionalProperties": false});
        assert!(proved(&a_closed, &b));
        let closed = json!({"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": false});
        assert!(!proved(&a, &closed));
        assert!(proved(&closed, &json!({"type": "object"})));
    }

    #[test]
    fn enums_and_anyof_reordering() {
        assert!(proved(&json!({"enum": ["a", "b"]}), &json!({"enum": ["b", "a", "c"]})));
        assert!(!proved(&json!({"enum": ["a", "b"]}), &json!({"enum": ["a"]})));
        let x = json!({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]});
        let y = json!({"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]});
        assert!(proved(&x, &y));
        let one_x = json!({"oneOf": [{"type": "string"}, {"type": "integer"}]});
        let one_y = json!({"oneOf": [{"type": "integer"}, {"type": "string"}]});
        assert!(proved(&one_x, &one_y));
    }

    #[test]
    fn recursive_refs_by_coinduction() {
        let tree = json!({"$defs": {"node": {"type": "object", "properties": {
            "value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
            "$ref": "#/$defs/node"});
        let wider = json!({"$defs": {"node": {"type": "object", "properties": {
            "value": {"type": "number"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
            "$ref": "#/$defs/node"});
        assert!(proved(&tree, &wider));
        assert!(!proved(&wider, &tree));
        let empty_cycle = json!({"$ref": "#"});
        assert!(!proved(&empty_cycle, &json!({"type": "string"})));
    }

    #[test]
    fn equal_refs_into_different_places_are_not_taken_as_equal() {
        let a = json!({"properties": {"a": {"type": "string"}, "b": {"$ref": "#/properties/a"}}});
        let b = json!({"properties": {"a": {"type": "integer"}, "b": {"$ref": "#/properties/a"}}});
        assert!(Prover::new(&a, &b).includes().is_err());
        let d1 =
            json!({"$defs": {"x": {"type": "string"}}, "properties": {"b": {"$ref": "#/$defs/x"}}});
        let d2 = json!({"$defs": {"x": {"type": "integer"}}, "properties": {"b": {"$ref": "#/$defs/x"}}});
        assert!(Prover::new(&d1, &d2).includes().is_err());
        assert!(Prover::new(&d1, &d1.clone()).includes().is_ok());
    }

    #[test]
    fn unknown_target_keywords_need_the_same_in_the_source() {
        let a = json!({"type": "string", "not": {"const": "x"}});
        assert!(proved(&a, &a.clone()));
        assert!(!proved(&json!({"type": "string"}), &a));
        assert!(proved(&a, &json!({"type": "string"})));
    }

    #[test]
    fn allof_merging() {
        let a = json!({"allOf": [{"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
                                 {"properties": {"y": {"type": "integer"}}, "required": ["y"]}]});
        let b = json!({"type": "object", "required": ["x", "y"]});
        assert!(proved(&a, &b));
    }
}
