//! `mcp-fuzz gen --schema`: what is printed, in which order, and the exit codes.

use crate::util::{
    TempFile, check_lines, code, command, finish, fixture, fixture_json, mcp_fuzz,
    mcp_fuzz_with_stdin,
};
use serde_json::Value;
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::io::{BufRead as _, BufReader};

const USER: &str = "schemas/user.json";
const EVENT: &str = "schemas/event.json";

fn gen_schema(schema: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["gen".to_owned(), "--schema".to_owned()];
    args.push(fixture(schema).to_str().expect("UTF-8 path").to_owned());
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    args
}

fn mutations(lines: &[Value]) -> BTreeSet<&str> {
    lines.iter().filter_map(|line| line.get("mutation").and_then(Value::as_str)).collect()
}

#[test]
fn version() {
    let run = mcp_fuzz(["--version"]);
    run.assert_code(code::SUCCESS);
    assert_eq!(run.stdout.trim(), format!("mcp-fuzz {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn all_mode_values_match_their_labels() {
    let run = mcp_fuzz(gen_schema(USER, &["--count", "20"]));
    run.assert_code(code::SUCCESS);
    check_lines(&fixture_json(USER), &run);
    let modes = run.modes();
    for mode in ["boundary", "valid", "invalid"] {
        assert!(modes.iter().any(|m| m == mode), "no {mode} line");
    }
}

#[test]
fn all_mode_order_is_boundary_mutations_valid_invalid() {
    let all = mcp_fuzz(gen_schema(USER, &["--count", "6", "--seed", "3"]));
    all.assert_code(code::SUCCESS);
    let boundary = mcp_fuzz(gen_schema(USER, &["--mode", "boundary"]));
    boundary.assert_code(code::SUCCESS);
    let deterministic = mcp_fuzz(gen_schema(USER, &["--mode", "invalid", "--count", "0"]));
    deterministic.assert_code(code::SUCCESS);

    let lines: Vec<&str> = all.stdout.lines().collect();
    let boundary: Vec<&str> = boundary.stdout.lines().collect();
    let deterministic: Vec<&str> = deterministic.stdout.lines().collect();
    assert!(!boundary.is_empty() && !deterministic.is_empty());
    assert_eq!(lines.len(), boundary.len() + deterministic.len() + 12);
    let (head, rest) = lines.split_at(boundary.len());
    assert_eq!(head, boundary, "every boundary value comes first");
    let (middle, tail) = rest.split_at(deterministic.len());
    assert_eq!(middle, deterministic, "then every deterministic mutation");
    let tail_modes: Vec<String> = all.modes().split_off(lines.len() - 12);
    assert_eq!(tail_modes[..6], ["valid"; 6], "then --count random valid values");
    assert_eq!(tail_modes[6..], ["invalid"; 6], "then --count random invalid values");
    assert_eq!(tail.len(), 12);
}

#[test]
fn draft7_schema_with_formats_and_nesting() {
    let run = mcp_fuzz(gen_schema(EVENT, &["--count", "20", "--seed", "11"]));
    run.assert_code(code::SUCCESS);
    assert!(check_lines(&fixture_json(EVENT), &run) > 40);
}

#[test]
fn valid_mode_prints_count_valid_values() {
    let run = mcp_fuzz(gen_schema(USER, &["--mode", "valid", "--count", "7"]));
    run.assert_code(code::SUCCESS);
    assert_eq!(check_lines(&fixture_json(USER), &run), 7);
    assert!(run.modes().iter().all(|mode| mode == "valid"));
}

#[test]
fn boundary_mode_ignores_count() {
    let zero = mcp_fuzz(gen_schema(USER, &["--mode", "boundary", "--count", "0"]));
    let three = mcp_fuzz(gen_schema(USER, &["--mode", "boundary", "--count", "3", "--seed", "9"]));
    zero.assert_code(code::SUCCESS);
    three.assert_code(code::SUCCESS);
    assert!(check_lines(&fixture_json(USER), &zero) > 0);
    assert_eq!(zero.stdout, three.stdout);
    assert!(zero.modes().iter().all(|mode| mode == "boundary"));
}

#[test]
fn invalid_mode_covers_the_schema_keywords() {
    let run = mcp_fuzz(gen_schema(USER, &["--mode", "invalid", "--count", "5"]));
    run.assert_code(code::SUCCESS);
    let schema = fixture_json(USER);
    let count = check_lines(&schema, &run);
    assert!(run.modes().iter().all(|mode| mode == "invalid"));
    let deterministic = mcp_fuzz(gen_schema(USER, &["--mode", "invalid", "--count", "0"]));
    assert_eq!(count, deterministic.stdout.lines().count() + 5);

    let lines = run.lines();
    let seen = mutations(&lines);
    for expected in ["missing-required", "wrong-type", "not-in-enum", "unexpected-property"] {
        assert!(seen.contains(expected), "no {expected} mutation in {seen:?}");
    }
    assert!(seen.contains("below-minimum") || seen.contains("above-maximum"), "{seen:?}");
    assert!(seen.contains("too-short") || seen.contains("too-long"), "{seen:?}");
    for line in lines.iter().filter(|line| line["mutation"] == "missing-required") {
        assert_eq!(line["keyword"], "required", "{line}");
        let value = line["value"].as_object().expect("an object missing a property");
        assert!(!value.contains_key("name") || !value.contains_key("age"), "{line}");
    }
}

#[test]
fn same_seed_same_output() {
    let args = gen_schema(USER, &["--count", "15", "--seed", "42"]);
    let first = mcp_fuzz(&args);
    let second = mcp_fuzz(&args);
    first.assert_code(code::SUCCESS);
    second.assert_code(code::SUCCESS);
    assert_eq!(first.stdout, second.stdout);
    assert!(!first.stdout.is_empty());
}

#[test]
fn different_seed_different_random_values() {
    let one = mcp_fuzz(gen_schema(USER, &["--mode", "valid", "--count", "20", "--seed", "1"]));
    let two = mcp_fuzz(gen_schema(USER, &["--mode", "valid", "--count", "20", "--seed", "2"]));
    one.assert_code(code::SUCCESS);
    two.assert_code(code::SUCCESS);
    assert_ne!(one.stdout, two.stdout);
    let one_invalid =
        mcp_fuzz(gen_schema(USER, &["--mode", "invalid", "--count", "20", "--seed", "1"]));
    let two_invalid =
        mcp_fuzz(gen_schema(USER, &["--mode", "invalid", "--count", "20", "--seed", "2"]));
    assert_ne!(one_invalid.stdout, two_invalid.stdout);
}

#[test]
fn default_seed_is_zero_and_default_count_is_ten() {
    let default = mcp_fuzz(gen_schema(USER, &["--mode", "valid"]));
    let explicit = mcp_fuzz(gen_schema(USER, &["--mode", "valid", "--seed", "0", "--count", "10"]));
    default.assert_code(code::SUCCESS);
    assert_eq!(default.stdout, explicit.stdout);
    assert_eq!(default.stdout.lines().count(), 10);
}

#[test]
fn schema_from_stdin() {
    let text = std::fs::read_to_string(fixture(USER)).expect("fixture");
    let from_stdin = mcp_fuzz_with_stdin(["gen", "--schema", "-", "--count", "5"], &text);
    from_stdin.assert_code(code::SUCCESS);
    let from_file = mcp_fuzz(gen_schema(USER, &["--count", "5"]));
    assert_eq!(from_stdin.stdout, from_file.stdout);
    check_lines(&fixture_json(USER), &from_stdin);
}

#[test]
fn unsatisfiable_schema_exits_5_naming_the_pointer() {
    let run = mcp_fuzz(gen_schema("schemas/unsatisfiable.json", &[]));
    run.assert_code(code::UNSATISFIABLE_SCHEMA);
    assert!(run.stderr.starts_with("error: cannot generate for "), "{}", run.stderr);
    assert!(
        run.stderr.contains("the schema root") || run.stderr.contains("schema pointer `"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("unsatisfiable.json"), "{}", run.stderr);
    assert!(run.stdout.is_empty());

    for mode in ["valid", "invalid", "boundary", "all"] {
        let nested = mcp_fuzz(gen_schema("schemas/unsatisfiable-nested.json", &["--mode", mode]));
        nested.assert_code(code::UNSATISFIABLE_SCHEMA);
        assert!(nested.stderr.contains("schema pointer `/properties/n"), "{}", nested.stderr);
    }
}

#[test]
fn schema_accepting_everything() {
    let all = mcp_fuzz(gen_schema("schemas/anything.json", &["--count", "5"]));
    all.assert_code(code::SUCCESS);
    assert!(all.modes().iter().all(|mode| mode != "invalid"), "{}", all.stdout);
    assert_eq!(all.modes().iter().filter(|mode| *mode == "valid").count(), 5);
    assert!(all.stderr.starts_with("note: "), "{}", all.stderr);

    let invalid = mcp_fuzz(gen_schema("schemas/anything.json", &["--mode", "invalid"]));
    invalid.assert_code(code::UNSATISFIABLE_SCHEMA);
    assert!(invalid.stderr.starts_with("error: cannot generate for "), "{}", invalid.stderr);
}

#[test]
fn invalid_json_exits_2_naming_the_file() {
    let file = TempFile::new("broken.json", "{\"type\": \"object\",\n");
    let run = mcp_fuzz([OsStr::new("gen"), OsStr::new("--schema"), file.path().as_os_str()]);
    run.assert_code(code::USAGE);
    assert!(run.stderr.starts_with("error: failed to parse `"), "{}", run.stderr);
    assert!(run.stderr.contains(&file.path().display().to_string()), "{}", run.stderr);
    assert!(run.stderr.contains("line 2"), "{}", run.stderr);
    assert!(run.stdout.is_empty());

    let run = mcp_fuzz_with_stdin(["gen", "--schema", "-"], "not json");
    run.assert_code(code::USAGE);
    assert!(run.stderr.contains("standard input"), "{}", run.stderr);
}

#[test]
fn unreadable_file_exits_2() {
    let run = mcp_fuzz(["gen", "--schema", "no/such/schema.json"]);
    run.assert_code(code::USAGE);
    assert!(
        run.stderr.starts_with("error: failed to read `no/such/schema.json`"),
        "{}",
        run.stderr
    );
}

#[test]
fn capture_passed_as_schema_gets_a_hint() {
    let run = mcp_fuzz(gen_schema("tools-list-shapes/jsonrpc.json", &[]));
    run.assert_code(code::USAGE);
    assert!(run.stderr.contains("--tools FILE"), "{}", run.stderr);
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        vec!["gen"],
        vec!["gen", "--schema", "a.json", "--tools", "b.json"],
        vec!["gen", "--schema", "a.json", "--tool", "x"],
        vec!["gen", "--schema", "a.json", "--mode", "sometimes"],
        vec!["gen", "--schema", "a.json", "--count", "-1"],
        vec!["frobnicate"],
    ] {
        let run = mcp_fuzz(&args);
        assert_eq!(run.code, code::USAGE, "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn closed_stdout_exits_0_quietly() {
    let mut child = command(gen_schema(USER, &["--mode", "valid", "--count", "1000000"]))
        .spawn()
        .expect("binary starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("one line");
    assert!(first.starts_with("{\"mode\":\"valid\""), "{first}");
    drop(stdout);
    let run = finish(child);
    run.assert_code(code::SUCCESS);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}
