//! Fuzzes the generator: bytes become a JSON Schema, which is compiled; when it compiles, a few
//! values are drawn with a seeded runner and checked against the generator's own oracle.
//!
//! The first byte picks how the rest is read: an even byte parses the rest as JSON (any JSON text
//! the fuzzer finds, including hostile shapes), an odd byte builds a schema-shaped value from the
//! rest with `arbitrary` (so short inputs reach deep into the keywords). The next eight bytes of
//! the rest seed the runner.
//!
//! A panic, an abort, a hang or a value on the wrong side of the oracle is a finding; a typed
//! `SchemaError` is not.

#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use mcp_fuzz_generators::{Generator, seeded_runner};
use proptest::strategy::{Strategy, ValueTree};
use serde_json::{Map, Value, json};

/// Nesting of the schemas built from `arbitrary`.
const MAX_DEPTH: u32 = 5;

/// Values drawn per strategy.
const DRAWS: usize = 3;

/// Boundary values and mutations checked per schema.
const CHECKED: usize = 16;

const TYPES: &[&str] = &["null", "boolean", "integer", "number", "string", "array", "object"];

const PATTERNS: &[&str] = &[
    "^[a-z]+$",
    "^[0-9]{3}-[0-9]{4}$",
    "\\d+",
    "^(foo|bar)$",
    "^.{2,5}$",
    "^\\w+@\\w+\\.com$",
    "^(a+)+$",
    "^\\p{L}+$",
    "(?=a)\\w",
    "^(\\d)\\1$",
    "[",
];

const FORMATS: &[&str] =
    &["email", "date-time", "date", "time", "uuid", "uri", "ipv4", "ipv6", "hostname", "regex"];

const NAMES: &[&str] = &["a", "b", "c", "id", "", "$ref"];

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let seed = rest.iter().take(8).fold(0_u64, |acc, &b| (acc << 8) | u64::from(b));
    let schema = if mode % 2 == 0 {
        match serde_json::from_slice::<Value>(rest) {
            Ok(schema) => schema,
            Err(_) => return,
        }
    } else {
        let mut u = Unstructured::new(rest);
        match root(&mut u) {
            Ok(schema) => schema,
            Err(_) => return,
        }
    };
    check(&schema, seed);
});

/// Compiles `schema` and, when it compiles, checks what the generator produces.
fn check(schema: &Value, seed: u64) {
    let Ok(generator) = Generator::compile(schema) else { return };
    if let Ok(strategy) = generator.valid_strategy() {
        let mut runner = seeded_runner(seed);
        for _ in 0..DRAWS {
            let Ok(tree) = strategy.new_tree(&mut runner) else { break };
            let value = tree.current();
            assert!(generator.is_valid(&value), "valid value {value} fails schema {schema}");
        }
    }
    if let Ok(strategy) = generator.invalid_strategy() {
        let mut runner = seeded_runner(seed ^ 1);
        for _ in 0..DRAWS {
            let Ok(tree) = strategy.new_tree(&mut runner) else { break };
            let case = tree.current();
            assert!(
                !generator.is_valid(&case.value),
                "invalid value {} ({} at {:?}) passes schema {schema}",
                case.value,
                case.label.mutation,
                case.label.pointer
            );
        }
    }
    if let Ok(values) = generator.boundary() {
        for value in values.iter().take(CHECKED) {
            assert!(generator.is_valid(value), "boundary value {value} fails schema {schema}");
        }
    }
    if let Ok(cases) = generator.mutations() {
        for case in cases.iter().take(CHECKED) {
            assert!(
                !generator.is_valid(&case.value),
                "mutation {} ({}) passes schema {schema}",
                case.value,
                case.label.mutation
            );
        }
    }
}

/// A root schema, sometimes with a `$defs/node` that `$ref` leaves point at.
fn root(u: &mut Unstructured<'_>) -> arbitrary::Result<Value> {
    let schema = subschema(u, 0)?;
    if !u.ratio(3, 4)? {
        return Ok(schema);
    }
    let node = subschema(u, 1)?;
    let mut map = match schema {
        Value::Object(map) => map,
        other => Map::from_iter([("allOf".to_owned(), json!([other]))]),
    };
    map.insert("$defs".to_owned(), json!({ "node": node }));
    Ok(Value::Object(map))
}

fn subschema(u: &mut Unstructured<'_>, depth: u32) -> arbitrary::Result<Value> {
    if depth >= MAX_DEPTH || u.is_empty() {
        return leaf(u);
    }
    let inner = depth + 1;
    Ok(match u.int_in_range(0_u8..=9)? {
        0..=3 => leaf(u)?,
        4 => {
            let mut properties = Map::new();
            for _ in 0..u.int_in_range(0_u8..=3)? {
                properties.insert((*u.choose(NAMES)?).to_owned(), subschema(u, inner)?);
            }
            let required: Vec<&str> = (0..u.int_in_range(0_u8..=2)?)
                .map(|_| u.choose(NAMES).copied())
                .collect::<arbitrary::Result<_>>()?;
            let mut map = Map::new();
            if u.arbitrary()? {
                map.insert("type".to_owned(), json!("object"));
            }
            map.insert("properties".to_owned(), Value::Object(properties));
            map.insert("required".to_owned(), json!(required));
            match u.int_in_range(0_u8..=3)? {
                0 => {
                    map.insert("additionalProperties".to_owned(), json!(false));
                }
                1 => {
                    map.insert("additionalProperties".to_owned(), subschema(u, inner)?);
                }
                _ => {}
            }
            optional(u, &mut map, "minProperties", count)?;
            optional(u, &mut map, "maxProperties", count)?;
            Value::Object(map)
        }
        5 => {
            let mut map = Map::from_iter([("type".to_owned(), json!("array"))]);
            if u.arbitrary()? {
                map.insert("items".to_owned(), subschema(u, inner)?);
            }
            optional(u, &mut map, "minItems", count)?;
            optional(u, &mut map, "maxItems", count)?;
            if u.arbitrary()? {
                map.insert("uniqueItems".to_owned(), json!(u.arbitrary::<bool>()?));
            }
            if u.ratio(1, 4)? {
                map.insert("contains".to_owned(), subschema(u, inner)?);
            }
            Value::Object(map)
        }
        6 => {
            let keyword = *u.choose(&["anyOf", "oneOf", "allOf"])?;
            let branches = (0..u.int_in_range(1_u8..=3)?)
                .map(|_| subschema(u, inner))
                .collect::<arbitrary::Result<Vec<_>>>()?;
            json!({ keyword: branches })
        }
        7 => json!({ "not": subschema(u, inner)? }),
        8 => json!({
            "if": subschema(u, inner)?,
            "then": subschema(u, inner)?,
            "else": subschema(u, inner)?,
        }),
        _ => json!({ "$ref": *u.choose(&["#", "#/$defs/node", "#/$defs/missing"])? }),
    })
}

fn leaf(u: &mut Unstructured<'_>) -> arbitrary::Result<Value> {
    Ok(match u.int_in_range(0_u8..=9)? {
        0 => json!(u.arbitrary::<bool>()?),
        1 => json!({}),
        2 => json!({ "type": *u.choose(TYPES)? }),
        3 => json!({ "type": [*u.choose(TYPES)?, *u.choose(TYPES)?] }),
        4 => {
            let members = (0..u.int_in_range(0_u8..=4)?)
                .map(|_| scalar(u))
                .collect::<arbitrary::Result<Vec<_>>>()?;
            json!({ "enum": members })
        }
        5 => json!({ "const": scalar(u)? }),
        6 | 7 => {
            let mut map =
                Map::from_iter([("type".to_owned(), json!(*u.choose(&["integer", "number"])?))]);
            for keyword in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
                optional(u, &mut map, keyword, number)?;
            }
            if u.ratio(1, 4)? {
                map.insert(
                    "multipleOf".to_owned(),
                    json!(*u.choose(&[1.0, 2.0, 0.5, 0.01, 1e-9, 7.3])?),
                );
            }
            Value::Object(map)
        }
        _ => {
            let mut map = Map::from_iter([("type".to_owned(), json!("string"))]);
            optional(u, &mut map, "minLength", count)?;
            optional(u, &mut map, "maxLength", count)?;
            if u.ratio(1, 3)? {
                map.insert("pattern".to_owned(), json!(*u.choose(PATTERNS)?));
            }
            if u.ratio(1, 4)? {
                map.insert("format".to_owned(), json!(*u.choose(FORMATS)?));
            }
            Value::Object(map)
        }
    })
}

/// Inserts `keyword` with a value from `make` half of the time.
fn optional(
    u: &mut Unstructured<'_>,
    map: &mut Map<String, Value>,
    keyword: &str,
    make: fn(&mut Unstructured<'_>) -> arbitrary::Result<Value>,
) -> arbitrary::Result<()> {
    if u.arbitrary()? {
        map.insert(keyword.to_owned(), make(u)?);
    }
    Ok(())
}

/// A bound: small, or extreme (10¹², `u64::MAX`, `i64::MIN`, ±1e300), or any finite float.
fn number(u: &mut Unstructured<'_>) -> arbitrary::Result<Value> {
    Ok(match u.int_in_range(0_u8..=3)? {
        0 | 1 => json!(u.int_in_range(-20_i64..=20)?),
        2 => json!(*u.choose(&[1e12, -1e12, 1e300, -1e300, 0.5, -2.5, 9_007_199_254_740_993.0])?),
        _ => match u.int_in_range(0_u8..=2)? {
            0 => json!(u64::MAX),
            1 => json!(i64::MIN),
            _ => json!(u.arbitrary::<f64>()?),
        },
    })
}

/// A length or count: small, or huge.
fn count(u: &mut Unstructured<'_>) -> arbitrary::Result<Value> {
    Ok(match u.int_in_range(0_u8..=5)? {
        0..=3 => json!(u.int_in_range(0_u64..=6)?),
        4 => json!(*u.choose(&[100_u64, 10_000, 1_000_000_000_000, u64::MAX])?),
        _ => json!(u.arbitrary::<u64>()?),
    })
}

/// A JSON scalar for `enum` and `const`.
fn scalar(u: &mut Unstructured<'_>) -> arbitrary::Result<Value> {
    Ok(match u.int_in_range(0_u8..=4)? {
        0 => Value::Null,
        1 => json!(u.arbitrary::<bool>()?),
        2 => json!(u.int_in_range(-5_i64..=5)?),
        3 => json!(u.arbitrary::<String>()?),
        _ => number(u)?,
    })
}
