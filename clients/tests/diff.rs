//! The rendered-vs-advertised comparison on tools that break converters: exact drifts.

use mcp_fuzz_clients::diff::{DriftKind, Part, compare};
use mcp_fuzz_clients::{Adapter, Tool, render};
use serde_json::{Value, json};

fn drifts(adapter: Adapter, tool: &Tool) -> Vec<(DriftKind, String)> {
    compare(tool, &render(adapter, tool)).drifts.into_iter().map(|d| (d.kind, d.pointer)).collect()
}

fn has(list: &[(DriftKind, String)], kind: DriftKind, pointer: &str) -> bool {
    list.iter().any(|(k, p)| *k == kind && p == pointer)
}

#[test]
fn root_any_of_with_branch_only_properties() {
    let tool = Tool::new(
        "fetch",
        json!({
            "type": "object",
            "properties": {"mode": {"type": "string"}},
            "anyOf": [
                {"properties": {"url": {"type": "string", "format": "uri"}}, "required": ["url"]},
                {"properties": {"path": {"type": "string"}}, "required": ["path"]}
            ]
        }),
    );
    let got = drifts(Adapter::Openapi, &tool);
    assert!(has(&got, DriftKind::RootUnionIgnored, "/inputSchema/anyOf"), "{got:?}");
    assert!(
        has(&got, DriftKind::PropertyMissing, "/inputSchema/anyOf/0/properties/url"),
        "{got:?}"
    );
    assert!(
        has(&got, DriftKind::PropertyMissing, "/inputSchema/anyOf/1/properties/path"),
        "{got:?}"
    );
    // openai-strict rejects the root union outright: the tool is missing.
    assert_eq!(drifts(Adapter::OpenaiStrict, &tool), [(DriftKind::ToolMissing, String::new())]);
}

#[test]
fn nested_config_constraints_are_found_at_depth() {
    let tool = Tool::new(
        "deploy",
        json!({
            "type": "object",
            "properties": {"config": {
                "type": "object",
                "description": "Deployment settings.",
                "properties": {
                    "replicas": {"type": "integer", "minimum": 1, "maximum": 9},
                    "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "maxItems": 3}
                },
                "required": ["replicas"],
                "additionalProperties": false
            }},
            "required": ["config"]
        }),
    );
    let got = drifts(Adapter::Openapi, &tool);
    for pointer in [
        "/inputSchema/properties/config/properties/replicas/minimum",
        "/inputSchema/properties/config/properties/replicas/maximum",
        "/inputSchema/properties/config/properties/tags/maxItems",
        "/inputSchema/properties/config/properties/tags/items/pattern",
    ] {
        assert!(has(&got, DriftKind::ConstraintDropped, pointer), "{pointer}: {got:?}");
    }
    assert!(has(
        &got,
        DriftKind::ObjectOpened,
        "/inputSchema/properties/config/additionalProperties"
    ));
    assert!(!got.iter().any(|(k, _)| *k == DriftKind::DescriptionLost), "mcpo keeps descriptions");
    assert!(!got.iter().any(|(k, _)| *k == DriftKind::RequiredDropped), "{got:?}");
}

#[test]
fn strict_conversion_adds_null_and_requires_optionals() {
    let tool = Tool::new(
        "search",
        json!({"type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["q"]}),
    );
    let got = drifts(Adapter::OpenaiStrict, &tool);
    assert!(has(&got, DriftKind::RequiredAdded, "/inputSchema/properties/limit"), "{got:?}");
    assert!(has(&got, DriftKind::Retyped, "/inputSchema/properties/limit"), "{got:?}");
    assert!(has(&got, DriftKind::ObjectClosed, "/inputSchema/additionalProperties"), "{got:?}");
    assert!(!got.iter().any(|(_, p)| p.contains("/properties/q")), "q is unchanged: {got:?}");
}

#[test]
fn type_arrays_enum_without_type_and_const() {
    let tool = Tool::new(
        "t",
        json!({"type": "object", "properties": {
            "maybe": {"type": ["string", "null"]},
            "level": {"enum": ["low", "high"]},
            "kind": {"const": "x"}
        }}),
    );
    let got = drifts(Adapter::Openapi, &tool);
    assert!(
        has(&got, DriftKind::ConstraintDropped, "/inputSchema/properties/level/enum"),
        "{got:?}"
    );
    assert!(
        has(&got, DriftKind::ConstraintDropped, "/inputSchema/properties/kind/const"),
        "{got:?}"
    );
    assert!(
        !got.iter().any(|(_, p)| p.starts_with("/inputSchema/properties/maybe")),
        "a type array becomes anyOf: {got:?}"
    );
    let gemini = drifts(Adapter::Gemini, &tool);
    assert_eq!(
        gemini,
        [(DriftKind::ToolMissing, String::new())],
        "type arrays and const are refused"
    );
}

#[test]
fn recursive_defs_stop_at_the_cycle() {
    let tool = Tool::new(
        "tree",
        json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/node"}},
            "$defs": {"node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}, "n": {"type": "integer", "minimum": 0}}}}
        }),
    );
    let comparison = compare(&tool, &render(Adapter::Mcp, &tool));
    assert!(comparison.drifts.is_empty(), "{:?}", comparison.drifts);
    assert_eq!(
        comparison.stopped,
        [
            "/inputSchema/properties/root/properties/child: `$ref` cycle, already compared on this path"
        ]
    );
    // anthropic-strict and mcpo refuse the recursion.
    assert!(render(Adapter::AnthropicStrict, &tool).rejected());
    assert!(render(Adapter::Openapi, &tool).rejected());
}

#[test]
fn deep_schemas_stop_at_the_depth_limit() {
    let mut schema = json!({"type": "string", "minLength": 1});
    for _ in 0..60 {
        schema = json!({"type": "object", "properties": {"n": schema}});
    }
    let tool = Tool::new("deep", schema);
    let comparison = compare(&tool, &render(Adapter::Anthropic, &tool));
    assert!(comparison.drifts.is_empty());
    assert_eq!(comparison.stopped.len(), 1);
    assert!(
        comparison.stopped[0].ends_with("depth limit (32) reached"),
        "{:?}",
        comparison.stopped
    );
}

#[test]
fn boolean_property_schemas() {
    let tool = Tool::new("b", json!({"type": "object", "properties": {"any": true}}));
    assert!(render(Adapter::Openapi, &tool).rejected());
    assert_eq!(drifts(Adapter::Openapi, &tool), [(DriftKind::ToolMissing, String::new())]);
    assert!(drifts(Adapter::Anthropic, &tool).is_empty());
}

#[test]
fn output_schema_drift() {
    let tool = Tool {
        output_schema: Some(
            json!({"type": "object", "properties": {"count": {"type": "integer", "minimum": 0}}, "required": ["count"]}),
        ),
        ..Tool::new("o", json!({"type": "object"}))
    };
    let anthropic = compare(&tool, &render(Adapter::Anthropic, &tool));
    assert_eq!(anthropic.drifts.len(), 1);
    assert_eq!(anthropic.drifts[0].kind, DriftKind::OutputSchemaNotSent);
    assert_eq!(anthropic.drifts[0].schema, Part::Output);
    let openapi = compare(&tool, &render(Adapter::Openapi, &tool));
    let output: Vec<_> = openapi.drifts.iter().filter(|d| d.schema == Part::Output).collect();
    assert_eq!(output.len(), 1, "{openapi:?}");
    assert_eq!(output[0].pointer, "/outputSchema/properties/count/minimum");
}

#[test]
fn an_identical_rendering_has_no_drift() {
    let schema: Value = json!({"type": "object", "properties": {"q": {"type": "string", "description": "Query."}}, "required": ["q"]});
    let tool = Tool::new("same", schema);
    assert!(drifts(Adapter::Mcp, &tool).is_empty());
    assert!(drifts(Adapter::Openapi, &tool).is_empty(), "{:?}", drifts(Adapter::Openapi, &tool));
}
