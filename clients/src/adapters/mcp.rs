//! `mcp`: the tool definition itself against what real SDK clients accept. The rendering is the
//! tool unchanged; the findings are about listings that clients refuse.
//!
//! See: <https://github.com/modelcontextprotocol/typescript-sdk/blob/main/src/types.ts>.

use super::{Ctx, excerpt};
use crate::Tool;
use crate::walk;
use serde_json::Value;

const DIALECT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

fn check_root(ctx: &mut Ctx<'_>, schema: &Value, ptr: &str, rule: &str) {
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        other => ctx.emit(
            rule,
            ptr,
            match (schema.is_object(), other) {
                (false, _) => format!("the schema is {}, not an object", excerpt(schema)),
                (true, None) => "the schema has no `type`".to_owned(),
                (true, Some(t)) => format!("`type` is {}", excerpt(t)),
            },
        ),
    }
    if let Some(required) = schema.get("required")
        && !required.as_array().is_some_and(|r| r.iter().all(Value::is_string))
    {
        ctx.emit(
            "mcp/required-not-strings",
            &walk::push(ptr, "required"),
            format!("`required` is {}", excerpt(required)),
        );
    }
    if let Some(dialect) = schema.get("$schema") {
        let known = dialect.as_str().is_some_and(|d| d.trim_end_matches('#') == DIALECT_2020_12);
        if !known {
            ctx.emit(
                "mcp/schema-dialect",
                &walk::push(ptr, "$schema"),
                format!("`$schema` is {}", excerpt(dialect)),
            );
        }
    }
}

pub(super) fn render(ctx: &mut Ctx<'_>, tool: &Tool) -> (Option<Value>, Option<Value>) {
    check_root(ctx, tool.input(), "/inputSchema", "mcp/input-root-type");
    if let Some(Value::Object(properties)) = tool.input().get("properties") {
        for (name, schema) in properties {
            if schema.is_boolean() {
                ctx.emit(
                    "mcp/boolean-property-schema",
                    &walk::push("/inputSchema/properties", name),
                    format!("property `{name}` is the boolean schema `{schema}`"),
                );
            }
        }
    }
    if let Some(output) = &tool.output_schema {
        check_root(ctx, output, "/outputSchema", "mcp/output-root-type");
        if let Some(Value::Object(properties)) = output.get("properties") {
            for (name, schema) in properties {
                if schema.is_boolean() {
                    ctx.emit(
                        "mcp/boolean-property-schema",
                        &walk::push("/outputSchema/properties", name),
                        format!("property `{name}` is the boolean schema `{schema}`"),
                    );
                }
            }
        }
    }
    (Some(tool.input().clone()), tool.output_schema.clone())
}
