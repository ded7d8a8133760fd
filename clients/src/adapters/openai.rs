//! `openai-strict`: strict function calling. The conversion closes every object, lists every
//! property in `required` (optional ones made nullable), keeps the documented keyword subset and
//! refuses what strict mode cannot express.
//!
//! See: <https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>.

use super::{Action, Ctx, Policy, is_annotation, transform};
use crate::Tool;
use crate::walk::{self, children, types_of};
use serde_json::{Map, Value, json};

/// Keywords the supported-schemas section documents as kept.
const KEPT: &[&str] = &[
    "type",
    "properties",
    "required",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];

/// Keywords the section names as not supported.
const UNSUPPORTED: &[&str] =
    &["allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas"];

/// Documented limits.
const MAX_NESTING: usize = 10;
const MAX_PROPERTIES: usize = 5000;
const MAX_ENUM_VALUES: usize = 1000;

struct Strict;

impl Policy for Strict {
    fn keyword(&self, _ctx: &mut Ctx<'_>, keyword: &str, value: &Value, _ptr: &str) -> Action {
        if keyword == "additionalProperties" {
            return if value == &Value::Bool(false) {
                Action::Keep
            } else {
                Action::Reject("openai-strict/open-object")
            };
        }
        if is_annotation(keyword) || KEPT.contains(&keyword) {
            Action::Keep
        } else if UNSUPPORTED.contains(&keyword) {
            Action::Reject("openai-strict/unsupported-keyword")
        } else {
            Action::Drop("openai-strict/undocumented-keyword")
        }
    }

    fn boolean(&self, ctx: &mut Ctx<'_>, value: bool, ptr: &str) -> Value {
        ctx.emit(
            "openai-strict/undocumented-keyword",
            ptr,
            format!("the boolean schema `{value}` is not part of the documented subset"),
        );
        Value::Bool(value)
    }

    fn finish(&self, ctx: &mut Ctx<'_>, out: &mut Map<String, Value>, ptr: &str) {
        if !walk::is_object_schema(out) {
            return;
        }
        if !out.contains_key("additionalProperties") {
            ctx.emit(
                "openai-strict/closed-object",
                &walk::push(ptr, "additionalProperties"),
                "the object gets `additionalProperties: false`",
            );
            out.insert("additionalProperties".into(), Value::Bool(false));
        }
        let required: Vec<String> = out
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        let Some(Value::Object(properties)) = out.get_mut("properties") else {
            out.insert("required".into(), json!([]));
            return;
        };
        let mut all = Vec::new();
        for (name, schema) in properties.iter_mut() {
            all.push(Value::String(name.clone()));
            if required.contains(name) {
                continue;
            }
            ctx.emit(
                "openai-strict/optional-made-nullable",
                &walk::push(&walk::push(ptr, "properties"), name),
                format!("optional `{name}` becomes required and nullable"),
            );
            *schema = nullable(schema);
        }
        out.insert("required".into(), Value::Array(all));
    }
}

/// `schema` widened to also accept `null`, the way the strict conversion writes it.
pub(crate) fn nullable(schema: &Value) -> Value {
    if walk::allows_null(schema) {
        return schema.clone();
    }
    if let Some(object) = schema.as_object()
        && !object.contains_key("$ref")
        && !object.contains_key("anyOf")
        && let Some(types) = types_of(schema)
    {
        let mut out = object.clone();
        let mut types: Vec<Value> = types.into_iter().map(Value::String).collect();
        types.push(Value::String("null".into()));
        out.insert("type".into(), Value::Array(types));
        if let Some(Value::Array(values)) = out.get_mut("enum") {
            values.push(Value::Null);
        }
        if let Some(c) = out.remove("const") {
            out.insert("enum".into(), json!([c, null]));
        }
        return Value::Object(out);
    }
    json!({"anyOf": [schema, {"type": "null"}]})
}

pub(super) fn render(ctx: &mut Ctx<'_>, tool: &Tool) -> (Option<Value>, Option<Value>) {
    let root = tool.input();
    let ptr = "/inputSchema";
    if types_of(root).is_none_or(|t| t.len() != 1 || !t.contains("object")) {
        ctx.emit(
            "openai-strict/root-not-object",
            ptr,
            format!(
                "the root declares `type` {}",
                root.get("type").map_or("(none)".into(), super::excerpt)
            ),
        );
    }
    for union in ["anyOf", "oneOf"] {
        if root.get(union).is_some() {
            ctx.emit(
                "openai-strict/root-union",
                &walk::push(ptr, union),
                format!("root `{union}`"),
            );
        }
    }
    let rendered = transform(&Strict, ctx, root, ptr, 0);
    let mut sizes = Sizes::default();
    sizes.measure(root, 0, 0);
    if sizes.depth > MAX_NESTING {
        ctx.emit("openai-strict/limits", ptr, format!("objects nest {} levels deep", sizes.depth));
    }
    if sizes.properties > MAX_PROPERTIES {
        ctx.emit("openai-strict/limits", ptr, format!("{} object properties", sizes.properties));
    }
    if sizes.enum_values > MAX_ENUM_VALUES {
        ctx.emit("openai-strict/limits", ptr, format!("{} enum values", sizes.enum_values));
    }
    // Function tools have no place for an output schema.
    (Some(rendered), None)
}

#[derive(Default)]
struct Sizes {
    depth: usize,
    properties: usize,
    enum_values: usize,
}

impl Sizes {
    fn measure(&mut self, schema: &Value, depth: usize, visited: usize) {
        if visited > super::MAX_DEPTH {
            return;
        }
        let Some(object) = schema.as_object() else { return };
        let depth = if walk::is_object_schema(object) { depth + 1 } else { depth };
        self.depth = self.depth.max(depth);
        if let Some(Value::Object(p)) = object.get("properties") {
            self.properties += p.len();
        }
        if let Some(Value::Array(e)) = object.get("enum") {
            self.enum_values += e.len();
        }
        for (_, child) in children(schema) {
            self.measure(child, depth, visited + 1);
        }
    }
}
