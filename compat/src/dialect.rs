//! Rewrites a schema of any supported draft into the 2020-12 form the prover reads.
//!
//! The rewrite keeps the meaning: draft-04 boolean `exclusiveMinimum`/`exclusiveMaximum` become
//! numbers, the array form of `items` becomes `prefixItems` (and `additionalItems` becomes
//! `items`), `dependencies` splits into `dependentRequired` and `dependentSchemas`, and before
//! 2019-09 the siblings of a `$ref` are dropped (they were ignored). Data keywords (`enum`,
//! `const`, `default`, `examples`) are copied untouched.

use mcp_fuzz_generators::Dialect;
use mcp_fuzz_generators::keywords::{SCHEMA_ARRAYS, SCHEMA_MAPS, SCHEMA_VALUES};
use serde_json::{Map, Value};

/// The 2020-12 form of `schema`, read in `dialect`.
#[must_use]
pub fn to_2020_12(schema: &Value, dialect: Dialect) -> Value {
    let mut out = rewrite(schema, dialect);
    if let Value::Object(object) = &mut out {
        object.remove("$schema");
    }
    out
}

/// Whether a `$ref` pointer may point into a part the rewrite moved (only possible before
/// 2020-12), in which case the prover must not follow it.
#[must_use]
pub fn ref_may_have_moved(pointer: &str, dialect: Dialect) -> bool {
    dialect != Dialect::Draft202012
        && pointer.split('/').any(|segment| {
            matches!(
                segment,
                "items"
                    | "additionalItems"
                    | "dependencies"
                    | "exclusiveMinimum"
                    | "exclusiveMaximum"
            )
        })
}

fn rewrite(schema: &Value, d: Dialect) -> Value {
    let Value::Object(object) = schema else { return schema.clone() };
    let modern = matches!(d, Dialect::Draft201909 | Dialect::Draft202012);
    let mut out = Map::new();
    if !modern && object.contains_key("$ref") {
        for (key, value) in object {
            match key.as_str() {
                "$ref" => {
                    out.insert(key.clone(), value.clone());
                }
                "$defs" | "definitions" => {
                    out.insert(key.clone(), rewrite_map(value, d));
                }
                _ => {}
            }
        }
        return Value::Object(out);
    }
    let items_is_array = object.get("items").is_some_and(Value::is_array);
    for (key, value) in object {
        let key = key.as_str();
        match key {
            "enum" | "const" | "default" | "examples" | "required" => {
                out.insert(key.to_owned(), value.clone());
            }
            "items" if items_is_array && d != Dialect::Draft202012 => {
                let items = value.as_array().expect("checked above");
                out.insert(
                    "prefixItems".into(),
                    Value::Array(items.iter().map(|s| rewrite(s, d)).collect()),
                );
            }
            "additionalItems" if d != Dialect::Draft202012 => {
                if items_is_array {
                    out.insert("items".into(), rewrite(value, d));
                }
            }
            "dependencies" if d != Dialect::Draft202012 => {
                let Value::Object(deps) = value else { continue };
                let mut required = Map::new();
                let mut schemas = Map::new();
                for (name, dependency) in deps {
                    if dependency.is_array() {
                        required.insert(name.clone(), dependency.clone());
                    } else {
                        schemas.insert(name.clone(), rewrite(dependency, d));
                    }
                }
                if !required.is_empty() {
                    out.insert("dependentRequired".into(), Value::Object(required));
                }
                if !schemas.is_empty() {
                    out.insert("dependentSchemas".into(), Value::Object(schemas));
                }
            }
            "exclusiveMinimum" | "exclusiveMaximum" if d == Dialect::Draft4 => {
                let bound = if key == "exclusiveMinimum" { "minimum" } else { "maximum" };
                if value == &Value::Bool(true)
                    && let Some(limit) = object.get(bound)
                {
                    out.insert(key.to_owned(), limit.clone());
                }
            }
            "minimum" | "maximum" if d == Dialect::Draft4 => {
                let exclusive =
                    if key == "minimum" { "exclusiveMinimum" } else { "exclusiveMaximum" };
                if object.get(exclusive) != Some(&Value::Bool(true)) {
                    out.insert(key.to_owned(), value.clone());
                }
            }
            _ if SCHEMA_MAPS.contains(&key) => {
                out.insert(key.to_owned(), rewrite_map(value, d));
            }
            _ if SCHEMA_ARRAYS.contains(&key) => {
                let rewritten = match value {
                    Value::Array(items) => {
                        Value::Array(items.iter().map(|s| rewrite(s, d)).collect())
                    }
                    other => other.clone(),
                };
                out.insert(key.to_owned(), rewritten);
            }
            _ if key == "items" || SCHEMA_VALUES.contains(&key) => {
                out.insert(key.to_owned(), rewrite(value, d));
            }
            _ => {
                out.insert(key.to_owned(), value.clone());
            }
        }
    }
    Value::Object(out)
}

fn rewrite_map(value: &Value, d: Dialect) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), rewrite(v, d))).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn draft4_exclusive_booleans_become_numbers() {
        let s = json!({"minimum": 3, "exclusiveMinimum": true, "maximum": 9});
        assert_eq!(to_2020_12(&s, Dialect::Draft4), json!({"exclusiveMinimum": 3, "maximum": 9}));
    }

    #[test]
    fn draft7_items_array_and_ref_siblings() {
        let s = json!({"items": [{"type": "string"}], "additionalItems": false,
                       "properties": {"a": {"$ref": "#/definitions/x", "type": "string"}}});
        assert_eq!(
            to_2020_12(&s, Dialect::Draft7),
            json!({"prefixItems": [{"type": "string"}], "items": false,
                   "properties": {"a": {"$ref": "#/definitions/x"}}})
        );
        let s = json!({"dependencies": {"a": ["b"], "c": {"required": ["d"]}}});
        assert_eq!(
            to_2020_12(&s, Dialect::Draft7),
            json!({"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": {"required": ["d"]}}})
        );
    }

    #[test]
    fn data_keywords_are_untouched() {
        let s =
            json!({"enum": [{"items": [1]}], "default": {"minimum": 1, "exclusiveMinimum": true}});
        assert_eq!(to_2020_12(&s, Dialect::Draft4), s);
    }
}
