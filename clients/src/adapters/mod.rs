//! The adapters: one module per client, sharing a keyword-policy transform.

mod anthropic;
mod gemini;
mod mcp;
mod openai;
mod openapi;

use crate::walk::{self, ARRAY_KEYWORDS, MAP_KEYWORDS, SCHEMA_KEYWORDS};
use crate::{Adapter, Finding, Tool, rule};
use serde_json::{Map, Value};

/// Why: a hostile schema can nest without end; past this depth the transform copies nothing
/// further (the subtree is replaced by `{}`) and says so in a finding-free way (the diff reports
/// where comparison stopped).
pub(crate) const MAX_DEPTH: usize = 64;

/// Collects findings for one tool and one adapter.
pub(crate) struct Ctx<'a> {
    adapter: Adapter,
    tool: Option<&'a str>,
    findings: Vec<Finding>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(adapter: Adapter, tool: &'a str) -> Self {
        Self { adapter, tool: Some(tool), findings: Vec::new() }
    }

    fn for_listing(adapter: Adapter) -> Self {
        Self { adapter, tool: None, findings: Vec::new() }
    }

    /// Records a finding of rule `id` at `pointer`.
    pub(crate) fn emit(&mut self, id: &str, pointer: &str, detail: impl Into<String>) {
        let rule = rule(id);
        self.findings.push(Finding {
            adapter: self.adapter.into(),
            rule: rule.id,
            severity: rule.severity,
            ambiguous: rule.ambiguous,
            tool: self.tool.map(str::to_owned),
            pointer: pointer.to_owned(),
            detail: detail.into(),
        });
    }

    pub(crate) fn into_findings(self) -> Vec<Finding> {
        self.findings
    }
}

/// Renders a tool: `(input, output)` as the client keeps them.
pub(crate) fn render(ctx: &mut Ctx<'_>, tool: &Tool) -> (Option<Value>, Option<Value>) {
    match ctx.adapter {
        Adapter::OpenaiStrict => openai::render(ctx, tool),
        Adapter::Anthropic => anthropic::render(ctx, tool, false),
        Adapter::AnthropicStrict => anthropic::render(ctx, tool, true),
        Adapter::AnthropicStrictApi => anthropic::render_strict_api(ctx, tool),
        Adapter::Gemini => gemini::render(ctx, tool),
        Adapter::Openapi => openapi::render(ctx, tool),
        Adapter::Mcp => mcp::render(ctx, tool),
    }
}

/// Findings about the whole listing.
pub(crate) fn listing(adapter: Adapter, tools: &[Tool]) -> Vec<Finding> {
    let mut ctx = Ctx::for_listing(adapter);
    if matches!(adapter, Adapter::AnthropicStrict | Adapter::AnthropicStrictApi) {
        anthropic::listing(&mut ctx, tools);
    }
    ctx.into_findings()
}

/// What a policy does with one keyword.
pub(crate) enum Action {
    /// Copy it (recursing into subschemas).
    Keep,
    /// Leave it out of the rendering and record a finding of this rule.
    Drop(&'static str),
    /// The client refuses it: record a finding of this rule (the rendering is discarded).
    Reject(&'static str),
}

/// An adapter's keyword policy for the shared transform.
pub(crate) trait Policy {
    /// What to do with `keyword: value` found in the schema object at `ptr`.
    fn keyword(&self, ctx: &mut Ctx<'_>, keyword: &str, value: &Value, ptr: &str) -> Action;

    /// A boolean subschema at `ptr` (not the root). Default: keep it.
    fn boolean(&self, _ctx: &mut Ctx<'_>, value: bool, _ptr: &str) -> Value {
        Value::Bool(value)
    }

    /// After the keywords of an object schema were transformed: structural rewrites.
    fn finish(&self, _ctx: &mut Ctx<'_>, _out: &mut Map<String, Value>, _ptr: &str) {}
}

/// Applies `policy` to every schema object of `schema`, depth-first; `ptr` is the pointer of
/// `schema` in the tool (`/inputSchema`).
pub(crate) fn transform(
    policy: &dyn Policy,
    ctx: &mut Ctx<'_>,
    schema: &Value,
    ptr: &str,
    depth: usize,
) -> Value {
    let Some(object) = schema.as_object() else {
        return match schema {
            Value::Bool(b) if depth > 0 => policy.boolean(ctx, *b, ptr),
            other => other.clone(),
        };
    };
    if depth > MAX_DEPTH {
        return Value::Object(Map::new());
    }
    let mut out = Map::new();
    for (key, value) in object {
        let at = walk::push(ptr, key);
        match policy.keyword(ctx, key, value, &at) {
            Action::Drop(id) => {
                ctx.emit(id, &at, format!("`{key}` ({}) is dropped", excerpt(value)));
                continue;
            }
            Action::Reject(id) => {
                ctx.emit(id, &at, format!("`{key}` ({}) is refused", excerpt(value)));
                continue;
            }
            Action::Keep => {}
        }
        let copied = if MAP_KEYWORDS.contains(&key.as_str()) {
            match value.as_object() {
                Some(map) => Value::Object(
                    map.iter()
                        .map(|(name, s)| {
                            let child =
                                transform(policy, ctx, s, &walk::push(&at, name), depth + 1);
                            (name.clone(), child)
                        })
                        .collect(),
                ),
                None => value.clone(),
            }
        } else if ARRAY_KEYWORDS.contains(&key.as_str()) || (key == "items" && value.is_array()) {
            match value.as_array() {
                Some(items) => Value::Array(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, s)| transform(policy, ctx, s, &format!("{at}/{i}"), depth + 1))
                        .collect(),
                ),
                None => value.clone(),
            }
        } else if value.is_boolean() {
            // `additionalProperties: false`, `items: false`...: ordinary keyword values.
            value.clone()
        } else if SCHEMA_KEYWORDS.contains(&key.as_str()) || key == "items" {
            transform(policy, ctx, value, &at, depth + 1)
        } else {
            value.clone()
        };
        out.insert(key.clone(), copied);
    }
    policy.finish(ctx, &mut out, ptr);
    Value::Object(out)
}

/// A short, single-line rendering of a value for details.
pub(crate) fn excerpt(value: &Value) -> String {
    const MAX: usize = 60;
    mcp_fuzz_generators::text::clip(&value.to_string(), MAX)
}

/// Whether `keyword` validates (is not a pure annotation or structural container we recurse into).
pub(crate) fn is_annotation(keyword: &str) -> bool {
    walk::ANNOTATIONS.contains(&keyword)
}
