//! `anthropic` (Messages API tool use) and `anthropic-strict` (`strict: true`, the structured
//! outputs subset, as the official SDKs send it: unsupported constraints stripped).
//!
//! See: <https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations>.

use super::{Action, Ctx, Policy, excerpt, is_annotation, transform};
use crate::Tool;
use crate::walk::{self, types_of};
use serde_json::{Map, Value};

const KEPT: &[&str] = &[
    "type",
    "properties",
    "required",
    "items",
    "enum",
    "const",
    "anyOf",
    "allOf",
    "$ref",
    "$defs",
    "definitions",
    "pattern",
];
const NUMERIC: &[&str] =
    &["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"];
const ARRAY: &[&str] = &["maxItems", "uniqueItems", "contains", "minContains", "maxContains"];
const FORMATS: &[&str] =
    &["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"];

struct Strict;

impl Policy for Strict {
    fn keyword(&self, _ctx: &mut Ctx<'_>, keyword: &str, value: &Value, _ptr: &str) -> Action {
        match keyword {
            "additionalProperties" if value == &Value::Bool(false) => Action::Keep,
            "additionalProperties" => Action::Reject("anthropic-strict/open-object"),
            "minLength" | "maxLength" => Action::Drop("anthropic-strict/string-length"),
            "minItems" if value.as_u64().is_some_and(|n| n <= 1) => Action::Keep,
            "minItems" => Action::Drop("anthropic-strict/array-constraint"),
            "format" if value.as_str().is_some_and(|f| FORMATS.contains(&f)) => Action::Keep,
            "format" => Action::Drop("anthropic-strict/format"),
            "enum"
                if value
                    .as_array()
                    .is_some_and(|v| v.iter().any(|m| m.is_object() || m.is_array())) =>
            {
                Action::Reject("anthropic-strict/complex-enum")
            }
            "$ref" if !value.as_str().is_some_and(|r| r.starts_with('#')) => {
                Action::Reject("anthropic-strict/external-ref")
            }
            k if NUMERIC.contains(&k) => Action::Drop("anthropic-strict/numeric-constraint"),
            k if ARRAY.contains(&k) => Action::Drop("anthropic-strict/array-constraint"),
            k if is_annotation(k) || KEPT.contains(&k) => Action::Keep,
            _ => Action::Drop("anthropic-strict/undocumented-keyword"),
        }
    }

    fn finish(&self, ctx: &mut Ctx<'_>, out: &mut Map<String, Value>, ptr: &str) {
        if walk::is_object_schema(out) && !out.contains_key("additionalProperties") {
            ctx.emit(
                "anthropic-strict/closed-object",
                &walk::push(ptr, "additionalProperties"),
                "the object is treated as `additionalProperties: false`",
            );
            out.insert("additionalProperties".into(), Value::Bool(false));
        }
    }
}

fn root_checks(ctx: &mut Ctx<'_>, root: &Value) {
    let ptr = "/inputSchema";
    for combinator in ["oneOf", "allOf", "anyOf"] {
        if root.get(combinator).is_some() {
            ctx.emit(
                "anthropic/root-combinator",
                &walk::push(ptr, combinator),
                format!("`{combinator}` at the root of input_schema"),
            );
        }
    }
    if types_of(root).is_none_or(|t| t.len() != 1 || !t.contains("object")) {
        ctx.emit(
            "anthropic/root-not-object",
            ptr,
            format!(
                "the root declares `type` {}",
                root.get("type").map_or("(none)".into(), excerpt)
            ),
        );
    }
}

pub(super) fn render(
    ctx: &mut Ctx<'_>,
    tool: &Tool,
    strict: bool,
) -> (Option<Value>, Option<Value>) {
    let root = &tool.input_schema;
    root_checks(ctx, root);
    if !strict {
        // Non-strict tool use hands the schema to the model as it is; the Messages API has no
        // place for an output schema.
        return (Some(root.clone()), None);
    }
    if let Some(at) = walk::ref_cycle(root) {
        ctx.emit(
            "anthropic-strict/recursive-ref",
            &format!("/inputSchema{at}"),
            "the `$ref` re-enters a definition that is being expanded",
        );
    }
    (Some(transform(&Strict, ctx, root, "/inputSchema", 0)), None)
}

/// Per-request counts of a listing sent with every tool strict.
pub(super) fn listing(ctx: &mut Ctx<'_>, tools: &[Tool]) {
    let mut optional = 0;
    let mut unions = 0;
    for tool in tools {
        let required: Vec<&str> = tool
            .input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(Value::Object(properties)) = tool.input_schema.get("properties") {
            for (name, schema) in properties {
                if !required.contains(&name.as_str()) {
                    optional += 1;
                }
                if schema.get("anyOf").is_some() || types_of(schema).is_some_and(|t| t.len() > 1) {
                    unions += 1;
                }
            }
        }
    }
    ctx.emit(
        "anthropic-strict/request-complexity",
        "",
        format!(
            "{} strict tools, {optional} optional parameters and {unions} union-typed parameters \
             in one request",
            tools.len()
        ),
    );
}
