//! Bad input never panics: schema-shaped garbage (JSON Schema keywords with values of any type,
//! broken `$ref`s, huge and fractional numbers, deep nesting) through the generator (whose values
//! must still keep the oracle contract), the compatibility diff (`mcp-fuzz diff`) and every
//! client adapter with its drift comparison and canary search (`mcp-fuzz clients`). A hang fails the test by never finishing; the diff also runs under its
//! own time budget.

use mcp_fuzz_clients::{Adapter, Tool, canary, diff::compare, listing_findings, render};
use mcp_fuzz_compat::capture::{Capture, Tool as CapturedTool};
use mcp_fuzz_compat::diff::{Options, diff};
use mcp_fuzz_generators::Generator;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::time::Duration;

/// Keywords whose values the code under test reads; the garbage puts anything under them.
const KEYWORDS: &str = "type properties required additionalProperties items prefixItems enum const \
    anyOf oneOf allOf not if then else $ref $defs definitions $id $anchor $schema minimum maximum \
    exclusiveMinimum exclusiveMaximum multipleOf minLength maxLength pattern format minItems \
    maxItems uniqueItems contains minContains maxContains minProperties maxProperties \
    patternProperties propertyNames dependentRequired dependentSchemas dependencies \
    unevaluatedProperties unevaluatedItems default examples nullable description title";

fn keyword() -> impl Strategy<Value = &'static str> {
    prop::sample::select(KEYWORDS.split_whitespace().collect::<Vec<_>>())
}

/// Sets `key` to `value` when there is one.
fn set(s: &mut Value, key: &str, value: Option<impl Into<Value>>) {
    if let Some(v) = value {
        s[key] = v.into();
    }
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop_oneof![Just(0_i64), Just(-1), Just(1), Just(i64::MIN), Just(i64::MAX), any::<i64>()]
            .prop_map(Value::from),
        prop_oneof![Just(0.5_f64), Just(1e308), Just(-1e-308), Just(1e-9), Just(0.1)]
            .prop_map(Value::from),
        Just(json!(u64::MAX)),
        prop_oneof![
            Just("string"),
            Just("object"),
            Just("array"),
            Just("integer"),
            Just("number"),
            Just("null"),
            Just("boolean"),
            Just("#"),
            Just("#/$defs/a"),
            Just("#/definitions/a"),
            Just("#/properties/a"),
            Just("#/%zz"),
            Just("#/$defs/%C3"),
            Just("#a"),
            Just("http://example.com/s.json"),
            Just("[a-"),
            Just("^(a+)+$"),
            Just("date-time"),
            Just("email"),
            Just("é"),
            Just(""),
        ]
        .prop_map(|s| Value::String(s.to_owned())),
    ]
}

fn garbage() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            3 => prop::collection::vec(
                (prop_oneof![4 => keyword(), 1 => Just("a")], inner.clone()),
                0..6,
            )
            .prop_map(|pairs| {
                Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect::<Map<_, _>>())
            }),
            1 => prop::collection::vec(inner, 0..4).prop_map(Value::Array),
        ]
    })
}

/// Schemas that mostly make sense (so the deep paths run: proofs, witnesses, renderings), with
/// extreme bounds, odd patterns and formats, recursive local `$ref`s, and a keyword of
/// garbage now and then.
fn plausible() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        4 => (
            prop::option::of(prop_oneof![Just(0_i64), Just(-5), Just(i64::MIN), any::<i64>()]),
            prop::option::of(prop_oneof![Just(10_i64), Just(i64::MAX), any::<i64>()]),
            prop::option::of(prop_oneof![Just(json!(3)), Just(json!(0.1)), Just(json!(1e-12))])
        )
            .prop_map(|(min, max, m)| {
                let mut s = json!({"type": "integer"});
                set(&mut s, "minimum", min);
                set(&mut s, "exclusiveMaximum", max);
                set(&mut s, "multipleOf", m);
                s
            }),
        4 => (
            prop::option::of(0_u64..5),
            prop::option::of(0_u64..9),
            prop::option::of(prop::sample::select(vec![
                "^[a-z]+$",
                "^(a+)+$",
                "\\p{L}",
                "[",
                "^\\d{3}-\\d{4}$"
            ])),
            prop::option::of(prop::sample::select(vec![
                "email",
                "date-time",
                "uri",
                "uuid",
                "ipv4",
                "bogus"
            ]))
        )
            .prop_map(|(min, max, pattern, format)| {
                let mut s = json!({"type": "string"});
                set(&mut s, "minLength", min);
                set(&mut s, "maxLength", max);
                set(&mut s, "pattern", pattern);
                set(&mut s, "format", format);
                s
            }),
        1 => Just(json!({"type": "number", "exclusiveMinimum": 0, "maximum": 1e308})),
        1 => Just(json!({"type": ["string", "null"]})),
        1 => Just(json!({"enum": [1, "a", null, {"k": []}]})),
        1 => Just(json!({"const": 1.5})),
        1 => Just(json!({"$ref": "#/$defs/node"})),
        1 => Just(json!(true)),
        1 => Just(json!(false)),
        1 => scalar(),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            4 => (prop::collection::btree_map("[a-d]", inner.clone(), 0..4),
                  prop::collection::btree_set(prop::sample::select(vec!["a", "b", "c", "zz"]), 0..3),
                  prop_oneof![Just(json!(false)), Just(json!(true)), inner.clone()])
                .prop_map(|(props, required, extra)| json!({
                    "type": "object",
                    "properties": props,
                    "required": required,
                    "additionalProperties": extra,
                    "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
                })),
            2 => (inner.clone(), 0_u64..3, prop::option::of(0_u64..4), any::<bool>())
                .prop_map(|(items, min, max, unique)| {
                    let mut s = json!({"type": "array", "items": items, "minItems": min, "uniqueItems": unique});
                    if let Some(m) = max { s["maxItems"] = json!(m); }
                    s
                }),
            1 => prop::collection::vec(inner.clone(), 1..3).prop_map(|v| json!({"anyOf": v})),
            1 => prop::collection::vec(inner.clone(), 1..3).prop_map(|v| json!({"oneOf": v})),
            1 => prop::collection::vec(inner.clone(), 1..3).prop_map(|v| json!({"allOf": v})),
            1 => inner.clone().prop_map(|v| json!({"not": v})),
            1 => (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(i, t, e)| json!({"if": i, "then": t, "else": e})),
            1 => (inner, keyword(), garbage())
                .prop_map(|(mut s, k, g)| {
                    if let Some(o) = s.as_object_mut() { o.insert(k.to_owned(), g); }
                    s
                }),
        ]
    })
}

fn schema() -> impl Strategy<Value = Value> {
    prop_oneof![1 => garbage(), 3 => plausible()]
}

/// A tool's `inputSchema`: mostly an object whose property holds the schema (what servers list).
fn top() -> impl Strategy<Value = Value> {
    prop_oneof![
        1 => schema(),
        3 => schema().prop_map(|s| json!({
            "type": "object",
            "properties": {"a": s},
            "required": ["a"],
            "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
        })),
    ]
}

fn capture(input: &Value, output: Option<&Value>) -> Capture {
    let mut raw = json!({"name": "t", "inputSchema": input});
    if let Some(o) = output {
        raw["outputSchema"] = o.clone();
    }
    Capture {
        tools: vec![CapturedTool {
            name: "t".into(),
            input_schema: Some(input.clone()),
            output_schema: output.cloned(),
            raw,
        }],
        ..Capture::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_generator_survives_garbage_and_keeps_the_oracle_contract(schema in top(), seed in 0_u64..1000) {
        let Ok(g) = Generator::compile(&schema) else { return Ok(()) };
        for v in g.boundary().unwrap_or_default() {
            prop_assert!(g.is_valid(&v), "{schema}: boundary {v}");
        }
        for m in g.mutations().unwrap_or_default() {
            prop_assert!(!g.is_valid(&m.value), "{schema}: mutation {}", m.value);
        }
        let mut sampler = g.sampler(seed);
        for _ in 0..8 {
            if let Ok(v) = sampler.valid() {
                prop_assert!(g.is_valid(&v), "{schema}: valid {v}");
            }
            if let Ok(i) = sampler.invalid() {
                prop_assert!(!g.is_valid(&i.value), "{schema}: invalid {}", i.value);
            }
        }
    }

    #[test]
    fn the_diff_survives_garbage(old in top(), new in top(), out in top()) {
        let options = Options {
            max_candidates: 64,
            time_budget: Duration::from_secs(5),
            ..Options::default()
        };
        let d = diff(&capture(&old, Some(&out)), &capture(&new, Some(&old)), &options);
        prop_assert!(!d.entries.is_empty());
        let same = diff(&capture(&old, None), &capture(&old, None), &options);
        prop_assert!(!same.entries.is_empty());
    }

    #[test]
    fn every_adapter_survives_garbage(schema in top(), seed in 0_u64..4) {
        let tool = Tool { output_schema: Some(schema.clone()), ..Tool::new("t", schema.clone()) };
        for adapter in Adapter::ALL {
            let rendering = render(adapter, &tool);
            let comparison = compare(&tool, &rendering);
            if let Some(input) = &rendering.input {
                let _ = canary::find_in(&schema, input, seed, &comparison.canary_directions());
            }
            let _ = listing_findings(adapter, std::slice::from_ref(&tool));
        }
    }
}
