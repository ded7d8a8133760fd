//! `mcp-fuzz run --format ...`: every report format written for a real run against the bundled
//! example server (two genuine bugs), checked against its specification: the JSON report against
//! `docs/report.schema.json`, the SARIF log against the official OASIS schema, the JUnit XML's
//! counts against the findings, and the Markdown's bug reports against the JSON.

use crate::run::server;
use crate::util::{Run, TempDir, command, finish};
use serde_json::Value;
use std::collections::BTreeSet;

pub(crate) const FINDINGS: i32 = 1;
pub(crate) const USAGE: i32 = 2;
pub(crate) const SUCCESS: i32 = 0;

/// Runs `mcp-fuzz ARGS -- <fixture>` with a small, fixed budget (`--cases 2 --seed 7` unless
/// given).
pub(crate) fn fuzz(fixture: &str, args: &[&str]) -> Run {
    let mut all: Vec<String> = Vec::new();
    for (flag, default) in [("--cases", "2"), ("--seed", "7")] {
        if !args.contains(&flag) {
            all.extend([flag.to_owned(), default.to_owned()]);
        }
    }
    all.extend(args.iter().map(|s| (*s).to_owned()));
    all.push("--".into());
    all.push(server(fixture).display().to_string());
    finish(command(&all).spawn().expect("mcp-fuzz starts"))
}

/// Parses a JSON file.
pub(crate) fn read_json(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} is readable: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is JSON: {e}", path.display()))
}

/// Asserts a report satisfies `docs/report.schema.json`.
#[track_caller]
pub(crate) fn assert_report_schema(report: &Value) {
    let schema: Value = serde_json::from_str(include_str!("../../docs/report.schema.json"))
        .expect("report schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("report schema compiles");
    let errors: Vec<String> =
        validator.iter_errors(report).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "the report breaks docs/report.schema.json: {errors:#?}");
}

/// Asserts a SARIF log satisfies the official SARIF 2.1.0 schema (fixtures/sarif).
#[track_caller]
pub(crate) fn assert_sarif_schema(log: &Value) {
    let schema: Value =
        serde_json::from_str(include_str!("../../fixtures/sarif/sarif-schema-2.1.0.json"))
            .expect("SARIF schema is JSON");
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("SARIF schema compiles");
    let errors: Vec<String> =
        validator.iter_errors(log).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "invalid SARIF 2.1.0: {errors:#?}");
}

fn findings(report: &Value) -> &Vec<Value> {
    report["findings"].as_array().expect("findings")
}

pub(crate) fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

pub(crate) fn attr(xml_tag: &str, name: &str) -> u64 {
    let start = xml_tag.find(&format!(" {name}=\"")).expect("attribute") + name.len() + 3;
    xml_tag[start..].split('"').next().expect("value").parse().expect("number")
}

#[test]
fn every_format_is_written_to_the_output_dir_and_agrees_with_the_json() {
    let dir = TempDir::new("formats");
    let out = dir.path().display().to_string();
    let run = fuzz(
        "example-notes",
        &["--quiet", "--output-dir", &out, "--format", "json,junit,sarif,markdown"],
    );
    run.assert_code(FINDINGS);
    assert!(run.stdout.is_empty(), "no human format asked: stdout stays empty: {}", run.stdout);
    assert!(run.stderr.is_empty(), "--quiet: no progress at all: {}", run.stderr);
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["report.json", "report.junit.xml", "report.md", "report.sarif"],
        "no temp files left"
    );

    let report = read_json(&dir.join("report.json"));
    assert_report_schema(&report);
    let failing: Vec<&Value> =
        findings(&report).iter().filter(|f| f["severity"] == "failure").collect();
    assert!(failing.iter().any(|f| f["kind"] == "exited"), "{report:#}");
    assert!(failing.iter().any(|f| f["kind"] == "handler-exception"), "{report:#}");

    // SARIF: schema-valid, one result per finding, stable rule ids, identities.
    let sarif = read_json(&dir.join("report.sarif"));
    assert_sarif_schema(&sarif);
    let run0 = &sarif["runs"][0];
    let rules = run0["tool"]["driver"]["rules"].as_array().expect("rules");
    let results = run0["results"].as_array().expect("results");
    assert_eq!(results.len(), findings(&report).len());
    for (r, f) in results.iter().zip(findings(&report)) {
        let index = usize::try_from(r["ruleIndex"].as_u64().expect("ruleIndex")).expect("index");
        assert_eq!(rules[index]["id"], r["ruleId"]);
        assert_eq!(rules[index]["name"], f["kind"], "the rule is the finding's kind");
        let level = match f["severity"].as_str() {
            Some("failure") => "error",
            Some("warning") => "warning",
            _ => "note",
        };
        assert_eq!(r["level"], level);
        assert!(
            r["partialFingerprints"]["mcpFuzzIdentity/v1"].as_str().is_some_and(|s| s.len() == 16)
        );
        assert!(r["locations"][0]["logicalLocations"][0]["name"].is_string());
        assert!(
            r["message"]["text"]
                .as_str()
                .expect("text")
                .contains(f["message"].as_str().expect("message"))
        );
    }
    let exited =
        results.iter().find(|r| r["properties"]["outcome"]["kind"] == "exited").expect("exited");
    assert_eq!(exited["ruleId"], "MCPF0001", "rule ids are stable");
    let ids: BTreeSet<&str> = results
        .iter()
        .map(|r| r["partialFingerprints"]["mcpFuzzIdentity/v1"].as_str().expect("fp"))
        .collect();
    assert_eq!(ids.len(), results.len(), "one identity per finding");

    // JUnit: a suite per tool plus the server's, a case per check, failures = failing checks.
    let xml = std::fs::read_to_string(dir.join("report.junit.xml")).expect("junit");
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "));
    let root = xml.lines().nth(1).expect("root line");
    let tools = report["tools"].as_array().expect("tools");
    // One suite per tool, the server's, and the protocol phase's (and the prompts' and
    // resources', when the server offers any).
    let beyond = usize::from(report.get("protocol").is_some())
        + usize::from(report.get("surfaces").is_some());
    assert_eq!(count(&xml, "<testsuite "), tools.len() + 1 + beyond);
    assert_eq!(attr(root, "tests") as usize, count(&xml, "<testcase "));
    let failing_checks: BTreeSet<(String, String)> = failing
        .iter()
        .map(|f| {
            (
                f["tool"].as_str().unwrap_or("server").to_owned(),
                f["kind"].as_str().expect("kind").to_owned(),
            )
        })
        .collect();
    assert_eq!(attr(root, "failures") as usize, failing_checks.len());
    assert_eq!(count(&xml, "<failure "), failing_checks.len());
    let skipped_checks = report["protocol"]["skipped"].as_u64().unwrap_or(0);
    assert_eq!(
        attr(root, "skipped"),
        1 + skipped_checks,
        "delete_note is not run: one skipped case, and the protocol checks skipped"
    );
    assert!(xml.contains("<testcase classname=\"get_note\" name=\"handler-exception\">"));
    assert!(xml.contains("<testcase classname=\"list_tags\" name=\"exited\"/>"));
    assert_eq!(
        count(&xml, "<testsuite"),
        count(&xml, "</testsuite>") + 1,
        "balanced (plus <testsuites>)"
    );

    // Markdown: every failure reads as a bug report with its minimal arguments and replay line.
    let md = std::fs::read_to_string(dir.join("report.md")).expect("markdown");
    assert!(md.starts_with("## mcp-fuzz report: example-notes"), "{md}");
    assert!(md.contains("| `get_note` | tested |"), "{md}");
    for f in failing.iter().filter(|f| f["arguments"].is_object()) {
        // The replay line sends the shrunk arguments.
        let sent = if f["minimalArguments"].is_object() {
            &f["minimalArguments"]
        } else {
            &f["arguments"]
        };
        let args = serde_json::to_string(sent).expect("args");
        let line = format!(
            "mcp-fuzz call --tool {} --args '{args}' -- ",
            f["tool"].as_str().expect("tool")
        );
        assert!(md.contains(&line), "no replay line {line} in\n{md}");
    }
    assert_eq!(count(&md, "**What was expected:**"), count(&md, "#### "));
    assert_eq!(
        count(&md, "**Reproduce:**"),
        findings(&report).iter().filter(|f| f["arguments"].is_object()).count(),
        "every finding with arguments (a failure or a warning such as accepts-invalid)"
    );
    assert!(md.contains("**What came back:** handler-exception (text: TypeError: id.startsWith is not a function)"), "{md}");
}

#[test]
fn json_is_an_alias_of_format_json_and_one_format_goes_to_stdout() {
    let a = fuzz("fx-healthy", &["--json"]);
    let b = fuzz("fx-healthy", &["--format", "json"]);
    a.assert_code(SUCCESS);
    b.assert_code(SUCCESS);
    let strip = |s: &str| {
        let mut v: Value = serde_json::from_str(s).expect("JSON on stdout");
        v["durationSecs"] = Value::Null;
        // Warm spares start only when the measured start is slow (a loaded machine): a statistic.
        v.as_object_mut().expect("report").remove("spares");
        v
    };
    assert_eq!(strip(&a.stdout), strip(&b.stdout));
    // The protocol phase is off: rmcp's -32601 for unparsable `tools/call` params would be a
    // warning here (about the SDK, not this fixture).
    let x = fuzz("fx-healthy", &["--format", "junit", "--no-protocol"]);
    x.assert_code(SUCCESS);
    assert!(x.stdout.starts_with("<?xml"), "{}", x.stdout);
    assert!(x.stdout.contains("failures=\"0\""));
    let s = fuzz("fx-healthy", &["--format", "sarif", "--no-protocol"]);
    let log: Value = serde_json::from_str(&s.stdout).expect("SARIF on stdout");
    assert_sarif_schema(&log);
    assert_eq!(log["runs"][0]["results"].as_array().expect("results").len(), 0);
}

#[test]
fn several_formats_need_an_output_dir() {
    for args in [
        &["--format", "json,sarif"][..],
        &["--json", "--format", "markdown"],
        &["--format", "human", "--format", "junit"],
    ] {
        let run = fuzz("fx-healthy", args);
        run.assert_code(USAGE);
        assert!(run.stderr.contains("--output-dir DIR"), "{}", run.stderr);
        assert!(run.stdout.is_empty());
    }
    let run = fuzz("fx-healthy", &["--format", "xml"]);
    run.assert_code(USAGE);
    assert!(run.stderr.contains("possible values"), "{}", run.stderr);
}

#[test]
fn output_dir_alone_writes_every_file_and_the_summary() {
    let dir = TempDir::new("all");
    let run = fuzz("example-notes", &["--output-dir", &dir.path().display().to_string()]);
    run.assert_code(FINDINGS);
    for f in ["report.json", "report.junit.xml", "report.sarif", "report.md"] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    assert!(run.stdout.contains("Crash-resilience score"), "{}", run.stdout);
}

#[test]
fn human_summary_has_the_table_findings_and_replay_lines() {
    let run = fuzz("example-notes", &[]);
    run.assert_code(FINDINGS);
    let out = &run.stdout;
    let header = out.lines().find(|l| l.contains("TOOL")).expect("table header");
    for col in ["STATUS", "CASES", "INVALID", "GRACEFUL", "SCORE", "FINDINGS"] {
        assert!(header.contains(col), "{header}");
    }
    assert!(
        out.lines().any(|l| l.contains("delete_note")
            && l.contains("skipped")
            && l.contains("--include-destructive")),
        "{out}"
    );
    assert!(out.contains("[failure] get_note: handler-exception"), "{out}");
    assert!(out.contains("outcome: exited (exit status 101)"), "{out}");
    let replays =
        out.lines().filter(|l| l.trim_start().starts_with("replay: mcp-fuzz call --tool ")).count();
    assert!(replays >= 2, "{out}");
    // stderr is not a terminal: no bar, a line per tool done (read-only ones: three), and one
    // when the sequence phase and the protocol phase are done.
    let done: Vec<&str> = run.stderr.lines().filter(|l| l.contains(" done; ")).collect();
    assert_eq!(done.len(), 5, "{}", run.stderr);
    assert!(done[3].starts_with("mcp-fuzz: sequence phase (skipped: "), "{}", run.stderr);
    assert!(done[4].starts_with("mcp-fuzz: protocol checks ("), "{}", run.stderr);
    assert!(done[0].starts_with("mcp-fuzz: search_notes done; 1 tool(s), "), "{}", run.stderr);
    assert!(!run.stderr.contains('\r'), "no bar drawing: {:?}", run.stderr);
}

#[test]
fn sarif_identities_are_stable_across_runs() {
    let fp = |run: &Run| -> Vec<String> {
        let log: Value = serde_json::from_str(&run.stdout).expect("SARIF");
        log["runs"][0]["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|r| format!("{} {}", r["ruleId"], r["partialFingerprints"]["mcpFuzzIdentity/v1"]))
            .collect()
    };
    let a = fuzz("example-notes", &["--format", "sarif"]);
    let b = fuzz("example-notes", &["--format", "sarif"]);
    let (a, b) = (fp(&a), fp(&b));
    assert!(!a.is_empty());
    for id in &a {
        assert!(b.contains(id), "{id} missing from the second run: {b:?}");
    }
}
