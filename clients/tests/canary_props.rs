//! Canary validity as a property: for random tool schemas and every adapter, each canary fits the
//! schema it is claimed to fit and fails the other (checked with a validator built here), and
//! rendering, comparison and search never panic.

use mcp_fuzz_clients::canary::{self, Direction};
use mcp_fuzz_clients::diff::compare;
use mcp_fuzz_clients::{Adapter, Tool, render};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        (proptest::option::of(0_u64..4), proptest::option::of(4_u64..9), any::<bool>()).prop_map(
            |(min, max, pattern)| {
                let mut s = json!({"type": "string", "description": "text"});
                if let Some(min) = min {
                    s["minLength"] = json!(min);
                }
                if let Some(max) = max {
                    s["maxLength"] = json!(max);
                }
                if pattern {
                    s["pattern"] = json!("^[a-c]*$");
                }
                s
            }
        ),
        (proptest::option::of(-5_i64..5), proptest::option::of(5_i64..50)).prop_map(
            |(min, max)| {
                let mut s = json!({"type": "integer"});
                if let Some(min) = min {
                    s["minimum"] = json!(min);
                }
                if let Some(max) = max {
                    s["exclusiveMaximum"] = json!(max);
                }
                s
            }
        ),
        Just(json!({"enum": ["a", "b"]})),
        Just(json!({"const": 3})),
        Just(json!({"type": ["string", "null"]})),
        Just(json!({"type": "string", "format": "email"})),
        Just(json!({"anyOf": [{"type": "string"}, {"type": "boolean"}]})),
        Just(json!({"oneOf": [{"type": "integer"}, {"type": "string", "maxLength": 2}]})),
        (0_u64..3, proptest::option::of(2_u64..5), any::<bool>()).prop_map(|(min, max, unique)| {
            let mut s = json!({"type": "array", "items": {"type": "integer"}, "minItems": min});
            if let Some(max) = max {
                s["maxItems"] = json!(max);
            }
            if unique {
                s["uniqueItems"] = json!(true);
            }
            s
        }),
    ]
}

fn object(depth: u32) -> BoxedStrategy<Value> {
    let child = if depth == 0 {
        leaf().boxed()
    } else {
        prop_oneof![3 => leaf(), 1 => object(depth - 1)].boxed()
    };
    (
        proptest::collection::btree_map("[a-e]", child, 0..4),
        any::<u8>(),
        prop_oneof![Just(None), Just(Some(json!(false))), Just(Some(json!({"type": "string"})))],
    )
        .prop_map(|(properties, required_bits, additional)| {
            let required: Vec<Value> = properties
                .keys()
                .enumerate()
                .filter(|(i, _)| required_bits & (1 << i) != 0)
                .map(|(_, k)| Value::String(k.clone()))
                .collect();
            let mut s = Map::new();
            s.insert("type".into(), json!("object"));
            s.insert("properties".into(), Value::Object(properties.into_iter().collect()));
            s.insert("required".into(), Value::Array(required));
            if let Some(additional) = additional {
                s.insert("additionalProperties".into(), additional);
            }
            Value::Object(s)
        })
        .boxed()
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::options().should_validate_formats(true).build(schema).expect("the schema compiles")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn canaries_fit_one_schema_and_fail_the_other(schema in object(2), seed in 0_u64..4) {
        let tool = Tool::new("t", schema);
        for adapter in Adapter::ALL {
            let rendering = render(adapter, &tool);
            let comparison = compare(&tool, &rendering);
            let Some(rendered) = &rendering.input else {
                prop_assert!(rendering.rejected());
                continue;
            };
            let found = canary::find(tool.input(), rendered, seed);
            let (server, client) = (validator(tool.input()), validator(rendered));
            for c in &found.canaries {
                let (fits, fails) = match c.direction {
                    Direction::RenderedAllowsServerRejects => (&client, &server),
                    Direction::ServerAllowsRenderedRejects => (&server, &client),
                };
                prop_assert!(fits.is_valid(&c.value), "{adapter}: {c:?} does not fit");
                prop_assert!(!fails.is_valid(&c.value), "{adapter}: {c:?} passes both");
                // A witness needs a drift that allows its direction.
                prop_assert!(comparison.canary_directions().contains(&c.direction), "{adapter}: {c:?} without a drift: {comparison:?}");
            }
            if !comparison.drifts() {
                prop_assert!(found.canaries.is_empty(), "{adapter}: canaries without drift: {found:?}");
            }
        }
    }
}
