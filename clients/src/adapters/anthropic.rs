//! `anthropic` (Messages API tool use) and `anthropic-strict` (`strict: true`, the structured
//! outputs subset, as the official SDKs send it: unsupported constraints stripped), and
//! `anthropic-strict-api` (the same subset sent to the API directly: the constraints the SDKs
//! strip are refused with a 400 instead; every other strict rule is shared).
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

/// `api`: the request goes to the Messages API as written (no SDK strips the constraints).
struct Strict {
    api: bool,
}

impl Strict {
    /// What happens to a constraint the SDKs strip: dropped (SDK) or refused (raw API).
    fn stripped(&self, sdk: &'static str, api: &'static str) -> Action {
        if self.api { Action::Reject(api) } else { Action::Drop(sdk) }
    }
}

impl Policy for Strict {
    fn keyword(&self, _ctx: &mut Ctx<'_>, keyword: &str, value: &Value, _ptr: &str) -> Action {
        match keyword {
            "additionalProperties" if value == &Value::Bool(false) => Action::Keep,
            "additionalProperties" => Action::Reject("anthropic-strict/open-object"),
            "minLength" | "maxLength" => self
                .stripped("anthropic-strict/string-length", "anthropic-strict-api/string-length"),
            "minItems" if value.as_u64().is_some_and(|n| n <= 1) => Action::Keep,
            "minItems" => self.stripped(
                "anthropic-strict/array-constraint",
                "anthropic-strict-api/array-constraint",
            ),
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
            k if NUMERIC.contains(&k) => self.stripped(
                "anthropic-strict/numeric-constraint",
                "anthropic-strict-api/numeric-constraint",
            ),
            k if ARRAY.contains(&k) => self.stripped(
                "anthropic-strict/array-constraint",
                "anthropic-strict-api/array-constraint",
            ),
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
    render_mode(ctx, tool, strict.then_some(Strict { api: false }))
}

/// `anthropic-strict-api`: strict tool use without an SDK in between.
pub(super) fn render_strict_api(ctx: &mut Ctx<'_>, tool: &Tool) -> (Option<Value>, Option<Value>) {
    render_mode(ctx, tool, Some(Strict { api: true }))
}

fn render_mode(
    ctx: &mut Ctx<'_>,
    tool: &Tool,
    strict: Option<Strict>,
) -> (Option<Value>, Option<Value>) {
    let root = tool.input();
    root_checks(ctx, root);
    let Some(strict) = strict else {
        // Non-strict tool use hands the schema to the model as it is; the Messages API has no
        // place for an output schema.
        return (Some(root.clone()), None);
    };
    if let Some(at) = walk::ref_cycle(root) {
        ctx.emit(
            "anthropic-strict/recursive-ref",
            &format!("/inputSchema{at}"),
            "the `$ref` re-enters a definition that is being expanded",
        );
    }
    (Some(transform(&strict, ctx, root, "/inputSchema", 0)), None)
}

/// Per-request counts of a listing sent with every tool strict.
pub(super) fn listing(ctx: &mut Ctx<'_>, tools: &[Tool]) {
    let mut optional = 0;
    let mut unions = 0;
    for tool in tools {
        let required: Vec<&str> = tool
            .input()
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(Value::Object(properties)) = tool.input().get("properties") {
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

#[cfg(test)]
mod tests {
    use crate::{Adapter, Tool, render};
    use serde_json::json;

    #[test]
    fn the_raw_api_refuses_what_the_sdks_strip() {
        let tool = Tool::new(
            "t",
            json!({"type": "object", "properties": {
                "s": {"type": "string", "maxLength": 5},
                "n": {"type": "integer", "minimum": 0},
                "a": {"type": "array", "items": {"type": "string"}, "maxItems": 3}}}),
        );
        let sdk = render(Adapter::AnthropicStrict, &tool);
        assert!(!sdk.rejected());
        assert_eq!(sdk.input.as_ref().expect("kept")["properties"]["s"], json!({"type": "string"}));
        let api = render(Adapter::AnthropicStrictApi, &tool);
        assert!(api.rejected());
        let rules: Vec<&str> = api.findings.iter().map(|f| f.rule).collect();
        for rule in [
            "anthropic-strict-api/string-length",
            "anthropic-strict-api/numeric-constraint",
            "anthropic-strict-api/array-constraint",
        ] {
            assert!(rules.contains(&rule), "{rule} in {rules:?}");
        }
    }

    #[test]
    fn without_stripped_constraints_the_api_and_the_sdks_agree() {
        let tool = Tool::new(
            "t",
            json!({"type": "object", "properties": {"e": {"enum": ["a", "b"]}, "p": {"type": "string", "pattern": "^x"}}}),
        );
        let (sdk, api) =
            (render(Adapter::AnthropicStrict, &tool), render(Adapter::AnthropicStrictApi, &tool));
        assert_eq!(sdk.input, api.input);
        let rules = |r: &crate::Rendering| r.findings.iter().map(|f| f.rule).collect::<Vec<_>>();
        assert_eq!(rules(&sdk), rules(&api));
    }
}
