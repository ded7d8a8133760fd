//! Property tests of the generator itself.
//!
//! * Random schemas (types, `enum`, `const`, bounds with extreme values such as 10¹², `u64::MAX`,
//!   negatives and `min > max`, lengths, patterns from a small list, formats, objects, arrays,
//!   `anyOf`/`oneOf`/`allOf`/`not`, `$ref` into `$defs` including self-recursive ones): compiling
//!   never panics; a compiled schema's values keep the contract (valid values are valid, invalid
//!   ones invalid, for the generator's oracle and an independent `jsonschema` validator); an
//!   error is one of the documented kinds; heavy cases end through the error path.
//! * Determinism: the same seed gives the same values (valid, invalid, boundary, mutations),
//!   also across two compilations; different seeds usually give different values.
//! * Shrinking keeps values on their side: a shrunk valid value is still valid, a shrunk invalid
//!   value still invalid.
//! * Malformed and hostile schemas (wrong keyword shapes, 10,000-deep nesting, `$ref` cycles,
//!   remote `$ref`s, a 1 MB `enum`) give a typed error or a bounded result, never a panic.
//!
//! proptest runs with an explicit [`Config`] (fixed seed and case count, no failure persistence),
//! so results do not depend on `PROPTEST_*` variables and nothing is written to
//! `proptest-regressions/`. Every run has a watchdog that names the schema being checked if it
//! does not finish; if the process aborts instead (an allocation failure, a stack overflow),
//! `target/tmp/breadcrumbs/property-*` hold the schema and seed being checked.

mod common;

use common::{WORKER_STACK, breadcrumb, probe_values, quietly, reference_validator, show};
use mcp_fuzz_generators::{Generator, SchemaError, SchemaErrorKind, seeded_runner};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{
    Config, RngAlgorithm, RngSeed, TestCaseError, TestError, TestRunner, noop_result_cache,
};
use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A run that has not finished by then is reported as hung.
const DEADLINE: Duration = Duration::from_secs(600);

/// Values drawn per schema and side.
const DRAWS: usize = 3;

/// Boundary values and mutations checked per schema.
const CHECKED: usize = 64;

/// Steps of simplification followed per shrink check.
const SHRINK_STEPS: usize = 64;

/// A proptest configuration that pins every field that matters: case count, seed, no
/// persistence, shrink limits.
fn config(cases: u32) -> Config {
    Config {
        cases,
        max_local_rejects: 65_536,
        max_global_rejects: 1024,
        max_flat_map_regens: 1_000_000,
        failure_persistence: None,
        source_file: None,
        test_name: None,
        max_shrink_time: 0,
        max_shrink_iters: 2048,
        max_default_size_range: 100,
        result_cache: noop_result_cache,
        verbose: 0,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(0x6d63_702d_6675_7a7a),
        ..Config::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Random schemas.

/// Numbers for bounds: mostly small, sometimes extreme.
fn bound() -> BoxedStrategy<Value> {
    prop_oneof![
        4 => (-20_i64..20).prop_map(Value::from),
        2 => prop::sample::select(vec![
            json!(0),
            json!(-1),
            json!(0.5),
            json!(-2.5),
            json!(1e12),
            json!(-1e12),
            json!(1_000_000_000_000_u64),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(i64::MAX),
            json!(9_007_199_254_740_993_u64),
            json!(1e300),
            json!(-1e300),
            json!(1e-9),
        ]),
    ]
    .boxed()
}

/// Lengths and counts: mostly small, sometimes huge.
fn count() -> BoxedStrategy<Value> {
    prop_oneof![
        6 => (0_u64..6).prop_map(Value::from),
        1 => prop::sample::select(vec![
            json!(0),
            json!(100),
            json!(10_000),
            json!(1e12),
            json!(1_000_000_000_000_u64),
            json!(u64::MAX),
        ]),
    ]
    .boxed()
}

/// `multipleOf` values, including awkward ones.
fn multiple() -> BoxedStrategy<Value> {
    prop::sample::select(vec![
        json!(1),
        json!(2),
        json!(3),
        json!(0.5),
        json!(0.01),
        json!(1e-9),
        json!(7.3),
        json!(1e12),
    ])
    .boxed()
}

const PATTERNS: &[&str] = &[
    "^[a-z]+$",
    "^[0-9]{3}-[0-9]{4}$",
    "\\d+",
    "^(foo|bar)$",
    "[A-Z]",
    "^.{2,5}$",
    "^\\w+@\\w+\\.com$",
    "^(a+)+$",
    "^\\p{L}+$",
    "^$",
    "a{100}",
    "(?=a)\\w",
    "^(\\d)\\1$",
];

const FORMATS: &[&str] = &[
    "email",
    "date-time",
    "date",
    "time",
    "uuid",
    "uri",
    "ipv4",
    "ipv6",
    "hostname",
    "no-such-format",
];

const TYPES: &[&str] = &["null", "boolean", "integer", "number", "string", "array", "object"];

const NUMERIC: &[&str] = &["integer", "number"];

const NAMES: &[&str] = &["a", "b", "c", "d", "id", ""];

/// A small JSON scalar, for `enum` and `const`.
fn scalar() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-5_i64..5).prop_map(Value::from),
        "[a-c]{0,3}".prop_map(Value::from),
        bound(),
    ]
    .boxed()
}

/// Builds an object from optional keywords.
fn keywords(pairs: Vec<(&str, Option<Value>)>) -> Value {
    let map: Map<String, Value> =
        pairs.into_iter().filter_map(|(k, v)| v.map(|v| (k.to_owned(), v))).collect();
    Value::Object(map)
}

fn leaf() -> BoxedStrategy<Value> {
    let type_name = prop::sample::select(TYPES).prop_map(|t| json!(t));
    prop_oneof![
        1 => Just(json!(true)),
        1 => Just(json!(false)),
        1 => Just(json!({})),
        3 => type_name.clone().prop_map(|t| json!({ "type": t })),
        1 => (type_name.clone(), type_name).prop_map(|(a, b)| json!({ "type": [a, b] })),
        2 => prop::collection::vec(scalar(), 0..4).prop_map(|e| json!({ "enum": e })),
        1 => scalar().prop_map(|c| json!({ "const": c })),
        4 => (
            prop::sample::select(NUMERIC),
            prop::option::of(bound()),
            prop::option::of(bound()),
            prop::option::weighted(0.2, bound()),
            prop::option::weighted(0.2, bound()),
            prop::option::weighted(0.3, multiple()),
        )
            .prop_map(|(t, min, max, xmin, xmax, mult)| {
                keywords(vec![
                    ("type", Some(json!(t))),
                    ("minimum", min),
                    ("maximum", max),
                    ("exclusiveMinimum", xmin),
                    ("exclusiveMaximum", xmax),
                    ("multipleOf", mult),
                ])
            }),
        4 => (
            prop::option::of(count()),
            prop::option::of(count()),
            prop::option::weighted(0.4, prop::sample::select(PATTERNS)),
            prop::option::weighted(0.3, prop::sample::select(FORMATS)),
        )
            .prop_map(|(min, max, pattern, format)| {
                keywords(vec![
                    ("type", Some(json!("string"))),
                    ("minLength", min),
                    ("maxLength", max),
                    ("pattern", pattern.map(Value::from)),
                    ("format", format.map(Value::from)),
                ])
            }),
        1 => Just(json!({ "$ref": "#" })),
        1 => Just(json!({ "$ref": "#/$defs/node" })),
    ]
    .boxed()
}

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(NAMES).prop_map(str::to_owned)
}

fn with_children(inner: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
    let additional = prop_oneof![any::<bool>().prop_map(Value::from), inner.clone()];
    let object = (
        prop::collection::btree_map(name(), inner.clone(), 0..4),
        prop::collection::vec(name(), 0..3),
        prop::option::of(additional),
        prop::option::weighted(0.2, count()),
        prop::option::weighted(0.2, count()),
        any::<bool>(),
    )
        .prop_map(|(properties, required, additional, min, max, typed)| {
            keywords(vec![
                ("type", typed.then(|| json!("object"))),
                ("properties", Some(Value::Object(properties.into_iter().collect()))),
                ("required", Some(json!(required))),
                ("additionalProperties", additional),
                ("minProperties", min),
                ("maxProperties", max),
            ])
        });
    let array = (
        prop::option::of(inner.clone()),
        prop::option::of(count()),
        prop::option::of(count()),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(items, min, max, unique)| {
            keywords(vec![
                ("type", Some(json!("array"))),
                ("items", items),
                ("minItems", min),
                ("maxItems", max),
                ("uniqueItems", unique.map(Value::from)),
            ])
        });
    let several = || prop::collection::vec(inner.clone(), 1..4);
    prop_oneof![
        3 => object,
        3 => array,
        1 => several().prop_map(|s| json!({ "anyOf": s })),
        1 => several().prop_map(|s| json!({ "oneOf": s })),
        1 => several().prop_map(|s| json!({ "allOf": s })),
        1 => inner.clone().prop_map(|s| json!({ "not": s })),
    ]
    .boxed()
}

fn subschema() -> BoxedStrategy<Value> {
    leaf().prop_recursive(4, 24, 4, with_children).boxed()
}

/// A root schema: a subschema, usually with a `$defs/node` that the `$ref` leaves point at (it
/// can point at itself); without one, those `$ref`s dangle.
fn schema() -> BoxedStrategy<Value> {
    (subschema(), prop::option::weighted(0.9, subschema()))
        .prop_map(|(root, node)| {
            let Some(node) = node else { return root };
            let mut map = match root {
                Value::Object(map) => map,
                other => {
                    let mut map = Map::new();
                    map.insert("allOf".to_owned(), json!([other]));
                    map
                }
            };
            map.insert("$defs".to_owned(), json!({ "node": node }));
            Value::Object(map)
        })
        .boxed()
}

// ---------------------------------------------------------------------------------------------
// Running properties.

/// Runs a property over `strategy` with [`config`], on a worker thread with a watchdog, and
/// panics with the minimal failing input.
fn check_property(
    name: &str,
    cases: u32,
    strategy: fn() -> BoxedStrategy<(Value, u64)>,
    test: fn(&Value, u64) -> Result<(), TestCaseError>,
) {
    let current = Arc::new(Mutex::new(String::new()));
    let (sender, receiver) = mpsc::channel();
    let watched = current.clone();
    let crumb = format!("property-{name}");
    std::thread::Builder::new()
        .name(format!("property-{name}"))
        .stack_size(WORKER_STACK)
        .spawn(move || {
            let mut runner = TestRunner::new(config(cases));
            let (result, last_panic) = quietly(|| {
                runner.run(&strategy(), |(schema, seed)| {
                    *watched.lock().expect("current lock") = show(&schema);
                    breadcrumb(&crumb, &format!("seed {seed}\n{schema}\n"));
                    test(&schema, seed)
                })
            });
            let _ = sender.send((result, last_panic));
        })
        .expect("failed to spawn the property thread");
    let (result, last_panic) = match receiver.recv_timeout(DEADLINE) {
        Ok(done) => done,
        Err(RecvTimeoutError::Timeout) => panic!(
            "{name}: not finished after {DEADLINE:?}; still checking schema {}",
            current.lock().expect("current lock")
        ),
        Err(RecvTimeoutError::Disconnected) => panic!("{name}: the property thread died"),
    };
    match result {
        Ok(Ok(())) => {}
        Ok(Err(TestError::Fail(reason, (schema, seed)))) => panic!(
            "{name} failed: {reason}\nminimal schema: {schema}\nseed: {seed}{}",
            last_panic.map(|p| format!("\nlast panic: {p}")).unwrap_or_default()
        ),
        Ok(Err(TestError::Abort(reason))) => panic!("{name} aborted: {reason}"),
        Err(panic) => panic!("{name}: the runner panicked: {panic}"),
    }
}

fn schema_and_seed() -> BoxedStrategy<(Value, u64)> {
    (schema(), any::<u64>()).boxed()
}

fn fail(message: String) -> TestCaseError {
    TestCaseError::fail(message)
}

/// Error kinds a generation call may answer with for a well-formed, local schema.
fn generation_error_allowed(e: &SchemaError) -> bool {
    matches!(
        e.kind,
        SchemaErrorKind::Unsatisfiable(_)
            | SchemaErrorKind::Unsupported(_)
            | SchemaErrorKind::TooLarge(_)
            | SchemaErrorKind::TooDeep { .. }
    )
}

/// Compiles `schema`, checking compile errors against the reference. `Ok(None)` when it (rightly)
/// did not compile.
fn compile_checked(
    schema: &Value,
) -> Result<Option<(Generator, jsonschema::Validator)>, TestCaseError> {
    let reference = reference_validator(schema, None);
    match (Generator::compile(schema), reference) {
        (Ok(generator), Ok(reference)) => Ok(Some((generator, reference))),
        (Ok(_), Err(e)) => {
            Err(fail(format!("compiled, but the reference rejects the schema: {e}")))
        }
        (Err(e), Err(_)) => {
            if schema.pointer(&e.pointer).is_none() {
                return Err(fail(format!(
                    "error pointer {:?} is not in the schema: {e}",
                    e.pointer
                )));
            }
            Ok(None)
        }
        (Err(e), Ok(_)) => match e.kind {
            SchemaErrorKind::TooDeep { .. }
            | SchemaErrorKind::TooLarge(_)
            | SchemaErrorKind::Unsupported(_)
            | SchemaErrorKind::Unsatisfiable(_) => Ok(None),
            _ => Err(fail(format!("the reference accepts the schema, but compile says {e}"))),
        },
    }
}

/// The generation contract for one random schema.
fn generation_contract(schema: &Value, seed: u64) -> Result<(), TestCaseError> {
    let Some((generator, reference)) = compile_checked(schema)? else { return Ok(()) };
    let probes = probe_values();
    for probe in &probes {
        if generator.is_valid(probe) != reference.is_valid(probe) {
            return Err(fail(format!("the oracle and the reference disagree on {}", show(probe))));
        }
    }
    let satisfiable_witness = probes.iter().find(|p| reference.is_valid(p));
    let invalid_witness = probes.iter().find(|p| !reference.is_valid(p));

    let mut sampler = generator.sampler(seed);
    for _ in 0..DRAWS {
        match sampler.valid() {
            Ok(value) => {
                if !generator.is_valid(&value) || !reference.is_valid(&value) {
                    return Err(fail(format!("valid value is invalid: {}", show(&value))));
                }
            }
            Err(e) if matches!(e.kind, SchemaErrorKind::Unsatisfiable(_)) => {
                if let Some(witness) = satisfiable_witness {
                    return Err(fail(format!(
                        "said unsatisfiable ({e}), but {} is valid",
                        show(witness)
                    )));
                }
                break;
            }
            Err(e) if generation_error_allowed(&e) => break,
            Err(e) => return Err(fail(format!("valid(): unexpected error {}: {e}", e.code()))),
        }
    }
    for _ in 0..DRAWS {
        match sampler.invalid() {
            Ok(case) => {
                if generator.is_valid(&case.value) || reference.is_valid(&case.value) {
                    return Err(fail(format!(
                        "invalid value ({} at {:?}) is valid: {}",
                        case.label.mutation,
                        case.label.pointer,
                        show(&case.value)
                    )));
                }
            }
            Err(e) if e.kind == SchemaErrorKind::AcceptsEverything => {
                if let Some(witness) = invalid_witness {
                    return Err(fail(format!(
                        "said accepts-everything, but {} is invalid",
                        show(witness)
                    )));
                }
                break;
            }
            Err(e) if generation_error_allowed(&e) => break,
            Err(e) => return Err(fail(format!("invalid(): unexpected error {}: {e}", e.code()))),
        }
    }
    match generator.boundary() {
        Ok(values) => {
            for value in values.iter().take(CHECKED) {
                if !generator.is_valid(value) || !reference.is_valid(value) {
                    return Err(fail(format!("boundary value is invalid: {}", show(value))));
                }
            }
        }
        Err(e) if generation_error_allowed(&e) => {}
        Err(e) => return Err(fail(format!("boundary(): unexpected error {}: {e}", e.code()))),
    }
    match generator.mutations() {
        Ok(cases) => {
            for case in cases.iter().take(CHECKED) {
                if generator.is_valid(&case.value) || reference.is_valid(&case.value) {
                    return Err(fail(format!(
                        "mutation ({} at {:?}) is valid: {}",
                        case.label.mutation,
                        case.label.pointer,
                        show(&case.value)
                    )));
                }
            }
        }
        Err(e) if e.kind == SchemaErrorKind::AcceptsEverything || generation_error_allowed(&e) => {}
        Err(e) => return Err(fail(format!("mutations(): unexpected error {}: {e}", e.code()))),
    }
    Ok(())
}

#[test]
fn random_schemas_keep_the_generation_contract() {
    check_property("generation-contract", 192, schema_and_seed, generation_contract);
}

/// Everything a seed determines: valid and invalid draws, boundary values and mutations.
type Draws =
    (Vec<Result<Value, SchemaError>>, Vec<Result<mcp_fuzz_generators::Invalid, SchemaError>>);

fn draws(generator: &Generator, seed: u64) -> Draws {
    let mut sampler = generator.sampler(seed);
    let valid = (0..4).map(|_| sampler.valid()).collect();
    let invalid = (0..4).map(|_| sampler.invalid()).collect();
    (valid, invalid)
}

fn same_seed_same_values(schema: &Value, seed: u64) -> Result<(), TestCaseError> {
    let Ok(first) = Generator::compile(schema) else { return Ok(()) };
    let second =
        Generator::compile(schema).map_err(|e| fail(format!("compiled once, then failed: {e}")))?;
    let once = draws(&first, seed);
    prop_assert_eq!(&once, &draws(&first, seed), "same generator, same seed");
    prop_assert_eq!(&once, &draws(&second, seed), "second compilation, same seed");
    prop_assert_eq!(first.boundary(), second.boundary(), "boundary values");
    prop_assert_eq!(first.mutations(), second.mutations(), "mutations");
    prop_assert_eq!(first.dialect(), second.dialect());
    Ok(())
}

#[test]
fn same_seed_gives_same_values() {
    check_property("same-seed", 96, schema_and_seed, same_seed_same_values);
}

#[test]
fn different_seeds_usually_give_different_values() {
    let schemas = [
        json!({ "type": "string" }),
        json!({ "type": "integer" }),
        json!({ "type": "number", "minimum": -1000, "maximum": 1000 }),
        json!({ "type": "array", "items": { "type": "integer" }, "minItems": 1 }),
        json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "minLength": 1 },
                "age": { "type": "integer", "minimum": 0 },
                "tags": { "type": "array", "items": { "type": "string" } }
            },
            "required": ["name"]
        }),
    ];
    for schema in &schemas {
        let generator = Generator::compile(schema).expect("a plain schema compiles");
        let sequences: Vec<Draws> = (0..16).map(|seed| draws(&generator, seed)).collect();
        let valid_distinct =
            (1..sequences.len()).filter(|&i| sequences[i].0 != sequences[i - 1].0).count();
        let invalid_distinct =
            (1..sequences.len()).filter(|&i| sequences[i].1 != sequences[i - 1].1).count();
        assert!(
            valid_distinct >= 8 && invalid_distinct >= 8,
            "{schema}: of 15 neighbouring seed pairs only {valid_distinct} (valid) and \
             {invalid_distinct} (invalid) drew different values"
        );
    }
}

/// Shrinking a valid value keeps it valid; shrinking an invalid one keeps it invalid.
fn shrinking_keeps_sides(schema: &Value, seed: u64) -> Result<(), TestCaseError> {
    let Some((generator, reference)) = compile_checked(schema)? else { return Ok(()) };
    if let Ok(strategy) = generator.valid_strategy() {
        let mut runner = seeded_runner(seed);
        if let Ok(mut tree) = strategy.new_tree(&mut runner) {
            for step in 0..SHRINK_STEPS {
                let value = tree.current();
                if !reference.is_valid(&value) {
                    return Err(fail(format!(
                        "shrink step {step}: valid value became invalid: {}",
                        show(&value)
                    )));
                }
                if !tree.simplify() {
                    break;
                }
            }
        }
    }
    if let Ok(strategy) = generator.invalid_strategy() {
        let mut runner = seeded_runner(seed);
        if let Ok(mut tree) = strategy.new_tree(&mut runner) {
            for step in 0..SHRINK_STEPS {
                let case = tree.current();
                if reference.is_valid(&case.value) {
                    return Err(fail(format!(
                        "shrink step {step}: invalid value ({} at {:?}) became valid: {}",
                        case.label.mutation,
                        case.label.pointer,
                        show(&case.value)
                    )));
                }
                if !tree.simplify() {
                    break;
                }
            }
        }
    }
    Ok(())
}

#[test]
fn shrinking_keeps_values_on_their_side() {
    check_property("shrinking", 96, schema_and_seed, shrinking_keeps_sides);
}

// ---------------------------------------------------------------------------------------------
// Malformed and hostile schemas.

/// Runs `f` on a thread of `stack` bytes named `name`, failing if it does not finish by
/// [`DEADLINE`].
fn within<T: Send + 'static>(
    name: &str,
    stack: usize,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::Builder::new()
        .name(name.to_owned())
        .stack_size(stack)
        .spawn(move || {
            let _ = sender.send(f());
        })
        .expect("failed to spawn a test thread");
    match receiver.recv_timeout(DEADLINE) {
        Ok(value) => value,
        Err(RecvTimeoutError::Timeout) => panic!("{name}: not finished after {DEADLINE:?}"),
        Err(RecvTimeoutError::Disconnected) => panic!("{name}: the thread panicked (see above)"),
    }
}

/// Exercises every entry point once, checking what it returns; for schemas that compiled.
fn exercise(name: &str, generator: &Generator) {
    let mut sampler = generator.sampler(7);
    match sampler.valid() {
        Ok(value) => {
            assert!(generator.is_valid(&value), "{name}: valid value {} is invalid", show(&value))
        }
        Err(e) => assert!(generation_error_allowed(&e), "{name}: valid(): {e}"),
    }
    match sampler.invalid() {
        Ok(case) => {
            assert!(
                !generator.is_valid(&case.value),
                "{name}: invalid value {} is valid",
                show(&case.value)
            );
        }
        Err(e) => assert!(
            e.kind == SchemaErrorKind::AcceptsEverything || generation_error_allowed(&e),
            "{name}: invalid(): {e}"
        ),
    }
    match generator.boundary() {
        Ok(values) => {
            for value in values.iter().take(CHECKED) {
                assert!(
                    generator.is_valid(value),
                    "{name}: boundary value {} is invalid",
                    show(value)
                );
            }
        }
        Err(e) => assert!(generation_error_allowed(&e), "{name}: boundary(): {e}"),
    }
    match generator.mutations() {
        Ok(cases) => {
            for case in cases.iter().take(CHECKED) {
                assert!(
                    !generator.is_valid(&case.value),
                    "{name}: mutation {} is valid",
                    show(&case.value)
                );
            }
        }
        Err(e) => assert!(
            e.kind == SchemaErrorKind::AcceptsEverything || generation_error_allowed(&e),
            "{name}: mutations(): {e}"
        ),
    }
}

#[test]
fn malformed_schemas_are_malformed_errors_at_a_pointer_into_the_schema() {
    // (schema, where the error must point: a prefix of its pointer).
    let cases = [
        (json!({ "properties": [] }), ""),
        (json!({ "properties": [{ "type": "string" }] }), ""),
        (json!({ "required": "name" }), ""),
        (json!({ "type": 5 }), ""),
        (json!({ "type": "strng" }), ""),
        (json!({ "minimum": "1" }), ""),
        (json!({ "minLength": -1 }), ""),
        (json!({ "minLength": 1.5 }), ""),
        (json!({ "pattern": "[unclosed" }), ""),
        (json!({ "$ref": "#/$defs/missing" }), ""),
        (json!({ "properties": { "a": { "required": "x" } } }), "/properties/a"),
        (json!({ "properties": { "a": { "properties": [] } } }), "/properties/a"),
        (json!({ "items": { "type": 5 } }), "/items"),
        (json!({ "anyOf": [] }), ""),
        (json!(42), ""),
        (json!("object"), ""),
        (json!(null), ""),
        (json!([]), ""),
        (json!([{ "type": "string" }]), ""),
    ];
    let mut problems = Vec::new();
    for (schema, prefix) in &cases {
        let (result, _) = quietly(|| Generator::compile(schema).map(|_| ()));
        match result {
            Err(panic) => problems.push(format!("{schema}: compile panicked: {panic}")),
            Ok(Ok(())) => problems.push(format!("{schema}: compiled")),
            Ok(Err(e)) => {
                if !matches!(e.kind, SchemaErrorKind::Malformed(_)) {
                    problems.push(format!(
                        "{schema}: expected malformed-schema, got {}: {e}",
                        e.code()
                    ));
                }
                if schema.pointer(&e.pointer).is_none() || !e.pointer.starts_with(prefix) {
                    problems.push(format!(
                        "{schema}: pointer {:?} should be in the schema, under {prefix:?}",
                        e.pointer
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn unknown_dialect_is_noted_or_rejected() {
    let schema = json!({ "$schema": "http://example.com/my-dialect", "type": "string" });
    match Generator::compile(&schema) {
        Ok(generator) => {
            assert!(!generator.notes().is_empty(), "an unknown $schema should leave a note");
            exercise("unknown $schema", &generator);
        }
        Err(e) => assert!(matches!(e.kind, SchemaErrorKind::Malformed(_)), "{e}"),
    }
}

/// An object from its members, moving the values in.
fn object(members: Vec<(&str, Value)>) -> Value {
    Value::Object(members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// One level of nesting.
type Wrap = fn(Value) -> Value;

/// Builds `depth` levels of `wrap` around `{"type": "string"}` without recursion.
fn nested(depth: usize, wrap: Wrap) -> Value {
    let mut schema = json!({ "type": "string" });
    for _ in 0..depth {
        schema = wrap(schema);
    }
    schema
}

#[test]
fn deep_nesting_is_too_deep_or_bounded() {
    // A 10,000-deep `serde_json::Value` is dropped recursively: build and drop it on a big stack,
    // and compile it on a thread of ordinary size, where a recursive compiler would overflow.
    // The wraps move the inner schema into a new map: `json!` would serialize (copy) it each
    // time, quadratic in the depth.
    let wraps: [(&str, Wrap); 5] = [
        ("items", |s| object(vec![("items", s)])),
        ("properties", |s| {
            object(vec![
                ("type", json!("object")),
                ("properties", object(vec![("a", s)])),
                ("required", json!(["a"])),
            ])
        }),
        ("allOf", |s| object(vec![("allOf", Value::Array(vec![s]))])),
        ("anyOf", |s| object(vec![("anyOf", Value::Array(vec![s, json!({ "type": "null" })]))])),
        ("not", |s| object(vec![("not", s)])),
    ];
    within("deep-nesting", 256 << 20, move || {
        for (kind, wrap) in wraps {
            for depth in [100, 1_000, 10_000] {
                let schema = Arc::new(nested(depth, wrap));
                let name = format!("{kind}×{depth}");
                let shared = schema.clone();
                let label = name.clone();
                let outcome = within(&format!("compile-{name}"), WORKER_STACK, move || {
                    Generator::compile(&shared).map(|generator| exercise(&label, &generator))
                });
                match outcome {
                    Ok(()) => assert!(depth < 10_000, "{name}: a 10,000-deep schema compiled"),
                    Err(e) => assert!(
                        matches!(
                            e.kind,
                            SchemaErrorKind::TooDeep { .. } | SchemaErrorKind::TooLarge(_)
                        ),
                        "{name}: expected too-deep, got {}: {e}",
                        e.code()
                    ),
                }
                drop(schema);
            }
        }
    });
}

#[test]
fn ref_cycles_are_bounded() {
    let cases = [
        json!({ "$ref": "#" }),
        json!({ "$defs": { "a": { "$ref": "#/$defs/b" }, "b": { "$ref": "#/$defs/a" } }, "$ref": "#/$defs/a" }),
        json!({ "anyOf": [{ "$ref": "#" }] }),
        json!({ "allOf": [{ "$ref": "#" }], "type": "string" }),
        json!({ "not": { "$ref": "#" } }),
        json!({ "type": "object", "properties": { "a": { "$ref": "#" } }, "required": ["a"] }),
        json!({ "type": "array", "items": { "$ref": "#" }, "minItems": 1 }),
        json!({ "type": "object", "properties": { "next": { "$ref": "#" } } }),
    ];
    within("ref-cycles", WORKER_STACK, move || {
        for schema in &cases {
            let name = schema.to_string();
            match Generator::compile(schema) {
                Ok(generator) => exercise(&name, &generator),
                Err(e) => assert!(
                    !matches!(
                        e.kind,
                        SchemaErrorKind::RemoteRef(_) | SchemaErrorKind::AcceptsEverything
                    ),
                    "{name}: {e}"
                ),
            }
        }
    });
}

#[test]
fn remote_refs_are_remote_ref_errors_and_fetch_nothing() {
    // (schema, where the error must point: a prefix of its pointer).
    let cases = [
        (json!({ "$ref": "http://example.com/s.json" }), ""),
        (json!({ "$ref": "https://example.com/s.json#/$defs/a" }), ""),
        (json!({ "$ref": "file:///etc/passwd" }), ""),
        (
            json!({ "properties": { "a": { "$ref": "http://example.com/s.json" } } }),
            "/properties/a",
        ),
        (json!({ "items": { "$ref": "s.json" }, "$id": "http://example.com/root.json" }), ""),
    ];
    within("remote-refs", WORKER_STACK, move || {
        for (schema, prefix) in &cases {
            let started = Instant::now();
            let result = Generator::compile(schema);
            let elapsed = started.elapsed();
            let e = result.err().unwrap_or_else(|| panic!("{schema}: compiled"));
            assert!(
                matches!(e.kind, SchemaErrorKind::RemoteRef(_)),
                "{schema}: expected remote-ref, got {e}"
            );
            assert_eq!(e.code(), "remote-ref");
            assert!(
                e.pointer.starts_with(prefix),
                "{schema}: pointer {:?} not under {prefix:?}",
                e.pointer
            );
            assert!(
                elapsed < Duration::from_secs(5),
                "{schema}: took {elapsed:?}; was something fetched?"
            );
        }
    });
}

#[test]
fn huge_enum_is_too_large_or_bounded() {
    within("huge-enum", WORKER_STACK, || {
        let members: Vec<String> = (0..100_000).map(|i| format!("member-{i:06}")).collect();
        let schema = json!({ "type": "string", "enum": members });
        assert!(schema.to_string().len() > 1_000_000, "a 1 MB schema");
        let set: HashSet<&str> = members.iter().map(String::as_str).collect();
        let generator = match Generator::compile(&schema) {
            Ok(generator) => generator,
            Err(e) => {
                assert!(
                    matches!(e.kind, SchemaErrorKind::TooLarge(_)),
                    "expected too-large, got {e}"
                );
                return;
            }
        };
        let in_enum = |v: &Value| v.as_str().is_some_and(|s| set.contains(s));
        let mut sampler = generator.sampler(3);
        for _ in 0..5 {
            match sampler.valid() {
                Ok(value) => {
                    assert!(in_enum(&value), "valid value {} not in the enum", show(&value))
                }
                Err(e) => panic!("valid(): {e}"),
            }
            match sampler.invalid() {
                Ok(case) => assert!(
                    !in_enum(&case.value),
                    "invalid value {} in the enum",
                    show(&case.value)
                ),
                Err(e) => panic!("invalid(): {e}"),
            }
        }
        if let Ok(values) = generator.boundary() {
            assert!(values.len() <= 2 * members.len(), "{} boundary values", values.len());
            assert!(values.iter().all(in_enum), "a boundary value outside the enum");
        }
        if let Ok(cases) = generator.mutations() {
            assert!(cases.iter().all(|c| !in_enum(&c.value)), "a mutation inside the enum");
        }
    });
}
