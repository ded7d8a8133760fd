//! Per rule: a tool that triggers it and a near miss that does not. Every rule of the catalogue
//! must have a case here (the last test checks it).

use mcp_fuzz_clients::{Adapter, AnyAdapter, RULES, Tool, listing_findings, render};
use serde_json::{Value, json};

struct Case {
    rule: &'static str,
    triggers: Tool,
    near_miss: Tool,
}

fn input(schema: Value) -> Tool {
    Tool::new("t", schema)
}

fn output(schema: Value) -> Tool {
    Tool { output_schema: Some(schema), ..Tool::new("t", json!({"type": "object"})) }
}

fn object(properties: Value) -> Value {
    json!({"type": "object", "properties": properties, "additionalProperties": false, "required": []})
}

fn prop(schema: Value) -> Tool {
    let mut root = object(json!({"p": schema}));
    root["required"] = json!(["p"]);
    input(root)
}

fn nested(levels: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..levels {
        schema = json!({"type": "object", "properties": {"n": schema}, "required": ["n"], "additionalProperties": false});
    }
    schema
}

fn recursive(definitions: &str) -> Value {
    let target = format!("#/{definitions}/node");
    json!({
        "type": "object",
        "properties": {"root": {"$ref": target}},
        definitions: {"node": {"type": "object", "properties": {"child": {"$ref": target}}}}
    })
}

fn shared() -> Value {
    json!({
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/s"}, "b": {"$ref": "#/$defs/s"}},
        "$defs": {"s": {"type": "string"}}
    })
}

#[expect(clippy::too_many_lines, reason = "one case per rule, in catalogue order")]
fn cases() -> Vec<Case> {
    vec![
        Case {
            rule: "openai-strict/root-not-object",
            triggers: input(json!({"type": "array"})),
            near_miss: input(object(json!({}))),
        },
        Case {
            rule: "openai-strict/root-union",
            triggers: input(
                json!({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}),
            ),
            near_miss: prop(json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})),
        },
        Case {
            rule: "openai-strict/open-object",
            triggers: input(json!({"type": "object", "additionalProperties": {"type": "string"}})),
            near_miss: input(object(json!({}))),
        },
        Case {
            rule: "openai-strict/unsupported-keyword",
            triggers: prop(json!({"allOf": [{"type": "string"}]})),
            near_miss: prop(json!({"anyOf": [{"type": "string"}]})),
        },
        Case {
            rule: "openai-strict/undocumented-keyword",
            triggers: prop(json!({"type": "string", "minLength": 1})),
            near_miss: prop(json!({"type": "string", "pattern": "^a"})),
        },
        Case {
            rule: "openai-strict/optional-made-nullable",
            triggers: input(object(json!({"p": {"type": "string"}}))),
            near_miss: prop(json!({"type": "string"})),
        },
        Case {
            rule: "openai-strict/closed-object",
            triggers: input(json!({"type": "object", "properties": {}})),
            near_miss: input(object(json!({}))),
        },
        Case {
            rule: "openai-strict/limits",
            triggers: input(nested(11)),
            near_miss: input(nested(10)),
        },
        Case {
            rule: "anthropic/root-combinator",
            triggers: input(
                json!({"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}),
            ),
            near_miss: prop(json!({"oneOf": [{"type": "string"}, {"type": "integer"}]})),
        },
        Case {
            rule: "anthropic/root-not-object",
            triggers: input(json!({"properties": {}})),
            near_miss: input(json!({"type": "object"})),
        },
        Case {
            rule: "anthropic-strict/open-object",
            triggers: input(json!({"type": "object", "additionalProperties": true})),
            near_miss: input(object(json!({}))),
        },
        Case {
            rule: "anthropic-strict/closed-object",
            triggers: input(json!({"type": "object"})),
            near_miss: input(object(json!({}))),
        },
        Case {
            rule: "anthropic-strict/numeric-constraint",
            triggers: prop(json!({"type": "integer", "maximum": 5})),
            near_miss: prop(json!({"type": "integer"})),
        },
        Case {
            rule: "anthropic-strict/string-length",
            triggers: prop(json!({"type": "string", "maxLength": 5})),
            near_miss: prop(json!({"type": "string", "pattern": "^a"})),
        },
        Case {
            rule: "anthropic-strict/array-constraint",
            triggers: prop(json!({"type": "array", "minItems": 2})),
            near_miss: prop(json!({"type": "array", "minItems": 1})),
        },
        Case {
            rule: "anthropic-strict-api/numeric-constraint",
            triggers: prop(json!({"type": "number", "exclusiveMinimum": 0})),
            near_miss: prop(json!({"type": "number"})),
        },
        Case {
            rule: "anthropic-strict-api/string-length",
            triggers: prop(json!({"type": "string", "minLength": 1})),
            near_miss: prop(json!({"type": "string", "format": "email"})),
        },
        Case {
            rule: "anthropic-strict-api/array-constraint",
            triggers: prop(json!({"type": "array", "uniqueItems": true})),
            near_miss: prop(json!({"type": "array", "minItems": 1})),
        },
        Case {
            rule: "anthropic-strict/format",
            triggers: prop(json!({"type": "string", "format": "uri-reference"})),
            near_miss: prop(json!({"type": "string", "format": "uri"})),
        },
        Case {
            rule: "anthropic-strict/recursive-ref",
            triggers: input(recursive("$defs")),
            near_miss: input(shared()),
        },
        Case {
            rule: "anthropic-strict/external-ref",
            triggers: prop(json!({"$ref": "https://example.invalid/s.json"})),
            near_miss: input(shared()),
        },
        Case {
            rule: "anthropic-strict/complex-enum",
            triggers: prop(json!({"enum": [{"a": 1}]})),
            near_miss: prop(json!({"enum": ["a", 1, null]})),
        },
        Case {
            rule: "anthropic-strict/undocumented-keyword",
            triggers: prop(json!({"oneOf": [{"type": "string"}, {"type": "integer"}]})),
            near_miss: prop(json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})),
        },
        Case {
            rule: "gemini/ref",
            triggers: input(shared()),
            near_miss: prop(json!({"type": "string"})),
        },
        Case {
            rule: "gemini/combinator",
            triggers: prop(json!({"oneOf": [{"type": "string"}, {"type": "integer"}]})),
            near_miss: input(
                json!({"type": "object", "properties": {"p": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}),
            ),
        },
        Case {
            rule: "gemini/additional-properties",
            triggers: input(object(json!({}))),
            near_miss: input(json!({"type": "object", "properties": {}})),
        },
        Case {
            rule: "gemini/type-array",
            triggers: input(
                json!({"type": "object", "properties": {"p": {"type": ["string", "null"]}}}),
            ),
            near_miss: input(
                json!({"type": "object", "properties": {"p": {"type": "string", "nullable": true}}}),
            ),
        },
        Case {
            rule: "gemini/unknown-field",
            triggers: input(
                json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}),
            ),
            near_miss: input(json!({"title": "T", "type": "object"})),
        },
        Case {
            rule: "gemini/format",
            triggers: input(
                json!({"type": "object", "properties": {"p": {"type": "string", "format": "uri"}}}),
            ),
            near_miss: input(
                json!({"type": "object", "properties": {"p": {"type": "string", "format": "date-time"}}}),
            ),
        },
        Case {
            rule: "gemini/enum-not-strings",
            triggers: input(
                json!({"type": "object", "properties": {"p": {"type": "integer", "enum": [1, 2]}}}),
            ),
            near_miss: input(
                json!({"type": "object", "properties": {"p": {"type": "string", "enum": ["1", "2"]}}}),
            ),
        },
        Case {
            rule: "openapi/constraint-dropped",
            triggers: prop(json!({"type": "string", "minLength": 1})),
            near_miss: input(json!({"type": "object", "properties": {"p": {"type": "string"}}})),
        },
        Case {
            rule: "openapi/untyped",
            triggers: prop(json!({"oneOf": [{"type": "string"}, {"type": "integer"}]})),
            near_miss: prop(json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})),
        },
        Case {
            rule: "openapi/root-union-ignored",
            triggers: input(json!({"type": "object", "anyOf": [{"required": ["a"]}]})),
            near_miss: input(json!({"type": "object", "properties": {"a": {"type": "string"}}})),
        },
        Case {
            rule: "openapi/unresolved-ref",
            triggers: input(
                json!({"type": "object", "properties": {"a": {"$ref": "#/definitions/s"}}, "definitions": {"s": {"type": "string"}}}),
            ),
            near_miss: input(shared()),
        },
        Case {
            rule: "openapi/recursive-ref",
            triggers: input(recursive("$defs")),
            near_miss: input(shared()),
        },
        Case {
            rule: "openapi/boolean-schema",
            triggers: input(json!({"type": "object", "properties": {"a": true}})),
            near_miss: input(json!({"type": "object", "properties": {"a": {}}})),
        },
        Case {
            rule: "mcp/input-root-type",
            triggers: input(json!({"properties": {}})),
            near_miss: input(json!({"type": "object"})),
        },
        Case {
            rule: "mcp/output-root-type",
            triggers: output(json!({"type": "array"})),
            near_miss: output(json!({"type": "object"})),
        },
        Case {
            rule: "mcp/required-not-strings",
            triggers: input(json!({"type": "object", "required": "a"})),
            near_miss: input(json!({"type": "object", "required": ["a"]})),
        },
        Case {
            rule: "mcp/boolean-property-schema",
            triggers: output(json!({"type": "object", "properties": {"result": true}})),
            near_miss: output(json!({"type": "object", "properties": {"result": {}}})),
        },
        Case {
            rule: "mcp/schema-dialect",
            triggers: input(
                json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
            ),
            near_miss: input(
                json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}),
            ),
        },
    ]
}

fn rules_reported(adapter: Adapter, tool: &Tool) -> Vec<&'static str> {
    render(adapter, tool).findings.iter().map(|f| f.rule).collect()
}

fn adapter_of(rule: &str) -> Adapter {
    match RULES.iter().find(|r| r.id == rule).expect("rule in catalogue").adapter {
        AnyAdapter::Modelled(adapter) => adapter,
        real => panic!("{rule} is a rule of the real client {real}"),
    }
}

#[test]
fn each_rule_triggers_and_its_near_miss_does_not() {
    for case in cases() {
        let adapter = adapter_of(case.rule);
        let hit = rules_reported(adapter, &case.triggers);
        assert!(
            hit.contains(&case.rule),
            "{}: not reported for the trigger; got {hit:?}",
            case.rule
        );
        let miss = rules_reported(adapter, &case.near_miss);
        assert!(!miss.contains(&case.rule), "{}: reported for the near miss", case.rule);
    }
}

#[test]
fn anthropic_baseline_rules_apply_to_strict_too() {
    let tool = input(json!({"type": "object", "anyOf": [{"required": ["a"]}]}));
    assert!(rules_reported(Adapter::AnthropicStrict, &tool).contains(&"anthropic/root-combinator"));
}

#[test]
fn request_complexity_counts_the_listing() {
    let tools = [
        input(
            json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}, "b": {"type": "string"}}, "required": ["b"]}),
        ),
        input(
            json!({"type": "object", "properties": {"c": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}),
        ),
    ];
    let findings = listing_findings(Adapter::AnthropicStrict, &tools);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].rule, "anthropic-strict/request-complexity");
    assert_eq!(
        findings[0].detail,
        "2 strict tools, 2 optional parameters and 2 union-typed parameters in one request"
    );
    assert!(!findings[0].is_failure(), "ambiguous rules never fail");
    assert!(listing_findings(Adapter::Gemini, &tools).is_empty());
}

#[test]
fn every_rule_has_a_case() {
    let covered: Vec<&str> = cases().iter().map(|c| c.rule).collect();
    for rule in RULES {
        if rule.id == "anthropic-strict/request-complexity" {
            continue; // A listing rule: see `request_complexity_counts_the_listing`.
        }
        if rule.id.contains("/canary-") {
            continue; // Canary rules: see `canary_rules_follow_the_drift`.
        }
        assert!(covered.contains(&rule.id), "no fixture for {}", rule.id);
    }
}

#[test]
fn rejection_follows_non_ambiguous_failures_only() {
    // `gemini/format` is fail but ambiguous: the rendering survives (without the format).
    let tool =
        input(json!({"type": "object", "properties": {"p": {"type": "string", "format": "uri"}}}));
    let rendering = render(Adapter::Gemini, &tool);
    assert!(!rendering.rejected());
    assert_eq!(rendering.input.expect("rendered")["properties"]["p"], json!({"type": "string"}));
    let rejected = render(Adapter::Gemini, &input(object(json!({}))));
    assert!(rejected.rejected());
    assert_eq!(rejected.input, None);
}

#[test]
fn openai_conversion_closes_requires_and_nulls() {
    let tool = input(json!({
        "type": "object",
        "properties": {"q": {"type": "string"}, "n": {"type": "integer", "enum": [1, 2]}, "r": {"$ref": "#/$defs/r"}},
        "required": ["q"],
        "$defs": {"r": {"type": "string"}}
    }));
    let rendered = render(Adapter::OpenaiStrict, &tool).input.expect("accepted");
    assert_eq!(rendered["additionalProperties"], json!(false));
    assert_eq!(rendered["required"], json!(["q", "n", "r"]));
    assert_eq!(rendered["properties"]["q"], json!({"type": "string"}));
    assert_eq!(
        rendered["properties"]["n"],
        json!({"type": ["integer", "null"], "enum": [1, 2, null]})
    );
    assert_eq!(
        rendered["properties"]["r"],
        json!({"anyOf": [{"$ref": "#/$defs/r"}, {"type": "null"}]})
    );
}

/// The canaries of `tool` under `adapter`, as the rule ids the report gives them.
fn canary_rules(adapter: Adapter, tool: &Tool) -> Vec<&'static str> {
    let rendering = render(adapter, tool);
    let rendered = rendering.input.as_ref().expect("the rendering is accepted");
    mcp_fuzz_clients::canary::find(tool.input(), rendered, 0)
        .canaries
        .iter()
        .map(|c| mcp_fuzz_clients::canary_rule(adapter, c.direction).id)
        .collect()
}

#[test]
fn canary_rules_follow_the_drift() {
    // A dropped minLength: the model may send "", the server refuses it.
    let dropped = input(
        json!({"type": "object", "properties": {"q": {"type": "string", "minLength": 1}}, "required": ["q"]}),
    );
    assert_eq!(canary_rules(Adapter::Openapi, &dropped), ["openapi/canary-server-refuses"]);
    // Near miss: nothing is dropped, so there is no canary.
    let kept = input(
        json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}),
    );
    assert!(canary_rules(Adapter::Openapi, &kept).is_empty());
    // An optional property made required and nullable: the server takes `{}`, the model
    // cannot send it; and the model may send null, which the server refuses.
    let optional = input(json!({"type": "object", "properties": {"q": {"type": "string"}}}));
    let mut found = canary_rules(Adapter::OpenaiStrict, &optional);
    found.sort_unstable();
    assert_eq!(
        found,
        ["openai-strict/canary-inexpressible", "openai-strict/canary-server-refuses"]
    );
    assert!(canary_rules(Adapter::OpenaiStrict, &input(object(json!({})))).is_empty());
}
