//! `openapi`: the OpenAPI rendering of an MCP-to-OpenAPI proxy in the style of mcpo, which
//! rebuilds each tool as a pydantic model from the root `properties` and `required`.
//!
//! See: <https://github.com/open-webui/mcpo/blob/main/src/mcpo/utils/main.py>
//! (`_process_schema_property`, `get_model_fields`).

use super::{Ctx, excerpt};
use crate::Tool;
use crate::walk;
use serde_json::{Map, Value, json};

/// Keywords the model keeps (or reads while building it).
const READ: &[&str] = &[
    "type",
    "properties",
    "required",
    "items",
    "anyOf",
    "$ref",
    "description",
    "default",
    "title",
    "$defs",
    "definitions",
    "$schema",
    "$id",
    "$comment",
    "examples",
];

struct Builder<'r> {
    root: &'r Value,
    /// The pointer of `root` in the tool (`/inputSchema`).
    base: &'r str,
    stack: Vec<String>,
}

impl Builder<'_> {
    /// One property schema as its pydantic field renders it.
    fn field(&mut self, ctx: &mut Ctx<'_>, schema: &Value, ptr: &str, depth: usize) -> Value {
        if depth > super::MAX_DEPTH {
            return json!({});
        }
        let Some(object) = schema.as_object() else {
            ctx.emit(
                "openapi/boolean-schema",
                ptr,
                format!("the boolean schema `{schema}` cannot be searched for `$ref`"),
            );
            return json!({});
        };
        if let Some(reference) = object.get("$ref") {
            let reference = reference.as_str().unwrap_or_default();
            let name = reference.rsplit('/').next().unwrap_or_default();
            let Some(target) = self.root.get("$defs").and_then(|d| d.get(name)) else {
                ctx.emit(
                    "openapi/unresolved-ref",
                    &walk::push(ptr, "$ref"),
                    format!("`{reference}`: `{name}` is not a key of the root `$defs`"),
                );
                return json!({});
            };
            if self.stack.iter().any(|s| s == name) {
                ctx.emit(
                    "openapi/recursive-ref",
                    &walk::push(ptr, "$ref"),
                    format!("`{reference}` re-enters `{name}`"),
                );
                return json!({});
            }
            self.stack.push(name.to_owned());
            let at = walk::push(&format!("{}/$defs", self.base), name);
            let rendered = self.field(ctx, target, &at, depth + 1);
            self.stack.pop();
            return rendered;
        }
        for (key, value) in object {
            if !(READ.contains(&key.as_str()) || key == "oneOf" || key == "allOf") {
                ctx.emit(
                    "openapi/constraint-dropped",
                    &walk::push(ptr, key),
                    format!("`{key}` ({}) is not carried into the model", excerpt(value)),
                );
            }
        }
        let mut out = Map::new();
        if let Some(Value::String(d)) = object.get("description") {
            out.insert("description".into(), Value::String(d.clone()));
        }
        if let Some(Value::Array(branches)) = object.get("anyOf") {
            let anyof = branches
                .iter()
                .enumerate()
                .map(|(i, b)| self.field(ctx, b, &format!("{ptr}/anyOf/{i}"), depth + 1))
                .collect();
            out.insert("anyOf".into(), Value::Array(anyof));
            return Value::Object(out);
        }
        match object.get("type") {
            Some(Value::Array(types)) => {
                let branches = types
                    .iter()
                    .map(|t| {
                        let mut single = object.clone();
                        single.insert("type".into(), t.clone());
                        single.remove("description");
                        self.typed(ctx, &single, t.as_str().unwrap_or_default(), ptr, depth)
                    })
                    .collect();
                out.insert("anyOf".into(), Value::Array(branches));
                Value::Object(out)
            }
            Some(Value::String(t)) => {
                let mut typed = self.typed(ctx, object, t, ptr, depth);
                if let (Some(map), Some(d)) = (typed.as_object_mut(), out.remove("description")) {
                    map.insert("description".into(), d);
                }
                typed
            }
            _ => {
                let why = ["oneOf", "allOf", "const", "enum"]
                    .into_iter()
                    .find(|k| object.contains_key(*k))
                    .map_or("no `type`".to_owned(), |k| format!("`{k}` without `type`"));
                ctx.emit("openapi/untyped", ptr, format!("{why}: the field becomes `Any`"));
                Value::Object(out)
            }
        }
    }

    fn typed(
        &mut self,
        ctx: &mut Ctx<'_>,
        object: &Map<String, Value>,
        ty: &str,
        ptr: &str,
        depth: usize,
    ) -> Value {
        match ty {
            "object" => match object.get("properties").and_then(Value::as_object) {
                Some(properties) if !properties.is_empty() => {
                    self.model(ctx, properties, object.get("required"), ptr, depth)
                }
                _ => json!({"type": "object"}),
            },
            "array" => match object.get("items") {
                Some(items) if items.as_object().is_some_and(|o| !o.is_empty()) => {
                    json!({"type": "array", "items": self.field(ctx, items, &walk::push(ptr, "items"), depth + 1)})
                }
                _ => json!({"type": "array"}),
            },
            "string" | "integer" | "boolean" | "number" | "null" => json!({"type": ty}),
            other => {
                ctx.emit(
                    "openapi/untyped",
                    ptr,
                    format!("`type` {other:?}: the field becomes `Any`"),
                );
                json!({})
            }
        }
    }

    fn model(
        &mut self,
        ctx: &mut Ctx<'_>,
        properties: &Map<String, Value>,
        required: Option<&Value>,
        ptr: &str,
        depth: usize,
    ) -> Value {
        let required: Vec<Value> = required
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter(|n| n.as_str().is_some_and(|n| properties.contains_key(n)))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let rendered: Map<String, Value> = properties
            .iter()
            .map(|(name, s)| {
                let at = walk::push(&walk::push(ptr, "properties"), name);
                (name.clone(), self.field(ctx, s, &at, depth + 1))
            })
            .collect();
        json!({"type": "object", "properties": rendered, "required": required})
    }
}

fn root(ctx: &mut Ctx<'_>, schema: &Value, ptr: &str) -> Value {
    let mut builder = Builder { root: schema, base: ptr, stack: Vec::new() };
    let Some(object) = schema.as_object() else {
        return json!({"type": "object", "properties": {}, "required": []});
    };
    for (key, value) in object {
        match key.as_str() {
            "anyOf" | "oneOf" | "allOf" => ctx.emit(
                "openapi/root-union-ignored",
                &walk::push(ptr, key),
                format!("root `{key}` is not read"),
            ),
            k if READ.contains(&k) => {}
            _ => ctx.emit(
                "openapi/constraint-dropped",
                &walk::push(ptr, key),
                format!("`{key}` ({}) is not carried into the model", excerpt(value)),
            ),
        }
    }
    let empty = Map::new();
    let properties = object.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    builder.model(ctx, properties, object.get("required"), ptr, 0)
}

pub(super) fn render(ctx: &mut Ctx<'_>, tool: &Tool) -> (Option<Value>, Option<Value>) {
    let input = root(ctx, tool.input(), "/inputSchema");
    let output = tool.output_schema.as_ref().map(|o| root(ctx, o, "/outputSchema"));
    (Some(input), output)
}
