//! One test per keyword (or keyword family): what the generator produces for a small schema that
//! uses it. Each checks the valid side (values satisfy the keyword, and the simplest value is the
//! expected one), the invalid side (the expected labelled mutation exists and the value really
//! violates that keyword), and the boundary values where they matter.

use mcp_fuzz_generators::{Generator, Invalid, Mutation, SchemaErrorKind};
use proptest::strategy::{Strategy, ValueTree};
use serde_json::{Value, json};

fn compile(schema: &Value) -> Generator {
    Generator::compile(schema).unwrap_or_else(|e| panic!("{schema} does not compile: {e}"))
}

fn valids(g: &Generator, n: usize) -> Vec<Value> {
    let mut s = g.sampler(42);
    (0..n).map(|_| s.valid().expect("valid draw")).collect()
}

fn invalids(g: &Generator, n: usize) -> Vec<Invalid> {
    let mut s = g.sampler(42);
    (0..n).map(|_| s.invalid().expect("invalid draw")).collect()
}

/// The fully shrunk valid value: what a failing case minimises towards.
fn simplest(g: &Generator) -> Value {
    let strategy = g.valid_strategy().expect("strategy");
    let mut runner = mcp_fuzz_generators::seeded_runner(3);
    let mut tree = strategy.new_tree(&mut runner).expect("tree");
    while tree.simplify() {}
    tree.current()
}

/// Every deterministic mutation and many random ones, checked against the oracle, and that
/// `mutation` at `pointer` (violating `keyword`) is among them.
fn assert_mutation(schema: &Value, mutation: Mutation, pointer: &str, keyword: &str) {
    let g = compile(schema);
    let mut all = g.mutations().expect("mutations");
    all.extend(invalids(&g, 300));
    for inv in &all {
        assert!(!g.is_valid(&inv.value), "{schema}: {inv:?} is labelled invalid but validates");
    }
    let hit = all.iter().find(|i| i.label.mutation == mutation && i.label.pointer == pointer);
    let hit = hit.unwrap_or_else(|| {
        let seen: Vec<String> =
            all.iter().map(|i| format!("{}@{}", i.label.mutation, i.label.pointer)).collect();
        panic!("{schema}: no {mutation} at `{pointer}`; saw {seen:?}")
    });
    assert_eq!(hit.label.keyword, keyword, "{schema}: {hit:?}");
    let violated = g.violations(&hit.value);
    assert!(
        violated.iter().any(|(at, kw)| kw == keyword
            || (keyword == "dependentRequired" && kw == "required")
            || (keyword.ends_with("Contains") && kw == "contains")
            || (!pointer.is_empty() && at.starts_with(pointer))),
        "{schema}: {hit:?} violates {violated:?}, not `{keyword}` at `{pointer}`"
    );
}

#[test]
fn type_and_null() {
    let s = json!({"type": ["integer", "null"]});
    let g = compile(&s);
    assert!(valids(&g, 200).iter().all(|v| v.is_null() || v.is_i64() || v.is_u64()));
    assert_eq!(simplest(&g), Value::Null, "a nullable value shrinks to null");
    assert_mutation(&s, Mutation::WrongType, "", "type");
    assert_mutation(&json!({"type": "string"}), Mutation::UnexpectedNull, "", "type");
}

#[test]
fn enum_and_const() {
    let s = json!({"enum": ["red", "green", 3]});
    let g = compile(&s);
    let members = [json!("red"), json!("green"), json!(3)];
    assert!(valids(&g, 100).iter().all(|v| members.contains(v)));
    assert!(
        members.iter().all(|m| g.boundary().expect("boundary").contains(m)),
        "each member is a boundary value"
    );
    assert_mutation(&s, Mutation::NotInEnum, "", "enum");
    assert_mutation(&json!({"const": "x"}), Mutation::NotConst, "", "const");
}

#[test]
fn numeric_bounds_and_neighbours() {
    let s = json!({"type": "integer", "minimum": 10, "exclusiveMaximum": 20});
    let g = compile(&s);
    assert!(valids(&g, 300).iter().all(|v| (10..20).contains(&v.as_i64().expect("int"))));
    assert_eq!(simplest(&g), json!(10));
    let b = g.boundary().expect("boundary");
    for v in [10, 11, 18, 19] {
        assert!(b.contains(&json!(v)), "boundary {b:?} lacks {v}");
    }
    assert_mutation(&s, Mutation::BelowMinimum, "", "minimum");
    assert_mutation(&s, Mutation::AboveMaximum, "", "exclusiveMaximum");
}

#[test]
fn draft4_boolean_exclusive_bounds() {
    let s = json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "number", "minimum": 0, "exclusiveMinimum": true});
    let g = compile(&s);
    assert!(valids(&g, 200).iter().all(|v| v.as_f64().expect("number") > 0.0));
    assert_mutation(&s, Mutation::BelowMinimum, "", "exclusiveMinimum");
}

#[test]
fn multiple_of_integer_and_fractional() {
    let s = json!({"type": "integer", "multipleOf": 7, "minimum": 1});
    let g = compile(&s);
    assert!(valids(&g, 200).iter().all(|v| v.as_i64().expect("int") % 7 == 0));
    assert_mutation(&s, Mutation::NotMultipleOf, "", "multipleOf");
    let s = json!({"type": "number", "multipleOf": 0.01, "maximum": 5});
    let g = compile(&s);
    assert!(valids(&g, 200).iter().all(|v| g.is_valid(v)));
    assert_mutation(&s, Mutation::NotMultipleOf, "", "multipleOf");
}

#[test]
fn string_lengths_in_code_points() {
    let s = json!({"type": "string", "minLength": 2, "maxLength": 4});
    let g = compile(&s);
    for v in valids(&g, 300) {
        let n = v.as_str().expect("string").chars().count();
        assert!((2..=4).contains(&n), "{v}");
    }
    assert_eq!(simplest(&g), json!("aa"), "strings shrink to the shortest, simplest");
    let b = g.boundary().expect("boundary");
    assert!(
        b.iter().any(|v| v.as_str().is_some_and(|s| s.contains('\u{1F600}'))),
        "an emoji boundary value: {b:?}"
    );
    assert_mutation(&s, Mutation::TooShort, "", "minLength");
    assert_mutation(&s, Mutation::TooLong, "", "maxLength");
}

#[test]
fn pattern_with_anchors_and_ascii_digits() {
    let s = json!({"type": "string", "pattern": "^[A-Z]{2}-\\d{3}$"});
    let g = compile(&s);
    for v in valids(&g, 300) {
        let t = v.as_str().expect("string");
        assert!(
            t.len() == 6
                && t.chars().nth(2) == Some('-')
                && t[3..].bytes().all(|b| b.is_ascii_digit()),
            "{t:?}"
        );
    }
    assert_mutation(&s, Mutation::PatternMismatch, "", "pattern");
}

#[test]
fn pattern_at_max_length() {
    let s = json!({"type": "string", "pattern": "^[a-z]+$", "maxLength": 5});
    let g = compile(&s);
    let vs = valids(&g, 500);
    assert!(vs.iter().any(|v| v.as_str().is_some_and(|t| t.len() == 5)), "strings reach maxLength");
    assert!(g.boundary().expect("boundary").iter().all(|v| g.is_valid(v)));
}

#[test]
fn unsupported_pattern_is_a_typed_error() {
    let g = compile(&json!({"type": "string", "pattern": "(a)\\1"}));
    let e = g.valid_strategy().expect_err("backreferences cannot be generated");
    assert!(matches!(e.kind, SchemaErrorKind::Unsupported(_)), "{e}");
}

#[test]
fn formats_are_generated_and_mismatched() {
    for f in [
        "date-time",
        "date",
        "time",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uuid",
        "json-pointer",
    ] {
        let s = json!({"type": "string", "format": f});
        let g = compile(&s);
        assert!(valids(&g, 100).iter().all(|v| g.is_valid(v)), "{f}");
        assert_mutation(&s, Mutation::FormatMismatch, "", "format");
    }
    let g = compile(&json!({"type": "integer", "format": "int32"}));
    assert!(valids(&g, 300).iter().all(|v| v.as_i64().is_some_and(|i| i32::try_from(i).is_ok())));
    assert!(g.boundary().expect("boundary").contains(&json!(i32::MAX)));
}

/// A `format` whose own generator never meets the `pattern` beside it: values come from the
/// pattern and are checked against the format instead (issue 12).
#[test]
fn format_uri_with_a_word_class_pattern_generates() {
    let s = json!({
        "type": "string",
        "format": "uri",
        "pattern": "^https://github\\.com/[\\w.-]+/[\\w.-]+$",
        "maxLength": 80
    });
    let g = compile(&s);
    let reference = jsonschema::options().should_validate_formats(true).build(&s).expect("builds");
    for v in valids(&g, 200) {
        assert!(reference.is_valid(&v), "{v} is not valid");
    }
    let b = g.boundary().expect("boundary");
    assert!(!b.is_empty() && b.iter().all(|v| reference.is_valid(v)), "{b:?}");
    assert_mutation(&s, Mutation::PatternMismatch, "", "pattern");
    assert_mutation(&s, Mutation::FormatMismatch, "", "format");
    // Inside an object, as a tool's property.
    let tool = json!({"type": "object", "properties": {"repo": s}, "required": ["repo"]});
    let g = compile(&tool);
    assert!(valids(&g, 50).iter().all(|v| g.is_valid(v)));
}

#[test]
fn objects_required_additional_and_shrinking() {
    let s = json!({
        "type": "object",
        "properties": {"id": {"type": "integer"}, "tag": {"type": "string"}, "n": {"type": "object", "properties": {"x": {"type": "boolean"}}, "required": ["x"]}},
        "required": ["id"],
        "additionalProperties": false
    });
    let g = compile(&s);
    assert_eq!(simplest(&g), json!({"id": 0}), "fewest optional properties");
    let b = g.boundary().expect("boundary");
    assert!(b.contains(&json!({"id": 0})), "only-required object");
    assert!(
        b.iter().any(|v| v.as_object().is_some_and(|o| o.len() == 3)),
        "all-properties object: {b:?}"
    );
    assert_mutation(&s, Mutation::MissingRequired, "/id", "required");
    assert_mutation(&s, Mutation::MissingRequired, "/n/x", "required");
    assert_mutation(&s, Mutation::WrongType, "/tag", "type");
    assert_mutation(&s, Mutation::WrongType, "/n/x", "type");
    assert_mutation(
        &s,
        Mutation::UnexpectedProperty,
        "/unexpected_property",
        "additionalProperties",
    );
}

#[test]
fn systematic_mutations_come_in_order() {
    let s = json!({"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}, "b": {"type": "integer"}}, "required": ["a", "b"]});
    let g = compile(&s);
    let ms = g.mutations().expect("mutations");
    let kinds: Vec<Mutation> = ms.iter().map(|m| m.label.mutation).collect();
    let first_other = kinds
        .iter()
        .position(|k| !matches!(k, Mutation::MissingRequired | Mutation::WrongType))
        .expect("others");
    assert!(kinds[..2].iter().all(|k| *k == Mutation::MissingRequired), "{kinds:?}");
    assert!(
        kinds[first_other..]
            .iter()
            .all(|k| !matches!(k, Mutation::MissingRequired | Mutation::WrongType)),
        "{kinds:?}"
    );
    let wrong: Vec<&str> = ms
        .iter()
        .filter(|m| m.label.mutation == Mutation::WrongType)
        .map(|m| m.label.pointer.as_str())
        .collect();
    assert_eq!(wrong, ["", "/a", "/b"], "one wrong-type case per location");
}

#[test]
fn maps_pattern_properties_and_property_names() {
    let s = json!({"type": "object", "additionalProperties": {"type": "integer"}, "propertyNames": {"pattern": "^[a-z]+$", "maxLength": 5}});
    let g = compile(&s);
    let vs = valids(&g, 300);
    assert!(vs.iter().any(|v| v.as_object().is_some_and(|o| !o.is_empty())), "maps get entries");
    assert!(vs.iter().all(|v| g.is_valid(v)));
    let s = json!({"type": "object", "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false});
    let g = compile(&s);
    assert!(
        valids(&g, 300)
            .iter()
            .any(|v| v.as_object().is_some_and(|o| o.keys().any(|k| k.starts_with("x-"))))
    );
}

#[test]
fn dependent_required_and_min_max_properties() {
    let s = json!({"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "dependentRequired": {"a": ["b"]}, "minProperties": 1, "maxProperties": 2});
    let g = compile(&s);
    for v in valids(&g, 300) {
        let o = v.as_object().expect("object");
        assert!((1..=2).contains(&o.len()) && (!o.contains_key("a") || o.contains_key("b")), "{v}");
    }
    assert_mutation(&s, Mutation::MissingDependency, "/b", "dependentRequired");
    assert_mutation(&s, Mutation::TooFewProperties, "", "minProperties");
}

#[test]
fn arrays_items_counts_uniqueness_contains() {
    let s = json!({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9}, "minItems": 1, "maxItems": 4, "uniqueItems": true});
    let g = compile(&s);
    for v in valids(&g, 300) {
        let a = v.as_array().expect("array");
        assert!((1..=4).contains(&a.len()), "{v}");
        let mut sorted: Vec<i64> = a.iter().map(|x| x.as_i64().expect("int")).collect();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), a.len(), "unique: {v}");
    }
    assert_eq!(simplest(&g), json!([0]));
    assert_mutation(&s, Mutation::TooFewItems, "", "minItems");
    assert_mutation(&s, Mutation::TooManyItems, "", "maxItems");
    assert_mutation(&s, Mutation::DuplicateItems, "", "uniqueItems");
    assert_mutation(&s, Mutation::AboveMaximum, "/0", "maximum");
    let s = json!({"type": "array", "contains": {"const": 5}, "minContains": 2, "maxContains": 3});
    let g = compile(&s);
    assert!(valids(&g, 200).iter().all(|v| g.is_valid(v)));
    assert_mutation(&s, Mutation::TooManyContains, "", "maxContains");
}

#[test]
fn tuples_prefix_items_and_draft7_items_array() {
    let s = json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false});
    let g = compile(&s);
    for v in valids(&g, 200) {
        let a = v.as_array().expect("array");
        assert!(a.len() <= 2 && a.first().is_none_or(Value::is_string), "{v}");
    }
    assert_mutation(&s, Mutation::ExtraItems, "/2", "items");
    let s = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "array", "items": [{"type": "string"}], "additionalItems": {"type": "boolean"}});
    let g = compile(&s);
    assert!(valids(&g, 200).iter().all(|v| g.is_valid(v)));
}

#[test]
fn refs_defs_and_recursion() {
    let s = json!({
        "$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["v"]}},
        "$ref": "#/$defs/node"
    });
    let g = compile(&s);
    let vs = valids(&g, 300);
    assert!(vs.iter().all(|v| g.is_valid(v)));
    assert!(
        vs.iter().any(|v| v["kids"].as_array().is_some_and(|k| !k.is_empty())),
        "recursion is explored"
    );
    assert_mutation(&s, Mutation::MissingRequired, "/v", "required");
    let s = json!({"definitions": {"a": {"type": "string"}}, "$schema": "http://json-schema.org/draft-07/schema#", "properties": {"x": {"$ref": "#/definitions/a"}}, "required": ["x"]});
    assert_mutation(&s, Mutation::WrongType, "/x", "type");
}

#[test]
fn required_cycles_are_unsatisfiable() {
    let s = json!({"$defs": {"a": {"type": "object", "properties": {"next": {"$ref": "#/$defs/a"}}, "required": ["next"]}}, "$ref": "#/$defs/a"});
    let e = compile(&s).valid_strategy().expect_err("no finite value");
    assert!(matches!(e.kind, SchemaErrorKind::Unsatisfiable(_)), "{e}");
}

#[test]
fn all_of_is_merged_not_filtered() {
    let s = json!({"allOf": [{"type": "object", "properties": {"a": {"type": "integer", "minimum": 5}}, "required": ["a"]}, {"properties": {"a": {"maximum": 6}, "b": {"type": "string"}}, "required": ["b"]}]});
    let g = compile(&s);
    for v in valids(&g, 300) {
        assert!(matches!(v["a"].as_i64(), Some(5 | 6)) && v["b"].is_string(), "{v}");
    }
    let e = compile(&json!({"allOf": [{"type": "string"}, {"type": "number"}]}))
        .valid_strategy()
        .expect_err("contradiction");
    assert!(matches!(e.kind, SchemaErrorKind::Unsatisfiable(_)), "{e}");
}

#[test]
fn any_of_one_of_not_and_conditionals() {
    let s =
        json!({"anyOf": [{"type": "string", "maxLength": 1}, {"type": "integer", "minimum": 100}]});
    let g = compile(&s);
    let vs = valids(&g, 300);
    assert!(
        vs.iter().any(Value::is_string) && vs.iter().any(Value::is_i64),
        "both branches: {vs:?}"
    );
    let s = json!({"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]});
    let g = compile(&s);
    assert!(valids(&g, 300).iter().all(|v| g.is_valid(v)));
    assert_mutation(&s, Mutation::MultipleOneOf, "", "oneOf");
    let s = json!({"type": "string", "not": {"enum": ["admin", "root"]}});
    assert_mutation(&s, Mutation::MatchesNot, "", "not");
    let s = json!({"type": "object", "properties": {"kind": {"enum": ["a", "b"]}, "x": {"type": "integer"}}, "required": ["kind"],
        "if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["x"]}, "else": {"not": {"required": ["x"]}}});
    let g = compile(&s);
    for v in valids(&g, 300) {
        assert_eq!(v["kind"] == json!("a"), v.get("x").is_some(), "{v}");
    }
}

#[test]
fn boolean_schemas_and_accepts_everything() {
    let e = compile(&json!(false)).valid_strategy().expect_err("false");
    assert!(matches!(e.kind, SchemaErrorKind::Unsatisfiable(_)));
    let g = compile(&json!(true));
    assert!(valids(&g, 50).iter().all(|v| g.is_valid(v)));
    for s in [
        json!(true),
        json!({}),
        json!({"description": "anything"}),
        json!({"anyOf": [{}, {"type": "string"}]}),
    ] {
        let e = compile(&s).invalid_strategy().expect_err("nothing is invalid");
        assert!(matches!(e.kind, SchemaErrorKind::AcceptsEverything), "{s}: {e}");
    }
}

#[test]
fn defaults_and_examples_seed_the_boundary() {
    let s = json!({"type": "object", "properties": {"limit": {"type": "integer", "default": 25, "examples": [77]}}});
    let b = compile(&s).boundary().expect("boundary");
    assert!(b.contains(&json!({"limit": 25})) && b.contains(&json!({"limit": 77})), "{b:?}");
}

#[test]
fn dialects_are_detected_and_unknown_falls_back() {
    for (uri, name) in [
        ("http://json-schema.org/draft-04/schema#", "draft-04"),
        ("http://json-schema.org/draft-06/schema#", "draft-06"),
        ("http://json-schema.org/draft-07/schema#", "draft-07"),
        ("https://json-schema.org/draft/2019-09/schema", "2019-09"),
        ("https://json-schema.org/draft/2020-12/schema", "2020-12"),
    ] {
        assert_eq!(compile(&json!({"$schema": uri})).dialect().as_str(), name);
    }
    let g = compile(&json!({"type": "string"}));
    assert_eq!(g.dialect().as_str(), "2020-12");
    assert!(g.notes().is_empty());
}

#[test]
fn same_seed_same_values() {
    let s = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "array", "items": {"type": "number"}}}});
    let g = compile(&s);
    let draw = |seed| {
        let mut sm = g.sampler(seed);
        (0..50)
            .map(|_| (sm.valid().expect("v"), sm.invalid().expect("i").value))
            .collect::<Vec<_>>()
    };
    assert_eq!(draw(9), draw(9));
    assert_ne!(draw(9), draw(10));
}

/// The reference validator of these tests: formats asserted, built here, not the generator's.
fn reference(schema: &Value) -> jsonschema::Validator {
    jsonschema::options().should_validate_formats(true).build(schema).expect("builds")
}

/// The boundary values of `schema`, each accepted by the reference validator.
fn checked_boundary(schema: &Value) -> Vec<Value> {
    let r = reference(schema);
    let b = compile(schema).boundary().expect("boundary");
    for v in &b {
        assert!(r.is_valid(v), "{schema}: boundary {v} is invalid");
    }
    b
}

/// The deterministic mutations of `schema`, each rejected by the reference validator.
fn checked_mutations(schema: &Value) -> Vec<Invalid> {
    let r = reference(schema);
    let ms = compile(schema).mutations().expect("mutations");
    for inv in &ms {
        assert!(!r.is_valid(&inv.value), "{schema}: mutation {inv:?} is valid");
    }
    ms
}

fn has_mutation(ms: &[Invalid], mutation: Mutation, keyword: &str, value: &Value) -> bool {
    ms.iter()
        .any(|i| i.label.mutation == mutation && i.label.keyword == keyword && &i.value == value)
}

/// Issue 12: integers at and past each bound at several distances, on the `multipleOf` grid.
#[test]
fn sharper_integer_bounds_respect_the_step() {
    let s = json!({"type": "integer", "minimum": 10, "maximum": 1000, "multipleOf": 5});
    let b = checked_boundary(&s);
    for v in [10, 15, 995, 1000] {
        assert!(b.contains(&json!(v)), "boundary {b:?} lacks {v}");
    }
    let ms = checked_mutations(&s);
    let r = reference(&s);
    // The nearest multiples outside violate the bound alone.
    for (v, mutation, kw) in
        [(5, Mutation::BelowMinimum, "minimum"), (1005, Mutation::AboveMaximum, "maximum")]
    {
        assert!(has_mutation(&ms, mutation, kw, &json!(v)), "no {mutation} {v}: {ms:?}");
        let kws: Vec<String> =
            r.iter_errors(&json!(v)).map(|e| e.kind().keyword().to_owned()).collect();
        assert_eq!(kws, [kw], "{v} violates only `{kw}`");
    }
    // -1, the first machine width past each bound, and the 64-bit extremes, as multiples of 5.
    for v in [-5_i64, -2_147_483_650, i64::MIN + 3] {
        assert!(has_mutation(&ms, Mutation::BelowMinimum, "minimum", &json!(v)), "{v}: {ms:?}");
    }
    for v in [2_147_483_650_i64, i64::MAX - 2] {
        assert!(has_mutation(&ms, Mutation::AboveMaximum, "maximum", &json!(v)), "{v}: {ms:?}");
    }
}

/// Issue 12: an open side reaches past `i32`, past exact doubles and to the `i64` extremes.
#[test]
fn sharper_integers_reach_the_machine_widths() {
    let b = checked_boundary(&json!({"type": "integer"}));
    for v in [
        json!(0),
        json!(-1),
        json!(2_147_483_647),
        json!(2_147_483_648_i64),
        json!(-2_147_483_649_i64),
        json!(9_007_199_254_740_993_i64),
        json!(-9_007_199_254_740_993_i64),
        json!(i64::MAX),
        json!(i64::MIN),
    ] {
        assert!(b.contains(&v), "boundary {b:?} lacks {v}");
    }
    let s = json!({"type": "integer", "minimum": 0});
    let b = checked_boundary(&s);
    assert!(b.contains(&json!(i64::MAX)) && b.contains(&json!(9_007_199_254_740_993_i64)));
    let ms = checked_mutations(&s);
    for v in [json!(-1), json!(-2_147_483_648_i64), json!(i64::MIN)] {
        assert!(has_mutation(&ms, Mutation::BelowMinimum, "minimum", &v), "{v}: {ms:?}");
    }
    let s = json!({"type": "integer", "exclusiveMaximum": 0});
    let ms = checked_mutations(&s);
    for v in [json!(0), json!(2_147_483_648_i64), json!(i64::MAX)] {
        assert!(has_mutation(&ms, Mutation::AboveMaximum, "exclusiveMaximum", &v), "{v}: {ms:?}");
    }
}

/// Issue 12: a `number` bound and the next representable number on either side of it.
#[test]
fn sharper_number_bounds_use_the_next_representable_number() {
    let s = json!({"type": "number", "minimum": 0, "exclusiveMaximum": 1});
    let b = checked_boundary(&s);
    for v in [json!(0), json!(f64::from_bits(1)), json!(1.0_f64.next_down())] {
        assert!(b.contains(&v), "boundary {b:?} lacks {v}");
    }
    let ms = checked_mutations(&s);
    assert!(has_mutation(&ms, Mutation::BelowMinimum, "minimum", &json!(-f64::from_bits(1))));
    assert!(has_mutation(&ms, Mutation::AboveMaximum, "exclusiveMaximum", &json!(1)));
    let s = json!({"type": "number", "exclusiveMinimum": 2.5});
    let b = checked_boundary(&s);
    assert!(b.contains(&json!(2.5_f64.next_up())), "{b:?}");
    let ms = checked_mutations(&s);
    assert!(has_mutation(&ms, Mutation::BelowMinimum, "exclusiveMinimum", &json!(2.5)));
    assert!(has_mutation(&ms, Mutation::BelowMinimum, "exclusiveMinimum", &json!(i64::MIN)));
}

/// Issue 12: strings at each length limit in characters that code points (what JSON Schema
/// counts), UTF-16 units and graphemes count apart, and just past the limits.
#[test]
fn sharper_string_lengths_in_code_points_not_utf16() {
    let s = json!({"type": "string", "minLength": 3, "maxLength": 5});
    let b = checked_boundary(&s);
    let astral5 = "\u{1F600}".repeat(5);
    assert_eq!(astral5.encode_utf16().count(), 10, "twice the limit in UTF-16 units");
    for v in ["\u{1F600}".repeat(3), astral5] {
        assert!(b.contains(&json!(v)), "boundary {b:?} lacks {v:?}");
    }
    assert!(
        b.iter().filter_map(Value::as_str).any(|t| t.chars().count() == 5
            && t.contains('\u{301}')
            && t.contains('\u{200B}')
            && t.contains('\u{0}')),
        "a mixed limit string: {b:?}"
    );
    let ms = checked_mutations(&s);
    // Two astral characters: 4 UTF-16 units, which a `length >= 3` check would pass.
    assert!(has_mutation(&ms, Mutation::TooShort, "minLength", &json!("\u{1F600}\u{1F600}")));
    assert!(has_mutation(&ms, Mutation::TooLong, "maxLength", &json!("e\u{301}e\u{301}e\u{301}")));
    assert!(has_mutation(&ms, Mutation::TooLong, "maxLength", &json!("a\u{0}aaaa")));
    let b = checked_boundary(&json!({"type": "string"}));
    assert!(b.contains(&json!("a\u{200B}\u{200D}b")), "a zero-width boundary value: {b:?}");
}

/// Issue 12: every tricky member of each format's corpus is a boundary value, and valid.
#[test]
fn format_corpora_are_boundary_values() {
    let expected: &[(&str, &[&str])] = &[
        ("email", &["first.last+tag@example.com", "\"quoted.local\"@example.com"]),
        (
            "uri",
            &[
                "http://[::1]:8080/",
                "https://user:p%40ss@example.com:8443/a%20b?q=1&r=%E2%82%AC#frag",
            ],
        ),
        ("date-time", &["2024-02-29T23:59:59.999999+05:30", "2024-12-31t23:59:59z"]),
        ("date", &["2024-02-29"]),
        ("hostname", &["xn--bcher-kva.example"]),
        ("ipv4", &["255.255.255.255"]),
        ("ipv6", &["::ffff:192.0.2.1", "::"]),
    ];
    for (f, members) in expected {
        let b = checked_boundary(&json!({"type": "string", "format": f}));
        for m in *members {
            assert!(b.contains(&json!(m)), "{f}: boundary {b:?} lacks {m:?}");
        }
    }
    // Members longer than `maxLength` are left out, not sent as boundary values.
    let b = checked_boundary(&json!({"type": "string", "format": "uri", "maxLength": 20}));
    assert!(b.iter().filter_map(Value::as_str).all(|t| t.chars().count() <= 20), "{b:?}");
    assert!(b.contains(&json!("http://[::1]:8080/")), "{b:?}");
}

/// Issue 12: the sharper cases stay few per location (the engine spends them from a per-tool
/// budget). Issue 30 item 6 added two edges inside `[0, 1]` (the smallest subnormal and 1e-7)
/// and three line breaks to plain strings.
#[test]
fn deterministic_cases_per_location_stay_bounded() {
    for (s, boundary, mutations) in [
        (json!({"type": "integer"}), 11, 2),
        (json!({"type": "integer", "minimum": 1, "maximum": 100}), 4, 9),
        (json!({"type": "number", "minimum": 0, "maximum": 1}), 7, 10),
        (json!({"type": "string", "minLength": 2, "maxLength": 10}), 17, 7),
        (json!({"type": "string", "format": "uri"}), 8, 3),
    ] {
        let g = compile(&s);
        let (b, m) = (g.boundary().expect("boundary").len(), g.mutations().expect("m").len());
        assert!(b <= boundary && m <= mutations, "{s}: {b} boundary, {m} mutations");
    }
}

/// The edges hypothesis' strategies (and so hypothesis-jsonschema and schemathesis) try and the
/// corpora lacked, one row each: every one is a boundary value of its schema, and the oracle
/// holds it valid (issue 30 item 6).
#[test]
fn hypothesis_edges_are_boundary_values() {
    let rows: &[(serde_json::Value, serde_json::Value)] = &[
        (json!({"type": "string", "format": "date"}), json!("0001-01-01")),
        (json!({"type": "string", "format": "time"}), json!("23:59:60Z")),
        (json!({"type": "string", "format": "time"}), json!("08:30:06z")),
        (json!({"type": "string", "format": "time"}), json!("12:00:00-00:00")),
        (json!({"type": "string", "format": "time"}), json!("05:45:00+05:45")),
        (json!({"type": "string", "format": "date-time"}), json!("0001-01-01T00:00:00Z")),
        (json!({"type": "string", "format": "date-time"}), json!("9999-12-31T23:59:59.999999Z")),
        (json!({"type": "string", "format": "date-time"}), json!("1998-12-31T23:59:60Z")),
        (json!({"type": "string", "format": "date-time"}), json!("2024-06-30T12:00:00-09:30")),
        (json!({"type": "string", "format": "duration"}), json!("PT0S")),
        (json!({"type": "string", "format": "duration"}), json!("P0D")),
        (json!({"type": "string", "format": "duration"}), json!("P1W")),
        (json!({"type": "string", "format": "duration"}), json!("P1Y2M10DT2H30M5S")),
        (json!({"type": "string", "format": "duration"}), json!("PT36H")),
        (json!({"type": "string"}), json!("a\r\nb")),
        (json!({"type": "string"}), json!("a\u{2028}b")),
        (json!({"type": "string"}), json!("a\u{85}b")),
        (json!({"type": "number"}), json!(5e-324)),
        (json!({"type": "number"}), json!(f64::MAX)),
        (json!({"type": "number"}), json!(f64::MIN)),
        (json!({"type": "number"}), json!(1e-7)),
        (json!({"type": "number"}), json!(1e16)),
    ];
    for (schema, edge) in rows {
        let g = compile(schema);
        let b = g.boundary().expect("boundary");
        assert!(b.contains(edge), "{schema}: {edge} is not among {b:?}");
        assert!(g.is_valid(edge), "{schema}: the oracle rejects {edge}");
    }
    // Only inside the range: a bounded number gets none of the far edges.
    let small = compile(&json!({"type": "number", "minimum": 0, "maximum": 10}));
    let b = small.boundary().expect("boundary");
    assert!(!b.contains(&json!(f64::MAX)) && !b.contains(&json!(1e16)), "{b:?}");
    assert!(b.contains(&json!(5e-324)) && b.contains(&json!(1e-7)), "{b:?}");
}
