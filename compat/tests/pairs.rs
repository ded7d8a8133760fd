//! The hand-written pairs of `fixtures/diff/pairs.json`: one per rule and verdict.
//!
//! Every reported witness is checked with a validator built here (not the generator's oracle):
//! it must validate against the source and fail the target.

use mcp_fuzz_compat::capture::parse_capture;
use mcp_fuzz_compat::diff::{Direction, Options, Verdict, diff};
use serde_json::{Value, json};

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .expect("fixture schema builds")
}

fn verdict(name: &str) -> Verdict {
    match name {
        "compatible" => Verdict::Compatible,
        "breaking" => Verdict::Breaking,
        "review" => Verdict::Review,
        "unknown" => Verdict::Unknown,
        other => panic!("unknown verdict {other}"),
    }
}

#[test]
fn every_pair_gets_its_verdict_and_change_ids() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/diff/pairs.json"
    ))
    .expect("fixture");
    let doc: Value = serde_json::from_str(&text).expect("json");
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() >= 40, "{}", cases.len());
    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().expect("name");
        let capture = |tool: &Value| {
            let tools = if tool.is_null() { json!([]) } else { json!([tool]) };
            parse_capture(&json!({"tools": tools}).to_string()).expect("capture")
        };
        let (old, new) = (capture(&case["old"]), capture(&case["new"]));
        let result = diff(&old, &new, &Options::default());
        let expect = &case["expect"];
        for direction in [Direction::Tool, Direction::Input, Direction::Output] {
            let Some(wanted) = expect.get(direction.as_str()).and_then(Value::as_str) else {
                continue;
            };
            let Some(entry) = result.entries.iter().find(|e| e.direction == direction) else {
                failures.push(format!("{name}: no {} entry", direction.as_str()));
                continue;
            };
            if entry.verdict != verdict(wanted) {
                failures.push(format!(
                    "{name}: {} is {} ({}), expected {wanted}",
                    direction.as_str(),
                    entry.verdict.as_str(),
                    entry.reason
                ));
            }
            if let Some(counted) =
                expect.get(format!("{}_counted", direction.as_str())).and_then(Value::as_str)
                && entry.counted != verdict(counted)
            {
                failures.push(format!(
                    "{name}: counted as {}, expected {counted}",
                    entry.counted.as_str()
                ));
            }
            if let Some(w) = &entry.witness {
                let (source, target) = match direction {
                    Direction::Output => {
                        (&case["new"]["outputSchema"], &case["old"]["outputSchema"])
                    }
                    _ => (&case["old"]["inputSchema"], &case["new"]["inputSchema"]),
                };
                if !validator(source).is_valid(&w.value) || validator(target).is_valid(&w.value) {
                    failures
                        .push(format!("{name}: witness {} does not separate the schemas", w.value));
                }
                if let Some(open) = expect.get("open_content").and_then(Value::as_bool)
                    && open != w.open_content
                {
                    failures
                        .push(format!("{name}: openContent {} expected {open}", w.open_content));
                }
            } else if entry.verdict == Verdict::Breaking && direction != Direction::Tool {
                failures.push(format!("{name}: breaking without a witness"));
            }
        }
        let ids: Vec<&str> =
            result.entries.iter().flat_map(|e| e.changes.iter().map(|c| c.id.as_str())).collect();
        for id in case["changes"].as_array().expect("changes").iter().filter_map(Value::as_str) {
            if !ids.contains(&id) {
                failures.push(format!("{name}: change {id} not reported (got {ids:?})"));
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn every_rule_id_used_by_the_pairs_is_in_the_catalogue() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/diff/pairs.json"
    ))
    .expect("fixture");
    let doc: Value = serde_json::from_str(&text).expect("json");
    for case in doc["cases"].as_array().expect("cases") {
        for id in case["changes"].as_array().expect("changes").iter().filter_map(Value::as_str) {
            assert!(mcp_fuzz_compat::rules::rule(id).is_some(), "{id} is not in the catalogue");
        }
    }
}
