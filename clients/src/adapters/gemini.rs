//! `gemini`: function declarations whose `parameters` are a select subset of the OpenAPI 3.0
//! schema object. A field outside the subset makes the API answer 400.
//!
//! See: <https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/Schema>.

use super::{Action, Ctx, Policy, transform};
use crate::Tool;
use serde_json::Value;

/// The fields of the schema subset.
const FIELDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];
const FORMATS: &[&str] = &["enum", "date-time", "float", "double", "int32", "int64"];

struct Subset;

impl Policy for Subset {
    fn keyword(&self, _ctx: &mut Ctx<'_>, keyword: &str, value: &Value, _ptr: &str) -> Action {
        match keyword {
            "$ref" | "$defs" | "definitions" => Action::Reject("gemini/ref"),
            "oneOf" | "allOf" | "not" => Action::Reject("gemini/combinator"),
            "additionalProperties" => Action::Reject("gemini/additional-properties"),
            "type" if value.is_array() => Action::Reject("gemini/type-array"),
            "format" if !value.as_str().is_some_and(|f| FORMATS.contains(&f)) => {
                Action::Reject("gemini/format")
            }
            "enum" if !value.as_array().is_some_and(|v| v.iter().all(Value::is_string)) => {
                Action::Reject("gemini/enum-not-strings")
            }
            "items" if value.is_array() => Action::Reject("gemini/unknown-field"),
            k if FIELDS.contains(&k) => Action::Keep,
            _ => Action::Reject("gemini/unknown-field"),
        }
    }

    fn boolean(&self, ctx: &mut Ctx<'_>, value: bool, ptr: &str) -> Value {
        ctx.emit(
            "gemini/unknown-field",
            ptr,
            format!("the boolean schema `{value}` is not a Schema object"),
        );
        Value::Object(serde_json::Map::new())
    }
}

pub(super) fn render(ctx: &mut Ctx<'_>, tool: &Tool) -> (Option<Value>, Option<Value>) {
    let input = transform(&Subset, ctx, tool.input(), "/inputSchema", 0);
    // The declaration's `response` schema is optional and rarely filled from MCP tools; the
    // model never sees the output schema.
    (Some(input), None)
}
