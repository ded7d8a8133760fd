//! Small schema helpers shared by the adapters, the diff and the canaries.

use serde_json::{Map, Value};
use std::collections::BTreeSet;

pub use mcp_fuzz_generators::keywords::{
    ANNOTATIONS, SCHEMA_ARRAYS as ARRAY_KEYWORDS, SCHEMA_MAPS as MAP_KEYWORDS,
    SCHEMA_VALUES as SCHEMA_KEYWORDS,
};
pub use mcp_fuzz_generators::pointer::push;
pub use mcp_fuzz_generators::refs::resolve_local as resolve;

/// The declared `type`s of a schema, or `None` when it declares none.
#[must_use]
pub fn types_of(schema: &Value) -> Option<BTreeSet<String>> {
    match schema.get("type")? {
        Value::String(t) => Some(BTreeSet::from([t.clone()])),
        Value::Array(ts) => Some(ts.iter().filter_map(Value::as_str).map(str::to_owned).collect()),
        _ => None,
    }
}

/// Whether a schema describes objects (declares `type: object` or has `properties`).
#[must_use]
pub fn is_object_schema(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => schema.contains_key("properties"),
    }
}

/// Whether `null` passes the schema's `type` (no `type` counts as yes).
#[must_use]
pub fn allows_null(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(o) => {
            if o.contains_key("$ref") {
                // Unknown without resolving: assume not, so callers widen explicitly.
                return false;
            }
            if let Some(types) = types_of(schema) {
                return types.contains("null");
            }
            if let Some(Value::Array(branches)) = o.get("anyOf").or_else(|| o.get("oneOf")) {
                return branches.iter().any(allows_null);
            }
            if let Some(Value::Array(values)) = o.get("enum") {
                return values.iter().any(Value::is_null);
            }
            if let Some(c) = o.get("const") {
                return c.is_null();
            }
            true
        }
        _ => false,
    }
}

/// Every direct subschema of `schema` with its pointer suffix (`/properties/a`, `/anyOf/0`).
#[must_use]
pub fn children(schema: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    let Some(object) = schema.as_object() else { return out };
    for (key, value) in object {
        let ptr = push("", key);
        if MAP_KEYWORDS.contains(&key.as_str()) {
            if let Some(map) = value.as_object() {
                out.extend(map.iter().map(|(name, s)| (push(&ptr, name), s)));
            }
        } else if ARRAY_KEYWORDS.contains(&key.as_str()) {
            if let Some(items) = value.as_array() {
                out.extend(items.iter().enumerate().map(|(i, s)| (format!("{ptr}/{i}"), s)));
            }
        } else if key == "items" {
            match value {
                Value::Array(items) => {
                    out.extend(items.iter().enumerate().map(|(i, s)| (format!("{ptr}/{i}"), s)));
                }
                other => out.push((ptr, other)),
            }
        } else if SCHEMA_KEYWORDS.contains(&key.as_str()) {
            out.push((ptr, value));
        }
    }
    out
}

/// Why the schema recurses through `$ref`: the pointer of the first `$ref` that re-enters a
/// definition already being expanded, or `None`.
///
/// The walk is bounded: at most [`MAX_REF_STEPS`] nodes are visited.
#[must_use]
pub fn ref_cycle(root: &Value) -> Option<String> {
    let mut steps = 0;
    let mut stack = Vec::new();
    cycle_from(root, root, "", &mut stack, &mut steps)
}

/// Why: the walk expands `$ref`s, so a schema with many shared definitions could be exponential;
/// past this many nodes the walk gives up (reporting no cycle).
pub const MAX_REF_STEPS: usize = 20_000;

fn cycle_from<'a>(
    root: &'a Value,
    node: &'a Value,
    ptr: &str,
    stack: &mut Vec<&'a str>,
    steps: &mut usize,
) -> Option<String> {
    *steps += 1;
    if *steps > MAX_REF_STEPS {
        return None;
    }
    if let Some(reference) = node.get("$ref").and_then(Value::as_str) {
        if stack.contains(&reference) {
            return Some(push(ptr, "$ref"));
        }
        if let Some(target) = resolve(root, reference) {
            stack.push(reference);
            let found = cycle_from(root, target, &push(ptr, "$ref"), stack, steps);
            stack.pop();
            if found.is_some() {
                return found;
            }
        }
    }
    for (suffix, child) in children(node) {
        if suffix.starts_with("/$defs") || suffix.starts_with("/definitions") {
            continue;
        }
        if let Some(found) = cycle_from(root, child, &format!("{ptr}{suffix}"), stack, steps) {
            return Some(found);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_escape_tokens() {
        assert_eq!(push("/properties", "a/b~c"), "/properties/a~1b~0c");
    }

    #[test]
    fn resolves_local_refs_only() {
        let root = json!({"$defs": {"a b": {"type": "string"}}});
        assert_eq!(resolve(&root, "#/$defs/a%20b"), Some(&json!({"type": "string"})));
        assert_eq!(resolve(&root, "https://example.com/s.json"), None);
        assert_eq!(resolve(&root, "#"), Some(&root));
    }

    #[test]
    fn finds_ref_cycles_and_not_shared_definitions() {
        let recursive = json!({
            "type": "object",
            "properties": {"node": {"$ref": "#/$defs/node"}},
            "$defs": {"node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}}}}
        });
        assert_eq!(
            ref_cycle(&recursive).as_deref(),
            Some("/properties/node/$ref/properties/child/$ref")
        );
        let shared = json!({
            "properties": {"a": {"$ref": "#/$defs/s"}, "b": {"$ref": "#/$defs/s"}},
            "$defs": {"s": {"type": "string"}}
        });
        assert_eq!(ref_cycle(&shared), None);
    }

    #[test]
    fn null_acceptance() {
        assert!(allows_null(&json!({"type": ["string", "null"]})));
        assert!(!allows_null(&json!({"type": "string"})));
        assert!(allows_null(&json!({"anyOf": [{"type": "string"}, {"type": "null"}]})));
        assert!(!allows_null(&json!({"enum": ["a"]})));
        assert!(allows_null(&json!({})));
    }
}
