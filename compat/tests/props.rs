//! Property tests of the diff: reflexivity, witnesses that really separate, and no `compatible`
//! where a witness exists. Also the reflexive proof over every corpus schema.

use mcp_fuzz_compat::capture::parse_capture;
use mcp_fuzz_compat::dialect::to_2020_12;
use mcp_fuzz_compat::diff::{Direction, Options, Verdict, diff};
use mcp_fuzz_compat::prove::Prover;
use mcp_fuzz_generators::Generator;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0_u64..4, 0_u64..6).prop_map(
            |(min, extra)| json!({"type": "string", "minLength": min, "maxLength": min + extra})
        ),
        (-50_i64..50, 0_i64..100, prop::option::of(1_u64..5)).prop_map(|(min, span, m)| {
            let mut s = json!({"type": "integer", "minimum": min, "maximum": min + span});
            if let Some(m) = m {
                s["multipleOf"] = json!(m);
                s["maximum"] = json!(min + span + 10);
            }
            s
        }),
        (-10.0_f64..10.0).prop_map(|min| json!({"type": "number", "exclusiveMinimum": min})),
        Just(json!({"type": "boolean"})),
        Just(json!({"type": ["string", "null"]})),
        prop::collection::btree_set("[a-e]", 1..4)
            .prop_map(|set| json!({"enum": set.into_iter().collect::<Vec<_>>()})),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            (prop::collection::btree_map("[p-t]", inner.clone(), 1..4), any::<bool>(), any::<u8>()).prop_map(
                |(props, closed, req)| {
                    let names: Vec<&String> = props.keys().collect();
                    let required: Vec<&String> =
                        names.iter().enumerate().filter(|(i, _)| req & (1 << i) != 0).map(|(_, n)| *n).collect();
                    let mut s = json!({"type": "object", "properties": props, "required": required});
                    if closed {
                        s["additionalProperties"] = json!(false);
                    }
                    s
                }
            ),
            (inner.clone(), 0_u64..3, any::<bool>()).prop_map(|(items, min, unique)| {
                json!({"type": "array", "items": items, "minItems": min, "maxItems": min + 3, "uniqueItems": unique && min == 0})
            }),
            (inner.clone(), inner).prop_map(|(a, b)| json!({"anyOf": [a, b]})),
        ]
    })
}

/// Applies narrowing number `choice` (modulo the sites found) to the schema: tightens a bound,
/// drops an enum member, requires a property, closes an object, removes `null`, adds minItems.
fn narrow(schema: &Value, choice: usize) -> Option<Value> {
    let mut sites = 0;
    let mut out = schema.clone();
    count(&out, &mut sites);
    if sites == 0 {
        return None;
    }
    let mut target = choice % sites;
    apply(&mut out, &mut target);
    (out != *schema).then_some(out)
}

fn narrowable(o: &Map<String, Value>) -> bool {
    o.contains_key("maxLength")
        || o.contains_key("maximum")
        || o.get("enum").and_then(Value::as_array).is_some_and(|e| e.len() > 1)
        || o.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty())
        || o.get("type") == Some(&json!(["string", "null"]))
        || o.get("type") == Some(&json!("array"))
        || o.contains_key("exclusiveMinimum")
}

fn count(v: &Value, sites: &mut usize) {
    if let Value::Object(o) = v {
        if narrowable(o) {
            *sites += 1;
        }
        for child in children(o) {
            count(child, sites);
        }
    }
}

fn children(o: &Map<String, Value>) -> Vec<&Value> {
    let mut out = Vec::new();
    if let Some(Value::Object(p)) = o.get("properties") {
        out.extend(p.values());
    }
    if let Some(items) = o.get("items") {
        out.push(items);
    }
    if let Some(Value::Array(branches)) = o.get("anyOf") {
        out.extend(branches);
    }
    out
}

fn apply(v: &mut Value, target: &mut usize) -> bool {
    let Value::Object(o) = v else { return false };
    if narrowable(o) {
        if *target == 0 {
            if let Some(max) = o.get("maxLength").and_then(Value::as_u64) {
                o.insert(
                    "maxLength".into(),
                    json!(
                        max.saturating_sub(1)
                            .max(o.get("minLength").and_then(Value::as_u64).unwrap_or(0))
                    ),
                );
                o.insert("minLength".into(), json!(0));
            } else if let Some(max) = o.get("maximum").and_then(Value::as_i64) {
                o.insert("maximum".into(), json!(max - 1));
                o.insert("minimum".into(), json!(max - 1 - 3));
            } else if let Some(Value::Array(e)) = o.get_mut("enum") {
                e.pop();
            } else if let Some(Value::Object(p)) = o.get("properties") {
                let names: Vec<String> = p.keys().cloned().collect();
                let required = o.entry("required").or_insert_with(|| json!([]));
                let list = required.as_array_mut().expect("required is an array");
                match names.iter().find(|n| !list.contains(&json!(n))) {
                    Some(n) => list.push(json!(n)),
                    None => {
                        o.insert("additionalProperties".into(), json!(false));
                        o.insert("maxProperties".into(), json!(names.len().saturating_sub(1)));
                    }
                }
            } else if o.get("type") == Some(&json!(["string", "null"])) {
                o.insert("type".into(), json!("string"));
            } else if o.get("type") == Some(&json!("array")) {
                let min = o.get("minItems").and_then(Value::as_u64).unwrap_or(0);
                o.insert("minItems".into(), json!(min + 1));
                o.insert("maxItems".into(), json!(min + 3));
            } else if let Some(m) = o.get("exclusiveMinimum").and_then(Value::as_f64) {
                o.insert("exclusiveMinimum".into(), json!(m + 0.5));
            }
            return true;
        }
        *target -= 1;
    }
    for key in ["properties", "items", "anyOf"] {
        match o.get_mut(key) {
            Some(Value::Object(p)) if key == "properties" => {
                for child in p.values_mut() {
                    if apply(child, target) {
                        return true;
                    }
                }
            }
            Some(Value::Array(branches)) if key == "anyOf" => {
                for child in branches {
                    if apply(child, target) {
                        return true;
                    }
                }
            }
            Some(child) if key == "items" => {
                return apply(child, target);
            }
            _ => {}
        }
    }
    false
}

fn tool_capture(input: &Value) -> mcp_fuzz_compat::capture::Capture {
    parse_capture(&json!({"tools": [{"name": "t", "inputSchema": {"type": "object", "properties": {"x": input}, "required": ["x"], "additionalProperties": false}}]}).to_string())
        .expect("capture")
}

fn wrap(s: &Value) -> Value {
    json!({"type": "object", "properties": {"x": s}, "required": ["x"], "additionalProperties": false})
}

fn oracle(schema: &Value) -> jsonschema::Validator {
    jsonschema::options().should_validate_formats(true).build(schema).expect("builds")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_schema_is_included_in_itself(s in schema()) {
        let result = Prover::new(&s, &s).without_equality_shortcut().includes();
        prop_assert!(result.is_ok(), "{s}: {result:?}");
        let capture = tool_capture(&s);
        let d = diff(&capture, &capture, &Options::default());
        prop_assert!(d.entries.iter().all(|e| e.verdict == Verdict::Compatible));
    }

    #[test]
    fn witnesses_separate_and_compatible_is_never_claimed_over_a_witness(s in schema(), choice in 0_usize..16, seed in 0_u64..1000) {
        let Some(n) = narrow(&s, choice) else { return Ok(()) };
        let (old, new) = (tool_capture(&s), tool_capture(&n));
        let options = Options { seed, ..Options::default() };
        let d = diff(&old, &new, &options);
        let input = d.entries.iter().find(|e| e.direction == Direction::Input).expect("input entry");
        let (vs, vn) = (oracle(&wrap(&s)), oracle(&wrap(&n)));
        if let Some(w) = &input.witness {
            prop_assert!(vs.is_valid(&w.value) && !vn.is_valid(&w.value), "{s} -> {n}: witness {}", w.value);
        }
        if input.verdict == Verdict::Compatible {
            // An independent search: many valid values of the old schema, all must pass the new.
            let generator = Generator::compile(&wrap(&s)).expect("compiles");
            let mut sampler = generator.sampler(seed.wrapping_add(17));
            for value in generator.boundary().unwrap_or_default() {
                prop_assert!(vn.is_valid(&value), "compatible claimed for {s} -> {n} but {value} breaks");
            }
            for _ in 0..300 {
                let Ok(value) = sampler.valid() else { break };
                prop_assert!(vn.is_valid(&value), "compatible claimed for {s} -> {n} but {value} breaks");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Unrelated pairs: whenever the prover claims inclusion, no value of the first schema (its
    /// boundary values and 200 random ones) fails the second.
    #[test]
    fn proofs_over_unrelated_and_widened_pairs_are_sound(
        a in schema(), b in schema(), choice in 0_usize..16, widen in any::<bool>(), seed in 0_u64..1000,
    ) {
        // Either two unrelated schemas, or a narrowing of `b` against `b` (mostly included).
        let a = if widen { narrow(&b, choice).unwrap_or(a) } else { a };
        let (wa, wb) = (wrap(&a), wrap(&b));
        if Prover::new(&wa, &wb).without_equality_shortcut().includes().is_err() {
            return Ok(());
        }
        no_value_breaks(&wa, &wb, seed)?;
    }

    /// A target `not`: whenever the prover claims `a ⊆ (a ∧ ¬c)` (that is, `a` and `c` are
    /// disjoint), no value of `a` matches `c`.
    #[test]
    fn proofs_through_a_target_not_are_sound(a in schema(), c in schema(), seed in 0_u64..1000) {
        let mut b = a.clone();
        let Some(o) = b.as_object_mut() else { return Ok(()) };
        o.insert("not".into(), c);
        let (wa, wb) = (wrap(&a), wrap(&b));
        if Prover::new(&wa, &wb).without_equality_shortcut().includes().is_err() {
            return Ok(());
        }
        no_value_breaks(&wa, &wb, seed)?;
    }
}

/// The boundary values and 200 random values of `wa` all validate against `wb`.
fn no_value_breaks(wa: &Value, wb: &Value, seed: u64) -> Result<(), TestCaseError> {
    let vb = oracle(wb);
    let generator = Generator::compile(wa).expect("compiles");
    for value in generator.boundary().unwrap_or_default() {
        prop_assert!(vb.is_valid(&value), "proved {wa} ⊆ {wb} but {value} breaks");
    }
    let mut sampler = generator.sampler(seed);
    for _ in 0..200 {
        let Ok(value) = sampler.valid() else { break };
        prop_assert!(vb.is_valid(&value), "proved {wa} ⊆ {wb} but {value} breaks");
    }
    Ok(())
}

#[test]
fn corpus_schemas_are_proved_included_in_themselves_structurally() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/tools-list");
    let (mut schemas, mut proved, mut unproved) = (0, 0, Vec::new());
    for ecosystem in ["npm", "pypi"] {
        for entry in std::fs::read_dir(format!("{root}/{ecosystem}")).expect("corpus dir") {
            let path = entry.expect("entry").path();
            let capture =
                parse_capture(&std::fs::read_to_string(&path).expect("read")).expect("parses");
            let d = diff(&capture, &capture, &Options::default());
            assert!(
                d.entries.iter().all(|e| e.verdict == Verdict::Compatible),
                "{}",
                path.display()
            );
            for tool in &capture.tools {
                for schema in tool.input_schema.iter().chain(tool.output_schema.iter()) {
                    schemas += 1;
                    let Ok(generator) = Generator::compile(schema) else { continue };
                    let normalized = to_2020_12(schema, generator.dialect());
                    match Prover::new(&normalized, &normalized)
                        .without_equality_shortcut()
                        .includes()
                    {
                        Ok(()) => proved += 1,
                        Err(reason) => {
                            unproved.push(format!("{} {}: {reason}", path.display(), tool.name))
                        }
                    }
                }
            }
        }
    }
    assert_eq!(schemas, 1826);
    // Measured: the rules alone prove every corpus schema included in itself.
    assert_eq!(
        proved,
        schemas,
        "{proved}/{schemas} proved; first unproved:\n{}",
        unproved.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
    );
}

/// Cross pairs of real corpus schemas (same tool name, schemas from two different tools): no
/// panic, every witness separates the two (checked here), and a `compatible` verdict survives the
/// boundary values and 100 random values of the old schema.
#[test]
fn cross_pairs_of_corpus_schemas_are_judged_soundly() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/tools-list");
    let mut schemas: Vec<Value> = Vec::new();
    let mut files: Vec<_> = ["npm", "pypi"]
        .iter()
        .flat_map(|e| {
            std::fs::read_dir(format!("{root}/{e}"))
                .expect("corpus")
                .map(|f| f.expect("entry").path())
        })
        .collect();
    files.sort();
    for path in files {
        let capture =
            parse_capture(&std::fs::read_to_string(&path).expect("read")).expect("parses");
        schemas.extend(capture.tools.into_iter().filter_map(|t| t.input_schema));
    }
    let n = schemas.len();
    let options = Options { max_candidates: 100, ..Options::default() };
    let (mut compatible, mut breaking, mut unknown) = (0, 0, 0);
    for i in 0..300 {
        let (a, b) = (&schemas[(i * 7919) % n], &schemas[(i * 104_729 + 13) % n]);
        let capture = |s: &Value| {
            parse_capture(&json!({"tools": [{"name": "t", "inputSchema": s}]}).to_string())
                .expect("capture")
        };
        let d = diff(&capture(a), &capture(b), &options);
        let entry = d.entries.iter().find(|e| e.direction == Direction::Input).expect("input");
        let (Ok(ga), Ok(gb)) = (Generator::compile(a), Generator::compile(b)) else { continue };
        match entry.verdict {
            Verdict::Breaking => {
                breaking += 1;
                let w = entry.witness.as_ref().expect("a break has a witness");
                assert!(ga.is_valid(&w.value) && !gb.is_valid(&w.value), "pair {i}: {}", w.value);
            }
            Verdict::Compatible => {
                compatible += 1;
                let mut sampler = ga.sampler(i as u64);
                let values = ga
                    .boundary()
                    .unwrap_or_default()
                    .into_iter()
                    .chain((0..100).filter_map(|_| sampler.valid().ok()));
                for value in values.filter(Value::is_object) {
                    assert!(
                        gb.is_valid(&value),
                        "pair {i}: compatible claimed, {value} breaks\n{a}\n{b}"
                    );
                }
            }
            _ => unknown += 1,
        }
    }
    // Most unrelated real schemas are incompatible, and the witness search shows it.
    assert!(
        breaking > 250 && compatible > 0 && unknown <= 3,
        "{compatible} compatible, {breaking} breaking, {unknown} unknown"
    );
}
