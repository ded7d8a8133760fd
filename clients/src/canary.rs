//! Canaries: concrete values on which the rendered and the advertised schema disagree.
//!
//! - [`Direction::RenderedAllowsServerRejects`]: a value a model constrained by the client may
//!   send and the server will refuse (a `minLength` dropped gives `""`).
//! - [`Direction::ServerAllowsRenderedRejects`]: a value the server accepts that the client can
//!   no longer express (a dropped optional property, a lost union branch).
//!
//! Candidates come from the generator ([`mcp_fuzz_generators::Generator`]): boundary values and
//! seeded samples of one schema, and the labelled mutations of the other. Each candidate is
//! checked with the `jsonschema` crate (formats asserted) against both schemas, and the first
//! witness is shrunk greedily while it keeps disagreeing.

use mcp_fuzz_generators::Generator;
use serde::Serialize;
use serde_json::{Map, Value};

/// Why: random samples beyond the deterministic candidates; enough to reach optional branches,
/// small enough to keep a 1000-tool corpus run in seconds.
const SAMPLES: usize = 8;

/// Why: greedy shrinking re-validates every simplification; this bounds the work per witness.
const SHRINK_STEPS: usize = 200;

/// Which way the schemas disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// The rendered schema allows it; the server's schema rejects it.
    RenderedAllowsServerRejects,
    /// The server's schema allows it; the rendered schema rejects it.
    ServerAllowsRenderedRejects,
}

/// One witness value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Canary {
    /// Which way the schemas disagree on it.
    pub direction: Direction,
    /// The arguments.
    pub value: Value,
    /// Why the rejecting schema rejects it (`/q: "" is shorter than 1 character`).
    pub detail: String,
}

/// The canaries of one comparison and anything that limited the search.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Canaries {
    /// At most one per direction.
    pub canaries: Vec<Canary>,
    /// Why a direction has no canary when the search could not run.
    pub notes: Vec<String>,
}

/// A `jsonschema` validator with formats asserted and nothing fetched; the dialect comes from
/// `$schema` (2020-12 when it is missing or unknown).
///
/// # Errors
/// The validator's message when the schema does not compile.
pub fn validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    let build = |draft: Option<jsonschema::Draft>| {
        let mut options = jsonschema::options().should_validate_formats(true);
        if let Some(draft) = draft {
            options = options.with_draft(draft);
        }
        options.build(schema)
    };
    build(None).or_else(|_| build(Some(jsonschema::Draft::Draft202012))).map_err(|e| e.to_string())
}

/// Searches both directions for witnesses where `advertised` and `rendered` disagree.
#[must_use]
pub fn find(advertised: &Value, rendered: &Value, seed: u64) -> Canaries {
    find_in(
        advertised,
        rendered,
        seed,
        &[Direction::RenderedAllowsServerRejects, Direction::ServerAllowsRenderedRejects],
    )
}

/// Searches only the given directions (see [`crate::diff::Comparison::canary_directions`]).
#[must_use]
pub fn find_in(advertised: &Value, rendered: &Value, seed: u64, wanted: &[Direction]) -> Canaries {
    let mut out = Canaries::default();
    let (server, client) = match (validator(advertised), validator(rendered)) {
        (Ok(s), Ok(c)) => (s, c),
        (Err(e), _) => {
            out.notes.push(format!("the advertised schema does not compile: {e}"));
            return out;
        }
        (_, Err(e)) => {
            out.notes.push(format!("the rendered schema does not compile: {e}"));
            return out;
        }
    };
    let directions = [
        (Direction::RenderedAllowsServerRejects, rendered, advertised, &client, &server),
        (Direction::ServerAllowsRenderedRejects, advertised, rendered, &server, &client),
    ];
    for (direction, allowing, rejecting, accepts, refuses) in directions {
        if !wanted.contains(&direction) {
            continue;
        }
        let disagrees = |v: &Value| accepts.is_valid(v) && !refuses.is_valid(v);
        match search(allowing, rejecting, seed, &disagrees) {
            Ok(Some(found)) => {
                let value = shrink(found, &disagrees);
                let detail = refuses
                    .iter_errors(&value)
                    .next()
                    .map(|e| format!("{}: {e}", display_path(&e.instance_path().to_string())))
                    .unwrap_or_default();
                out.canaries.push(Canary { direction, value, detail });
            }
            Ok(None) => {}
            Err(note) => out.notes.push(note),
        }
    }
    out
}

fn display_path(path: &str) -> &str {
    if path.is_empty() { "(root)" } else { path }
}

/// The first disagreeing value among, in order (cheapest first, stopping at the first hit): the
/// boundary values of `allowing`, the mutations of `rejecting`, seeded samples of `allowing`.
fn search(
    allowing: &Value,
    rejecting: &Value,
    seed: u64,
    disagrees: &dyn Fn(&Value) -> bool,
) -> Result<Option<Value>, String> {
    let generator = Generator::compile(allowing).map_err(|e| format!("generator: {e}"))?;
    if let Ok(boundary) = generator.boundary()
        && let Some(found) = boundary.into_iter().find(|v| disagrees(v))
    {
        return Ok(Some(found));
    }
    if let Ok(other) = Generator::compile(rejecting)
        && let Ok(mutations) = other.mutations()
        && let Some(found) = mutations.into_iter().map(|m| m.value).find(|v| disagrees(v))
    {
        return Ok(Some(found));
    }
    let mut sampler = generator.sampler(seed);
    for _ in 0..SAMPLES {
        match sampler.valid() {
            Ok(v) if disagrees(&v) => return Ok(Some(v)),
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(None)
}

/// Greedy shrinking: take the first one-step simplification that still disagrees, repeat.
fn shrink(mut value: Value, keeps: &dyn Fn(&Value) -> bool) -> Value {
    for _ in 0..SHRINK_STEPS {
        match simpler(&value).into_iter().find(|c| keeps(c)) {
            Some(next) => value = next,
            None => break,
        }
    }
    value
}

/// One-step simplifications of `value`, simplest first.
fn simpler(value: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    match value {
        Value::Object(map) => {
            for key in map.keys() {
                let mut smaller = map.clone();
                smaller.remove(key);
                out.push(Value::Object(smaller));
            }
            for (key, child) in map {
                for c in simpler(child) {
                    let mut changed: Map<String, Value> = map.clone();
                    changed.insert(key.clone(), c);
                    out.push(Value::Object(changed));
                }
            }
        }
        Value::Array(items) => {
            for i in 0..items.len() {
                let mut smaller = items.clone();
                smaller.remove(i);
                out.push(Value::Array(smaller));
            }
            for (i, child) in items.iter().enumerate() {
                for c in simpler(child) {
                    let mut changed = items.clone();
                    changed[i] = c;
                    out.push(Value::Array(changed));
                }
            }
        }
        Value::String(s) if !s.is_empty() => {
            out.push(Value::String(String::new()));
            // Shorter prefixes, coarse to fine, so a length bound is reached in few steps.
            let len = s.chars().count();
            for keep in [len / 2, len * 7 / 8, len - 1] {
                if keep > 0 && keep < len {
                    out.push(Value::String(s.chars().take(keep).collect()));
                }
            }
        }
        Value::Number(n) => {
            if n.as_f64() != Some(0.0) {
                out.push(Value::from(0));
            }
            if let Some(f) = n.as_f64()
                && f.fract() != 0.0
            {
                #[expect(
                    clippy::cast_possible_truncation,
                    reason = "a shrink candidate; out-of-range saturates"
                )]
                out.push(Value::from(f.trunc() as i64));
            }
        }
        Value::Bool(true) => out.push(Value::Bool(false)),
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dropped_min_length_gives_the_empty_string() {
        let server = json!({"type": "object", "properties": {"q": {"type": "string", "minLength": 1}}, "required": ["q"]});
        let client =
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
        let found = find(&server, &client, 0);
        let c = found
            .canaries
            .iter()
            .find(|c| c.direction == Direction::RenderedAllowsServerRejects)
            .expect("a canary");
        assert_eq!(c.value, json!({"q": ""}));
        assert!(c.detail.starts_with("/q"), "{}", c.detail);
    }

    #[test]
    fn identical_schemas_have_no_canary() {
        let s = json!({"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}});
        assert!(find(&s, &s, 0).canaries.is_empty());
    }

    #[test]
    fn shrinking_keeps_the_predicate() {
        let keeps = |v: &Value| v.get("a").is_some();
        assert_eq!(shrink(json!({"a": "xyz", "b": [1, 2]}), &keeps), json!({"a": ""}));
    }
}
